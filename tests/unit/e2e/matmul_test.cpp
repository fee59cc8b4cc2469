// tessel::kernels::matmul on the emulator against float64 (int8: exact):
// odd shapes with masked edges, batched, transposed operands by strides,
// bias and activations.
#include "e2e_common.hpp"

#include <tessel/kernels/matmul.hpp>

#include <algorithm>
#include <cmath>

using namespace tessel;
using namespace e2e;

namespace {

struct Problem {
  int batch, M, N, K;
  bool transA = false, transB = false;
  bool bias = false;
  kernels::Activation act = kernels::Activation::None;
};

double activate(double x, kernels::Activation act) {
  if (act == kernels::Activation::Relu) return std::max(x, 0.0);
  if (act == kernels::Activation::Gelu) return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  return x;
}

// Largest error relative to the largest |C| (integers: the count of wrong elements).
template <class T> double run(const Problem &p, kernels::MatmulConfig cfg = {}) {
  using Out = kernels::detail::matmul_out_t<T>;
  const bool ints = std::is_same_v<T, int8_t>;
  const size_t sa = size_t(p.M) * p.K, sb = size_t(p.K) * p.N, sc = size_t(p.M) * p.N;
  std::vector<T> ha(sa * p.batch), hb(sb * p.batch);
  if constexpr (std::is_same_v<T, int8_t>) {
    auto ia = randomInts<int8_t>(ha.size(), -128, 127), ib = randomInts<int8_t>(hb.size(), -128, 127);
    ha.assign(ia.begin(), ia.end());
    hb.assign(ib.begin(), ib.end());
  } else {
    auto fa = randomFloats(ha.size(), -1, 1), fb = randomFloats(hb.size(), -1, 1);
    ha.assign(fa.begin(), fa.end());
    hb.assign(fb.begin(), fb.end());
  }
  std::vector<Out> hbias(p.N);
  for (int j = 0; j < p.N; ++j) hbias[size_t(j)] = Out(ints ? (j % 7) - 3 : float(j % 7) * 0.25f - 0.75f);
  auto a = emulator().upload(ha), b = emulator().upload(hb);
  auto bias = emulator().upload(hbias);
  auto c = poisoned<Out>(sc * p.batch);
  kernels::MatmulShape shape{.M = p.M, .N = p.N, .K = p.K, .batch = p.batch, .activation = p.act};
  // A stored as [K, M] (transposed) reads with strides (1, M); B as [N, K] with (1, K).
  if (p.transA) { shape.a_stride_m = 1; shape.a_stride_k = p.M; }
  if (p.transB) { shape.b_stride_k = 1; shape.b_stride_n = p.K; }
  kernels::matmul(emulator(), a, b, c, shape, p.bias ? &bias : nullptr, cfg);
  std::vector<Out> got = c.download();
  double scale = 0, worst = 0;
  std::vector<double> want(sc);
  for (int z = 0; z < p.batch; ++z) {
    std::fill(want.begin(), want.end(), 0.0);
    for (int i = 0; i < p.M; ++i)
      for (int kk = 0; kk < p.K; ++kk) {
        size_t ai = z * sa + (p.transA ? size_t(kk) * p.M + i : size_t(i) * p.K + kk);
        double av = double(float(ha[ai]));
        for (int j = 0; j < p.N; ++j) {
          size_t bi = z * sb + (p.transB ? size_t(j) * p.K + kk : size_t(kk) * p.N + j);
          want[size_t(i) * p.N + j] += av * double(float(hb[bi]));
        }
      }
    for (int i = 0; i < p.M; ++i)
      for (int j = 0; j < p.N; ++j) {
        double& w = want[size_t(i) * p.N + j];
        w = activate(w + (p.bias ? double(hbias[size_t(j)]) : 0.0), p.act);
        scale = std::max(scale, std::fabs(w));
      }
    for (size_t e = 0; e < sc; ++e) {
      double g = double(got[z * sc + e]);
      if (ints) worst += g != want[e];
      else worst = std::max(worst, std::fabs(g - want[e]));
    }
  }
  return ints ? worst : worst / std::max(scale, 1e-30);
}

} // namespace

TEST_CASE("kernels::matmul: 1000 x 1000 x 1000 f16, 4097 x 63 x 129 and 1 x 4096 x 4096 with masked edges") {
  CHECK(run<half>({1, 1000, 1000, 1000}) < 1e-2);
  CHECK(run<half>({1, 4097, 63, 129}) < 1e-2);
  CHECK(run<bfloat16>({1, 1, 4096, 4096}) < 1e-2);
}

TEST_CASE("kernels::matmul: int8 is exact; f32; batched [7, 129, 65] x [7, 65, 33]") {
  CHECK(run<int8_t>({1, 200, 130, 300}) == 0);
  CHECK(run<float>({1, 100, 70, 90}) < 1e-5);
  CHECK(run<half>({7, 129, 33, 65}) < 1e-2);
  CHECK(run<int8_t>({3, 65, 65, 65}) == 0);
}

TEST_CASE("kernels::matmul: transposed operands by strides, bias, relu and gelu") {
  CHECK(run<half>({1, 96, 80, 112, /*transA=*/true, /*transB=*/false}) < 1e-2);
  CHECK(run<half>({1, 96, 80, 112, false, /*transB=*/true}) < 1e-2);
  CHECK(run<bfloat16>({2, 50, 60, 70, true, true, /*bias=*/true, kernels::Activation::Relu}) < 1e-2);
  CHECK(run<float>({1, 64, 64, 64, false, false, true, kernels::Activation::Gelu}) < 1e-5);
  CHECK(run<int8_t>({1, 40, 40, 40, false, false, true, kernels::Activation::Relu}) == 0);
}

TEST_CASE("kernels::matmul refuses sizes that do not fit") {
  auto a = emulator().alloc<half>(100), b = emulator().alloc<half>(100);
  auto c = emulator().alloc<half>(100);
  CHECK_THROWS_WITH_AS(kernels::matmul(emulator(), a, b, c, {.M = 20, .N = 10, .K = 10}),
                       doctest::Contains("matmul: A: the buffer holds 100 elements and needs 200"), Error);
  CHECK_THROWS_WITH_AS(kernels::matmul(emulator(), a, b, c, {.M = 0, .N = 10, .K = 10}),
                       doctest::Contains("matmul: M, N, K and batch must be at least 1"), Error);
}
