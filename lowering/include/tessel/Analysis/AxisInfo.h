// Axis analysis: per dimension of every integer or pointer tile, how many
// consecutive elements are contiguous (each one more than the last), how many
// are equal (constancy), and the largest power of two known to divide the
// first element of each such run (divisibility; bytes for pointers). It is
// what lets loads and stores move up to 16 bytes per thread.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::tessel {

struct AxisInfo {
  // One entry per dimension; scalars have one entry.
  llvm::SmallVector<int64_t, 2> contiguity, divisibility, constancy;
  // Highest divisibility tracked (2^30); stands in for "divisible by anything" (0).
  static constexpr int64_t kMaxDivisibility = int64_t(1) << 30;
  unsigned rank() const { return contiguity.size(); }
  static AxisInfo unknown(unsigned rank);
  static AxisInfo uniform(llvm::ArrayRef<int64_t> shape, int64_t divisibility);
};

// Straight-line analysis of one function body (kernels have no control flow
// yet); operands are visited before users.
class AxisInfoAnalysis {
public:
  explicit AxisInfoAnalysis(Operation *func);
  AxisInfo get(Value v) const;
  // Elements one thread may move at once through `ptr` (a tile of pointers)
  // along dimension `dim`, honoring `mask`'s constancy when given; at most 16 bytes.
  int64_t vectorWidth(Value ptr, unsigned dim, Value mask = {}) const;
  // The dimension along which `ptr` is most contiguous (ties: the last).
  unsigned contiguousDim(Value ptr) const;

private:
  void visit(Operation *op);
  llvm::DenseMap<Value, AxisInfo> info_;
};

int64_t highestPowerOf2Divisor(int64_t v);

} // namespace mlir::tessel
