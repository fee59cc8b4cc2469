// What the integer range analysis (MLIR's IntegerRangeAnalysis) learns from
// tessel ops: the values of make_range, program ids, and ops that only move
// or repeat values (their result's elements are the operand's).
#include "tessel/Dialect/Tessel/IR/Dialect.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isIntegerTile(Value v) { return isa<IntegerType>(elementTypeOf(v.getType())); }

ConstantIntRanges signedRange(int64_t lo, int64_t hi, unsigned width) {
  return ConstantIntRanges::fromSigned(APInt(width, lo, /*isSigned=*/true), APInt(width, hi, /*isSigned=*/true));
}

// The result's elements are operand 0's.
void sameAsOperand(Operation *op, ArrayRef<ConstantIntRanges> ranges, SetIntRangeFn set) {
  if (!ranges.empty() && isIntegerTile(op->getResult(0)))
    set(op->getResult(0), ranges[0]);
}

} // namespace

void ProgramIdOp::inferResultRanges(ArrayRef<ConstantIntRanges>, SetIntRangeFn set) {
  set(getResult(), signedRange(0, INT32_MAX - 1, 32));
}

void NumProgramsOp::inferResultRanges(ArrayRef<ConstantIntRanges>, SetIntRangeFn set) {
  set(getResult(), signedRange(1, INT32_MAX, 32));
}

void MakeRangeOp::inferResultRanges(ArrayRef<ConstantIntRanges>, SetIntRangeFn set) {
  set(getResult(), signedRange(getStart(), int64_t(getEnd()) - 1, 32));
}

void SplatOp::inferResultRanges(ArrayRef<ConstantIntRanges> ranges, SetIntRangeFn set) {
  sameAsOperand(*this, ranges, set);
}
void BroadcastOp::inferResultRanges(ArrayRef<ConstantIntRanges> ranges, SetIntRangeFn set) {
  sameAsOperand(*this, ranges, set);
}
void ExpandDimsOp::inferResultRanges(ArrayRef<ConstantIntRanges> ranges, SetIntRangeFn set) {
  sameAsOperand(*this, ranges, set);
}
void ReshapeOp::inferResultRanges(ArrayRef<ConstantIntRanges> ranges, SetIntRangeFn set) {
  sameAsOperand(*this, ranges, set);
}
void PermuteOp::inferResultRanges(ArrayRef<ConstantIntRanges> ranges, SetIntRangeFn set) {
  sameAsOperand(*this, ranges, set);
}
void MultipleOfOp::inferResultRanges(ArrayRef<ConstantIntRanges> ranges, SetIntRangeFn set) {
  sameAsOperand(*this, ranges, set);
}
void MaxContiguousOp::inferResultRanges(ArrayRef<ConstantIntRanges> ranges, SetIntRangeFn set) {
  sameAsOperand(*this, ranges, set);
}
