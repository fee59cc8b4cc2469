"""Triton tutorial 06 (fused attention): the forward kernel as the tutorial runs it on AMD.

Restated, not copied: the tutorial's operations in the same order, with the
same blocks and launch options, under our own names and comments. In Triton
3.9 the tutorial's forward kernel takes Q, K, V and O either as host tensor
descriptors (NVIDIA Hopper and later) or, on AMD, as plain tensors from which
the kernel makes tensor descriptors over a dense [Z * H * N_CTX, HEAD_DIM]
view (block pointers are gone); the AMD backend rewrites those descriptors
to pointer loads and stores bounds-checked against the view's shape. This is
that AMD form. The FP8_OUTPUT, warp_specialize and IS_HOPPER parameters,
False on AMD, are left out with the code they select.

Flash attention v2 with an online softmax in base 2, per key block:

  qk = q . k^T;  m_new = max(m, rowmax(qk) * qk_scale)
  p = exp2(qk * qk_scale - m_new);  alpha = exp2(m - m_new)
  acc = acc * alpha + p . v;  l = l * alpha + rowsum(p);  m = m_new

with qk_scale = sm_scale * log2(e). Causal attention (STAGE 3) walks the keys
in two loops: the key blocks wholly below the diagonal block with no mask
(`_kv_sweep` with SWEEP 1), then the BLOCK_M keys of the diagonal block with
the mask `query >= key` added as -1e6 (SWEEP 2). Not causal (STAGE 1): one
loop over every key (SWEEP 3). The log-sum-exp is stored in base 2
(m + log2(l)); N_CTX must be a multiple of the blocks.

The tutorial's launch on HIP: autotuned over BLOCK_M in {64, 128}, BLOCK_N in
{32, 64, 128}, num_warps in {4, 8} with num_stages = 1 only, and the options
waves_per_eu = 3 (head dim <= 64; 2 above) and allow_flush_denorm = True.
The tutorial converts p to float16 for the second dot and writes O as
float16; here both take the tensors' element type (the same for f16; the
bf16 comparison multiplies bf16 by bf16 and writes bf16, as tessel's kernel
does). Compiled, never run, by compile.py.
"""
import triton
import triton.language as tl


@triton.jit
def _kv_sweep(acc, l_i, m_i, q, k_desc, v_desc, offset_y, start_m, qk_scale,  #
              BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,  #
              SWEEP: tl.constexpr, offs_m, offs_n, N_CTX):
    # The keys this sweep covers: below the diagonal block (1), the diagonal
    # block (2), or every key (3, not causal).
    if SWEEP == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif SWEEP == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    # Row of this head's first key in the [Z * H * N_CTX, HEAD_DIM] view of K and V.
    kv_row = offset_y + lo
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        # Scores of this key block: K read [BLOCK_N, HEAD_DIM] and transposed.
        k = k_desc.load([kv_row, 0]).T
        qk = tl.dot(q, k)
        if SWEEP == 2:
            # The diagonal block: keys after the query get -1e6 before the max.
            causal = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(causal, 0, -1.0e6)
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_new[:, None]
        else:
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_new[:, None]
        p = tl.math.exp2(qk)
        # What was summed against the old max is rescaled to the new one.
        alpha = tl.math.exp2(m_i - m_new)
        row_sum = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([kv_row, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        # The running sum and max last, as the tutorial orders them (register pressure).
        l_i = l_i * alpha + row_sum
        m_i = m_new
        kv_row += BLOCK_N
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(sm_scale, M,  #
              Z, H, q_ptr, k_ptr, v_ptr, o_ptr, N_CTX,  #
              HEAD_DIM: tl.constexpr,  #
              BLOCK_M: tl.constexpr,  #
              BLOCK_N: tl.constexpr,  #
              STAGE: tl.constexpr  #
              ):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    # Program (start_m, off_hz): queries [start_m * BLOCK_M, +BLOCK_M) of head off_hz % H of batch off_hz // H.
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H

    # Q, K, V and Out seen as one dense [Z * H * N_CTX, HEAD_DIM] matrix each
    # (descriptors made in the kernel: on AMD they become bounds-checked pointer loads).
    rows = Z * H * N_CTX
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])

    offset_y = off_z * (N_CTX * H) + off_h * N_CTX  # this head's first row
    q_row = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    # Running row max (base 2), row sum (starting at 1, as the tutorial's does) and output.
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # log2(e): exp(x) = exp2(x * log2(e))
    # Q stays in registers for every key block.
    q = q_desc.load([q_row, 0])

    # STAGE 1 (not causal): one sweep over every key. STAGE 3 (causal): the
    # blocks below the diagonal, then the diagonal block with its mask.
    if STAGE & 1:
        acc, l_i, m_i = _kv_sweep(acc, l_i, m_i, q, k_desc, v_desc, offset_y, start_m, qk_scale,  #
                                  BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE, offs_m, offs_n, N_CTX)
    if STAGE & 2:
        acc, l_i, m_i = _kv_sweep(acc, l_i, m_i, q, k_desc, v_desc, offset_y, start_m, qk_scale,  #
                                  BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m, offs_n, N_CTX)
    # The base-2 log-sum-exp, and the output normalized by the row sum.
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    o_desc.store([q_row, 0], acc.to(o_desc.dtype))
