// tessel.dot without matrix instructions (the types and shapes the matrix
// cores do not take): each thread computes its accumulator registers with
// multiply-adds. The operand layouts (Layouts.cpp, fmaOperandLayout) give a
// thread the whole K of every row of A and column of B its accumulator
// touches; each accumulator register finds its row's and column's registers
// by their coordinates.
#include "../PatternTesselOpToLLVM.h"
#include "../Utility.h"

#include "tessel/Dialect/Tessel/IR/Layouts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct DotOpFmaConversion : TesselOpToLLVMPattern<DotOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;

  LogicalResult matchAndRewrite(DotOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto cType = cast<RankedTensorType>(op.getC().getType());
    // Scales are operands of gfx950's scaled MFMAs only (tessel-legalize-dots
    // makes a scaled dot only where one fits): never dropped silently.
    if (op.getAScale() || op.getBScale())
      return op.emitOpError("has scales, which only gfx950's scaled MFMAs take, not the FMA path");
    if (!isa_and_nonnull<BlockedLayoutAttr>(cType.getEncoding()))
      return rewriter.notifyMatchFailure(op, "not an FMA dot");
    // Packed e2m1 operands likewise: never multiplied as integer bytes.
    if (op.getAE2m1() || op.getBE2m1())
      return op.emitOpError("has packed e2m1 operands, which only gfx950's scaled MFMAs take, not the FMA path");
    auto aType = cast<RankedTensorType>(op.getA().getType()), bType = cast<RankedTensorType>(op.getB().getType());
    LinearLayout acc = getLinearLayout(cType), la = getLinearLayout(aType), lb = getLinearLayout(bType);
    const unsigned rank = cType.getRank();
    const int64_t K = aType.getDimSize(rank - 1);
    SmallVector<Value> a = registersOf(adaptor.getA()), b = registersOf(adaptor.getB());
    SmallVector<Value> out = registersOf(adaptor.getC());
    Location loc = op.getLoc();
    Type accElem = cType.getElementType();
    const bool ints = isa<IntegerType>(accElem);
    // Operands widen to the accumulator's type (f16/bf16 -> f32, i8 -> i32).
    auto widen = [&](Value v) -> Value {
      if (v.getType() == accElem)
        return v;
      if (ints)
        return rewriter.create<LLVM::SExtOp>(loc, accElem, v);
      return rewriter.create<LLVM::FPExtOp>(loc, accElem, v);
    };
    for (int64_t r = 0; r < acc.numRegisters(); ++r) {
      LinearLayout::Basis c = acc.registerCoords(r);
      Value sum = out[r];
      for (int64_t k = 0; k < K; ++k) {
        LinearLayout::Basis ca(c), cb(c);
        ca[rank - 1] = k; // A [.., m, k]
        cb[rank - 2] = k; // B [.., k, n]
        int64_t ra = la.registerAt(ca), rb = lb.registerAt(cb);
        if (ra < 0 || rb < 0)
          return op.emitError("tessel.dot: the FMA operand layouts miss an element (compiler bug)");
        Value x = widen(a[ra]), y = widen(b[rb]);
        sum = ints ? Value(rewriter.create<LLVM::AddOp>(loc, sum, rewriter.create<LLVM::MulOp>(loc, x, y)))
                   : Value(rewriter.create<LLVM::FMAOp>(loc, x, y, sum));
      }
      out[r] = sum;
    }
    replaceWithRegisters(rewriter, op, {out});
    return success();
  }
};

} // namespace

void mlir::tessel::populateFmaDotOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                  const TargetInfo &target, RewritePatternSet &patterns) {
  patterns.add<DotOpFmaConversion>(converter, target);
}
