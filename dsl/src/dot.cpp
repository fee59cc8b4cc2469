// dot: one tessel.dot node, its shapes checked where the user wrote it.
#include "tracer_internal.hpp"

#include <string>

namespace tessel::detail {

ValueRef emitDot(const OpSite &site, ValueRef a, ValueRef b, const ValueRef *acc) {
  Operand oa = Operand::of(a), ob = Operand::of(b), oc = acc ? Operand::of(*acc) : Operand();
  TraceContext &ctx = contextOf(site, {&oa, &ob, acc ? &oc : nullptr});
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  const TraceType ta = ctx.type(a.id), tb = ctx.type(b.id);
  if (ta.shape.size() != 2 || tb.shape.size() != 2)
    fail(site, "takes 2-D tiles [M, K] and [K, N], not " + formatShape(ta.shape) + " and " + formatShape(tb.shape));
  const int64_t M = ta.shape[0], K = ta.shape[1], N = tb.shape[1];
  if (tb.shape[0] != K)
    fail(site, "the inner dimensions differ: a is " + formatShape(ta.shape) + " and b is " + formatShape(tb.shape) +
                   " (a [M, K] times b [K, N])");
  if (M < 16 || N < 16 || K < 16)
    fail(site, "M, N and K must be at least 16 (the matrix instructions' smallest tile), not M = " +
                   std::to_string(M) + ", N = " + std::to_string(N) + ", K = " + std::to_string(K));
  const DType accType = ta.dtype == DType::I8 ? DType::I32 : DType::F32;
  const Shape shape{M, N};
  int32_t c;
  if (acc) {
    const TraceType tc = ctx.type(acc->id);
    if (tc.shape != shape)
      fail(site, "the accumulator must be [M, N] = " + formatShape(shape) + ", not " + formatShape(tc.shape));
    c = acc->id;
  } else {
    Operand zero = Operand::literal(0);
    c = constant(ctx, site, zero, accType, shape);
  }
  return emitOp(ctx, site, "tessel.dot", {a.id, b.id, c}, accType, false, shape, {});
}

} // namespace tessel::detail
