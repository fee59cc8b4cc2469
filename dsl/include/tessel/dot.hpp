// Matrix products: dot(a, b) and dot(a, b, acc), compiled for the matrix
// cores (MFMA on CDNA GPUs, WMMA on RDNA3).
#pragma once

#include "tessel/ops.hpp"

#include <source_location>
#include <type_traits>

namespace tessel {

namespace detail {

// The accumulator element type of dot over E (void: E is not a dot input).
// 8-bit floats accumulate in float, as the MFMAs that take them do.
template <class E>
using dot_acc_t = std::conditional_t<std::is_same_v<E, half> || std::is_same_v<E, bfloat16> ||
                                         std::is_same_v<E, float> || is_fp8_elem<E>,
                                     float, std::conditional_t<std::is_same_v<E, int8_t>, int32_t, void>>;

// Whether A of Ea and B of Eb may meet in one dot: the same type, or two
// 8-bit floats of one family (E4M3 with E5M2: gfx942's and gfx950's MFMAs
// take every mix of their family; no target's take OCP with FNUZ).
template <class Ea, class Eb> consteval bool dotOperandsMix() {
  if constexpr (std::is_same_v<Ea, Eb>)
    return true;
  else if constexpr (is_fp8_elem<Ea> && is_fp8_elem<Eb>)
    return Ea::kFnuz == Eb::kFnuz;
  else
    return false;
}

template <class Ea, class Eb, class Acc> consteval void checkDot() {
  static_assert(!std::is_void_v<dot_acc_t<Ea>> && !std::is_void_v<dot_acc_t<Eb>>,
                "tessel: dot takes half, bfloat16, float, int8_t or 8-bit float tiles (cast<T>(...) others first)");
  if constexpr (!std::is_void_v<dot_acc_t<Ea>> && !std::is_void_v<dot_acc_t<Eb>>) {
    if constexpr (is_fp8_elem<Ea> && is_fp8_elem<Eb>)
      static_assert(dotOperandsMix<Ea, Eb>(),
                    "tessel: dot mixes 8-bit floats of one family only: float8_e4m3fn with float8_e5m2 (OCP), "
                    "float8_e4m3fnuz with float8_e5m2fnuz (FNUZ); cast<T>(...) one operand to the other's family");
    else
      static_assert(dotOperandsMix<Ea, Eb>(),
                    "tessel: dot's operands have one element type (only 8-bit floats mix, E4M3 with E5M2); "
                    "cast<T>(...) one of them");
    static_assert(std::is_same_v<Acc, dot_acc_t<Ea>>,
                  "tessel: dot accumulates half, bfloat16, float and 8-bit float products in float, int8_t "
                  "products in int32_t");
  }
}

} // namespace detail

// a [M, K] times b [K, N] plus acc [M, N], accumulated in f32 (i32 for int8
// inputs): Triton's `acc = tl.dot(a, b, acc)`. M, N and K are powers of two
// (1 and up, as every tile dimension). It runs on the matrix cores (MFMA on
// CDNA, WMMA on RDNA3); blocks below an instruction's tile pad it. a and b
// have one element type, except 8-bit floats, which mix E4M3 with E5M2 of
// one family (float8_e4m3fnuz with float8_e5m2fnuz on gfx942,
// float8_e4m3fn with float8_e5m2 on gfx950).
template <class Ea, class Eb, class Acc>
Tile<Acc> dot(const Tile<Ea> &a, const Tile<Eb> &b, const Tile<Acc> &acc,
              source_location loc = source_location::current()) {
  detail::checkDot<Ea, Eb, Acc>();
  detail::ValueRef c = acc.ref();
  return Tile<Acc>(detail::emitDot({"dot", detail::toSourceLoc(loc)}, a.ref(), b.ref(), &c));
}

// a [M, K] times b [K, N] from a zero accumulator.
template <class Ea, class Eb>
Tile<detail::dot_acc_t<Ea>> dot(const Tile<Ea> &a, const Tile<Eb> &b,
                                source_location loc = source_location::current()) {
  detail::checkDot<Ea, Eb, detail::dot_acc_t<Ea>>();
  return Tile<detail::dot_acc_t<Ea>>(detail::emitDot({"dot", detail::toSourceLoc(loc)}, a.ref(), b.ref(), nullptr));
}

} // namespace tessel
