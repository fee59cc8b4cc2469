// Layer norm forward over the rows of an M x N matrix, as PyTorch's
// layer_norm over the last dimension:
//   mean = sum(x) / N,  var = sum((x - mean)^2) / N  (biased),
//   rstd = 1 / sqrt(var + eps),  y = (x - mean) * rstd * weight + bias,
// with mean and rstd also written per row (f32) for a backward pass.
// f32, f16 and bf16 in and out; statistics and arithmetic in f32.
//
//   tessel::kernels::layer_norm(dev, x, y, weight, bias, mean, rstd, M, N, x_stride, y_stride, eps);
#pragma once

#include "tessel/kernels/row_config.hpp"

#include <string>

namespace tessel::kernels {

// The block program: program p normalizes rows [p * ROWS, (p + 1) * ROWS) of
// BLOCK columns, BLOCK the next power of two >= N (rowConfig's block: the
// program assumes BLOCK / 2 < N <= BLOCK, so the first half of each row needs
// no mask and a buffer's byte bound needs no clamp); rows past M and columns
// past N are masked.
template <class T>
void layer_norm_rows(Ptr<T> x, Ptr<T> y, Ptr<T> weight, Ptr<T> bias, Ptr<f32> mean, Ptr<f32> rstd, i32 M, i32 N,
                     i32 x_stride, i32 y_stride, f32 eps, Const<int> ROWS, Const<int> BLOCK, Const<bool> EVEN_M,
                     Const<bool> EVEN_N) {
  auto rows = program_id(0) * ROWS + arange(0, ROWS);
  auto cols = arange(0, BLOCK);
  assume(N > BLOCK / 2);
  assume(N <= BLOCK);
  // EVEN_M (M a multiple of ROWS), EVEN_N (N = BLOCK): that mask is all true
  // and disappears, with the padding's `where` below.
  auto rowOk = EVEN_M ? full({ROWS}, true) : rows < M;
  auto colOk = EVEN_N ? full({BLOCK}, true) : cols < N;
  auto mask = expand_dims(rowOk, 1) & expand_dims(colOk, 0);
  auto r = expand_dims(rows, 1);
  auto c = expand_dims(cols, 0);
  // One reciprocal of N per program (v_rcp_f32, about 1 ulp) for both means.
  auto inv_n = fdiv(1.0f, cast<float>(N));
  // Padding reads 0, which adds nothing to the sum.
  auto v = detail::widen(load(x + r * x_stride + c, mask, 0.0f));
  auto mu = sum(v, 1) * inv_n;
  // Two passes over the registers (mean, then squared deviations) avoid the
  // cancellation of E[x^2] - E[x]^2; padding must not count as -mean.
  auto d = where(mask, v - expand_dims(mu, 1), 0.0f);
  auto var = sum(d * d, 1) * inv_n;
  auto rs = rsqrt(var + eps); // v_rsq_f32 (1 ulp), once per row
  auto w = detail::widen(load(weight + cols, colOk, 0.0f));
  auto b = detail::widen(load(bias + cols, colOk, 0.0f));
  auto out = fma(d * expand_dims(rs, 1), expand_dims(w, 0), expand_dims(b, 0));
  store(y + r * y_stride + c, detail::narrow<T>(out), mask);
  store(mean + rows, mu, rowOk);
  store(rstd + rows, rs, rowOk);
}

// Rows of any length: program p walks row p a BLOCK at a time, three times:
// the mean, the squared deviations from it (two passes, as above, so that
// E[x^2] - E[x]^2 cannot cancel), then the normalized output.
template <class T>
void layer_norm_long_rows(Ptr<T> x, Ptr<T> y, Ptr<T> weight, Ptr<T> bias, Ptr<f32> mean, Ptr<f32> rstd, i32 N,
                          i32 x_stride, i32 y_stride, f32 eps, Const<int> BLOCK) {
  auto row = program_id(0);
  auto src = x + row * x_stride;
  auto dst = y + row * y_stride;
  auto cols = arange(0, BLOCK);
  auto n = cast<float>(N);
  auto acc = zeros<float>({BLOCK});
  for_range(0, N, BLOCK, [&](i32 k) {
    auto c = k + cols;
    acc = acc + detail::widen(load(src + c, c < N, 0.0f));
  });
  auto mu = sum(acc, 0) / n;
  auto dev = zeros<float>({BLOCK});
  for_range(0, N, BLOCK, [&](i32 k) {
    auto c = k + cols;
    auto d = where(c < N, detail::widen(load(src + c, c < N, 0.0f)) - mu, 0.0f);
    dev = dev + d * d;
  });
  auto rs = 1.0f / sqrt(sum(dev, 0) / n + eps);
  for_range(0, N, BLOCK, [&](i32 k) {
    auto c = k + cols;
    auto v = detail::widen(load(src + c, c < N, 0.0f));
    auto w = detail::widen(load(weight + c, c < N, 0.0f));
    auto b = detail::widen(load(bias + c, c < N, 0.0f));
    store(dst + c, detail::narrow<T>((v - mu) * rs * w + b), c < N);
  });
  store(mean + row, mu);
  store(rstd + row, rs);
}

template <class T> auto &layerNormKernel() {
  static auto kernel = jit(&layer_norm_rows<T>, std::string("tessel_layer_norm_") + detail::typeSuffix<T>());
  return kernel;
}
template <class T> auto &layerNormLongKernel() {
  static auto kernel =
      jit(&layer_norm_long_rows<T>, std::string("tessel_layer_norm_long_") + detail::typeSuffix<T>());
  return kernel;
}

// Normalizes each of the M rows of x (N elements, row stride x_stride) into
// y (row stride y_stride) with weight[N] and bias[N]; writes mean[M] and
// rstd[M]. Rows longer than kMaxRowBlock are walked by a loop. Throws
// tessel::Error when the sizes do not fit the buffers.
template <class T>
void layer_norm(Device &dev, const Buffer<T> &x, Buffer<T> &y, const Buffer<T> &weight, const Buffer<T> &bias,
                Buffer<float> &mean, Buffer<float> &rstd, int64_t M, int64_t N, int64_t x_stride, int64_t y_stride,
                float eps = 1e-5f) {
  RowConfig cfg = rowConfig("layer_norm", N, dev.waveSize());
  if (M < 0)
    throw Error("layer_norm: the row count M = " + std::to_string(M) + " is negative");
  if (M == 0)
    return;
  detail::checkMatrix("layer_norm", "x", x.size(), M, N, x_stride);
  detail::checkMatrix("layer_norm", "y", y.size(), M, N, y_stride);
  detail::checkVector("layer_norm", "weight", weight.size(), N);
  detail::checkVector("layer_norm", "bias", bias.size(), N);
  detail::checkVector("layer_norm", "mean", mean.size(), M);
  detail::checkVector("layer_norm", "rstd", rstd.size(), M);
  if (cfg.looped) {
    layerNormLongKernel<T>().launch(dev, {uint32_t(M)}, {.num_warps = cfg.num_warps}, x, y, weight, bias, mean,
                                    rstd, int32_t(N), int32_t(x_stride), int32_t(y_stride), eps, cfg.block);
    return;
  }
  layerNormKernel<T>().launch(dev, {cdiv(M, cfg.rows)}, {.num_warps = cfg.num_warps}, x, y, weight, bias, mean,
                              rstd, int32_t(M), int32_t(N), int32_t(x_stride), int32_t(y_stride), eps, cfg.rows,
                              cfg.block, M % cfg.rows == 0, N == cfg.block);
}

} // namespace tessel::kernels
