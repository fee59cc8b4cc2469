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
    unsigned elemBytes = std::max(1u, mem.getIntOrFloatBitWidth() / 8);
    Type accessType = vec == 1 ? mem : Type(VectorType::get({vec}, mem));
    SmallVector<Value> out;
    for (size_t g = 0; g < ptrs.size(); g += vec) {
      Value ptr = ptrs[g];
      auto load = [&]() -> Value {
        return rewriter.create<LLVM::LoadOp>(loc, accessType, ptr, /*alignment=*/vec * elemBytes);
      };
      Value value;
      if (op.getMask()) {
        SmallVector<Value> other;
        for (int64_t i = 0; i < vec; ++i)
          other.push_back(op.getOther() ? toMemory(rewriter, loc, others[g + i])
                                        : constantValue(rewriter, loc, mem, rewriter.getZeroAttr(mem)));
        value = predicated(rewriter, loc, masks[g], vectorOf(rewriter, loc, other, mem), load);
      } else {
        value = load();
      }
      appendElements(rewriter, loc, value, vec, elem, out);
    }
    rewriter.replaceOpWithMultiple(op, {out});
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
    unsigned elemBytes = std::max(1u, mem.getIntOrFloatBitWidth() / 8);
    for (size_t g = 0; g < ptrs.size(); g += vec) {
      Value ptr = ptrs[g];
      SmallVector<Value> group;
      for (Value v : ArrayRef<Value>(values).slice(g, vec))
        group.push_back(toMemory(rewriter, loc, v));
      Value value = vectorOf(rewriter, loc, group, mem);
      auto store = [&]() -> Value {
        rewriter.create<LLVM::StoreOp>(loc, value, ptr, /*alignment=*/vec * elemBytes);
        return {};
      };
      Value pred = op.getMask() ? masks[g] : Value();
      if (owner)
        pred = pred ? Value(rewriter.create<LLVM::AndOp>(loc, pred, owner)) : owner;
      if (pred)
        predicated(rewriter, loc, pred, {}, store);
      else
        store();
    }
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
