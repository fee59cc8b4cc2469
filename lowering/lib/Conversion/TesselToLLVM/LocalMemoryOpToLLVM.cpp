// Tiles kept in LDS across ops: a buffer is its byte offset in the module's
// LDS (the plan's); a slot's tile is staged as the buffer's order and pad
// say, each access as wide as the tile's layout allows.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

// Where slot `slot` of a buffer of type `lds` (converted: its byte offset)
// starts, and how a tile of `type` sits in it (ldsAccessPlan).
struct Slot {
  Value base;
  LdsStaging plan;
};
Slot slotOf(OpBuilder &b, Location loc, LdsType lds, Value buffer, Value slot, RankedTensorType type,
            bool transposeReads = false) {
  Value start = b.create<LLVM::AddOp>(loc, buffer, b.create<LLVM::MulOp>(loc, slot, i32Value(b, loc, lds.slotBytes())));
  return {start, ldsAccessPlan(lds, type, transposeReads)};
}

struct LocalAllocOpConversion : TesselOpToLLVMPattern<LocalAllocOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(LocalAllocOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, i32Value(rewriter, op.getLoc(), ldsOffset(op)));
    return success();
  }
};

struct LocalStoreOpConversion : TesselOpToLLVMPattern<LocalStoreOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(LocalStoreOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getSrc().getType());
    Slot slot = slotOf(rewriter, op.getLoc(), op.getBuffer().getType(), adaptor.getBuffer().front(),
                       adaptor.getSlot().front(), type);
    // A tile staged through registers beside loads to LDS (tessel-pipeline-
    // loops marks it) writes bytes they never write: without the scopes
    // LLVM waits for every load to LDS in flight before the stores.
    const bool asyncCopied = tesselDialect(op->getContext()).getAsyncCopiedAttrHelper().isAttrPresent(op);
    emitLdsTileWrite(rewriter, op.getLoc(), target, type, adaptor.getSrc(), slot.base, slot.plan,
                     asyncCopied ? TargetInfo::asyncCopyScopes(rewriter.getContext()) : ArrayAttr());
    rewriter.eraseOp(op);
    return success();
  }
};

struct LocalLoadOpConversion : TesselOpToLLVMPattern<LocalLoadOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(LocalLoadOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Operation *last = op->getPrevNode();
    Slot slot = slotOf(rewriter, op.getLoc(), op.getBuffer().getType(), adaptor.getBuffer().front(),
                       adaptor.getSlot().front(), type, target.hasLdsTransposeReads());
    SmallVector<Value> regs =
        emitLdsTileRead(rewriter, op.getLoc(), target, type, converter.scalarType(type), slot.base, slot.plan);
    // A read of a slot that buffer loads to LDS filled (tessel-pipeline-loops
    // marks it) reads what is already waited for: its loads are marked not to
    // alias the loads to LDS in flight (TargetInfo::asyncCopyScopes).
    if (tesselDialect(op->getContext()).getAsyncCopiedAttrHelper().isAttrPresent(op))
      for (Operation *made = op->getPrevNode(); made && made != last; made = made->getPrevNode())
        if (isa<LLVM::LoadOp, ROCDL::ds_read_tr8_b64, ROCDL::ds_read_tr16_b64>(made))
          cast<LLVM::AliasAnalysisOpInterface>(made).setNoAliasScopes(
              TargetInfo::asyncCopyScopes(rewriter.getContext()));
    replaceWithRegisters(rewriter, op, {regs});
    return success();
  }
};

struct BarrierOpConversion : TesselOpToLLVMPattern<BarrierOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(BarrierOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    target.barrier(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tessel::populateLocalMemoryOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                       const TargetInfo &target, RewritePatternSet &patterns) {
  patterns.add<LocalAllocOpConversion, LocalStoreOpConversion, LocalLoadOpConversion, BarrierOpConversion>(
      converter, target);
}
