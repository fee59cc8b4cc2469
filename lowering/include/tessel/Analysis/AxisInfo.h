// Axis analysis: per dimension of every integer or pointer tile, how many
// consecutive elements are contiguous (each one more than the last), how many
// are equal (constancy), and the largest power of two known to divide the
// first element of each such run (divisibility; bytes for pointers), and
// whether every element is >= 0 (what a signed division by a constant needs
// to keep runs). It is what lets loads and stores move up to 16 bytes per
// thread. Non-negativity is derived from program ids, aranges and constants
// through +, * and division, and from assume(v >= C >= 0) on any value,
// assuming index arithmetic does not wrap i32 (a wrapped offset would
// address the wrong memory in any case).
//
// It is a sparse forward dataflow analysis (mlir/Analysis/DataFlow): values
// that meet at block arguments and region results (scf.for iter_args,
// scf.if and scf.while results) keep what holds on every incoming edge.
#pragma once

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class DataFlowSolver;
} // namespace mlir

namespace mlir::tessel {

// The facts about one value, and the dataflow lattice element: a
// default-constructed AxisInfo (no dimensions) is "not computed yet".
struct AxisInfo {
  // One entry per dimension; scalars have one entry.
  llvm::SmallVector<int64_t, 2> contiguity, divisibility, constancy;
  bool nonNegative = false;
  // Highest divisibility tracked (2^30); stands in for "divisible by anything" (0).
  static constexpr int64_t kMaxDivisibility = int64_t(1) << 30;
  unsigned rank() const { return contiguity.size(); }
  bool isUninitialized() const { return contiguity.empty(); }
  // The dimension the longest runs of consecutive values go along (ties:
  // the last): where accesses through these addresses vectorize.
  unsigned longestRunDim() const;
  static AxisInfo unknown(unsigned rank);
  static AxisInfo uniform(llvm::ArrayRef<int64_t> shape, int64_t divisibility);
  // What holds on both sides of a control-flow merge: per dimension, the gcd
  // of each fact. An uninitialized side contributes nothing.
  static AxisInfo join(const AxisInfo &a, const AxisInfo &b);
  bool operator==(const AxisInfo &other) const;
  // "contiguity = [..], divisibility = [..], constancy = [..]" (then
  // ", non-negative" when it is).
  void print(llvm::raw_ostream &os) const;
};

// Runs the analysis over one function (or any op with regions) once; queries
// are lookups afterwards.
class AxisInfoAnalysis {
public:
  explicit AxisInfoAnalysis(Operation *func);
  ~AxisInfoAnalysis();
  // Unknown (all ones) of the value's rank when nothing is known about it.
  AxisInfo get(Value v) const;
  // Elements one thread may move at once through `ptr` (a tile of pointers)
  // along dimension `dim`, honoring `mask`'s constancy when given; at most 16 bytes.
  int64_t vectorWidth(Value ptr, unsigned dim, Value mask = {}) const;
  // The dimension along which `ptr` is most contiguous (ties: the last).
  unsigned contiguousDim(Value ptr) const;
  // The facts about `op`'s result were its operand `operand` known >= 0
  // (what an assume() of it would give): the performance remarks ask it
  // whether a sign is what keeps a signed % or / from keeping runs.
  AxisInfo withNonNegativeOperand(Operation *op, unsigned operand) const;

private:
  std::unique_ptr<DataFlowSolver> solver_;
};

int64_t highestPowerOf2Divisor(int64_t v);

} // namespace mlir::tessel
