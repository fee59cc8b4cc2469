// sort, argsort and topk: one tessel.sort node (keys first, payloads after);
// topk sorts with the positions as a payload and keeps the first
// bit_ceil(k) along the axis.
#include "tracer_internal.hpp"

#include <bit>
#include <string>

namespace tessel::detail {

std::vector<ValueRef> emitSort(const OpSite &site, const std::vector<ValueRef> &given, int64_t axis, bool descending,
                               bool stable, const ValueRef *valid) {
  std::vector<ValueRef> inputs = given;
  if (valid) inputs.push_back(*valid);
  std::vector<Operand> ops;
  for (const ValueRef &v : inputs) ops.push_back(Operand::of(v));
  std::vector<const Operand *> ptrs;
  for (const Operand &o : ops) ptrs.push_back(&o);
  TraceContext &ctx = contextOfAll(site, ptrs);
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  const TraceType keys = ctx.type(inputs[0].id);
  if (keys.shape.empty()) fail(site, "sorts tiles, not scalars");
  axis = normalizeAxis(site, keys.shape, axis);
  for (size_t i = 1; i < given.size(); ++i)
    if (ctx.type(inputs[i].id).shape != keys.shape)
      fail(site, "payload " + std::to_string(i) + " has shape " + formatShape(ctx.type(inputs[i].id).shape) +
                     ", the keys " + formatShape(keys.shape));
  if (valid) {
    if (ctx.type(valid->id).dtype != DType::I1) fail(site, "valid must be a bool tile");
    if (!broadcastsTo(ctx.type(valid->id).shape, keys.shape))
      fail(site, "valid of shape " + formatShape(ctx.type(valid->id).shape) + " does not broadcast to the keys' shape " +
                     formatShape(keys.shape));
    inputs.back() = ctx.ref(broadcastNode(ctx, site, valid->id, keys.shape));
  }
  TraceNode node = makeNode(TraceOp::Op, keys.dtype, false, keys.shape, {}, site.loc);
  node.name = "tessel.sort";
  for (const ValueRef &v : inputs) {
    node.operands.push_back(v.id);
    node.resultTypes.push_back(ctx.type(v.id));
  }
  const size_t n = inputs.size();
  node.results = static_cast<uint8_t>(n);
  if (n == 1) node.resultTypes.clear();
  node.attrs.push_back({TraceAttr::I32, "axis", axis, {}});
  node.attrs.push_back({TraceAttr::Bool, "descending", descending ? 1 : 0, {}});
  node.attrs.push_back({TraceAttr::Bool, "stable", stable ? 1 : 0, {}});
  if (valid) node.attrs.push_back({TraceAttr::Bool, "masked", 1, {}});
  int32_t id = ctx.addNode(std::move(node));
  std::vector<ValueRef> values;
  for (size_t k = 0; k < n; ++k) {
    if (n == 1) {
      values.push_back(ctx.ref(id));
      break;
    }
    TraceNode r = makeNode(TraceOp::Result, ctx.type(inputs[k].id).dtype, false, keys.shape, {id}, site.loc);
    r.i0 = static_cast<int64_t>(k);
    values.push_back(ctx.ref(ctx.addNode(std::move(r))));
  }
  return values;
}

namespace {
// Each element's position along `axis` of a tile of `shape`, as i32.
ValueRef positions(TraceContext &ctx, const OpSite &site, const Shape &shape, int64_t axis) {
  int64_t length = shape[static_cast<size_t>(axis)];
  ValueRef index = emitOp(ctx, site, "tessel.make_range", {}, DType::I32, false, {length},
                          {{TraceAttr::I32, "start", 0}, {TraceAttr::I32, "end", length}});
  if (shape.size() > 1) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      if (d != axis) index = emitExpandDims(site, index, d);
    index = ctx.ref(broadcastNode(ctx, site, index.id, shape));
  }
  return index;
}
} // namespace

ValueRef emitArgsort(const OpSite &site, ValueRef x, int64_t axis, bool descending, bool stable, const ValueRef *valid) {
  Operand ox = Operand::of(x);
  TraceContext &ctx = contextOf(site, {&ox});
  const Shape shape = ctx.type(x.id).shape;
  if (shape.empty()) fail(site, "sorts tiles, not scalars");
  axis = normalizeAxis(site, shape, axis);
  return emitSort(site, {x, positions(ctx, site, shape, axis)}, axis, descending, stable, valid)[1];
}

std::pair<ValueRef, ValueRef> emitTopk(const OpSite &site, ValueRef x, int64_t k, int64_t axis, bool largest,
                                       DType indexType, const ValueRef *valid) {
  Operand ox = Operand::of(x);
  TraceContext &ctx = contextOf(site, {&ox});
  const Shape shape = ctx.type(x.id).shape;
  if (shape.empty()) fail(site, "takes a tile, not a scalar");
  axis = normalizeAxis(site, shape, axis);
  const int64_t length = shape[static_cast<size_t>(axis)];
  if (k < 1 || k > length)
    fail(site, "k = " + std::to_string(k) + " is out of range: the axis has " + std::to_string(length) + " elements");
  // Ties: the earlier position first.
  std::vector<ValueRef> sorted = emitSort(site, {x, positions(ctx, site, shape, axis)}, axis, largest, true, valid);
  ValueRef values = sorted[0], index = sorted[1];
  const int64_t keep = int64_t(std::bit_ceil(uint64_t(k)));
  if (keep < length) {
    // Axis last, split into [length / keep, keep]; the first row along the
    // new dim is the first `keep` (a reduce that keeps the smaller row).
    const int64_t rank = int64_t(shape.size());
    std::vector<int64_t> perm, back(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis) perm.push_back(d);
    perm.push_back(axis);
    for (int64_t d = 0; d < rank; ++d) back[static_cast<size_t>(perm[static_cast<size_t>(d)])] = d;
    const bool moved = axis != rank - 1;
    if (moved) {
      values = emitPermute(site, values, perm);
      index = emitPermute(site, index, perm);
    }
    Shape split = ctx.type(values.id).shape;
    split.back() = length / keep;
    split.push_back(keep);
    values = emitReshape(site, values, split);
    index = emitReshape(site, index, split);
    ValueRef rows = positions(ctx, site, split, rank - 1);
    DType dt = ctx.type(x.id).dtype;
    CombineFn first = [&](const std::vector<ValueRef> &a) {
      ValueRef take = emitBinary(Elementwise::CmpLt, site, Operand::of(a[5]), Operand::of(a[2]), DType::I32);
      return std::vector<ValueRef>{emitWhere(site, Operand::of(take), Operand::of(a[3]), Operand::of(a[0]), dt),
                                   emitWhere(site, Operand::of(take), Operand::of(a[4]), Operand::of(a[1]), DType::I32),
                                   emitWhere(site, Operand::of(take), Operand::of(a[5]), Operand::of(a[2]), DType::I32)};
    };
    std::vector<ValueRef> picked = emitRegionOp(Combining::Reduce, site, {values, index, rows}, rank - 1, false, first);
    values = picked[0];
    index = picked[1];
    if (moved) {
      values = emitPermute(site, values, back);
      index = emitPermute(site, index, back);
    }
  }
  if (indexType != DType::I32) index = emitCast(site, index, indexType);
  return {values, index};
}

} // namespace tessel::detail
