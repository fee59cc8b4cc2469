// The emulator's gfx950 scaled MFMAs (V_MFMA_SCALE_F32_32X32X64_F8F6F4 and
// V_MFMA_SCALE_F32_16X16X128_F8F6F4: llvm.amdgcn.mfma.scale.*.f8f6f4 with
// scale operands that are not both constant zero) against plain host math.
// A handwritten kernel loads each lane's 32 bytes of A and B, its C
// registers and its two scale registers, runs the intrinsic with the byte
// selects (opsel) under test and stores D.
//
// The host's model, from AMD's "Matrix Core Programming on AMD CDNA3 and
// CDNA4" (ROCm blog: each 32 of K of a row of A has one E8M0 scale
// 2^(s - 127), one scale a lane, applied to the block's products before
// accumulation) and the lane mapping LLVM's and Triton's AMD backend agree
// on (Triton's chooseScaledMfmaScaleLayout): the scale of row i of A (column
// j of B) for K block g is byte `opsel` of lane i + m * g (j + n * g). A
// scale byte of 255 is NaN. Sums in double in order of K from C, rounded to
// f32 once, as for the unscaled form.
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

#include "emulator_ir.hpp"
#include "f8f6f4_host.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

// The wave form's entry (emulator_wave_ops.cpp calls it from a kernel run as
// whole waves; an f8f6f4 operand, 2 KiB a wave, keeps kernels from that form
// today, so it is called here directly) and the instruction ids.
extern "C" void tessel_emu_matrix_wave(int32_t id, uint32_t flags, const void *a, const void *b, const void *c,
                                       void *d, uint32_t aBytes, uint32_t bBytes, uint32_t cBytes, uint32_t dBytes,
                                       uint32_t wave, const uint32_t *scaleA, const uint32_t *scaleB);
namespace tessel::emu {
int matrixInstructionId(std::string_view intrinsic);
}

using namespace tessel;
using namespace tessel::f8f6f4;

namespace {

// The scale operands: the lane's register (loaded per lane) or a constant.
struct ScaleOperand {
  std::string constant; // empty: each lane's register from the scale buffer
  unsigned opsel = 0;
};

std::string kernelIR(const MfmaShape &s, int formatA, int formatB, const ScaleOperand &sa, const ScaleOperand &sb) {
  const std::string acc = s.accType, name = s.intrinsic;
  auto operand = [](const ScaleOperand &x, const char *loaded) { return x.constant.empty() ? std::string(loaded) : x.constant; };
  return testing::scaledMfmaKernelIR(name, "<8 x i32>", "<8 x i32>", acc, formatA, formatB, sa.opsel,
                                     operand(sa, "%vsa"), sb.opsel, operand(sb, "%vsb"));
}

struct Case {
  const MfmaShape &s;
  int fa = 0, fb = 0;
  std::vector<uint8_t> A, B;      // codes, A[m][k], B[k][n]
  std::vector<float> C;           // [m][n]
  std::vector<uint32_t> sa, sb;   // each lane's scale register
  ScaleOperand opA, opB;
};

// A case's A, B and C in each lane's registers (32 bytes of A and of B, C's
// `regs` floats), lane after lane.
struct LaneRegisters {
  unsigned regs;
  std::vector<uint8_t> a, b;
  std::vector<float> c;
};
LaneRegisters inLanes(const Case &t) {
  const MfmaShape &s = t.s;
  LaneRegisters r{s.m * s.m / 64, std::vector<uint8_t>(64 * 32), std::vector<uint8_t>(64 * 32), {}};
  r.c.resize(64 * r.regs);
  for (unsigned i = 0; i < s.m; ++i)
    for (unsigned kk = 0; kk < s.k; ++kk) {
      auto [lane, byte] = place(s, i, kk);
      r.a[lane * 32 + byte] = t.A[i * s.k + kk];
      r.b[lane * 32 + byte] = t.B[kk * s.m + i];
    }
  for (unsigned i = 0; i < s.m; ++i)
    for (unsigned j = 0; j < s.m; ++j) {
      auto [lane, reg] = placeD(s, i, j);
      r.c[lane * r.regs + reg] = t.C[i * s.m + j];
    }
  return r;
}

// D by the emulator.
std::vector<float> run(const Case &t) {
  const MfmaShape &s = t.s;
  Device dev = Device::emulator("gfx950");
  auto [regs, a, b, c] = inLanes(t);
  auto ba = dev.upload(a), bb = dev.upload(b);
  auto bc = dev.upload(c);
  auto bd = dev.upload(std::vector<float>(c.size(), std::nanf("")));
  auto bsa = dev.upload(t.sa), bsb = dev.upload(t.sb);
  testing::launchOnOneWave(dev, kernelIR(s, t.fa, t.fb, t.opA, t.opB),
                           {ba.devicePtr(), bb.devicePtr(), bc.devicePtr(),
                            bd.devicePtr(), bsa.devicePtr(), bsb.devicePtr()});
  return fromLanes(s, bd.download(), regs);
}

// E8M0: 2^(s - 127), 255 NaN.
double e8m0(unsigned s) { return s == 255 ? double(NAN) : std::ldexp(1.0, int(s) - 127); }

// The byte of a scale operand: the constant's or lane `lane`'s register's, at opsel.
unsigned scaleByte(const ScaleOperand &op, const std::vector<uint32_t> &regs, unsigned lane) {
  const uint32_t reg = op.constant.empty() ? regs[lane] : uint32_t(std::stoul(op.constant));
  return (reg >> (8 * op.opsel)) & 255u;
}

// Which lane holds the scale of row (column) r, K block g: the documented
// mapping, or another to show the test tells them apart.
using LaneOf = std::function<unsigned(const MfmaShape &, unsigned r, unsigned g)>;
const LaneOf documented = [](const MfmaShape &s, unsigned r, unsigned g) { return r + s.m * g; };
const LaneOf transposed = [](const MfmaShape &s, unsigned r, unsigned g) { return g + (64 / s.m) * r; };

std::vector<float> reference(const Case &t, const LaneOf &laneOf = documented) {
  const MfmaShape &s = t.s;
  std::vector<float> out(s.m * s.m);
  for (unsigned i = 0; i < s.m; ++i)
    for (unsigned j = 0; j < s.m; ++j) {
      double sum = t.C[i * s.m + j];
      for (unsigned kk = 0; kk < s.k; ++kk) {
        const unsigned g = kk / 32;
        const double x = decode(t.A[i * s.k + kk], t.fa) * e8m0(scaleByte(t.opA, t.sa, laneOf(s, i, g)));
        const double y = decode(t.B[kk * s.m + j], t.fb) * e8m0(scaleByte(t.opB, t.sb, laneOf(s, j, g)));
        sum += x * y;
      }
      out[i * s.m + j] = float(sum);
    }
  return out;
}


Case randomCase(const MfmaShape &s, int fa, int fb, unsigned seed, int lowScale, int highScale) {
  std::mt19937 gen(seed);
  Case t{s, fa, fb};
  t.A.resize(s.m * s.k);
  t.B.resize(s.k * s.m);
  for (uint8_t &v : t.A) v = finiteCode(gen, fa);
  for (uint8_t &v : t.B) v = finiteCode(gen, fb);
  t.C.resize(s.m * s.m);
  for (float &v : t.C) v = float(std::uniform_int_distribution<int>(-64, 64)(gen)) * 0.25f;
  std::uniform_int_distribution<int> scale(lowScale, highScale);
  for (auto *regs : {&t.sa, &t.sb}) {
    regs->resize(64);
    for (uint32_t &r : *regs)
      for (int byte = 0; byte < 4; ++byte)
        r |= uint32_t(scale(gen)) << (8 * byte);
  }
  return t;
}

} // namespace

TEST_CASE("emulator: gfx950's scaled MFMAs apply each lane's scale byte to its row's (column's) K block") {
  unsigned seed = 11;
  for (const MfmaShape &s : {k32, k16})
    for (auto [fa, fb] : {std::pair{0, 0}, std::pair{1, 0}, std::pair{0, 1}, std::pair{1, 1}})
      for (auto [selA, selB] : {std::pair{0u, 0u}, std::pair{1u, 2u}, std::pair{3u, 0u}, std::pair{2u, 3u}}) {
        CAPTURE(s.intrinsic);
        CAPTURE(fa);
        CAPTURE(fb);
        CAPTURE(selA);
        CAPTURE(selB);
        // Distinct scales in every lane and byte (2^-12 .. 2^12).
        Case t = randomCase(s, fa, fb, seed++, 115, 139);
        t.opA.opsel = selA;
        t.opB.opsel = selB;
        std::vector<float> got = run(t);
        CHECK(mismatches(got, reference(t)) == 0);
        // The test tells the documented lanes from their transpose.
        CHECK(mismatches(got, reference(t, transposed)) > s.m * s.m / 2);
      }
}

TEST_CASE("emulator: a scale of 127 is 1.0; 0 and 254 are 2^-127 and 2^127; a constant zero on one side is 2^-127") {
  for (const MfmaShape &s : {k32, k16}) {
    CAPTURE(s.intrinsic);
    Case t = randomCase(s, 0, 1, 3, 127, 127);
    std::vector<float> unscaled = run(Case{t.s, t.fa, t.fb, t.A, t.B, t.C, t.sa, t.sb, {"0"}, {"0"}});
    CHECK(mismatches(run(t), unscaled) == 0); // 127 everywhere: the unscaled instruction's D
    // A scaled by 2^127, B by 2^-127: the products are unchanged.
    std::fill(t.sa.begin(), t.sa.end(), 0xFEFEFEFEu);
    std::fill(t.sb.begin(), t.sb.end(), 0u);
    CHECK(mismatches(run(t), unscaled) == 0);
    CHECK(mismatches(run(t), reference(t)) == 0);
    // Alone, 2^127 overflows f32 (inf, -inf) and 2^-127 twice leaves C (or a rounding of it).
    std::fill(t.sb.begin(), t.sb.end(), 0x7F7F7F7Fu);
    std::vector<float> big = run(t);
    CHECK(mismatches(big, reference(t)) == 0);
    CHECK(std::count_if(big.begin(), big.end(), [](float v) { return std::isinf(v); }) > 0);
    std::fill(t.sa.begin(), t.sa.end(), 0u);
    std::fill(t.sb.begin(), t.sb.end(), 0u);
    CHECK(mismatches(run(t), reference(t)) == 0);
    CHECK(mismatches(run(t), t.C) == 0);
    // A constant zero beside a register is the scaled instruction: 2^-127 for A.
    std::fill(t.sb.begin(), t.sb.end(), 0x7F7F7F7Fu);
    t.opA.constant = "0";
    CHECK(mismatches(run(t), reference(t)) == 0);
    CHECK(mismatches(run(t), unscaled) > 0);
  }
}

TEST_CASE("emulator: a scale byte of 255 (E8M0 NaN) makes exactly its row's (column's) results NaN") {
  for (const MfmaShape &s : {k32, k16}) {
    CAPTURE(s.intrinsic);
    Case t = randomCase(s, 0, 0, 7, 120, 134);
    const unsigned row = 5, column = 9, blockA = 1, blockB = (64 / s.m) - 1;
    t.sa[row + s.m * blockA] = (t.sa[row + s.m * blockA] & ~0xFFu) | 0xFFu; // byte 0
    t.sb[column + s.m * blockB] |= 0xFFu << 16;                             // byte 2
    t.opB.opsel = 2;
    std::vector<float> got = run(t);
    CHECK(mismatches(got, reference(t)) == 0);
    for (unsigned i = 0; i < s.m; ++i)
      for (unsigned j = 0; j < s.m; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        CHECK(std::isnan(got[i * s.m + j]) == (i == row || j == column));
      }
  }
}

TEST_CASE("emulator: the wave form's matrix entry applies the scales as the fibers' does") {
  unsigned seed = 40;
  for (const MfmaShape &s : {k32, k16}) {
    CAPTURE(s.intrinsic);
    Case t = randomCase(s, 1, 0, seed++, 116, 138);
    t.opA.opsel = 2;
    t.opB.opsel = 1;
    auto [regs, a, b, c] = inLanes(t);
    std::vector<float> d(64 * regs, std::nanf(""));
    const std::string name = s.intrinsic;
    const int id = emu::matrixInstructionId(name);
    REQUIRE(id >= 0);
    // OCP, A's format 1 (E5M2), B's 0, scaled, opsel 2 and 1.
    const uint32_t flags = 4u | 1u << 3 | 0u << 6 | 1u << 9 | 2u << 10 | 1u << 12;
    tessel_emu_matrix_wave(id, flags, a.data(), b.data(), c.data(), d.data(), 32, 32, 4 * regs, 4 * regs, 64,
                           t.sa.data(), t.sb.data());
    std::vector<float> out(s.m * s.m);
    for (unsigned i = 0; i < s.m; ++i)
      for (unsigned j = 0; j < s.m; ++j) {
        auto [lane, r] = placeD(s, i, j);
        out[i * s.m + j] = d[lane * regs + r];
      }
    CHECK(mismatches(out, reference(t)) == 0);
    CHECK(mismatches(out, run(t)) == 0);
  }
}
