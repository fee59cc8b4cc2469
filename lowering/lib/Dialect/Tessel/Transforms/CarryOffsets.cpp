// Loop-carried pointer tiles as one carried scalar offset (see Passes.td).
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCARRYOFFSETS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

// Whether pointer `ptr` is a kernel argument whose Buffer is under 2 GiB
// (tessel.pointer_range <= 31) moved by i32 offsets (through splats and
// broadcasts): then a valid element's offset from the argument fits in
// i32, whatever order the offsets are added in (i32 sums wrap the same).
bool fromSmallBuffer(Value ptr) {
  while (true) {
    if (auto add = ptr.getDefiningOp<AddPtrOp>()) {
      if (!elementTypeOf(add.getOffset().getType()).isInteger(32))
        return false;
      ptr = add.getPtr();
    } else if (auto broadcast = ptr.getDefiningOp<BroadcastOp>()) {
      ptr = broadcast.getSrc();
    } else if (auto splat = ptr.getDefiningOp<SplatOp>()) {
      ptr = splat.getSrc();
    } else {
      break;
    }
  }
  return isSmallBufferArgument(ptr);
}

// The i32 scalar every element of `offset` is (a splat or a splat
// constant), or null.
Value uniformScalar(OpBuilder &b, Value offset) {
  if (auto splat = offset.getDefiningOp<SplatOp>())
    return splat.getSrc();
  APInt c;
  if (matchPattern(offset, m_ConstantInt(&c)))
    return b.create<arith::ConstantIntOp>(offset.getLoc(), b.getI32Type(), c.getSExtValue());
  return nullptr;
}

// The addptrs that make `arg`'s next value from it, each by the same
// amount for every element (a splat or a splat constant), last first; empty
// when the yield is not such a chain.
SmallVector<AddPtrOp> uniformSteps(scf::ForOp loop, BlockArgument arg) {
  Value next = loop.getTiedLoopYieldedValue(arg)->get();
  SmallVector<AddPtrOp> steps;
  while (next != arg) {
    auto add = next.getDefiningOp<AddPtrOp>();
    APInt c;
    if (!add || add->getBlock() != loop.getBody() || !elementTypeOf(add.getOffset().getType()).isInteger(32) ||
        !(add.getOffset().getDefiningOp<SplatOp>() || matchPattern(add.getOffset(), m_ConstantInt(&c))))
      return {};
    steps.push_back(add);
    next = add.getPtr();
  }
  return steps;
}

struct CarryOffsetsPass : mlir::tessel::impl::TesselCarryOffsetsBase<CarryOffsetsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    SmallVector<Operation *> changed;
    for (scf::ForOp loop : loops) {
      // (Each change replaces the loop: start again from the new one.)
      bool any = false;
      for (bool again = true; again;) {
        again = false;
        for (BlockArgument arg : loop.getRegionIterArgs())
          if (std::optional<scf::ForOp> replaced = carryOffset(loop, arg)) {
            loop = *replaced;
            any = again = true;
            break;
          }
      }
      if (any)
        changed.push_back(loop);
    }
    if (changed.empty())
      return markAllAnalysesPreserved();
    // The pointer tiles are no longer carried (their yield is the argument
    // itself): scf.for's own canonicalization drops them.
    RewritePatternSet patterns(&getContext());
    scf::ForOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(changed, std::move(patterns), config);
  }

  // `arg` (a pointer tile from a small Buffer, moved by uniform amounts each
  // iteration) as its init plus a carried i32 offset; the new loop, or
  // nothing.
  std::optional<scf::ForOp> carryOffset(scf::ForOp loop, BlockArgument arg) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !isa<PtrType>(type.getElementType()))
      return std::nullopt;
    Value init = loop.getTiedLoopInit(arg)->get();
    Value yielded = loop.getTiedLoopYieldedValue(arg)->get();
    if (yielded == arg || !fromSmallBuffer(init))
      return std::nullopt;
    SmallVector<AddPtrOp> steps = uniformSteps(loop, arg);
    if (steps.empty())
      return std::nullopt;

    MLIRContext *ctx = loop.getContext();
    IRRewriter rewriter(ctx);
    OpBuilder before(loop);
    Location loc = loop.getLoc();
    Value zero = before.create<arith::ConstantIntOp>(loc, before.getI32Type(), 0);
    auto newYields = [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> newArgs) {
      // (At the yield: every step's amount is defined before it.)
      Value offset = newArgs.front();
      for (AddPtrOp step : llvm::reverse(steps))
        offset = b.create<arith::AddIOp>(l, offset, uniformScalar(b, step.getOffset()));
      return SmallVector<Value>{offset};
    };
    FailureOr<LoopLikeOpInterface> replaced =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(rewriter, zero, /*replaceInitOperandUsesInLoop=*/false, newYields);
    if (failed(replaced))
      return std::nullopt;
    auto newLoop = cast<scf::ForOp>(replaced->getOperation());
    BlockArgument ptrArg = newLoop.getRegionIterArgs()[arg.getArgNumber() - 1];
    Value offset = newLoop.getRegionIterArgs().back();

    // In the body: the init moved by the carried offset.
    OpBuilder top = OpBuilder::atBlockBegin(newLoop.getBody());
    Value moved = top.create<AddPtrOp>(loc, type, init, top.create<SplatOp>(loc, type.clone(top.getI32Type()), offset));
    ptrArg.replaceAllUsesExcept(moved, moved.getDefiningOp());
    // After it: the same from the last offset.
    OpResult result = newLoop.getTiedLoopResult(ptrArg);
    if (!result.use_empty()) {
      OpBuilder after(newLoop->getBlock(), std::next(newLoop->getIterator()));
      Value last = after.create<AddPtrOp>(
          loc, type, init, after.create<SplatOp>(loc, type.clone(after.getI32Type()), newLoop.getResults().back()));
      result.replaceAllUsesWith(last);
    }
    // The tile itself is no longer carried: it yields itself.
    newLoop.getTiedLoopYieldedValue(ptrArg)->set(ptrArg);
    for (AddPtrOp step : steps) {
      if (!step->use_empty())
        continue;
      Operation *amount = step.getOffset().getDefiningOp();
      step->erase();
      if (amount->use_empty())
        amount->erase();
    }
    return newLoop;
  }
};

} // namespace
