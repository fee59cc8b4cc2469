// Matrix products: dot(a, b) and dot(a, b, acc), compiled for the matrix
// cores (MFMA on CDNA GPUs).
#pragma once

#include "tessel/ops.hpp"

#include <source_location>
#include <type_traits>

namespace tessel {

namespace detail {

// The accumulator element type of dot over E (void: E is not a dot input).
template <class E>
using dot_acc_t = std::conditional_t<std::is_same_v<E, half> || std::is_same_v<E, bfloat16> || std::is_same_v<E, float>,
                                     float, std::conditional_t<std::is_same_v<E, int8_t>, int32_t, void>>;

template <class E, class Acc> consteval void checkDot() {
  static_assert(!std::is_void_v<dot_acc_t<E>>,
                "tessel: dot takes half, bfloat16, float or int8_t tiles (cast<T>(...) others first)");
  if constexpr (!std::is_void_v<dot_acc_t<E>>)
    static_assert(std::is_same_v<Acc, dot_acc_t<E>>,
                  "tessel: dot accumulates half, bfloat16 and float products in float, int8_t products in int32_t");
}

} // namespace detail

// a [M, K] times b [K, N] plus acc [M, N], accumulated in f32 (i32 for int8
// inputs): Triton's `acc = tl.dot(a, b, acc)`. M, N and K are powers of two
// (1 and up, as every tile dimension). It runs on the matrix cores (MFMA on
// CDNA, WMMA on RDNA3); blocks below an instruction's tile pad it.
template <class E, class Acc>
Tile<Acc> dot(const Tile<E> &a, const Tile<E> &b, const Tile<Acc> &acc,
              source_location loc = source_location::current()) {
  detail::checkDot<E, Acc>();
  detail::ValueRef c = acc.ref();
  return Tile<Acc>(detail::emitDot({"dot", detail::toSourceLoc(loc)}, a.ref(), b.ref(), &c));
}

// a [M, K] times b [K, N] from a zero accumulator.
template <class E>
Tile<detail::dot_acc_t<E>> dot(const Tile<E> &a, const Tile<E> &b, source_location loc = source_location::current()) {
  detail::checkDot<E, detail::dot_acc_t<E>>();
  return Tile<detail::dot_acc_t<E>>(detail::emitDot({"dot", detail::toSourceLoc(loc)}, a.ref(), b.ref(), nullptr));
}

} // namespace tessel
