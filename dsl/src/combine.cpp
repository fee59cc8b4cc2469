// Reductions and scans: one tessel.reduce or tessel.scan whose combine
// function is traced once, on scalars, into the op's region. sum, max,
// argmax, cumsum, ... are that same op with a built-in combine.
#include "tracer_internal.hpp"

#include <string>

namespace tessel::detail {

namespace {
constexpr const char *kCaptureMessage =
    "a combine function may only use its arguments (and literals), not tiles from outside it";
} // namespace

std::vector<ValueRef> emitRegionOp(Combining op, const OpSite &site, const std::vector<ValueRef> &inputs,
                                   int64_t axis, bool flag, const CombineFn &combine) {
  std::vector<Operand> operands;
  for (const ValueRef &v : inputs) operands.push_back(Operand::of(v));
  std::vector<const Operand *> pointers;
  for (const Operand &o : operands) pointers.push_back(&o);
  TraceContext &ctx = contextOfAll(site, pointers);
  const size_t n = inputs.size();
  Shape shape = ctx.type(inputs[0].id).shape;
  for (size_t k = 1; k < n; ++k)
    if (ctx.type(inputs[k].id).shape != shape)
      fail(site, "the inputs' shapes differ: input 0 is " + formatShape(shape) + ", input " + std::to_string(k) +
                     " is " + formatShape(ctx.type(inputs[k].id).shape));
  axis = normalizeAxis(site, shape, axis);
  std::vector<ValueRef> args;

  // Trace the combine once, into the op's region.
  ctx.openRegion(TraceContext::RegionKind::Combine);
  for (size_t k = 0; k < 2 * n; ++k) {
    args.push_back(ctx.ref(ctx.addRegionArg({ctx.type(inputs[k % n].id).dtype, false, {}}, site.loc)));
  }
  std::vector<ValueRef> results = combine(args);
  // The typed layer checks the count and element types at compile time;
  // what it cannot see is where the returned values come from.
  std::vector<int32_t> ids;
  for (size_t k = 0; k < results.size(); ++k) {
    const ValueRef &r = results[k];
    if (!r.ctx)
      fail(site, "the combine function returned an empty tile (default-constructed and never assigned)");
    if (r.ctx != &ctx || r.serial != ctx.serial() || !ctx.isLocal(r.id))
      fail(site, kCaptureMessage);
    const TraceType &rt = ctx.type(r.id);
    if (k >= n || rt.dtype != ctx.type(inputs[k].id).dtype || !rt.shape.empty())
      fail(site, "the combine function must return " + std::to_string(n) + " scalars of the inputs' element types");
    ids.push_back(r.id);
  }
  if (results.size() != n)
    fail(site, "the combine function must return " + std::to_string(n) + " scalars of the inputs' element types");
  emitOp(ctx, site, "tessel.yield", std::move(ids), DType::I1, false, {}, {}, /*results=*/0);
  TraceRegion region = ctx.closeRegion();

  Shape resultShape = shape;
  if (op == Combining::Reduce) resultShape.erase(resultShape.begin() + axis);
  TraceNode node = makeNode(TraceOp::Op, ctx.type(inputs[0].id).dtype, false, resultShape, {}, site.loc);
  node.name = op == Combining::Reduce ? "tessel.reduce" : "tessel.scan";
  for (const ValueRef &v : inputs) {
    node.operands.push_back(v.id);
    node.resultTypes.push_back({ctx.type(v.id).dtype, false, resultShape});
  }
  node.results = static_cast<uint8_t>(n);
  if (n == 1) node.resultTypes.clear(); // the node's own type is its result's
  node.attrs.push_back({TraceAttr::I32, "axis", axis, {}});
  if (op == Combining::Scan) node.attrs.push_back({TraceAttr::Bool, "reverse", flag ? 1 : 0, {}});
  node.regions.push_back(std::move(region));
  int32_t id = ctx.addNode(std::move(node));

  std::vector<ValueRef> values;
  for (size_t k = 0; k < n; ++k) {
    ValueRef result = ctx.ref(id);
    if (n > 1) {
      TraceNode r = makeNode(TraceOp::Result, ctx.type(inputs[k].id).dtype, false, resultShape, {id}, site.loc);
      r.i0 = static_cast<int64_t>(k);
      result = ctx.ref(ctx.addNode(std::move(r)));
    }
    if (op == Combining::Reduce && flag) result = emitExpandDims(site, result, axis);
    values.push_back(result);
  }
  return values;
}

ValueRef emitBinaryRegionOp(Combining op, Elementwise combineOp, const OpSite &site, ValueRef a, int64_t axis,
                            bool flag) {
  Operand oa = Operand::of(a);
  DType dtype = contextOf(site, {&oa}).type(a.id).dtype;
  CombineFn combine = [&](const std::vector<ValueRef> &args) {
    return std::vector<ValueRef>{emitBinary(combineOp, site, Operand::of(args[0]), Operand::of(args[1]), dtype)};
  };
  return emitRegionOp(op, site, {a}, axis, flag, combine)[0];
}

ValueRef emitArgReduce(const OpSite &site, ValueRef a, int64_t axis, bool keepDims, bool isMax) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  TraceType src = ctx.type(a.id);
  axis = normalizeAxis(site, src.shape, axis);

  // Each element's index along `axis`, as a tile of the input's shape.
  int64_t length = src.shape[static_cast<size_t>(axis)];
  ValueRef index = emitOp(ctx, site, "tessel.make_range", {}, DType::I32, false, {length},
                          {{TraceAttr::I32, "start", 0}, {TraceAttr::I32, "end", length}});
  if (src.shape.size() > 1) {
    for (int64_t d = 0; d < static_cast<int64_t>(src.shape.size()); ++d)
      if (d != axis) index = emitExpandDims(site, index, d);
    index = ctx.ref(broadcastNode(ctx, site, index.id, src.shape));
  }

  // (v0, i0) accumulated, (v1, i1) next: take the next pair when its value is
  // more extreme, or equally extreme at a smaller index. A total order (NaN
  // most extreme for floats), so the combine is associative.
  CombineFn combine = [&](const std::vector<ValueRef> &args) {
    auto bin = [&](Elementwise op, ValueRef x, ValueRef y, DType dt) {
      return emitBinary(op, site, Operand::of(x), Operand::of(y), dt);
    };
    ValueRef v0 = args[0], i0 = args[1], v1 = args[2], i1 = args[3];
    DType dt = src.dtype;
    ValueRef better = bin(isMax ? Elementwise::CmpGt : Elementwise::CmpLt, v1, v0, dt);
    ValueRef tie = bin(Elementwise::CmpEq, v1, v0, dt);
    if (isFloat(dt)) {
      ValueRef nan1 = bin(Elementwise::CmpNe, v1, v1, dt), nan0 = bin(Elementwise::CmpNe, v0, v0, dt);
      better = bin(Elementwise::Or, better, bin(Elementwise::And, nan1, emitUnary(Elementwise::Not, site, nan0), DType::I1),
                   DType::I1);
      tie = bin(Elementwise::Or, tie, bin(Elementwise::And, nan1, nan0, DType::I1), DType::I1);
    }
    ValueRef take = bin(Elementwise::Or, better, bin(Elementwise::And, tie, bin(Elementwise::CmpLt, i1, i0, DType::I32), DType::I1),
                        DType::I1);
    return std::vector<ValueRef>{
        emitWhere(site, Operand::of(take), Operand::of(v1), Operand::of(v0), dt),
        emitWhere(site, Operand::of(take), Operand::of(i1), Operand::of(i0), DType::I32)};
  };
  // Only the index is returned: keep_dims expands it alone, so the value
  // result stays unread and the compiler may drop it.
  ValueRef result = emitRegionOp(Combining::Reduce, site, {a, index}, axis, false, combine)[1];
  return keepDims ? emitExpandDims(site, result, axis) : result;
}

} // namespace tessel::detail
