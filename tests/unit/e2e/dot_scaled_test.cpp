// dot_scaled (Triton's tl.dot_scaled): MX operands (e2m1 packed two a byte,
// e4m3, e5m2, bf16, fp16) with e8m0 scales per 32 of K, against a float64
// reference that decodes every format from its definition here (OCP MX v1.0
// and OCP 8-bit floats), on gfx942, gfx950 and gfx1100, at odd M and N with
// poisoned outputs.
#include "e2e_common.hpp"
#include "lds_waits.hpp"

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/lowering/target.hpp"

#include "../../../bench/matmul_forms.hpp" // bench::mx_matmul_kernel
#include "../scoped_env.hpp"

#include <cmath>
#include <regex>

using namespace tessel;
using namespace e2e;

namespace {

template <class A, class B>
void scaled_block(Ptr<A> a, Ptr<int8_t> sa, Ptr<B> b, Ptr<int8_t> sb, Ptr<float> c, i32 M, i32 N, Const<int> FA,
                  Const<int> FB, Const<bool> SCALE_A, Const<bool> SCALE_B, Const<int> BM, Const<int> BN,
                  Const<int> K) {
  const MxFormat fa = MxFormat(int(FA)), fb = MxFormat(int(FB));
  const int k = K, ka = fa == MxFormat::e2m1 ? k / 2 : k, kb = fb == MxFormat::e2m1 ? k / 2 : k;
  auto rows = program_id(0) * BM + arange(0, BM);
  auto cols = program_id(1) * BN + arange(0, BN);
  auto inRows = minimum(rows, M - 1), inCols = minimum(cols, N - 1); // loads stay in bounds
  auto groups = arange(0, K / 32);
  auto ta = load(a + expand_dims(inRows, 1) * ka + expand_dims(arange(0, ka), 0));
  auto tb = load(b + expand_dims(arange(0, kb), 1) * N + expand_dims(inCols, 0));
  std::optional<Tile<int8_t>> tsa, tsb;
  if (SCALE_A)
    tsa = load(sa + expand_dims(inRows, 1) * (K / 32) + expand_dims(groups, 0));
  if (SCALE_B)
    tsb = load(sb + expand_dims(inCols, 1) * (K / 32) + expand_dims(groups, 0));
  auto acc = full<float>({BM, BN}, 0.25f);
  acc = dot_scaled(ta, tsa, fa, tb, tsb, fb, acc);
  store(c + expand_dims(rows, 1) * N + expand_dims(cols, 0), acc,
        expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
}

// Scales of 0 (2^-127) on both sides, as constants: O3 folds the scale
// registers, and a register of zero on both sides would make LLVM select the
// unscaled instruction (as if the scales were 1).
void zero_scales(Ptr<float8_e4m3fn> a, Ptr<float8_e4m3fn> b, Ptr<float> c) {
  auto rows = arange(0, 32), cols = arange(0, 32), k = arange(0, 64);
  auto ta = load(a + expand_dims(rows, 1) * 64 + expand_dims(k, 0));
  auto tb = load(b + expand_dims(k, 1) * 32 + expand_dims(cols, 0));
  auto zero = full<int8_t>({32, 2}, int8_t(0));
  auto acc = full<float>({32, 32}, 0.25f);
  acc = dot_scaled(ta, zero, MxFormat::e4m3, tb, zero, MxFormat::e4m3, acc);
  store(c + expand_dims(rows, 1) * 32 + expand_dims(cols, 0), acc);
}

// [32, 64] x [64, 32] e4m3 with scales, from zero.
void scaled_from_zero(Ptr<float8_e4m3fn> a, Ptr<int8_t> sa, Ptr<float8_e4m3fn> b, Ptr<int8_t> sb, Ptr<float> c) {
  auto rows = arange(0, 32), cols = arange(0, 32), k = arange(0, 64), groups = arange(0, 2);
  auto ta = load(a + expand_dims(rows, 1) * 64 + expand_dims(k, 0));
  auto tb = load(b + expand_dims(k, 1) * 32 + expand_dims(cols, 0));
  Tile<int8_t> tsa = load(sa + expand_dims(rows, 1) * 2 + expand_dims(groups, 0));
  Tile<int8_t> tsb = load(sb + expand_dims(cols, 1) * 2 + expand_dims(groups, 0));
  store(c + expand_dims(rows, 1) * 32 + expand_dims(cols, 0), dot_scaled(ta, tsa, MxFormat::e4m3, tb, tsb, MxFormat::e4m3));
}

// An e2m1 matmul's K loop (packed A [M, K / 2] and B [K / 2, N], both
// scaled), rows and columns wrapped as the comparison bench's kernel, the
// store masked: what the pipeliner stages.
void fp4_loop(Ptr<int8_t> a, Ptr<int8_t> b, Ptr<int8_t> sa, Ptr<int8_t> sb, Ptr<float> c, i32 M, i32 N, i32 K,
              Const<int> BM, Const<int> BN, Const<int> BK) {
  auto rows = program_id(0) * BM + arange(0, BM), cols = program_id(1) * BN + arange(0, BN);
  auto wrappedRows = rows % M, wrappedCols = cols % N;
  auto bytes = arange(0, BK / 2), groups = arange(0, BK / 32);
  auto pa = a + expand_dims(wrappedRows, 1) * (K / 2) + expand_dims(bytes, 0);
  auto pb = b + expand_dims(bytes, 1) * N + expand_dims(wrappedCols, 0);
  auto psa = sa + expand_dims(wrappedRows, 1) * (K / 32) + expand_dims(groups, 0);
  auto psb = sb + expand_dims(wrappedCols, 1) * (K / 32) + expand_dims(groups, 0);
  auto acc = zeros<float>({BM, BN});
  for_range(0, K / BK, [&](i32) {
    Tile<int8_t> ta = load(pa), tb = load(pb), tsa = load(psa), tsb = load(psb);
    acc = dot_scaled(ta, tsa, MxFormat::e2m1, tb, tsb, MxFormat::e2m1, acc);
    pa += BK / 2;
    pb += (BK / 2) * N;
    psa += BK / 32;
    psb += BK / 32;
  });
  store(c + expand_dims(rows, 1) * N + expand_dims(cols, 0), acc, expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
}

// Decoders from the formats' definitions.
double e2m1(unsigned nibble) {
  const unsigned e = (nibble >> 1) & 3, m = nibble & 1;
  const double v = e == 0 ? 0.5 * m : std::ldexp(1.0 + 0.5 * m, int(e) - 1);
  return nibble & 8 ? -v : v;
}
double ocp8(unsigned code, int exponentBits, int mantissaBits, int bias) {
  const unsigned e = (code >> mantissaBits) & ((1u << exponentBits) - 1), m = code & ((1u << mantissaBits) - 1);
  const double v = e == 0 ? std::ldexp(double(m), 1 - bias - mantissaBits)
                          : std::ldexp(double((1u << mantissaBits) + m), int(e) - bias - mantissaBits);
  return code & 0x80 ? -v : v;
}
double e8m0(int8_t byte) {
  const int s = uint8_t(byte);
  return s == 255 ? std::nan("") : std::ldexp(1.0, s - 127);
}

// An operand of `rows` x K along K (packed for e2m1) as its element type,
// and its values as doubles [rows][K].
template <class E> struct Operand {
  std::vector<E> stored;
  std::vector<double> values;
};
// The float64 product of a [M, K] and bt [N, K] (b transposed), both
// scaled per 32 of K: each result and the sum of its terms' magnitudes.
struct ScaledProduct {
  std::vector<double> want, magnitude;
};
template <class A, class B>
ScaledProduct scaledProduct(const Operand<A> &a, const std::vector<int8_t> &sa, const Operand<B> &bt,
                            const std::vector<int8_t> &sb, int M, int N, int K);

template <class E> Operand<E> randomOperand(MxFormat f, int rows, int k) {
  Operand<E> out;
  std::uniform_int_distribution<unsigned> byte(0, 255);
  std::uniform_real_distribution<float> real(-2.f, 2.f);
  out.values.resize(size_t(rows) * k);
  if constexpr (std::is_same_v<E, int8_t>) {
    for (int r = 0; r < rows; ++r)
      for (int i = 0; i < k / 2; ++i) {
        const unsigned b = byte(rng());
        out.stored.push_back(int8_t(b));
        out.values[size_t(r) * k + 2 * i] = e2m1(b & 15); // the first in the low nibble
        out.values[size_t(r) * k + 2 * i + 1] = e2m1(b >> 4);
      }
  } else {
    for (size_t i = 0; i < out.values.size(); ++i) {
      E e{};
      if constexpr (std::is_same_v<E, float8_e4m3fn> || std::is_same_v<E, float8_e5m2>) {
        const bool e4m3 = std::is_same_v<E, float8_e4m3fn>;
        unsigned code;
        do code = byte(rng()); // no NaN (E4M3: S.1111.111) or infinity/NaN (E5M2: S.11111.xx)
        while (e4m3 ? (code & 0x7F) == 0x7F : (code & 0x7C) == 0x7C);
        e.bits = int8_t(code);
        out.values[i] = e4m3 ? ocp8(code, 4, 3, 7) : ocp8(code, 5, 2, 15);
      } else {
        e = E(real(rng()));
        out.values[i] = double(float(e));
      }
      out.stored.push_back(e);
    }
  }
  (void)f;
  return out;
}
std::vector<int8_t> randomScales(size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> s(n);
  for (int8_t &x : s) x = int8_t(uint8_t(d(rng())));
  return s;
}

// What the launch compiled: the tile IR after layouts and the kernel module
// (and, when asked, the device's assembly: compiled again for the target).
template <class A, class B>
ScaledProduct scaledProduct(const Operand<A> &a, const std::vector<int8_t> &sa, const Operand<B> &bt,
                            const std::vector<int8_t> &sb, int M, int N, int K) {
  ScaledProduct out{std::vector<double>(size_t(M) * N), std::vector<double>(size_t(M) * N)};
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) {
        const double p = a.values[size_t(m) * K + k] * e8m0(sa[size_t(m) * K / 32 + k / 32]) *
                         bt.values[size_t(n) * K + k] * e8m0(sb[size_t(n) * K / 32 + k / 32]);
        out.want[size_t(m) * N + n] += p;
        out.magnitude[size_t(m) * N + n] += std::fabs(p);
      }
  return out;
}

struct Compiled {
  std::string tileIR, llvmIR, assembly;
};

template <class A, class B>
Compiled check(const char *arch, MxFormat fa, MxFormat fb, bool scaleA, bool scaleB, int M, int N, int K, int lo,
               int hi, int block = 32, int warps = 4, bool assembly = false) {
  const std::string target = arch;
  CAPTURE(target);
  CAPTURE(detail::mxFormatName(fa));
  CAPTURE(detail::mxFormatName(fb));
  CAPTURE(scaleA);
  CAPTURE(scaleB);
  Device dev = Device::emulator(arch);
  // a is [M, K] (rows along K); b is [K, N], made as [N, K] rows along K and
  // laid out K-major for the kernel.
  Operand<A> a = randomOperand<A>(fa, M, K);
  Operand<B> bt = randomOperand<B>(fb, N, K);
  const int kb = fb == MxFormat::e2m1 ? K / 2 : K;
  std::vector<B> bStored(size_t(kb) * N);
  for (int n = 0; n < N; ++n)
    for (int i = 0; i < kb; ++i) bStored[size_t(i) * N + n] = bt.stored[size_t(n) * kb + i];
  std::vector<int8_t> sa = randomScales(size_t(M) * K / 32, lo, hi), sb = randomScales(size_t(N) * K / 32, lo, hi);
  const int nanRow = M / 2;
  if (scaleA) sa[size_t(nanRow) * K / 32 + K / 32 - 1] = int8_t(uint8_t(255)); // NaN: row nanRow is NaN
  // NaN in B's first group (B goes through trans): column nanCol is NaN.
  const int nanCol = N / 3;
  if (scaleB) sb[size_t(nanCol) * K / 32] = int8_t(uint8_t(255));
  std::vector<double> want(size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double sum = 0.25;
      for (int k = 0; k < K; ++k)
        sum += a.values[size_t(m) * K + k] * (scaleA ? e8m0(sa[size_t(m) * K / 32 + k / 32]) : 1.0) *
               bt.values[size_t(n) * K + k] * (scaleB ? e8m0(sb[size_t(n) * K / 32 + k / 32]) : 1.0);
      want[size_t(m) * N + n] = sum;
    }
  auto da = dev.upload(a.stored);
  auto db = dev.upload(bStored);
  auto dsa = dev.upload(sa), dsb = dev.upload(sb);
  auto dc = dev.upload(std::vector<float>(size_t(M) * N, -12345.f)); // poison
  const int BM = block, BN = block;
  auto kernel = jit<scaled_block<A, B>>();
  kernel.launch(dev, {cdiv(M, BM), cdiv(N, BN)}, {.num_warps = unsigned(warps)}, da, dsa, db, dsb, dc, M, N, int(fa),
                int(fb), scaleA, scaleB, BM, BN, K);
  const CompiledKernel *compiled = kernel.runtime()->lastKernel();
  std::vector<float> got = dc.download();
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      wrong += !std::isnan(got[i]);
      continue;
    }
    // Every product is exact; only f32 accumulation rounds.
    double magnitude = 0.25;
    const int m = int(i) / N, n = int(i) % N;
    for (int k = 0; k < K; ++k)
      magnitude += std::fabs(a.values[size_t(m) * K + k] * (scaleA ? e8m0(sa[size_t(m) * K / 32 + k / 32]) : 1.0) *
                             bt.values[size_t(n) * K + k] * (scaleB ? e8m0(sb[size_t(n) * K / 32 + k / 32]) : 1.0));
    if (!(std::fabs(got[i] - want[i]) <= 1e-6 * magnitude + 1e-30)) {
      if (wrong < 3) MESSAGE("c[", m, "][", n, "] = ", got[i], ", want ", want[i]);
      ++wrong;
    }
  }
  CHECK(wrong == 0);
  if (scaleA) CHECK(std::isnan(got[size_t(nanRow) * N]));
  if (scaleB) CHECK(std::isnan(got[size_t(nanCol)]));
  Compiled out{compiled->tileIR, compiled->llvmIR(), ""};
  if (assembly) {
    detail::TraceRequest request =
        kernel.trace(da, dsa, db, dsb, dc, M, N, int(fa), int(fb), scaleA, scaleB, BM, BN, K);
    out.assembly = compileTrace(request.trace, request.spec, {arch, unsigned(warps)}).assembly();
  }
  return out;
}

} // namespace

// Up to 8 scale groups along K (a matmul's K step): A's spread by selects in
// the operand's layout, B's gathered from its decoded scales; more go
// through a reshape: both against float64. (On gfx942: gfx950 runs these
// formats on its scaled MFMAs, no decomposition.)
TEST_CASE("dot_scaled matches float64 with 1, 8 and 16 scale groups along K") {
  Compiled reshaped =
      check<float8_e4m3fn, float8_e5m2>("gfx942", MxFormat::e4m3, MxFormat::e5m2, true, true, 21, 35, 512, 115, 135, 16);
  CHECK(contains(reshaped.tileIR, "tessel.reshape"));
  check<float8_e4m3fn, float8_e5m2>("gfx950", MxFormat::e4m3, MxFormat::e5m2, true, true, 21, 35, 512, 115, 135);
  // 8 groups (K = 256), the most A spreads by selects; 1 group (K = 32) with both scaled.
  check<float8_e4m3fn, float8_e4m3fn>("gfx942", MxFormat::e4m3, MxFormat::e4m3, true, true, 19, 27, 256, 118, 134);
  check<float8_e5m2, float8_e4m3fn>("gfx950", MxFormat::e5m2, MxFormat::e4m3, true, true, 23, 17, 32, 110, 140);
}

// 128 x 128 blocks with K 128 (four scale groups): what Triton's scaled
// matmuls use. The scales spread by reshape took 67584 bytes of LDS on
// gfx942 (64 KiB): an error at launch. A's spread by selects need no LDS,
// B's gather one trip of its [K / 32, N] decoded scales.
TEST_CASE("dot_scaled on 128 x 128 blocks with K 128 fits gfx942's LDS and matches float64") {
  check<float8_e4m3fn, float8_e4m3fn>("gfx942", MxFormat::e4m3, MxFormat::e4m3, true, true, 131, 129, 128, 110,
                                      140, 128);
}

TEST_CASE("dot_scaled matches float64: e2m1, e4m3, e5m2, bf16 and fp16 operands, scaled or not, every target") {
  for (const char *arch : {"gfx942", "gfx950", "gfx1100"}) {
    check<int8_t, int8_t>(arch, MxFormat::e2m1, MxFormat::e2m1, true, true, 45, 37, 64, 110, 140);
    check<float8_e4m3fn, float8_e5m2>(arch, MxFormat::e4m3, MxFormat::e5m2, true, true, 33, 50, 128, 100, 150);
    check<float8_e5m2, int8_t>(arch, MxFormat::e5m2, MxFormat::e2m1, true, false, 19, 64, 64, 0, 160);
    check<bfloat16, float8_e4m3fn>(arch, MxFormat::bf16, MxFormat::e4m3, false, true, 40, 21, 32, 120, 134);
    // fp16 computes in fp16: scales that keep every product in its range.
    check<half, int8_t>(arch, MxFormat::fp16, MxFormat::e2m1, true, true, 31, 33, 64, 122, 130);
  }
}

namespace {
void wrong_format(Ptr<float8_e4m3fn> a, Ptr<float8_e4m3fn> b, Ptr<float> c) {
  auto i = arange(0, 32);
  auto t = load(a + expand_dims(i, 1) * 32 + expand_dims(i, 0));
  auto u = load(b + expand_dims(i, 1) * 32 + expand_dims(i, 0));
  auto r = dot_scaled(t, std::nullopt, MxFormat::e5m2, u, std::nullopt, MxFormat::e4m3);
  store(c + expand_dims(i, 1) * 32 + expand_dims(i, 0), r);
}
void short_k(Ptr<int8_t> a, Ptr<int8_t> b, Ptr<float> c) {
  auto i = arange(0, 32), h = arange(0, 8);
  auto t = load(a + expand_dims(i, 1) * 8 + expand_dims(h, 0)); // [32, 8]: K = 16
  auto u = load(b + expand_dims(h, 1) * 32 + expand_dims(i, 0)); // [8, 32]
  auto r = dot_scaled(t, std::nullopt, MxFormat::e2m1, u, std::nullopt, MxFormat::e2m1);
  store(c + expand_dims(i, 1) * 32 + expand_dims(i, 0), r);
}
void wrong_scale(Ptr<float8_e4m3fn> a, Ptr<int8_t> s, Ptr<float> c) {
  auto i = arange(0, 32);
  auto t = load(a + expand_dims(i, 1) * 32 + expand_dims(i, 0));
  Tile<int8_t> scale = load(s + expand_dims(i, 1) + expand_dims(arange(0, 2), 0)); // [32, 2], not [32, 1]
  auto r = dot_scaled(t, scale, MxFormat::e4m3, t, std::nullopt, MxFormat::e4m3);
  store(c + expand_dims(i, 1) * 32 + expand_dims(i, 0), r);
}
void one_d(Ptr<float8_e4m3fn> a, Ptr<float> c) {
  auto i = arange(0, 32);
  auto t = load(a + i); // [32]
  auto r = dot_scaled(t, std::nullopt, MxFormat::e4m3, t, std::nullopt, MxFormat::e4m3);
  store(c + i, sum(r, 0));
}
void k_mismatch(Ptr<float8_e4m3fn> a, Ptr<float> c) {
  auto i = arange(0, 32), h = arange(0, 64);
  auto t = load(a + expand_dims(i, 1) * 32 + expand_dims(i, 0));  // [32, 32]: K = 32
  auto u = load(a + expand_dims(h, 1) * 32 + expand_dims(i, 0));  // [64, 32]: K = 64
  auto r = dot_scaled(t, std::nullopt, MxFormat::e4m3, u, std::nullopt, MxFormat::e4m3);
  store(c + expand_dims(i, 1) * 32 + expand_dims(i, 0), r);
}
void acc_shape(Ptr<float8_e4m3fn> a, Ptr<float> c) {
  auto i = arange(0, 32), h = arange(0, 16);
  auto t = load(a + expand_dims(i, 1) * 32 + expand_dims(i, 0));
  Tile<float> acc = load(c + expand_dims(h, 1) * 32 + expand_dims(i, 0)); // [16, 32]
  auto r = dot_scaled(t, std::nullopt, MxFormat::e4m3, t, std::nullopt, MxFormat::e4m3, acc);
  store(c + expand_dims(h, 1) * 32 + expand_dims(i, 0), r);
}
} // namespace

TEST_CASE("dot_scaled's errors name the problem and the line") {
  Device dev = Device::emulator("gfx950");
  auto f8 = dev.alloc<float8_e4m3fn>(32 * 32);
  auto bytes = dev.alloc<int8_t>(32 * 32);
  auto c = dev.alloc<float>(32 * 32);
  CHECK_THROWS_WITH_AS(jit<wrong_format>().launch(dev, {1}, {}, f8, f8, c),
                       doctest::Contains("dot_scaled: a_format e5m2 does not name a's element type float8_e4m3fn "
                                         "(e2m1: int8_t, e4m3: float8_e4m3fn"),
                       Error);
  CHECK_THROWS_WITH_AS(jit<short_k>().launch(dev, {1}, {}, bytes, bytes, c),
                       doctest::Contains("dot_scaled: K = 16 is not a multiple of 32, the e8m0 scales' group"), Error);
  CHECK_THROWS_WITH_AS(jit<wrong_scale>().launch(dev, {1}, {}, f8, bytes, c),
                       doctest::Contains("dot_scaled: a_scale is [32, 2], not [32, 1] (one e8m0 scale per 32 of K)"),
                       Error);
  CHECK_THROWS_WITH_AS(jit<wrong_scale>().launch(dev, {1}, {}, f8, bytes, c),
                       doctest::Contains("dot_scaled_test.cpp:"), Error);
  CHECK_THROWS_WITH_AS(jit<one_d>().launch(dev, {1}, {}, f8, c),
                       doctest::Contains("dot_scaled: a and b must be 2-D, not [32] and [32]"), Error);
  CHECK_THROWS_WITH_AS(jit<k_mismatch>().launch(dev, {1}, {}, f8, c),
                       doctest::Contains("dot_scaled: a [32, 32] (e4m3) holds K = 32 and b [64, 32] (e4m3) K = 64"),
                       Error);
  CHECK_THROWS_WITH_AS(jit<acc_shape>().launch(dev, {1}, {}, f8, c),
                       doctest::Contains("dot_scaled: acc is [16, 32], not the product's [32, 32]"), Error);
}

// gfx950's scaled MFMAs take e4m3 and e5m2 with their scales as operands
// (tessel-legalize-dots keeps tessel.dot_scaled's native form: a tessel.dot
// with scales); the emulator runs V_MFMA_SCALE_* from AMD's description,
// written apart from the compiler's scale layouts, so a lane mapping the
// two disagree on fails here. Odd M and N, several blocks, poisoned output.
TEST_CASE("dot_scaled on gfx950 runs e4m3 and e5m2 on the scaled MFMAs, scales as operands, and matches float64") {
  auto native = [](const Compiled &c) {
    CHECK(contains(c.tileIR, "tessel.dot"));
    CHECK(contains(c.tileIR, " scales "));
    CHECK(!contains(c.tileIR, "tessel.dot_scaled"));
    CHECK(!contains(c.tileIR, "bf16")); // the decomposition is gone
    CHECK(contains(c.llvmIR, "llvm.amdgcn.mfma.scale.f32."));
  };
  // 32x32x64: one tile a wave (32 x 32 block), 2 x 2 tiles a wave (128 x 128 over 4 waves).
  native(check<float8_e4m3fn, float8_e5m2>("gfx950", MxFormat::e4m3, MxFormat::e5m2, true, true, 37, 45, 256, 112,
                                           140));
  native(check<float8_e5m2, float8_e4m3fn>("gfx950", MxFormat::e5m2, MxFormat::e4m3, true, true, 131, 133, 128, 115,
                                           139, 128));
  // 8 waves, 4 groups a K step.
  native(check<float8_e4m3fn, float8_e4m3fn>("gfx950", MxFormat::e4m3, MxFormat::e4m3, true, true, 129, 77, 128, 118,
                                             136, 128, 8));
  // 16x16x128 (a 16-row block): four K blocks an instruction, from four lane groups.
  native(check<float8_e5m2, float8_e5m2>("gfx950", MxFormat::e5m2, MxFormat::e5m2, true, true, 29, 19, 256, 120, 134,
                                         16));
  // One side scaled (the other's scales are 127, 1.0), or neither.
  native(check<float8_e4m3fn, float8_e5m2>("gfx950", MxFormat::e4m3, MxFormat::e5m2, false, true, 33, 41, 128, 100,
                                           150));
  native(check<float8_e4m3fn, float8_e4m3fn>("gfx950", MxFormat::e4m3, MxFormat::e4m3, true, false, 33, 41, 64, 100,
                                             150, 64));
  Compiled none =
      check<float8_e5m2, float8_e4m3fn>("gfx950", MxFormat::e5m2, MxFormat::e4m3, false, false, 21, 50, 128, 0, 0);
  CHECK(contains(none.llvmIR, "llvm.amdgcn.mfma.scale.f32."));
  CHECK(!contains(none.tileIR, " scales "));
}

// e2m1 on gfx950's scaled MFMAs (format 4: 32 nibbles a lane in 4 VGPRs,
// consecutive K), alone and beside e4m3 / e5m2, scaled on both sides, one or
// none; the emulator places FP4 from AMD's guide, apart from the compiler's
// byte layouts, so a K order the two disagree on fails here.
TEST_CASE("dot_scaled on gfx950 runs e2m1 on the scaled MFMAs, alone and beside e4m3/e5m2, and matches float64") {
  auto native = [](const Compiled &c, const char *mangled) {
    CHECK(contains(c.tileIR, "e2m1"));
    CHECK(!contains(c.tileIR, "tessel.dot_scaled"));
    CHECK(!contains(c.tileIR, "bf16")); // no upcast
    CHECK(contains(c.llvmIR, mangled));
  };
  // 32x32x64, e2m1 x e2m1: the device's code is the scaled f8f6f4 MFMA on 4
  // VGPRs an operand, no unscaled one and no bf16 MFMA.
  Compiled both = check<int8_t, int8_t>("gfx950", MxFormat::e2m1, MxFormat::e2m1, true, true, 45, 37, 128, 110, 140,
                                        32, 4, true);
  native(both, "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v4i32");
  CHECK(contains(both.assembly, "v_mfma_scale_f32_32x32x64_f8f6f4"));
  CHECK(!contains(both.assembly, "v_mfma_f32_32x32x16_bf16"));
  CHECK(!contains(both.assembly, "v_mfma_f32_32x32x64_f8f6f4"));
  // Mixed: e4m3 A (8 VGPRs) with e2m1 B, e2m1 A with e5m2 B; 2 x 2 tiles a
  // wave over 128 x 128 blocks; one side scaled.
  native(check<float8_e4m3fn, int8_t>("gfx950", MxFormat::e4m3, MxFormat::e2m1, true, true, 131, 77, 128, 112, 140,
                                      128),
         "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4");
  native(check<int8_t, float8_e5m2>("gfx950", MxFormat::e2m1, MxFormat::e5m2, false, true, 33, 41, 256, 100, 150),
         "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4");
  // 16x16x128 (a 16-row block): four lane groups of 32 nibbles.
  native(check<int8_t, int8_t>("gfx950", MxFormat::e2m1, MxFormat::e2m1, true, false, 29, 19, 256, 118, 136, 16),
         "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32");
  // Unscaled: constant zero scales, the unscaled instruction.
  Compiled none = check<int8_t, float8_e4m3fn>("gfx950", MxFormat::e2m1, MxFormat::e4m3, false, false, 21, 50, 64, 0,
                                               0, 32, 4, true);
  native(none, "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4");
  CHECK(!contains(none.tileIR, " scales "));
  CHECK(contains(none.assembly, "v_mfma_f32_32x32x64_f8f6f4"));
}

// The e2m1 K loop pipelined over 2 stages on gfx950 (the packed tiles
// staged in LDS as the 8-bit ones), 3 K steps, odd M and N over 2 x 2
// blocks, against float64.
TEST_CASE("dot_scaled on e2m1 in a pipelined K loop on gfx950 matches float64") {
  const int M = 97, N = 71, K = 384, BM = 64, BN = 64, BK = 128;
  Device dev = Device::emulator("gfx950");
  Operand<int8_t> a = randomOperand<int8_t>(MxFormat::e2m1, M, K), bt = randomOperand<int8_t>(MxFormat::e2m1, N, K);
  std::vector<int8_t> b(size_t(K / 2) * N);
  for (int n = 0; n < N; ++n)
    for (int i = 0; i < K / 2; ++i) b[size_t(i) * N + n] = bt.stored[size_t(n) * (K / 2) + i];
  std::vector<int8_t> sa = randomScales(size_t(M) * K / 32, 118, 136), sb = randomScales(size_t(N) * K / 32, 118, 136);
  auto da = dev.upload(a.stored), db = dev.upload(b), dsa = dev.upload(sa), dsb = dev.upload(sb);
  auto dc = dev.upload(std::vector<float>(size_t(M) * N, -12345.f));
  auto kernel = jit<fp4_loop>();
  kernel.launch(dev, {cdiv(M, BM), cdiv(N, BN)}, {.num_warps = 4, .num_stages = 2}, da, db, dsa, dsb, dc, M, N, K, BM,
                BN, BK);
  const CompiledKernel *compiled = kernel.runtime()->lastKernel();
  CHECK(contains(compiled->tileIR, "e2m1"));
  CHECK(contains(compiled->tileIR, "local_alloc")); // staged in LDS
  CHECK(contains(compiled->llvmIR(), "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v4i32"));
  std::vector<float> got = dc.download();
  const ScaledProduct ref = scaledProduct(a, sa, bt, sb, M, N, K);
  size_t wrong = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      const double want = ref.want[size_t(m) * N + n], magnitude = ref.magnitude[size_t(m) * N + n];
      if (!(std::fabs(got[size_t(m) * N + n] - want) <= 1e-6 * magnitude + 1e-30)) {
        if (wrong < 3) MESSAGE("c[", m, "][", n, "] = ", got[size_t(m) * N + n], ", want ", want);
        ++wrong;
      }
    }
  CHECK(wrong == 0);
}

TEST_CASE("dot_scaled takes its decomposition where the scaled MFMAs do not take it: other targets, formats, blocks") {
  auto composed = [](const Compiled &c) {
    CHECK(!contains(c.tileIR, " scales "));
    CHECK(!contains(c.tileIR, "tessel.dot_scaled"));
    CHECK(contains(c.tileIR, "bf16"));
  };
  // gfx942 (no scaled MFMAs), gfx950 with a bf16 operand, and a K of one
  // group (below the instructions' 64), e2m1 too.
  composed(check<float8_e4m3fn, float8_e5m2>("gfx942", MxFormat::e4m3, MxFormat::e5m2, true, true, 37, 45, 256, 112,
                                             140));
  composed(check<int8_t, float8_e4m3fn>("gfx950", MxFormat::e2m1, MxFormat::e4m3, true, true, 37, 45, 32, 112, 140));
  composed(check<bfloat16, float8_e4m3fn>("gfx950", MxFormat::bf16, MxFormat::e4m3, true, true, 21, 17, 64, 120, 134));
  composed(check<float8_e4m3fn, float8_e4m3fn>("gfx950", MxFormat::e4m3, MxFormat::e4m3, true, true, 21, 17, 32, 120,
                                               134));
}

// The comparison bench's tl.dot_scaled matmul (bench::mx_matmul_kernel: a
// pipelined K loop, A's scales staged in LDS with the operands, B's
// prefetched through their transpose) on gfx950's scaled MFMAs and on
// gfx942's decomposition, against float64: 4 x 4 K steps, 2 x 2 blocks; and
// 160 x 144 x 192, whose `% M` and `% N` wrap inside the second blocks (runs
// of 16 still: B, given assume(pid_n >= 0), loads 16 bytes a lane). Its
// mxfp4 form (E = int8_t: e2m1 packed along K, BLOCK_K 128) on gfx950 at
// 160 x 144 x 256.
namespace {
template <class E> void checkBenchMxMatmul(const char *arch, int M, int N, int K, unsigned warps = 4) {
  constexpr bool fp4 = std::is_same_v<E, int8_t>;
  constexpr MxFormat format = fp4 ? MxFormat::e2m1 : MxFormat::e4m3;
  constexpr int pack = fp4 ? 2 : 1, BK = fp4 ? 128 : 64;
  CAPTURE(arch);
  CAPTURE(fp4);
  CAPTURE(warps);
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  Device dev = Device::emulator(arch);
  Operand<E> a = randomOperand<E>(format, M, K);
  Operand<E> bt = randomOperand<E>(format, N, K);
  std::vector<E> b(size_t(K / pack) * N);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K / pack; ++k) b[size_t(k) * N + n] = bt.stored[size_t(n) * (K / pack) + k];
  // Scales 2^-17 .. 2^-7: every sum stays in f16 (C is f16).
  std::vector<int8_t> sa = randomScales(size_t(M) * K / 32, 110, 120), sb = randomScales(size_t(N) * K / 32, 110, 120);
  auto da = dev.upload(a.stored), db = dev.upload(b);
  auto dsa = dev.upload(sa), dsb = dev.upload(sb);
  auto dc = dev.upload(std::vector<half>(size_t(M) * N, half(-12345.f)));
  auto kernel = jit(&bench::mx_matmul_kernel<E>, "mx_matmul_kernel");
  kernel.launch(dev, {cdiv(M, 128) * cdiv(N, 128)}, {.num_warps = warps, .num_stages = 2}, da, db, dc, dsa, dsb, M, N,
                K, K / pack, 1, N, 1, N, 1, K / 32, 1, K / 32, 1, 128, 128, BK, 8);
  const CompiledKernel *compiled = kernel.runtime()->lastKernel();
  if (std::string(arch) == "gfx950") {
    CHECK(contains(compiled->llvmIR(), fp4 ? "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v4i32.v4i32"
                                           : "llvm.amdgcn.mfma.scale.f32.32x32x64"));
    // A and B straight into LDS, the scales through registers beside them.
    CHECK(contains(compiled->tileIR, "tessel.buffer_load_to_local"));
    CHECK(ldsLoadHazards(compiled->assembly()) == "");
  } else // B is scaled as loaded, along K: no transpose of the 8-bit tile
    CHECK(!std::regex_search(compiled->tileIR, std::regex(R"(tessel\.permute [^\n]*xf8E4M3FN)")));
  // B [BK / pack, 128] along N, 16 bytes a lane: what the assume buys (gfx950:
  // straight into LDS).
  CHECK(std::regex_search(compiled->tileIR,
                          std::regex(R"(buffer_load(_to_local)? [^\n]*vec = 16 [^\n]*tensor<64x128xi32)")));
  std::vector<half> got = dc.download();
  const ScaledProduct ref = scaledProduct(a, sa, bt, sb, M, N, K);
  size_t wrong = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      const double want = ref.want[size_t(m) * N + n], magnitude = ref.magnitude[size_t(m) * N + n];
      // f32 sums, then f16: half an f16 ulp of the result plus the sums' rounding.
      const double g = double(float(got[size_t(m) * N + n]));
      if (!(std::fabs(g - want) <= std::fabs(want) * 0x1p-10 + magnitude * 1e-6 + 1e-6)) {
        if (wrong < 3) MESSAGE("c[", m, "][", n, "] = ", g, ", want ", want);
        ++wrong;
      }
    }
  CHECK(wrong == 0);
}

// The comparison bench's kernel (E4M3) compiled on `dev` for `warps` at the
// bench's problem (M = N = K = 4096, 128 x 128 x 64 blocks), not run.
const CompiledKernel &compileBenchMx(Device &dev, unsigned warps) {
  static auto kernel = jit(&bench::mx_matmul_kernel<float8_e4m3fn>, "mx_matmul_kernel");
  const int n = 4096;
  auto a = dev.alloc<float8_e4m3fn>(64), b = dev.alloc<float8_e4m3fn>(64);
  auto c = dev.alloc<half>(64);
  auto as = dev.alloc<int8_t>(64), bs = dev.alloc<int8_t>(64);
  return kernel.warmup(dev, {.num_warps = warps, .num_stages = 2, .fp_fusion = true}, a, b, c, as, bs, n, n, n, n, 1,
                       n, 1, n, 1, n / 32, 1, n / 32, 1, 128, 128, 64, 8);
}
} // namespace

TEST_CASE("dot_scaled in a pipelined matmul loop (the comparison bench's kernel) matches float64 on gfx950 and gfx942") {
  struct Size {
    int M, N, K;
  };
  for (auto [M, N, K] : {Size{256, 256, 256}, Size{160, 144, 192}})
    for (const char *arch : {"gfx950", "gfx942"})
      checkBenchMxMatmul<float8_e4m3fn>(arch, M, N, K);
  checkBenchMxMatmul<int8_t>("gfx950", 160, 144, 256);
}

TEST_CASE("dot_scaled with constant scales of 0 on gfx950 stays the scaled MFMA: products of 2^-254 leave acc") {
  auto kernel = jit<zero_scales>();
  Device dev = Device::emulator("gfx950");
  auto a = dev.upload(std::vector<float8_e4m3fn>(32 * 64, float8_e4m3fn(1.0f)));
  auto b = dev.upload(std::vector<float8_e4m3fn>(64 * 32, float8_e4m3fn(1.0f)));
  auto c = dev.upload(std::vector<float>(32 * 32, std::nanf("")));
  kernel.launch(dev, {1, 1}, {.num_warps = 1}, a, b, c);
  for (float v : c.download())
    REQUIRE(v == 0.25f);
  // The device's code: the scaled instruction, not the unscaled one LLVM
  // selects for scale registers of zero.
  detail::TraceRequest request = kernel.trace(a, b, c);
  CompiledKernel k = compileTrace(request.trace, request.spec, {"gfx950", 1});
  CHECK(contains(k.assembly(), "v_mfma_scale_f32_32x32x64_f8f6f4"));
  CHECK(!contains(k.assembly(), "v_mfma_f32_32x32x64_f8f6f4"));
}

// The decomposition truncates each scaled operand to bf16 (Triton's AMD
// upcast does; tessel-legalize-dots): equal to rounding unless the product
// is below f32's normal range. a[0][0] = 1.875 * 2^-6 times its scale 2^-127
// is 1.875 * 2^-133, a bf16 subnormal step (2^-133) and 7/8 of one:
// truncated 2^-133, rounded 2^-132; times b = 2^100, C is 2^-33 on gfx942
// (2^-32 if rounded), and on gfx950's scaled MFMA, exact, 1.875 * 2^-33.
TEST_CASE("dot_scaled's decomposition truncates to bf16 (as Triton's upcast): a product below 2^-126 loses its low bits") {
  auto kernel = jit<scaled_from_zero>();
  std::vector<float8_e4m3fn> a(32 * 64, float8_e4m3fn(0.0f)), b(64 * 32, float8_e4m3fn(1.0f));
  a[0] = float8_e4m3fn(0x1.ep-6f);
  REQUIRE(float(a[0]) == 0x1.ep-6f);
  std::vector<int8_t> sa(32 * 2, int8_t(127)), sb(32 * 2, int8_t(-29)); // 2^0; 227: 2^100
  sa[0] = 0;                                                             // 2^-127
  for (auto [arch, want] : {std::pair{std::string("gfx942"), 0x1p-33f}, std::pair{std::string("gfx950"), 0x1.ep-33f}}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    auto da = dev.upload(a), db = dev.upload(b);
    auto dsa = dev.upload(sa), dsb = dev.upload(sb);
    auto c = dev.upload(std::vector<float>(32 * 32, std::nanf("")));
    kernel.launch(dev, {1}, {.num_warps = 1}, da, dsa, db, dsb, c);
    std::vector<float> got = c.download();
    for (int m = 0; m < 32; ++m)
      for (int n = 0; n < 32; ++n) {
        CAPTURE(m);
        CAPTURE(n);
        REQUIRE(got[size_t(m) * 32 + n] == (m == 0 ? want : 0.0f));
      }
  }
}

// gfx942's decomposition of the comparison bench's kernel over 8 waves at
// Triton's occupancy, 4 waves a SIMD (124 VGPRs): B, loaded 16 bytes along
// N (assume(pid_n >= 0)), gathers each element's scale through LDS; spread
// by a select per group, every group's 16 columns a thread stayed live (143
// VGPRs, 2 waves).
TEST_CASE("dot_scaled's gfx942 decomposition of the comparison bench's kernel over 8 waves runs 4 waves a SIMD") {
  Device dev = Device::emulator("gfx942");
  const CompiledKernel &k = compileBenchMx(dev, 8);
  const KernelResources r = kernelResources(k.hsaco, k.name);
  CAPTURE(r.vgprs);
  CHECK(occupancyOf(requireTarget(k.arch), r, k.blockSize, k.ldsBytes).wavesPerSimd == 4);
  CHECK(r.vgprSpills + r.sgprSpills == 0);
  CHECK(r.privateSegmentBytes == 0);
}

// The scales' byte pairs (2 bytes a lane, loaded behind the pipeliner's
// branch) cross it as one i16 (carryBytePairsAsWords): as a <2 x i8> phi the
// backend split them, shifting the high byte out right after the load (a
// wait for it at once) and merging it back before the ds_write_b16 (12
// 16-bit shifts and merges a kernel; 4 waves 164 -> 142 llvm-mca cycles).
TEST_CASE("the comparison bench's kernel on gfx950 carries its scale pairs whole from their loads to LDS and packs "
          "them for the MFMAs") {
  Device dev = Device::emulator("gfx950");
  for (unsigned warps : {4u, 8u}) {
    CAPTURE(warps);
    const CompiledKernel &k = compileBenchMx(dev, warps);
    const std::string assembly = k.assembly();
    CHECK(contains(assembly, "ds_write_b16"));
    CHECK(!contains(assembly, "v_lshrrev_b16"));
    CHECK(!contains(assembly, "v_lshlrev_b16"));
    CHECK(!contains(assembly, "v_bitop3_b16"));
    // The loaded scale bytes of a side share a register, told apart by the
    // instruction's byte selects (4 waves: 2 bytes of A's, 2 of B's; 8 waves:
    // 2 of one side's); no register a byte with 0x7f00 or-ed in.
    CHECK(contains(assembly, warps == 4 ? "op_sel:[1,1,0]" : "op_sel:[1,0,0]"));
    CHECK(!contains(assembly, "0x7f00"));
  }
}

// gfx950's loads straight into LDS for the comparison bench's kernel (issue
// 36): A and B go from global memory into two slots each, the scales (2
// bytes a lane, too few for a load to LDS) through registers into two slots
// of their own, loaded before A's and B's loads (in the branch on whether
// the next iteration runs) and stored at the iteration's end, no barrier
// after them. Through registers at 4 warps the kernel took 138 VGPRs, 3
// waves a SIMD against Triton's 4; its 8-bit B held 2 rows of K a thread,
// which kept a wave's loads off consecutive chunks of B's slot.
TEST_CASE("the comparison bench's kernel on gfx950 loads A and B straight into LDS beside its register-staged "
          "scales, 4 waves a SIMD at 4 and 8 warps") {
  Device dev = Device::emulator("gfx950");
  for (unsigned warps : {4u, 8u}) {
    CAPTURE(warps);
    const CompiledKernel &k = compileBenchMx(dev, warps);
    const KernelResources r = kernelResources(k.hsaco, k.name);
    CAPTURE(r.vgprs);
    CHECK(occupancyOf(requireTarget(k.arch), r, k.blockSize, k.ldsBytes).wavesPerSimd >= 4);
    CHECK(r.vgprSpills + r.sgprSpills == 0);
    const std::string loop = bench::mainLoop(k.assembly());
    REQUIRE(!loop.empty());
    CAPTURE(loop);
    const bench::LoopMakeUp made = bench::loopMakeUp(loop);
    // 128x64 and 64x128 bytes over 64 * warps lanes, 16 bytes a load.
    CHECK(bench::countMatches(loop, R"(\bbuffer_load_dwordx4\b[^\n]*\blds\b)") == 16u / warps);
    CHECK(ldsLoadHazards(k.assembly()) == "");
    CHECK(made.barriers == 1u);
    CHECK(made.execBranches == 0u);
    CHECK(made.ldsWrites >= 1u);
    // The scales' stores wait for the scale loads only: they were issued
    // before the loads to LDS and touch no byte those write (alias scopes).
    CHECK(bench::countMatches(loop, R"(s_waitcnt vmcnt\(0\)[^\n]*\n(\s*[^\n]*\n)?\s*ds_write)") == 0u);
  }
}

// The same kernel's loads to LDS and register-staged scales under the race
// sanitizer, at odd sizes against float64: the scales stored at an
// iteration's end into the slot the other waves finished reading before its
// barrier, read after the next one.
// Under the race sanitizer, A and B straight into LDS beside the
// register-staged scales: 3 K steps at 4 and 8 waves; one K step (K = BK:
// the loop's only iteration prefetches nothing, the prologue's tiles are the
// ones read) at an odd M; the mxfp4 form at 8 waves, one K step.
TEST_CASE("the comparison bench's kernel on gfx950 with loads to LDS has no LDS race and matches float64") {
  testing::ScopedEnv races("TESSEL_SANITIZE", "races");
  for (unsigned warps : {4u, 8u})
    checkBenchMxMatmul<float8_e4m3fn>("gfx950", 160, 144, 192, warps);
  checkBenchMxMatmul<float8_e4m3fn>("gfx950", 97, 144, 64, 4);
  checkBenchMxMatmul<int8_t>("gfx950", 160, 144, 128, 8);
}
