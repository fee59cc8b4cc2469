// tessel-pipeline-loops' loads straight into LDS (see PipelineDirectLds.h).
#include "PipelineDirectLds.h"

#include "tessel/Dialect/Tessel/IR/DirectLds.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/IR/LinearLayout.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tessel;

namespace mlir::tessel::pipeline {

bool isCarried(scf::ForOp loop, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == loop.getBody() && v != loop.getInductionVar();
}

// The body's own op that defines `v`, or null (from outside the loop, an
// argument of the body).
Operation *bodyDef(scf::ForOp loop, Value v) {
  Operation *def = v.getDefiningOp();
  return def && loop.getBody()->findAncestorOpInBlock(*def) ? def : nullptr;
}

// Whether staged `load` can write its slots of `type` straight from global
// memory, `directBytes` a lane: a buffer load (out of range reads 0, what a
// load to LDS writes) with no `other` but zero, `directBytes` per group, and
// a layout that puts a wave's lanes on consecutive chunks of the slot
// (planDirectLds).
bool loadsToLds(Operation *load, LdsType type, unsigned directBytes) {
  auto buffer = dyn_cast<BufferLoadOp>(load);
  if (!buffer || !directBytes)
    return false;
  if (Value other = buffer.getOther())
    if (!matchPattern(other, m_AnyZeroFloat()) && !matchPattern(other, m_Zero()))
      return false;
  return buffer.getVec() * ldsElementBytes(type.getElementType()) == int64_t(directBytes) &&
         planDirectLds(buffer.getOffsets().getType(), type, buffer.getVec()).has_value();
}

// Whether `v` changes from one iteration of `loop` to the next.
bool variesIn(scf::ForOp loop, Value v) {
  DenseSet<Value> seen;
  SmallVector<Value> work{v};
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (x == loop.getInductionVar() || isCarried(loop, x))
      return true;
    if (Operation *def = bodyDef(loop, x))
      work.append(def->getOperands().begin(), def->getOperands().end());
  }
  return false;
}

// Whether `v`, less the shift splitShift takes out, changes from one
// iteration of `loop` to the next.
bool variesBeyondShift(scf::ForOp loop, Value v) {
  if (auto splat = v.getDefiningOp<SplatOp>(); splat && splat.getSrc().getType().isInteger(32))
    return false;
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return variesBeyondShift(loop, add.getLhs()) || variesBeyondShift(loop, add.getRhs());
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    for (auto [x, y] : {std::pair(mul.getLhs(), mul.getRhs()), std::pair(mul.getRhs(), mul.getLhs())})
      if (auto factor = y.getDefiningOp<SplatOp>(); factor && factor.getSrc().getType().isInteger(32))
        return variesIn(loop, factor.getSrc()) || variesBeyondShift(loop, x);
  if (isa_and_nonnull<BroadcastOp, ExpandDimsOp>(v.getDefiningOp()))
    return variesBeyondShift(loop, v.getDefiningOp()->getOperand(0));
  return variesIn(loop, v);
}

// Whether `load`, straight into a slot of `type`, moves offsets between
// lanes every iteration for more than one group of a thread's registers:
// its slot's swizzle puts another lane's element at a lane's chunk
// (DirectLdsPlan::permutes), and its offsets vary beyond a uniform shift
// (which the lowering adds after moving them, before the loop: splitShift).
// Each such group costs a ds_bpermute every iteration: measured on gfx950
// (the library's fp8 matmul, then with offsets made from k each iteration),
// llvm-mca cycles through registers / straight into LDS: 8 waves (one group
// a tile) 135 / 89.6, 4 waves (two) 121.9 / 134.4.
bool shufflesEachIteration(scf::ForOp loop, Operation *load, LdsType type) {
  auto buffer = cast<BufferLoadOp>(load);
  std::optional<DirectLdsPlan> plan = planDirectLds(buffer.getOffsets().getType(), type, buffer.getVec());
  if (!plan || !plan->permutes || plan->groupStart.size() < 2)
    return false;
  return variesBeyondShift(loop, buffer.getOffsets());
}

// Unless asked for (or against), loads to LDS are taken where their two
// slots per tile still let a SIMD hold this many of the kernel's waves (LDS
// per CU over the slots' bytes, in workgroups): measured on gfx950 with
// scripts/triton-compare.py, llvm-mca cycles of the main loop through
// registers / straight into LDS: fp8 matmul 8 waves 129.1 / 89.5 (10 waves
// by LDS), f16 with B stored [N, K] 8 waves 126.8 / 121.1 (4 by LDS, 4 by
// VGPRs either way), 4 waves 185.5 at 3 waves / 197.4 at 2 (the 64 KiB of
// slots allow 2).
constexpr int64_t kDirectLdsMinWaves = 4;

int directToLdsMode(ModuleOp module) {
  TesselDialect &dialect = tesselDialect(module.getContext());
  if (dialect.getDirectToLdsAttrHelper().isAttrPresent(module))
    return 1;
  if (dialect.getNoDirectToLdsAttrHelper().isAttrPresent(module))
    return 0;
  return -1;
}

// Whether slots of `bytes` (all of a loop's) keep kDirectLdsMinWaves waves
// of `numWarps` a SIMD on `facts`.
bool slotsKeepWaves(int64_t bytes, int64_t numWarps, const ::tessel::TargetFacts &facts) {
  if (bytes <= 0)
    return true;
  const int64_t workgroups = std::min<int64_t>(facts.ldsPerCu / bytes, facts.workgroupsPerCu);
  return workgroups * numWarps >= kDirectLdsMinWaves * int64_t(facts.simdsPerCu);
}

// `v` as x + splat(s), s an i32 scalar: the splats of i32 scalars under
// adds, broadcasts and expand_dims, summed (offsets made from the induction
// variable, as broadcast(splat(k) + range) + rows + splat(base), as well as
// a carried offset's x + splat(s)), x built at `b` in v's form without them
// (the prologue
// builds the same ops before the loop, and the CSE after the expansion
// makes the body's x those: moved between lanes once). No shift: v itself.
std::pair<Value, Value> splitShift(OpBuilder &b, Value v) {
  Location loc = v.getLoc();
  if (auto splat = v.getDefiningOp<SplatOp>(); splat && splat.getSrc().getType().isInteger(32))
    return {Value(), splat.getSrc()};
  if (auto add = v.getDefiningOp<arith::AddIOp>()) {
    auto [lhs, ls] = splitShift(b, add.getLhs());
    auto [rhs, rs] = splitShift(b, add.getRhs());
    if (!ls && !rs)
      return {v, Value()};
    Value shift = ls && rs ? b.create<arith::AddIOp>(loc, ls, rs).getResult() : ls ? ls : rs;
    return {lhs && rhs ? b.create<arith::AddIOp>(loc, lhs, rhs).getResult() : lhs ? lhs : rhs, shift};
  }
  // (x + splat(s)) * splat(c) = x * splat(c) + splat(s * c), wrapping as
  // both sides do: offsets k * stride each iteration.
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    for (auto [x, y] : {std::pair(mul.getLhs(), mul.getRhs()), std::pair(mul.getRhs(), mul.getLhs())})
      if (auto factor = y.getDefiningOp<SplatOp>(); factor && factor.getSrc().getType().isInteger(32))
        if (auto [rest, s] = splitShift(b, x); s)
          return {rest ? b.create<arith::MulIOp>(loc, rest, y).getResult() : Value(),
                  b.create<arith::MulIOp>(loc, s, factor.getSrc()).getResult()};
  if (auto broadcast = v.getDefiningOp<BroadcastOp>())
    if (auto [rest, s] = splitShift(b, broadcast.getSrc()); s)
      return {rest ? b.create<BroadcastOp>(loc, v.getType(), rest).getResult() : Value(), s};
  if (auto expand = v.getDefiningOp<ExpandDimsOp>())
    if (auto [rest, s] = splitShift(b, expand.getSrc()); s)
      return {rest ? b.create<ExpandDimsOp>(loc, v.getType(), rest, expand.getAxisAttr()).getResult() : Value(), s};
  return {v, Value()};
}

// `load` (its operands mapped by `map`) writing slot `slot` of `buffer`
// straight from global memory. Offsets x + splat(s) (a carried offset) pass
// x and s apart: the lowering moves x between lanes (for the slot's
// swizzle) where x is made, before the loop, not each iteration.
// `mask`: the mask to load with (the load's own, mapped, when null).
// `outside`: where x and s are built, when not at `b` (before a branch).
void toLds(OpBuilder &b, BufferLoadOp load, IRMapping &map, Value buffer, Value slot, Value mask,
           OpBuilder *outside) {
  auto [offsets, shift] = splitShift(outside ? *outside : b, map.lookupOrDefault(load.getOffsets()));
  // Offsets that are all shift (one splat: never 16 bytes a lane today) go
  // in whole: the op needs its tile.
  if (!offsets) {
    offsets = map.lookupOrDefault(load.getOffsets());
    shift = Value();
  }
  auto mapped = [&](Value v) { return v ? map.lookupOrDefault(v) : Value(); };
  b.create<BufferLoadToLocalOp>(load.getLoc(), mapped(load.getBase()), offsets, shift,
                                mask ? mask : mapped(load.getMask()),
                                mapped(load.getBound()), buffer, slot, load.getVecAttr());
}

} // namespace mlir::tessel::pipeline
