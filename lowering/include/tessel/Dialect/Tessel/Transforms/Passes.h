// tessel's passes (see Passes.td for what each does).
#pragma once

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "tessel/Dialect/Tessel/IR/Dialect.h"

namespace mlir::tessel {

#define GEN_PASS_DECL
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"

// The compiler's pass pipeline in its two halves (compileTrace prints the tile
// IR between them): specialize, simplify, assign layouts, plan LDS; then
// distribute over threads into the LLVM dialect.
void addTileLevelPasses(OpPassManager &pm);
void addDistributionPasses(OpPassManager &pm);
// Registers both as one pipeline, `tessel-lower-to-llvm`, for tessel-opt.
void registerTesselPipelines();

} // namespace mlir::tessel
