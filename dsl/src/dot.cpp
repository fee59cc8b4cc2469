// dot: one tessel.dot node, its shapes checked where the user wrote it.
#include "tracer_internal.hpp"

#include <string>

namespace tessel::detail {

ValueRef emitDot(const OpSite &site, ValueRef a, ValueRef b, const ValueRef *acc) {
  Operand oa = Operand::of(a), ob = Operand::of(b), oc = acc ? Operand::of(*acc) : Operand();
  TraceContext &ctx = contextOf(site, {&oa, &ob, acc ? &oc : nullptr});
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  const TraceType ta = ctx.type(a.id), tb = ctx.type(b.id);
  const size_t rank = ta.shape.size();
  if ((rank != 2 && rank != 3) || tb.shape.size() != rank)
    fail(site, "takes 2-D tiles [M, K] and [K, N] (or batched [B, M, K] and [B, K, N]), not " + formatShape(ta.shape) +
                   " and " + formatShape(tb.shape));
  if (rank == 3 && ta.shape[0] != tb.shape[0])
    fail(site, "the batch sizes differ: a is " + formatShape(ta.shape) + " and b is " + formatShape(tb.shape));
  const int64_t M = ta.shape[rank - 2], K = ta.shape[rank - 1], N = tb.shape[rank - 1];
  if (tb.shape[rank - 2] != K)
    fail(site, "the inner dimensions differ: a is " + formatShape(ta.shape) + " and b is " + formatShape(tb.shape) +
                   " (a [M, K] times b [K, N])");
  const DType accType = ta.dtype == DType::I8 ? DType::I32 : DType::F32;
  Shape shape{M, N};
  if (rank == 3) shape.insert(shape.begin(), ta.shape[0]);
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
  // tessel.dot's optional scales (a_scale, b_scale) are not a plain dot's.
  return emitOp(ctx, site, "tessel.dot", {a.id, b.id, c}, accType, false, shape,
                {{TraceAttr::I32Array, "operandSegmentSizes", 0, {1, 1, 1, 0, 0}}});
}

ValueRef emitDotScaled(const OpSite &site, ValueRef a, ValueRef b, ValueRef acc, ValueRef fallback,
                       const ValueRef *aScale, const ValueRef *bScale, int aFormat, int bFormat) {
  Operand oa = Operand::of(a), ob = Operand::of(b), oc = Operand::of(acc), of = Operand::of(fallback);
  Operand sa = aScale ? Operand::of(*aScale) : Operand(), sb = bScale ? Operand::of(*bScale) : Operand();
  TraceContext &ctx = contextOf(site, {&oa, &ob, &oc, &of, aScale ? &sa : nullptr, bScale ? &sb : nullptr});
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  std::vector<int32_t> operands{a.id, b.id, acc.id, fallback.id};
  if (aScale) operands.push_back(aScale->id);
  if (bScale) operands.push_back(bScale->id);
  std::vector<TraceAttr> attrs{
      {TraceAttr::I32, "a_format", aFormat},
      {TraceAttr::I32, "b_format", bFormat},
      {TraceAttr::I32Array, "operandSegmentSizes", 0, {1, 1, 1, 1, aScale ? 1 : 0, bScale ? 1 : 0}},
  };
  return emitOp(ctx, site, "tessel.dot_scaled", std::move(operands), DType::F32, false, ctx.type(acc.id).shape,
                std::move(attrs));
}

} // namespace tessel::detail
