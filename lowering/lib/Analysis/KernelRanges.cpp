// KernelRanges: MLIR's integer range analysis with tessel's facts (see the header).
#include "tessel/Analysis/KernelRanges.h"

#include "tessel/Dialect/Tessel/IR/Dialect.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

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

} // namespace

KernelRanges::KernelRanges(ModuleOp module) {
  module.walk([&](AssumeOp assume) { recordAssumption(assume, argRanges_); });
  solver_.load<dataflow::DeadCodeAnalysis>();
  solver_.load<dataflow::SparseConstantPropagation>();
  solver_.load<AssumingRangeAnalysis>(argRanges_);
  status_ = solver_.initializeAndRun(dataflowScope(module));
}

std::optional<ConstantIntRanges> KernelRanges::rangeOf(Value v) const {
  auto *lattice = solver_.lookupState<dataflow::IntegerValueRangeLattice>(v);
  if (!lattice || lattice->getValue().isUninitialized())
    return std::nullopt;
  return lattice->getValue().getValue();
}
