// Software pipelining of a loop's dot operand loads (see Passes.td).
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELPIPELINELOADS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

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

// Whether `load`'s operands can be computed for a later iteration: every op
// they come from, through the yields of the carried values they read, is
// the body's own, free of memory effects and regions (a loaded value, say,
// is not known ahead). `slice` gets those ops.
bool computableAhead(scf::ForOp loop, LoadOp load, llvm::SetVector<Operation *> &slice) {
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

// The body's values at iteration `base + k * step`, built where the caller
// says: in the body (base = the induction variable; the ops of iteration k =
// 0 move up to the builder, they run anyway) or before the loop (base = the
// lower bound, carried values start as their inits). A carried value at k >
// 0 is its yield at k - 1; values that do not vary with the iteration are
// built once. Ops that may not be speculated (a division) go inside the
// uniform branch, with everything computed from them.
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
      def->moveBefore(outer->getInsertionBlock(), outer->getInsertionPoint());
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

// Copies of `loads` for iteration k of `ahead`, built at `b`, run only when
// `valid` (one uniform branch around them all, not a mask on every
// element); poison otherwise: nobody reads the tiles of an iteration that
// does not run, and poison costs nothing (zeros were a v_mov per register
// on the branch not taken, and copies where the branches meet). Their
// address computations go before the branch where they can be
// speculated, so what the body computes anyway is shared.
SmallVector<Value> loadsFor(OpBuilder &b, Location loc, ArrayRef<LoadOp> loads, Ahead &ahead, int64_t k,
                            Value valid) {
  SmallVector<Type> types;
  for (LoadOp load : loads)
    types.push_back(load.getType());
  auto branch = b.create<scf::IfOp>(loc, types, valid, /*withElseRegion=*/true);
  OpBuilder outer(branch);
  OpBuilder then = OpBuilder::atBlockBegin(branch.thenBlock());
  ahead.enter(outer, then);
  SmallVector<Value> tiles;
  for (LoadOp load : loads) {
    Value ptr = ahead.at(load.getPtr(), k);
    Value mask = load.getMask() ? ahead.at(load.getMask(), k) : Value();
    Value other = load.getOther() ? ahead.at(load.getOther(), k) : Value();
    auto copy = then.create<LoadOp>(load.getLoc(), load.getType(), ptr, mask, other);
    copy->setDiscardableAttrs(load->getDiscardableAttrDictionary());
    tiles.push_back(copy);
  }
  ahead.leave();
  then.create<scf::YieldOp>(loc, tiles);
  OpBuilder otherwise = OpBuilder::atBlockBegin(branch.elseBlock());
  SmallVector<Value> unused;
  for (Type t : types)
    unused.push_back(otherwise.create<ub::PoisonOp>(loc, t));
  otherwise.create<scf::YieldOp>(loc, unused);
  return SmallVector<Value>(branch.getResults());
}

struct PipelineLoadsPass : mlir::tessel::impl::TesselPipelineLoadsBase<PipelineLoadsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IntegerAttr stages = tesselDialect(module.getContext()).getNumStagesAttrHelper().getAttr(module);
    if (!stages || stages.getInt() < 2)
      return markAllAnalysesPreserved();
    distance = stages.getInt() - 1;
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      pipeline(loop);
  }

  void pipeline(scf::ForOp loop) {
    // The loads to pipeline: straight in the body, feeding a dot.
    SmallVector<LoadOp> loads;
    llvm::SetVector<Operation *> slices;
    for (Operation &op : *loop.getBody()) {
      auto load = dyn_cast<LoadOp>(op);
      if (!load || !isa<RankedTensorType>(load.getType()) ||
          !llvm::any_of(load->getUsers(), [](Operation *u) { return isa<DotOp>(u); }))
        continue;
      llvm::SetVector<Operation *> slice;
      if (computableAhead(loop, load, slice)) {
        loads.push_back(load);
        slices.insert(slice.begin(), slice.end());
      }
    }
    if (loads.empty())
      return;

    // The first `distance` iterations' tiles, before the loop, each masked
    // off when the loop does not reach its iteration.
    OpBuilder before(loop);
    Location loc = loop.getLoc();
    SmallVector<Value> firsts;
    {
      Ahead first(loop, /*inBody=*/false, loop.getLowerBound(), distance - 1);
      for (int64_t k = 0; k < distance; ++k) {
        first.enter(before, before);
        Value reached = before.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, first.iv(k), loop.getUpperBound());
        llvm::append_range(firsts, loadsFor(before, loc, loads, first, k, reached));
      }
      first.finish();
    }

    // Carried: `distance` sets of tiles, the current iteration's first. Each
    // iteration starts by loading the tiles `distance` iterations ahead (so
    // their latency hides behind this iteration's math) and yields the sets
    // shifted by one.
    const size_t n = loads.size();
    IRRewriter rewriter(loop.getContext());
    Ahead next(loop, /*inBody=*/true, loop.getInductionVar(), distance);
    auto newYields = [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> newArgs) {
      OpBuilder::InsertionGuard guard(b);
      // (The callback runs while the body is still the old loop's.)
      b.setInsertionPointToStart(loop.getBody());
      next.enter(b, b);
      Value valid = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, next.iv(distance), loop.getUpperBound());
      SmallVector<Value> values(newArgs.begin() + n, newArgs.end());
      llvm::append_range(values, loadsFor(b, l, loads, next, distance, valid));
      return values;
    };
    FailureOr<LoopLikeOpInterface> replaced =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(rewriter, firsts, /*replaceInitOperandUsesInLoop=*/false, newYields);
    next.finish();
    if (failed(replaced))
      return;
    auto newLoop = cast<scf::ForOp>(replaced->getOperation());
    // The body's loads (moved, not copied, into the new loop) are now the
    // first carried set; what only their addresses needed goes with them.
    auto args = newLoop.getRegionIterArgs().take_back(firsts.size());
    for (auto [i, load] : llvm::enumerate(loads)) {
      load.getResult().replaceAllUsesWith(args[i]);
      load.erase();
    }
    SmallVector<Operation *> dead(slices.begin(), slices.end());
    llvm::sort(dead, [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
    for (Operation *op : dead)
      if (op->use_empty())
        op->erase();
  }
  int64_t distance = 1;
};

} // namespace
