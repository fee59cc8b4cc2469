// Elementwise computation: arith and math ops on tiles become one scalar op
// per register (lowered by the upstream arith/math-to-LLVM patterns), with
// integer division defined for every input and ocml calls where AMDGPU has
// no accurate instruction; constant tiles, pointer arithmetic and assume.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isTile(Type t) { return isa<RankedTensorType>(t); }

// Scalar arith/math ops the upstream patterns would lower differently from
// tessel's semantics (division by zero, math through ocml).
bool needsTesselScalarLowering(Operation *op) {
  if (isa<arith::DivSIOp, arith::RemSIOp, arith::DivUIOp, arith::RemUIOp>(op) || isHardwareExp(op))
    return true;
  Type t = op->getResult(0).getType();
  if (!isa<FloatType>(t))
    return false;
  bool f64 = t.isF64();
  return isa<math::SinOp, math::CosOp, arith::RemFOp>(op) ||
         (f64 && isa<math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op>(op));
}

struct ElementwiseOpConversion : ConversionPattern {
  ElementwiseOpConversion(const TesselToLLVMTypeConverter &converter, PatternBenefit benefit)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), benefit, &converter.getContext()),
        converter(converter) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<ValueRange> operands,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        op->getNumResults() != 1 || op->getNumRegions() != 0 || isa<arith::ConstantOp>(op))
      return failure();
    Type resultType = op->getResult(0).getType();
    bool onTiles = isTile(resultType) ||
                   llvm::any_of(op->getOperandTypes(), [](Type t) { return isTile(t); });
    if (!onTiles && !needsTesselScalarLowering(op))
      return failure(); // a plain scalar op: the upstream patterns lower it
    Type scalar = converter.scalarType(resultType);
    int64_t n = registersPerThread(resultType);
    SmallVector<Value> out;
    for (int64_t r = 0; r < n; ++r) {
      SmallVector<Value> scalarOperands;
      for (auto [operand, regs] : llvm::zip(op->getOperands(), operands))
        scalarOperands.push_back(regs[isTile(operand.getType()) ? r : 0]);
      out.push_back(emitScalarOp(rewriter, op, scalarOperands, scalar));
    }
    rewriter.replaceOpWithMultiple(op, {out});
    return success();
  }

  const TesselToLLVMTypeConverter &converter;
};

struct ConstantTileConversion : TesselOpToLLVMPattern<arith::ConstantOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto tile = dyn_cast<RankedTensorType>(op.getType());
    if (!tile)
      return failure();
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || !dense.isSplat())
      return op.emitError("only constant tiles with one value are supported");
    Value v = constantValue(rewriter, op.getLoc(), tile.getElementType(),
                            dense.getSplatValue<TypedAttr>());
    rewriter.replaceOpWithMultiple(op, {SmallVector<Value>(registersPerThread(tile), v)});
    return success();
  }
};

struct AddPtrOpConversion : TesselOpToLLVMPattern<AddPtrOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(AddPtrOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Type elem = pointeeOf(op.getType());
    auto ptrType = LLVM::LLVMPointerType::get(rewriter.getContext(), kGlobalAddressSpace);
    SmallVector<Value> out;
    for (auto [ptr, offset] : llvm::zip(adaptor.getPtr(), adaptor.getOffset()))
      out.push_back(rewriter.create<LLVM::GEPOp>(op.getLoc(), ptrType, elem, ptr, ValueRange{offset}));
    rewriter.replaceOpWithMultiple(op, {out});
    return success();
  }
};

struct AssumeOpConversion : TesselOpToLLVMPattern<AssumeOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(AssumeOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.create<LLVM::AssumeOp>(op.getLoc(), adaptor.getCond().front());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tessel::populateElementwiseOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                       const TargetInfo &target,
                                                       RewritePatternSet &patterns) {
  // Before the upstream arith/math patterns, which only see scalars.
  patterns.add<ElementwiseOpConversion>(converter, /*benefit=*/2);
  patterns.add<ConstantTileConversion, AddPtrOpConversion, AssumeOpConversion>(converter, target,
                                                                               /*benefit=*/2);
}
