// Element types of tiles as the compiler sees them (the C++ types are in
// dsl's types.hpp). constexpr so the kernarg rule can use them at compile time.
#pragma once

#include <cstdint>

namespace tessel {

enum class DType : uint8_t { I1, I8, I16, I32, I64, F16, BF16, F32, F64 };

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
  }
  return "?";
}

// 1, 8, ..., 64
constexpr unsigned dtypeBits(DType t) {
  switch (t) {
  case DType::I1: return 1;
  case DType::I8: return 8;
  case DType::I16: case DType::F16: case DType::BF16: return 16;
  case DType::I32: case DType::F32: return 32;
  case DType::I64: case DType::F64: return 64;
  }
  return 0;
}

constexpr bool isFloat(DType t) { return t >= DType::F16; }

} // namespace tessel
