// The emulator computes what the AMDGPU code computes, whatever the host
// CPU: float conversions (every bf16 and f16 value, a spread of f32 values
// with subnormals, ties, overflow and NaN payloads) and fma / min / max /
// multiply on subnormals, even when the calling thread flushes subnormals.
// The references are written here, bit by bit, from the formats' rules and
// the gfx942 code's (f32 -> bf16 rounds the bits to nearest even; a NaN keeps
// its payload's top bits and is made quiet).
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

#include "emulator_ir.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

using namespace tessel;
using testing::Kernarg;

// Returns __bf16 (in xmm0, as _Float16 is): declared with _Float16 here so
// this file needs no bf16 support library (__truncsfbf2) of its own.
extern "C" _Float16 tessel_emu_truncsfbf2(float x);
extern "C" _Float16 tessel_emu_truncsfhf2(float x);
extern "C" float tessel_emu_extendhfsf2(_Float16 x);

namespace {

const char *kDeclarations = "declare i32 @llvm.amdgcn.workitem.id.x()\n"
                            "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
                            "declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()\n"
                            "declare float @llvm.fma.f32(float, float, float)\n"
                            "declare float @llvm.minnum.f32(float, float)\n"
                            "declare float @llvm.maxnum.f32(float, float)\n"
                            "declare float @llvm.amdgcn.exp2.f32(float)\n"
                            "declare float @llvm.amdgcn.rsq.f32(float)\n";

uint32_t bitsOf(float x) { return std::bit_cast<uint32_t>(x); }
float floatOf(uint32_t b) { return std::bit_cast<float>(b); }

// f32 -> bf16 as the gfx942 code does it.
uint16_t bf16Reference(uint32_t bits) {
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x7FFFFFu))
    return uint16_t((bits | 0x400000u) >> 16);
  return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// f32 -> f16, round to nearest even, subnormals kept, NaN quieted with the
// payload's top 9 bits.
uint16_t f16Reference(uint32_t bits) {
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t exp = (bits >> 23) & 0xFFu, mant = bits & 0x7FFFFFu;
  if (exp == 0xFF)
    return mant ? uint16_t(sign | 0x7E00u | (mant >> 13)) : uint16_t(sign | 0x7C00u);
  if (exp == 0) // f32 subnormals are below half of f16's smallest subnormal
    return sign;
  const int e = int(exp) - 127 + 15; // f16 biased exponent
  if (e >= 31)
    return uint16_t(sign | 0x7C00u);
  const uint64_t m = mant | 0x800000u; // value = m * 2^(exp - 150)
  // Units of the f16 quantum: 2^(e - 25) for normals, 2^-24 below.
  const int shift = e >= 1 ? 13 : 126 - int(exp);
  if (shift >= 40)
    return sign;
  uint64_t q = m >> shift;
  const uint64_t rem = m & ((uint64_t(1) << shift) - 1), halfway = uint64_t(1) << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1)))
    ++q;
  uint32_t result = e >= 1 ? uint32_t(e - 1) * 1024u + uint32_t(q) : uint32_t(q); // q carries into the exponent
  if (result >= 0x7C00u)
    result = 0x7C00u;
  return uint16_t(sign | result);
}

// f16 -> f32, exact; a signalling NaN comes back quiet.
uint32_t f16ToF32Reference(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  if (exp == 0x1F)
    return mant ? sign | 0x7FC00000u | (mant << 13) : sign | 0x7F800000u;
  if (exp == 0) {
    if (mant == 0)
      return sign;
    return sign | bitsOf(std::ldexp(float(mant), -24)); // exact
  }
  return sign | ((exp + 112u) << 23) | (mant << 13);
}

// A spread of f32 values: every exponent with edge and random mantissas,
// exact ties for both formats, subnormals, signed zeros, infinities, NaNs.
std::vector<uint32_t> f32Spread() {
  std::vector<uint32_t> v;
  std::mt19937 gen(11);
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t exp = 0; exp < 256; ++exp)
      for (uint32_t mant : {0u, 1u, 0x1FFFu, 0x2000u, 0x3000u, 0x7FFFu, 0x8000u, 0x18000u, 0xFFFFu,
                            0x10000u, 0x400000u, 0x7FFFFFu, uint32_t(gen() & 0x7FFFFFu), uint32_t(gen() & 0x7FFFFFu)})
        v.push_back(sign | (exp << 23) | mant);
  return v;
}

struct Launch {
  Device dev = Device::emulator("gfx942");
  std::unique_ptr<LoadedKernel> loaded;
  CompiledKernel kernel;
  Launch(const std::string &name, const std::string &body, std::vector<TraceArg> args) {
    kernel = testing::kernelFromIR(name, std::string(kDeclarations) + body, args);
    loaded = dev.impl().load(kernel);
  }
  void run(Kernarg &args, uint32_t threads) {
    dev.impl().launch(*loaded, {(threads + 63) / 64, 1, 1}, 64, args.data(), args.size());
  }
};

const TraceArg kPtr{TraceArg::Pointer, DType::I32};

// What the calling thread's MXCSR flushes: the emulator must not care.
class FlushSubnormalsHere {
public:
  FlushSubnormalsHere() {
#if defined(__x86_64__)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | 0x8040); // FTZ | DAZ
#endif
  }
  ~FlushSubnormalsHere() {
#if defined(__x86_64__)
    _mm_setcsr(saved_);
#endif
  }

private:
  unsigned saved_ = 0;
};

} // namespace

TEST_CASE("emulator fidelity: f32 -> bf16 and f32 -> f16 of subnormals, ties, overflow and NaN payloads") {
  Launch k("narrow", std::string(R"(
define amdgpu_kernel void @narrow(ptr addrspace(1) %x, ptr addrspace(1) %h, ptr addrspace(1) %b) {
entry:)") + testing::kGlobalIndex + R"(
  %px = getelementptr float, ptr addrspace(1) %x, i64 %i64
  %v = load float, ptr addrspace(1) %px, align 4
  %vh = fptrunc float %v to half
  %ph = getelementptr half, ptr addrspace(1) %h, i64 %i64
  store half %vh, ptr addrspace(1) %ph, align 2
  %vb = fptrunc float %v to bfloat
  %pb = getelementptr bfloat, ptr addrspace(1) %b, i64 %i64
  store bfloat %vb, ptr addrspace(1) %pb, align 2
  ret void
}
)", {kPtr, kPtr, kPtr});
  std::vector<uint32_t> x = f32Spread();
  x.resize((x.size() + 63) / 64 * 64, 0x00000001u);
  auto bx = k.dev.upload(x);
  auto h = k.dev.upload(std::vector<uint16_t>(x.size(), 0xABAB));
  auto b = k.dev.upload(std::vector<uint16_t>(x.size(), 0xABAB));
  Kernarg args(k.kernel.kernargs);
  args.set(0, static_cast<void *>(bx.devicePtr())).set(1, static_cast<void *>(h.devicePtr()));
  args.set(2, static_cast<void *>(b.devicePtr()));
  FlushSubnormalsHere flush;
  k.run(args, uint32_t(x.size()));
  auto gotH = h.download(), gotB = b.download();
  size_t badH = 0, badB = 0, badRuntimeH = 0, badRuntimeB = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    badH += gotH[i] != f16Reference(x[i]);
    badB += gotB[i] != bf16Reference(x[i]);
    // The emulator's own conversion functions (used on hosts without the
    // instructions) agree bit for bit too.
    badRuntimeH += std::bit_cast<uint16_t>(tessel_emu_truncsfhf2(floatOf(x[i]))) != f16Reference(x[i]);
    badRuntimeB += std::bit_cast<uint16_t>(tessel_emu_truncsfbf2(floatOf(x[i]))) != bf16Reference(x[i]);
  }
  CHECK(badH == 0);
  CHECK(badB == 0);
  CHECK(badRuntimeH == 0);
  CHECK(badRuntimeB == 0);
  // The case the issue saw: the smallest subnormal rounds to bf16 0x0001, not 0.
  CHECK(gotB[std::find(x.begin(), x.end(), 0x00010000u) - x.begin()] == 0x0001);
}

TEST_CASE("emulator fidelity: every bf16 and f16 value widens to f32 exactly") {
  Launch k("widen", std::string(R"(
define amdgpu_kernel void @widen(ptr addrspace(1) %h, ptr addrspace(1) %b, ptr addrspace(1) %fh, ptr addrspace(1) %fb) {
entry:)") + testing::kGlobalIndex + R"(
  %ph = getelementptr half, ptr addrspace(1) %h, i64 %i64
  %vh = load half, ptr addrspace(1) %ph, align 2
  %wh = fpext half %vh to float
  %pfh = getelementptr float, ptr addrspace(1) %fh, i64 %i64
  store float %wh, ptr addrspace(1) %pfh, align 4
  %pb = getelementptr bfloat, ptr addrspace(1) %b, i64 %i64
  %vb = load bfloat, ptr addrspace(1) %pb, align 2
  %wb = fpext bfloat %vb to float
  %pfb = getelementptr float, ptr addrspace(1) %fb, i64 %i64
  store float %wb, ptr addrspace(1) %pfb, align 4
  ret void
}
)", {kPtr, kPtr, kPtr, kPtr});
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i)
    all[i] = uint16_t(i);
  auto h = k.dev.upload(all), b = k.dev.upload(all);
  auto fh = k.dev.upload(std::vector<uint32_t>(65536, 0xABABABAB));
  auto fb = k.dev.upload(std::vector<uint32_t>(65536, 0xABABABAB));
  Kernarg args(k.kernel.kernargs);
  args.set(0, static_cast<void *>(h.devicePtr())).set(1, static_cast<void *>(b.devicePtr()));
  args.set(2, static_cast<void *>(fh.devicePtr())).set(3, static_cast<void *>(fb.devicePtr()));
  FlushSubnormalsHere flush;
  k.run(args, 65536);
  auto gotH = fh.download(), gotB = fb.download();
  size_t badH = 0, badB = 0, badRuntime = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    badH += gotH[i] != f16ToF32Reference(uint16_t(i));
    badB += gotB[i] != i << 16; // bf16 is the top half of an f32
    badRuntime += bitsOf(tessel_emu_extendhfsf2(std::bit_cast<_Float16>(uint16_t(i)))) != f16ToF32Reference(uint16_t(i));
  }
  CHECK(badH == 0);
  CHECK(badB == 0);
  CHECK(badRuntime == 0);
}

TEST_CASE("emulator fidelity: fma, min, max and multiply keep subnormals") {
  Launch k("subnormal_math", std::string(R"(
define amdgpu_kernel void @subnormal_math(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out) {
entry:)") + testing::kGlobalIndex + R"(
  %pa = getelementptr float, ptr addrspace(1) %a, i64 %i64
  %va = load float, ptr addrspace(1) %pa, align 4
  %pb = getelementptr float, ptr addrspace(1) %b, i64 %i64
  %vb = load float, ptr addrspace(1) %pb, align 4
  %f = call float @llvm.fma.f32(float %va, float %vb, float %va)
  %mn = call float @llvm.minnum.f32(float %va, float %vb)
  %mx = call float @llvm.maxnum.f32(float %va, float %vb)
  %m = fmul float %va, %vb
  %at = mul i64 %i64, 4
  %p0 = getelementptr float, ptr addrspace(1) %out, i64 %at
  store float %f, ptr addrspace(1) %p0, align 4
  %p1 = getelementptr float, ptr addrspace(1) %p0, i64 1
  store float %mn, ptr addrspace(1) %p1, align 4
  %p2 = getelementptr float, ptr addrspace(1) %p0, i64 2
  store float %mx, ptr addrspace(1) %p2, align 4
  %p3 = getelementptr float, ptr addrspace(1) %p0, i64 3
  store float %m, ptr addrspace(1) %p3, align 4
  ret void
}
)", {kPtr, kPtr, kPtr});
  // Subnormal a, b near 1 (products stay subnormal), and subnormal pairs.
  std::vector<float> a, b;
  std::mt19937 gen(5);
  for (int i = 0; i < 256; ++i) {
    a.push_back(floatOf((gen() & 0x7FFFFFu) | (i % 2 ? 0x80000000u : 0)));
    b.push_back(i % 3 ? 0.75f + float(i) / 1024 : floatOf(gen() & 0x7FFFFFu));
  }
  auto da = k.dev.upload(a), db = k.dev.upload(b);
  auto out = k.dev.upload(std::vector<float>(a.size() * 4, -1.0f));
  Kernarg args(k.kernel.kernargs);
  args.set(0, static_cast<void *>(da.devicePtr())).set(1, static_cast<void *>(db.devicePtr()));
  args.set(2, static_cast<void *>(out.devicePtr()));
  std::vector<float> want; // computed before any flushing is switched on
  for (size_t i = 0; i < a.size(); ++i) {
    want.push_back(std::fma(a[i], b[i], a[i]));
    want.push_back(std::fmin(a[i], b[i]));
    want.push_back(std::fmax(a[i], b[i]));
    want.push_back(a[i] * b[i]);
  }
  size_t subnormalResults = 0;
  for (float w : want)
    subnormalResults += std::fpclassify(w) == FP_SUBNORMAL;
  REQUIRE(subnormalResults > 300); // the test exercises what it claims
  FlushSubnormalsHere flush;
  k.run(args, uint32_t(a.size()));
  auto got = out.download();
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    bad += bitsOf(got[i]) != bitsOf(want[i]);
  CHECK(bad == 0);
}

// `intrinsic` (float -> float) of every element of `a`, on the emulator;
// `a` is padded to whole waves (the kernel has no bounds check).
static std::vector<float> runUnaryIntrinsic(const std::string &intrinsic, std::vector<float> &a) {
  Launch k("unary", std::string(R"(
define amdgpu_kernel void @unary(ptr addrspace(1) %a, ptr addrspace(1) %out) {
entry:)") + testing::kGlobalIndex + R"(
  %pa = getelementptr float, ptr addrspace(1) %a, i64 %i64
  %va = load float, ptr addrspace(1) %pa, align 4
  %r = call float @)" + intrinsic + R"((float %va)
  %po = getelementptr float, ptr addrspace(1) %out, i64 %i64
  store float %r, ptr addrspace(1) %po, align 4
  ret void
}
)", {kPtr, kPtr});
  while (a.size() % 64)
    a.push_back(1.0f);
  auto da = k.dev.upload(a);
  auto out = k.dev.upload(std::vector<float>(a.size(), -1.0f));
  Kernarg args(k.kernel.kernargs);
  args.set(0, static_cast<void *>(da.devicePtr())).set(1, static_cast<void *>(out.devicePtr()));
  k.run(args, uint32_t(a.size()));
  return out.download();
}

TEST_CASE("emulator fidelity: llvm.amdgcn.exp2.f32 is V_EXP_F32 (no denormal results)") {
  // Integers (exact powers of two, through the bottom of the normal range
  // and past it), fractions across the range, and the special values.
  std::vector<float> a;
  for (int e = -152; e <= 130; ++e)
    a.push_back(float(e));
  std::mt19937 gen(17);
  std::uniform_real_distribution<float> spread(-140.0f, 129.0f);
  for (int i = 0; i < 200; ++i)
    a.push_back(spread(gen));
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {-inf, inf, -0.0f, 0.0f, floatOf(1), -126.0f, -126.5f, -125.999f})
    a.push_back(x);
  a.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> got = runUnaryIntrinsic("llvm.amdgcn.exp2.f32", a);
  size_t bad = 0, flushed = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float x = a[i];
    if (std::isnan(x)) {
      bad += !std::isnan(got[i]);
      continue;
    }
    // 2^x by ldexp of the integer part and a long double fraction; a
    // result below 2^-126 (the smallest normal f32) is +0 on the hardware.
    const long double whole = std::floor((long double)x), exact = std::ldexp(std::exp2((long double)x - whole), int(std::max(whole, -1000.0L)));
    if (std::isinf(x)) {
      bad += bitsOf(got[i]) != bitsOf(x > 0 ? inf : 0.0f);
      continue;
    }
    if (exact < 0x1p-126L) {
      ++flushed;
      bad += bitsOf(got[i]) != 0u;
      continue;
    }
    if (exact > (long double)std::numeric_limits<float>::max()) {
      bad += got[i] != inf;
      continue;
    }
    // Within 1 ulp (the ISA's bound) of the exact value.
    const long double ulp = std::ldexp(1.0L, std::ilogb(float(exact)) - 23);
    bad += std::fabs((long double)got[i] - exact) > ulp;
  }
  CHECK(flushed > 20); // the test exercises results below the normal range
  CHECK(bad == 0);
}

TEST_CASE("emulator fidelity: llvm.amdgcn.rsq.f32 is V_RSQ_F32 (denormal inputs count as 0)") {
  std::vector<float> a;
  std::mt19937 gen(23);
  for (int e = -126; e <= 127; e += 3) // normals across the range
    a.push_back(std::ldexp(1.0f + float(gen() % 1000) / 1000.0f, e));
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {floatOf(1), floatOf(0x7FFFFF), -floatOf(5), 0.0f, -0.0f, -1.0f, -inf, inf, 4.0f, 0.25f})
    a.push_back(x);
  a.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> got = runUnaryIntrinsic("llvm.amdgcn.rsq.f32", a);
  size_t bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float x = a[i], g = got[i];
    if (std::isnan(x) || (x < 0 && std::fpclassify(x) == FP_NORMAL) || x == -inf) {
      bad += !std::isnan(g);
    } else if (x == 0.0f || std::fpclassify(x) == FP_SUBNORMAL) {
      bad += g != (std::signbit(x) ? -inf : inf); // a denormal counts as zero of its sign
    } else if (x == inf) {
      bad += bitsOf(g) != 0u;
    } else {
      const long double exact = 1.0L / std::sqrt((long double)x);
      const long double ulp = std::ldexp(1.0L, std::ilogb(float(exact)) - 23);
      bad += std::fabs((long double)g - exact) > ulp;
    }
  }
  CHECK(bad == 0);
}
