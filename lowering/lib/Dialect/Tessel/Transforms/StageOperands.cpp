// A loop's dot operands kept in LDS across iterations (see Passes.td).
#include "tessel/Dialect/Tessel/IR/LayoutConversion.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSTAGEOPERANDS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

// A carried tile that only goes, through LDS, into a dot operand's layout.
struct Staged {
  BlockArgument arg;
  ConvertLayoutOp convert;
};

struct StageOperandsPass : mlir::tessel::impl::TesselStageOperandsBase<StageOperandsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IntegerAttr stages = tesselDialect(module.getContext()).getNumStagesAttrHelper().getAttr(module);
    if (!stages || stages.getInt() < 2)
      return markAllAnalysesPreserved();
    slots = stages.getInt() - 1;
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    SmallVector<Operation *> staged;
    for (scf::ForOp loop : loops)
      if (Operation *done = stage(loop))
        staged.push_back(done);
    // The staged tiles are no longer carried in registers: drop them from
    // the loops (scf.for's own canonicalization, on those loops only).
    RewritePatternSet patterns(module.getContext());
    scf::ForOp::getCanonicalizationPatterns(patterns, module.getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(staged, std::move(patterns), config);
  }

  // The loop that replaces `loop` once its operands are staged, or null.
  Operation *stage(scf::ForOp loop) {
    SmallVector<Staged> tiles;
    for (BlockArgument arg : loop.getRegionIterArgs()) {
      if (!arg.hasOneUse() || !loop.getTiedLoopResult(arg).use_empty())
        continue;
      auto convert = dyn_cast<ConvertLayoutOp>(*arg.getUsers().begin());
      if (convert && convert->getBlock() == loop.getBody() && conversionPath(convert) == ConversionPath::Lds &&
          isa<DotOperandLayoutAttr>(convert.getType().getEncoding()))
        tiles.push_back({arg, convert});
    }
    if (tiles.empty())
      return nullptr;

    // Before the loop: a buffer per tile, the first iteration's tile in slot 0.
    MLIRContext *ctx = loop.getContext();
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value zero = b.create<arith::ConstantIntOp>(loc, b.getI32Type(), 0);
    SmallVector<Value> buffers;
    for (Staged &t : tiles) {
      auto from = cast<RankedTensorType>(t.arg.getType());
      // Kept over the loop: a swizzle rather than padding when it is as
      // conflict-free, so the buffers take the tiles' bytes (occupancy).
      LdsStaging plan = planLdsStaging(from, t.convert.getType(), LdsPriority::Bytes);
      SmallVector<int64_t> shape{slots};
      shape.append(from.getShape().begin(), from.getShape().end());
      Value buffer =
          b.create<LocalAllocOp>(loc, LdsType::get(ctx, shape, from.getElementType(), plan.order, plan.pad, swizzleOf(plan)));
      b.create<LocalStoreOp>(loc, loop.getTiedLoopInit(t.arg)->get(), buffer, zero);
      buffers.push_back(buffer);
    }
    b.create<BarrierOp>(loc);

    // In the body: the dot reads its operand from slot `read`; the end of
    // the body writes the next iteration's tile into slot `write`, then a
    // barrier. With one slot, a barrier first: every thread must have read
    // the slot before anyone overwrites it.
    auto rewriteBody = [&](OpBuilder &end, Value read, Value write) {
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      for (auto [t, buffer] : llvm::zip(tiles, buffers)) {
        OpBuilder at(t.convert);
        Value tile = at.create<LocalLoadOp>(t.convert.getLoc(), t.convert.getType(), buffer, read);
        t.convert.getResult().replaceAllUsesWith(tile);
        t.convert.erase();
      }
      if (slots == 1)
        end.create<BarrierOp>(loc);
      for (auto [t, buffer] : llvm::zip(tiles, buffers))
        end.create<LocalStoreOp>(loc, yield.getOperand(t.arg.getArgNumber() - 1), buffer, write);
      end.create<BarrierOp>(loc);
    };
    if (slots == 1) {
      OpBuilder end(loop.getBody()->getTerminator());
      rewriteBody(end, zero, zero);
      return loop;
    }
    // Several slots: the slot to read is carried, the next one follows it round.
    IRRewriter rewriter(ctx);
    auto newYields = [&](OpBuilder &end, Location l, ArrayRef<BlockArgument> newArgs) {
      Value read = newArgs.front();
      Value next = end.create<arith::AddIOp>(l, read, end.create<arith::ConstantIntOp>(l, end.getI32Type(), 1));
      Value wraps = end.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, next,
                                              end.create<arith::ConstantIntOp>(l, end.getI32Type(), slots));
      Value write = end.create<arith::SelectOp>(l, wraps, zero, next);
      rewriteBody(end, read, write);
      return SmallVector<Value>{write};
    };
    FailureOr<LoopLikeOpInterface> replaced =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(rewriter, zero, /*replaceInitOperandUsesInLoop=*/false, newYields);
    return succeeded(replaced) ? replaced->getOperation() : nullptr;
  }

  int64_t slots = 1;
};

} // namespace
