// Integer ranges of a kernel's values: MLIR's integer range analysis with
// what tessel knows besides the ops' own range rules: `tessel.assume(arg OP C)`
// bounds a kernel argument, and an scf.for's induction variable lies in
// [lower bound, upper bound - 1] (tessel's loops count up).
#pragma once

#include "tessel/Analysis/DataflowScope.h"

#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"

#include <optional>

namespace mlir::tessel {

class KernelRanges {
public:
  // Runs the analysis over `module` (check status()).
  explicit KernelRanges(ModuleOp module);
  LogicalResult status() const { return status_; }
  // The signed and unsigned bounds of an integer (or integer tile's
  // elements) value; nullopt when the analysis reached no conclusion.
  std::optional<ConstantIntRanges> rangeOf(Value v) const;

private:
  llvm::DenseMap<Value, ConstantIntRanges> argRanges_;
  DataFlowSolver solver_{dataflowConfig()};
  LogicalResult status_ = success();
};

} // namespace mlir::tessel
