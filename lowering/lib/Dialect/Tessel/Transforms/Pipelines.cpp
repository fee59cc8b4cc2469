// The pass pipeline, shared by compileTrace and tessel-opt.
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::tessel::addTileLevelPasses(OpPassManager &pm) {
  pm.addPass(createTesselSpecialize());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTesselCheckAssumptions());
  pm.addPass(createTesselAssignLayouts());
  pm.addPass(createTesselPlanLds());
}

void mlir::tessel::addDistributionPasses(OpPassManager &pm) {
  pm.addPass(createTesselConvertToLLVM());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::tessel::registerTesselPipelines() {
  PassPipelineRegistration<>("tessel-lower-to-llvm",
                             "Everything from tile-level IR to per-thread LLVM dialect",
                             [](OpPassManager &pm) {
                               addTileLevelPasses(pm);
                               addDistributionPasses(pm);
                             });
}
