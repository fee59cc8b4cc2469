// The layouts of a tessel.dot: which matrix instruction of the target table
// runs it (or the FMA path), and the wave grid (DotLayouts.cpp). Used by
// layout assignment.
#pragma once

#include "tessel/Dialect/Tessel/IR/Dialect.h"
#include "tessel/lowering/target.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tessel {

struct DotLayouts {
  DistributedLayoutAttr accumulator; // MFMA, WMMA or (FMA) blocked
  unsigned kWidth;                   // the operand layouts' K elements per lane and instruction
  unsigned kGroup = 0;               // their runs of consecutive K (0: kWidth; DotOperandLayoutAttr)
  // B's kWidth and kGroup where they differ from A's (0: A's): an e2m1
  // operand (bytes, two K each) beside an 8-bit one on gfx950's f8f6f4 MFMAs.
  unsigned kWidthB = 0, kGroupB = 0;
};

// The target table's largest instruction that fits `dot`'s block (M, N and
// K divisible), or for M or N below every instruction's the one that pads
// the block least (K divisible); the waves split over M and N; a blocked
// accumulator with whole-K operands when no instruction takes it.
FailureOr<DotLayouts> chooseDotLayouts(DotOp dot, const std::string &arch, unsigned numWarps, unsigned waveSize);

// The target's scaled matrix instruction (gfx950's f8f6f4 MFMAs, the table's
// formatOperands rows) for 8-bit float operands a and b (std::nullopt: e2m1,
// which every such row takes, its format being an operand) that runs an
// [M, K] x [K, N] block without padding (K a multiple of its depth, M and N
// at least its tile), the largest first; null when none does.
const ::tessel::MatrixInstr *scaledMatrixInstr(const ::tessel::TargetFacts &target,
                                               std::optional<::tessel::DType> a, std::optional<::tessel::DType> b,
                                               int64_t M, int64_t N, int64_t K);

// The target table's rows that take a dot's operands: matrixInstrsFor its
// types, or for a dot with an e2m1 operand the f8f6f4 rows whose other
// operand matches.
std::vector<::tessel::MatrixInstr> matrixInstrsForDot(const ::tessel::TargetFacts &target, DotOp dot);

} // namespace mlir::tessel
