// Row-wise softmax over an M x N matrix, fused into one kernel: each program
// loads whole rows once, and max, exp, sum and the division happen in
// registers before one store (an unfused version reads and writes the matrix
// several times); rows longer than a block are read twice by a loop. f32,
// f16 and bf16 in and out; arithmetic in f32.
//
//   tessel::kernels::softmax(dev, in, out, M, N, in_stride, out_stride);
#pragma once

#include "tessel/kernels/row_config.hpp"

#include <limits>
#include <string>

namespace tessel::kernels {

// log2(e): exp(z) = exp2(z * kLog2E), the hardware's exponential being base 2.
inline constexpr float kLog2E = 1.44269504088896340736f;

// The block program: program p handles rows [p * ROWS, (p + 1) * ROWS) of
// BLOCK columns, BLOCK the next power of two >= N (rowConfig's block: the
// program assumes BLOCK / 2 < N <= BLOCK, so the first half of each row needs
// no mask and a buffer's byte bound needs no clamp); rows past M and columns
// past N are masked.
// out[r, :] = exp(x - max(x)) / sum(exp(x - max(x))) with x = in[r, :].
// EVEN_M (M a multiple of ROWS) and EVEN_N (N = BLOCK) say a mask would be
// all true, so there is none (Triton's EVEN_* heuristics).
template <class T>
void softmax_rows(Ptr<T> in, Ptr<T> out, i32 M, i32 N, i32 in_stride, i32 out_stride, Const<int> ROWS,
                  Const<int> BLOCK, Const<bool> EVEN_M, Const<bool> EVEN_N) {
  auto rows = program_id(0) * ROWS + arange(0, ROWS);
  auto cols = arange(0, BLOCK);
  assume(N > BLOCK / 2);
  assume(N <= BLOCK);
  auto rowOk = EVEN_M ? full({ROWS}, true) : rows < M;
  auto colOk = EVEN_N ? full({BLOCK}, true) : cols < N;
  auto mask = expand_dims(rowOk, 1) & expand_dims(colOk, 0);
  auto r = expand_dims(rows, 1);
  auto c = expand_dims(cols, 0);
  // Padding reads -inf: it never wins the max and exp(-inf) adds 0 to the sum.
  auto x = detail::widen(load(in + r * in_stride + c, mask, -std::numeric_limits<float>::infinity()));
  // Subtracting the row max keeps exp() at most 1, so it cannot overflow;
  // softmax is unchanged by a shift of the whole row. nanmax skips NaNs,
  // but a NaN in the row still makes its sum, so the whole row, NaN (as
  // max would).
  auto m = nanmax(x, 1);
  // exp(x - m) = exp2(x * log2(e) - m * log2(e)): one fma per element. The
  // rounding of m * log2(e) shifts every term of the row alike, which the
  // normalization cancels. Terms below 2^-126 of the max flush to 0 (the
  // hardware exponential), invisible in a sum of at least 1.
  auto num = fast_exp2(fma(x, kLog2E, expand_dims(m * -kLog2E, 1)));
  // The row is scaled by one reciprocal of its sum (v_rcp_f32, about 1 ulp)
  // rather than divided element by element.
  auto inv = fdiv(1.0f, sum(num, 1));
  store(out + r * out_stride + c, detail::narrow<T>(num * expand_dims(inv, 1)), mask);
}

// Rows of any length: program p walks row p a BLOCK at a time, twice. The
// first pass keeps, per position of the block, the largest value seen and
// the sum of exp(x - that max), rescaling the sum when the max grows (online
// softmax); the positions then combine into the row's max and sum. The
// second pass writes exp(x - max) / sum.
template <class T>
void softmax_long_rows(Ptr<T> in, Ptr<T> out, i32 N, i32 in_stride, i32 out_stride, Const<int> BLOCK) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  auto row = program_id(0);
  auto src = in + row * in_stride;
  auto dst = out + row * out_stride;
  auto cols = arange(0, BLOCK);
  auto m = full<float>({BLOCK}, kNegInf);
  auto s = zeros<float>({BLOCK});
  for_range(0, N, BLOCK, [&](i32 k) {
    auto c = k + cols;
    auto x = detail::widen(load(src + c, c < N, kNegInf));
    // One exp per element: e = exp(-|x - m|) rescales the sum when x is the
    // new max and is x's term otherwise. Padding (-inf) leaves both alone.
    auto e = exp(-abs(x - m));
    s = where(x > m, s * e + 1.0f, where(x == kNegInf, s, s + e));
    m = maximum(m, x);
  });
  auto rowMax = max(m, 0);
  auto inv = 1.0f / sum(s * exp(m - rowMax), 0);
  for_range(0, N, BLOCK, [&](i32 k) {
    auto c = k + cols;
    auto x = detail::widen(load(src + c, c < N, kNegInf));
    store(dst + c, detail::narrow<T>(exp2((x - rowMax) * kLog2E) * inv), c < N);
  });
}

// The kernel objects for element type T, one per process; their runtime()
// has the compile and cache counters and the last compiled kernel.
template <class T> auto &softmaxKernel() {
  static auto kernel = jit(&softmax_rows<T>, std::string("tessel_softmax_") + detail::typeSuffix<T>());
  return kernel;
}
template <class T> auto &softmaxLongKernel() {
  static auto kernel = jit(&softmax_long_rows<T>, std::string("tessel_softmax_long_") + detail::typeSuffix<T>());
  return kernel;
}

// Softmax of each of the M rows of `in` (N elements, row stride in_stride)
// into `out` (row stride out_stride). Rows longer than kMaxRowBlock are
// walked by a loop. Throws tessel::Error when the sizes do not fit the buffers.
template <class T>
void softmax(Device &dev, const Buffer<T> &in, Buffer<T> &out, int64_t M, int64_t N, int64_t in_stride,
             int64_t out_stride) {
  RowConfig cfg = rowConfig("softmax", N, dev.waveSize());
  if (M < 0)
    throw Error("softmax: the row count M = " + std::to_string(M) + " is negative");
  if (M == 0)
    return;
  detail::checkMatrix("softmax", "input", in.size(), M, N, in_stride);
  detail::checkMatrix("softmax", "output", out.size(), M, N, out_stride);
  if (cfg.looped) {
    softmaxLongKernel<T>().launch(dev, {uint32_t(M)}, {.num_warps = cfg.num_warps}, in, out, int32_t(N),
                                  int32_t(in_stride), int32_t(out_stride), cfg.block);
    return;
  }
  softmaxKernel<T>().launch(dev, {cdiv(M, cfg.rows)}, {.num_warps = cfg.num_warps}, in, out, int32_t(M),
                            int32_t(N), int32_t(in_stride), int32_t(out_stride), cfg.rows, cfg.block,
                            M % cfg.rows == 0, N == cfg.block);
}

} // namespace tessel::kernels
