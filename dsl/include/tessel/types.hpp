// Element types of tiles as C++ types: the 16- and 8-bit float storage types,
// the pointer element, and the mapping from a C++ element type to its DType.
#pragma once

#include "tessel/core/dtype.hpp"

#include <bit>
#include <cstdint>
#include <type_traits>

namespace tessel {

// IEEE binary16 storage with host float conversion (round to nearest even),
// so host code can prepare and check f16 data.
struct half {
  uint16_t bits = 0;
  half() = default;
  constexpr half(float value) : bits(fromFloat(value)) {}
  constexpr operator float() const { return toFloat(bits); }
  static constexpr half fromBits(uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }

  static constexpr uint16_t fromFloat(float value) {
    uint32_t f = std::bit_cast<uint32_t>(value);
    uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
    uint32_t absBits = f & 0x7FFFFFFFu;
    if (absBits >= 0x7F800000u) // inf or NaN; NaN stays a (quiet) NaN
      return sign | (absBits > 0x7F800000u ? 0x7E00u : 0x7C00u);
    if (absBits >= 0x477FF000u) // rounds to >= 65520: overflow to inf
      return sign | 0x7C00u;
    int exponent = static_cast<int>(absBits >> 23) - 127;
    uint32_t mantissa = (absBits & 0x7FFFFFu) | 0x800000u; // with implicit 1
    // Bits to drop: 13 for normals, more for subnormals (exponent < -14).
    int shift = exponent >= -14 ? 13 : 13 + (-14 - exponent);
    if (shift > 24) // below half the smallest subnormal: rounds to zero
      return sign;
    uint32_t kept = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (kept & 1)))
      ++kept; // may carry into the exponent, which is the right result
    if (exponent >= -14)
      return sign | static_cast<uint16_t>(((exponent + 14) << 10) + kept);
    return sign | static_cast<uint16_t>(kept); // subnormal (or carried to min normal)
  }
  static constexpr float toFloat(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1Fu;
    uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0x1F)
      return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    if (exponent == 0) {
      // Subnormal: value = mantissa * 2^-24, exact in float.
      float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
      return sign ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }
};

// bfloat16 storage (the top half of a float), round to nearest even.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  constexpr bfloat16(float value) : bits(fromFloat(value)) {}
  constexpr operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
  static constexpr bfloat16 fromBits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  static constexpr uint16_t fromFloat(float value) {
    uint32_t f = std::bit_cast<uint32_t>(value);
    if ((f & 0x7FFFFFFFu) > 0x7F800000u) // NaN: keep it a quiet NaN
      return static_cast<uint16_t>((f >> 16) | 0x40u);
    f += 0x7FFFu + ((f >> 16) & 1u);
    return static_cast<uint16_t>(f >> 16);
  }
};

// An 8-bit float (OCP E4M3FN / E5M2, or the FNUZ variants of gfx942) as host
// storage, with host conversions so host code can prepare and check data.
// From float: round to nearest even; out of range is the format's overflow
// (E5M2: infinity; the others: NaN) unless `saturate`, which gives the
// largest finite value (NaN stays NaN), as the device's cast does. Tiles of
// these types are for storage, cast and dot: cast<float>(...) to compute.
template <DType Format> struct float8 {
  static_assert(isFloat8(Format), "tessel: float8<F> takes one of the four 8-bit float DTypes");
  static constexpr bool kFnuz = Format == DType::F8E4M3FNUZ || Format == DType::F8E5M2FNUZ;
  static constexpr int kMantissaBits = Format == DType::F8E4M3FN || Format == DType::F8E4M3FNUZ ? 3 : 2;
  static constexpr int kBias = (kMantissaBits == 3 ? 7 : 15) + (kFnuz ? 1 : 0);
  // The largest finite magnitude's code: E4M3FN's 0x7F is NaN, E5M2's 0x7C
  // infinity; the FNUZ formats use every code but 0x80.
  static constexpr DType kFormat = Format;
  static constexpr uint8_t kMaxCode = Format == DType::F8E4M3FN ? 0x7E : Format == DType::F8E5M2 ? 0x7B : 0x7F;

  uint8_t bits = 0;
  float8() = default;
  constexpr float8(float value) : bits(fromFloat(value)) {}
  constexpr operator float() const { return toFloat(bits); }
  static constexpr float8 fromBits(uint8_t b) {
    float8 h;
    h.bits = b;
    return h;
  }

  static constexpr uint8_t nanCode(uint8_t sign) { return kFnuz ? 0x80 : uint8_t(sign | 0x7F); }
  static constexpr uint8_t fromFloat(float value, bool saturate = false) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    const uint8_t sign = (f >> 31) ? 0x80 : 0;
    const uint32_t absBits = f & 0x7FFFFFFFu;
    if (absBits > 0x7F800000u)
      return nanCode(sign);
    const uint8_t overflow = saturate ? uint8_t(sign | kMaxCode)
                             : Format == DType::F8E5M2 ? uint8_t(sign | 0x7C)
                                                      : nanCode(sign);
    if (absBits == 0x7F800000u)
      return overflow;
    // Exponent and significand (implicit bit included) of the f32 value.
    const int exponent = absBits >= 0x800000u ? int(absBits >> 23) - 127 : -126;
    const uint32_t significand = (absBits & 0x7FFFFFu) | (absBits >= 0x800000u ? 0x800000u : 0u);
    const int minExponent = 1 - kBias; // of the normal numbers; subnormals share its scale
    const int shift = 23 - kMantissaBits + (exponent < minExponent ? minExponent - exponent : 0);
    uint32_t kept = shift > 31 ? 0 : significand >> shift;
    if (shift <= 31) {
      const uint64_t rest = significand & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
      if (rest > half || (rest == half && (kept & 1)))
        ++kept; // a carry into the exponent is the right result
    }
    // A normal's implicit bit adds one to the exponent field.
    const int64_t code = exponent >= minExponent ? (int64_t(exponent - minExponent) << kMantissaBits) + kept : kept;
    if (code > kMaxCode)
      return overflow;
    if (code == 0 && kFnuz)
      return 0; // no negative zero
    return uint8_t(sign | code);
  }
  static constexpr float toFloat(uint8_t b) {
    const uint32_t sign = uint32_t(b & 0x80) << 24;
    const uint32_t code = b & 0x7F;
    if (kFnuz ? b == 0x80 : Format == DType::F8E4M3FN ? code == 0x7F : code > 0x7C)
      return std::bit_cast<float>(0x7FC00000u | sign);
    if (Format == DType::F8E5M2 && code == 0x7C)
      return std::bit_cast<float>(0x7F800000u | sign);
    const uint32_t exponentField = code >> kMantissaBits, mantissa = code & ((1u << kMantissaBits) - 1);
    if (exponentField == 0) { // subnormal: mantissa * 2^(1 - bias - mantissa bits), exact
      const float scale = std::bit_cast<float>(uint32_t(127 + 1 - kBias - kMantissaBits) << 23);
      const float magnitude = float(mantissa) * scale;
      return sign ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | (exponentField - kBias + 127) << 23 | mantissa << (23 - kMantissaBits));
  }
};
using float8_e4m3fn = float8<DType::F8E4M3FN>;
using float8_e5m2 = float8<DType::F8E5M2>;
using float8_e4m3fnuz = float8<DType::F8E4M3FNUZ>;
using float8_e5m2fnuz = float8<DType::F8E5M2FNUZ>;

// The element type of a pointer tile: Tile<pointer_to<float>> holds pointers
// to float in global memory.
template <class T> struct pointer_to {
  using pointee = T;
};

template <class E> class Tile;
template <class T> struct Const;

namespace detail {

template <class T> inline constexpr bool always_false = false;

template <class E> struct is_pointer_elem : std::false_type {};

template <class E> struct is_fp8 : std::false_type {};
template <DType F> struct is_fp8<float8<F>> : std::true_type {};
// An 8-bit float: a storage element (load, store, cast, where, dot), not
// one arithmetic, comparisons or reductions take.
template <class E> inline constexpr bool is_fp8_elem = is_fp8<E>::value;
template <class T> struct is_pointer_elem<pointer_to<T>> : std::true_type {};

template <class E> struct is_tile : std::false_type {};
template <class E> struct is_tile<Tile<E>> : std::true_type {};

template <class T> struct is_const : std::false_type {};
template <class T> struct is_const<Const<T>> : std::true_type {};

// Numeric element C++ types (besides pointer_to<T> and the 8-bit floats).
template <class E>
inline constexpr bool is_scalar_elem =
    std::is_same_v<E, bool> || std::is_same_v<E, int8_t> || std::is_same_v<E, int16_t> ||
    std::is_same_v<E, int32_t> || std::is_same_v<E, int64_t> || std::is_same_v<E, half> ||
    std::is_same_v<E, bfloat16> || std::is_same_v<E, float> || std::is_same_v<E, double>;

// Element C++ types tiles may hold, besides pointer_to<T>.
template <class E> inline constexpr bool is_storage_elem = is_scalar_elem<E> || is_fp8_elem<E>;

template <class E>
inline constexpr bool is_float_elem = std::is_same_v<E, half> || std::is_same_v<E, bfloat16> ||
                                      std::is_same_v<E, float> || std::is_same_v<E, double>;
template <class E>
inline constexpr bool is_int_elem = is_scalar_elem<E> && !is_float_elem<E> && !std::is_same_v<E, bool>;

template <class E> consteval DType dtypeOfScalar() {
  if constexpr (std::is_same_v<E, bool>) return DType::I1;
  else if constexpr (std::is_same_v<E, int8_t>) return DType::I8;
  else if constexpr (std::is_same_v<E, int16_t>) return DType::I16;
  else if constexpr (std::is_same_v<E, int32_t>) return DType::I32;
  else if constexpr (std::is_same_v<E, int64_t>) return DType::I64;
  else if constexpr (std::is_same_v<E, half>) return DType::F16;
  else if constexpr (std::is_same_v<E, bfloat16>) return DType::BF16;
  else if constexpr (std::is_same_v<E, float>) return DType::F32;
  else if constexpr (std::is_same_v<E, double>) return DType::F64;
  else if constexpr (is_fp8_elem<E>) return E::kFormat;
  else {
    static_assert(always_false<E>, "tessel: tile elements are bool, int8_t, int16_t, int32_t, "
                                   "int64_t, half, bfloat16, float, double, float8_* or pointer_to<T>");
    return DType::I1;
  }
}

// DType of an element type; for pointers, the pointee's.
template <class E> struct elem_info {
  static constexpr DType dtype = dtypeOfScalar<E>();
  static constexpr bool isPtr = false;
};
template <class T> struct elem_info<pointer_to<T>> {
  static constexpr DType dtype = dtypeOfScalar<T>();
  static constexpr bool isPtr = true;
};

// `X` names an element type either directly (float) or through a tile alias (f32).
template <class X> struct elem_of { using type = X; };
template <class E> struct elem_of<Tile<E>> { using type = E; };
template <class X> using elem_of_t = typename elem_of<X>::type;

} // namespace detail
} // namespace tessel
