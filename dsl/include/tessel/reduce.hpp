// Reductions and scans. Each is one Reduce or Scan node whose combine
// function is traced once, on scalars, into the node's region; sum, max,
// argmax, cumsum, ... are that same node with a built-in combine, so the
// compiler has one code path for all of them.
#pragma once

#include "tessel/ops.hpp"

#include <cstddef>
#include <functional>
#include <source_location>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessel {

namespace detail {

template <class T> struct is_std_tuple : std::false_type {};
template <class... Ts> struct is_std_tuple<std::tuple<Ts...>> : std::true_type {};

// What `F` returns for the 2N scalar tiles of inputs Es (void: not callable).
template <class F, class... Es> auto combineResult() {
  if constexpr (std::is_invocable_v<F &, Tile<Es>..., Tile<Es>...>)
    return std::type_identity<std::remove_cvref_t<std::invoke_result_t<F &, Tile<Es>..., Tile<Es>...>>>{};
  else
    return std::type_identity<void>{};
}
template <class F, class... Es> using combine_result_t = typename decltype(combineResult<F, Es...>())::type;

// Compile-time checks of a combine function; Single: the one-tile form.
template <bool Single, class F, class... Es> consteval bool checkCombine() {
  static_assert((!is_pointer_elem<Es>::value && ...),
                "tessel: reductions and scans take numeric or bool tiles, not pointers");
  using R = combine_result_t<F, Es...>;
  if constexpr (std::is_void_v<R>) {
    static_assert(always_false<F>, "tessel: the combine function must take 2N scalar tiles (auto or Tile<E> "
                                   "parameters): N accumulated values, then N next values");
    return false;
  } else if constexpr (Single) {
    static_assert(std::is_same_v<R, Tile<Es...>>,
                  "tessel: the combine function must return one tile of the input's element type");
    return std::is_same_v<R, Tile<Es...>>;
  } else if constexpr (!is_std_tuple<R>::value) {
    static_assert(always_false<F>, "tessel: a combine function over a std::tuple of inputs must return a "
                                   "std::tuple of tiles, one per input");
    return false;
  } else if constexpr (std::tuple_size_v<R> != sizeof...(Es)) {
    static_assert(always_false<F>, "tessel: the combine function returns a std::tuple of the wrong size "
                                   "(it needs one tile per input)");
    return false;
  } else {
    static_assert(std::is_same_v<R, std::tuple<Tile<Es>...>>,
                  "tessel: the combine function's results must have the inputs' element types, in order");
    return std::is_same_v<R, std::tuple<Tile<Es>...>>;
  }
}

// Traces a reduce or scan over `inputs` with the user's combine.
template <bool Single, class F, class... Es>
std::tuple<Tile<Es>...> regionOp(Combining op, const OpSite &site, const std::tuple<Tile<Es>...> &inputs, int axis,
                                 bool flag, F &combine) {
  constexpr size_t n = sizeof...(Es);
  CombineFn fn = [&](const std::vector<ValueRef> &args) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      auto result = std::invoke(combine, Tile<Es>(args[I])..., Tile<Es>(args[n + I])...);
      if constexpr (Single)
        return std::vector<ValueRef>{result.ref()};
      else
        return std::vector<ValueRef>{std::get<I>(result).ref()...};
    }(std::index_sequence_for<Es...>{});
  };
  std::vector<ValueRef> refs = std::apply([](const auto &...t) { return std::vector<ValueRef>{t.ref()...}; }, inputs);
  std::vector<ValueRef> results = emitRegionOp(op, site, refs, axis, flag, fn);
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple<Tile<Es>...>(Tile<Es>(results[I])...);
  }(std::index_sequence_for<Es...>{});
}

template <class E>
using accumulate_t =
    std::conditional_t<std::is_same_v<E, bool> || (is_int_elem<E> && sizeof(E) < 4), int32_t,
                       std::conditional_t<std::is_same_v<E, half> || std::is_same_v<E, bfloat16>, float, E>>;

// Sums and products of narrow types accumulate in i32 (ints, bools) or f32
// (f16, bf16), as Triton's do.
template <class E> ValueRef toAccumulator(const OpSite &site, const Tile<E> &t) {
  if constexpr (std::is_same_v<accumulate_t<E>, E>) return t.ref();
  else if constexpr (std::is_same_v<accumulate_t<E>, float>) return emitCast(site, t.ref(), DType::F32);
  else return emitCast(site, t.ref(), DType::I32);
}

} // namespace detail

// ---- general forms ----

// Reduces `t` along `axis` (negative counts from the end) with `combine`, a
// callable taking two scalar tiles (accumulated, next) and returning their
// combination; it must be associative and commutative, and may use only its
// arguments and literals. The result drops `axis` (a scalar for 1-D input)
// unless keep_dims keeps it with size 1.
template <class E, class F>
Tile<E> reduce(const Tile<E> &t, int axis, F &&combine, bool keep_dims = false,
               source_location loc = source_location::current()) {
  if constexpr (detail::checkCombine<true, F, E>())
    return std::get<0>(detail::regionOp<true>(detail::Combining::Reduce, {"reduce", detail::toSourceLoc(loc)},
                                              std::tuple<Tile<E>>(t), axis, keep_dims, combine));
  else
    return t;
}

// Reduces N tiles of one shape together: combine(a0, b0, ..., a1, b1, ...)
// gets the N accumulated values, then the N next ones, and returns a
// std::tuple of N tiles. E.g. argmax is a reduce over (values, indices).
template <class... Es, class F>
std::tuple<Tile<Es>...> reduce(const std::tuple<Tile<Es>...> &inputs, int axis, F &&combine, bool keep_dims = false,
                               source_location loc = source_location::current()) {
  if constexpr (detail::checkCombine<false, F, Es...>())
    return detail::regionOp<false>(detail::Combining::Reduce, {"reduce", detail::toSourceLoc(loc)}, inputs, axis, keep_dims,
                                   combine);
  else
    return inputs;
}

// Inclusive scan of `t` along `axis` with `combine` (as in reduce); the
// result has t's shape. reverse scans from the end of the axis.
template <class E, class F>
Tile<E> associative_scan(const Tile<E> &t, int axis, F &&combine, bool reverse = false,
                         source_location loc = source_location::current()) {
  if constexpr (detail::checkCombine<true, F, E>())
    return std::get<0>(detail::regionOp<true>(detail::Combining::Scan, {"associative_scan", detail::toSourceLoc(loc)},
                                              std::tuple<Tile<E>>(t), axis, reverse, combine));
  else
    return t;
}

// Scans N tiles of one shape together (combine as in the tuple reduce).
template <class... Es, class F>
std::tuple<Tile<Es>...> associative_scan(const std::tuple<Tile<Es>...> &inputs, int axis, F &&combine,
                                         bool reverse = false, source_location loc = source_location::current()) {
  if constexpr (detail::checkCombine<false, F, Es...>())
    return detail::regionOp<false>(detail::Combining::Scan, {"associative_scan", detail::toSourceLoc(loc)}, inputs, axis,
                                   reverse, combine);
  else
    return inputs;
}

// ---- built-in reductions ----

// Sum along `axis`; bool, int8_t and int16_t tiles are summed as int32_t.
template <class E>
Tile<detail::accumulate_t<E>> sum(const Tile<E> &t, int axis, bool keep_dims = false,
                                  source_location loc = source_location::current()) {
  static_assert(detail::is_scalar_elem<E>, "tessel: sum needs a numeric tile");
  detail::OpSite site{"sum", detail::toSourceLoc(loc)};
  return Tile<detail::accumulate_t<E>>(
      detail::emitBinaryRegionOp(detail::Combining::Reduce, detail::Elementwise::Add, site, detail::toAccumulator(site, t), axis, keep_dims));
}

// Largest / smallest element along `axis`; a NaN anywhere makes the result NaN.
template <class E>
Tile<E> max(const Tile<E> &t, int axis, bool keep_dims = false, source_location loc = source_location::current()) {
  static_assert(detail::is_float_elem<E> || detail::is_int_elem<E>, "tessel: max and min need numeric tiles");
  return Tile<E>(detail::emitBinaryRegionOp(detail::Combining::Reduce, detail::Elementwise::Max, {"max", detail::toSourceLoc(loc)}, t.ref(),
                                            axis, keep_dims));
}
template <class E>
Tile<E> min(const Tile<E> &t, int axis, bool keep_dims = false, source_location loc = source_location::current()) {
  static_assert(detail::is_float_elem<E> || detail::is_int_elem<E>, "tessel: max and min need numeric tiles");
  return Tile<E>(detail::emitBinaryRegionOp(detail::Combining::Reduce, detail::Elementwise::Min, {"min", detail::toSourceLoc(loc)}, t.ref(),
                                            axis, keep_dims));
}

// Largest / smallest element along `axis` ignoring NaNs (NaN only when every
// element is NaN), as numpy's nanmax / nanmin; for ints the same as max /
// min. Cheaper than max / min on AMD GPUs: no NaN check per step.
template <class E>
Tile<E> nanmax(const Tile<E> &t, int axis, bool keep_dims = false, source_location loc = source_location::current()) {
  static_assert(detail::is_float_elem<E> || detail::is_int_elem<E>, "tessel: nanmax and nanmin need numeric tiles");
  return Tile<E>(detail::emitBinaryRegionOp(detail::Combining::Reduce, detail::Elementwise::MaxNum,
                                            {"nanmax", detail::toSourceLoc(loc)}, t.ref(), axis, keep_dims));
}
template <class E>
Tile<E> nanmin(const Tile<E> &t, int axis, bool keep_dims = false, source_location loc = source_location::current()) {
  static_assert(detail::is_float_elem<E> || detail::is_int_elem<E>, "tessel: nanmax and nanmin need numeric tiles");
  return Tile<E>(detail::emitBinaryRegionOp(detail::Combining::Reduce, detail::Elementwise::MinNum,
                                            {"nanmin", detail::toSourceLoc(loc)}, t.ref(), axis, keep_dims));
}

// Bitwise xor of the elements along `axis`; of a bool tile, a bool tile
// that is true where an odd number of elements are (as Triton's on int1).
template <class E>
Tile<E> xor_sum(const Tile<E> &t, int axis, bool keep_dims = false,
                source_location loc = source_location::current()) {
  static_assert(detail::is_int_elem<E> || std::is_same_v<E, bool>, "tessel: xor_sum needs an integer or bool tile");
  return Tile<E>(detail::emitBinaryRegionOp(detail::Combining::Reduce, detail::Elementwise::Xor, {"xor_sum", detail::toSourceLoc(loc)},
                                            t.ref(), axis, keep_dims));
}

// Index (i32) of the largest / smallest element along `axis`, the first one
// on ties. For floats a NaN counts as the largest (argmax) or smallest (argmin).
template <class E>
i32 argmax(const Tile<E> &t, int axis, bool keep_dims = false, source_location loc = source_location::current()) {
  static_assert(detail::is_float_elem<E> || detail::is_int_elem<E>, "tessel: argmax and argmin need numeric tiles");
  return i32(detail::emitArgReduce({"argmax", detail::toSourceLoc(loc)}, t.ref(), axis, keep_dims, true));
}
template <class E>
i32 argmin(const Tile<E> &t, int axis, bool keep_dims = false, source_location loc = source_location::current()) {
  static_assert(detail::is_float_elem<E> || detail::is_int_elem<E>, "tessel: argmax and argmin need numeric tiles");
  return i32(detail::emitArgReduce({"argmin", detail::toSourceLoc(loc)}, t.ref(), axis, keep_dims, false));
}

// ---- built-in scans ----

// Inclusive running sum / product along `axis` (from its end when reverse);
// bool, int8_t and int16_t tiles accumulate as int32_t.
template <class E>
Tile<detail::accumulate_t<E>> cumsum(const Tile<E> &t, int axis, bool reverse = false,
                                     source_location loc = source_location::current()) {
  static_assert(detail::is_scalar_elem<E>, "tessel: cumsum and cumprod need numeric tiles");
  detail::OpSite site{"cumsum", detail::toSourceLoc(loc)};
  return Tile<detail::accumulate_t<E>>(
      detail::emitBinaryRegionOp(detail::Combining::Scan, detail::Elementwise::Add, site, detail::toAccumulator(site, t), axis, reverse));
}
template <class E>
Tile<detail::accumulate_t<E>> cumprod(const Tile<E> &t, int axis, bool reverse = false,
                                      source_location loc = source_location::current()) {
  static_assert(detail::is_scalar_elem<E>, "tessel: cumsum and cumprod need numeric tiles");
  detail::OpSite site{"cumprod", detail::toSourceLoc(loc)};
  return Tile<detail::accumulate_t<E>>(
      detail::emitBinaryRegionOp(detail::Combining::Scan, detail::Elementwise::Mul, site, detail::toAccumulator(site, t), axis, reverse));
}

} // namespace tessel
