// The 8-bit float conversion instructions, as AMD's ISA documents define
// them: V_CVT_PK_FP8_F32 / V_CVT_PK_BF8_F32 (two f32 to two 8-bit floats in
// one word of the destination, the other word kept) and V_CVT_F32_FP8 /
// V_CVT_F32_BF8 (one byte of the source to f32). FP8 is E4M3, BF8 E5M2; the
// CDNA3 ISA (gfx942) defines them on the FNUZ encodings (exponent bias 8 and
// 16, 0x80 the one NaN, no -0, no infinity), CDNA4 (gfx950) on OCP's (bias 7
// and 15; E4M3FN has NaN S.1111.111 and no infinity, E5M2 is IEEE-like).
// Rounding is to nearest even; without the clamp bit (which the LLVM
// intrinsics do not expose) a result whose magnitude rounds past the largest
// finite value is the format's overflow: infinity for E5M2, NaN otherwise.
//
// Written from the format definitions with double arithmetic (scale to the
// format's quantum, round, compare), not from the compiler's integer
// lowering, so that each checks the other.
#include "emulator_runtime.hpp"

#include "tessel/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tessel::emu {

namespace {

struct Format {
  int mantissaBits;
  int bias;
  bool fnuz;
  bool ieeeSpecials; // E5M2: exponent all ones is infinity / NaN
  bool e4m3fn;       // OCP E4M3: S.1111.111 is NaN, no infinity
};

Format formatOf(Fp8Encoding e) {
  switch (e) {
  case Fp8Encoding::E4M3Fnuz: return {3, 8, true, false, false};
  case Fp8Encoding::E5M2Fnuz: return {2, 16, true, false, false};
  case Fp8Encoding::E4M3Ocp: return {3, 7, false, false, true};
  case Fp8Encoding::E5M2Ocp: return {2, 15, false, true, false};
  }
  throw Error("unknown 8-bit float encoding");
}

// The largest finite magnitude: every exponent is usable in FNUZ; OCP E4M3
// gives up mantissa 111 of the top exponent (NaN), E5M2 the top exponent.
double maxFinite(const Format &f) {
  const int topExponent = (f.mantissaBits == 3 ? 15 : 31) - (f.ieeeSpecials ? 1 : 0) - f.bias;
  const int topMantissa = (1 << f.mantissaBits) - 1 - (f.e4m3fn ? 1 : 0);
  return std::ldexp(1.0 + double(topMantissa) / double(1 << f.mantissaBits), topExponent);
}

uint8_t nanOf(const Format &f, bool negative) {
  return f.fnuz ? 0x80 : uint8_t((negative ? 0x80 : 0) | 0x7F);
}

} // namespace

uint8_t convertToFp8(float x, Fp8Encoding encoding) {
  const Format f = formatOf(encoding);
  const bool negative = std::signbit(x);
  if (std::isnan(x))
    return nanOf(f, negative);
  const uint8_t sign = negative ? 0x80 : 0;
  const double a = std::fabs(double(x));
  const double largest = maxFinite(f);
  auto overflow = [&]() -> uint8_t { return f.ieeeSpecials ? uint8_t(sign | 0x7C) : nanOf(f, negative); };
  if (std::isinf(a))
    return overflow();
  // Quantum: 2^(E - m) for E the value's exponent, no less than the smallest
  // normal's (subnormals share it).
  const int minExponent = 1 - f.bias;
  const int exponent = a == 0 ? minExponent : std::max(std::ilogb(a), minExponent);
  const double quantum = std::ldexp(1.0, exponent - f.mantissaBits);
  const double steps = std::nearbyint(a / quantum); // exact division; ties to even (the default mode)
  const double rounded = steps * quantum;
  // Rounding past the top binade's last step is overflow, as the unbounded
  // format would round there.
  if (rounded > largest)
    return overflow();
  if (rounded == 0)
    return f.fnuz ? 0 : sign; // FNUZ has no -0
  // Encode the rounded value: exponent field and mantissa.
  const int e = std::ilogb(rounded);
  int exponentField, mantissa;
  if (e < minExponent) {
    exponentField = 0;
    mantissa = int(std::ldexp(rounded, f.mantissaBits - minExponent));
  } else {
    exponentField = e + f.bias;
    mantissa = int(std::ldexp(rounded, f.mantissaBits - e)) - (1 << f.mantissaBits);
  }
  return uint8_t(sign | (exponentField << f.mantissaBits) | mantissa);
}

float convertFromFp8(uint8_t bits, Fp8Encoding encoding) {
  const Format f = formatOf(encoding);
  const bool negative = bits & 0x80;
  const int exponentField = (bits & 0x7F) >> f.mantissaBits, mantissa = bits & ((1 << f.mantissaBits) - 1);
  const int topField = (1 << (7 - f.mantissaBits)) - 1;
  if (f.fnuz && bits == 0x80)
    return std::numeric_limits<float>::quiet_NaN();
  if (f.e4m3fn && exponentField == topField && mantissa == (1 << f.mantissaBits) - 1)
    return negative ? -std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::quiet_NaN();
  if (f.ieeeSpecials && exponentField == topField) {
    if (mantissa != 0)
      return negative ? -std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::quiet_NaN();
    return negative ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  const double magnitude = exponentField == 0
                               ? std::ldexp(double(mantissa), 1 - f.bias - f.mantissaBits)
                               : std::ldexp(1.0 + double(mantissa) / double(1 << f.mantissaBits), exponentField - f.bias);
  return float(negative ? -magnitude : magnitude);
}

} // namespace tessel::emu

using tessel::emu::Fp8Encoding;

// llvm.amdgcn.cvt.pk.fp8.f32 / .bf8.f32 (a, b, old, word_sel): a to byte 0
// and b to byte 1 of the selected 16-bit word (word_sel 1: the high one);
// the other word is old's. `encoding` says which format the target's
// instruction converts (the retargeting reads it from the target table).
extern "C" uint32_t tessel_emu_cvt_pk_fp8_f32(float a, float b, uint32_t old, uint32_t wordSel, uint32_t encoding) {
  const auto e = Fp8Encoding(encoding);
  const uint32_t pair = uint32_t(tessel::emu::convertToFp8(a, e)) | uint32_t(tessel::emu::convertToFp8(b, e)) << 8;
  return wordSel ? (old & 0x0000FFFFu) | pair << 16 : (old & 0xFFFF0000u) | pair;
}

// llvm.amdgcn.cvt.f32.fp8 / .bf8 (src, byte_sel): byte byte_sel of src.
extern "C" float tessel_emu_cvt_f32_fp8(uint32_t src, uint32_t byteSel, uint32_t encoding) {
  return tessel::emu::convertFromFp8(uint8_t(src >> (8 * (byteSel & 3))), Fp8Encoding(encoding));
}
