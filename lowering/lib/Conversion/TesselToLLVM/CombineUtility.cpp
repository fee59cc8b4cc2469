#include "CombineUtility.h"
#include "Utility.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::tessel;

FailureOr<SmallVector<Value>> mlir::tessel::applyCombine(OpBuilder &b, Region &region,
                                                         ValueRange lhs, ValueRange rhs) {
  Block &body = region.front();
  IRMapping map;
  for (size_t i = 0; i < lhs.size(); ++i) {
    map.map(body.getArgument(i), lhs[i]);
    map.map(body.getArgument(lhs.size() + i), rhs[i]);
  }
  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() == 0 || !llvm::all_equal(op.getResultTypes()))
      return op.emitError("a combine function can only compute values");
    SmallVector<Value> operands;
    for (Value v : op.getOperands())
      operands.push_back(map.lookupOrDefault(v));
    map.map(op.getResults(), emitScalarResults(b, &op, operands, op.getResult(0).getType()));
  }
  SmallVector<Value> out;
  for (Value v : body.getTerminator()->getOperands())
    out.push_back(map.lookupOrDefault(v));
  return out;
}

SmallVector<Value> mlir::tessel::selectEach(OpBuilder &b, Location loc, Value cond, ValueRange a,
                                            ValueRange c) {
  SmallVector<Value> out;
  for (auto [x, y] : llvm::zip(a, c))
    out.push_back(b.create<LLVM::SelectOp>(loc, cond, x, y));
  return out;
}

// The line number (row-major over the dims other than `axis`) of coordinates.
static Value lineNumber(OpBuilder &b, Location loc, ArrayRef<Value> coords,
                        RankedTensorType type, unsigned axis) {
  SmallVector<Value> rest;
  SmallVector<int64_t> shape;
  for (unsigned d = 0; d < type.getRank(); ++d)
    if (d != axis) {
      rest.push_back(coords[d]);
      shape.push_back(type.getDimSize(d));
    }
  return emitLinearIndex(b, loc, rest, shape);
}

WaveExchange::WaveExchange(OpBuilder &b, Location loc, const TargetInfo &target, Operation *op,
                           ValueRange srcs, unsigned axis, ArrayRef<SmallVector<int64_t>> lines)
    : target_(target), op_(op) {
  auto type = cast<RankedTensorType>(srcs[0].getType());
  LinearLayout layout = getLinearLayout(type);
  lineCount_ = type.getNumElements() / type.getDimSize(axis);
  waves_ = layout.distinctWaves(axis);
  int64_t bytes = 0;
  for (Value s : srcs) {
    bytes = (bytes + 7) / 8 * 8;
    sections_.push_back(bytes);
    bytes += waves_ * lineCount_ * ldsElementBytes(s.getType());
  }
  waveC_ = idBitsValue(b, loc, target.waveId(b, loc), layout.waveBitsAlong(axis),
                       target.waveIdBits());
  SmallVector<SmallVector<Value>> coords = emitRegisterCoords(b, loc, target, type);
  for (const SmallVector<int64_t> &line : lines)
    lineIdx_.push_back(lineNumber(b, loc, coords[line[0]], type, axis));
}

Value WaveExchange::slot(OpBuilder &b, Location loc, size_t operand, Value wave, size_t line,
                         Type t) const {
  Value index = b.create<LLVM::AddOp>(
      loc, b.create<LLVM::MulOp>(loc, wave, i32Value(b, loc, lineCount_)), lineIdx_[line]);
  return b.create<LLVM::AddOp>(
      loc, b.create<LLVM::MulOp>(loc, index, i32Value(b, loc, ldsElementBytes(t))),
      i32Value(b, loc, sections_[operand]));
}

void WaveExchange::store(OpBuilder &b, Location loc, size_t operand, Value wave, size_t line,
                         Value v) const {
  target_.ldsStore(b, loc, op_, slot(b, loc, operand, wave, line, v.getType()), v);
}

Value WaveExchange::load(OpBuilder &b, Location loc, size_t operand, int64_t wave, size_t line,
                         Type t) const {
  return target_.ldsLoad(b, loc, op_, slot(b, loc, operand, i32Value(b, loc, wave), line, t), t);
}
