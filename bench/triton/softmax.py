"""Triton tutorial 02 (fused softmax): the kernel as the tutorial writes it.

A persistent kernel: each program walks rows row_start, row_start +
num_programs, ... The tutorial runs it on a 1823 x 781 f32 matrix with
BLOCK_SIZE = next_power_of_2(781) = 1024, num_warps = 8 and num_stages = 2
(4 only where a device has more than 200000 bytes of shared memory per CU;
MI300X has 65536, MI355X 163840). Compiled, never run, by compile.py.
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    # This program's first row, and the step to its next one.
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        # A row starts input_row_stride elements after the previous one.
        row_start_ptr = input_ptr + row_idx * input_row_stride
        # BLOCK_SIZE is the next power of two >= n_cols: one block holds the row.
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        # The padding past n_cols reads -inf, which exp() turns into 0.
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        # The max is subtracted so that exp() cannot overflow.
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)
