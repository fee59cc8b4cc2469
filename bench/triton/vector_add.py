"""Triton tutorial 01 (vector addition): the kernel as the tutorial writes it.

Launched by the tutorial with n_elements = 98432, BLOCK_SIZE = 1024 and
Triton's default num_warps (4). Compiled, never run, by compile.py.
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr,  # first input vector
               y_ptr,  # second input vector
               output_ptr,  # output vector
               n_elements,  # size of the vectors
               BLOCK_SIZE: tl.constexpr,  # elements each program processes
               ):
    # Program `pid` handles elements [pid * BLOCK_SIZE, (pid + 1) * BLOCK_SIZE).
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # The last block may run past the end of the vectors.
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)
