// Debugging a block program (Triton's tl.device_print, tl.device_assert,
// tl.static_print, tl.static_assert): printing and checking from the kernel
// as it runs, and from its trace as it is recorded.
//
//   device_print("x", x, y);        every element of x and y, with its program
//                                   id and index, as the kernel runs
//   device_assert(i < n, "i < n");  a false element stops the launch with a
//                                   tessel::Error naming this line, the program
//                                   and the element (LaunchOptions::debug or
//                                   TESSEL_DEBUG=1; otherwise compiled out)
//   static_print("BLOCK", BLOCK, x); shapes, element types and constant values,
//                                   on stderr, while the trace is recorded
//   static_check(BLOCK % 16 == 0, "BLOCK is a multiple of 16");
//                                   a tessel::Error with this line when false
//
// docs/user-guide.md ("Debugging a kernel") says what each prints.
#pragma once

#include "tessel/tile.hpp"

#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tessel {

namespace detail {

// tessel.print of `tiles` (any element types) after `prefix`.
void emitDevicePrint(const OpSite &site, std::string_view prefix, const std::vector<ValueRef> &tiles);
// tessel.device_assert of a bool tile or scalar with its message.
void emitDeviceAssert(const OpSite &site, ValueRef cond, std::string_view message);
// "f32[16, 33]", "i32[] = 7": a traced value as static_print shows it.
std::string describeValue(ValueRef v);
// The shortest text that reads back as `v` (kernel.hpp declares it too).
std::string numberText(double v);
// Writes "file:line: static_print: <text>" to stderr in one piece.
void writeStaticPrint(SourceLoc loc, const std::string &text);
// Error("file:line: static_check failed: message").
[[noreturn]] void failStaticCheck(SourceLoc loc, std::string_view message);

template <class A> void appendPrinted(std::string &out, const A &a) {
  if (!out.empty())
    out += ' ';
  using T = std::remove_cvref_t<A>;
  if constexpr (is_tile_v<T>)
    out += describeValue(a.ref());
  else if constexpr (std::is_same_v<T, bool>)
    out += a ? "true" : "false";
  else if constexpr (std::is_same_v<unwrap_const_t<T>, bool>)
    out += a.value ? "true" : "false";
  else if constexpr (std::is_arithmetic_v<unwrap_const_t<T>>) {
    if constexpr (std::is_floating_point_v<unwrap_const_t<T>>)
      out += numberText(static_cast<double>(static_cast<unwrap_const_t<T>>(a)));
    else
      out += std::to_string(static_cast<unwrap_const_t<T>>(a));
  } else if constexpr (std::is_convertible_v<const T &, std::string_view>)
    out += std::string_view(a);
  else if constexpr (std::is_enum_v<unwrap_const_t<T>>)
    out += std::to_string(static_cast<long long>(static_cast<unwrap_const_t<T>>(a)));
  else
    static_assert(always_false<T>, "tessel: static_print prints tiles, numbers, Const values and strings");
}

} // namespace detail

// Prints every element of each tile, once, as the kernel runs: one line per
// element, "pid (x, y, z) idx (i, j) prefix: value" (Triton's format; with
// several tiles, "prefix: (operand k) value"), on the device's standard
// output. Tiles of any element type and scalars; with no tile, one line
// "pid (x, y, z) prefix" per program. Lines of different programs and
// threads come in no fixed order.
template <class... Tiles> struct device_print {
  device_print(std::string_view prefix, const Tiles &...tiles,
               std::source_location loc = std::source_location::current()) {
    static_assert((detail::is_tile_v<Tiles> && ...), "tessel: device_print prints tiles (Tile<E>, scalars included)");
    detail::emitDevicePrint({"device_print", detail::toSourceLoc(loc)}, prefix, {tiles.ref()...});
  }
};
template <class... Tiles> device_print(std::string_view, const Tiles &...) -> device_print<Tiles...>;

// Stops the launch with a tessel::Error naming this line, the program and the
// first element where `cond` is false (Triton's tl.device_assert). Checked
// only when the kernel is compiled for debugging (LaunchOptions::debug or
// TESSEL_DEBUG=1, part of the kernel's key); otherwise it costs nothing.
inline void device_assert(const Tile<bool> &cond, std::string_view message = "",
                          std::source_location loc = std::source_location::current()) {
  detail::emitDeviceAssert({"device_assert", detail::toSourceLoc(loc)}, cond.ref(), message);
}

// Prints its arguments on stderr as the trace is recorded (at a process's
// first launch of each specialization, not at every launch): tiles as element type and shape ("f32[16,
// 33]"; a traced constant with its value: "i32[] = 7"), numbers, Const
// values and strings, after "file:line: static_print:".
template <class... Args> struct static_print {
  static_print(const Args &...args, std::source_location loc = std::source_location::current()) {
    std::string text;
    (detail::appendPrinted(text, args), ...);
    detail::writeStaticPrint(detail::toSourceLoc(loc), text);
  }
};
template <class... Args> static_print(const Args &...) -> static_print<Args...>;

// A trace-time check (Triton's tl.static_assert; C++ has static_assert):
// when `cond` is false the trace stops with a tessel::Error naming this line
// and `message`. `cond` is a C++ bool: Const values, shapes, constants.
inline void static_check(bool cond, std::string_view message = "",
                         std::source_location loc = std::source_location::current()) {
  if (!cond)
    detail::failStaticCheck(detail::toSourceLoc(loc), message);
}

} // namespace tessel
