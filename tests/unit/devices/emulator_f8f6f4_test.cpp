// The emulator's gfx950 f8f6f4 MFMAs (V_MFMA_F32_32X32X64_F8F6F4 and
// V_MFMA_F32_16X16X128_F8F6F4 on 8-bit floats; LLVM's intrinsic is the
// scaled form, zero scales being the unscaled instruction) against plain
// host math. A handwritten kernel loads each lane's 32 bytes of A and of B
// and its C registers, runs the intrinsic and stores D; the host places the
// matrices as AMD's guide to CDNA3/CDNA4 matrix cores draws them for
// 32x32x64 FP8 (lane i + 32 g of row i holds K 16 g + [0, 16) in its
// bytes 0-15 and 32 + 16 g + [0, 16) in bytes 16-31), the 16x16x128 form
// with its four lane groups alike. The formats are the cbsz (A) and blgp
// (B) operands: 0 E4M3, 1 E5M2, OCP's (gfx950).
//
// The reference decodes every code from the formats' definitions, multiplies
// exactly and sums in double in order of K from C, rounding to f32 once
// (the emulator's model of the accumulation, as for its other MFMAs).
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

std::string kernelIR(const MfmaShape &s, int formatA, int formatB, const std::string &scaleA = "0",
                     const std::string &scaleB = "0") {
  const std::string acc = s.accType, name = s.intrinsic;
  return "declare i32 @llvm.amdgcn.workitem.id.x()\n"
         "declare " + acc + " @" + name + "(<8 x i32>, <8 x i32>, " + acc +
         ", i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32)\n"
         "define amdgpu_kernel void @matrix(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, "
         "ptr addrspace(1) %d) {\n"
         "  %lane = call i32 @llvm.amdgcn.workitem.id.x()\n"
         "  %l = zext i32 %lane to i64\n"
         "  %pa = getelementptr <8 x i32>, ptr addrspace(1) %a, i64 %l\n"
         "  %va = load <8 x i32>, ptr addrspace(1) %pa\n"
         "  %pb = getelementptr <8 x i32>, ptr addrspace(1) %b, i64 %l\n"
         "  %vb = load <8 x i32>, ptr addrspace(1) %pb\n"
         "  %pc = getelementptr " + acc + ", ptr addrspace(1) %c, i64 %l\n"
         "  %vc = load " + acc + ", ptr addrspace(1) %pc\n"
         "  %vd = call " + acc + " @" + name + "(<8 x i32> %va, <8 x i32> %vb, " + acc + " %vc, i32 " +
         std::to_string(formatA) + ", i32 " + std::to_string(formatB) + ", i32 0, i32 " + scaleA + ", i32 0, i32 " +
         scaleB + ")\n"
         "  %pd = getelementptr " + acc + ", ptr addrspace(1) %d, i64 %l\n"
         "  store " + acc + " %vd, ptr addrspace(1) %pd\n"
         "  ret void\n}\n";
}

// D = A * B + C by the emulator, for codes A[m][k], B[k][n] and f32 C[m][n].
std::vector<float> run(const MfmaShape &s, int formatA, int formatB, const std::vector<uint8_t> &A,
                       const std::vector<uint8_t> &B, const std::vector<float> &C) {
  Device dev = Device::emulator("gfx950");
  const unsigned regs = s.m * s.m / 64;
  std::vector<uint8_t> a(64 * 32), b(64 * 32);
  std::vector<float> c(64 * regs);
  for (unsigned i = 0; i < s.m; ++i)
    for (unsigned kk = 0; kk < s.k; ++kk) {
      auto [lane, byte] = place(s, i, kk);
      a[lane * 32 + byte] = A[i * s.k + kk];
      b[lane * 32 + byte] = B[kk * s.m + i]; // column i of B
    }
  for (unsigned i = 0; i < s.m; ++i)
    for (unsigned j = 0; j < s.m; ++j) {
      auto [lane, r] = placeD(s, i, j);
      c[lane * regs + r] = C[i * s.m + j];
    }
  auto ba = dev.upload(a), bb = dev.upload(b);
  auto bc = dev.upload(c);
  auto bd = dev.upload(std::vector<float>(c.size(), std::nanf("")));
  testing::launchOnOneWave(dev, kernelIR(s, formatA, formatB),
                           {ba.devicePtr(), bb.devicePtr(), bc.devicePtr(), bd.devicePtr()});
  return fromLanes(s, bd.download(), regs);
}

// The host's D: C + sum over K in order, in double, rounded once.
std::vector<float> reference(const MfmaShape &s, int formatA, int formatB, const std::vector<uint8_t> &A,
                             const std::vector<uint8_t> &B, const std::vector<float> &C) {
  std::vector<float> out(s.m * s.m);
  for (unsigned i = 0; i < s.m; ++i)
    for (unsigned j = 0; j < s.m; ++j) {
      double sum = C[i * s.m + j];
      for (unsigned kk = 0; kk < s.k; ++kk)
        sum += decode(A[i * s.k + kk], formatA) * decode(B[kk * s.m + j], formatB);
      out[i * s.m + j] = float(sum);
    }
  return out;
}


} // namespace

TEST_CASE("emulator: gfx950's f8f6f4 MFMAs compute C + A * B for every format pair, exact products in K order") {
  unsigned seed = 5;
  for (const MfmaShape &s : {k32, k16})
    for (int fa : {0, 1})
      for (int fb : {0, 1}) {
        CAPTURE(s.intrinsic);
        CAPTURE(fa);
        CAPTURE(fb);
        std::mt19937 gen(seed++);
        std::vector<uint8_t> A(s.m * s.k), B(s.k * s.m);
        for (uint8_t &v : A) v = finiteCode(gen, fa);
        for (uint8_t &v : B) v = finiteCode(gen, fb);
        std::vector<float> C(s.m * s.m);
        for (float &v : C) v = float(std::uniform_int_distribution<int>(-64, 64)(gen)) * 0.25f;
        CHECK(mismatches(run(s, fa, fb, A, B, C), reference(s, fa, fb, A, B, C)) == 0);
      }
}

// Products far apart: 2^30 (E5M2 2^15 squared), then 2^-28, then -2^30 along
// K. Summed in order of K the small product is lost (below half an ulp of
// 2^30 in double) and D = C; in any other order of those three positions it
// survives. The positions sit in different lane groups and halves of a
// lane's bytes, so a layout that put K elsewhere would sum them in another
// order.
TEST_CASE("emulator: gfx950's f8f6f4 MFMAs add products in order of K") {
  const uint8_t big = 0x78, tiny = 0x04, negBig = 0xF8; // E5M2: 2^15, 2^-14, -2^15
  REQUIRE(decode(big, 1) == 32768.0);
  REQUIRE(decode(tiny, 1) == std::ldexp(1.0, -14));
  for (const MfmaShape &s : {k32, k16}) {
    CAPTURE(s.intrinsic);
    std::vector<uint8_t> A(s.m * s.k, 0), B(s.k * s.m, 0);
    const unsigned first = 3, second = 16 + 5, third = s.k / 2 + 7; // group 0, group 1 low half, high half
    for (unsigned i = 0; i < s.m; ++i) {
      A[i * s.k + first] = big;
      A[i * s.k + second] = tiny;
      A[i * s.k + third] = negBig;
    }
    for (unsigned j = 0; j < s.m; ++j) {
      B[first * s.m + j] = big;
      B[second * s.m + j] = tiny;
      B[third * s.m + j] = big;
    }
    std::vector<float> C(s.m * s.m, 0.0f);
    std::vector<float> got = run(s, 1, 1, A, B, C);
    CHECK(mismatches(got, reference(s, 1, 1, A, B, C)) == 0);
    CHECK(got[0] == 0.0f); // in K order: (2^30 + 2^-28) - 2^30 = 0 in double
  }
}

TEST_CASE("emulator: gfx950's f8f6f4 MFMAs on NaN and infinity: NaN in, NaN out; inf * 0 and inf - inf are NaN") {
  const MfmaShape &s = k32;
  // A is E5M2 (infinities), B E4M3.
  const uint8_t inf = 0x7C, negInf = 0xFC, nanE5 = 0x7E, nanE4 = 0x7F, oneE5 = 0x3C, oneE4 = 0x38;
  REQUIRE(decode(inf, 1) == INFINITY);
  REQUIRE(std::isnan(decode(nanE5, 1)));
  REQUIRE(std::isnan(decode(nanE4, 0)));
  REQUIRE(decode(oneE5, 1) == 1.0);
  REQUIRE(decode(oneE4, 0) == 1.0);
  std::vector<uint8_t> A(s.m * s.k, 0), B(s.k * s.m, 0);
  std::vector<float> C(s.m * s.m, 1.0f);
  for (unsigned j = 0; j < s.m; ++j)
    for (unsigned kk : {40u, 41u, 50u})
      B[kk * s.m + j] = oneE4;
  A[0 * s.k + 9] = nanE5;  // row 0: NaN times zero
  A[1 * s.k + 40] = inf;   // row 1: inf + inf
  A[1 * s.k + 41] = inf;
  A[2 * s.k + 40] = inf;   // row 2: inf - inf
  A[2 * s.k + 50] = negInf;
  A[3 * s.k + 60] = inf;   // row 3: inf times zero
  A[4 * s.k + 33] = oneE5; // row 4 meets B's NaN in column 5 (every row does: 0 * NaN)
  B[33 * s.m + 5] = nanE4;
  std::vector<float> got = run(s, 1, 0, A, B, C), want = reference(s, 1, 0, A, B, C);
  CHECK(mismatches(got, want) == 0);
  CHECK(std::isnan(got[0 * s.m + 7]));
  CHECK(got[1 * s.m + 7] == INFINITY);
  CHECK(std::isnan(got[2 * s.m + 7]));
  CHECK(std::isnan(got[3 * s.m + 7]));
  CHECK(std::isnan(got[4 * s.m + 5]));
  CHECK(std::isnan(got[9 * s.m + 5]));
  CHECK(got[4 * s.m + 6] == 1.0f);
  CHECK(got[5 * s.m + 7] == 1.0f);
}

TEST_CASE("emulator: an f8f6f4 MFMA with FP6 formats is refused with a message") {
  Device dev = Device::emulator("gfx950");
  auto load = [&](const std::string &ir) {
    CompiledKernel k = testing::kernelFromIR("matrix", ir, std::vector<TraceArg>(4, {TraceArg::Pointer, DType::I8}));
    k.arch = "gfx950";
    dev.impl().load(k);
  };
  CHECK_THROWS_WITH_AS(load(kernelIR(k32, 2, 0)), doctest::Contains("(formats 0, 1 and 4) only; cbsz is 2 (FP6)"),
                       Error);
  CHECK_THROWS_WITH_AS(load(kernelIR(k16, 0, 5)), doctest::Contains("blgp is 5"), Error);
  CHECK_NOTHROW(load(kernelIR(k16, 0, 4))); // FP4 (emulator_fp4_test.cpp)
  CHECK_NOTHROW(load(kernelIR(k32, 1, 0)));
  CHECK_NOTHROW(load(kernelIR(k32, 0, 0, "127", "1"))); // constant scales: the scaled instruction
}
