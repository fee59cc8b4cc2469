// Specialization (see Passes.td): integer arguments known to equal 1 become
// constants; divisibility facts stay on the arguments for the axis analysis,
// and assume(arg % C == 0) adds one. device_assert goes unless the module is
// compiled for debugging.
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSPECIALIZE
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct SpecializePass : mlir::tessel::impl::TesselSpecializeBase<SpecializePass> {
  void runOnOperation() override {
    bool changed = false;
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
        changed = true;
      }
      func.walk([&](AssumeOp assume) { changed |= recordDivisibility(func, assume); });
    }
    // device_assert is checked only in kernels compiled for debugging.
    if (!tesselDialect(&getContext()).getDebugAttrHelper().isAttrPresent(getOperation())) {
      SmallVector<DeviceAssertOp> asserts;
      getOperation().walk([&](DeviceAssertOp op) { asserts.push_back(op); });
      for (DeviceAssertOp op : asserts)
        op.erase();
      changed |= !asserts.empty();
    }
    if (!changed)
      markAllAnalysesPreserved();
  }

  // assume(arg % C == 0) on a kernel argument: the power of two in C divides
  // the argument, a fact the axis analysis reads from the argument.
  // Whether it recorded one.
  static bool recordDivisibility(func::FuncOp func, AssumeOp assume) {
    auto cmp = assume.getCond().getDefiningOp<arith::CmpIOp>();
    if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq || !matchPattern(cmp.getRhs(), m_Zero()))
      return false;
    Operation *rem = cmp.getLhs().getDefiningOp();
    if (!isa_and_nonnull<arith::RemSIOp, arith::RemUIOp>(rem))
      return false;
    auto arg = dyn_cast<BlockArgument>(rem->getOperand(0));
    APInt divisor;
    if (!arg || arg.getOwner() != &func.getBody().front() ||
        !matchPattern(rem->getOperand(1), m_ConstantInt(&divisor)) || !divisor.isStrictlyPositive())
      return false;
    int64_t d = std::min<int64_t>(int64_t(1) << divisor.countr_zero(), int64_t(1) << 30);
    StringAttr name = tesselDialect(func.getContext()).getDivisibilityAttrHelper().getName();
    auto existing = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), name);
    if (d <= 1 || (existing && existing.getInt() >= d))
      return false;
    func.setArgAttr(arg.getArgNumber(), name, IntegerAttr::get(IntegerType::get(func.getContext(), 32), d));
    return true;
  }
};
} // namespace
