// Global memory: each thread moves `vec` contiguous elements per access
// (the vector width layout assignment proved safe); a masked access runs only
// where its mask holds (a masked load yields `other` elsewhere); an element
// held by several threads is stored only by its owner.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct LoadOpConversion : TesselOpToLLVMPattern<LoadOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(LoadOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = converter.scalarType(op.getType());
    Type mem = memoryType(rewriter, elem);
    int64_t vec = op.getVec();
    SmallVector<Value> ptrs = registersOf(adaptor.getPtr());
    SmallVector<Value> masks = op.getMask() ? registersOf(adaptor.getMask()) : SmallVector<Value>();
    SmallVector<Value> others = op.getOther() ? registersOf(adaptor.getOther()) : SmallVector<Value>();
    SmallVector<Value> out;
    for (size_t g = 0; g < ptrs.size(); g += vec)
      emitGlobalLoad(rewriter, loc, ptrs[g], mem, elem, vec, masks.empty() ? Value() : masks[g],
                     others.empty() ? ArrayRef<Value>() : ArrayRef<Value>(others).slice(g, vec), out);
    replaceWithRegisters(rewriter, op, {out});
    return success();
  }
};

struct StoreOpConversion : TesselOpToLLVMPattern<StoreOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(StoreOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type mem = memoryType(rewriter, converter.scalarType(pointeeOf(op.getPtr().getType())));
    int64_t vec = op.getVec();
    SmallVector<Value> ptrs = registersOf(adaptor.getPtr()), values = registersOf(adaptor.getValue());
    SmallVector<Value> masks = op.getMask() ? registersOf(adaptor.getMask()) : SmallVector<Value>();
    Value owner = emitOwnerPredicate(rewriter, loc, target, op.getPtr().getType());
    for (size_t g = 0; g < ptrs.size(); g += vec)
      emitGlobalStore(rewriter, loc, ptrs[g], memoryVector(rewriter, loc, ArrayRef<Value>(values).slice(g, vec), mem),
                      bothOf(rewriter, loc, masks.empty() ? Value() : masks[g], owner));
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tessel::populateLoadStoreOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                     const TargetInfo &target,
                                                     RewritePatternSet &patterns) {
  patterns.add<LoadOpConversion, StoreOpConversion>(converter, target);
}
