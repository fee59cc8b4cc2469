// Tile<E>: a typed handle to a traced value, and its operators. The element
// type lives in the C++ type, so mixing element types is a compile error;
// the shape lives in the trace and is checked when the op is traced.
//
// Operators are hidden friends taking In<E>, whose converting constructors
// capture std::source_location: that is how `a + b` learns the user's line.
#pragma once

#include "tessel/tracer.hpp"
#include "tessel/types.hpp"

#include <concepts>
#include <source_location>
#include <type_traits>

namespace tessel {

// A trace-time constant kernel parameter: its value is part of the
// specialization key and is folded into the trace, not passed at launch.
template <class T> struct Const {
  T value;
  constexpr Const(T v) : value(v) {}
  constexpr operator T() const { return value; }
};

using Shape = detail::Shape;

namespace detail {

template <class L> struct unwrap_const { using type = L; };
template <class T> struct unwrap_const<Const<T>> { using type = T; };
template <class L> using unwrap_const_t = typename unwrap_const<std::remove_cvref_t<L>>::type;

// C++ values (literals, Const<T>) that may stand for an operand of element type E.
template <class L, class E>
concept LiteralFor =
    std::is_arithmetic_v<unwrap_const_t<L>> && !is_tile<std::remove_cvref_t<L>>::value &&
    (std::is_same_v<E, bool> ? std::is_same_v<unwrap_const_t<L>, bool>
     : is_int_elem<E>        ? std::is_integral_v<unwrap_const_t<L>> &&
                                   !std::is_same_v<unwrap_const_t<L>, bool>
     : is_float_elem<E>      ? !std::is_same_v<unwrap_const_t<L>, bool>
                             : false);

template <class L>
concept OffsetLiteral = LiteralFor<L, int64_t>;

template <class L> Operand literalOperand(const L &v) {
  return Operand::literal(static_cast<unwrap_const_t<L>>(v));
}

// An operand of element type E at the user's line.
template <class E> struct In {
  Operand operand;
  SourceLoc loc;
  In(const Tile<E> &t, std::source_location l = std::source_location::current());
  template <class L>
    requires LiteralFor<L, E>
  In(const L &v, std::source_location l = std::source_location::current())
      : operand(literalOperand(v)), loc(toSourceLoc(l)) {}
};

// An integer offset for pointer arithmetic: any integer tile or literal.
struct OffsetIn {
  Operand operand;
  SourceLoc loc;
  template <class I>
    requires is_int_elem<I>
  OffsetIn(const Tile<I> &t, std::source_location l = std::source_location::current());
  template <class L>
    requires OffsetLiteral<L>
  OffsetIn(const L &v, std::source_location l = std::source_location::current())
      : operand(literalOperand(v)), loc(toSourceLoc(l)) {}
};

enum class OpKind { Arith, Rem, Bitwise, Shift, Compare, Neg, Not, LogicalNot };

// Which element types an operator accepts; the messages are the user's.
template <OpKind K, class E> consteval void checkOperatorElem() {
  constexpr bool isPtr = is_pointer_elem<E>::value;
  constexpr bool isBool = std::is_same_v<E, bool>;
  static_assert(!is_fp8_elem<E>, "tessel: 8-bit float tiles are for load, store, cast and dot; "
                                 "cast<float>(...) to compute or compare");
  if constexpr (K == OpKind::Arith || K == OpKind::Rem || K == OpKind::Neg) {
    static_assert(!isPtr, "tessel: pointer tiles only support + with an integer offset tile");
    static_assert(!isBool, "tessel: arithmetic on bool tiles is not supported; use cast<int32_t>(...) first");
  } else if constexpr (K == OpKind::Bitwise || K == OpKind::Not) {
    static_assert(is_int_elem<E> || isBool,
                  "tessel: bitwise ops (& | ^ ~) need integer or bool tiles; use cast<T>(...) first");
  } else if constexpr (K == OpKind::Shift) {
    static_assert(is_int_elem<E>, "tessel: shifts (<< >>) need integer tiles");
  } else if constexpr (K == OpKind::Compare) {
    static_assert(!isPtr, "tessel: pointer tiles cannot be compared");
  } else if constexpr (K == OpKind::LogicalNot) {
    static_assert(isBool, "tessel: ! needs a bool tile (use ~ for integer bitwise not)");
  }
}

} // namespace detail

// A tile of E values (rank 0 = one scalar) recorded in a trace. Copying a
// Tile copies the handle, not the data.
template <class E> class Tile {
  static_assert(detail::is_storage_elem<E> || detail::is_pointer_elem<E>::value,
                "tessel: tile elements are bool, int8_t, int16_t, int32_t, int64_t, half, "
                "bfloat16, float, double, float8_* or pointer_to<T>");
  using In = detail::In<E>;
  static constexpr DType kDType = detail::elem_info<E>::dtype;
  static constexpr bool kIsPtr = detail::is_pointer_elem<E>::value;

  static Tile binary(detail::Elementwise op, const char *name, const detail::Operand &a,
                     const detail::Operand &b, SourceLoc loc) {
    return Tile(detail::emitBinary(op, {name, loc}, a, b, kDType));
  }
  static Tile<bool> compare(detail::Elementwise op, const char *name, const In &a, const In &b) {
    return Tile<bool>(detail::emitBinary(op, {name, a.loc}, a.operand, b.operand, kDType));
  }
  static Tile addPtr(const detail::Operand &ptr, const detail::Operand &offset, SourceLoc loc) {
    return Tile(detail::emitAddPtr({"add", loc}, ptr, offset));
  }
  static Tile unary(detail::Elementwise op, const char *name, const In &a) {
    // A unary operand is always a tile: In<E> holds a literal only in binary ops.
    return Tile(detail::emitUnary(op, {name, a.loc}, a.operand.value));
  }

public:
  using element_type = E;

  Tile() = default;
  explicit Tile(detail::ValueRef v) : v_(v) {}
  // Copies and assignments are reads and writes of a variable: in a loop
  // body they carry the tile through the loop (see for_range).
  Tile(const Tile &o) : v_(o.ref()) {}
  Tile(Tile &&o) : v_(o.ref()) {}
  Tile &operator=(const Tile &o) {
    detail::ValueRef value = o.ref();
    detail::assignTile(v_);
    v_ = value;
    return *this;
  }
  Tile &operator=(Tile &&o) { return *this = static_cast<const Tile &>(o); }
  ~Tile() {
    if (v_.ctx) detail::releaseTile(v_);
  }

  detail::ValueRef ref() const {
    detail::touchTile(v_);
    return v_;
  }
  // The tile's shape at trace time (empty for a scalar).
  Shape shape(std::source_location loc = std::source_location::current()) const {
    return detail::shapeOf(v_, {"shape", detail::toSourceLoc(loc)});
  }
  int rank(std::source_location loc = std::source_location::current()) const {
    return static_cast<int>(detail::shapeOf(v_, {"rank", detail::toSourceLoc(loc)}).size());
  }

#define TESSEL_BINARY(sym, kind, op, name)                                                   \
  friend Tile operator sym(const In &a, const In &b) {                                       \
    detail::checkOperatorElem<detail::OpKind::kind, E>();                                    \
    return binary(detail::Elementwise::op, name, a.operand, b.operand, a.loc);               \
  }                                                                                          \
  friend Tile &operator sym##=(Tile & a, const In & b) {                                     \
    detail::checkOperatorElem<detail::OpKind::kind, E>();                                    \
    return a = binary(detail::Elementwise::op, name, detail::Operand::of(a.ref()), b.operand, b.loc); \
  }
  TESSEL_BINARY(+, Arith, Add, "add")
  TESSEL_BINARY(-, Arith, Sub, "sub")
  TESSEL_BINARY(*, Arith, Mul, "mul")
  TESSEL_BINARY(/, Arith, Div, "div")
  TESSEL_BINARY(%, Rem, Rem, "rem")
  TESSEL_BINARY(&, Bitwise, And, "and")
  TESSEL_BINARY(|, Bitwise, Or, "or")
  TESSEL_BINARY(^, Bitwise, Xor, "xor")
  TESSEL_BINARY(<<, Shift, Shl, "shl")
  TESSEL_BINARY(>>, Shift, Shr, "shr")
#undef TESSEL_BINARY

#define TESSEL_COMPARE(sym, op, name)                                                        \
  friend Tile<bool> operator sym(const In &a, const In &b) {                                 \
    detail::checkOperatorElem<detail::OpKind::Compare, E>();                                 \
    return compare(detail::Elementwise::op, name, a, b);                                     \
  }
  TESSEL_COMPARE(==, CmpEq, "cmp_eq")
  TESSEL_COMPARE(!=, CmpNe, "cmp_ne")
  TESSEL_COMPARE(<, CmpLt, "cmp_lt")
  TESSEL_COMPARE(<=, CmpLe, "cmp_le")
  TESSEL_COMPARE(>, CmpGt, "cmp_gt")
  TESSEL_COMPARE(>=, CmpGe, "cmp_ge")
#undef TESSEL_COMPARE

  friend Tile operator-(const In &a) {
    detail::checkOperatorElem<detail::OpKind::Neg, E>();
    return unary(detail::Elementwise::Neg, "neg", a);
  }
  friend Tile operator~(const In &a) {
    detail::checkOperatorElem<detail::OpKind::Not, E>();
    return unary(detail::Elementwise::Not, "not", a);
  }
  friend Tile operator!(const In &a) {
    detail::checkOperatorElem<detail::OpKind::LogicalNot, E>();
    return unary(detail::Elementwise::Not, "not", a);
  }

  // Pointer arithmetic: pointers + integer offsets (in elements).
  friend Tile operator+(const In &p, const detail::OffsetIn &offset)
    requires kIsPtr
  {
    return addPtr(p.operand, offset.operand, p.loc);
  }
  friend Tile operator+(const detail::OffsetIn &offset, const In &p)
    requires kIsPtr
  {
    return addPtr(p.operand, offset.operand, offset.loc);
  }
  friend Tile &operator+=(Tile &p, const detail::OffsetIn &offset)
    requires kIsPtr
  {
    return p = addPtr(detail::Operand::of(p.ref()), offset.operand, offset.loc);
  }

private:
  // Mutable: reading a tile in a loop body may point it at the loop's
  // block argument (see for_range).
  mutable detail::ValueRef v_;
};

namespace detail {

template <class E>
In<E>::In(const Tile<E> &t, std::source_location l) : operand(Operand::of(t.ref())), loc(toSourceLoc(l)) {}

template <class I>
  requires is_int_elem<I>
OffsetIn::OffsetIn(const Tile<I> &t, std::source_location l)
    : operand(Operand::of(t.ref())), loc(toSourceLoc(l)) {}

template <class X> inline constexpr bool is_tile_v = is_tile<std::remove_cvref_t<X>>::value;
template <class X> using tile_elem_t = typename std::remove_cvref_t<X>::element_type;

template <class X> struct is_int_tile : std::false_type {};
template <class I> struct is_int_tile<Tile<I>> : std::bool_constant<is_int_elem<I>> {};
template <class X> struct is_ptr_tile : std::false_type {};
template <class T> struct is_ptr_tile<Tile<pointer_to<T>>> : std::true_type {};

template <class X>
concept OffsetLike = is_int_tile<std::remove_cvref_t<X>>::value || OffsetLiteral<X>;

// The element type both operands of a binary op share (void: none).
template <class A, class B> auto binaryElem() {
  if constexpr (is_tile_v<A> && is_tile_v<B>) {
    if constexpr (std::is_same_v<tile_elem_t<A>, tile_elem_t<B>>)
      return std::type_identity<tile_elem_t<A>>{};
    else
      return std::type_identity<void>{};
  } else if constexpr (is_tile_v<A>) {
    if constexpr (LiteralFor<B, tile_elem_t<A>>)
      return std::type_identity<tile_elem_t<A>>{};
    else
      return std::type_identity<void>{};
  } else if constexpr (is_tile_v<B>) {
    if constexpr (LiteralFor<A, tile_elem_t<B>>)
      return std::type_identity<tile_elem_t<B>>{};
    else
      return std::type_identity<void>{};
  } else {
    return std::type_identity<void>{};
  }
}
template <class A, class B> using binary_elem_t = typename decltype(binaryElem<A, B>())::type;

template <class A, class B, bool PtrOffsetOk>
concept BadBinary =
    (is_tile_v<A> || is_tile_v<B>) && std::is_void_v<binary_elem_t<A, B>> &&
    !(PtrOffsetOk && ((is_ptr_tile<std::remove_cvref_t<A>>::value && OffsetLike<B>) ||
                      (is_ptr_tile<std::remove_cvref_t<B>>::value && OffsetLike<A>)));

// Explains at compile time why A and B cannot meet in a binary op.
template <class A, class B> consteval void diagnoseBinary() {
  if constexpr (is_tile_v<A> && is_tile_v<B>) {
    if constexpr (is_ptr_tile<std::remove_cvref_t<A>>::value || is_ptr_tile<std::remove_cvref_t<B>>::value)
      static_assert(always_false<A>, "tessel: pointer tiles only combine with integer offset tiles (p + offsets)");
    else
      static_assert(always_false<A>, "tessel: the operands' element types differ; convert one "
                                     "with cast<T>(...) so both have the same element type");
  } else {
    using TileT = std::conditional_t<is_tile_v<A>, A, B>;
    using LitT = std::conditional_t<is_tile_v<A>, B, A>;
    using E = tile_elem_t<TileT>;
    if constexpr (is_pointer_elem<E>::value)
      static_assert(always_false<A>, "tessel: pointer tiles only combine with integer offsets (p + offsets)");
    else if constexpr (std::is_floating_point_v<unwrap_const_t<LitT>>)
      static_assert(always_false<A>, "tessel: a floating-point literal cannot combine with an "
                                     "integer or bool tile; use an integer literal or cast<T>(...)");
    else if constexpr (std::is_same_v<unwrap_const_t<LitT>, bool>)
      static_assert(always_false<A>, "tessel: a bool literal only combines with bool tiles");
    else if constexpr (std::is_same_v<E, bool>)
      static_assert(always_false<A>, "tessel: a bool tile only combines with bool literals (true/false)");
    else
      static_assert(always_false<A>, "tessel: this C++ value cannot be an operand of a tile op; "
                                     "use a Tile, an arithmetic literal or Const<T>");
  }
}

} // namespace detail

// Operators whose operands cannot meet: a compile error that says why.
#define TESSEL_BAD_BINARY(sym, ptrOk)                                                         \
  template <class A, class B>                                                                \
    requires detail::BadBinary<A, B, ptrOk>                                                  \
  void operator sym(const A &, const B &) {                                                  \
    detail::diagnoseBinary<A, B>();                                                          \
  }
TESSEL_BAD_BINARY(+, true)
TESSEL_BAD_BINARY(-, false)
TESSEL_BAD_BINARY(*, false)
TESSEL_BAD_BINARY(/, false)
TESSEL_BAD_BINARY(%, false)
TESSEL_BAD_BINARY(&, false)
TESSEL_BAD_BINARY(|, false)
TESSEL_BAD_BINARY(^, false)
TESSEL_BAD_BINARY(<<, false)
TESSEL_BAD_BINARY(>>, false)
TESSEL_BAD_BINARY(==, false)
TESSEL_BAD_BINARY(!=, false)
TESSEL_BAD_BINARY(<, false)
TESSEL_BAD_BINARY(<=, false)
TESSEL_BAD_BINARY(>, false)
TESSEL_BAD_BINARY(>=, false)
#undef TESSEL_BAD_BINARY

// Element types and their tiles.
using i1 = Tile<bool>;
using i8 = Tile<int8_t>;
using i16 = Tile<int16_t>;
using i32 = Tile<int32_t>;
using i64 = Tile<int64_t>;
using f16 = Tile<half>;
using bf16 = Tile<bfloat16>;
using f32 = Tile<float>;
using f64 = Tile<double>;

// Pointers to X in global memory; X is an element type or a tile alias.
template <class X> using Ptr = Tile<pointer_to<detail::elem_of_t<X>>>;

} // namespace tessel
