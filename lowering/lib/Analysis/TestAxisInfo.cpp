// Prints the axis analysis as remarks so lit tests can check it.
#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

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
        const AxisInfo &info = analysis.get(op->getResult(0));
        auto list = [](ArrayRef<int64_t> v) {
          std::string s = "[";
          for (size_t i = 0; i < v.size(); ++i)
            s += (i ? ", " : "") + std::to_string(v[i]);
          return s + "]";
        };
        op->emitRemark() << "contiguity = " << list(info.contiguity)
                         << ", divisibility = " << list(info.divisibility)
                         << ", constancy = " << list(info.constancy);
      });
    }
  }
};
} // namespace
