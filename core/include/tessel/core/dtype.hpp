// Element types of tiles as the compiler sees them (the C++ types are in
// dsl's types.hpp). constexpr so the kernarg rule can use them at compile time.
#pragma once

#include <cstdint>

namespace tessel {

// The 8-bit floats come last (isFloat relies on the order): OCP's E4M3FN
// and E5M2 (gfx950's conversions and matrix cores), and the FNUZ variants
// gfx942 computes with (bias one more, one NaN 0x80, no -0, no infinity).
enum class DType : uint8_t { I1, I8, I16, I32, I64, F16, BF16, F32, F64, F8E4M3FN, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ };

// dot_scaled's operand formats (Triton's tl.dot_scaled): MX e2m1 (two a
// byte), e4m3, e5m2, or plain bf16 / fp16. tessel.dot_scaled's a_format and
// b_format attributes hold these values.
enum class MxFormat { e2m1, e4m3, e5m2, bf16, fp16 };

// "i1", "f32", ...
constexpr const char *dtypeName(DType t) {
  switch (t) {
  case DType::I1: return "i1";
  case DType::I8: return "i8";
  case DType::I16: return "i16";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::F8E4M3FN: return "f8e4m3fn";
  case DType::F8E5M2: return "f8e5m2";
  case DType::F8E4M3FNUZ: return "f8e4m3fnuz";
  case DType::F8E5M2FNUZ: return "f8e5m2fnuz";
  }
  return "?";
}

// 1, 8, ..., 64
constexpr unsigned dtypeBits(DType t) {
  switch (t) {
  case DType::I1: return 1;
  case DType::I8: case DType::F8E4M3FN: case DType::F8E5M2: case DType::F8E4M3FNUZ: case DType::F8E5M2FNUZ:
    return 8;
  case DType::I16: case DType::F16: case DType::BF16: return 16;
  case DType::I32: case DType::F32: return 32;
  case DType::I64: case DType::F64: return 64;
  }
  return 0;
}

constexpr bool isFloat(DType t) { return t >= DType::F16; }

// One of the four 8-bit float formats.
constexpr bool isFloat8(DType t) { return t >= DType::F8E4M3FN; }

// The C++ type name of an element type, as users spell it in messages.
constexpr const char *dtypeCppName(DType t) {
  switch (t) {
  case DType::F8E4M3FN: return "float8_e4m3fn";
  case DType::F8E5M2: return "float8_e5m2";
  case DType::F8E4M3FNUZ: return "float8_e4m3fnuz";
  case DType::F8E5M2FNUZ: return "float8_e5m2fnuz";
  default: return dtypeName(t);
  }
}

} // namespace tessel
