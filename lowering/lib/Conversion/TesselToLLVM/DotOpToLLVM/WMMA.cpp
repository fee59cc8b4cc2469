// tessel.dot on gfx11's WMMA units (wave32): one v_wmma_*_16x16x16 per 16x16
// output tile of the wave and K step of 16. Each lane gives the instruction
// all 16 K elements of its row of A (column of B), which the operand layout
// keeps in 16 consecutive registers; the accumulator tile is 8 registers.
#include "../PatternTesselOpToLLVM.h"
#include "../Utility.h"
#include "MatrixTiles.h"

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
    // Scales are operands of gfx950's scaled MFMAs only (tessel-legalize-dots
    // makes a scaled dot only where one fits): never dropped silently.
    if (op.getAScale() || op.getBScale())
      return op.emitOpError("has scales, which only gfx950's scaled MFMAs take, not the WMMA path");
    auto aType = cast<RankedTensorType>(op.getA().getType());
    auto wmma = dyn_cast_or_null<WmmaLayoutAttr>(cType.getEncoding());
    if (!wmma)
      return rewriter.notifyMatchFailure(op, "not a WMMA dot");
    // Packed e2m1 operands likewise: never multiplied as integer bytes.
    if (op.getAE2m1() || op.getBE2m1())
      return op.emitOpError("has packed e2m1 operands, which only gfx950's scaled MFMAs take, not the WMMA path");
    const int64_t rank = cType.getRank(); // a batch dim, if any, comes first
    const int64_t M = cType.getDimSize(rank - 2), N = cType.getDimSize(rank - 1), K = aType.getDimSize(rank - 1);
    const int64_t batch = rank == 3 ? cType.getDimSize(0) : 1;
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
    if (int64_t(a.size()) != batch * kWidth * repsK * repsM || int64_t(b.size()) != batch * kWidth * repsK * repsN ||
        !fitsMatrixInstruction(int64_t(acc.size()), batch, repsM, repsN, instrRegs))
      return op.emitError("tessel.dot: operand registers do not match the layouts (compiler bug)");

    Location loc = op.getLoc();
    auto accVecType = VectorType::get({instrRegs}, accElem);
    Value yes = rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI1Type(), rewriter.getBoolAttr(true));
    Value no = rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI1Type(), rewriter.getBoolAttr(false));
    forEachMatrixInstruction(rewriter, loc, acc, a, b, batch, repsM, repsN, repsK, kWidth, instrRegs,
                             [&](Value d, ArrayRef<Value> av, ArrayRef<Value> bv, const MatrixStep &) -> Value {
                               Value pa = packRegisters(rewriter, loc, av, operand);
                               Value pb = packRegisters(rewriter, loc, bv, operand);
                               if (wmma.getTransposed()) // D^T = B^T A^T
                                 std::swap(pa, pb);
                               // iu8: both operands signed, no clamp.
                               SmallVector<Value> args = inElem.isInteger(8) ? SmallVector<Value>{yes, pa, yes, pb, d, no}
                                                                             : SmallVector<Value>{pa, pb, d};
                               return rewriter
                                   .create<LLVM::CallIntrinsicOp>(loc, accVecType, rewriter.getStringAttr(intrinsic), args)
                                   .getResult(0);
                             });
    replaceWithRegisters(rewriter, op, {acc});
    return success();
  }
};

} // namespace

void mlir::tessel::populateWmmaDotOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                   const TargetInfo &target, RewritePatternSet &patterns) {
  patterns.add<DotOpWmmaConversion>(converter, target);
}
