// A loop's dot operands kept in LDS across iterations (see Passes.td).
#include "tessel/Dialect/Tessel/IR/DirectLds.h"
#include "tessel/Dialect/Tessel/IR/LayoutConversion.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/Matchers.h"
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
// `before` and `inLoop`: the buffer loads (tessel-pipeline-loads' first and
// next tiles) it can load straight into LDS instead, or null.
struct Staged {
  BlockArgument arg;
  ConvertLayoutOp convert;
  BufferLoadOp before, inLoop;
};

// The buffer load `value` comes from when it can write LDS instead of
// registers: the one use of the load is the then-branch yield of an
// scf.if whose else-branch yields poison (tessel-pipeline-loads' guard), the
// if's result is used once, and masked-off elements read 0 (what a load to
// LDS writes for them).
BufferLoadOp directSource(Value value) {
  auto result = dyn_cast<OpResult>(value);
  auto branch = result ? dyn_cast<scf::IfOp>(result.getOwner()) : scf::IfOp();
  if (!branch || branch.getElseRegion().empty() || !value.hasOneUse())
    return {};
  unsigned k = result.getResultNumber();
  auto load = branch.thenYield().getOperand(k).getDefiningOp<BufferLoadOp>();
  if (!load || !load->hasOneUse() || !branch.elseYield().getOperand(k).getDefiningOp<ub::PoisonOp>())
    return {};
  if (load.getOther() && !matchPattern(load.getOther(), m_AnyZeroFloat()) &&
      !matchPattern(load.getOther(), m_Zero()))
    return {};
  return load;
}

struct StageOperandsPass : mlir::tessel::impl::TesselStageOperandsBase<StageOperandsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IntegerAttr stages = tesselDialect(module.getContext()).getNumStagesAttrHelper().getAttr(module);
    if (!stages || stages.getInt() < 2)
      return markAllAnalysesPreserved();
    slots = stages.getInt() - 1;
    // Loads to LDS of 16 bytes a lane (gfx950); gfx942's 4-byte ones would
    // take four times the instructions and 4-byte LDS reads.
    auto arch = tesselDialect(module.getContext()).getTargetAttrHelper().getAttr(module);
    const ::tessel::TargetFacts *facts = arch ? ::tessel::lookupTarget(arch.getValue().str()) : nullptr;
    directBytes = facts && facts->directLdsLoadBytes >= 16 && stages.getInt() == 2 ? facts->directLdsLoadBytes : 0;
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
    // The guards of loads into LDS no longer yield those tiles.
    RewritePatternSet ifPatterns(module.getContext());
    scf::IfOp::getCanonicalizationPatterns(ifPatterns, module.getContext());
    (void)applyOpPatternsGreedily(guards.takeVector(), std::move(ifPatterns), config);
    // (and the poison their branches yielded for them is left unused)
    module.walk([](ub::PoisonOp poison) {
      if (poison->use_empty())
        poison->erase();
    });
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
        tiles.push_back({arg, convert, {}, {}});
    }
    if (tiles.empty())
      return nullptr;

    // Before the loop: a buffer per tile, the first iteration's tile in slot 0.
    MLIRContext *ctx = loop.getContext();
    SmallVector<LdsType> types;
    bool direct = false;
    for (Staged &t : tiles) {
      auto from = cast<RankedTensorType>(t.arg.getType());
      // Kept over the loop: a swizzle rather than padding when it is as
      // conflict-free, so the buffers take the tiles' bytes (occupancy).
      LdsStaging plan = planLdsStaging(from, t.convert.getType(), LdsPriority::Bytes);
      SmallVector<int64_t> shape{1};
      llvm::append_range(shape, from.getShape());
      types.push_back(LdsType::get(ctx, shape, from.getElementType(), plan.order, plan.pad, swizzleOf(plan)));
      if (directBytes && (t.before = directSource(loop.getTiedLoopInit(t.arg)->get())) &&
          (t.inLoop = directSource(loop.getBody()->getTerminator()->getOperand(t.arg.getArgNumber() - 1))) &&
          t.before->getParentOp()->getBlock() == loop->getBlock() && loadsToLds(t.before, types.back()) &&
          loadsToLds(t.inLoop, types.back())) {
        direct = true;
        continue;
      }
      t.before = t.inLoop = {};
    }
    // All or none: an operand still staged through registers would take two
    // slots too, and a slot that changes each iteration costs an address op
    // per swizzled access pattern (its XOR'd addresses are no longer made
    // once before the loop): more than the barrier and the stores saved
    // (gfx950 128x128x64 f16 with A alone loaded into LDS: 209.6 -> 267.1
    // llvm-mca cycles per iteration).
    if (direct && llvm::any_of(tiles, [](const Staged &t) { return !t.before; })) {
      direct = false;
      for (Staged &t : tiles)
        t.before = t.inLoop = {};
    }
    // A tile loaded straight into LDS lands there while the loop reads the
    // other slot: num_stages slots (one barrier an iteration for every tile).
    const int64_t count = direct ? slots + 1 : slots;
    Operation *first = loop;
    for (Staged &t : tiles)
      if (t.before && t.before->getParentOp()->isBeforeInBlock(first))
        first = t.before->getParentOp();
    OpBuilder b(first);
    Location loc = loop.getLoc();
    Value zero = b.create<arith::ConstantIntOp>(loc, b.getI32Type(), 0);
    SmallVector<Value> buffers;
    auto fill = [&](Staged &t, Value buffer) {
      if (t.before)
        toLds(t.before, buffer, zero);
      else
        b.create<LocalStoreOp>(loc, loop.getTiedLoopInit(t.arg)->get(), buffer, zero);
    };
    for (auto [t, type] : llvm::zip(tiles, types)) {
      SmallVector<int64_t> shape{count};
      llvm::append_range(shape, type.getTileShape());
      type = LdsType::get(ctx, shape, type.getElementType(), type.getOrder(), type.getPad(), type.getSwizzle());
      buffers.push_back(b.create<LocalAllocOp>(loc, type));
      if (first == loop)
        fill(t, buffers.back());
    }
    // (Buffers a first tile loads into come before that load's guard.)
    b.setInsertionPoint(loop);
    if (first != loop)
      for (auto [t, buffer] : llvm::zip(tiles, buffers))
        fill(t, buffer);
    if (direct)
      b.create<AsyncWaitOp>(loc);
    b.create<BarrierOp>(loc);

    // In the body: the dot reads its operand from slot `read`; the end of
    // the body writes the next iteration's tile into slot `write`, then a
    // barrier. With one slot, a barrier first: every thread must have read
    // the slot before anyone overwrites it. A tile loaded into LDS goes to
    // slot `write` after the reads (which then need not wait for it), and
    // the end waits for it before the barrier.
    auto rewriteBody = [&](OpBuilder &end, Value read, Value write) {
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      Operation *lastRead = nullptr;
      for (auto [t, buffer] : llvm::zip(tiles, buffers)) {
        OpBuilder at(t.convert);
        Value tile = at.create<LocalLoadOp>(t.convert.getLoc(), t.convert.getType(), buffer, read);
        if (!lastRead || lastRead->isBeforeInBlock(tile.getDefiningOp()))
          lastRead = tile.getDefiningOp();
        t.convert.getResult().replaceAllUsesWith(tile);
        t.convert.erase();
      }
      for (auto [t, buffer] : llvm::zip(tiles, buffers)) {
        if (!t.inLoop)
          continue;
        Operation *branch = t.inLoop->getParentOp();
        toLds(t.inLoop, buffer, write);
        if (branch->isBeforeInBlock(lastRead))
          branch->moveAfter(lastRead);
      }
      if (count == 1)
        end.create<BarrierOp>(loc);
      for (auto [t, buffer] : llvm::zip(tiles, buffers))
        if (!t.inLoop)
          end.create<LocalStoreOp>(loc, yield.getOperand(t.arg.getArgNumber() - 1), buffer, write);
      if (direct)
        end.create<AsyncWaitOp>(loc);
      end.create<BarrierOp>(loc);
    };
    if (count == 1) {
      OpBuilder end(loop.getBody()->getTerminator());
      rewriteBody(end, zero, zero);
      return loop;
    }
    // Several slots: the slot to read is carried, the next one follows it
    // round (computed first when a load into LDS in the body writes it).
    IRRewriter rewriter(ctx);
    auto newYields = [&](OpBuilder &end, Location l, ArrayRef<BlockArgument> newArgs) {
      Value read = newArgs.front();
      OpBuilder atTop = OpBuilder::atBlockBegin(loop.getBody());
      OpBuilder &top = direct ? atTop : end;
      Value next = top.create<arith::AddIOp>(l, read, top.create<arith::ConstantIntOp>(l, top.getI32Type(), 1));
      Value wraps = top.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, next,
                                              top.create<arith::ConstantIntOp>(l, top.getI32Type(), count));
      Value write = top.create<arith::SelectOp>(l, wraps, zero, next);
      rewriteBody(end, read, write);
      return SmallVector<Value>{write};
    };
    FailureOr<LoopLikeOpInterface> replaced =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(rewriter, zero, /*replaceInitOperandUsesInLoop=*/false, newYields);
    return succeeded(replaced) ? replaced->getOperation() : nullptr;
  }

  // Whether `load` can go straight into a slot of `type`: 16 bytes a lane
  // (the target's width) and lanes on consecutive chunks (planDirectLds).
  bool loadsToLds(BufferLoadOp load, LdsType type) {
    return load.getVec() * ldsElementBytes(type.getElementType()) == directBytes &&
           planDirectLds(load.getOffsets().getType(), type, load.getVec()).has_value();
  }

  // `load` (in a guard's then-branch) writes slot `slot` of `buffer` instead
  // of yielding a tile; the branch yields poison for it (dropped below).
  // Offsets x + splat(s) (a carried offset) pass x and s apart: the lowering
  // moves x between lanes where x is made (before the loop), not each step.
  void toLds(BufferLoadOp load, Value buffer, Value slot) {
    OpBuilder at(load);
    Value offsets = load.getOffsets(), shift;
    if (auto add = offsets.getDefiningOp<arith::AddIOp>())
      for (auto [x, y] : {std::pair(add.getLhs(), add.getRhs()), std::pair(add.getRhs(), add.getLhs())})
        if (auto splat = y.getDefiningOp<SplatOp>(); splat && splat.getSrc().getType().isInteger(32)) {
          offsets = x;
          shift = splat.getSrc();
          break;
        }
    at.create<BufferLoadToLocalOp>(load.getLoc(), load.getBase(), offsets, shift, load.getMask(), load.getBound(),
                                   buffer, slot, load.getVecAttr());
    Value unused = at.create<ub::PoisonOp>(load.getLoc(), load.getType());
    load.getResult().replaceAllUsesWith(unused);
    guards.insert(load->getParentOp());
    load.erase();
  }

  llvm::SetVector<Operation *> guards;
  unsigned directBytes = 0;
  int64_t slots = 1;
};

} // namespace
