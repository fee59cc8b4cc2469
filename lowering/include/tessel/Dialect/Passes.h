// tessel's passes (see Passes.td for what each does).
#pragma once

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Pass/Pass.h"
#include "tessel/Dialect/TesselDialect.h"

namespace mlir::tessel {

#define GEN_PASS_DECL
#include "tessel/Dialect/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Dialect/Passes.h.inc"

} // namespace mlir::tessel
