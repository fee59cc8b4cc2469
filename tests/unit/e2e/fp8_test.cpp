// 8-bit floats end to end: loads, stores and casts to and from f32, f16 and
// bf16 on gfx942 (hardware conversions for FNUZ, integer lowering for OCP),
// gfx950 (the other way round) and gfx1100 (integer lowering, wave32),
// against a host reference written here: decode from each format's
// definition, encode by searching all codes for the nearest value (ties to
// the even code), overflow as the format defines it or saturated.
#include "e2e_common.hpp"
#include <bit>

using namespace tessel;
using namespace e2e;

namespace {

struct Format {
  int exponentBits, mantissaBits, bias;
  bool fnuz;    // one NaN (0x80), no -0, no infinity
  bool ocpE4M3; // S.1111.111 is NaN, no infinity
};
template <class F> constexpr Format formatOf() {
  if constexpr (std::is_same_v<F, float8_e4m3fn>) return {4, 3, 7, false, true};
  else if constexpr (std::is_same_v<F, float8_e5m2>) return {5, 2, 15, false, false};
  else if constexpr (std::is_same_v<F, float8_e4m3fnuz>) return {4, 3, 8, true, false};
  else return {5, 2, 16, true, false};
}

// NaN, or the value (a double; infinities included).
struct Meaning {
  bool nan = false;
  double value = 0;
  bool operator==(const Meaning &o) const {
    return nan == o.nan && (nan || (value == o.value && std::signbit(value) == std::signbit(o.value)));
  }
};

Meaning decodeReference(const Format &f, unsigned code) {
  const bool negative = code & 0x80;
  const unsigned e = (code >> f.mantissaBits) & ((1u << f.exponentBits) - 1), m = code & ((1u << f.mantissaBits) - 1);
  const unsigned top = (1u << f.exponentBits) - 1;
  if ((f.fnuz && code == 0x80) || (f.ocpE4M3 && e == top && m == (1u << f.mantissaBits) - 1)) return {true};
  if (!f.fnuz && !f.ocpE4M3 && e == top) return m ? Meaning{true} : Meaning{false, negative ? -INFINITY : INFINITY};
  const double v = e == 0 ? std::ldexp(double(m), 1 - f.bias - f.mantissaBits)
                          : std::ldexp(double((1u << f.mantissaBits) + m), int(e) - f.bias - f.mantissaBits);
  return {false, negative ? -v : v};
}

Meaning encodeReference(const Format &f, float x, bool saturate) {
  if (std::isnan(x)) return {true};
  const bool hasInf = !f.fnuz && !f.ocpE4M3;
  double best = 0, largest = 0, belowLargest = 0;
  unsigned bestCode = 0, largestCode = 0;
  const double a = std::fabs(double(x));
  for (unsigned code = 0; code < 0x80; ++code) {
    Meaning m = decodeReference(f, code);
    if (m.nan || std::isinf(m.value)) continue;
    if (m.value > largest) belowLargest = largest, largest = m.value, largestCode = code;
    const double d = std::fabs(m.value - a), bestD = std::fabs(best - a);
    if (d < bestD || (d == bestD && code % 2 == 0)) best = m.value, bestCode = code;
  }
  (void)bestCode;
  const double beyond = largest + (largest - belowLargest);
  // (Past `beyond` the distances lose their precision in double.)
  const bool overflow = std::isinf(a) || a >= beyond || (a > largest && (std::fabs(beyond - a) < std::fabs(largest - a) ||
                                                          (std::fabs(beyond - a) == std::fabs(largest - a) &&
                                                           largestCode % 2 == 1)));
  const bool negative = std::signbit(x);
  if (overflow) {
    if (saturate) return {false, negative ? -largest : largest};
    return hasInf ? Meaning{false, negative ? -INFINITY : INFINITY} : Meaning{true};
  }
  if (best == 0 && f.fnuz) return {false, 0.0};
  return {false, negative ? -best : best};
}

// Inputs: the format's values, the midpoints between neighbours (ties) and
// their f32 neighbours, overflow edges, f32 subnormals, zeros, infinities,
// NaN, and random values across the range; an odd count.
std::vector<float> inputsFor(const Format &f) {
  std::vector<double> finite;
  for (unsigned code = 0; code < 0x80; ++code)
    if (Meaning m = decodeReference(f, code); !m.nan && !std::isinf(m.value)) finite.push_back(m.value);
  std::sort(finite.begin(), finite.end());
  std::vector<float> v;
  auto both = [&](float x) {
    v.push_back(x);
    v.push_back(-x);
  };
  for (size_t i = 0; i + 1 < finite.size(); ++i) {
    const float mid = float((finite[i] + finite[i + 1]) / 2);
    both(float(finite[i]));
    both(mid);
    both(std::nextafter(mid, 0.0f));
    both(std::nextafter(mid, INFINITY));
  }
  const double top = finite.back(), step = top - finite[finite.size() - 2];
  for (double x : {top, top + step / 2, top + step / 2 - 1, top + step / 2 + 1, top + step, 2 * top, 1e30})
    both(float(x));
  for (float x : {0.0f, std::numeric_limits<float>::denorm_min(), 1e-40f, std::numeric_limits<float>::infinity()})
    both(x);
  v.push_back(std::numeric_limits<float>::quiet_NaN());
  std::uniform_real_distribution<float> exponent(-22.0f, 17.0f);
  std::bernoulli_distribution sign;
  for (int i = 0; i < 501; ++i) {
    float x = std::exp2(exponent(rng()));
    v.push_back(sign(rng()) ? -x : x);
  }
  if (v.size() % 2 == 0) v.push_back(3.0f);
  return v;
}

constexpr int kBlock = 128;

// q* = cast<F>(f32 / f16 / bf16 input), then d* = cast<f32 / f16 / bf16>(codes).
template <class F, bool Saturate>
void fp8_round_trip(Ptr<f32> x, Ptr<f16> h, Ptr<bf16> b, Ptr<F> q32, Ptr<F> q16, Ptr<F> qb, Ptr<F> codes,
                    Ptr<f32> d32, Ptr<f16> d16, Ptr<bf16> db, i32 n) {
  auto offs = program_id(0) * kBlock + arange(0, kBlock);
  auto m = offs < n;
  const CastOptions options{.saturate = Saturate};
  store(q32 + offs, cast<F>(load(x + offs, m), options), m);
  store(q16 + offs, cast<F>(load(h + offs, m), options), m);
  store(qb + offs, cast<F>(load(b + offs, m), options), m);
  auto c = load(codes + offs, m);
  store(d32 + offs, cast<float>(c), m);
  store(d16 + offs, cast<half>(c), m);
  store(db + offs, cast<bfloat16>(c), m);
}

template <class T> Buffer<T> poisonedOn(Device &dev, size_t n) {
  std::vector<T> junk(n);
  std::memset(static_cast<void *>(junk.data()), 0xA5, n * sizeof(T));
  return dev.upload(junk);
}

template <class F, bool Saturate> void checkRoundTrip(const char *arch, const char *name) {
  INFO(arch << " " << name << (Saturate ? " saturating" : ""));
  constexpr Format f = formatOf<F>();
  Device dev = Device::emulator(arch);
  std::vector<float> x = inputsFor(f);
  // The 16-bit inputs: the f32 inputs rounded (ties of the format survive:
  // they have few bits).
  std::vector<half> h(x.begin(), x.end());
  std::vector<bfloat16> b(x.begin(), x.end());
  // Every code, repeated to the inputs' count.
  std::vector<F> codes(x.size());
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = F::fromBits(uint8_t(i * 7 + i / 256));
  const size_t n = x.size();
  auto dx = dev.upload(x);
  auto dh = dev.upload(h);
  auto dbf = dev.upload(b);
  auto dcodes = dev.upload(codes);
  auto q32 = poisonedOn<F>(dev, n), q16 = poisonedOn<F>(dev, n), qb = poisonedOn<F>(dev, n);
  auto d32 = poisonedOn<float>(dev, n);
  auto d16 = poisonedOn<half>(dev, n);
  auto db = poisonedOn<bfloat16>(dev, n);
  auto kernel = jit(fp8_round_trip<F, Saturate>, std::string("fp8_round_trip_") + name + (Saturate ? "_sat" : ""));
  kernel.launch(dev, {cdiv(n, kBlock)}, {}, dx, dh, dbf, q32, q16, qb, dcodes, d32, d16, db, int(n));

  auto meaningOf = [&](F q) { return decodeReference(f, q.bits); };
  size_t bad32 = 0, bad16 = 0, badB = 0, badDecode = 0, saturated = 0, overflowed = 0;
  auto g32 = q32.download(), g16 = q16.download(), gb = qb.download();
  for (size_t i = 0; i < n; ++i) {
    Meaning want = encodeReference(f, x[i], Saturate);
    if (!(meaningOf(g32[i]) == want) && bad32++ < 4)
      MESSAGE("f32 " << x[i] << " -> 0x" << std::hex << int(g32[i].bits) << std::dec << ", want "
                     << (want.nan ? NAN : want.value));
    saturated += Saturate && std::fabs(x[i]) > 1e4 && !std::isnan(x[i]);
    overflowed += !Saturate && (want.nan || std::isinf(want.value)) && !std::isnan(x[i]);
    bad16 += !(meaningOf(g16[i]) == encodeReference(f, float(h[i]), Saturate));
    badB += !(meaningOf(gb[i]) == encodeReference(f, float(b[i]), Saturate));
  }
  auto r32 = d32.download();
  auto r16 = d16.download();
  auto rb = db.download();
  for (size_t i = 0; i < n; ++i) {
    Meaning want = decodeReference(f, codes[i].bits);
    // Every 8-bit float is exact in f16 and bf16 too.
    auto ok = [&](float got) { return want.nan ? std::isnan(got) : Meaning{false, double(got)} == want; };
    badDecode += !ok(r32[i]) + !ok(float(r16[i])) + !ok(float(rb[i]));
  }
  CHECK(bad32 == 0);
  CHECK(bad16 == 0);
  CHECK(badB == 0);
  CHECK(badDecode == 0);
  CHECK((Saturate ? saturated : overflowed) > 4); // the inputs reach the overflow edge
}

template <bool Saturate> void checkTarget(const char *arch) {
  checkRoundTrip<float8_e4m3fn, Saturate>(arch, "e4m3fn");
  checkRoundTrip<float8_e5m2, Saturate>(arch, "e5m2");
  checkRoundTrip<float8_e4m3fnuz, Saturate>(arch, "e4m3fnuz");
  checkRoundTrip<float8_e5m2fnuz, Saturate>(arch, "e5m2fnuz");
}

// The host types' conversions (tessel/types.hpp) against the reference.
template <class F> size_t hostMismatches(bool saturate) {
  constexpr Format f = formatOf<F>();
  size_t bad = 0;
  for (float x : inputsFor(f))
    bad += !(decodeReference(f, F::fromFloat(x, saturate)) == encodeReference(f, x, saturate));
  for (unsigned code = 0; code < 256; ++code) {
    Meaning want = decodeReference(f, code);
    const float got = float(F::fromBits(uint8_t(code)));
    bad += want.nan ? !std::isnan(got) : !(Meaning{false, double(got)} == want);
  }
  return bad;
}

} // namespace

TEST_CASE("fp8: load, cast and store on gfx942 (FNUZ by v_cvt_pk_fp8_f32, OCP by integer operations)") {
  checkTarget<false>("gfx942");
  checkTarget<true>("gfx942");
}

TEST_CASE("fp8: load, cast and store on gfx950 (OCP by v_cvt_pk_fp8_f32, FNUZ by integer operations)") {
  checkTarget<false>("gfx950");
  checkTarget<true>("gfx950");
}

TEST_CASE("fp8: load, cast and store on gfx1100 (integer operations, wave32)") {
  checkTarget<false>("gfx1100");
  checkTarget<true>("gfx1100");
}

TEST_CASE("fp8: the host types convert as the device does") {
  for (bool saturate : {false, true}) {
    CHECK(hostMismatches<float8_e4m3fn>(saturate) == 0);
    CHECK(hostMismatches<float8_e5m2>(saturate) == 0);
    CHECK(hostMismatches<float8_e4m3fnuz>(saturate) == 0);
    CHECK(hostMismatches<float8_e5m2fnuz>(saturate) == 0);
  }
  CHECK(float(float8_e4m3fn(464.0f)) == 448.0f);
  CHECK(std::isnan(float(float8_e4m3fn(500.0f))));
  CHECK(float8_e4m3fn::fromFloat(500.0f, true) == 0x7E);
  CHECK(float8_e4m3fnuz(-0.0f).bits == 0);
}

namespace {
void saturate_f16(Ptr<f32> x, Ptr<f16> out) {
  auto offs = arange(0, 64);
  store(out + offs, cast<half>(load(x + offs), {.saturate = true}));
}
} // namespace

TEST_CASE("fp8: saturate on a cast to a type that is not an 8-bit float is an error naming the line") {
  auto kernel = jit<saturate_f16>();
  auto x = emulator().upload(std::vector<float>(64, 1.0f));
  auto out = poisoned<half>(64);
  std::string message = errorOf([&] { kernel.launch(emulator(), {1}, {}, x, out); });
  CHECK(message.find("cast's saturate option applies to casts to an 8-bit float type") != std::string::npos);
  CHECK(message.find("this cast is to f16") != std::string::npos);
  CHECK(message.find("fp8_test.cpp") != std::string::npos);
}

namespace {
// Masked loads with and without `other`, where, zeros and a transpose of
// 8-bit float tiles: they move bits, so the output is the input's bytes.
void fp8_moves(Ptr<float8_e4m3fn> a, Ptr<float8_e4m3fn> other, Ptr<float8_e4m3fn> out, Ptr<float8_e4m3fn> outT,
               i32 rows, i32 cols) {
  auto r = arange(0, 16);
  auto c = arange(0, 32);
  auto offs = expand_dims(r, 1) * cols + expand_dims(c, 0);
  auto m = (expand_dims(r, 1) < rows) & (expand_dims(c, 0) < cols);
  auto keep = m & ((offs % 3) != 0);
  auto x = load(a + offs, keep, load(other + offs, m)); // masked-off lanes read `other`
  auto odd = (offs % 2) == 1;
  auto y = where(odd, x, zeros<float8_e4m3fn>({16, 32}));
  store(out + offs, y, m);
  auto offsT = expand_dims(c, 1) * rows + expand_dims(r, 0);
  store(outT + offsT, trans(load(a + offs, m)), trans(m));
}
} // namespace

TEST_CASE("fp8: masked loads, where, zeros and trans move the bytes") {
  const int rows = 13, cols = 29;
  std::vector<float8_e4m3fn> a(rows * cols), other(rows * cols);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = float8_e4m3fn::fromBits(uint8_t(i * 37 + 11));
    other[i] = float8_e4m3fn::fromBits(uint8_t(i * 13 + 5));
  }
  auto da = emulator().upload(a), dother = emulator().upload(other);
  auto out = poisoned<float8_e4m3fn>(a.size()), outT = poisoned<float8_e4m3fn>(a.size());
  jit<fp8_moves>().launch(emulator(), {1}, {}, da, dother, out, outT, rows, cols);
  auto got = out.download(), gotT = outT.download();
  size_t wrong = 0;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const int k = i * cols + j;
      const uint8_t x = k % 3 != 0 ? a[k].bits : other[k].bits;
      wrong += got[k].bits != (k % 2 == 1 ? x : uint8_t(0));
      wrong += gotT[j * rows + i].bits != a[k].bits;
    }
  CHECK(wrong == 0);
}

namespace {
void decode_e4m3fn(Ptr<float8_e4m3fn> x, Ptr<f32> y) {
  auto o = arange(0, 256);
  store(y + o, cast<float>(load(x + o)));
}
} // namespace

// gfx942 decodes OCP e4m3 without a conversion instruction: the byte's fields
// under f32's, times 2^(127 - 7), one product, exact for subnormal codes only
// if f32 subnormals are kept (the emulator keeps them whatever the code
// object says, so only the kernel descriptor shows it): FP_DENORM mode 3.
TEST_CASE("fp8: gfx942's decode of OCP e4m3 keeps f32 subnormals (denorm mode 3) and decodes every code") {
  Device dev = Device::emulator("gfx942");
  std::vector<float8_e4m3fn> codes(256);
  for (int i = 0; i < 256; ++i)
    codes[size_t(i)] = float8_e4m3fn::fromBits(uint8_t(i));
  auto x = dev.upload(codes);
  auto y = dev.upload(std::vector<float>(256, 12345.0f));
  auto kernel = jit<decode_e4m3fn>();
  kernel.launch(dev, {1}, {.num_warps = 4}, x, y);
  const std::string assembly = kernel.runtime()->lastKernel()->assembly();
  CHECK(contains(assembly, ".amdhsa_float_denorm_mode_32 3"));
  CHECK_FALSE(contains(assembly, "v_cvt_f32_fp8"));
  std::vector<float> got = y.download();
  int wrong = 0;
  for (int i = 0; i < 256; ++i) {
    const float want = float(codes[size_t(i)]);
    wrong += std::isnan(want) ? !std::isnan(got[size_t(i)]) : std::bit_cast<uint32_t>(got[size_t(i)]) != std::bit_cast<uint32_t>(want);
  }
  CHECK(wrong == 0);
}
