"""Triton tutorial 03 (matrix multiplication): the kernel as the tutorial writes it.

Grouped program ordering, pointers advanced by BLOCK_SIZE_K * stride each
iteration, strides as run-time arguments, masks on K, C written in the
inputs' type (the tutorial writes float16; `c_ptr.dtype.element_ty` here, so
the bf16 comparison writes bf16). The tutorial's HIP autotuning space is
BLOCK_SIZE_M x N x K from 32x32x64 to 256x256x64 with num_warps = 8,
num_stages = 2 and matrix_instr_nonkdim = 16 (its 128x128x64 entry has
GROUP_SIZE_M = 4). Compiled, never run, by compile.py.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
        # The matrices.
        a_ptr, b_ptr, c_ptr,
        # Their sizes: A is M x K, B is K x N, C is M x N.
        M, N, K,
        # Elements from one row (column) to the next: A[m, k] is at
        # a_ptr + m * stride_am + k * stride_ak.
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,
        # Meta-parameters.
        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,  #
        GROUP_SIZE_M: tl.constexpr,  #
        ACTIVATION: tl.constexpr  #
):
    # Program ids in groups of GROUP_SIZE_M block rows, so that programs
    # running together share blocks of B in the cache.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # Facts for the backend's integer analysis of the offsets.
    tl.assume(pid_m >= 0)
    tl.assume(pid_n >= 0)
    tl.assume(stride_am > 0)
    tl.assume(stride_ak > 0)
    tl.assume(stride_bn > 0)
    tl.assume(stride_bk > 0)
    tl.assume(stride_cm > 0)
    tl.assume(stride_cn > 0)

    # Pointers to the first blocks of A ([BLOCK_SIZE_M, BLOCK_SIZE_K]) and
    # B ([BLOCK_SIZE_K, BLOCK_SIZE_N]); advanced along K in the loop.
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    # The block of C accumulates in f32.
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        # The last K block is masked: past K, A and B read 0.
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        # The next K block.
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    # An activation would go here, on the f32 accumulator.
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(c_ptr.dtype.element_ty)

    # Write the block of C, masked at the edges.
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)
