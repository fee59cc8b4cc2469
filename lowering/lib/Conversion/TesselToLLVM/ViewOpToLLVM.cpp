// Ops that give each thread the elements it already holds, under another
// shape or name: splat, broadcast, expand_dims and the analysis hints. They
// only pick registers; no data moves.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

#include "mlir/Dialect/UB/IR/UBOps.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct SplatOpConversion : TesselOpToLLVMPattern<SplatOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(SplatOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> regs(registersPerThread(op.getType()), adaptor.getSrc().front());
    replaceWithRegisters(rewriter, op, {regs});
    return success();
  }
};

// Result register r takes the operand register holding the same element:
// `project` maps r's static coordinates to the operand's.
LogicalResult pickRegisters(Operation *op, ValueRange srcRegs, RankedTensorType srcType,
                            RankedTensorType dstType, ConversionPatternRewriter &rewriter,
                            function_ref<void(LinearLayout::Basis &)> project) {
  LinearLayout dst = getLinearLayout(dstType), src = getLinearLayout(srcType);
  SmallVector<Value> out;
  for (int64_t r = 0; r < dst.numRegisters(); ++r) {
    LinearLayout::Basis coords = dst.registerCoords(r);
    project(coords);
    int64_t s = src.registerAt(coords);
    if (s < 0)
      return op->emitError("tessel compiler bug: operand and result layouts disagree");
    out.push_back(srcRegs[s]);
  }
  replaceWithRegisters(rewriter, op, {out});
  return success();
}

struct BroadcastOpConversion : TesselOpToLLVMPattern<BroadcastOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(BroadcastOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    return pickRegisters(op, adaptor.getSrc(), srcType, op.getType(), rewriter,
                         [&](LinearLayout::Basis &c) {
                           for (unsigned d = 0; d < c.size(); ++d)
                             if (srcType.getDimSize(d) == 1)
                               c[d] = 0;
                         });
  }
};

struct ExpandDimsOpConversion : TesselOpToLLVMPattern<ExpandDimsOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(ExpandDimsOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    return pickRegisters(op, adaptor.getSrc(), srcType, op.getType(), rewriter,
                         [&](LinearLayout::Basis &c) { c.erase(c.begin() + op.getAxis()); });
  }
};

// A tile nobody reads (a pipelined load's iteration that does not run):
// each register is poison.
struct PoisonOpConversion : TesselOpToLLVMPattern<ub::PoisonOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(ub::PoisonOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "not a tile");
    Value poison = rewriter.create<LLVM::PoisonOp>(op.getLoc(), converter.scalarType(type));
    replaceWithRegisters(rewriter, op, {SmallVector<Value>(registersPerThread(type), poison)});
    return success();
  }
};

// multiple_of, max_contiguous: facts for the analyses, the value unchanged.
template <class HintOp> struct HintOpConversion : TesselOpToLLVMPattern<HintOp> {
  using TesselOpToLLVMPattern<HintOp>::TesselOpToLLVMPattern;
  using OneToNOpAdaptor = typename TesselOpToLLVMPattern<HintOp>::OneToNOpAdaptor;
  LogicalResult matchAndRewrite(HintOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    replaceWithRegisters(rewriter, op, {adaptor.getSrc()});
    return success();
  }
};

} // namespace

void mlir::tessel::populateViewOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                const TargetInfo &target,
                                                RewritePatternSet &patterns) {
  patterns.add<SplatOpConversion, BroadcastOpConversion, ExpandDimsOpConversion, PoisonOpConversion,
               HintOpConversion<MultipleOfOp>, HintOpConversion<MaxContiguousOp>>(converter,
                                                                                  target);
}
