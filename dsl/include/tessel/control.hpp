// Device control flow. A C++ `for` in a kernel runs while the kernel is
// traced, so it unrolls (Triton's static_range); for_range is a loop on the
// GPU, over a range known only at run time, traced once.
#pragma once

#include "tessel/ops.hpp"

#include <concepts>
#include <functional>
#include <source_location>
#include <type_traits>

namespace tessel {

namespace detail {

template <class X>
concept LoopBound = std::same_as<std::remove_cvref_t<X>, Tile<int32_t>> ||
                    std::same_as<std::remove_cvref_t<X>, Tile<int64_t>> ||
                    (std::is_integral_v<unwrap_const_t<X>> && !std::is_same_v<unwrap_const_t<X>, bool>);

template <class F> consteval void checkLoopBody() {
  static_assert(std::is_invocable_v<F &, Tile<int32_t>> || std::is_invocable_v<F &, Tile<int64_t>>,
                "tessel: the body of for_range takes the induction variable, an i32 (or an i64 for 64-bit "
                "bounds): [&](i32 k) { ... }");
}

} // namespace detail

// A loop on the device: body(k) for k = lo, lo + step, ... while k < hi
// (k > hi for a negative step). lo, hi and step are integer values or i32 /
// i64 scalar tiles (kernel arguments, program_id, ...); a step known only at
// run time counts down when it is negative (Triton's rule), and a zero step
// runs no iteration. The induction variable is an i32, or an i64 when a
// bound is an int64 tile or a literal outside int32 (then the body takes an
// i64: [&](i64 k) { ... }). One scf.for is compiled, whatever the trip count.
//
// Variables are carried as C++ says: a Tile made before the loop and read
// or assigned in the body holds, in each iteration, what the previous one
// left in it, and after the loop what the last one left (its value before
// the loop when the loop runs zero times):
//
//   auto acc = zeros<float>({BLOCK});
//   for_range(0, n, BLOCK, [&](i32 k) {
//     auto offs = k + arange(0, BLOCK);
//     acc = acc + load(x + offs, offs < n, 0.0f);
//   });
//   store(out + pid, sum(acc, 0));
//
// A carried tile keeps its shape (an error names the loop's line otherwise);
// a tile made inside the body cannot be used after the loop (give its
// variable a value before the loop instead).
template <class Lo, class Hi, class Step, class F>
  requires detail::LoopBound<Lo> && detail::LoopBound<Hi> && detail::LoopBound<Step>
void for_range(const Lo &lo, const Hi &hi, const Step &step, F &&body,
               source_location loc = source_location::current()) {
  detail::checkLoopBody<F>();
  constexpr bool takes32 = std::is_invocable_v<F &, Tile<int32_t>>;
  constexpr bool takes64 = std::is_invocable_v<F &, Tile<int64_t>>;
  if constexpr (takes32 || takes64)
    detail::emitForRange({"for_range", detail::toSourceLoc(loc)}, detail::operandOf(lo), detail::operandOf(hi),
                         detail::operandOf(step),
                         {takes32, takes64, [&](detail::ValueRef k, bool wide) {
                            if constexpr (takes64)
                              if (wide) return (void)std::invoke(body, Tile<int64_t>(k));
                            if constexpr (takes32)
                              if (!wide) return (void)std::invoke(body, Tile<int32_t>(k));
                          }});
}

// for_range(lo, hi, 1, body).
template <class Lo, class Hi, class F>
  requires detail::LoopBound<Lo> && detail::LoopBound<Hi> && (!detail::LoopBound<F>)
void for_range(const Lo &lo, const Hi &hi, F &&body, source_location loc = source_location::current()) {
  for_range(lo, hi, 1, std::forward<F>(body), loc);
}

// A loop on the device that runs while a condition holds: cond() returns a
// scalar bool tile, evaluated before each iteration; body() is the loop body.
// Tiles made before the loop and read or assigned in either are carried as
// for for_range:
//
//   auto i = full({}, 0), total = full({}, 0);
//   while_([&] { return (i < n) & (total < limit); }, [&] {
//     total = total + load(x + i);
//     i = i + 1;
//   });
template <class Cond, class Body>
void while_(Cond &&cond, Body &&body, source_location loc = source_location::current()) {
  static_assert(std::is_same_v<std::remove_cvref_t<std::invoke_result_t<Cond &>>, Tile<bool>>,
                "tessel: the condition of while_ returns a scalar bool tile: [&] { return i < n; }");
  static_assert(std::is_invocable_v<Body &>, "tessel: the body of while_ takes no arguments: [&] { ... }");
  detail::emitWhile({"while_", detail::toSourceLoc(loc)}, [&] { return std::invoke(cond).ref(); },
                    [&] { std::invoke(body); });
}

// A branch on the device: then_body() runs when the scalar bool `cond` is
// true, else_body() (if given) when it is false. A Tile made before the if_
// and assigned in a branch holds, after it, what the branch that ran left in
// it (its value before the if_ when that branch did not assign it):
//
//   auto scale = full<float>({}, 1.0f);
//   if_(n > 4096, [&] { scale = 0.5f * scale; });
//
// Both sides are traced once; the condition is known only at run time.
template <class C, class Then>
  requires std::same_as<std::remove_cvref_t<C>, Tile<bool>>
void if_(const C &cond, Then &&then_body, source_location loc = source_location::current()) {
  static_assert(std::is_invocable_v<Then &>, "tessel: the branches of if_ take no arguments: [&] { ... }");
  detail::emitIf({"if_", detail::toSourceLoc(loc)}, detail::Operand::of(cond.ref()), [&] { then_body(); }, {});
}
template <class C, class Then, class Else>
  requires std::same_as<std::remove_cvref_t<C>, Tile<bool>> && std::is_invocable_v<Else &>
void if_(const C &cond, Then &&then_body, Else &&else_body, source_location loc = source_location::current()) {
  static_assert(std::is_invocable_v<Then &>, "tessel: the branches of if_ take no arguments: [&] { ... }");
  detail::emitIf({"if_", detail::toSourceLoc(loc)}, detail::Operand::of(cond.ref()), [&] { then_body(); },
                 [&] { else_body(); });
}

} // namespace tessel
