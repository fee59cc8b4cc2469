// Specialization (see Passes.td): integer arguments known to equal 1 become
// constants; divisibility facts stay on the arguments for the axis analysis.
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSPECIALIZE
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct SpecializePass : mlir::tessel::impl::TesselSpecializeBase<SpecializePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      OpBuilder builder(&func.getBody().front(), func.getBody().front().begin());
      for (BlockArgument arg : func.getArguments()) {
        if (!func.getArgAttr(arg.getArgNumber(),
                             tesselDialect(func.getContext()).getEqualToOneAttrHelper().getName()))
          continue;
        auto type = dyn_cast<IntegerType>(arg.getType());
        if (!type) {
          func.emitError("tessel.equal_to_one on a non-integer argument #")
              << arg.getArgNumber();
          return signalPassFailure();
        }
        Value one = builder.create<arith::ConstantOp>(arg.getLoc(), IntegerAttr::get(type, 1));
        arg.replaceAllUsesWith(one);
      }
    }
  }
};
} // namespace
