// One software pipeliner for the loops with dots (see Passes.td): a schedule
// per loop (scheduleLoop), then the loop expanded by it (expandLoop).
#include "PipelineDirectLds.h"
#include "tessel/Dialect/Tessel/IR/DirectLds.h"
#include "tessel/Dialect/Tessel/IR/LayoutConversion.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELPIPELINELOOPS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

using namespace mlir::tessel::pipeline;

namespace {

// tessel.async_copied (TesselDialect.td) goes on a local_load or
// local_store that touches no bytes the loop's loads to LDS write while it
// runs: a slot they filled and that was waited for, or a slot of a tile
// staged through registers beside them.
void markAsyncCopied(Operation *op) {
  tesselDialect(op->getContext()).getAsyncCopiedAttrHelper().setAttr(op, UnitAttr::get(op->getContext()));
}

// Whether `v` reaches a dot, directly or through layout conversions.
bool feedsDot(Value v) {
  return llvm::any_of(v.getUsers(), [](Operation *user) {
    if (isa<DotOp>(user))
      return true;
    auto convert = dyn_cast<ConvertLayoutOp>(user);
    return convert && feedsDot(convert.getResult());
  });
}

// Whether `load`'s operands can be computed for a later iteration: every op
// they come from, through the yields of the carried values they read, is
// the body's own, free of memory effects and regions (a loaded value, say,
// is not known ahead). `slice` gets those ops.
bool computableAhead(scf::ForOp loop, Operation *load, llvm::SetVector<Operation *> &slice) {
  Operation *yield = loop.getBody()->getTerminator();
  DenseSet<Value> seen;
  SmallVector<Value> work(load->getOperands().begin(), load->getOperands().end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (isCarried(loop, v)) {
      work.push_back(yield->getOperand(cast<BlockArgument>(v).getArgNumber() - 1));
      continue;
    }
    Operation *def = bodyDef(loop, v);
    if (!def)
      continue;
    if (def->getBlock() != loop.getBody() || def->getNumRegions() || !isMemoryEffectFree(def))
      return false;
    slice.insert(def);
    work.append(def->getOperands().begin(), def->getOperands().end());
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The schedule
//===----------------------------------------------------------------------===//

// One load the schedule moves ahead, and how its tile waits for its dot.
struct PipelinedLoad {
  Operation *load; // tessel.load or tessel.buffer_load
  // The load's only use, converting its tile through LDS into a dot
  // operand's layout: the tile waits in LDS slots, and the dot reads its
  // operand from there. Null: the tile waits in registers (carried).
  ConvertLayoutOp staged;
  // The slots' type (staged loads only).
  LdsType slotType;
  // Whether the staged tile goes from global memory straight into its slot
  // (tessel.buffer_load_to_local), not through registers.
  bool direct = false;
};

// A loop's schedule over `distance` + 1 stages. Stage 0: the pipelined loads
// and the ops only their addresses and masks need, issued `distance`
// iterations ahead of their use (the first `distance` iterations' before
// the loop); stage `distance`: the rest of the body, the dots and what
// reads them, in the current iteration. The stages between are the tiles
// waiting: in registers (carried) or in LDS slots (`distance` of them). In
// the expanded body, stage 0's copies run first (with what the current
// iteration computes anyway and they read moved up before them), then
// stage `distance` in the body's order.
struct LoopSchedule {
  scf::ForOp loop;
  int64_t distance = 1;
  SmallVector<PipelinedLoad> loads;
  // Every body op (its terminator aside) with its stage, in the body's order.
  llvm::MapVector<Operation *, int64_t> stage;

  bool hasStaged() const {
    return llvm::any_of(loads, [](const PipelinedLoad &l) { return bool(l.staged); });
  }
  // Whether some staged tiles load straight into LDS (PipelinedLoad::direct):
  // then every staged tile has distance + 1 slots, and the loop waits for
  // the loads to LDS and takes its barrier at the top.
  bool straight = false;
  bool hasDirect() const { return straight; }
  // Whether the staged tiles but the first may load after the products
  // (lateEligible) and do (late): the tiles through registers then wait in
  // them only while the iteration's products do not run.
  bool lateEligible = false, late = false;
};

// Whether nothing in `loop`'s body but `loads` may write memory: loads
// moved past its ops read what they would have read.
bool onlyReadsBut(scf::ForOp loop, ArrayRef<PipelinedLoad> loads) {
  DenseSet<Operation *> moved;
  for (const PipelinedLoad &l : loads)
    moved.insert(l.load);
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (moved.contains(op) || isMemoryEffectFree(op))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || !effects.onlyHasEffect<MemoryEffects::Read>())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

// Whether `load`'s tile can wait in LDS for its dot: its one use converts
// it, through LDS (not a shuffle), into a dot operand's layout.
ConvertLayoutOp stagedConversion(scf::ForOp loop, Operation *load) {
  Value tile = load->getResult(0);
  if (!tile.hasOneUse())
    return nullptr;
  auto convert = dyn_cast<ConvertLayoutOp>(*tile.getUsers().begin());
  if (convert && convert->getBlock() == loop.getBody() && conversionPath(convert) == ConversionPath::Lds &&
      isa<DotOperandLayoutAttr>(convert.getType().getEncoding()))
    return convert;
  return nullptr;
}

// The slots' type for a tile `from` waiting in LDS for `convert` (its
// operand layout), `slots` of them. Kept over the loop: a swizzle rather
// than padding when it is as conflict-free, so the buffers take the tiles'
// bytes (occupancy).
LdsType slotType(RankedTensorType from, ConvertLayoutOp convert, int64_t slots) {
  auto module = convert->getParentOfType<ModuleOp>();
  auto arch = tesselDialect(module.getContext()).getTargetAttrHelper().getAttr(module);
  const ::tessel::TargetFacts *facts = arch ? ::tessel::lookupTarget(arch.getValue().str()) : nullptr;
  LdsStaging plan =
      planLdsStaging(from, convert.getType(), LdsPriority::Bytes, facts && facts->ldsTransposeReads);
  SmallVector<int64_t> shape{slots};
  shape.append(from.getShape().begin(), from.getShape().end());
  return LdsType::get(from.getContext(), shape, from.getElementType(), plan.order, plan.pad, swizzleOf(plan));
}

// The schedule of `loop`: the loads straight in its body that feed a dot
// and whose operands can be computed `distance` iterations ahead go to
// stage 0. None: nothing to pipeline. With `directBytes` (loads to LDS of
// that many bytes a lane) and distance 1, the staged tiles load straight
// into their slots when all of them can; with `automatic`, only when their
// slots keep kDirectLdsMinWaves waves a SIMD (slotsKeepWaves).
std::optional<LoopSchedule> scheduleLoop(scf::ForOp loop, int64_t distance, unsigned directBytes,
                                         bool automatic = false, bool lateLoads = false) {
  LoopSchedule schedule{loop, distance, {}, {}};
  llvm::SetVector<Operation *> ahead;
  for (Operation &op : *loop.getBody()) {
    if (!isa<LoadOp, BufferLoadOp>(op) || !isa<RankedTensorType>(op.getResult(0).getType()) ||
        !feedsDot(op.getResult(0)))
      continue;
    llvm::SetVector<Operation *> slice;
    if (!computableAhead(loop, &op, slice))
      continue;
    schedule.loads.push_back({&op, stagedConversion(loop, &op), {}, false});
    ahead.insert(slice.begin(), slice.end());
  }
  if (schedule.loads.empty())
    return std::nullopt;
  // A tile loaded straight into LDS lands there while the loop reads the
  // other slot: one slot more. Only at distance 1, where the wait at the end
  // of an iteration (vmcnt(0)) is for the next iteration's tiles alone.
  // Every staged tile goes straight into LDS or, when it is too small to
  // fill a load to LDS (fewer than `directBytes` a thread: dot_scaled's
  // scales, 1 or 2 bytes a lane), rides along through registers into its
  // own two slots (loaded first, stored at the iteration's end; the top's
  // barrier orders the stores before the reads). A larger tile staged
  // through registers in two slots costs an address op per swizzled access
  // pattern each iteration (its slot changes): then none goes straight.
  // Direct loads take no branch (loadsFor's `fence`): their address ops run
  // for the iteration past the last one too, so they must all be safe to
  // speculate (no division by a value that may then be 0).
  auto slotsOf = [&](const PipelinedLoad &l, int64_t n) {
    return slotType(cast<RankedTensorType>(l.load->getResult(0).getType()), l.staged, n);
  };
  auto straight = [&](const PipelinedLoad &l) { return loadsToLds(l.load, slotsOf(l, distance + 1), directBytes); };
  auto rides = [&](const PipelinedLoad &l) {
    auto type = cast<RankedTensorType>(l.load->getResult(0).getType());
    return getLinearLayout(type).numRegisters() * ldsElementBytes(type.getElementType()) < int64_t(directBytes);
  };
  SmallVector<bool> straightLoads;
  for (const PipelinedLoad &l : schedule.loads)
    straightLoads.push_back(directBytes && distance == 1 && l.staged && straight(l));
  bool direct = directBytes && distance == 1 && llvm::all_of(ahead, [](Operation *op) { return isPure(op); }) &&
                llvm::is_contained(straightLoads, true) &&
                llvm::all_of(llvm::enumerate(schedule.loads), [&](auto it) {
                  return !it.value().staged || straightLoads[it.index()] || rides(it.value());
                });
  if (direct && automatic) {
    auto module = loop->getParentOfType<ModuleOp>();
    TesselDialect &dialect = tesselDialect(module.getContext());
    auto arch = dialect.getTargetAttrHelper().getAttr(module);
    IntegerAttr warps = dialect.getNumWarpsAttrHelper().getAttr(module);
    const ::tessel::TargetFacts *facts = arch ? ::tessel::lookupTarget(arch.getValue().str()) : nullptr;
    int64_t bytes = 0;
    for (const PipelinedLoad &l : schedule.loads)
      if (l.staged) {
        LdsType type = slotsOf(l, distance + 1);
        bytes += type.getSlots() * type.slotBytes();
      }
    direct = facts && warps && slotsKeepWaves(bytes, warps.getInt(), *facts) &&
             llvm::none_of(llvm::enumerate(schedule.loads), [&](auto it) {
               return straightLoads[it.index()] && shufflesEachIteration(loop, it.value().load, slotsOf(it.value(), distance + 1));
             });
  }
  for (auto [l, isStraight] : llvm::zip(schedule.loads, straightLoads))
    if (l.staged) {
      l.direct = direct && isStraight;
      l.slotType = slotsOf(l, direct ? distance + 1 : distance);
    }
  schedule.straight = direct;
  // Late loads: through registers only, two or more staged tiles, their
  // address ops computed at the top (all speculatable: the branch around
  // the loads moves, not them) and nothing between that writes memory.
  schedule.lateEligible = !direct &&
                          llvm::count_if(schedule.loads, [](const PipelinedLoad &l) { return bool(l.staged); }) >= 2 &&
                          llvm::all_of(ahead, [](Operation *op) { return isPure(op); }) &&
                          onlyReadsBut(loop, schedule.loads);
  schedule.late = lateLoads && schedule.lateEligible;
  // An address op goes with its loads to stage 0 when only stage 0 reads it.
  DenseSet<Operation *> first;
  for (const PipelinedLoad &l : schedule.loads)
    first.insert(l.load);
  for (Operation &op : llvm::reverse(loop.getBody()->without_terminator()))
    if (ahead.contains(&op) && llvm::all_of(op.getUsers(), [&](Operation *u) { return first.contains(u); }))
      first.insert(&op);
  for (Operation &op : loop.getBody()->without_terminator())
    schedule.stage[&op] = first.contains(&op) ? 0 : distance;
  return schedule;
}

//===----------------------------------------------------------------------===//
// The expansion
//===----------------------------------------------------------------------===//

// The body's values at iteration `base + k * step`, built where the caller
// says: in the body (base = the induction variable; the ops of iteration k =
// 0 move up to the builder, they run anyway) or before the loop (base = the
// lower bound, carried values start as their inits). A carried value at k >
// 0 is its yield at k - 1; values that do not vary with the iteration are
// built once. Ops that may not be speculated (a division) go inside the
// uniform branch, with everything computed from them; where there is no
// branch (loads to LDS), scheduleLoop takes none such.
class Ahead {
public:
  // Up to `last` iterations ahead; the steps to them are computed before
  // the loop.
  Ahead(scf::ForOp loop, bool inBody, Value base, int64_t last) : loop(loop), inBody(inBody), base(base) {
    OpBuilder hoist(loop);
    Location loc = loop.getLoc();
    for (int64_t k = 1; k <= last; ++k)
      spans.push_back(hoist.create<arith::MulIOp>(
          loc, loop.getStep(), hoist.create<arith::ConstantIntOp>(loc, loop.getStep().getType(), k)));
  }

  // Builders for the values about to be read: `outer` before the branch,
  // `inner` inside it.
  void enter(OpBuilder &o, OpBuilder &i) {
    outer = &o;
    inner = &i;
  }
  // Values built inside the branch are not visible after it.
  void leave() {
    SmallVector<std::pair<Value, int64_t>> gone;
    for (auto &[key, value] : memo)
      if (inside.contains(value))
        gone.push_back(key);
    for (auto &key : gone)
      memo.erase(key);
    inside.clear();
  }

  // Drops the steps nothing read.
  void finish() {
    for (Value span : spans)
      if (span.use_empty()) {
        Operation *times = span.getDefiningOp()->getOperand(1).getDefiningOp();
        span.getDefiningOp()->erase();
        times->erase();
      }
  }

  Value iv(int64_t k) {
    if (k == 0)
      return base;
    Value &v = memo[{loop.getInductionVar(), k}];
    if (!v)
      v = outer->create<arith::AddIOp>(loop.getLoc(), base, spans[k - 1]);
    return v;
  }

  Value at(Value v, int64_t k) {
    if (v == loop.getInductionVar())
      return iv(k);
    if (isCarried(loop, v)) {
      unsigned j = cast<BlockArgument>(v).getArgNumber() - 1;
      if (k > 0)
        return at(loop.getBody()->getTerminator()->getOperand(j), k - 1);
      return inBody ? v : loop.getInitArgs()[j];
    }
    Operation *def = bodyDef(loop, v);
    if (!def)
      return v;
    if (!varies(def))
      k = 0;
    if (Value known = memo.lookup({v, k}))
      return known;
    IRMapping map;
    bool fromInside = false;
    for (Value operand : def->getOperands()) {
      Value mapped = at(operand, k);
      fromInside |= inside.contains(mapped);
      map.map(operand, mapped);
    }
    Operation *made;
    if (inBody && k == 0) {
      // Already where it would go (the builder stands before it, e.g. at
      // the body's begin): the ops built next follow it. Moved before
      // itself it stayed, and they went in before their operand.
      Block::iterator point = outer->getInsertionPoint();
      if (point != outer->getInsertionBlock()->end() && &*point == def)
        outer->setInsertionPointAfter(def);
      else
        def->moveBefore(outer->getInsertionBlock(), point);
      made = def;
    } else if (fromInside || !isPure(def)) {
      made = inner->clone(*def, map);
      for (Value r : made->getResults())
        inside.insert(r);
    } else {
      made = outer->clone(*def, map);
    }
    for (auto [old, now] : llvm::zip(def->getResults(), made->getResults()))
      memo[{old, k}] = now;
    return memo.lookup({v, k});
  }

private:
  // Whether `def`'s results change from one iteration to the next.
  bool varies(Operation *def) {
    auto [it, fresh] = variesMemo.try_emplace(def, false);
    if (!fresh)
      return it->second;
    bool result = llvm::any_of(def->getOperands(), [&](Value o) {
      if (o == loop.getInductionVar() || isCarried(loop, o))
        return true;
      Operation *d = bodyDef(loop, o);
      return d && varies(d);
    });
    return variesMemo[def] = result;
  }

  scf::ForOp loop;
  bool inBody;
  Value base;
  SmallVector<Value> spans;
  OpBuilder *outer = nullptr, *inner = nullptr;
  DenseMap<std::pair<Value, int64_t>, Value> memo;
  DenseSet<Value> inside;
  DenseMap<Operation *, bool> variesMemo;
};

// Copies of the schedule's loads for iteration k of `ahead`, built at `b`,
// run only when `valid` (one uniform branch around them all, not a mask on
// every element); poison otherwise: nobody reads the tiles of an iteration
// that does not run, and poison costs nothing (zeros were a v_mov per
// register on the branch not taken, and copies where the branches meet).
// Their address computations go before the branch where they can be
// speculated, so what the body computes anyway is shared.
// A direct load (PipelinedLoad::direct) writes slot `slot` of its buffer
// instead (its result: null).
// With `fence` (in the body), the direct loads take no branch: they run
// every iteration, `valid` ANDed into their masks (a load to LDS masked off
// writes 0 into a slot nobody reads then), at `b` after everything they
// read, `fence` (the wait and barrier that free their slot) right before
// them. Branch-free, the backend can compute their offsets, masks and LDS
// pointers before the barrier, so that the loads issue right after it.
SmallVector<Value> loadsFor(OpBuilder &b, Location loc, ArrayRef<PipelinedLoad> loads, Ahead &ahead, int64_t k,
                            Value valid, ArrayRef<Value> buffers = {}, Value slot = {},
                            function_ref<void(OpBuilder &)> fence = nullptr) {
  SmallVector<Type> types;
  for (const PipelinedLoad &l : loads)
    if (!l.direct)
      types.push_back(l.load->getResult(0).getType());
  const bool branchFree = bool(fence);
  // The branch around the loads (without `fence`, the direct ones too).
  auto branched = [&]() {
    SmallVector<Value> results;
    // (Without results the branch gets its terminators made.)
    auto branch = b.create<scf::IfOp>(loc, types, valid, /*withElseRegion=*/!types.empty());
    OpBuilder outer(branch);
    OpBuilder then = OpBuilder::atBlockBegin(branch.thenBlock());
    ahead.enter(outer, then);
    SmallVector<Value> tiles;
    for (auto [j, l] : llvm::enumerate(loads)) {
      if (l.direct && branchFree)
        continue;
      IRMapping map;
      for (Value operand : l.load->getOperands())
        map.map(operand, ahead.at(operand, k));
      if (l.direct) {
        toLds(then, cast<BufferLoadOp>(l.load), map, buffers[j], slot, {}, &outer);
        continue;
      }
      tiles.push_back(then.clone(*l.load, map)->getResult(0));
    }
    ahead.leave();
    if (!types.empty()) {
      then.create<scf::YieldOp>(loc, tiles);
      OpBuilder otherwise = OpBuilder::atBlockBegin(branch.elseBlock());
      SmallVector<Value> unused;
      for (Type t : types)
        unused.push_back(otherwise.create<ub::PoisonOp>(loc, t));
      otherwise.create<scf::YieldOp>(loc, unused);
    }
    auto result = branch.getResults().begin();
    for (const PipelinedLoad &l : loads)
      results.push_back(l.direct ? Value() : Value(*result++));
    return results;
  };
  if (!branchFree)
    return branched();
  ahead.enter(b, b);
  SmallVector<IRMapping> maps(loads.size());
  SmallVector<Value> masks(loads.size());
  for (auto [j, l] : llvm::enumerate(loads)) {
    if (!l.direct)
      continue;
    for (Value operand : l.load->getOperands())
      maps[j].map(operand, ahead.at(operand, k));
    auto load = cast<BufferLoadOp>(l.load);
    auto maskType = cast<RankedTensorType>(load.getOffsets().getType()).clone(b.getI1Type());
    Value all = b.create<SplatOp>(loc, maskType, valid);
    masks[j] = load.getMask() ? b.create<arith::AndIOp>(loc, maps[j].lookup(load.getMask()), all).getResult() : all;
  }
  ahead.leave();
  fence(b);
  // The loads through registers (their branch) first: the wait before a
  // staged one's store at the iteration's end then lets the loads to LDS
  // issued after them run on (vmcnt counts in order).
  SmallVector<Value> results = types.empty() ? SmallVector<Value>(loads.size()) : branched();
  for (auto [j, l] : llvm::enumerate(loads))
    if (l.direct)
      toLds(b, cast<BufferLoadOp>(l.load), maps[j], buffers[j], slot, masks[j]);
  return results;
}

// Expands `s.loop` by its schedule. The loop carries, per load j and for
// each iteration ahead k < distance, the tile of iteration i + k (set k),
// except k = 0 of a tile staged in LDS, which the dot reads from its slot;
// and, with several slots, the slot to read. Each iteration starts with the
// loads of iteration i + distance, ends by writing the tile of i + 1 into
// the next slot, and yields the sets shifted by one.
scf::ForOp expandLoop(LoopSchedule &s) {
  scf::ForOp loop = s.loop;
  const int64_t distance = s.distance;
  const size_t n = s.loads.size();
  OpBuilder before(loop);
  Location loc = loop.getLoc();
  MLIRContext *ctx = loop.getContext();

  // The LDS slots per staged tile (the LDS plan keeps them over the loop):
  // `distance` of them, one more for tiles loaded straight into LDS (loaded
  // while the loop reads another). Made first when the prologue loads into
  // them.
  const bool staging = s.hasStaged(), direct = s.hasDirect();
  const int64_t slots = direct ? distance + 1 : distance;
  Value zero;
  SmallVector<Value> buffers(n);
  // (`firsts`: each buffer's first tile, stored into slot 0 as it is made.)
  auto allocate = [&](ArrayRef<Value> firsts) {
    zero = before.create<arith::ConstantIntOp>(loc, before.getI32Type(), 0);
    for (auto [j, l] : llvm::enumerate(s.loads)) {
      if (!l.staged)
        continue;
      buffers[j] = before.create<LocalAllocOp>(loc, l.slotType);
      if (!firsts.empty())
        before.create<LocalStoreOp>(loc, firsts[j], buffers[j], zero);
    }
  };
  if (direct)
    allocate({});

  // Prologue: the first `distance` iterations' tiles, each masked off when
  // the loop does not reach its iteration (a direct load's into slot k).
  SmallVector<Value> firsts;
  {
    Ahead first(loop, /*inBody=*/false, loop.getLowerBound(), distance - 1);
    for (int64_t k = 0; k < distance; ++k) {
      first.enter(before, before);
      Value reached = before.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, first.iv(k), loop.getUpperBound());
      Value slot = direct ? Value(before.create<arith::ConstantIntOp>(loc, before.getI32Type(), k)) : Value();
      llvm::append_range(firsts, loadsFor(before, loc, s.loads, first, k, reached, buffers, slot));
    }
    first.finish();
  }
  Ahead next(loop, /*inBody=*/true, loop.getInductionVar(), distance);

  // The first iteration's tile in slot 0, visible to every thread (direct
  // loads: the wait and barrier at the top of the first iteration).
  if (staging && !direct) {
    allocate(firsts);
    before.create<BarrierOp>(loc);
  }
  // Beside loads to LDS, a tile through registers: the first into slot 0
  // (the first iteration's barrier orders it before the reads). Its slots'
  // accesses never touch the bytes the loads to LDS write (markAsyncCopied).
  if (direct)
    for (auto [j, l] : llvm::enumerate(s.loads))
      if (l.staged && !l.direct)
        markAsyncCopied(before.create<LocalStoreOp>(loc, firsts[j], buffers[j], zero));

  // The carried sets: (k, j) for each k < distance and load j, but k = 0 of
  // a staged tile; then the slot to read when it changes.
  SmallVector<std::pair<int64_t, size_t>> sets;
  SmallVector<Value> inits;
  for (int64_t k = 0; k < distance; ++k)
    for (size_t j = 0; j < n; ++j)
      if (k > 0 || !s.loads[j].staged) {
        sets.push_back({k, j});
        inits.push_back(firsts[k * n + j]);
      }
  const bool carrySlot = staging && slots > 1;
  if (carrySlot)
    inits.push_back(zero);

  IRRewriter rewriter(ctx);
  auto newYields = [&](OpBuilder &end, Location l, ArrayRef<BlockArgument> newArgs) {
    // (The callback runs while the body is still the old loop's.)
    DenseMap<std::pair<int64_t, size_t>, Value> carried;
    for (auto [set, arg] : llvm::zip(sets, newArgs))
      carried[set] = arg;

    // The slots: read this iteration's, write the next one's (round);
    // computed first when the loads at the top write into it.
    OpBuilder top = OpBuilder::atBlockBegin(loop.getBody());
    Value read = zero, write = zero;
    if (carrySlot) {
      OpBuilder &at = direct ? top : end;
      read = newArgs.back();
      Value after = at.create<arith::AddIOp>(l, read, at.create<arith::ConstantIntOp>(l, at.getI32Type(), 1));
      Value wraps = at.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, after,
                                             at.create<arith::ConstantIntOp>(l, at.getI32Type(), slots));
      write = at.create<arith::SelectOp>(l, wraps, zero, after);
    }
    // Stage 0 for iteration i + distance, first: its latency hides behind
    // this iteration's math. Direct loads write the slot of iteration i + 1
    // (= i + distance) after the thread waits for its loads of this
    // iteration's slot and a barrier: then every thread's tiles of iteration
    // i have landed and every thread finished reading the other slot in
    // iteration i - 1. The wait and the barrier come after the loads'
    // address computations, right before their branch, so that the loads
    // issue as soon as the barrier lets them and have the whole iteration,
    // reads and dots, to land in before the next iteration's wait.
    SmallVector<Value> fresh;
    // Late loads (LoopSchedule::late): the staged tiles but the first, with
    // their addresses made here, load at the end, after the products.
    SmallVector<size_t> later;
    SmallVector<IRMapping> laterMaps;
    Value valid;
    {
      next.enter(top, top);
      valid = top.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, next.iv(distance), loop.getUpperBound());
      auto fence = [&](OpBuilder &at) {
        at.create<AsyncWaitOp>(l);
        at.create<BarrierOp>(l);
      };
      SmallVector<PipelinedLoad> now;
      SmallVector<size_t> nowAt;
      for (auto [j, p] : llvm::enumerate(s.loads)) {
        if (s.late && p.staged && llvm::any_of(ArrayRef(s.loads).take_front(j),
                                               [](const PipelinedLoad &q) { return bool(q.staged); })) {
          later.push_back(j);
          continue;
        }
        now.push_back(p);
        nowAt.push_back(j);
      }
      SmallVector<Value> made = loadsFor(top, l, now, next, distance, valid, buffers, write,
                                         direct ? function_ref<void(OpBuilder &)>(fence) : nullptr);
      fresh.resize(n);
      for (auto [j, v] : llvm::zip(nowAt, made))
        fresh[j] = v;
      // Right after the first loads' branch (a builder at the block's
      // begin follows its first op, which the expansion may move).
      if (!later.empty()) {
        OpBuilder after(ctx);
        after.setInsertionPointAfter(fresh[nowAt.front()].getDefiningOp());
        next.enter(after, after);
        for (size_t j : later) {
          IRMapping &map = laterMaps.emplace_back();
          for (Value operand : s.loads[j].load->getOperands())
            map.map(operand, next.at(operand, distance));
        }
        next.leave();
        next.enter(top, top);
      }
    }
    // The tile of iteration i + k + 1, which set k yields.
    auto following = [&](int64_t k, size_t j) { return k + 1 < distance ? carried.lookup({k + 1, j}) : fresh[j]; };

    // Stage `distance`: the dots read their operands from the slots or the
    // carried set 0.
    for (auto [j, p] : llvm::enumerate(s.loads)) {
      if (p.staged) {
        OpBuilder at(p.staged);
        Value tile = at.create<LocalLoadOp>(p.staged.getLoc(), p.staged.getType(), buffers[j], read);
        // Of a slot whose loads to LDS were waited for, never of one being
        // loaded, or of a slot no load to LDS writes: the lowering tells the
        // backend (no wait before the reads).
        if (direct)
          markAsyncCopied(tile.getDefiningOp());
        p.staged.getResult().replaceAllUsesWith(tile);
        p.staged.erase();
      } else {
        p.load->getResult(0).replaceAllUsesWith(carried.lookup({0, j}));
      }
    }
    // Then the next iteration's tiles into their slots, between barriers:
    // with one slot every thread must have read it before anyone writes it;
    // with more, one barrier orders all the LDS traffic. Direct loads
    // wrote theirs (their wait and barrier are at the top).
    // Beside loads to LDS, tiles through registers go into the next slot at
    // the end, without a barrier: the next iteration's top one orders them
    // (every thread finished reading that slot before this one's).
    if (direct)
      for (auto [j, p] : llvm::enumerate(s.loads))
        if (p.staged && !p.direct)
          markAsyncCopied(end.create<LocalStoreOp>(loc, following(0, j), buffers[j], write));
    for (auto [j, map] : llvm::zip(later, laterMaps)) {
      Type type = s.loads[j].load->getResult(0).getType();
      auto branch = end.create<scf::IfOp>(loc, TypeRange{type}, valid, /*withElseRegion=*/true);
      OpBuilder then = OpBuilder::atBlockBegin(branch.thenBlock());
      then.create<scf::YieldOp>(loc, then.clone(*s.loads[j].load, map)->getResult(0));
      OpBuilder otherwise = OpBuilder::atBlockBegin(branch.elseBlock());
      otherwise.create<scf::YieldOp>(loc, otherwise.create<ub::PoisonOp>(loc, type).getResult());
      fresh[j] = branch.getResult(0);
    }
    if (staging && !direct) {
      if (slots == 1)
        end.create<BarrierOp>(loc);
      for (auto [j, p] : llvm::enumerate(s.loads))
        if (p.staged)
          end.create<LocalStoreOp>(loc, following(0, j), buffers[j], write);
      end.create<BarrierOp>(loc);
    }

    SmallVector<Value> values;
    for (auto [k, j] : sets)
      values.push_back(following(k, j));
    if (carrySlot)
      values.push_back(write);
    return values;
  };
  FailureOr<LoopLikeOpInterface> replaced =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(rewriter, inits, /*replaceInitOperandUsesInLoop=*/false, newYields);
  next.finish();
  if (failed(replaced))
    return nullptr;
  // Direct loads: no barrier ends the last iteration's reads, and its loads
  // (masked off) still write zeros into the other slot: whatever reuses the
  // slots' bytes after the loop waits for both, every thread's.
  if (direct) {
    OpBuilder after(ctx);
    after.setInsertionPointAfter(replaced->getOperation());
    after.create<AsyncWaitOp>(loc);
    after.create<BarrierOp>(loc);
  }
  // The body's loads are gone (their copies run ahead), and so are the ops
  // of stage 0 only they read.
  for (auto &[op, stage] : llvm::reverse(s.stage))
    if (stage == 0 && op->use_empty())
      op->erase();
  return cast<scf::ForOp>(replaced->getOperation());
}

struct PipelineLoopsPass : mlir::tessel::impl::TesselPipelineLoopsBase<PipelineLoopsPass> {
  using TesselPipelineLoopsBase::TesselPipelineLoopsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IntegerAttr stages = tesselDialect(module.getContext()).getNumStagesAttrHelper().getAttr(module);
    if (!stages || stages.getInt() < 2)
      return markAllAnalysesPreserved();
    // Loads to LDS of 16 bytes a lane (gfx950): always when asked for,
    // never when asked not to, else where they keep the waves
    // (kDirectLdsMinWaves); gfx942's 4-byte ones would take four times the
    // instructions.
    const int mode = directToLds >= 0 ? int(directToLds) : directToLdsMode(module);
    unsigned directBytes = 0;
    if (mode != 0) {
      auto arch = tesselDialect(module.getContext()).getTargetAttrHelper().getAttr(module);
      const ::tessel::TargetFacts *facts = arch ? ::tessel::lookupTarget(arch.getValue().str()) : nullptr;
      if (facts && facts->directLdsLoadBytes >= 16)
        directBytes = facts->directLdsLoadBytes;
    }
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    llvm::SetVector<Operation *> expanded;
    TesselDialect &dialect = tesselDialect(module.getContext());
    const bool late = dialect.getLateStagedLoadsAttrHelper().isAttrPresent(module);
    for (scf::ForOp loop : loops)
      if (std::optional<LoopSchedule> schedule =
              scheduleLoop(loop, stages.getInt() - 1, directBytes, mode < 0, late)) {
        if (schedule->lateEligible)
          dialect.getLateStagedLoadsApplyAttrHelper().setAttr(module, UnitAttr::get(module.getContext()));
        if (auto function = loop->getParentOfType<FunctionOpInterface>())
          expanded.insert(function);
        if (scf::ForOp done = expandLoop(*schedule))
          // What use-buffer-ops left of the body's pointer chains (dead:
          // the loads read offsets now) goes, when no CSE ran since.
          for (Operation *op = done.getBody()->getTerminator()->getPrevNode(); op;) {
            Operation *before = op->getPrevNode();
            if (isOpTriviallyDead(op))
              op->erase();
            op = before;
          }
      }
    // The prologue's copies of the body's loop-invariant address ops come
    // before the loop: the body's own become those (hoisted).
    IRRewriter rewriter(module.getContext());
    DominanceInfo dominance;
    for (Operation *function : expanded)
      eliminateCommonSubExpressions(rewriter, dominance, function);
  }
};

} // namespace
