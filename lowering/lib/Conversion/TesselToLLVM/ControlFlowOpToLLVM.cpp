// The kernel: func.func becomes an llvm.func with the ROCDL kernel attributes
// and the workgroup size, its scalar and pointer arguments in the kernarg
// segment; func.return becomes llvm.return. scf ops whose values are tiles
// carry each tile as its registers (upstream structural type conversion).
#include "PatternTesselOpToLLVM.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct FuncOpConversion : TesselOpToLLVMPattern<func::FuncOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(func::FuncOp func, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    TypeConverter::SignatureConversion signature(func.getNumArguments());
    SmallVector<Type> params;
    for (auto [i, t] : llvm::enumerate(func.getArgumentTypes())) {
      Type converted = converter.convertType(t);
      if (!converted)
        return func.emitError("kernel argument #") << i << " has a type with no LLVM equivalent";
      signature.addInputs(i, converted);
      params.push_back(converted);
    }
    auto kernel = rewriter.create<LLVM::LLVMFuncOp>(
        func.getLoc(), func.getName(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params));
    auto *rocdl = ctx->getLoadedDialect<ROCDL::ROCDLDialect>();
    int32_t blockSize = target.numWarps() * target.waveSize();
    kernel->setAttr(rocdl->getKernelAttrHelper().getName(), rewriter.getUnitAttr());
    kernel->setAttr(rocdl->getFlatWorkGroupSizeAttrHelper().getName(),
                    rewriter.getStringAttr(std::to_string(blockSize) + "," + std::to_string(blockSize)));
    kernel->setAttr(rocdl->getReqdWorkGroupSizeAttrHelper().getName(),
                    rewriter.getDenseI32ArrayAttr({blockSize, 1, 1}));
    rewriter.inlineRegionBefore(func.getBody(), kernel.getBody(), kernel.end());
    rewriter.applySignatureConversion(&kernel.getBody().front(), signature, &converter);
    rewriter.eraseOp(func);
    return success();
  }
};

struct ReturnOpConversion : TesselOpToLLVMPattern<func::ReturnOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(func::ReturnOp op, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (op.getNumOperands() != 0)
      return op.emitError("a kernel returns nothing");
    rewriter.replaceOpWithNewOp<LLVM::ReturnOp>(op, ValueRange{});
    return success();
  }
};

} // namespace

void mlir::tessel::populateControlFlowOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                       const TargetInfo &target,
                                                       RewritePatternSet &patterns,
                                                       ConversionTarget &legality) {
  patterns.add<FuncOpConversion, ReturnOpConversion>(converter, target);
  // scf.for/while/if/yield with tile operands take their registers instead;
  // scf ops on scalars are legal here and lowered to cf after the conversion.
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, legality);
}
