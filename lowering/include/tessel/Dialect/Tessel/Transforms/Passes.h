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

// The pipeline that runs them in order: tessel::buildTesselPipeline
// (lowering/lib/Pipeline/Compile.cpp).

} // namespace mlir::tessel
