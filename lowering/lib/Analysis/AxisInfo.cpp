// The axis analysis on MLIR's sparse forward dataflow framework: facts flow
// from operands to results through the transfer functions (AxisInfoTransfer),
// and meet (AxisInfo::join) where control flow merges, so loop-carried values
// and scf.if results get what holds on every path.
#include "tessel/Analysis/AxisInfo.h"

#include "AxisInfoTransfer.h"
#include "tessel/Analysis/DataflowScope.h"

#include "tessel/Dialect/Tessel/IR/Dialect.h"

#include "mlir/Analysis/DataFlow/SparseAnalysis.h"
#include "mlir/Analysis/DataFlow/Utils.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/raw_ostream.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tessel;

int64_t mlir::tessel::highestPowerOf2Divisor(int64_t v) {
  if (v == 0)
    return AxisInfo::kMaxDivisibility;
  int64_t p = v & -v;
  return std::min<int64_t>(p < 0 ? -p : p, AxisInfo::kMaxDivisibility);
}

AxisInfo AxisInfo::unknown(unsigned rank) {
  AxisInfo a;
  rank = std::max(rank, 1u);
  a.contiguity.assign(rank, 1);
  a.divisibility.assign(rank, 1);
  a.constancy.assign(rank, 1);
  return a;
}

AxisInfo AxisInfo::uniform(ArrayRef<int64_t> shape, int64_t divisibility) {
  AxisInfo a = unknown(shape.size());
  for (unsigned d = 0; d < shape.size(); ++d)
    a.constancy[d] = shape[d];
  a.divisibility.assign(a.rank(), divisibility);
  return a;
}

AxisInfo AxisInfo::join(const AxisInfo &a, const AxisInfo &b) {
  if (a.isUninitialized())
    return b;
  if (b.isUninitialized() || a == b)
    return a;
  if (a.rank() != b.rank())
    return unknown(a.rank());
  AxisInfo out = a;
  out.nonNegative = a.nonNegative && b.nonNegative;
  for (unsigned d = 0; d < a.rank(); ++d) {
    out.contiguity[d] = std::gcd(a.contiguity[d], b.contiguity[d]);
    out.divisibility[d] = std::gcd(a.divisibility[d], b.divisibility[d]);
    out.constancy[d] = std::gcd(a.constancy[d], b.constancy[d]);
  }
  return out;
}

bool AxisInfo::operator==(const AxisInfo &o) const {
  return contiguity == o.contiguity && divisibility == o.divisibility && constancy == o.constancy &&
         nonNegative == o.nonNegative;
}

void AxisInfo::print(raw_ostream &os) const {
  auto list = [&](ArrayRef<int64_t> v) {
    os << "[";
    llvm::interleaveComma(v, os);
    os << "]";
  };
  os << "contiguity = ";
  list(contiguity);
  os << ", divisibility = ";
  list(divisibility);
  os << ", constancy = ";
  list(constancy);
  if (nonNegative)
    os << ", non-negative";
}

namespace {

using AxisInfoLattice = dataflow::Lattice<AxisInfo>;

// Whether an assume() says v >= 0: assume(v >= C) with C >= 0, assume(v > C)
// with C >= -1, or either written the other way round.
bool assumedNonNegative(Value v) {
  for (Operation *user : v.getUsers()) {
    auto cmp = dyn_cast<arith::CmpIOp>(user);
    if (!cmp || !llvm::any_of(cmp->getUsers(), [](Operation *u) { return isa<AssumeOp>(u); }))
      continue;
    const bool left = cmp.getLhs() == v;
    APInt c;
    if (!matchPattern(left ? cmp.getRhs() : cmp.getLhs(), m_ConstantInt(&c)))
      continue;
    using P = arith::CmpIPredicate;
    const P pred = cmp.getPredicate();
    if ((left && pred == P::sge) || (!left && pred == P::sle))
      if (!c.isNegative())
        return true;
    if ((left && pred == P::sgt) || (!left && pred == P::slt))
      if (c.sge(-1))
        return true;
  }
  return false;
}

unsigned rankOf(Value v) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return std::max<unsigned>(1, t.getRank());
  return 1;
}

class AxisInfoDataFlow : public dataflow::SparseForwardDataFlowAnalysis<AxisInfoLattice> {
public:
  using SparseForwardDataFlowAnalysis::SparseForwardDataFlowAnalysis;

  LogicalResult visitOperation(Operation *op, ArrayRef<const AxisInfoLattice *> operands,
                               ArrayRef<AxisInfoLattice *> results) override {
    if (results.size() != 1) { // reduce, scan with several operands: unknown
      setAllToEntryStates(results);
      return success();
    }
    SmallVector<const AxisInfo *> in;
    for (const AxisInfoLattice *operand : operands) {
      if (operand->getValue().isUninitialized())
        return success(); // visited again once every operand is known
      in.push_back(&operand->getValue());
    }
    AxisInfo info = transferAxisInfo(op, in);
    info.nonNegative = info.nonNegative || assumedNonNegative(op->getResult(0));
    propagateIfChanged(results[0], results[0]->join(info));
    return success();
  }

  // A loop's induction variable: each value is lower bound + k * step.
  void visitNonControlFlowArguments(Operation *op, const RegionSuccessor &successor,
                                    ArrayRef<AxisInfoLattice *> argLattices,
                                    unsigned firstIndex) override {
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop || argLattices.empty() || argLattices[0]->getAnchor() != loop.getInductionVar())
      return SparseForwardDataFlowAnalysis::visitNonControlFlowArguments(op, successor, argLattices,
                                                                        firstIndex);
    const AxisInfoLattice *lb = getLatticeElementFor(getProgramPointAfter(op), loop.getLowerBound());
    const AxisInfoLattice *step = getLatticeElementFor(getProgramPointAfter(op), loop.getStep());
    AxisInfo iv = AxisInfo::unknown(1);
    if (!lb->getValue().isUninitialized() && !step->getValue().isUninitialized()) {
      iv.divisibility[0] =
          std::gcd(lb->getValue().divisibility[0], step->getValue().divisibility[0]);
      iv.nonNegative = lb->getValue().nonNegative && step->getValue().nonNegative;
    }
    // The other arguments control flow does not set are unknown; indices are
    // checked one by one (the IV may or may not be counted before firstIndex).
    size_t inputs = successor.getSuccessorInputs().size();
    for (size_t i = 0; i < argLattices.size(); ++i) {
      if (argLattices[i]->getAnchor() == loop.getInductionVar())
        propagateIfChanged(argLattices[i], argLattices[i]->join(iv));
      else if (i < firstIndex || i >= firstIndex + inputs)
        setToEntryState(argLattices[i]);
    }
  }

  // Values nothing flows into: kernel arguments (with the divisibility the
  // call's specialization or an assume() recorded) and anything unanalysable.
  void setToEntryState(AxisInfoLattice *lattice) override {
    Value v = lattice->getAnchor();
    AxisInfo info = AxisInfo::unknown(rankOf(v));
    if (auto arg = dyn_cast<BlockArgument>(v))
      if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
        if (IntegerAttr div = func.getArgAttrOfType<IntegerAttr>(
                arg.getArgNumber(),
                tesselDialect(func.getContext()).getDivisibilityAttrHelper().getName()))
          info = AxisInfo::uniform({}, div.getInt());
    info.nonNegative = assumedNonNegative(v);
    propagateIfChanged(lattice, lattice->join(info));
  }
};

} // namespace

AxisInfoAnalysis::AxisInfoAnalysis(Operation *func) : solver_(std::make_unique<DataFlowSolver>(dataflowConfig())) {
  dataflow::loadBaselineAnalyses(*solver_);
  solver_->load<AxisInfoDataFlow>();
  if (failed(solver_->initializeAndRun(dataflowScope(func))))
    solver_.reset(); // nothing known: every query answers unknown
}

AxisInfoAnalysis::~AxisInfoAnalysis() = default;

AxisInfo AxisInfoAnalysis::get(Value v) const {
  if (solver_)
    if (const auto *lattice = solver_->lookupState<AxisInfoLattice>(v))
      if (!lattice->getValue().isUninitialized())
        return lattice->getValue();
  return AxisInfo::unknown(rankOf(v));
}

AxisInfo AxisInfoAnalysis::withNonNegativeOperand(Operation *op, unsigned operand) const {
  SmallVector<AxisInfo> facts;
  for (Value v : op->getOperands())
    facts.push_back(get(v));
  facts[operand].nonNegative = true;
  SmallVector<const AxisInfo *> in;
  for (const AxisInfo &f : facts)
    in.push_back(&f);
  return transferAxisInfo(op, in);
}

unsigned AxisInfo::longestRunDim() const {
  unsigned best = rank() - 1;
  for (int d = int(rank()) - 1; d >= 0; --d)
    if (contiguity[d] > contiguity[best])
      best = d;
  return best;
}

unsigned AxisInfoAnalysis::contiguousDim(Value ptr) const { return get(ptr).longestRunDim(); }

int64_t AxisInfoAnalysis::vectorWidth(Value ptr, unsigned dim, Value mask) const {
  int64_t bytes = elementBytes(pointeeOf(ptr.getType()));
  const AxisInfo p = get(ptr);
  int64_t aligned = std::max<int64_t>(1, p.divisibility[dim] / bytes);
  int64_t vec = std::min({p.contiguity[dim], aligned, std::max<int64_t>(1, 16 / bytes)});
  if (mask)
    vec = std::min(vec, get(mask).constancy[dim]);
  return std::max<int64_t>(1, vec);
}
