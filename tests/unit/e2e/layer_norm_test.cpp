// tessel::kernels::layer_norm against a float64 reference on the host, for
// f32, f16 and bf16 at odd shapes, with row strides; mean and rstd checked too.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <tessel/kernels/layer_norm.hpp>

#include <algorithm>

using namespace tessel;
using namespace e2e;

namespace {

struct Errors {
  double y = 0, mean = 0, rstd = 0;
};

// Layer norm of an M x N matrix (strides N + 2 in, N + 7 out). y is judged
// relative to max(|y|, 1) (its values are O(1) and cross zero), mean relative
// to the row's largest |x| (a mean near zero is a difference of large
// numbers), rstd relative to itself.
template <class T> Errors runLayerNorm(int M, int N, float eps = 1e-5f, Device &dev = emulator()) {
  const int xStride = N + 2, yStride = N + 7;
  // An offset keeps the inputs from being centered already.
  std::vector<float> raw = randomFloats(size_t(M) * xStride, -3.f, 5.f);
  std::vector<float> rawW = randomFloats(N, -2.f, 2.f), rawB = randomFloats(N, -1.f, 1.f);
  std::vector<T> hx(raw.begin(), raw.end()), hw(rawW.begin(), rawW.end()), hb(rawB.begin(), rawB.end());
  auto x = dev.upload(hx), w = dev.upload(hw), b = dev.upload(hb);
  auto y = poisoned<T>(size_t(M) * yStride, dev);
  auto mean = poisoned<float>(M, dev), rstd = poisoned<float>(M, dev);
  std::vector<T> before = y.download();
  kernels::layer_norm(dev, x, y, w, b, mean, rstd, M, N, xStride, yStride, eps);
  std::vector<T> got = y.download();
  std::vector<float> gotMean = mean.download(), gotRstd = rstd.download();

  Errors err;
  size_t touched = 0;
  for (int r = 0; r < M; ++r) {
    const T *row = &hx[size_t(r) * xStride];
    double total = 0, scale = 0;
    for (int c = 0; c < N; ++c) {
      total += double(float(row[c]));
      scale = std::max(scale, std::fabs(double(float(row[c]))));
    }
    double mu = total / N, sq = 0;
    for (int c = 0; c < N; ++c)
      sq += (double(float(row[c])) - mu) * (double(float(row[c])) - mu);
    double rs = 1.0 / std::sqrt(sq / N + double(eps));
    err.mean = std::max(err.mean, relError(gotMean[r], mu, std::max(scale, 1e-30)));
    err.rstd = std::max(err.rstd, relError(gotRstd[r], rs));
    for (int c = 0; c < yStride; ++c) {
      size_t i = size_t(r) * yStride + c;
      if (c < N) {
        double want = (double(float(row[c])) - mu) * rs * double(float(hw[c])) + double(float(hb[c]));
        err.y = std::max(err.y, relError(float(got[i]), want, 1.0));
      } else {
        touched += std::memcmp(&got[i], &before[i], sizeof(T)) != 0;
      }
    }
  }
  CHECK_MESSAGE(touched == 0, touched << " padding elements past N were written");
  return err;
}

struct Shape2 {
  int M, N;
};
const Shape2 kShapes[] = {
    {1, 781},   // a single row, N not a power of two
    {37, 1},    // a single column: y = bias, rstd = 1/sqrt(eps)
    {1, 1},     {5, 3},     {300, 17}, {129, 1000}, {2, 513}, // 513: just past half its block
    {64, 1024}, // N exactly a power of two
    {2000, 64}, // many short rows, several per program (no mask: EVEN_M, EVEN_N)
    {301, 64},  // full rows, the last program's 8 rows partly past M (EVEN_N only)
    {3, 8192},  // a row over 8 waves
};

} // namespace

TEST_CASE("layer norm f32 matches a float64 reference at odd shapes; mean and rstd too") {
  for (Shape2 s : kShapes) {
    CAPTURE(s.M);
    CAPTURE(s.N);
    Errors e = runLayerNorm<float>(s.M, s.N);
    CHECK(e.y < 1e-5);
    CHECK(e.mean < 1e-5);
    CHECK(e.rstd < 1e-5);
  }
}

TEST_CASE("layer norm at N = 8192 on gfx942: its f32 arithmetic is packed two to an instruction") {
  // The lowering emits f32 add, multiply and fma on <2 x float> (and the
  // row sums' trees), which gfx942 runs as v_pk_add_f32 / v_pk_mul_f32 /
  // v_pk_fma_f32; LLVM's SLP vectorizer is not run on 32-bit kernels.
  Errors e = runLayerNorm<float>(3, 8192);
  CHECK(e.y < 1e-5);
  const std::string &s = kernels::layerNormKernel<float>().runtime()->lastKernel()->assembly();
  INFO(s);
  CHECK(occurrences(s, "v_pk_add_f32") >= 8);
  CHECK(occurrences(s, "v_pk_mul_f32") >= 8);
  CHECK(occurrences(s, "v_pk_fma_f32") >= 8);
  CHECK(occurrences(s, "v_pk_") >= 48);
}

TEST_CASE("layer norm f16 on gfx1100: each widened input is added or subtracted by v_fma_mix_f32, not converted") {
  // addWidenedHalvesAsFmaMix (the backend): the row's sum and its centred
  // values read the f16 inputs where they lie, a high half by op_sel. The
  // emulator runs the kernel module before the backend, so the numbers here
  // do not run the rewrite; mixed_adds_test.cpp checks its operands.
  Device rdna = Device::emulator("gfx1100");
  Errors e = runLayerNorm<half>(3, 8192, 1e-5f, rdna);
  CHECK(e.y < 1e-2);
  CHECK(e.mean < 1e-5);
  CHECK(e.rstd < 1e-5);
  const std::string &s = kernels::layerNormKernel<half>().runtime()->lastKernel()->assembly();
  INFO(s);
  CHECK(occurrences(s, "v_fma_mix_f32") >= 16);
  CHECK(occurrences(s, "v_cvt_f32_f16") == 0);
}

TEST_CASE("layer norm f16 and bf16 match a float64 reference (statistics in f32)") {
  for (Shape2 s : kShapes) {
    CAPTURE(s.M);
    CAPTURE(s.N);
    Errors h = runLayerNorm<half>(s.M, s.N);
    CHECK(h.y < 1e-2);
    CHECK(h.mean < 1e-5); // from exact f16 inputs, accumulated in f32
    CHECK(h.rstd < 1e-5);
    Errors b = runLayerNorm<bfloat16>(s.M, s.N);
    CHECK(b.y < 1e-2);
    CHECK(b.mean < 1e-5);
    CHECK(b.rstd < 1e-5);
  }
}

TEST_CASE("layer norm of rows longer than a block: 64 x 65536 f32 and bf16, and 3 x 16385, by a loop") {
  // One looped kernel per element type serves every long row.
  for (Shape2 s : {Shape2{64, 65536}, Shape2{3, kernels::kMaxRowBlock + 1}}) {
    CAPTURE(s.M);
    CAPTURE(s.N);
    Errors e = runLayerNorm<float>(s.M, s.N);
    CHECK(e.y < 1e-5);
    CHECK(e.mean < 1e-5);
    CHECK(e.rstd < 1e-5);
    Errors b = runLayerNorm<bfloat16>(s.M, s.N);
    CHECK(b.y < 1e-2);
    CHECK(b.mean < 1e-5);
    CHECK(b.rstd < 1e-5);
  }
  auto &k = kernels::layerNormLongKernel<float>();
  REQUIRE(k.runtime()->lastKernel() != nullptr);
  CHECK(k.runtime()->lastKernel()->tileIR.find("scf.for") != std::string::npos);
}

TEST_CASE("layer norm rejects short buffers") {
  Device &dev = emulator();
  int n = 200;
  auto x = dev.alloc<float>(n), y = dev.alloc<float>(n), w = dev.alloc<float>(n), b = dev.alloc<float>(n);
  auto mean = dev.alloc<float>(1), rstd = dev.alloc<float>(1);
  CHECK_THROWS_WITH_AS(kernels::layer_norm(dev, x, y, w, b, mean, rstd, 2, 100, 100, 100),
                       doctest::Contains("mean: the buffer holds 1 elements and needs 2"), Error);
  CHECK_THROWS_WITH_AS(kernels::layer_norm(dev, x, y, w, b, mean, rstd, 1, 100, 50, 100),
                       doctest::Contains("row stride"), Error);
}
