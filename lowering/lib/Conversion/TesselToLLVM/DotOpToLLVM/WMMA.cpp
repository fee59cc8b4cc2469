// tessel.dot on gfx11's WMMA units (wave32): one v_wmma_*_16x16x16 per 16x16
// output tile of the wave and K step of 16. Each lane gives the instruction
// all 16 K elements of its row of A (column of B), which the operand layout
// keeps in 16 consecutive registers; the accumulator tile is 8 registers.
#include "../PatternTesselOpToLLVM.h"

#include "tessel/Dialect/Tessel/IR/Layouts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct DotOpWmmaConversion : TesselOpToLLVMPattern<DotOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;

  LogicalResult matchAndRewrite(DotOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto cType = cast<RankedTensorType>(op.getC().getType());
    auto aType = cast<RankedTensorType>(op.getA().getType());
    auto wmma = dyn_cast_or_null<WmmaLayoutAttr>(cType.getEncoding());
    if (!wmma)
      return rewriter.notifyMatchFailure(op, "not a WMMA dot");
    const int64_t M = cType.getDimSize(0), N = cType.getDimSize(1), K = aType.getDimSize(1);
    const unsigned wM = wmma.getWavesPerBlock()[0], wN = wmma.getWavesPerBlock()[1];
    Type inElem = aType.getElementType(), accElem = cType.getElementType();
    // The intrinsics and their operand types (IntrinsicsAMDGPU.td): A and B
    // are 16 elements, bf16 as <16 x i16>, i8 packed as <4 x i32>.
    MLIRContext *ctx = rewriter.getContext();
    const char *intrinsic;
    Type operand;
    if (inElem.isF16()) {
      intrinsic = "llvm.amdgcn.wmma.f32.16x16x16.f16";
      operand = VectorType::get({16}, inElem);
    } else if (inElem.isBF16()) {
      intrinsic = "llvm.amdgcn.wmma.f32.16x16x16.bf16";
      operand = VectorType::get({16}, IntegerType::get(ctx, 16));
    } else if (inElem.isInteger(8)) {
      intrinsic = "llvm.amdgcn.wmma.i32.16x16x16.iu8";
      operand = VectorType::get({4}, IntegerType::get(ctx, 32));
    } else {
      return op.emitError() << "no WMMA instruction takes " << inElem << " operands";
    }
    const int64_t repsM = std::max<int64_t>(1, M / (16 * int64_t(wM)));
    const int64_t repsN = std::max<int64_t>(1, N / (16 * int64_t(wN)));
    const int64_t repsK = K / 16, kWidth = 16, instrRegs = 8;
    SmallVector<Value> a = registersOf(adaptor.getA()), b = registersOf(adaptor.getB());
    SmallVector<Value> acc = registersOf(adaptor.getC());
    if (int64_t(a.size()) != kWidth * repsK * repsM || int64_t(b.size()) != kWidth * repsK * repsN ||
        int64_t(acc.size()) != instrRegs * repsM * repsN)
      return op.emitError("tessel.dot: operand registers do not match the layouts (compiler bug)");

    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    auto index = [&](int64_t i) { return rewriter.create<LLVM::ConstantOp>(loc, i32, rewriter.getI32IntegerAttr(i)); };
    auto pack = [&](ArrayRef<Value> regs) -> Value {
      auto vecType = VectorType::get({kWidth}, inElem);
      Value v = rewriter.create<LLVM::PoisonOp>(loc, vecType);
      for (int64_t e = 0; e < kWidth; ++e)
        v = rewriter.create<LLVM::InsertElementOp>(loc, v, regs[e], index(e));
      return vecType == operand ? v : rewriter.create<LLVM::BitcastOp>(loc, operand, v).getResult();
    };
    auto accVecType = VectorType::get({instrRegs}, accElem);
    Value yes = rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI1Type(), rewriter.getBoolAttr(true));
    Value no = rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI1Type(), rewriter.getBoolAttr(false));
    for (int64_t rn = 0; rn < repsN; ++rn)
      for (int64_t rm = 0; rm < repsM; ++rm) {
        const int64_t base = instrRegs * (rm + repsM * rn);
        Value d = rewriter.create<LLVM::PoisonOp>(loc, accVecType);
        for (int64_t r = 0; r < instrRegs; ++r)
          d = rewriter.create<LLVM::InsertElementOp>(loc, d, acc[base + r], index(r));
        for (int64_t rk = 0; rk < repsK; ++rk) {
          Value av = pack(ArrayRef<Value>(a).slice(kWidth * (rk + repsK * rm), kWidth));
          Value bv = pack(ArrayRef<Value>(b).slice(kWidth * (rk + repsK * rn), kWidth));
          SmallVector<Value> args = inElem.isInteger(8) ? SmallVector<Value>{yes, av, yes, bv, d, no}
                                                        : SmallVector<Value>{av, bv, d};
          d = rewriter.create<LLVM::CallIntrinsicOp>(loc, accVecType, rewriter.getStringAttr(intrinsic), args)
                  .getResult(0);
        }
        for (int64_t r = 0; r < instrRegs; ++r)
          acc[base + r] = rewriter.create<LLVM::ExtractElementOp>(loc, d, index(r));
      }
    rewriter.replaceOpWithMultiple(op, {acc});
    return success();
  }
};

} // namespace

void mlir::tessel::populateWmmaDotOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                   const TargetInfo &target, RewritePatternSet &patterns) {
  patterns.add<DotOpWmmaConversion>(converter, target);
}
