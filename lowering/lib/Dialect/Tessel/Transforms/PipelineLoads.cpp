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

// A copy of `load` for the iteration whose induction variable is `iv`,
// masked off unless `valid`.
Value loadFor(OpBuilder &b, LoadOp load, ArrayRef<Operation *> slice, Value iv, Value inductionVar, Value valid) {
  IRMapping map;
  map.map(inductionVar, iv);
  for (Operation *op : slice)
    b.clone(*op, map);
  Location loc = load.getLoc();
  auto type = cast<RankedTensorType>(load.getType());
  auto maskType = RankedTensorType::get(type.getShape(), b.getI1Type());
  Value mask = b.create<SplatOp>(loc, maskType, valid);
  if (load.getMask())
    mask = b.create<arith::AndIOp>(loc, map.lookupOrDefault(load.getMask()), mask);
  Value other = load.getOther() ? map.lookupOrDefault(load.getOther()) : Value();
  auto copy = b.create<LoadOp>(loc, type, map.lookupOrDefault(load.getPtr()), mask, other);
  copy->setDiscardableAttrs(load->getDiscardableAttrDictionary());
  return copy.getResult();
}

struct PipelineLoadsPass : mlir::tessel::impl::TesselPipelineLoadsBase<PipelineLoadsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IntegerAttr stages = tesselDialect(module.getContext()).getNumStagesAttrHelper().getAttr(module);
    if (!stages || stages.getInt() < 2)
      return;
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      pipeline(loop);
  }

  void pipeline(scf::ForOp loop) {
    // The loads to pipeline: straight in the body, feeding a dot.
    SmallVector<std::pair<LoadOp, SmallVector<Operation *>>> loads;
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

    // The first iteration's tiles, before the loop.
    OpBuilder before(loop);
    Location loc = loop.getLoc();
    Value runs = before.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, loop.getLowerBound(),
                                              loop.getUpperBound());
    SmallVector<Value> firsts;
    for (auto &[load, slice] : loads)
      firsts.push_back(loadFor(before, load, slice, loop.getLowerBound(), loop.getInductionVar(), runs));

    // Each iteration loads the next one's and yields it.
    IRRewriter rewriter(loop.getContext());
    auto newYields = [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> newArgs) {
      Value iv = loop.getInductionVar();
      Value next = b.create<arith::AddIOp>(l, iv, loop.getStep());
      Value valid = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, next, loop.getUpperBound());
      SmallVector<Value> values;
      for (auto &[load, slice] : loads)
        values.push_back(loadFor(b, load, slice, next, iv, valid));
      return values;
    };
    FailureOr<LoopLikeOpInterface> replaced =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(rewriter, firsts, /*replaceInitOperandUsesInLoop=*/false, newYields);
    if (failed(replaced))
      return;
    auto newLoop = cast<scf::ForOp>(replaced->getOperation());
    // The body's loads (moved, not copied, into the new loop) are now the
    // carried tiles; their address computations die with them.
    auto args = newLoop.getRegionIterArgs().take_back(loads.size());
    for (auto [i, entry] : llvm::enumerate(loads)) {
      entry.first.getResult().replaceAllUsesWith(args[i]);
      entry.first.erase();
    }
  }
};

} // namespace
