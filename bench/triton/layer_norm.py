"""Triton tutorial 05 (layer norm): the forward kernel as the tutorial writes it.

One program per row, walking it BLOCK_SIZE columns at a time, three times
(mean, variance, output). The tutorial runs it on 1151 x 8192 f16 with
BLOCK_SIZE = min(65536 // 2, next_power_of_2(8192)) = 8192 and num_warps =
min(max(8192 // 256, 1), 8) = 8. Compiled, never run, by compile.py.
"""
import triton
import triton.language as tl


@triton.jit
def _layer_norm_fwd_fused(
    X,  # input
    Y,  # output
    W,  # weights
    B,  # biases
    Mean,  # per-row mean (written)
    Rstd,  # per-row 1 / std (written)
    stride,  # elements from one row to the next
    N,  # columns of X
    eps,  # added to the variance
    BLOCK_SIZE: tl.constexpr,
):
    # Program `row` normalizes row `row` of X into row `row` of Y.
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # The mean.
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # The variance, from the deviations from the mean.
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    # The statistics, for a backward pass.
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # Normalize, scale and shift.
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)
