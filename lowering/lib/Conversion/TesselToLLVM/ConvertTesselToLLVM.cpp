// The pass that converts tile-level IR to LLVM (see Passes.td): tile-level
// functions whose tiles carry layouts become per-thread LLVM dialect code,
// through the op families' patterns (PatternTesselOpToLLVM.h).
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCONVERTTOLLVM
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct ConvertTesselToLLVMPass
    : mlir::tessel::impl::TesselConvertToLLVMBase<ConvertTesselToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    if (failed(verifyEveryTileHasLayout(module)))
      return signalPassFailure();
    FailureOr<KernelConfig> kernel = getKernelConfig(module, getArgument());
    if (failed(kernel))
      return signalPassFailure();
    if (failed(verifyLayoutsFit(module, kernel->waveSize, kernel->numWarps)))
      return signalPassFailure();
    TesselDialect &tessel = tesselDialect(ctx);
    // Every op that exchanges data through LDS needs its place in the plan.
    int64_t planned = 0;
    if (IntegerAttr lds = tessel.getLdsBytesAttrHelper().getAttr(module))
      planned = lds.getInt();
    WalkResult unplanned = module.walk([&](LdsScratchOpInterface op) -> WalkResult {
      int64_t bytes = op.getLdsScratchBytes();
      if (bytes == 0)
        return WalkResult::advance();
      if (!tessel.getLdsOffsetAttrHelper().isAttrPresent(op) || ldsOffset(op) + bytes > planned) {
        op->emitError() << "needs " << bytes << " bytes of LDS that the LDS plan has not placed; "
                        << "run tessel-plan-lds first";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unplanned.wasInterrupted())
      return signalPassFailure();
    StringAttr arch = tessel.getTargetAttrHelper().getAttr(module);
    TargetInfo target(arch ? arch.getValue() : "", kernel->waveSize, kernel->numWarps);

    // The LDS plan's bytes, as one workgroup array every LDS access indexes.
    if (IntegerAttr lds = tessel.getLdsBytesAttrHelper().getAttr(module); lds && lds.getInt() > 0) {
      OpBuilder b(module.getBodyRegion());
      auto type = LLVM::LLVMArrayType::get(b.getI8Type(), lds.getInt());
      b.create<LLVM::GlobalOp>(module.getLoc(), type, /*isConstant=*/false, LLVM::Linkage::Internal,
                               TargetInfo::kLdsSymbol, Attribute(), /*alignment=*/16,
                               /*addrSpace=*/kLdsAddressSpace);
    }

    for (auto func : module.getOps<func::FuncOp>())
      if (llvm::any_of(func.getArgumentTypes(), [](Type t) { return isa<RankedTensorType>(t); })) {
        func.emitError("kernel arguments must be scalars or pointers, not tiles");
        return signalPassFailure();
      }

    markSortPositions(module);
    // Integer facts (equal runs) on the tile-level IR, before it changes.
    AxisInfoAnalysis axis(module);
    TesselToLLVMTypeConverter converter(ctx);
    LLVMConversionTarget legality(*ctx);
    legality.addLegalDialect<ROCDL::ROCDLDialect>();
    legality.addIllegalDialect<TesselDialect, func::FuncDialect, arith::ArithDialect,
                               math::MathDialect, ub::UBDialect>();
    RewritePatternSet patterns(ctx);
    populateControlFlowOpToLLVMPatterns(converter, target, patterns, legality);
    populateSPMDOpToLLVMPatterns(converter, target, patterns);
    populateViewOpToLLVMPatterns(converter, target, patterns);
    PackedPairs pairs; // (outlives the conversion, which reads it)
    populateFp8ConversionOpToLLVMPatterns(converter, target, patterns);
    populateElementwiseOpToLLVMPatterns(converter, target, patterns, &axis, pairs);
    populateLoadStoreOpToLLVMPatterns(converter, target, patterns);
    populateBufferOpToLLVMPatterns(converter, target, patterns);
    populateAtomicOpToLLVMPatterns(converter, target, patterns);
    populateSortOpToLLVMPatterns(converter, target, patterns);
    populateReduceOpToLLVMPatterns(converter, target, patterns);
    populateScanOpToLLVMPatterns(converter, target, patterns);
    populateConvertLayoutOpToLLVMPatterns(converter, target, patterns);
    populateLocalMemoryOpToLLVMPatterns(converter, target, patterns);
    populateMfmaDotOpToLLVMPatterns(converter, target, patterns);
    populateWmmaDotOpToLLVMPatterns(converter, target, patterns);
    populateFmaDotOpToLLVMPatterns(converter, target, patterns);
    populateDebugOpToLLVMPatterns(converter, target, patterns);
    // The scalar arith and math ops the tile patterns leave become LLVM ops.
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    // Patterns never fail after changing the IR (what could fail is checked
    // above or by verifiers), so the conversion needs no rollback: faster.
    ConversionConfig config;
    config.allowPatternRollback = false;
    if (failed(applyPartialConversion(module, legality, std::move(patterns), config)))
      return signalPassFailure();
    // The identity casts replaceWithRegisters handed the driver.
    foldIdentityCasts(module);

    // Structured control flow (predication, loops) to LLVM branches.
    LLVMConversionTarget branches(*ctx);
    branches.addLegalDialect<ROCDL::ROCDLDialect>();
    branches.addIllegalDialect<scf::SCFDialect, cf::ControlFlowDialect>();
    RewritePatternSet branchPatterns(ctx);
    populateSCFToControlFlowConversionPatterns(branchPatterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, branchPatterns);
    // A loop's induction variable steps and compares with arith ops.
    branches.addIllegalDialect<arith::ArithDialect>();
    arith::populateArithToLLVMConversionPatterns(converter, branchPatterns);
    if (failed(applyPartialConversion(module, branches, std::move(branchPatterns), config)))
      return signalPassFailure();
    packByteBlockArguments(module);
  }
};

} // namespace
