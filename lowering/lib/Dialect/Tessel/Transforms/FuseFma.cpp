// Multiply-adds as one fma under LaunchOptions::fp_fusion (see Passes.td).
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELFUSEFMA
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

// `v`'s defining float multiply when every use of it is a float add or
// subtract in its block (each becomes an fma and the multiply goes); a
// product used otherwise is kept, and its sums stay sums.
arith::MulFOp fusableProduct(Value v) {
  auto mul = v.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return {};
  for (Operation *user : mul->getUsers())
    if (!isa<arith::AddFOp, arith::SubFOp>(user) || user->getBlock() != mul->getBlock())
      return {};
  return mul;
}

struct FuseFmaPass : mlir::tessel::impl::TesselFuseFmaBase<FuseFmaPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!tesselDialect(module.getContext()).getFpFusionAttrHelper().isAttrPresent(module))
      return markAllAnalysesPreserved();
    SmallVector<Operation *> sums;
    module.walk([&](Operation *op) {
      if (isa<arith::AddFOp, arith::SubFOp>(op))
        sums.push_back(op);
    });
    for (Operation *op : sums) {
      Value lhs = op->getOperand(0), rhs = op->getOperand(1);
      const bool isSub = isa<arith::SubFOp>(op);
      // a * b + c, c + a * b -> fma(a, b, c); a * b - c -> fma(a, b, -c);
      // c - a * b -> fma(-a, b, c). The first product found is fused.
      arith::MulFOp mul = fusableProduct(lhs);
      Value addend = rhs;
      bool negateProduct = false, negateAddend = isSub;
      if (!mul) {
        mul = fusableProduct(rhs);
        addend = lhs;
        negateProduct = isSub;
        negateAddend = false;
      }
      if (!mul)
        continue;
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value a = mul.getLhs();
      if (negateProduct)
        a = b.create<arith::NegFOp>(loc, a);
      if (negateAddend)
        addend = b.create<arith::NegFOp>(loc, addend);
      Value fma = b.create<math::FmaOp>(loc, a, mul.getRhs(), addend);
      op->getResult(0).replaceAllUsesWith(fma);
      op->erase();
      if (mul->use_empty())
        mul->erase();
    }
  }
};

} // namespace
