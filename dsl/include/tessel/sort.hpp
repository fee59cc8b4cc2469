// Sorting along an axis: sort (keys, with payloads that move with them),
// argsort and topk. One bitonic network on the GPU: within a thread's
// registers, across the lanes of a wave, across waves through LDS.
#pragma once

#include "tessel/ops.hpp"

#include <optional>
#include <source_location>
#include <tuple>
#include <type_traits>

namespace tessel {

// axis: negative counts from the end. descending: largest first. stable:
// equal keys keep their order along the axis (costs a hidden index per
// element, unless a payload is each element's position along the axis
// already: arange(0, n) along it, broadcast across any other axes, as
// argsort and topk pass). Floats put NaN above every number: last
// ascending, first descending, as torch.sort. valid: where false (the
// padding of a line shorter than the tile, e.g. offs < n), elements sort
// after every valid one whatever their keys.
struct SortOptions {
  int axis = -1;
  bool descending = false;
  bool stable = false;
  std::optional<Tile<bool>> valid = {};
};

namespace detail {
// The `valid` option's value, if given.
template <class O> std::optional<ValueRef> validOf(const O &o) {
  return o.valid ? std::optional<ValueRef>(o.valid->ref()) : std::nullopt;
}
inline const ValueRef *ptrOf(const std::optional<ValueRef> &v) { return v ? &*v : nullptr; }
template <class K> consteval void checkSortKeys() {
  static_assert((std::is_arithmetic_v<K> || std::is_same_v<K, half> || std::is_same_v<K, bfloat16>) &&
                    !std::is_same_v<K, bool>,
                "tessel: sort keys are integer or floating-point tiles");
}
} // namespace detail

// Sorts `keys` along an axis.
template <class K>
Tile<K> sort(const Tile<K> &keys, SortOptions o = {}, source_location loc = source_location::current()) {
  detail::checkSortKeys<K>();
  return Tile<K>(detail::emitSort({"sort", detail::toSourceLoc(loc)}, {keys.ref()}, o.axis, o.descending, o.stable,
                                  detail::ptrOf(detail::validOf(o)))[0]);
}
// Sorts `keys`; `payload` moves with its keys (an index tile gives argsort).
template <class K, class P>
std::tuple<Tile<K>, Tile<P>> sort(const Tile<K> &keys, const Tile<P> &payload, SortOptions o = {},
                                  source_location loc = source_location::current()) {
  detail::checkSortKeys<K>();
  auto r = detail::emitSort({"sort", detail::toSourceLoc(loc)}, {keys.ref(), payload.ref()}, o.axis, o.descending,
                            o.stable, detail::ptrOf(detail::validOf(o)));
  return {Tile<K>(r[0]), Tile<P>(r[1])};
}
template <class K, class P, class Q>
std::tuple<Tile<K>, Tile<P>, Tile<Q>> sort(const Tile<K> &keys, const Tile<P> &p, const Tile<Q> &q, SortOptions o = {},
                                           source_location loc = source_location::current()) {
  detail::checkSortKeys<K>();
  auto r = detail::emitSort({"sort", detail::toSourceLoc(loc)}, {keys.ref(), p.ref(), q.ref()}, o.axis, o.descending,
                            o.stable, detail::ptrOf(detail::validOf(o)));
  return {Tile<K>(r[0]), Tile<P>(r[1]), Tile<Q>(r[2])};
}

// The positions along the axis (i32) that sort `x`.
template <class K>
Tile<int32_t> argsort(const Tile<K> &x, SortOptions o = {}, source_location loc = source_location::current()) {
  detail::checkSortKeys<K>();
  return Tile<int32_t>(detail::emitArgsort({"argsort", detail::toSourceLoc(loc)}, x.ref(), o.axis, o.descending,
                                            o.stable, detail::ptrOf(detail::validOf(o))));
}

struct TopkOptions {
  int axis = -1;
  bool largest = true;
  std::optional<Tile<bool>> valid = {}; // as SortOptions::valid
};

// The k largest (or smallest) of `x` along the axis, sorted, and their
// positions along it (Index: int32_t or int64_t); ties: the earlier
// position first. Tiles have power-of-two extents: the results hold the
// first bit_ceil(k) of the sorted order (the elements past k are the next
// ones), so a k of 3 gives 4; mask on `< k` where that matters.
template <class Index = int32_t, class K>
std::tuple<Tile<K>, Tile<Index>> topk(const Tile<K> &x, int64_t k, TopkOptions o = {},
                                      source_location loc = source_location::current()) {
  detail::checkSortKeys<K>();
  static_assert(std::is_same_v<Index, int32_t> || std::is_same_v<Index, int64_t>,
                "tessel: topk's indices are int32_t or int64_t");
  auto [v, i] = detail::emitTopk({"topk", detail::toSourceLoc(loc)}, x.ref(), k, o.axis, o.largest,
                                 detail::dtypeOfScalar<Index>(), detail::ptrOf(detail::validOf(o)));
  return {Tile<K>(v), Tile<Index>(i)};
}

} // namespace tessel
