// Fast float division under LaunchOptions::fast_math (see Passes.td).
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELFASTMATH
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

constexpr arith::FastMathFlags kFastDivision = arith::FastMathFlags::arcp | arith::FastMathFlags::afn;

// The value `divisor` repeats (a splat's scalar, a broadcast's smaller tile)
// and the op that repeats it; null when it is not such a value.
Operation *repeatingOp(Value divisor) {
  Operation *op = divisor.getDefiningOp();
  return op && isa<SplatOp, BroadcastOp>(op) ? op : nullptr;
}

struct FastMathPass : mlir::tessel::impl::TesselFastMathBase<FastMathPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    TesselDialect &tessel = tesselDialect(module.getContext());
    if (!tessel.getFastMathAttrHelper().isAttrPresent(module))
      return markAllAnalysesPreserved();
    StringAttr divRn = tessel.getDivRnAttrHelper().getName();
    SmallVector<arith::DivFOp> divisions;
    module.walk([&](arith::DivFOp div) {
      if (!div->hasAttr(divRn))
        divisions.push_back(div);
    });
    for (arith::DivFOp div : divisions) {
      Operation *repeat = repeatingOp(div.getRhs());
      if (!repeat) {
        div.setFastmath(div.getFastmath() | kFastDivision);
        continue;
      }
      // x / repeat(s) -> x * repeat(1 / s): one reciprocal per element of s.
      OpBuilder b(div);
      Location loc = div.getLoc();
      Value source = repeat->getOperand(0);
      Type sourceType = source.getType();
      Type elem = getElementTypeOrSelf(sourceType);
      TypedAttr one = b.getFloatAttr(elem, 1.0);
      if (auto tile = dyn_cast<RankedTensorType>(sourceType))
        one = DenseElementsAttr::get(tile, one);
      Value ones = b.create<arith::ConstantOp>(loc, one);
      Value reciprocal = b.create<arith::DivFOp>(loc, ones, source, kFastDivision);
      Operation *repeated = b.clone(*repeat);
      repeated->setOperand(0, reciprocal);
      Value product = b.create<arith::MulFOp>(loc, div.getLhs(), repeated->getResult(0), div.getFastmath());
      div.replaceAllUsesWith(product);
      div.erase();
    }
  }
};

} // namespace
