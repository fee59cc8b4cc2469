// The emulator's gfx950 f8f6f4 MFMAs on FP4 (E2M1, format 4 in cbsz / blgp)
// against plain host math: alone, mixed with E4M3 / E5M2, unscaled (constant
// zero scales) and scaled (V_MFMA_SCALE_F32_*). A handwritten kernel loads
// each lane's A and B registers (4 VGPRs, `<4 x i32>`, for an FP4 operand,
// 8 for an 8-bit one, as LLVM's AMDGPU tests call the intrinsic), its C and
// scale registers, runs the intrinsic and stores D.
//
// The host's model, from AMD's "Matrix Core Programming on AMD CDNA3 and
// CDNA4" (ROCm blog, 2025; its FP4 figure and kernel for 32x32x64: lane
// i + 32 g holds row i's K 32 g + [0, 32) in 16 bytes, two values a byte,
// the lower K in the low nibble; B's column j alike) and the OCP MX
// specification's E2M1 table; scales as in emulator_mx_scale_test.cpp (the
// scale of row i, K block g is byte 0 of lane i + m g). Sums in double in
// order of K from C, rounded to f32 once.
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

#include "emulator_ir.hpp"
#include "f8f6f4_host.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tessel;
using namespace tessel::f8f6f4;

namespace {

// An operand's registers a lane: 4 for FP4, 8 for FP8 (`wide`: 8 for FP4 too,
// the last 4 never read).
unsigned registersOf(int format, bool wide) { return format == 4 && !wide ? 4 : 8; }

std::string intrinsicName(const MfmaShape &s, unsigned ra, unsigned rb) {
  const std::string base = s.m == 32 ? "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4"
                                     : "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4";
  return base + ".v" + std::to_string(ra) + "i32.v" + std::to_string(rb) + "i32";
}

// scaled: each lane's scale registers from the buffers, else constant 0.
std::string kernelIR(const MfmaShape &s, int fa, int fb, unsigned ra, unsigned rb, bool scaled) {
  const std::string acc = s.accType, name = intrinsicName(s, ra, rb);
  const std::string ta = "<" + std::to_string(ra) + " x i32>", tb = "<" + std::to_string(rb) + " x i32>";
  return testing::scaledMfmaKernelIR(name, ta, tb, acc, fa, fb, 0, scaled ? "%vsa" : "0", 0, scaled ? "%vsb" : "0");
}

struct Case {
  const MfmaShape &s;
  int fa, fb;
  std::vector<uint8_t> A, B;    // codes (FP4: a nibble each), A[m][k], B[k][n]
  std::vector<float> C;         // [m][n]
  std::vector<uint32_t> sa, sb; // each lane's scale register (byte 0), empty: unscaled
  bool wide = false;            // FP4 operands in 8 registers
};

// (lane, byte, shift) of element kk of row (column) i of an operand in `format`.
struct Spot {
  unsigned lane, byte, shift;
};
Spot spot(const MfmaShape &s, int format, unsigned i, unsigned kk) {
  if (format == 4) {
    auto [lane, nibble] = placeFp4(s, i, kk);
    return {lane, nibble / 2, 4 * (nibble % 2)};
  }
  auto [lane, byte] = place(s, i, kk);
  return {lane, byte, 0};
}

// D by the emulator. `junk`: the bytes no format reads (an FP4 operand's
// registers past its 4th when wide) hold this.
std::vector<float> run(const Case &t, uint8_t junk = 0) {
  const MfmaShape &s = t.s;
  const unsigned ra = registersOf(t.fa, t.wide), rb = registersOf(t.fb, t.wide), regs = s.m * s.m / 64;
  std::vector<uint8_t> a(64 * 4 * ra, junk), b(64 * 4 * rb, junk);
  for (unsigned l = 0; l < 64; ++l) { // the bytes the format reads start from zero
    std::memset(&a[l * 4 * ra], 0, t.fa == 4 ? 16 : 32);
    std::memset(&b[l * 4 * rb], 0, t.fb == 4 ? 16 : 32);
  }
  for (unsigned i = 0; i < s.m; ++i)
    for (unsigned kk = 0; kk < s.k; ++kk) {
      Spot x = spot(s, t.fa, i, kk), y = spot(s, t.fb, i, kk);
      a[x.lane * 4 * ra + x.byte] |= uint8_t(t.A[i * s.k + kk] << x.shift);
      b[y.lane * 4 * rb + y.byte] |= uint8_t(t.B[kk * s.m + i] << y.shift); // column i of B
    }
  std::vector<float> c(64 * regs);
  for (unsigned i = 0; i < s.m; ++i)
    for (unsigned j = 0; j < s.m; ++j) {
      auto [lane, r] = placeD(s, i, j);
      c[lane * regs + r] = t.C[i * s.m + j];
    }
  Device dev = Device::emulator("gfx950");
  auto ba = dev.upload(a), bb = dev.upload(b);
  auto bc = dev.upload(c);
  auto bd = dev.upload(std::vector<float>(c.size(), std::nanf("")));
  const bool scaled = !t.sa.empty();
  auto bsa = dev.upload(scaled ? t.sa : std::vector<uint32_t>(64)), bsb = dev.upload(scaled ? t.sb : std::vector<uint32_t>(64));
  testing::launchOnOneWave(dev, kernelIR(s, t.fa, t.fb, ra, rb, scaled),
                           {ba.devicePtr(), bb.devicePtr(), bc.devicePtr(),
                            bd.devicePtr(), bsa.devicePtr(), bsb.devicePtr()});
  return fromLanes(s, bd.download(), regs);
}

double scaleValue(uint32_t reg) {
  const unsigned s = reg & 255u;
  return s == 255 ? NAN : std::ldexp(1.0, int(s) - 127);
}

// The host's D: C + sum over K in order of (A * its scale) (B * its scale),
// in double, rounded once.
std::vector<float> reference(const Case &t) {
  const MfmaShape &s = t.s;
  std::vector<float> out(s.m * s.m);
  for (unsigned i = 0; i < s.m; ++i)
    for (unsigned j = 0; j < s.m; ++j) {
      double sum = t.C[i * s.m + j];
      for (unsigned kk = 0; kk < s.k; ++kk) {
        double x = decode(t.A[i * s.k + kk], t.fa), y = decode(t.B[kk * s.m + j], t.fb);
        if (!t.sa.empty()) {
          x *= scaleValue(t.sa[i + s.m * (kk / 32)]);
          y *= scaleValue(t.sb[j + s.m * (kk / 32)]);
        }
        sum += x * y;
      }
      out[i * s.m + j] = float(sum);
    }
  return out;
}

Case randomCase(const MfmaShape &s, int fa, int fb, unsigned seed, bool scaled) {
  std::mt19937 gen(seed);
  Case t{s, fa, fb, std::vector<uint8_t>(s.m * s.k), std::vector<uint8_t>(s.k * s.m), std::vector<float>(s.m * s.m),
         {}, {}};
  for (uint8_t &v : t.A) v = finiteCode(gen, fa);
  for (uint8_t &v : t.B) v = finiteCode(gen, fb);
  for (float &v : t.C) v = float(std::uniform_int_distribution<int>(-64, 64)(gen)) * 0.25f;
  if (scaled) {
    t.sa.resize(64);
    t.sb.resize(64);
    for (uint32_t &v : t.sa) v = uint32_t(std::uniform_int_distribution<int>(120, 134)(gen));
    for (uint32_t &v : t.sb) v = uint32_t(std::uniform_int_distribution<int>(120, 134)(gen));
  }
  return t;
}

} // namespace

TEST_CASE("emulator: the host's E2M1 table is OCP's: every code from sign, exponent (bias 1) and mantissa") {
  for (unsigned code = 0; code < 16; ++code) {
    const unsigned e = (code >> 1) & 3, m = code & 1;
    const double magnitude = e == 0 ? m * 0.5 : std::ldexp(1.0 + m * 0.5, int(e) - 1);
    CHECK(decode(uint8_t(code), 4) == ((code & 8) ? -magnitude : magnitude));
  }
  CHECK(decode(7, 4) == 6.0);
  CHECK(decode(15, 4) == -6.0);
  CHECK(std::signbit(decode(8, 4)));
}

// Every pair of nibble values meets in some product: row i of A holds code
// (i + kk) % 16 at K kk, column j of B code (j + 3 kk) % 16; D's row i,
// column j is the exact sum, and a wrong value for any code changes it.
// (A K order both FP4 operands share sums the same products: a nibble order
// swapped in A and B alike shows only beside an 8-bit operand, in the mixed
// formats' case below.)
TEST_CASE("emulator: gfx950's f8f6f4 MFMAs on FP4 x FP4, every nibble value, both shapes") {
  for (const MfmaShape &s : {k32, k16}) {
    CAPTURE(s.m);
    Case t{s, 4, 4, std::vector<uint8_t>(s.m * s.k), std::vector<uint8_t>(s.k * s.m), std::vector<float>(s.m * s.m, 0.0f),
           {}, {}};
    for (unsigned i = 0; i < s.m; ++i)
      for (unsigned kk = 0; kk < s.k; ++kk) {
        t.A[i * s.k + kk] = uint8_t((i + kk) % 16);
        t.B[kk * s.m + i] = uint8_t((i + 3 * kk) % 16);
      }
    std::vector<float> got = run(t), want = reference(t);
    CHECK(mismatches(got, want) == 0);
    // One element by hand: D[0][0] = sum over K of e2m1(kk % 16) * e2m1(3 kk % 16).
    double d00 = 0;
    for (unsigned kk = 0; kk < s.k; ++kk)
      d00 += decode(uint8_t(kk % 16), 4) * decode(uint8_t((3 * kk) % 16), 4);
    CHECK(got[0] == float(d00));
  }
}

// One nonzero A element a row, at a K that walks every nibble of every lane
// group: D's row i is that element times B's row K, so a K placed in
// another lane or byte picks another row of B. B is E4M3, placed by the
// 8-bit rule: with B in FP4 too, a placement both operands share wrongly
// (nibbles or lane groups swapped) would cancel out.
TEST_CASE("emulator: gfx950's f8f6f4 MFMAs on FP4 place K in consecutive nibbles, low nibble first") {
  for (const MfmaShape &s : {k32, k16})
    for (unsigned shift = 0; shift < s.k; shift += s.m) {
      CAPTURE(s.m);
      CAPTURE(shift);
      Case t{s, 4, 0, std::vector<uint8_t>(s.m * s.k, 0), std::vector<uint8_t>(s.k * s.m), std::vector<float>(s.m * s.m, 0.0f),
             {}, {}};
      for (unsigned i = 0; i < s.m; ++i)
        t.A[i * s.k + (i + shift) % s.k] = 2; // 1.0
      for (unsigned kk = 0; kk < s.k; ++kk)
        for (unsigned j = 0; j < s.m; ++j)
          t.B[kk * s.m + j] = uint8_t((kk * 7 + j) % 16);
      std::vector<float> got = run(t);
      for (unsigned i = 0; i < s.m; ++i)
        for (unsigned j = 0; j < s.m; ++j)
          CHECK(got[i * s.m + j] == float(decode(t.B[((i + shift) % s.k) * s.m + j], 0)));
    }
}

// An 8-bit operand beside an FP4 one: the two layouts must agree on every
// K (lane, byte and nibble: the low nibble first).
TEST_CASE("emulator: gfx950's f8f6f4 MFMAs mix FP4 with E4M3 and E5M2, unscaled and scaled") {
  unsigned seed = 41;
  for (const MfmaShape &s : {k32, k16})
    for (auto [fa, fb] : {std::pair{4, 0}, std::pair{0, 4}, std::pair{4, 1}, std::pair{1, 4}, std::pair{4, 4}})
      for (bool scaled : {false, true}) {
        CAPTURE(s.m);
        CAPTURE(fa);
        CAPTURE(fb);
        CAPTURE(scaled);
        Case t = randomCase(s, fa, fb, seed++, scaled);
        CHECK(mismatches(run(t), reference(t)) == 0);
      }
}

TEST_CASE("emulator: an FP4 operand of 8 registers reads its first 4 only") {
  for (const MfmaShape &s : {k32, k16}) {
    Case t = randomCase(s, 4, 4, 77, true);
    t.wide = true;
    std::vector<float> want = reference(t);
    CHECK(mismatches(run(t, 0x00), want) == 0);
    CHECK(mismatches(run(t, 0x77), want) == 0); // 6.0 in every nibble past the 16th byte
  }
}

TEST_CASE("emulator: an f8f6f4 MFMA with FP6 formats or a short operand is refused with a message") {
  Device dev = Device::emulator("gfx950");
  auto load = [&](const std::string &ir) {
    CompiledKernel k = testing::kernelFromIR("matrix", ir, std::vector<TraceArg>(6, {TraceArg::Pointer, DType::I8}));
    k.arch = "gfx950";
    dev.impl().load(k);
  };
  CHECK_THROWS_WITH_AS(load(kernelIR(k32, 2, 0, 8, 8, false)),
                       doctest::Contains("on E4M3, E5M2 and E2M1 (formats 0, 1 and 4) only; cbsz is 2 (FP6)"), Error);
  CHECK_THROWS_WITH_AS(load(kernelIR(k16, 0, 3, 8, 8, true)), doctest::Contains("blgp is 3 (FP6)"), Error);
  CHECK_THROWS_WITH_AS(load(kernelIR(k32, 0, 4, 4, 4, false)),
                       doctest::Contains("with cbsz 0 reads 32 bytes of A, which has 16"), Error);
  CHECK_NOTHROW(load(kernelIR(k32, 4, 0, 4, 8, false)));
  CHECK_NOTHROW(load(kernelIR(k16, 4, 4, 8, 4, true)));
}
