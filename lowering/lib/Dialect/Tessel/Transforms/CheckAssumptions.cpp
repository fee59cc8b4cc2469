// Assumptions the call's own arguments make false (see Passes.td).
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCHECKASSUMPTIONS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct CheckAssumptionsPass
    : mlir::tessel::impl::TesselCheckAssumptionsBase<CheckAssumptionsPass> {
  void runOnOperation() override {
    markAllAnalysesPreserved(); // it only reads the IR
    getOperation().walk([&](AssumeOp assume) {
      if (matchPattern(assume.getCond(), m_Zero())) {
        emitUserError(assume) << ("this assumption is false for the arguments of this launch "
                         "(a specialized argument, such as one equal to 1, breaks it)");
        signalPassFailure();
      }
    });
  }
};
} // namespace
