// Device control flow: for_range becomes one scf.for whose body is traced
// once, if_ one scf.if; the tiles they touch from outside are carried
// (TraceContext::carry).
#include "tracer_internal.hpp"

#include <string>

namespace tessel::detail {

namespace {

// A loop bound as a scalar of the loop's integer type `type` (i32 or i64;
// an i32 scalar widens to i64).
int32_t bound(TraceContext &ctx, const OpSite &site, const Operand &o, const char *what, DType type) {
  if (o.kind == Operand::FloatLiteral) fail(site, std::string("the loop's ") + what + " must be an integer");
  int32_t id = materialize(ctx, site, o, type);
  const TraceType &t = ctx.type(id);
  if (!t.shape.empty())
    fail(site, std::string("the loop's ") + what + " must be a scalar, not a tile of shape " + formatShape(t.shape));
  if (t.isPtr || (t.dtype != DType::I32 && t.dtype != DType::I64))
    fail(site, std::string("the loop's ") + what + " must be an int32 or int64 scalar, not " +
                   (t.isPtr ? std::string("a pointer") : dtypeName(t.dtype)));
  if (t.dtype != type) id = emitCast(site, ctx.ref(id), type).id;
  return id;
}

// Whether a loop bound needs 64 bits: an int64 tile, or a literal outside int32.
bool needsWideLoop(TraceContext &ctx, const Operand &o) {
  if (o.kind == Operand::IntLiteral) return o.i < INT32_MIN || o.i > INT32_MAX;
  return o.kind == Operand::Value && o.value.ctx && ctx.type(o.value.id).dtype == DType::I64;
}

// The generic op `name` (operands, regions) with one result per type; the
// value id of each result (the node itself when there is one, Result nodes
// when there are more).
std::vector<int32_t> addControlOp(TraceContext &ctx, const OpSite &site, const char *name,
                                  std::vector<int32_t> operands, std::vector<TraceRegion> regions,
                                  const std::vector<TraceType> &types) {
  if (types.size() > 255)
    fail(site, "carries " + std::to_string(types.size()) + " tiles; at most 255 are supported");
  TraceNode op = makeNode(TraceOp::Op, DType::I1, false, {}, std::move(operands), site.loc);
  op.name = name;
  op.results = static_cast<uint8_t>(types.size());
  if (types.size() == 1) {
    op.dtype = types[0].dtype;
    op.isPtr = types[0].isPtr;
    op.shape = types[0].shape;
  } else if (types.size() > 1) {
    op.resultTypes = types;
  }
  op.regions = std::move(regions);
  int32_t id = ctx.addNode(std::move(op));
  if (types.size() == 1) return {id};
  std::vector<int32_t> results;
  for (size_t k = 0; k < types.size(); ++k) {
    TraceNode r = makeNode(TraceOp::Result, types[k].dtype, types[k].isPtr, types[k].shape, {id}, site.loc);
    r.i0 = static_cast<int64_t>(k);
    results.push_back(ctx.addNode(std::move(r)));
  }
  return results;
}

// The value a carried tile holds at the end of a region, checked to be
// visible there and of the type it had before: the region's yield.
int32_t carriedValue(TraceContext &ctx, const OpSite &site, const TraceContext::Carried &c, const char *where) {
  // A Tile destroyed in the body: nothing reads what the loop carries for it
  // (its last value may even be gone with a branch inside the body).
  if (!c.tile) return c.arg;
  int32_t value = c.tile->id;
  ctx.checkVisible(site, value);
  const TraceType &before = ctx.type(c.init), &after = ctx.type(value);
  if (before != after)
    fail(site, std::string("a tile carried through ") + where + " has shape " + formatShape(before.shape) +
                   " before it and " + formatShape(after.shape) +
                   " at the end of the body; a variable assigned in the loop must keep its shape");
  return value;
}

// After a loop or an if_, the variable `tile` (which held `init` before it)
// holds the op's result `result`, or `init` again when the op left it as it
// was (result < 0). Taking the result is an assignment where the op stands:
// the branches around it (of an enclosing if_) return it too, at any depth.
void assignResult(TraceContext &ctx, ValueRef &tile, int32_t init, int32_t result) {
  tile.id = init;
  if (result < 0) return;
  ctx.carry(tile, /*assigning=*/true);
  tile.id = result;
}

} // namespace

void emitForRange(const OpSite &site, Operand lo, Operand hi, Operand step, LoopBody body) {
  TraceContext &ctx = lo.kind == Operand::Value || hi.kind == Operand::Value || step.kind == Operand::Value
                          ? contextOf(site, {&lo, &hi, &step})
                          : currentContext(site.name, site.loc);
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  if (step.kind == Operand::IntLiteral && step.i == 0)
    fail(site, "the step must not be 0 (the loop counts from lo towards hi, hi excluded)");
  // Triton's rule: the induction variable is i64 when a bound needs it.
  const bool wide = !body.takes32 || needsWideLoop(ctx, lo) || needsWideLoop(ctx, hi) || needsWideLoop(ctx, step);
  if (wide && !body.takes64)
    fail(site, "a bound needs 64 bits (an int64 tile, or a literal outside int32), so the induction variable is "
               "an i64: write the body as [&](i64 k) { ... }");
  const DType type = wide ? DType::I64 : DType::I32;
  const int32_t ids[3] = {bound(ctx, site, lo, "start", type), bound(ctx, site, hi, "end", type),
                          bound(ctx, site, step, "step", type)};

  // A positive constant step counts up as scf.for does. Any other step (a
  // negative constant, or one known only at run time, whose sign decides
  // the direction) runs a count of iterations, computed in i64 (exact for
  // int32 bounds), with k = lo + i * step.
  const bool countsUp = step.kind == Operand::IntLiteral && step.i > 0;
  int32_t loopIds[3] = {ids[0], ids[1], ids[2]};
  int32_t lo64 = -1, step64 = -1;
  if (!countsUp) {
    auto op = [&](Elementwise e, int32_t a, int32_t b) {
      return emitBinary(e, site, Operand::of(ctx.ref(a)), Operand::of(ctx.ref(b)), DType::I64).id;
    };
    auto lit = [&](int64_t v) { return materialize(ctx, site, Operand::literal(v), DType::I64); };
    auto choose = [&](int32_t c, int32_t a, int32_t b) {
      return emitWhere(site, Operand::of(ctx.ref(c)), Operand::of(ctx.ref(a)), Operand::of(ctx.ref(b)), DType::I64).id;
    };
    lo64 = wide ? ids[0] : emitCast(site, ctx.ref(ids[0]), DType::I64).id;
    const int32_t hi64 = wide ? ids[1] : emitCast(site, ctx.ref(ids[1]), DType::I64).id;
    step64 = wide ? ids[2] : emitCast(site, ctx.ref(ids[2]), DType::I64).id;
    const int32_t zero = lit(0), one = lit(1);
    const int32_t up = op(Elementwise::CmpGt, step64, zero);
    const int32_t span = choose(up, op(Elementwise::Sub, hi64, lo64), op(Elementwise::Sub, lo64, hi64));
    const int32_t magnitude = choose(up, step64, op(Elementwise::Sub, zero, step64));
    // A zero step runs no iteration (1 keeps the division defined).
    const int32_t divisor = choose(op(Elementwise::CmpEq, step64, zero), one, magnitude);
    // (span - 1) / divisor + 1: used only where span > 0, and no sum that
    // could pass INT64_MAX (an int64 span itself must fit: |hi - lo| < 2^63).
    const int32_t trips = op(Elementwise::Add, op(Elementwise::Div, op(Elementwise::Sub, span, one), divisor), one);
    const int32_t runs = emitBinary(Elementwise::And, site, Operand::of(ctx.ref(op(Elementwise::CmpGt, span, zero))),
                                    Operand::of(ctx.ref(op(Elementwise::CmpNe, step64, zero))), DType::I1)
                             .id;
    loopIds[0] = zero;
    loopIds[1] = choose(runs, trips, zero);
    loopIds[2] = one;
  }

  ctx.openRegion(TraceContext::RegionKind::Loop);
  int32_t iv = ctx.addRegionArg({countsUp ? type : DType::I64, false, {}}, site.loc);
  if (!countsUp) {
    ValueRef scaled =
        emitBinary(Elementwise::Mul, site, Operand::of(ctx.ref(iv)), Operand::of(ctx.ref(step64)), DType::I64);
    iv = emitBinary(Elementwise::Add, site, Operand::of(ctx.ref(lo64)), Operand::of(scaled), DType::I64).id;
    if (!wide) iv = emitCast(site, ctx.ref(iv), DType::I32).id;
  }
  body.run(ctx.ref(iv), wide);

  // What each carried tile holds at the end of an iteration goes round again.
  std::vector<TraceContext::Carried> carried = ctx.carried();
  std::vector<int32_t> yields;
  std::vector<TraceType> types;
  for (const TraceContext::Carried &c : carried) {
    yields.push_back(carriedValue(ctx, site, c, "the loop"));
    types.push_back(ctx.type(c.init));
  }
  emitOp(ctx, site, "scf.yield", yields, DType::I1, false, {}, {}, /*results=*/0);
  std::vector<TraceRegion> regions;
  regions.push_back(ctx.closeRegion());
  std::vector<int32_t> operands{loopIds[0], loopIds[1], loopIds[2]};
  for (const TraceContext::Carried &c : carried) operands.push_back(c.init);
  std::vector<int32_t> results = addControlOp(ctx, site, "scf.for", std::move(operands), std::move(regions), types);

  // After the loop each carried variable holds the loop's result; one the
  // body only read keeps its value (so that an enclosing branch, which
  // returns only what it assigns, still sees it unchanged).
  for (size_t k = 0; k < carried.size(); ++k)
    if (carried[k].tile)
      assignResult(ctx, *carried[k].tile, carried[k].init, yields[k] == carried[k].arg ? -1 : results[k]);
}

void emitWhile(const OpSite &site, const std::function<ValueRef()> &cond, const std::function<void()> &body) {
  TraceContext &ctx = currentContext(site.name, site.loc);
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  using Carried = TraceContext::Carried;

  // The before region: the condition, and the values it sees.
  const int32_t beforeScope = ctx.openRegion(TraceContext::RegionKind::Loop);
  ValueRef c = cond();
  if (!c.ctx) fail(site, "the condition returned an empty tile (default-constructed and never assigned)");
  if (c.ctx != &ctx || c.serial != ctx.serial()) fail(site, "the condition belongs to another trace");
  ctx.checkVisible(site, c.id);
  const TraceType &ct = ctx.type(c.id);
  if (!ct.shape.empty() || ct.isPtr || ct.dtype != DType::I1)
    fail(site, "the condition must be a scalar bool, not " +
                   (ct.shape.empty() ? std::string(dtypeName(ct.dtype)) : "a tile of shape " + formatShape(ct.shape)));
  std::vector<Carried> seen = ctx.carried();
  std::vector<int32_t> forwards; // what the condition hands the body (and the loop's results)
  for (const Carried &k : seen) {
    if (!k.tile) fail(site, "a tile carried by the loop was destroyed in its condition");
    forwards.push_back(k.tile->id);
    ctx.checkVisible(site, k.tile->id);
    k.tile->id = k.init; // the body's region carries it again, from the same initial value
  }
  TraceRegion before = ctx.closeRegion();

  // The after region: the body. Values the condition carried come first, in
  // the same order, then those the body touches first.
  const int32_t afterScope = ctx.openRegion(TraceContext::RegionKind::Loop);
  for (const Carried &k : seen) ctx.carry(*k.tile, /*assigning=*/false);
  body();
  std::vector<Carried> carried = ctx.carried();
  std::vector<int32_t> yields;
  std::vector<TraceType> types;
  for (size_t k = 0; k < carried.size(); ++k) {
    yields.push_back(carriedValue(ctx, site, carried[k], "the loop"));
    types.push_back(ctx.type(carried[k].init));
    // The condition sees the tiles the body touched first too.
    if (k >= seen.size()) forwards.push_back(ctx.appendRegionArg(beforeScope, before, types.back()));
  }
  emitOp(ctx, site, "scf.yield", yields, DType::I1, false, {}, {}, /*results=*/0);
  TraceRegion after = ctx.closeRegion();
  (void)afterScope;
  std::vector<int32_t> condition{c.id};
  condition.insert(condition.end(), forwards.begin(), forwards.end());
  TraceNode conditionNode = makeNode(TraceOp::Op, DType::I1, false, {}, std::move(condition), site.loc);
  conditionNode.name = "scf.condition";
  conditionNode.results = 0;
  ctx.appendTo(beforeScope, before, std::move(conditionNode));
  std::vector<int32_t> inits;
  for (const Carried &k : carried) inits.push_back(k.init);
  std::vector<TraceRegion> regions;
  regions.push_back(std::move(before));
  regions.push_back(std::move(after));
  std::vector<int32_t> results = addControlOp(ctx, site, "scf.while", std::move(inits), std::move(regions), types);
  for (size_t k = 0; k < carried.size(); ++k) {
    // A tile neither side changes keeps its value (see for_range).
    bool unchanged = yields[k] == carried[k].arg && (k >= seen.size() || forwards[k] == seen[k].arg);
    if (carried[k].tile) assignResult(ctx, *carried[k].tile, carried[k].init, unchanged ? -1 : results[k]);
  }
}

void emitIf(const OpSite &site, Operand cond, const std::function<void()> &thenBody,
            const std::function<void()> &elseBody) {
  TraceContext &ctx = contextOf(site, {&cond});
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  const int32_t condId = materialize(ctx, site, cond, DType::I1);
  const TraceType &ct = ctx.type(condId);
  if (!ct.shape.empty() || ct.isPtr || ct.dtype != DType::I1)
    fail(site, "the condition must be a scalar bool, not " +
                   (ct.shape.empty() ? std::string(dtypeName(ct.dtype)) : "a tile of shape " + formatShape(ct.shape)) +
                   " (use where(...) to choose elementwise)");

  // Each side is traced on its own; what it assigns is put back before the
  // other side runs, so both start from the values before the if.
  struct Side {
    int32_t scope;
    TraceRegion nodes;
    std::vector<std::pair<ValueRef *, int32_t>> finals; // (tile, its value at the end of the side)
  };
  std::vector<TraceContext::Carried> inits; // every assigned tile, in first-assignment order
  auto trace = [&](const std::function<void()> &body) {
    Side side;
    side.scope = ctx.openRegion(TraceContext::RegionKind::Branch);
    if (body) body();
    for (const TraceContext::Carried &c : ctx.carried()) {
      // A Tile destroyed in the branch: nobody can read the result (its last
      // value may be gone with a branch nested in this one).
      if (!c.tile) continue;
      int32_t value = c.tile->id;
      ctx.checkVisible(site, value);
      side.finals.push_back({c.tile, value});
      bool known = false;
      for (const TraceContext::Carried &i : inits) known |= i.tile == c.tile;
      if (!known) inits.push_back(c);
      c.tile->id = c.init;
    }
    side.nodes = ctx.closeRegion();
    return side;
  };
  Side sides[2] = {trace(thenBody), trace(elseBody)};

  std::vector<TraceType> types;
  for (const TraceContext::Carried &i : inits) types.push_back(ctx.type(i.init));
  for (Side &side : sides) {
    std::vector<int32_t> yields;
    for (size_t k = 0; k < inits.size(); ++k) {
      int32_t value = inits[k].init;
      for (auto &[tile, final] : side.finals)
        if (tile == inits[k].tile) value = final;
      if (ctx.type(value) != types[k])
        fail(site, "a tile assigned in a branch has shape " + formatShape(types[k].shape) + " before the if_ and " +
                       formatShape(ctx.type(value).shape) +
                       " after the branch; a variable assigned in a branch must keep its shape");
      yields.push_back(value);
    }
    TraceNode yield = makeNode(TraceOp::Op, DType::I1, false, {}, std::move(yields), site.loc);
    yield.name = "scf.yield";
    yield.results = 0;
    ctx.appendTo(side.scope, side.nodes, std::move(yield));
  }
  std::vector<TraceRegion> regions;
  regions.push_back(std::move(sides[0].nodes));
  regions.push_back(std::move(sides[1].nodes));
  std::vector<int32_t> results = addControlOp(ctx, site, "scf.if", {condId}, std::move(regions), types);
  for (size_t k = 0; k < inits.size(); ++k) assignResult(ctx, *inits[k].tile, inits[k].init, results[k]);
}

} // namespace tessel::detail
