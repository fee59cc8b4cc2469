// The layouts of a tessel.dot: which matrix instruction of the target table
// runs it (or the FMA path), and the wave grid (DotLayouts.cpp). Used by
// layout assignment.
#pragma once

#include "tessel/Dialect/Tessel/IR/Dialect.h"
#include "tessel/lowering/target.hpp"

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

// The target's scaled matrix instruction (gfx950's f8f6f4 MFMAs, the table's
// formatOperands rows) for 8-bit float operands a and b that runs an
// [M, K] x [K, N] block without padding (K a multiple of its depth, M and N
// at least its tile), the largest first; null when none does.
const ::tessel::MatrixInstr *scaledMatrixInstr(const ::tessel::TargetFacts &target, ::tessel::DType a,
                                               ::tessel::DType b, int64_t M, int64_t N, int64_t K);

} // namespace mlir::tessel
