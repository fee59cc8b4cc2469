// Prints the axis analysis as remarks so lit tests can check it.
#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELTESTAXISINFO
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TestAxisInfoPass : mlir::tessel::impl::TesselTestAxisInfoBase<TestAxisInfoPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      AxisInfoAnalysis analysis(func);
      func.walk([&](Operation *op) {
        if (op->getNumResults() != 1 || !isa<RankedTensorType>(op->getResult(0).getType()))
          return;
        std::string text;
        llvm::raw_string_ostream os(text);
        analysis.get(op->getResult(0)).print(os);
        op->emitRemark() << text;
      });
    }
  }
};
} // namespace
