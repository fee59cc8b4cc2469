"""tessel's library matmul (kernels::matmul) in Triton, line by line.

kernels/include/tessel/kernels/matmul.hpp's block programs: `matmul_block`
(SCALES 0) and `matmul_fp8_block` with per-tensor scales (SCALES 1), both
without bias or activation, as the comparison bench launches them. Unlike
tutorial 03 (bench/triton/matmul.py) the kernel masks rows and columns
(`rows < M`, `cols < N`) rather than wrapping them with `% M`, computes its
offsets from k each iteration (`k + arange(0, BK)`), and carries batch
offsets (program_id(1)). Compiled, never run, by compile.py.
"""
import triton
import triton.language as tl


@triton.jit
def library_matmul_kernel(a, b, c, scale_a, scale_b, M, N, K, sam, sak, sbk, sbn, scm, scn, batch_a, batch_b,
                          batch_c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                          SCALES: tl.constexpr):
    # detail::groupedBlock
    pid = tl.program_id(0)
    blocks_m = tl.cdiv(M, BM)
    blocks_n = tl.cdiv(N, BN)
    per_group = GROUP_M * blocks_n
    first_m = (pid // per_group) * GROUP_M
    group_m = min(blocks_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_m
    pid_n = (pid % per_group) // group_m
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    # the block program
    batch = tl.program_id(1)
    ks = tl.arange(0, BK)
    a_base = a + batch * batch_a
    b_base = b + batch * batch_b
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        kk = k + ks
        ta = tl.load(a_base + rows[:, None] * sam + kk[None, :] * sak,
                     mask=(rows < M)[:, None] & (kk < K)[None, :], other=0.0)
        tb = tl.load(b_base + kk[:, None] * sbk + cols[None, :] * sbn,
                     mask=(kk < K)[:, None] & (cols < N)[None, :], other=0.0)
        acc = tl.dot(ta, tb, acc)
    if SCALES:
        acc = acc * (tl.load(scale_a) * tl.load(scale_b))
    tl.store(c + batch * batch_c + rows[:, None] * scm + cols[None, :] * scn, acc.to(c.dtype.element_ty),
             mask=(rows < M)[:, None] & (cols < N)[None, :])
