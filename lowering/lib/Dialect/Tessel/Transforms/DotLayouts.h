// The layouts of a tessel.dot: which matrix instruction of the target table
// runs it (or the FMA path), and the wave grid (DotLayouts.cpp). Used by
// layout assignment.
#pragma once

#include "tessel/Dialect/Tessel/IR/Dialect.h"

#include <string>

namespace mlir::tessel {

struct DotLayouts {
  DistributedLayoutAttr accumulator; // MFMA, WMMA or (FMA) blocked
  unsigned kWidth;                   // the operand layouts' K elements per lane and instruction
  unsigned kGroup = 0;               // their runs of consecutive K (0: kWidth; DotOperandLayoutAttr)
};

// The target table's largest instruction that fits `dot`'s block (M, N and
// K divisible), or for M or N below every instruction's the one that pads
// the block least (K divisible); the waves split over M and N; a blocked
// accumulator with whole-K operands when no instruction takes it.
FailureOr<DotLayouts> chooseDotLayouts(DotOp dot, const std::string &arch, unsigned numWarps, unsigned waveSize);

} // namespace mlir::tessel
