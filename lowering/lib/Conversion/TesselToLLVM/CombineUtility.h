// What reduce and scan share: applying the combine region to registers, and
// the LDS exchange of one value per (wave, line) when an axis spans waves.
#pragma once

#include "TargetInfo.h"

#include "tessel/Dialect/Tessel/IR/Layouts.h"

namespace mlir::tessel {

// The combine region applied to (lhs..., rhs...); failure (with an error) on
// an op that computes no single value.
FailureOr<SmallVector<Value>> applyCombine(OpBuilder &b, Region &combine, ValueRange lhs,
                                           ValueRange rhs);

SmallVector<Value> selectEach(OpBuilder &b, Location loc, Value cond, ValueRange a, ValueRange c);

// Where a reduce or scan puts one value per (wave, line) for each operand in
// its LDS scratch (see LdsScratch.cpp for the size).
class WaveExchange {
public:
  // `lines`: the thread's registers grouped along `axis` (LinearLayout::linesAlong).
  WaveExchange(OpBuilder &b, Location loc, const TargetInfo &target, Operation *op,
               ValueRange srcs, unsigned axis, ArrayRef<SmallVector<int64_t>> lines);
  // This thread's wave coordinate along the axis.
  Value waveCoord() const { return waveC_; }
  int64_t waves() const { return waves_; }
  void store(OpBuilder &b, Location loc, size_t operand, Value wave, size_t line, Value v) const;
  Value load(OpBuilder &b, Location loc, size_t operand, int64_t wave, size_t line, Type t) const;

private:
  Value slot(OpBuilder &b, Location loc, size_t operand, Value wave, size_t line, Type t) const;

  const TargetInfo &target_;
  Operation *op_;
  SmallVector<int64_t> sections_; // byte offset of each operand's section
  int64_t lineCount_, waves_;
  SmallVector<Value> lineIdx_; // per line, its line number in the tile
  Value waveC_;
};

} // namespace mlir::tessel
