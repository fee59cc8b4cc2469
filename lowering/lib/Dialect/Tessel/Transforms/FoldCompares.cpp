// Comparisons that integer ranges decide become constants (see Passes.td).
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

// The ranges `tessel.assume` states for kernel arguments.
using ArgRanges = llvm::DenseMap<Value, ConstantIntRanges>;

// assume(arg OP C) or assume(C OP arg) narrows arg's signed range.
void recordAssumption(AssumeOp assume, ArgRanges &ranges) {
  auto cmp = assume.getCond().getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return;
  Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
  arith::CmpIPredicate pred = cmp.getPredicate();
  APInt c;
  if (matchPattern(lhs, m_ConstantInt(&c))) { // C OP arg is arg (OP mirrored) C
    std::swap(lhs, rhs);
    switch (pred) {
    case arith::CmpIPredicate::slt: pred = arith::CmpIPredicate::sgt; break;
    case arith::CmpIPredicate::sle: pred = arith::CmpIPredicate::sge; break;
    case arith::CmpIPredicate::sgt: pred = arith::CmpIPredicate::slt; break;
    case arith::CmpIPredicate::sge: pred = arith::CmpIPredicate::sle; break;
    case arith::CmpIPredicate::eq: break;
    default: return;
    }
  } else if (!matchPattern(rhs, m_ConstantInt(&c))) {
    return;
  }
  auto arg = dyn_cast<BlockArgument>(lhs);
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()) || !isa<IntegerType>(arg.getType()))
    return;
  unsigned width = arg.getType().getIntOrFloatBitWidth();
  APInt lo = APInt::getSignedMinValue(width), hi = APInt::getSignedMaxValue(width);
  c = c.sextOrTrunc(width);
  switch (pred) {
  case arith::CmpIPredicate::sge: lo = c; break;
  case arith::CmpIPredicate::sgt: if (c.isMaxSignedValue()) return; lo = c + 1; break;
  case arith::CmpIPredicate::sle: hi = c; break;
  case arith::CmpIPredicate::slt: if (c.isMinSignedValue()) return; hi = c - 1; break;
  case arith::CmpIPredicate::eq: lo = hi = c; break;
  default: return;
  }
  auto [it, inserted] = ranges.try_emplace(arg, ConstantIntRanges::fromSigned(lo, hi));
  if (!inserted)
    it->second = it->second.intersection(ConstantIntRanges::fromSigned(lo, hi));
}

// MLIR's integer range analysis, with the assumptions' ranges for kernel
// arguments instead of "anything".
class AssumingRangeAnalysis : public dataflow::IntegerRangeAnalysis {
public:
  AssumingRangeAnalysis(DataFlowSolver &solver, const ArgRanges &ranges)
      : IntegerRangeAnalysis(solver), ranges_(ranges) {}

  void setToEntryState(dataflow::IntegerValueRangeLattice *lattice) override {
    auto it = ranges_.find(lattice->getAnchor());
    if (it == ranges_.end())
      return IntegerRangeAnalysis::setToEntryState(lattice);
    propagateIfChanged(lattice, lattice->join(IntegerValueRange(it->second)));
  }

  // An scf.for's induction variable lies in [lb, ub - 1] (signed: tessel's
  // loops count up from lo to hi, hi excluded).
  void visitNonControlFlowArguments(Operation *op, const RegionSuccessor &successor,
                                    ArrayRef<dataflow::IntegerValueRangeLattice *> argLattices,
                                    unsigned firstIndex) override {
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop)
      return IntegerRangeAnalysis::visitNonControlFlowArguments(op, successor, argLattices, firstIndex);
    auto *lb = getLatticeElementFor(getProgramPointAfter(op), loop.getLowerBound());
    auto *ub = getLatticeElementFor(getProgramPointAfter(op), loop.getUpperBound());
    for (dataflow::IntegerValueRangeLattice *lattice : argLattices) {
      if (lattice->getAnchor() != loop.getInductionVar())
        continue;
      IntegerValueRange range = IntegerValueRange::getMaxRange(loop.getInductionVar());
      if (!lb->getValue().isUninitialized() && !ub->getValue().isUninitialized()) {
        APInt lo = lb->getValue().getValue().smin(), hi = ub->getValue().getValue().smax();
        if (hi.sgt(lo))
          range = IntegerValueRange(ConstantIntRanges::fromSigned(lo, hi - 1));
      }
      propagateIfChanged(lattice, lattice->join(range));
    }
  }

private:
  const ArgRanges &ranges_;
};

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
    ArgRanges ranges;
    module.walk([&](AssumeOp assume) { recordAssumption(assume, ranges); });

    DataFlowSolver solver;
    solver.load<dataflow::DeadCodeAnalysis>();
    solver.load<dataflow::SparseConstantPropagation>();
    solver.load<AssumingRangeAnalysis>(ranges);
    if (failed(solver.initializeAndRun(module)))
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
      auto *lhs = solver.lookupState<dataflow::IntegerValueRangeLattice>(cmp.getLhs());
      auto *rhs = solver.lookupState<dataflow::IntegerValueRangeLattice>(cmp.getRhs());
      if (!lhs || !rhs || lhs->getValue().isUninitialized() || rhs->getValue().isUninitialized())
        return;
      std::optional<bool> known =
          intrange::evaluatePred(static_cast<intrange::CmpPredicate>(cmp.getPredicate()),
                                 lhs->getValue().getValue(), rhs->getValue().getValue());
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
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
