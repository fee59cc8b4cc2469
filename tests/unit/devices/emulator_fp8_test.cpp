// The emulator's 8-bit float conversion instructions against plain host
// math. A handwritten kernel runs llvm.amdgcn.cvt.pk.{fp8,bf8}.f32 and
// llvm.amdgcn.cvt.f32.{fp8,bf8} through the whole emulator path (the
// retargeting reads the kernel's target-cpu: gfx942 converts the FNUZ
// formats, gfx950 OCP's); the reference below decodes each format from its
// definition and encodes by searching all 256 codes for the nearest value.
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

#include "emulator_ir.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace tessel;
using testing::Kernarg;

namespace {

struct Format {
  const char *name;
  int exponentBits, mantissaBits, bias;
  bool fnuz; // one NaN (0x80), no -0, no infinity
  bool ocpE4M3; // S.1111.111 is NaN, no infinity
};
const Format kE4M3Fnuz{"e4m3fnuz", 4, 3, 8, true, false};
const Format kE5M2Fnuz{"e5m2fnuz", 5, 2, 16, true, false};
const Format kE4M3Ocp{"e4m3fn", 4, 3, 7, false, true};
const Format kE5M2Ocp{"e5m2", 5, 2, 15, false, false};

// What a code means: NaN, +-infinity or a finite value (as a double).
struct Meaning {
  bool nan = false;
  double value = 0;
};
Meaning decode(const Format &f, unsigned code) {
  const bool negative = code & 0x80;
  const unsigned e = (code >> f.mantissaBits) & ((1u << f.exponentBits) - 1), m = code & ((1u << f.mantissaBits) - 1);
  const unsigned top = (1u << f.exponentBits) - 1;
  if (f.fnuz && code == 0x80) return {true};
  if (f.ocpE4M3 && e == top && m == (1u << f.mantissaBits) - 1) return {true};
  if (!f.fnuz && !f.ocpE4M3 && e == top) {
    if (m) return {true};
    return {false, negative ? -INFINITY : INFINITY};
  }
  double v = e == 0 ? std::ldexp(double(m), 1 - f.bias - f.mantissaBits)
                    : std::ldexp(double((1u << f.mantissaBits) + m), int(e) - f.bias - f.mantissaBits);
  return {false, negative ? -v : v};
}

// Round to nearest, ties to the even code, among the finite codes of x's
// sign, plus one step past the largest (overflow: infinity for E5M2, NaN
// for the others); NaN to NaN (the caller checks NaN-ness only).
Meaning encodeReference(const Format &f, float x) {
  if (std::isnan(x)) return {true};
  const bool hasInf = !f.fnuz && !f.ocpE4M3;
  if (std::isinf(x)) return hasInf ? Meaning{false, double(x)} : Meaning{true};
  // (Past the step beyond the largest value the distances below lose their
  // precision in double: those are overflow.)
  const double a = std::fabs(double(x));
  unsigned best = 0;
  double bestValue = 0, maxValue = 0;
  unsigned maxCode = 0;
  for (unsigned code = 0; code < 0x80; ++code) {
    Meaning m = decode(f, code);
    if (m.nan || std::isinf(m.value)) continue;
    if (m.value > maxValue) maxValue = m.value, maxCode = code;
    const double d = std::fabs(m.value - a), bestD = std::fabs(bestValue - a);
    if (d < bestD || (d == bestD && code % 2 == 0 && best % 2 == 1)) best = code, bestValue = m.value;
  }
  // The step past the largest: code maxCode + 1 of an unbounded format.
  const double beyond = maxValue + (maxValue - decode(f, maxCode - 1).value);
  const double dMax = std::fabs(maxValue - a), dBeyond = std::fabs(beyond - a);
  if (a >= beyond || (a > maxValue && (dBeyond < dMax || (dBeyond == dMax && maxCode % 2 == 1))))
    return hasInf ? Meaning{false, std::signbit(x) ? -INFINITY : INFINITY} : Meaning{true};
  if (bestValue == 0 && f.fnuz) return {false, 0.0};
  return {false, std::signbit(x) ? -bestValue : bestValue};
}

// The f32 inputs: every value of the format, the midpoints between
// neighbours (ties) and the f32 values on either side of them, the
// overflow edge, subnormals of f32, zeros, infinities, NaN, random values.
std::vector<float> inputsFor(const Format &f) {
  std::vector<double> finite;
  for (unsigned code = 0; code < 0x80; ++code)
    if (Meaning m = decode(f, code); !m.nan && !std::isinf(m.value)) finite.push_back(m.value);
  std::sort(finite.begin(), finite.end());
  std::vector<float> v;
  auto both = [&](float x) {
    v.push_back(x);
    v.push_back(-x);
  };
  for (size_t i = 0; i < finite.size(); ++i) {
    both(float(finite[i]));
    const double next = i + 1 < finite.size() ? finite[i + 1] : 2 * finite[i] - finite[i - 1];
    const float mid = float((finite[i] + next) / 2); // exact: few bits
    both(mid);
    both(std::nextafter(mid, 0.0f));
    both(std::nextafter(mid, INFINITY));
  }
  for (float x : {0.0f, std::numeric_limits<float>::denorm_min(), 1e-40f, 1e30f, 3.4e38f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    both(x);
  std::mt19937 gen(36);
  std::uniform_real_distribution<float> exponent(-20.0f, 17.0f);
  for (int i = 0; i < 400; ++i) both(std::exp2(exponent(gen)));
  while (v.size() % 128) v.push_back(1.0f);
  return v;
}

const TraceArg kPtr{TraceArg::Pointer, DType::I32};

// Runs cvt.pk.<kind>.f32 on (x[2i], x[2i+1]) into word 0 of 0xA5A5A5A5 and
// word 1 of 0x5A5A5A5A, and cvt.f32.<kind> on each byte of codes[i].
struct Fp8Kernels {
  Device dev;
  std::unique_ptr<LoadedKernel> encode, decode;
  CompiledKernel encodeKernel, decodeKernel;
  Fp8Kernels(const std::string &arch, const std::string &kind) : dev(Device::emulator(arch)) {
    const std::string decls = "declare i32 @llvm.amdgcn.workitem.id.x()\n"
                              "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
                              "declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()\n"
                              "declare i32 @llvm.amdgcn.cvt.pk." + kind + ".f32(float, float, i32, i1)\n"
                              "declare float @llvm.amdgcn.cvt.f32." + kind + "(i32, i32)\n";
    const std::string attrs = "attributes #0 = { \"target-cpu\"=\"" + arch + "\" }\n";
    encodeKernel = testing::kernelFromIR("enc", decls + R"(
define amdgpu_kernel void @enc(ptr addrspace(1) %x, ptr addrspace(1) %out) #0 {
entry:)" + testing::kGlobalIndex + R"(
  %j = mul i64 %i64, 2
  %pa = getelementptr float, ptr addrspace(1) %x, i64 %j
  %a = load float, ptr addrspace(1) %pa, align 4
  %pb = getelementptr float, ptr addrspace(1) %pa, i64 1
  %b = load float, ptr addrspace(1) %pb, align 4
  %lo = call i32 @llvm.amdgcn.cvt.pk.)" + kind + R"(.f32(float %a, float %b, i32 u0xA5A5A5A5, i1 false)
  %hi = call i32 @llvm.amdgcn.cvt.pk.)" + kind + R"(.f32(float %a, float %b, i32 u0x5A5A5A5A, i1 true)
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %j
  store i32 %lo, ptr addrspace(1) %po, align 4
  %po1 = getelementptr i32, ptr addrspace(1) %po, i64 1
  store i32 %hi, ptr addrspace(1) %po1, align 4
  ret void
}
)" + attrs, {kPtr, kPtr});
    decodeKernel = testing::kernelFromIR("dec", decls + R"(
define amdgpu_kernel void @dec(ptr addrspace(1) %codes, ptr addrspace(1) %out) #0 {
entry:)" + testing::kGlobalIndex + R"(
  %pc = getelementptr i32, ptr addrspace(1) %codes, i64 %i64
  %c = load i32, ptr addrspace(1) %pc, align 4
  %v0 = call float @llvm.amdgcn.cvt.f32.)" + kind + R"((i32 %c, i32 0)
  %v1 = call float @llvm.amdgcn.cvt.f32.)" + kind + R"((i32 %c, i32 1)
  %v2 = call float @llvm.amdgcn.cvt.f32.)" + kind + R"((i32 %c, i32 2)
  %v3 = call float @llvm.amdgcn.cvt.f32.)" + kind + R"((i32 %c, i32 3)
  %j = mul i64 %i64, 4
  %p0 = getelementptr float, ptr addrspace(1) %out, i64 %j
  store float %v0, ptr addrspace(1) %p0, align 4
  %p1 = getelementptr float, ptr addrspace(1) %p0, i64 1
  store float %v1, ptr addrspace(1) %p1, align 4
  %p2 = getelementptr float, ptr addrspace(1) %p0, i64 2
  store float %v2, ptr addrspace(1) %p2, align 4
  %p3 = getelementptr float, ptr addrspace(1) %p0, i64 3
  store float %v3, ptr addrspace(1) %p3, align 4
  ret void
}
)" + attrs, {kPtr, kPtr});
    encode = dev.impl().load(encodeKernel);
    decode = dev.impl().load(decodeKernel);
  }
  void run(LoadedKernel &k, const CompiledKernel &c, const void *in, void *out, uint32_t threads) {
    Kernarg args(c.kernargs);
    args.set(0, const_cast<void *>(in)).set(1, out);
    dev.impl().launch(k, {(threads + 63) / 64, 1, 1}, 64, args.data(), args.size());
  }
};

bool same(const Meaning &want, float got) {
  if (want.nan) return std::isnan(got);
  return !std::isnan(got) && double(got) == want.value && std::signbit(got) == std::signbit(want.value);
}

void checkFormat(const char *arch, const char *kind, const Format &f) {
  INFO(arch << " " << kind << " (" << f.name << ")");
  Fp8Kernels k(arch, kind);
  // Decoding: every code in every byte position.
  std::vector<uint32_t> codes;
  for (uint32_t c = 0; c < 256; ++c) codes.push_back(c | ((c ^ 0x55) << 8) | ((c ^ 0xAA) << 16) | ((255 - c) << 24));
  auto dcodes = k.dev.upload(codes);
  auto decoded = k.dev.upload(std::vector<float>(codes.size() * 4, -12345.0f));
  k.run(*k.decode, k.decodeKernel, dcodes.devicePtr(), decoded.devicePtr(), uint32_t(codes.size()));
  std::vector<float> got = decoded.download();
  size_t badDecode = 0;
  for (size_t i = 0; i < codes.size(); ++i)
    for (unsigned byte = 0; byte < 4; ++byte) {
      Meaning want = decode(f, (codes[i] >> (8 * byte)) & 0xFF);
      if (!same(want, got[4 * i + byte]) && badDecode++ < 5)
        MESSAGE("decode 0x" << std::hex << ((codes[i] >> (8 * byte)) & 0xFF) << ": got " << got[4 * i + byte]);
    }
  CHECK(badDecode == 0);

  // Encoding: the pair's bytes in the selected word, the other word kept.
  std::vector<float> x = inputsFor(f);
  auto dx = k.dev.upload(x);
  auto encoded = k.dev.upload(std::vector<uint32_t>(x.size(), 0xDEADBEEF));
  k.run(*k.encode, k.encodeKernel, dx.devicePtr(), encoded.devicePtr(), uint32_t(x.size() / 2));
  std::vector<uint32_t> words = encoded.download();
  size_t badEncode = 0, badWords = 0, ties = 0;
  for (size_t p = 0; p < x.size() / 2; ++p) {
    const uint32_t lo = words[2 * p], hi = words[2 * p + 1];
    badWords += (lo >> 16) != 0xA5A5u || (hi & 0xFFFF) != 0x5A5Au || (lo & 0xFFFF) != (hi >> 16);
    for (unsigned s = 0; s < 2; ++s) {
      const float in = x[2 * p + s];
      const unsigned code = (lo >> (8 * s)) & 0xFF;
      Meaning want = encodeReference(f, in);
      Meaning gotMeaning = decode(f, code);
      const bool ok = want.nan ? gotMeaning.nan
                               : !gotMeaning.nan && gotMeaning.value == want.value &&
                                     std::signbit(gotMeaning.value) == std::signbit(want.value);
      if (!ok && badEncode++ < 5)
        MESSAGE("encode " << in << ": got code 0x" << std::hex << code << std::dec << " (" << gotMeaning.value
                          << "), want " << (want.nan ? NAN : want.value));
      // Count exact ties that round down to an even code (tie-breaking exercised).
      ties += !want.nan && std::fabs(want.value) < std::fabs(double(in)) && (code & 1) == 0;
    }
  }
  CHECK(badWords == 0);
  CHECK(badEncode == 0);
  CHECK(ties > 20);
}

} // namespace

TEST_CASE("emulator fp8: gfx942 converts the FNUZ formats (v_cvt_pk_fp8_f32, v_cvt_f32_fp8, bf8)") {
  checkFormat("gfx942", "fp8", kE4M3Fnuz);
  checkFormat("gfx942", "bf8", kE5M2Fnuz);
}

TEST_CASE("emulator fp8: gfx950 converts the OCP formats (E4M3FN, E5M2)") {
  checkFormat("gfx950", "fp8", kE4M3Ocp);
  checkFormat("gfx950", "bf8", kE5M2Ocp);
}

TEST_CASE("emulator fp8: the reference's edges (overflow, ties at the top, no -0 in FNUZ)") {
  // Hand-checked values, so that the reference itself is right.
  CHECK(encodeReference(kE4M3Ocp, 464.0f).value == 448.0); // tie to the even code 0x7E
  CHECK(encodeReference(kE4M3Ocp, 465.0f).nan);
  CHECK(encodeReference(kE5M2Ocp, 61440.0f).value == INFINITY); // tie past 0x7B (odd)
  CHECK(encodeReference(kE5M2Ocp, 61439.0f).value == 57344.0);
  CHECK(encodeReference(kE4M3Fnuz, 248.0f).nan);
  CHECK(encodeReference(kE4M3Fnuz, 247.0f).value == 240.0);
  CHECK(!std::signbit(encodeReference(kE4M3Fnuz, -0.0f).value));
  CHECK(std::signbit(encodeReference(kE4M3Ocp, -0.0f).value));
  CHECK(encodeReference(kE4M3Ocp, std::ldexp(1.0f, -10)).value == 0.0); // half the smallest: tie to 0
  CHECK(encodeReference(kE4M3Ocp, std::ldexp(1.5f, -10)).value == std::ldexp(1.0, -9));
  CHECK(decode(kE5M2Fnuz, 0x01).value == std::ldexp(1.0, -17));
  CHECK(decode(kE4M3Fnuz, 0x7F).value == 240.0);
}

TEST_CASE("emulator fp8: a target without the conversion instructions is an error naming it") {
  CHECK_THROWS_WITH_AS(Fp8Kernels("gfx90a", "fp8"), doctest::Contains("is not an instruction of gfx90a"), Error);
}
