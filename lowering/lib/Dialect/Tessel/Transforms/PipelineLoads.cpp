// Software pipelining of a loop's dot operand loads (see Passes.td).
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

// The ops of `loop`'s body that `load`'s operands are computed from, in
// program order; false when one of them cannot be computed for another
// iteration (it reads a loop-carried value, has effects or regions).
bool addressSlice(scf::ForOp loop, LoadOp load, SmallVectorImpl<Operation *> &slice) {
  llvm::SetVector<Operation *> found;
  SmallVector<Value> work(load->getOperands().begin(), load->getOperands().end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == loop.getInductionVar())
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner()->getParentOp() == loop.getOperation())
        return false; // a carried value: the next iteration's is not known yet
      continue;       // from outside the loop
    }
    Operation *def = v.getDefiningOp();
    if (!loop.getBody()->findAncestorOpInBlock(*def))
      continue; // defined outside the loop
    if (def->getBlock() != loop.getBody() || def->getNumRegions() || !isMemoryEffectFree(def))
      return false;
    if (found.insert(def))
      work.append(def->getOperands().begin(), def->getOperands().end());
  }
  slice.assign(found.begin(), found.end());
  llvm::sort(slice, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return true;
}

using Pipelined = SmallVector<std::pair<LoadOp, SmallVector<Operation *>>>;

// Copies of `loads` for the iteration whose induction variable is `iv`, run
// only when `valid` (one uniform branch around them all, not a mask on every
// element); zeros otherwise: nobody reads the tiles of an iteration that
// does not run.
SmallVector<Value> loadsFor(OpBuilder &b, Location loc, Pipelined &loads, Value iv, Value inductionVar,
                            Value valid) {
  SmallVector<Type> types;
  for (auto &entry : loads)
    types.push_back(entry.first.getType());
  auto branch = b.create<scf::IfOp>(loc, types, valid, /*withElseRegion=*/true);
  OpBuilder then = branch.getThenBodyBuilder();
  IRMapping map;
  map.map(inductionVar, iv);
  SmallVector<Value> tiles;
  for (auto &[load, slice] : loads) {
    for (Operation *op : slice)
      if (!map.contains(op->getResult(0))) // slices may share ops
        then.clone(*op, map);
    Value mask = load.getMask() ? map.lookupOrDefault(load.getMask()) : Value();
    Value other = load.getOther() ? map.lookupOrDefault(load.getOther()) : Value();
    auto copy = then.create<LoadOp>(load.getLoc(), load.getType(), map.lookupOrDefault(load.getPtr()), mask, other);
    copy->setDiscardableAttrs(load->getDiscardableAttrDictionary());
    tiles.push_back(copy);
  }
  then.create<scf::YieldOp>(loc, tiles);
  OpBuilder otherwise = branch.getElseBodyBuilder();
  SmallVector<Value> zeros;
  for (Type t : types)
    zeros.push_back(otherwise.create<arith::ConstantOp>(loc, cast<TypedAttr>(otherwise.getZeroAttr(t))));
  otherwise.create<scf::YieldOp>(loc, zeros);
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
    Pipelined loads;
    for (Operation &op : *loop.getBody()) {
      auto load = dyn_cast<LoadOp>(op);
      if (!load || !isa<RankedTensorType>(load.getType()) ||
          !llvm::any_of(load->getUsers(), [](Operation *u) { return isa<DotOp>(u); }))
        continue;
      SmallVector<Operation *> slice;
      if (addressSlice(loop, load, slice))
        loads.push_back({load, std::move(slice)});
    }
    if (loads.empty())
      return;

    // The first `distance` iterations' tiles, before the loop, each masked
    // off when the loop does not reach its iteration.
    OpBuilder before(loop);
    Location loc = loop.getLoc();
    SmallVector<Value> firsts;
    Value iv = loop.getLowerBound();
    for (int64_t i = 0; i < distance; ++i) {
      if (i > 0)
        iv = before.create<arith::AddIOp>(loc, iv, loop.getStep());
      Value reached = before.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, iv, loop.getUpperBound());
      llvm::append_range(firsts, loadsFor(before, loc, loads, iv, loop.getInductionVar(), reached));
    }

    // Carried: `distance` sets of tiles, the current iteration's first. Each
    // iteration starts by loading the tiles `distance` iterations ahead (so
    // their latency hides behind this iteration's math) and yields the sets
    // shifted by one.
    const size_t n = loads.size();
    Value span = before.create<arith::MulIOp>(
        loc, loop.getStep(), before.create<arith::ConstantIntOp>(loc, loop.getStep().getType(), distance));
    IRRewriter rewriter(loop.getContext());
    auto newYields = [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> newArgs) {
      OpBuilder::InsertionGuard guard(b);
      // (The callback runs while the body is still the old loop's.)
      b.setInsertionPointToStart(loop.getBody());
      Value iv = loop.getInductionVar();
      Value ahead = b.create<arith::AddIOp>(l, iv, span);
      Value valid = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, ahead, loop.getUpperBound());
      SmallVector<Value> values(newArgs.begin() + n, newArgs.end());
      llvm::append_range(values, loadsFor(b, l, loads, ahead, iv, valid));
      return values;
    };
    FailureOr<LoopLikeOpInterface> replaced =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(rewriter, firsts, /*replaceInitOperandUsesInLoop=*/false, newYields);
    if (failed(replaced))
      return;
    auto newLoop = cast<scf::ForOp>(replaced->getOperation());
    // The body's loads (moved, not copied, into the new loop) are now the
    // first carried set; their address computations go with them.
    auto args = newLoop.getRegionIterArgs().take_back(firsts.size());
    for (auto [i, entry] : llvm::enumerate(loads)) {
      entry.first.getResult().replaceAllUsesWith(args[i]);
      entry.first.erase();
      for (Operation *op : llvm::reverse(entry.second))
        if (op->use_empty())
          op->erase();
    }
  }
  int64_t distance = 1;
};

} // namespace
