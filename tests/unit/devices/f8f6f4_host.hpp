// Host facts the f8f6f4 MFMA tests share (emulator_f8f6f4_test.cpp,
// emulator_mx_scale_test.cpp, emulator_fp4_test.cpp): OCP's 8- and 4-bit
// float codes, the two shapes and
// where AMD's guide to CDNA3/CDNA4 matrix cores puts A's, B's and D's
// elements in the lanes. Written from those documents, not from the
// emulator.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace tessel::f8f6f4 {

// OCP's E2M1 (FP4, the f8f6f4 MFMAs' format 4) values by code 0-7, the
// OCP MX specification's table (no infinity or NaN; codes 8-15 negate).
constexpr double kE2m1[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};

// An OCP code's value: E4M3 (format 0: bias 7, no infinities, S.1111.111
// NaN), E5M2 (1: bias 15, S.11111.00 infinity, S.11111.xx NaN) or E2M1 (4:
// the low nibble).
inline double decode(uint8_t code, int format) {
  if (format == 4)
    return (code & 8) ? -kE2m1[code & 7] : kE2m1[code & 7];
  const bool e5 = format == 1;
  const unsigned mantissaBits = e5 ? 2 : 3, bias = e5 ? 15 : 7;
  const unsigned exp = (code & 0x7f) >> mantissaBits, man = code & ((1u << mantissaBits) - 1);
  const double sign = (code & 0x80) ? -1 : 1;
  if (e5 && exp == 31)
    return man ? NAN : sign * INFINITY;
  if (!e5 && exp == 15 && man == 7)
    return NAN;
  if (exp == 0)
    return sign * std::ldexp(double(man), 1 - int(bias) - int(mantissaBits));
  return sign * std::ldexp(double((1u << mantissaBits) | man), int(exp) - int(bias) - int(mantissaBits));
}

struct MfmaShape {
  const char *intrinsic; // LLVM's name with its overload suffixes
  unsigned m, k;         // m = n
  const char *accType;
};
constexpr MfmaShape k32{"llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32", 32, 64, "<16 x float>"};
constexpr MfmaShape k16{"llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32", 16, 128, "<4 x float>"};

// (lane, byte) of A[i][kk] (B[kk][i] alike, i its column): the guide's layout.
inline std::pair<unsigned, unsigned> place(const MfmaShape &s, unsigned i, unsigned kk) {
  const unsigned groups = 64 / s.m;
  const unsigned half = kk / (16 * groups), group = (kk / 16) % groups;
  return {i + s.m * group, 16 * half + kk % 16};
}
// (lane, nibble) of an FP4 A[i][kk] (B[kk][i] alike): the guide's FP4
// figure for 32x32x64, lane i + 32 g holds K 32 g + [0, 32) of row i in its
// first 16 bytes, two a byte, the lower K in the low nibble; 16x16x128's
// four lane groups alike.
inline std::pair<unsigned, unsigned> placeFp4(const MfmaShape &s, unsigned i, unsigned kk) {
  return {i + s.m * (kk / 32), kk % 32};
}
// (lane, register) of D[i][j]: CDNA3's, unchanged (32x32: lane j + 32 *
// ((i / 4) % 2), register 4 * (i / 8) + i % 4; 16x16: lane j + 16 * (i / 4),
// register i % 4).
inline std::pair<unsigned, unsigned> placeD(const MfmaShape &s, unsigned i, unsigned j) {
  if (s.m == 32) return {j + 32 * ((i / 4) % 2), 4 * (i / 8) + i % 4};
  return {j + 16 * (i / 4), i % 4};
}

// Equal, or both NaN.
// D as [m][n] from the lanes' `regs` registers a lane (placeD).
inline std::vector<float> fromLanes(const MfmaShape &s, const std::vector<float> &d, unsigned regs) {
  std::vector<float> out(s.m * s.m);
  for (unsigned i = 0; i < s.m; ++i)
    for (unsigned j = 0; j < s.m; ++j) {
      auto [lane, r] = placeD(s, i, j);
      out[i * s.m + j] = d[lane * regs + r];
    }
  return out;
}

inline bool same(float x, float y) { return (std::isnan(x) && std::isnan(y)) || x == y; }

inline size_t mismatches(const std::vector<float> &got, const std::vector<float> &want) {
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i)
    wrong += !same(got[i], want[i]);
  return wrong;
}

// Any finite code of `format` (NaN and infinity codes left out; E2M1: a
// nibble).
inline uint8_t finiteCode(std::mt19937 &gen, int format) {
  for (;;) {
    const uint8_t code = uint8_t(std::uniform_int_distribution<int>(0, format == 4 ? 15 : 255)(gen));
    if (std::isfinite(decode(code, format)))
      return code;
  }
}

} // namespace tessel::f8f6f4
