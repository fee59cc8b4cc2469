// Redundant layout conversions away, loop-invariant ones out of loops (see
// Passes.td).
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELHOISTCONVERSIONS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

// Hoisted, the converted tile stays in registers over the loop where the
// source did (the conversion read it every iteration). A layout that holds
// copies (a WMMA A operand gives two lanes each row, all of K) can be many
// times the source: past kMaxExtraRegisters more per thread, converting
// each iteration is cheaper than what the registers would spill.
constexpr int64_t kMaxExtraRegisters = 16;
bool worthKeeping(ConvertLayoutOp convert) {
  return packedRegistersPerThread(convert.getType()) <=
         packedRegistersPerThread(cast<RankedTensorType>(convert.getSrc().getType())) + kMaxExtraRegisters;
}

// A conversion to the layout its source already has is that source; one
// whose source is another conversion read by nothing else converts from the
// first one's source (one trip, not two). What goes away joins `erased`.
void removeRedundant(ConvertLayoutOp convert, llvm::SmallPtrSetImpl<Operation *> &erased, bool &changed) {
  while (auto inner = convert.getSrc().getDefiningOp<ConvertLayoutOp>()) {
    if (!inner->hasOneUse())
      break;
    convert.getSrcMutable().assign(inner.getSrc());
    erased.insert(inner);
    inner.erase();
    changed = true;
  }
  if (convert.getSrc().getType() != convert.getType())
    return;
  convert.replaceAllUsesWith(convert.getSrc());
  erased.insert(convert);
  convert.erase();
  changed = true;
}

// A conversion of the same tile to the same layout earlier in `convert`'s
// block, or null.
ConvertLayoutOp sameConversionBefore(ConvertLayoutOp convert) {
  for (Operation *user : convert.getSrc().getUsers())
    if (auto other = dyn_cast<ConvertLayoutOp>(user);
        other && other != convert && other->getBlock() == convert->getBlock() &&
        other.getType() == convert.getType() && other->isBeforeInBlock(convert))
      return other;
  return nullptr;
}

struct HoistConversionsPass : mlir::tessel::impl::TesselHoistConversionsBase<HoistConversionsPass> {
  void runOnOperation() override {
    SmallVector<ConvertLayoutOp> converts;
    getOperation().walk([&](ConvertLayoutOp op) { converts.push_back(op); });
    bool changed = false;
    // Each chain from its last conversion: the ones before it go with it.
    llvm::SmallPtrSet<Operation *, 8> erased;
    for (ConvertLayoutOp convert : llvm::reverse(converts)) {
      if (!erased.contains(convert))
        removeRedundant(convert, erased, changed);
    }
    for (ConvertLayoutOp convert : converts) {
      if (erased.contains(convert))
        continue;
      // Out of each enclosing loop its operand does not come from; the op
      // must sit straight in the loop's body (not under an if).
      bool moved = false;
      while (auto loop = dyn_cast<LoopLikeOpInterface>(convert->getParentOp())) {
        if (!loop.isDefinedOutsideOfLoop(convert.getSrc()) || !worthKeeping(convert))
          break;
        loop.moveOutOfLoop(convert);
        moved = changed = true;
      }
      // Two loops that read one tile converted alike (attention's loops of
      // whole and of masked key blocks, each with Q) share the first
      // conversion: otherwise the source stays live across the first loop.
      if (moved)
        if (ConvertLayoutOp earlier = sameConversionBefore(convert)) {
          convert.replaceAllUsesWith(earlier.getResult());
          convert.erase();
        }
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
