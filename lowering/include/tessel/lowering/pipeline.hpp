// The compiler's stages as functions over MLIR (internal to lowering/; the
// runtime uses compile.hpp).
#pragma once

#include "tessel/lowering/compile.hpp"
#include "tessel/lowering/target.hpp"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include <memory>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tessel {

// A context with every dialect the pipeline uses loaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

// Trace -> tessel dialect: one func.func with the specialization recorded on
// its arguments and the target on the module. Throws tessel::Error.
mlir::OwningOpRef<mlir::ModuleOp> importTrace(mlir::MLIRContext &ctx, const Trace &trace,
                                              const Specialization &spec,
                                              const TargetFacts &target, unsigned numWarps);

// Every pass from tile-level IR to per-thread LLVM dialect, in order.
void buildTesselPipeline(mlir::OpPassManager &pm);
// Registers it as `tessel-lower-to-llvm` (for tessel-opt).
void registerTesselPipelines();

} // namespace tessel
