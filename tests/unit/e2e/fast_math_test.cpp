// LaunchOptions::fast_math, fdiv() and div_rn(): which division the code
// object has, and results against a float64 reference.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <cmath>

using namespace tessel;
using namespace e2e;

namespace {

// Each row divided by its sum (a scalar broadcast over the row).
void normalize_rows(Ptr<f32> in, Ptr<f32> out, i32 N, Const<int> BLOCK) {
  auto row = program_id(0);
  auto cols = arange(0, BLOCK);
  auto m = cols < N;
  auto x = load(in + row * N + cols, m, 0.0f);
  store(out + row * N + cols, x / sum(x, 0), m);
}

void divide(Ptr<f32> a, Ptr<f32> b, Ptr<f32> out, i32 n, Const<int> HOW, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto m = offs < n;
  auto x = load(a + offs, m, 1.0f), y = load(b + offs, m, 1.0f);
  const int how = HOW;
  store(out + offs, how == 0 ? x / y : how == 1 ? fdiv(x, y) : div_rn(x, y), m);
}

constexpr int kIntFdivLine = __LINE__ + 1;
void int_fdiv(Ptr<i32> p) { store(p, fdiv(load(p), load(p))); }

const CompiledKernel &last(auto &kernel) { return *kernel.runtime()->lastKernel(); }

} // namespace

TEST_CASE("fast_math: a row divided by its sum multiplies by one reciprocal; IEEE division without it") {
  Device dev = Device::emulator("gfx942");
  const int M = 7, N = 333;
  std::vector<float> hx = randomFloats(size_t(M) * N, 0.5f, 2.0f);
  auto in = dev.upload(hx);
  auto kernel = jit<normalize_rows>();
  for (bool fast : {false, true}) {
    CAPTURE(fast);
    auto out = dev.upload(std::vector<float>(size_t(M) * N, std::nanf("")));
    kernel.launch(dev, {M}, {.num_warps = 2, .fast_math = fast}, in, out, N, 512);
    std::vector<float> got = out.download();
    double worst = 0;
    for (int r = 0; r < M; ++r) {
      double s = 0;
      for (int c = 0; c < N; ++c)
        s += hx[size_t(r) * N + c];
      for (int c = 0; c < N; ++c) {
        double want = hx[size_t(r) * N + c] / s;
        worst = std::max(worst, std::abs(got[size_t(r) * N + c] - want) / want);
      }
    }
    CHECK(worst < 1e-5);
    const CompiledKernel &k = last(kernel);
    if (fast) {
      CHECK(contains(k.tileIR, "arith.mulf"));
      CHECK(contains(k.tileIR, "fastmath<arcp,afn>"));
      CHECK(contains(k.assembly(), "v_rcp_f32"));
      CHECK_FALSE(contains(k.assembly(), "v_div_fixup_f32"));
    } else {
      CHECK_FALSE(contains(k.tileIR, "fastmath"));
      CHECK(contains(k.assembly(), "v_div_fixup_f32"));
    }
  }
  CHECK(kernel.runtime()->stats().compiles + kernel.runtime()->stats().diskHits == 2); // a key each
}

TEST_CASE("fdiv is fast and div_rn correctly rounded whatever fast_math says; `/` follows it") {
  Device dev = Device::emulator("gfx942");
  const int n = 1999;
  std::vector<float> ha = randomFloats(n), hb = randomFloats(n, 0.25f, 4.0f);
  auto a = dev.upload(ha), b = dev.upload(hb);
  auto kernel = jit<divide>();
  struct Case {
    int how;
    bool fast;
    bool rounded; // the correctly rounded sequence (v_div_fixup_f32)
  };
  for (Case c : {Case{0, false, true}, Case{0, true, false}, Case{1, false, false}, Case{1, true, false},
                 Case{2, false, true}, Case{2, true, true}}) {
    CAPTURE(c.how);
    CAPTURE(c.fast);
    auto out = dev.upload(std::vector<float>(n, std::nanf("")));
    kernel.launch(dev, {cdiv(n, 256)}, {.num_warps = 4, .fast_math = c.fast}, a, b, out, n, c.how, 256);
    std::vector<float> got = out.download();
    size_t wrong = 0;
    for (int i = 0; i < n; ++i) {
      double want = double(ha[i]) / double(hb[i]);
      if (c.rounded)
        wrong += got[i] != float(want); // the emulator's division is the host's, correctly rounded
      else
        wrong += !(std::abs(got[i] - want) <= 4e-7 * std::abs(want) + 1e-30);
    }
    CHECK(wrong == 0);
    const std::string &assembly = last(kernel).assembly();
    CHECK(contains(assembly, "v_div_fixup_f32") == c.rounded);
    if (!c.rounded)
      CHECK(contains(assembly, "v_rcp_f32"));
  }
}

TEST_CASE("fdiv and div_rn need float tiles") {
  auto bad = jit<int_fdiv>();
  int32_t *address = reinterpret_cast<int32_t *>(0x1000);
  const std::string message =
      "fast_math_test.cpp:" + std::to_string(kIntFdivLine) + ": fdiv: is not defined for i32 operands";
  CHECK_THROWS_WITH_AS(bad.trace(address), doctest::Contains(message.c_str()), Error);
}
