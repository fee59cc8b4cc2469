// Data movement between layouts and shapes: every thread that owns an element
// writes it to LDS at the element's (padded) index, a barrier, then each
// thread reads what its new layout or shape gives it, and a barrier before
// the LDS is reused. A conversion that gives every thread the same registers
// only renames them.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

ArrayRef<int64_t> shapeOf(Type t) {
  if (auto tile = dyn_cast<RankedTensorType>(t))
    return tile.getShape();
  return {};
}

// The result's register r is the source's register picks[r].
LogicalResult renameRegisters(ConversionPatternRewriter &rewriter, Operation *op, ValueRange srcRegs,
                              ArrayRef<int64_t> picks) {
  SmallVector<Value> out;
  for (int64_t p : picks)
    out.push_back(srcRegs[p]);
  replaceWithRegisters(rewriter, op, {out});
  return success();
}

class ThroughLds {
public:
  ThroughLds(Operation *op, ConversionPatternRewriter &rewriter, const TargetInfo &target,
             const TesselToLLVMTypeConverter &converter)
      : op_(op), b_(rewriter), target_(target), loc_(op->getLoc()),
        dstType_(op->getResult(0).getType()), elem_(converter.scalarType(dstType_)),
        bytes_(ldsElementBytes(dstType_)) {}

  // Writes the registers `regs` of `src` at the element index `index` gives
  // their coordinates.
  void write(Value src, ValueRange regs, function_ref<Value(ArrayRef<Value>)> index) {
    SmallVector<SmallVector<Value>> coords = emitRegisterCoords(b_, loc_, target_, src.getType());
    onlyOwners(b_, loc_, target_, src.getType(), [&] {
      for (size_t r = 0; r < regs.size(); ++r)
        target_.ldsStore(b_, loc_, op_, slotBytes(index(coords[r])), regs[r]);
    });
  }
  // After the writes: each register of the result from the index `index`
  // gives its coordinates.
  void readAndReplace(function_ref<Value(ArrayRef<Value>)> index) {
    readEach([&](ArrayRef<Value> c, size_t) { return target_.ldsLoad(b_, loc_, op_, slotBytes(index(c)), elem_); });
  }
  // After the writes: each register `r` of the result as `read(its
  // coordinates, r)` gives it.
  void readEach(function_ref<Value(ArrayRef<Value>, size_t)> read) {
    target_.ldsBarrier(b_, loc_);
    SmallVector<Value> out;
    SmallVector<SmallVector<Value>> coords = emitRegisterCoords(b_, loc_, target_, dstType_);
    for (size_t r = 0; r < coords.size(); ++r)
      out.push_back(read(coords[r], r));
    target_.endLdsScratch(b_, loc_, op_);
    replaceWithRegisters(b_, op_, {out});
  }
  Value load(Value index) { return target_.ldsLoad(b_, loc_, op_, slotBytes(index), elem_); }
  Value linear(ArrayRef<Value> coords, ArrayRef<int64_t> shape) {
    return emitLinearIndex(b_, loc_, coords, shape);
  }

  // A layout conversion by `plan`.
  void convert(Value src, ValueRange regs, const LdsStaging &plan) {
    Value base = i32Value(b_, loc_, ldsOffset(op_));
    emitLdsTileWrite(b_, loc_, target_, cast<RankedTensorType>(src.getType()), regs, base, plan);
    target_.ldsBarrier(b_, loc_);
    SmallVector<Value> out = emitLdsTileRead(b_, loc_, target_, cast<RankedTensorType>(dstType_), elem_, base, plan);
    target_.endLdsScratch(b_, loc_, op_);
    replaceWithRegisters(b_, op_, {out});
  }
  // Index of half `half` of an element whose last dim (of 2) was split off.
  Value pair(Value index, int64_t half) {
    return b_.create<LLVM::AddOp>(loc_, b_.create<LLVM::MulOp>(loc_, index, i32Value(b_, loc_, 2)),
                                  i32Value(b_, loc_, half));
  }
  ArrayRef<int64_t> dstShape() const { return shapeOf(dstType_); }

private:
  // Element index -> byte offset, with the padding ldsPaddedSlots counts.
  Value slotBytes(Value index) {
    Value padded = b_.create<LLVM::AddOp>(
        loc_, index, b_.create<LLVM::LShrOp>(loc_, index, i32Value(b_, loc_, 5)));
    return b_.create<LLVM::MulOp>(loc_, padded, i32Value(b_, loc_, bytes_));
  }

  Operation *op_;
  ConversionPatternRewriter &b_;
  const TargetInfo &target_;
  Location loc_;
  Type dstType_, elem_;
  int64_t bytes_;
};

struct ConvertLayoutOpConversion : TesselOpToLLVMPattern<ConvertLayoutOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (auto picks = renamedRegisters(op))
      return renameRegisters(rewriter, op, adaptor.getSrc(), *picks);
    ThroughLds lds(op, rewriter, target, converter);
    lds.convert(op.getSrc(), adaptor.getSrc(),
                planLdsStaging(cast<RankedTensorType>(op.getSrc().getType()), op.getType()));
    return success();
  }
};

// Row-major order is kept: each element goes to its linear index.
struct ReshapeOpConversion : TesselOpToLLVMPattern<ReshapeOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(ReshapeOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    ThroughLds lds(op, rewriter, target, converter);
    lds.write(op.getSrc(), adaptor.getSrc(),
              [&](ArrayRef<Value> c) { return lds.linear(c, shapeOf(op.getSrc().getType())); });
    lds.readAndReplace([&](ArrayRef<Value> c) { return lds.linear(c, lds.dstShape()); });
    return success();
  }
};

// Each element is written where the permuted tile has it; nothing moves
// when the result's layout is the source's, permuted.
struct PermuteOpConversion : TesselOpToLLVMPattern<PermuteOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(PermuteOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (auto picks = renamedRegisters(op))
      return renameRegisters(rewriter, op, adaptor.getSrc(), *picks);
    ThroughLds lds(op, rewriter, target, converter);
    lds.write(op.getSrc(), adaptor.getSrc(), [&](ArrayRef<Value> c) {
      SmallVector<Value> moved;
      for (int32_t d : op.getOrder())
        moved.push_back(c[d]);
      return lds.linear(moved, lds.dstShape());
    });
    lds.readAndReplace([&](ArrayRef<Value> c) { return lds.linear(c, lds.dstShape()); });
    return success();
  }
};

// The source whole into LDS; each result element reads the source element
// its index names along the axis (an index out of range reads 0).
struct GatherOpConversion : TesselOpToLLVMPattern<GatherOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(GatherOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ThroughLds lds(op, rewriter, target, converter);
    ArrayRef<int64_t> srcShape = shapeOf(op.getSrc().getType());
    lds.write(op.getSrc(), adaptor.getSrc(), [&](ArrayRef<Value> c) { return lds.linear(c, srcShape); });
    SmallVector<Value> indices = registersOf(adaptor.getIndices());
    const unsigned axis = op.getAxis();
    Type elem = converter.scalarType(op.getType());
    Value zero = constantValue(rewriter, loc, elem, rewriter.getZeroAttr(elem));
    lds.readEach([&](ArrayRef<Value> c, size_t r) -> Value {
      Value i = indices[r];
      if (i.getType().isInteger(64)) {
        // In range as i64 first: a large index must not wrap into range.
        Value ok = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ult, i,
                                                 constantValue(rewriter, loc, i.getType(),
                                                               rewriter.getI64IntegerAttr(srcShape[axis])));
        i = rewriter.create<LLVM::SelectOp>(loc, ok, rewriter.create<LLVM::TruncOp>(loc, rewriter.getI32Type(), i),
                                            i32Value(rewriter, loc, 0));
        SmallVector<Value> at(c);
        at[axis] = i;
        return rewriter.create<LLVM::SelectOp>(loc, ok, lds.load(lds.linear(at, srcShape)), zero);
      }
      Value ok = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ult, i, i32Value(rewriter, loc, srcShape[axis]));
      SmallVector<Value> at(c);
      at[axis] = rewriter.create<LLVM::SelectOp>(loc, ok, i, i32Value(rewriter, loc, 0));
      return rewriter.create<LLVM::SelectOp>(loc, ok, lds.load(lds.linear(at, srcShape)), zero);
    });
    return success();
  }
};

// The halves interleave along the new last dimension.
struct JoinOpConversion : TesselOpToLLVMPattern<JoinOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(JoinOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    ThroughLds lds(op, rewriter, target, converter);
    ArrayRef<int64_t> halfShape = shapeOf(op.getLhs().getType());
    for (int half = 0; half < 2; ++half)
      lds.write(half ? op.getRhs() : op.getLhs(), half ? adaptor.getRhs() : adaptor.getLhs(),
                [&](ArrayRef<Value> c) { return lds.pair(lds.linear(c, halfShape), half); });
    lds.readAndReplace([&](ArrayRef<Value> c) { return lds.linear(c, lds.dstShape()); });
    return success();
  }
};

struct SplitOpConversion : TesselOpToLLVMPattern<SplitOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(SplitOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    ThroughLds lds(op, rewriter, target, converter);
    lds.write(op.getSrc(), adaptor.getSrc(),
              [&](ArrayRef<Value> c) { return lds.linear(c, shapeOf(op.getSrc().getType())); });
    lds.readAndReplace(
        [&](ArrayRef<Value> c) { return lds.pair(lds.linear(c, lds.dstShape()), op.getHalf()); });
    return success();
  }
};

} // namespace

void mlir::tessel::populateConvertLayoutOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                         const TargetInfo &target,
                                                         RewritePatternSet &patterns) {
  patterns.add<ConvertLayoutOpConversion, ReshapeOpConversion, PermuteOpConversion,
               GatherOpConversion, JoinOpConversion, SplitOpConversion>(converter, target);
}
