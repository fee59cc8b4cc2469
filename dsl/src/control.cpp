// Device control flow: for_range becomes one scf.for whose body is traced
// once; the tiles it touches from outside are carried (TraceContext::carry).
#include "tracer_internal.hpp"

#include <string>

namespace tessel::detail {

namespace {

// A loop bound as an i32 scalar value.
int32_t bound(TraceContext &ctx, const OpSite &site, const Operand &o, const char *what) {
  if (o.kind == Operand::FloatLiteral) fail(site, std::string("the loop's ") + what + " must be an integer");
  int32_t id = materialize(ctx, site, o, DType::I32);
  const TraceType &t = ctx.type(id);
  if (!t.shape.empty())
    fail(site, std::string("the loop's ") + what + " must be a scalar, not a tile of shape " + formatShape(t.shape));
  if (t.isPtr || t.dtype != DType::I32)
    fail(site, std::string("the loop's ") + what + " must be an int32 scalar, not " +
                   (t.isPtr ? std::string("a pointer") : dtypeName(t.dtype)));
  return id;
}

} // namespace

void emitForRange(const OpSite &site, Operand lo, Operand hi, Operand step,
                  const std::function<void(ValueRef)> &body) {
  TraceContext &ctx = lo.kind == Operand::Value || hi.kind == Operand::Value || step.kind == Operand::Value
                          ? contextOf(site, {&lo, &hi, &step})
                          : currentContext(site.name, site.loc);
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  if (step.kind == Operand::IntLiteral && step.i <= 0)
    fail(site, "the step must be positive, not " + std::to_string(step.i) +
                   " (a loop counts up from lo to hi, hi excluded)");
  const int32_t ids[3] = {bound(ctx, site, lo, "start"), bound(ctx, site, hi, "end"), bound(ctx, site, step, "step")};

  ctx.openRegion(TraceContext::RegionKind::Loop);
  ValueRef iv = ctx.ref(ctx.addRegionArg({DType::I32, false, {}}, site.loc));
  body(iv);

  // What each carried tile holds at the end of an iteration goes round again.
  std::vector<TraceContext::Carried> carried = ctx.carried();
  std::vector<int32_t> yields;
  std::vector<TraceType> types;
  for (const TraceContext::Carried &c : carried) {
    int32_t value = c.tile ? c.tile->id : c.last;
    ctx.checkVisible(site, value);
    const TraceType &before = ctx.type(c.init), &after = ctx.type(value);
    if (before != after)
      fail(site, "a tile carried through the loop has shape " + formatShape(before.shape) +
                     " before it and " + formatShape(after.shape) +
                     " at the end of the body; a variable assigned in the loop must keep its shape");
    yields.push_back(value);
    types.push_back(before);
  }
  if (carried.size() > 255)
    fail(site, "the loop carries " + std::to_string(carried.size()) + " tiles; at most 255 are supported");
  emitOp(ctx, site, "scf.yield", yields, DType::I1, false, {}, {}, /*results=*/0);
  TraceRegion region = ctx.closeRegion();

  TraceNode loop = makeNode(TraceOp::Op, DType::I1, false, {}, {ids[0], ids[1], ids[2]}, site.loc);
  loop.name = "scf.for";
  for (const TraceContext::Carried &c : carried) loop.operands.push_back(c.init);
  loop.results = static_cast<uint8_t>(carried.size());
  if (carried.size() == 1) {
    loop.dtype = types[0].dtype;
    loop.isPtr = types[0].isPtr;
    loop.shape = types[0].shape;
  } else if (carried.size() > 1) {
    loop.resultTypes = types;
  }
  loop.regions.push_back(std::move(region));
  int32_t id = ctx.addNode(std::move(loop));

  // After the loop each carried variable holds the loop's result.
  for (size_t k = 0; k < carried.size(); ++k) {
    int32_t result = id;
    if (carried.size() > 1) {
      TraceNode r = makeNode(TraceOp::Result, types[k].dtype, types[k].isPtr, types[k].shape, {id}, site.loc);
      r.i0 = static_cast<int64_t>(k);
      result = ctx.addNode(std::move(r));
    }
    if (carried[k].tile) carried[k].tile->id = result;
  }
}

} // namespace tessel::detail
