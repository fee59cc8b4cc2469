// Tile ops as free functions. Each takes the user's source location as a
// defaulted last parameter, so trace-time errors name the line that called it.
#pragma once

#include "tessel/tile.hpp"

#include <concepts>
#include <cstdint>
#include <limits>
#include <source_location>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessel {

using std::source_location;

namespace detail {

template <class X> Operand operandOf(const X &x) {
  if constexpr (is_tile_v<X>) return Operand::of(x.ref());
  else return literalOperand(x);
}

// The element type a fill value implies: int -> int32_t, long -> int64_t, float -> float, ...
template <class V> auto fillElem() {
  if constexpr (is_tile_v<V>) return std::type_identity<tile_elem_t<V>>{};
  else {
    using U = unwrap_const_t<V>;
    if constexpr (std::is_same_v<U, bool>) return std::type_identity<bool>{};
    else if constexpr (std::is_integral_v<U>)
      return std::type_identity<std::conditional_t<(sizeof(U) <= 4), int32_t, int64_t>>{};
    else if constexpr (std::is_floating_point_v<U>)
      return std::type_identity<std::conditional_t<std::is_same_v<U, float>, float, double>>{};
    else return std::type_identity<void>{};
  }
}

// Element type of ops combining A and B, with the compile-time diagnosis.
template <class A, class B> consteval void requireBinary() {
  if constexpr (std::is_void_v<binary_elem_t<A, B>>) {
    if constexpr (!is_tile_v<A> && !is_tile_v<B>)
      static_assert(always_false<A>, "tessel: at least one operand must be a Tile");
    else
      diagnoseBinary<A, B>();
  }
}

} // namespace detail

// ---- leaf ops: they need the open trace ----

// Index of this program instance along `axis` (0, 1 or 2).
inline i32 program_id(int axis, source_location loc = source_location::current()) {
  return i32(detail::emitProgramIndex("tessel.program_id", {"program_id", detail::toSourceLoc(loc)}, axis));
}
// Number of program instances along `axis` (the grid size).
inline i32 num_programs(int axis, source_location loc = source_location::current()) {
  return i32(detail::emitProgramIndex("tessel.num_programs", {"num_programs", detail::toSourceLoc(loc)}, axis));
}
// [lo, lo + 1, ..., hi - 1] as a 1-D i32 tile; hi - lo must be a power of two.
inline i32 arange(int64_t lo, int64_t hi, source_location loc = source_location::current()) {
  return i32(detail::emitArange({"arange", detail::toSourceLoc(loc)}, lo, hi));
}

// A tile of `shape` filled with `value`. The element type is E, or the
// value's type (int -> int32_t, float -> float, ...) when E is not given.
template <class E = void, class V>
auto full(const Shape &shape, const V &value, source_location loc = source_location::current()) {
  using Elem = std::conditional_t<std::is_void_v<E>, typename decltype(detail::fillElem<V>())::type,
                                  detail::elem_of_t<E>>;
  static_assert(!std::is_void_v<Elem>, "tessel: full: the fill value must be a number, a bool or a scalar tile");
  if constexpr (detail::is_tile_v<V>)
    static_assert(std::is_same_v<detail::tile_elem_t<V>, Elem>,
                  "tessel: full: the fill tile's element type differs from the requested one");
  else
    static_assert(detail::LiteralFor<V, Elem>,
                  "tessel: full: the fill value does not convert to the tile's element type");
  return Tile<Elem>(detail::emitFull({"full", detail::toSourceLoc(loc)}, shape, detail::operandOf(value),
                                     detail::elem_info<Elem>::dtype));
}

// A tile of `shape` filled with zeros; E is an element type or tile alias.
template <class E>
Tile<detail::elem_of_t<E>> zeros(const Shape &shape, source_location loc = source_location::current()) {
  using Elem = detail::elem_of_t<E>;
  detail::Operand zero = detail::is_float_elem<Elem> ? detail::Operand::literal(0.0) : detail::Operand::literal(0);
  return Tile<Elem>(detail::emitFull({"zeros", detail::toSourceLoc(loc)}, shape, zero, detail::elem_info<Elem>::dtype));
}

// ---- shape ops ----

template <class E>
Tile<E> broadcast_to(const Tile<E> &t, const Shape &shape, source_location loc = source_location::current()) {
  return Tile<E>(detail::emitBroadcastTo({"broadcast_to", detail::toSourceLoc(loc)}, t.ref(), shape));
}

// Inserts a size-1 dimension at `axis` (negative counts from the end, as numpy).
template <class E>
Tile<E> expand_dims(const Tile<E> &t, int axis, source_location loc = source_location::current()) {
  return Tile<E>(detail::emitExpandDims({"expand_dims", detail::toSourceLoc(loc)}, t.ref(), axis));
}

// The same elements in a new shape (row-major order kept); the element
// count must not change and dimensions are powers of two.
template <class E>
Tile<E> reshape(const Tile<E> &t, const Shape &shape, source_location loc = source_location::current()) {
  return Tile<E>(detail::emitReshape({"reshape", detail::toSourceLoc(loc)}, t.ref(), shape));
}

// Reorders dimensions: result dim i is t's dim dims[i] (permute(t, {1, 0}) transposes).
template <class E>
Tile<E> permute(const Tile<E> &t, const std::vector<int64_t> &dims,
                source_location loc = source_location::current()) {
  return Tile<E>(detail::emitPermute({"permute", detail::toSourceLoc(loc)}, t.ref(), dims));
}

// Elements of `src` picked along `axis` by `indices` (Triton's tl.gather):
// result[..., i, ...] = src[..., indices[..., i, ...], ...]. indices has
// src's rank and extents except along `axis`; the result has its shape. An
// index outside the axis reads 0.
template <class E, class I>
Tile<E> gather(const Tile<E> &src, const Tile<I> &indices, int axis, source_location loc = source_location::current()) {
  static_assert(std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>, "tessel: gather's indices are int32_t or int64_t");
  return Tile<E>(detail::emitGather({"gather", detail::toSourceLoc(loc)}, src.ref(), indices.ref(), axis));
}

// The transpose of a 2-D tile.
template <class E> Tile<E> trans(const Tile<E> &t, source_location loc = source_location::current()) {
  return Tile<E>(detail::emitTrans({"trans", detail::toSourceLoc(loc)}, t.ref()));
}

// Interleaves two tiles of one shape along a new last dimension of size 2:
// result[..., 0] = a, result[..., 1] = b. The result is at most 2-D.
template <class E, class F>
Tile<E> join(const Tile<E> &a, const Tile<F> &b, source_location loc = source_location::current()) {
  static_assert(std::is_same_v<E, F>, "tessel: join: both tiles need one element type; use cast<T>(...)");
  return Tile<E>(detail::emitJoin({"join", detail::toSourceLoc(loc)}, a.ref(), b.ref()));
}

// The two halves of a tile whose last dimension is 2 (join undone):
// `auto [even, odd] = split(t);`
template <class E>
std::pair<Tile<E>, Tile<E>> split(const Tile<E> &t, source_location loc = source_location::current()) {
  auto [first, second] = detail::emitSplit({"split", detail::toSourceLoc(loc)}, t.ref());
  return {Tile<E>(first), Tile<E>(second)};
}

// ---- facts for the compiler's analyses ----

// Lets the compiler assume a scalar condition holds, e.g. assume(n % 128 == 0)
// or assume(n >= 128). A false assumption makes the kernel's behavior undefined.
template <class C> void assume(const C &cond, source_location loc = source_location::current()) {
  static_assert(std::is_same_v<std::remove_cvref_t<C>, Tile<bool>>,
                "tessel: assume needs a scalar bool tile (a comparison such as n % 16 == 0)");
  if constexpr (std::is_same_v<std::remove_cvref_t<C>, Tile<bool>>)
    detail::emitAssume({"assume", detail::toSourceLoc(loc)}, cond.ref());
}

// t, whose contiguous runs each start at a multiple of d (a power of two):
// multiple_of(start + arange(0, B), 16) promises start % 16 == 0, as Triton's
// multiple_of does. On tiles without runs, every element is a multiple of d.
template <class E>
Tile<E> multiple_of(const Tile<E> &t, int64_t d, source_location loc = source_location::current()) {
  static_assert(detail::is_int_elem<E>, "tessel: multiple_of and max_contiguous take integer tiles (offsets)");
  return Tile<E>(detail::emitMultipleOf({"multiple_of", detail::toSourceLoc(loc)}, t.ref(), d));
}

// t, known to hold runs of c consecutive values (c a power of two) along
// its last dimension, as offs = start + arange(0, BLOCK) does.
template <class E>
Tile<E> max_contiguous(const Tile<E> &t, int64_t c, source_location loc = source_location::current()) {
  static_assert(detail::is_int_elem<E>, "tessel: multiple_of and max_contiguous take integer tiles (offsets)");
  return Tile<E>(detail::emitMaxContiguous({"max_contiguous", detail::toSourceLoc(loc)}, t.ref(), c));
}

// ---- elementwise ----

// How cast converts. saturate: a float too large for an 8-bit float
// destination becomes its largest finite value of that sign (infinities too;
// NaN stays NaN) instead of the format's overflow (E5M2: infinity, the other
// formats: NaN). Rounding is always to nearest, ties to even.
struct CastOptions {
  bool saturate = false;
};

namespace detail {
template <class To, class E> consteval void checkCast() {
  static_assert(is_storage_elem<To> && is_storage_elem<E>,
                "tessel: cast converts between numeric and bool tiles, not pointers");
  if constexpr (is_fp8_elem<To> || is_fp8_elem<E>) {
    using O = std::conditional_t<is_fp8_elem<To>, E, To>; // the other side
    static_assert(is_fp8_elem<O> || std::is_same_v<O, float> || std::is_same_v<O, half> || std::is_same_v<O, bfloat16>,
                  "tessel: an 8-bit float casts to and from float, half, bfloat16 or another 8-bit float; "
                  "cast through float (cast<float>(...)) for the others");
  }
}
} // namespace detail

// Converts to element type To (an element type or a tile alias).
template <class To, class E>
Tile<detail::elem_of_t<To>> cast(const Tile<E> &t, source_location loc = source_location::current()) {
  using Elem = detail::elem_of_t<To>;
  detail::checkCast<Elem, E>();
  return Tile<Elem>(detail::emitCast({"cast", detail::toSourceLoc(loc)}, t.ref(), detail::elem_info<Elem>::dtype));
}
// cast<float8_e4m3fn>(x, {.saturate = true}): see CastOptions.
template <class To, class E>
Tile<detail::elem_of_t<To>> cast(const Tile<E> &t, CastOptions options,
                                 source_location loc = source_location::current()) {
  using Elem = detail::elem_of_t<To>;
  detail::checkCast<Elem, E>();
  return Tile<Elem>(detail::emitCast({"cast", detail::toSourceLoc(loc)}, t.ref(), detail::elem_info<Elem>::dtype,
                                     options.saturate));
}

namespace detail {
// The element type of where(mask, a, b) with two literals, as Triton types
// tl.where(mask, 0, -1.0e6): a floating literal makes it f32 (float or
// double alike), integers i32 (i64 when one is a 64-bit C++ type), two
// bools bool; void when they do not mix (a bool and a number).
template <class A, class B> auto literalPairElem() {
  using U = unwrap_const_t<A>;
  using V = unwrap_const_t<B>;
  if constexpr (!std::is_arithmetic_v<U> || !std::is_arithmetic_v<V>)
    return std::type_identity<void>{};
  else if constexpr (std::is_same_v<U, bool> || std::is_same_v<V, bool>)
    return std::type_identity<std::conditional_t<std::is_same_v<U, V>, bool, void>>{};
  else if constexpr (std::is_floating_point_v<U> || std::is_floating_point_v<V>)
    return std::type_identity<float>{};
  else
    return std::type_identity<std::conditional_t<(sizeof(U) <= 4 && sizeof(V) <= 4), int32_t, int64_t>>{};
}
template <class A, class B> using literal_pair_elem_t = typename decltype(literalPairElem<A, B>())::type;
} // namespace detail

// c ? a : b elementwise; a and b are tiles or literals of one element type.
// With two literals the result takes the mask's shape and the literals'
// type (detail::literalPairElem): where(mask, 0.0f, -1.0e6f) is f32.
template <class C, class A, class B>
auto where(const C &cond, const A &a, const B &b, source_location loc = source_location::current()) {
  static_assert(std::is_same_v<std::remove_cvref_t<C>, Tile<bool>> || std::is_same_v<std::remove_cvref_t<C>, bool>,
                "tessel: where: the condition must be a bool tile (a comparison or a mask)");
  if constexpr (!detail::is_tile_v<A> && !detail::is_tile_v<B>) {
    static_assert(detail::is_tile_v<C>, "tessel: where: with a bool condition, a or b must be a tile (the result "
                                        "takes the tiles' shape); use full(shape, value) for a constant tile");
    using Elem = detail::literal_pair_elem_t<A, B>;
    static_assert(!std::is_void_v<Elem>, "tessel: where: two literals of kinds that do not mix (a bool and a "
                                         "number); make one of them a tile");
    if constexpr (detail::is_tile_v<C> && !std::is_void_v<Elem>)
      return Tile<Elem>(detail::emitWhere({"where", detail::toSourceLoc(loc)}, detail::operandOf(cond),
                                          detail::operandOf(a), detail::operandOf(b), detail::elem_info<Elem>::dtype));
  } else {
    detail::requireBinary<A, B>();
    using Elem = detail::binary_elem_t<A, B>;
    if constexpr (!std::is_void_v<Elem>)
      return Tile<Elem>(detail::emitWhere({"where", detail::toSourceLoc(loc)}, detail::operandOf(cond),
                                          detail::operandOf(a), detail::operandOf(b), detail::elem_info<Elem>::dtype));
  }
}

#define TESSEL_BINARY_FN(fn, op, name)                                                          \
  template <class A, class B>                                                                  \
    requires(detail::is_tile_v<A> || detail::is_tile_v<B>)                                     \
  auto fn(const A &a, const B &b, source_location loc = source_location::current()) {          \
    detail::requireBinary<A, B>();                                                             \
    using Elem = detail::binary_elem_t<A, B>;                                                  \
    if constexpr (!std::is_void_v<Elem>) {                                                     \
      static_assert(!detail::is_pointer_elem<Elem>::value && !std::is_same_v<Elem, bool>,      \
                    "tessel: " name " needs numeric tiles");                                   \
      return Tile<Elem>(detail::emitBinary(detail::Elementwise::op, {name, detail::toSourceLoc(loc)}, \
                                           detail::operandOf(a), detail::operandOf(b),         \
                                           detail::elem_info<Elem>::dtype));                   \
    }                                                                                          \
  }
TESSEL_BINARY_FN(minimum, Min, "minimum")
TESSEL_BINARY_FN(maximum, Max, "maximum")
// As C's fmin / fmax (IEEE minNum / maxNum): when one operand is NaN the
// other is the result (NaN only when both are). Cheaper than minimum /
// maximum on AMD GPUs (no NaN check per element).
TESSEL_BINARY_FN(fmin, MinNum, "fmin")
TESSEL_BINARY_FN(fmax, MaxNum, "fmax")
// Float division, fast: the hardware reciprocal times the dividend (about
// 1 ulp; a denormal divisor flushes), whatever LaunchOptions::fast_math says.
TESSEL_BINARY_FN(fdiv, FDiv, "fdiv")
// Float division, correctly rounded (IEEE), whatever LaunchOptions::fast_math says.
TESSEL_BINARY_FN(div_rn, DivRn, "div_rn")
#undef TESSEL_BINARY_FN

namespace detail {
// An operand of umulhi: a tile, or a literal whose bits are the value. An
// unsigned literal as wide as the element (0xD2511F53 is an unsigned int)
// is taken as the element's bits, as an unsigned multiply means it.
template <class Elem, class X> Operand umulhiOperand(const X &x) {
  if constexpr (is_tile_v<X>) {
    return Operand::of(x.ref());
  } else {
    using U = unwrap_const_t<X>;
    if constexpr (std::is_unsigned_v<U> && !std::is_same_v<U, bool> && sizeof(U) <= sizeof(Elem))
      return Operand::literal(static_cast<Elem>(static_cast<U>(x)));
    else
      return literalOperand(x);
  }
}
} // namespace detail

// The high half of the unsigned product of a and b's bits (Triton's
// umulhi): for int32_t tiles bits 32..63 of the 64-bit product of the two
// values read as uint32_t, for int64_t bits 64..127; the low half is a * b.
// One operand may be a literal; an unsigned one (umulhi(x, 0xD2511F53)) is
// taken as its bits.
template <class A, class B>
  requires(detail::is_tile_v<A> || detail::is_tile_v<B>)
auto umulhi(const A &a, const B &b, source_location loc = source_location::current()) {
  using TileT = std::remove_cvref_t<std::conditional_t<detail::is_tile_v<A>, A, B>>;
  using Other = std::remove_cvref_t<std::conditional_t<detail::is_tile_v<A>, B, A>>;
  using Elem = typename TileT::element_type;
  constexpr bool intElem = std::is_same_v<Elem, int32_t> || std::is_same_v<Elem, int64_t>;
  constexpr bool sameTiles = !detail::is_tile_v<Other> || std::is_same_v<Other, TileT>;
  constexpr bool intLiteral = detail::is_tile_v<Other> || (std::is_integral_v<detail::unwrap_const_t<Other>> &&
                                                           !std::is_same_v<detail::unwrap_const_t<Other>, bool>);
  static_assert(intElem, "tessel: umulhi needs int32_t or int64_t tiles");
  static_assert(sameTiles, "tessel: the operands' element types differ; convert one with cast<T>(...) so both "
                           "have the same element type");
  static_assert(intLiteral, "tessel: umulhi's literal operand must be an integer");
  if constexpr (intElem && sameTiles && intLiteral)
    return Tile<Elem>(detail::emitBinary(detail::Elementwise::UMulHi, {"umulhi", detail::toSourceLoc(loc)},
                                         detail::umulhiOperand<Elem>(a), detail::umulhiOperand<Elem>(b),
                                         detail::elem_info<Elem>::dtype));
}

#define TESSEL_MATH_FN(fn, op)                                                                 \
  template <class E> Tile<E> fn(const Tile<E> &t, source_location loc = source_location::current()) { \
    static_assert(detail::is_float_elem<E>, "tessel: " #fn " needs a floating-point tile; "   \
                                            "use cast<float>(...) first");                     \
    return Tile<E>(detail::emitUnary(detail::Elementwise::op, {#fn, detail::toSourceLoc(loc)}, t.ref())); \
  }
TESSEL_MATH_FN(exp, Exp)
TESSEL_MATH_FN(exp2, Exp2)
TESSEL_MATH_FN(log, Log)
TESSEL_MATH_FN(log2, Log2)
TESSEL_MATH_FN(sqrt, Sqrt)
TESSEL_MATH_FN(rsqrt, Rsqrt)
TESSEL_MATH_FN(floor, Floor)
TESSEL_MATH_FN(ceil, Ceil)
TESSEL_MATH_FN(sin, Sin)
TESSEL_MATH_FN(cos, Cos)
// e^x and 2^x on the hardware's exponential (v_exp_f32, about 1 ulp) with
// none of exp / exp2's fix-ups for tiny results: a result below 2^-126 (a
// denormal) is 0. E.g. softmax, whose terms that small cannot move the sum.
TESSEL_MATH_FN(fast_exp, FastExp)
TESSEL_MATH_FN(fast_exp2, FastExp2)
// Triton's tl.math functions AMDGPU has no instruction for: ROCm's device
// library (ocml) computes them, within a few ulp; f16 and bf16 in f32.
TESSEL_MATH_FN(erf, Erf)
TESSEL_MATH_FN(tanh, Tanh)
TESSEL_MATH_FN(log1p, Log1p)
TESSEL_MATH_FN(expm1, Expm1)
TESSEL_MATH_FN(sinh, Sinh)
TESSEL_MATH_FN(cosh, Cosh)
TESSEL_MATH_FN(asin, Asin)
TESSEL_MATH_FN(acos, Acos)
TESSEL_MATH_FN(atan, Atan)
TESSEL_MATH_FN(cbrt, Cbrt)
// To an integer value, exactly: round takes halves away from zero (C's
// round), rint to even (C's rint), trunc toward zero; -0.4 gives -0.
TESSEL_MATH_FN(round, Round)
TESSEL_MATH_FN(rint, Rint)
TESSEL_MATH_FN(trunc, Trunc)
// 1 / (1 + e^-x) (Triton's tl.sigmoid), accurate to a few ulp everywhere,
// including large negative x, whose tiny results are not flushed to 0.
TESSEL_MATH_FN(sigmoid, Sigmoid)
#undef TESSEL_MATH_FN

#define TESSEL_FLOAT_BINARY_FN(fn, op)                                                         \
  template <class A, class B>                                                                  \
    requires(detail::is_tile_v<A> || detail::is_tile_v<B>)                                     \
  auto fn(const A &a, const B &b, source_location loc = source_location::current()) {          \
    detail::requireBinary<A, B>();                                                             \
    using Elem = detail::binary_elem_t<A, B>;                                                  \
    if constexpr (!std::is_void_v<Elem>) {                                                     \
      static_assert(detail::is_float_elem<Elem>, "tessel: " #fn " needs floating-point tiles; " \
                                                 "use cast<float>(...) first");               \
      return Tile<Elem>(detail::emitBinary(detail::Elementwise::op, {#fn, detail::toSourceLoc(loc)}, \
                                           detail::operandOf(a), detail::operandOf(b),         \
                                           detail::elem_info<Elem>::dtype));                   \
    }                                                                                          \
  }
// a^b as C's pow (pow(-8, 1.0 / 3) is NaN, pow(x, 0) is 1 even for a NaN x);
// one operand may be a literal: pow(x, 2.0f), pow(2.0f, x).
TESSEL_FLOAT_BINARY_FN(pow, Pow)
// The angle of the point (x, y) in [-pi, pi], as C's atan2(y, x).
TESSEL_FLOAT_BINARY_FN(atan2, Atan2)
#undef TESSEL_FLOAT_BINARY_FN

// |t| for floating and integer tiles.
template <class E> Tile<E> abs(const Tile<E> &t, source_location loc = source_location::current()) {
  static_assert(detail::is_float_elem<E> || detail::is_int_elem<E>, "tessel: abs needs a numeric tile");
  return Tile<E>(detail::emitUnary(detail::Elementwise::Abs, {"abs", detail::toSourceLoc(loc)}, t.ref()));
}

// a * b + c with one rounding, floating-point tiles (literals allowed).
template <class A, class B, class C>
auto fma(const A &a, const B &b, const C &c, source_location loc = source_location::current()) {
  using Elem = std::conditional_t<detail::is_tile_v<A>, detail::binary_elem_t<A, B>,
                                  std::conditional_t<detail::is_tile_v<B>, detail::binary_elem_t<B, C>,
                                                     detail::binary_elem_t<C, A>>>;
  static_assert(!std::is_void_v<Elem> && !std::is_void_v<detail::binary_elem_t<A, B>> &&
                    !std::is_void_v<detail::binary_elem_t<B, C>> &&
                    !std::is_void_v<detail::binary_elem_t<A, C>>,
                "tessel: fma: operands need one floating-point element type (tiles or literals)");
  if constexpr (!std::is_void_v<Elem>) {
    static_assert(detail::is_float_elem<Elem>, "tessel: fma needs floating-point tiles");
    return Tile<Elem>(detail::emitFma({"fma", detail::toSourceLoc(loc)}, detail::operandOf(a), detail::operandOf(b),
                                      detail::operandOf(c), detail::elem_info<Elem>::dtype));
  }
}

// ceil(a / b) for integer tiles: (a + b - 1) / b.
template <class A, class B>
  requires(detail::is_tile_v<A> || detail::is_tile_v<B>)
auto cdiv(const A &a, const B &b, source_location loc = source_location::current()) {
  detail::requireBinary<A, B>();
  using Elem = detail::binary_elem_t<A, B>;
  if constexpr (!std::is_void_v<Elem>) {
    static_assert(detail::is_int_elem<Elem>, "tessel: cdiv needs integer tiles");
    constexpr DType dt = detail::elem_info<Elem>::dtype;
    detail::OpSite site{"cdiv", detail::toSourceLoc(loc)};
    detail::ValueRef sum = detail::emitBinary(detail::Elementwise::Add, site, detail::operandOf(a), detail::operandOf(b), dt);
    detail::ValueRef num = detail::emitBinary(detail::Elementwise::Sub, site, detail::Operand::of(sum), detail::Operand::literal(1), dt);
    return Tile<Elem>(detail::emitBinary(detail::Elementwise::Div, site, detail::Operand::of(num), detail::operandOf(b), dt));
  }
}

// ceil(a / b) for host integers (grid sizes), as uint32_t so `{cdiv(n, 256)}`
// builds a Dim3 without narrowing. Error when it does not fit a grid.
template <class A, class B>
  requires(std::is_integral_v<detail::unwrap_const_t<A>> && std::is_integral_v<detail::unwrap_const_t<B>>)
constexpr uint32_t cdiv(const A &a, const B &b, source_location where = source_location::current()) {
  auto na = static_cast<detail::unwrap_const_t<A>>(a);
  auto nb = static_cast<detail::unwrap_const_t<B>>(b);
  if (nb == 0 || std::cmp_less(na, 0) || std::cmp_less(nb, 0))
    throw Error(callerLine(where) + "cdiv(" + std::to_string(na) + ", " + std::to_string(nb) +
                "): needs a >= 0 and b > 0");
  uint64_t q = static_cast<uint64_t>(na) / static_cast<uint64_t>(nb) +
               (static_cast<uint64_t>(na) % static_cast<uint64_t>(nb) != 0);
  if (q > UINT32_MAX)
    throw Error(callerLine(where) + "cdiv(" + std::to_string(na) + ", " + std::to_string(nb) + ") = " +
                std::to_string(q) + " does not fit a grid dimension (uint32_t)");
  return static_cast<uint32_t>(q);
}

// ---- memory ----

namespace detail {
template <class P> consteval void checkPointerTile() {
  static_assert(is_ptr_tile<std::remove_cvref_t<P>>::value,
                "tessel: load/store need a pointer tile (Ptr<T> plus offsets) as first argument");
}
template <class M> consteval void checkMask() {
  static_assert(std::is_same_v<std::remove_cvref_t<M>, Tile<bool>> || std::is_same_v<std::remove_cvref_t<M>, bool>,
                "tessel: a mask must be a bool tile (e.g. offs < n)");
}
template <class V, class T> consteval void checkValueFor() {
  static_assert(std::is_same_v<std::remove_cvref_t<V>, Tile<T>> || LiteralFor<V, T>,
                "tessel: the value's element type must equal the pointers' element type; use cast<T>(...)");
}
template <class P> using pointee_t = typename tile_elem_t<P>::pointee;
} // namespace detail

template <class P> auto load(const P &ptrs, source_location loc = source_location::current()) {
  detail::checkPointerTile<P>();
  return Tile<detail::pointee_t<P>>(detail::emitLoad({"load", detail::toSourceLoc(loc)}, ptrs.ref(), nullptr, nullptr));
}
template <class P, class M>
auto load(const P &ptrs, const M &mask, source_location loc = source_location::current()) {
  detail::checkPointerTile<P>();
  detail::checkMask<M>();
  detail::Operand m = detail::operandOf(mask);
  return Tile<detail::pointee_t<P>>(detail::emitLoad({"load", detail::toSourceLoc(loc)}, ptrs.ref(), &m, nullptr));
}
// Masked-off lanes read `other` (a tile or literal of the pointee type).
template <class P, class M, class O>
auto load(const P &ptrs, const M &mask, const O &other, source_location loc = source_location::current()) {
  detail::checkPointerTile<P>();
  detail::checkMask<M>();
  detail::checkValueFor<O, detail::pointee_t<P>>();
  detail::Operand m = detail::operandOf(mask), o = detail::operandOf(other);
  return Tile<detail::pointee_t<P>>(detail::emitLoad({"load", detail::toSourceLoc(loc)}, ptrs.ref(), &m, &o));
}

template <class P, class V>
void store(const P &ptrs, const V &value, source_location loc = source_location::current()) {
  detail::checkPointerTile<P>();
  detail::checkValueFor<V, detail::pointee_t<P>>();
  detail::emitStore({"store", detail::toSourceLoc(loc)}, ptrs.ref(), detail::operandOf(value), nullptr);
}
template <class P, class V, class M>
void store(const P &ptrs, const V &value, const M &mask, source_location loc = source_location::current()) {
  detail::checkPointerTile<P>();
  detail::checkValueFor<V, detail::pointee_t<P>>();
  detail::checkMask<M>();
  detail::Operand m = detail::operandOf(mask);
  detail::emitStore({"store", detail::toSourceLoc(loc)}, ptrs.ref(), detail::operandOf(value), &m);
}

// Counts of the values 0..bins-1 in `x` (where `mask` holds; other values
// are not counted): a [bins] tile of int32_t (Triton's tl.histogram). bins
// is a power of two; the counting uses bins * 4 bytes of LDS.
template <class I> Tile<int32_t> histogram(const Tile<I> &x, int64_t bins, source_location loc = source_location::current()) {
  static_assert(std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>, "tessel: histogram counts int32_t or int64_t values");
  return Tile<int32_t>(detail::emitHistogram({"histogram", detail::toSourceLoc(loc)}, x.ref(), bins, nullptr));
}
template <class I, class M>
Tile<int32_t> histogram(const Tile<I> &x, int64_t bins, const M &mask, source_location loc = source_location::current()) {
  static_assert(std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>, "tessel: histogram counts int32_t or int64_t values");
  detail::checkMask<M>();
  detail::Operand m = detail::operandOf(mask);
  return Tile<int32_t>(detail::emitHistogram({"histogram", detail::toSourceLoc(loc)}, x.ref(), bins, &m));
}

// ---- atomics ----

// The memory ordering of an atomic and the threads it orders with (Triton's
// `sem` and `scope`; AMDGPU's sync scopes). The default is Triton's:
// acq_rel at agent (GPU) scope.
enum class MemSem { relaxed = 0, acquire = 1, release = 2, acq_rel = 3 };
enum class MemScope { wavefront = 0, workgroup = 1, agent = 2, system = 3 };
struct AtomicOrder {
  MemSem sem = MemSem::acq_rel;
  MemScope scope = MemScope::agent;
};

namespace detail {
// The dialect's AtomicKind numbers.
enum class AtomicKind { add = 0, max = 1, min = 2, umax = 3, umin = 4, and_ = 5, or_ = 6, xor_ = 7, xchg = 8 };
template <class T> inline constexpr bool atomic_elem_v =
    std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || std::is_same_v<T, float> || std::is_same_v<T, int32_t> ||
    std::is_same_v<T, int64_t>;
template <class P, class V, bool IntegerOnly> consteval void checkAtomic() {
  checkPointerTile<P>();
  using T = pointee_t<P>;
  static_assert(atomic_elem_v<T>, "tessel: atomics take f16, bf16, f32, i32 or i64 elements");
  static_assert(!IntegerOnly || std::is_integral_v<T>,
                "tessel: this atomic takes i32 or i64 elements (and, or, xor, umax, umin)");
  checkValueFor<V, T>();
}
template <AtomicKind K, bool IntegerOnly, class P, class V>
auto atomic(const P &ptrs, const V &value, const Operand *mask, AtomicOrder order, const char *name,
            source_location loc) {
  checkAtomic<P, V, IntegerOnly>();
  return Tile<pointee_t<P>>(emitAtomic({name, toSourceLoc(loc)}, int(K), ptrs.ref(), {operandOf(value)}, mask,
                                       int(order.sem), int(order.scope)));
}
} // namespace detail

// Atomic read-modify-write of each element `ptrs` points at, where `mask`
// holds; returns the values memory held before (unspecified where masked
// off). An element several threads hold is updated once. Floats add in the
// element type (f16 and bf16 round as the hardware's); max/min on floats
// are IEEE maxNum/minNum; umax/umin compare integers as unsigned.
#define TESSEL_ATOMIC_RMW(NAME, KIND, INTEGER_ONLY)                                                                  \
  template <class P, class V> auto NAME(const P &ptrs, const V &value, source_location loc = source_location::current()) { \
    return detail::atomic<detail::AtomicKind::KIND, INTEGER_ONLY>(ptrs, value, nullptr, {}, #NAME, loc);             \
  }                                                                                                                  \
  template <class P, class V>                                                                                        \
  auto NAME(const P &ptrs, const V &value, AtomicOrder order, source_location loc = source_location::current()) {    \
    return detail::atomic<detail::AtomicKind::KIND, INTEGER_ONLY>(ptrs, value, nullptr, order, #NAME, loc);          \
  }                                                                                                                  \
  template <class P, class V, class M>                                                                               \
  auto NAME(const P &ptrs, const V &value, const M &mask, AtomicOrder order = {},                                    \
            source_location loc = source_location::current()) {                                                      \
    detail::checkMask<M>();                                                                                          \
    detail::Operand m = detail::operandOf(mask);                                                                     \
    return detail::atomic<detail::AtomicKind::KIND, INTEGER_ONLY>(ptrs, value, &m, order, #NAME, loc);               \
  }
TESSEL_ATOMIC_RMW(atomic_add, add, false)
TESSEL_ATOMIC_RMW(atomic_max, max, false)
TESSEL_ATOMIC_RMW(atomic_min, min, false)
TESSEL_ATOMIC_RMW(atomic_umax, umax, true)
TESSEL_ATOMIC_RMW(atomic_umin, umin, true)
TESSEL_ATOMIC_RMW(atomic_and, and_, true)
TESSEL_ATOMIC_RMW(atomic_or, or_, true)
TESSEL_ATOMIC_RMW(atomic_xor, xor_, true)
TESSEL_ATOMIC_RMW(atomic_xchg, xchg, false)
#undef TESSEL_ATOMIC_RMW

// Atomic compare-and-swap: where `mask` holds and memory equals `cmp`
// (bitwise), it becomes `value`; returns what memory held before.
template <class P, class C, class V, class M>
auto atomic_cas(const P &ptrs, const C &cmp, const V &value, const M &mask, AtomicOrder order = {},
                source_location loc = source_location::current()) {
  detail::checkAtomic<P, V, false>();
  detail::checkValueFor<C, detail::pointee_t<P>>();
  detail::checkMask<M>();
  detail::Operand m = detail::operandOf(mask);
  return Tile<detail::pointee_t<P>>(detail::emitAtomic({"atomic_cas", detail::toSourceLoc(loc)}, -1, ptrs.ref(),
                                                       {detail::operandOf(cmp), detail::operandOf(value)}, &m,
                                                       int(order.sem), int(order.scope)));
}
template <class P, class C, class V>
auto atomic_cas(const P &ptrs, const C &cmp, const V &value, source_location loc = source_location::current()) {
  return atomic_cas(ptrs, cmp, value, true, AtomicOrder{}, loc);
}

// Stores `value` through `ptrs` where `mask` holds, in no particular order
// among pointers that coincide (one of the values lands); Triton has no
// tl.scatter, this is tessel's.
template <class P, class V, class M>
void scatter(const P &ptrs, const V &value, const M &mask, source_location loc = source_location::current()) {
  store(ptrs, value, mask, loc);
}
template <class P, class V> void scatter(const P &ptrs, const V &value, source_location loc = source_location::current()) {
  store(ptrs, value, loc);
}
// scatter_add: atomic_add where `mask` holds, every coinciding pointer's
// value added (relaxed ordering: a sum needs no ordering).
template <class P, class V, class M>
void scatter_add(const P &ptrs, const V &value, const M &mask, source_location loc = source_location::current()) {
  (void)atomic_add(ptrs, value, mask, AtomicOrder{MemSem::relaxed, MemScope::agent}, loc);
}
template <class P, class V>
void scatter_add(const P &ptrs, const V &value, source_location loc = source_location::current()) {
  (void)atomic_add(ptrs, value, true, AtomicOrder{MemSem::relaxed, MemScope::agent}, loc);
}

// A barrier for the whole program instance (Triton's tl.debug_barrier):
// every thread's memory accesses before it, global and LDS, happen before
// any thread's after it. A lock's holder calls it before releasing the lock
// (an atomic with a release order already orders the program's earlier
// accesses before itself).
inline void debug_barrier(source_location loc = source_location::current()) {
  detail::emitBarrier({"debug_barrier", detail::toSourceLoc(loc)});
}

} // namespace tessel
