// LaunchOptions::fast_math, fdiv() and div_rn(): which division the code
// object has, and results against a float64 reference; LaunchOptions::
// fp_fusion: multiply-adds rounded once.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <cmath>

using namespace tessel;
using namespace e2e;

namespace {

// x * y + z and x * y - z: two fmas under fp_fusion, four roundings without.
void multiply_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> z, Ptr<f32> sum, Ptr<f32> difference, i32 n,
                  Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto m = offs < n;
  auto a = load(x + offs, m, 0.0f), b = load(y + offs, m, 0.0f), c = load(z + offs, m, 0.0f);
  store(sum + offs, a * b + c, m);
  store(difference + offs, a * b - c, m);
}

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

// fast_exp2, fast_exp and the precise exp2 of one tile (HALF: of its f16 copy).
void exponentials(Ptr<f32> x, Ptr<f32> fast2, Ptr<f32> fastE, Ptr<f32> precise2, Ptr<f32> half2, i32 n,
                  Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto m = offs < n;
  auto v = load(x + offs, m, 0.0f);
  store(fast2 + offs, fast_exp2(v), m);
  store(fastE + offs, fast_exp(v), m);
  store(precise2 + offs, exp2(v), m);
  store(half2 + offs, cast<float>(fast_exp2(cast<f16>(v))), m);
}

// Row extremes four ways: max / min (NaN-propagating), nanmax / nanmin
// (the padding is NaN, which only those skip).
void row_extremes(Ptr<f32> in, Ptr<f32> out, i32 N, Const<int> BLOCK) {
  auto row = program_id(0);
  auto cols = arange(0, BLOCK);
  auto m = cols < N;
  auto x = load(in + row * N + cols, m, std::nanf(""));
  const float inf = std::numeric_limits<float>::infinity();
  store(out + row * 4 + 0, max(where(m, x, -inf), 0));
  store(out + row * 4 + 1, min(where(m, x, inf), 0));
  store(out + row * 4 + 2, nanmax(x, 0));
  store(out + row * 4 + 3, nanmin(x, 0));
}

void pairwise(Ptr<f32> a, Ptr<f32> b, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto m = offs < n;
  auto x = load(a + offs, m, 0.0f), y = load(b + offs, m, 0.0f);
  store(out + offs * 4 + 0, fmax(x, y), m);
  store(out + offs * 4 + 1, fmin(x, y), m);
  store(out + offs * 4 + 2, maximum(x, y), m);
  store(out + offs * 4 + 3, minimum(x, y), m);
}

void int_nanmax(Ptr<i32> in, Ptr<i32> out, Const<int> BLOCK) {
  auto x = load(in + arange(0, BLOCK));
  store(out, nanmax(x, 0));
  store(out + 1, nanmin(x, 0));
}

void fast_exp2_only(Ptr<f32> x, Ptr<f32> y, Const<int> BLOCK) {
  auto offs = arange(0, BLOCK);
  store(y + offs, fast_exp2(load(x + offs)));
}
void exp2_only(Ptr<f32> x, Ptr<f32> y, Const<int> BLOCK) {
  auto offs = arange(0, BLOCK);
  store(y + offs, exp2(load(x + offs)));
}
void nanmax_only(Ptr<f32> in, Ptr<f32> out, Const<int> BLOCK) { store(out, nanmax(load(in + arange(0, BLOCK)), 0)); }

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

TEST_CASE("fast_exp2 and fast_exp are v_exp_f32 alone: 1 ulp, results below 2^-126 are 0; exp2 keeps them") {
  for (std::string arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    std::vector<float> hx = randomFloats(1000, -140.0f, 100.0f);
    for (float v : {-126.0f, -126.5f, -149.0f, -150.0f, 0.0f, -0.0f, 1.0f, 127.5f, 128.0f})
      hx.push_back(v);
    // Inputs below the normal range whatever the shared generator gave
    // (about 58 of the random 1000 on average; the count moved with the
    // tests that draw before this one).
    for (int i = 0; i < 56; ++i)
      hx.push_back(-126.25f - 0.25f * float(i));
    const int n = int(hx.size());
    auto x = dev.upload(hx);
    const float poison = std::nanf("");
    auto fast2 = dev.upload(std::vector<float>(n, poison)), fastE = dev.upload(std::vector<float>(n, poison));
    auto precise2 = dev.upload(std::vector<float>(n, poison)), half2 = dev.upload(std::vector<float>(n, poison));
    auto kernel = jit<exponentials>();
    kernel.launch(dev, {cdiv(n, 256)}, {.num_warps = 4}, x, fast2, fastE, precise2, half2, n, 256);
    std::vector<float> f2 = fast2.download(), fe = fastE.download(), p2 = precise2.download(), h2 = half2.download();
    size_t wrong = 0, flushed = 0, denormalsKept = 0;
    const double smallest = std::ldexp(1.0, -126);
    for (int i = 0; i < n; ++i) {
      const double want2 = std::exp2(double(hx[i])), wantE = std::exp(double(hx[i]));
      auto near = [](float got, double want, double rel) {
        if (want > double(std::numeric_limits<float>::max()))
          return std::isinf(got) && got > 0;
        return std::abs(double(got) - want) <= rel * want;
      };
      if (want2 < smallest) {
        ++flushed;
        wrong += f2[i] != 0.0f;
        // The precise exp2 keeps the denormal (to 1 ulp of the smallest step).
        denormalsKept += p2[i] != 0.0f || want2 <= std::ldexp(1.0, -150); // 2^-150 rounds to 0 (even)
        wrong += std::abs(double(p2[i]) - want2) > std::ldexp(1.0, -149);
      } else {
        wrong += !near(f2[i], want2, 2.4e-7); // 1 ulp
        wrong += !near(p2[i], want2, 2.4e-7);
      }
      // e^x = 2^(x log2 e): the product's rounding adds |x log2 e| * 2^-24.
      if (wantE >= smallest)
        wrong += !near(fe[i], wantE, 2.4e-7 + std::abs(hx[i]) * 1.5 * 0x1p-24);
      else
        wrong += fe[i] != 0.0f;
      // f16: x rounded to f16, 2^x in f32 (the f16 math runs in f32), back to f16.
      const double x16 = double(static_cast<_Float16>(hx[i]));
      const double want16 = std::exp2(x16);
      if (want16 < smallest)
        wrong += h2[i] != 0.0f;
      else if (want16 > 65504.0 + 16.0)
        wrong += !std::isinf(h2[i]);
      else if (want16 >= std::ldexp(1.0, -14))
        wrong += std::abs(double(h2[i]) - want16) > std::ldexp(want16, -10); // 1 f16 ulp
    }
    CHECK(flushed > 50); // the inputs reach below the normal range
    CHECK(denormalsKept == flushed);
    CHECK(wrong == 0);
    // The fast ones are the AMDGPU intrinsic (the next test checks their
    // code has no denormal fix-ups).
    CHECK(contains(last(kernel).assembly(), "v_exp_f32"));
    CHECK(contains(last(kernel).llvmIR(), "llvm.amdgcn.exp2.f32"));
  }
}

TEST_CASE("fast_exp2 has no denormal fix-ups in the code object") {
  Device dev = Device::emulator("gfx942");
  auto fastOnly = jit<fast_exp2_only>();
  auto preciseOnly = jit<exp2_only>();
  auto x = dev.upload(randomFloats(64)), y = dev.upload(std::vector<float>(64, 0.0f));
  fastOnly.launch(dev, {1}, {.num_warps = 1}, x, y, 64);
  preciseOnly.launch(dev, {1}, {.num_warps = 1}, x, y, 64);
  const std::string &fast = last(fastOnly).assembly(), &precise = last(preciseOnly).assembly();
  CHECK(contains(fast, "v_exp_f32"));
  CHECK_FALSE(contains(fast, "v_ldexp_f32"));
  CHECK_FALSE(contains(fast, "v_cndmask_b32"));
  CHECK(contains(precise, "v_exp_f32"));
  CHECK(contains(precise, "v_ldexp_f32"));
}

TEST_CASE("nanmax / nanmin skip NaNs, max / min return them; fmax / fmin take the number") {
  Device dev = Device::emulator("gfx942");
  const int M = 6, N = 333;
  std::vector<float> hx = randomFloats(size_t(M) * N);
  const float nan = std::nanf("");
  hx[size_t(1) * N + 17] = nan;            // row 1: one NaN
  hx[size_t(2) * N + 0] = nan;             // row 2: NaN first and last
  hx[size_t(2) * N + N - 1] = nan;
  for (int c = 0; c < N; ++c)              // row 3: all NaN
    hx[size_t(3) * N + c] = nan;
  hx[size_t(4) * N + 5] = -std::numeric_limits<float>::infinity();
  auto in = dev.upload(hx);
  auto out = dev.upload(std::vector<float>(size_t(M) * 4, 12345.0f));
  auto kernel = jit<row_extremes>();
  kernel.launch(dev, {M}, {.num_warps = 2}, in, out, N, 512);
  std::vector<float> got = out.download();
  for (int r = 0; r < M; ++r) {
    CAPTURE(r);
    bool anyNan = false;
    double hi = -INFINITY, lo = INFINITY;
    for (int c = 0; c < N; ++c) {
      double v = hx[size_t(r) * N + c];
      if (std::isnan(v)) {
        anyNan = true;
        continue;
      }
      hi = std::max(hi, v);
      lo = std::min(lo, v);
    }
    const bool allNan = r == 3;
    if (anyNan) {
      CHECK(std::isnan(got[r * 4 + 0]));
      CHECK(std::isnan(got[r * 4 + 1]));
    } else {
      CHECK(got[r * 4 + 0] == float(hi));
      CHECK(got[r * 4 + 1] == float(lo));
    }
    if (allNan) {
      CHECK(std::isnan(got[r * 4 + 2]));
      CHECK(std::isnan(got[r * 4 + 3]));
    } else {
      CHECK(got[r * 4 + 2] == float(hi));
      CHECK(got[r * 4 + 3] == float(lo));
    }
  }
  // maximum's NaN check per step is in the code; nanmax's is not: the
  // kernel has both, so count the ordered compares against a nanmax-only one.
  auto nanOnly = jit<nanmax_only>();
  auto nanOut = dev.upload(std::vector<float>(1, 0.0f));
  nanOnly.launch(dev, {1}, {.num_warps = 2}, in, nanOut, 128);
  CHECK_FALSE(contains(last(nanOnly).assembly(), "v_cmp_o_f32"));
  CHECK_FALSE(contains(last(nanOnly).assembly(), "v_cmp_u_f32"));
  CHECK(contains(last(kernel).assembly(), "v_cmp_o_f32"));

  // Elementwise, against C's fmax / fmin and NaN-propagating maximum / minimum.
  const int n = 777;
  std::vector<float> ha = randomFloats(n), hb = randomFloats(n);
  for (int i = 0; i < n; i += 7)
    (i % 2 ? ha : hb)[i] = nan;
  ha[700] = hb[700] = nan;
  auto a = dev.upload(ha), b = dev.upload(hb);
  auto pairs = dev.upload(std::vector<float>(size_t(n) * 4, 12345.0f));
  auto pk = jit<pairwise>();
  pk.launch(dev, {cdiv(n, 256)}, {.num_warps = 4}, a, b, pairs, n, 256);
  std::vector<float> p = pairs.download();
  size_t wrong = 0;
  auto same = [](float x, float y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  for (int i = 0; i < n; ++i) {
    const bool either = std::isnan(ha[i]) || std::isnan(hb[i]);
    wrong += !same(p[i * 4 + 0], std::fmax(ha[i], hb[i]));
    wrong += !same(p[i * 4 + 1], std::fmin(ha[i], hb[i]));
    wrong += !same(p[i * 4 + 2], either ? nan : std::max(ha[i], hb[i]));
    wrong += !same(p[i * 4 + 3], either ? nan : std::min(ha[i], hb[i]));
  }
  CHECK(wrong == 0);

  // On ints nanmax / nanmin are max / min.
  std::vector<int32_t> hi = {5, -7, 12, 3, 12, -9, 0, 4};
  auto iin = dev.upload(hi);
  auto iout = dev.upload(std::vector<int32_t>(2, 99));
  jit<int_nanmax>().launch(dev, {1}, {.num_warps = 1}, iin, iout, 8);
  CHECK(iout.download() == std::vector<int32_t>{12, -9});
}

TEST_CASE("fp_fusion: a * b + c and a * b - c round once (fma), twice without; a key each") {
  Device dev = Device::emulator("gfx942");
  const int n = 1001;
  auto hx = randomFloats(n), hy = randomFloats(n), hz = randomFloats(n);
  auto x = dev.upload(hx), y = dev.upload(hy), z = dev.upload(hz);
  auto kernel = jit<multiply_add>();
  size_t roundedDifferently = 0;
  for (bool fuse : {false, true}) {
    CAPTURE(fuse);
    auto sum = dev.upload(std::vector<float>(n, std::nanf(""))), diff = dev.upload(std::vector<float>(n, std::nanf("")));
    kernel.launch(dev, {cdiv(n, 256)}, {.num_warps = 1, .fp_fusion = fuse}, x, y, z, sum, diff, n, 256);
    std::vector<float> gotSum = sum.download(), gotDiff = diff.download();
    size_t wrong = 0;
    for (int i = 0; i < n; ++i) {
      const float fusedSum = std::fma(hx[i], hy[i], hz[i]), fusedDiff = std::fma(hx[i], hy[i], -hz[i]);
      const float product = hx[i] * hy[i];
      const float plainSum = product + hz[i], plainDiff = product - hz[i];
      wrong += gotSum[i] != (fuse ? fusedSum : plainSum);
      wrong += gotDiff[i] != (fuse ? fusedDiff : plainDiff);
      roundedDifferently += fusedSum != plainSum;
    }
    CHECK(wrong == 0);
    const CompiledKernel &k = last(kernel);
    CHECK(contains(k.tileIR, "math.fma") == fuse);
    CHECK(std::regex_search(k.assembly(), std::regex("v_(pk_)?fma")) == fuse);
  }
  CHECK(roundedDifferently > 0); // the inputs tell the two apart
  CHECK(kernel.runtime()->stats().compiles + kernel.runtime()->stats().diskHits == 2);
}

TEST_CASE("waves_per_eu: the kernels' amdgpu-waves-per-eu, a key each; past the target's wave slots, an error") {
  Device dev = Device::emulator("gfx942");
  const int n = 300;
  auto x = dev.upload(randomFloats(n)), y = dev.upload(randomFloats(n)), z = dev.upload(randomFloats(n));
  auto sum = dev.alloc<float>(n), diff = dev.alloc<float>(n);
  auto kernel = jit<multiply_add>();
  for (unsigned waves : {0u, 2u}) {
    CAPTURE(waves);
    kernel.launch(dev, {cdiv(n, 256)}, {.num_warps = 1, .waves_per_eu = waves}, x, y, z, sum, diff, n, 256);
    CHECK(contains(last(kernel).llvmIR(), "\"amdgpu-waves-per-eu\"=\"2\"") == (waves == 2));
  }
  CHECK(kernel.runtime()->stats().compiles + kernel.runtime()->stats().diskHits == 2);
  CHECK_THROWS_WITH_AS(
      kernel.launch(dev, {1}, {.num_warps = 1, .waves_per_eu = 9}, x, y, z, sum, diff, n, 256),
      doctest::Contains("kernel 'multiply_add': waves_per_eu must be 0 (no request) or 1 to 8, the wave slots of a "
                        "SIMD on gfx942; got 9"),
      Error);
  Device rdna = Device::emulator("gfx1100");
  auto rx = rdna.upload(randomFloats(n)), ry = rdna.upload(randomFloats(n)), rz = rdna.upload(randomFloats(n));
  auto rsum = rdna.alloc<float>(n), rdiff = rdna.alloc<float>(n);
  kernel.launch(rdna, {cdiv(n, 256)}, {.num_warps = 1, .waves_per_eu = 16}, rx, ry, rz, rsum, rdiff, n, 256);
  CHECK_THROWS_WITH_AS(kernel.launch(rdna, {1}, {.num_warps = 1, .waves_per_eu = 17}, rx, ry, rz, rsum, rdiff, n, 256),
                       doctest::Contains("or 1 to 16, the wave slots of a SIMD on gfx1100; got 17"), Error);
}
