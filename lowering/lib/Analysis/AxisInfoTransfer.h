// The axis analysis' transfer functions: the facts about an op's single
// result from the facts about its operands. Private to lib/Analysis.
#pragma once

#include "tessel/Analysis/AxisInfo.h"

#include "mlir/IR/Operation.h"

namespace mlir::tessel {

// `operands` holds one initialized AxisInfo per operand of `op`, which has
// one result. Ops that are not modelled give unknown.
AxisInfo transferAxisInfo(Operation *op, llvm::ArrayRef<const AxisInfo *> operands);

int64_t elementBytes(Type pointee);

} // namespace mlir::tessel
