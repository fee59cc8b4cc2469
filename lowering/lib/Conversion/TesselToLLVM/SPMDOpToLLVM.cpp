// Which program and which thread: program ids, the grid, and ranges (each
// thread's share of arange is the coordinates its registers hold).
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct ProgramIdOpConversion : TesselOpToLLVMPattern<ProgramIdOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(ProgramIdOp op, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, target.programId(rewriter, op.getLoc(), op.getAxis()));
    return success();
  }
};

struct NumProgramsOpConversion : TesselOpToLLVMPattern<NumProgramsOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(NumProgramsOp op, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, target.numPrograms(rewriter, op.getLoc(), op.getAxis()));
    return success();
  }
};

struct MakeRangeOpConversion : TesselOpToLLVMPattern<MakeRangeOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(MakeRangeOp op, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> coords = emitCoordinates(rewriter, loc, target, op.getType(), 0);
    if (op.getStart() != 0)
      for (Value &c : coords)
        c = rewriter.create<LLVM::AddOp>(loc, c, i32Value(rewriter, loc, op.getStart()));
    replaceWithRegisters(rewriter, op, {coords});
    return success();
  }
};

} // namespace

void mlir::tessel::populateSPMDOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                const TargetInfo &target,
                                                RewritePatternSet &patterns) {
  patterns.add<ProgramIdOpConversion, NumProgramsOpConversion, MakeRangeOpConversion>(converter,
                                                                                     target);
}
