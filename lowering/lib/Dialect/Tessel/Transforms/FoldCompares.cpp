// Comparisons that integer ranges decide become constants (see Passes.td).
#include "tessel/Analysis/KernelRanges.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/Utils/InferIntRangeCommon.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELFOLDCOMPARES
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

// A value every element of which is true: a constant, or a splat or
// broadcast of one.
bool isAllTrue(Value v) {
  if (matchPattern(v, m_One()))
    return true;
  if (Operation *def = v.getDefiningOp(); isa_and_nonnull<SplatOp, BroadcastOp, ExpandDimsOp>(def))
    return isAllTrue(def->getOperand(0));
  return false;
}

// A load or store whose mask is all true needs no mask (nor `other`).
struct DropTrueLoadMask : OpRewritePattern<LoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LoadOp load, PatternRewriter &rewriter) const override {
    if (!load.getMask() || !isAllTrue(load.getMask()))
      return failure();
    rewriter.modifyOpInPlace(load, [&] {
      load.getMaskMutable().clear();
      load.getOtherMutable().clear();
    });
    return success();
  }
};
struct DropTrueStoreMask : OpRewritePattern<StoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StoreOp store, PatternRewriter &rewriter) const override {
    if (!store.getMask() || !isAllTrue(store.getMask()))
      return failure();
    rewriter.modifyOpInPlace(store, [&] { store.getMaskMutable().clear(); });
    return success();
  }
};
// x & all-true is x.
struct AndAllTrue : OpRewritePattern<arith::AndIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::AndIOp op, PatternRewriter &rewriter) const override {
    for (auto [mine, other] : {std::pair{op.getLhs(), op.getRhs()}, std::pair{op.getRhs(), op.getLhs()}})
      if (op.getType().isInteger(1) || elementTypeOf(op.getType()).isInteger(1))
        if (isAllTrue(mine) && other.getType() == op.getType()) {
          rewriter.replaceOp(op, other);
          return success();
        }
    return failure();
  }
};

struct FoldComparesPass : mlir::tessel::impl::TesselFoldComparesBase<FoldComparesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    KernelRanges ranges(module);
    if (failed(ranges.status()))
      return signalPassFailure();

    // The assumptions themselves are not folded: they are the facts.
    llvm::SmallPtrSet<Operation *, 8> facts;
    module.walk([&](AssumeOp assume) {
      if (Operation *def = assume.getCond().getDefiningOp())
        facts.insert(def);
    });
    SmallVector<std::pair<arith::CmpIOp, bool>> decided;
    module.walk([&](arith::CmpIOp cmp) {
      if (facts.contains(cmp))
        return;
      std::optional<ConstantIntRanges> lhs = ranges.rangeOf(cmp.getLhs()), rhs = ranges.rangeOf(cmp.getRhs());
      if (!lhs || !rhs)
        return;
      std::optional<bool> known =
          intrange::evaluatePred(static_cast<intrange::CmpPredicate>(cmp.getPredicate()), *lhs, *rhs);
      if (known)
        decided.push_back({cmp, *known});
    });
    for (auto [cmp, value] : decided) {
      OpBuilder b(cmp);
      Type type = cmp.getType();
      TypedAttr attr = b.getBoolAttr(value);
      if (auto tile = dyn_cast<RankedTensorType>(type))
        attr = DenseElementsAttr::get(tile, value);
      Value folded = b.create<arith::ConstantOp>(cmp.getLoc(), type, attr);
      cmp.replaceAllUsesWith(folded);
      cmp.erase();
    }

    RewritePatternSet patterns(&getContext());
    patterns.add<DropTrueLoadMask, DropTrueStoreMask, AndAllTrue>(&getContext());
    // (No "nothing changed" here: the greedy driver may move and merge
    // constants without counting it as a change.)
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
