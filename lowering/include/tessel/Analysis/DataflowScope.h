// Where tessel's dataflow analyses (AxisInfo, KernelRanges) run, and how.
#pragma once

#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tessel {

// The op a solver runs over for `op`: a module's kernel function when it is
// the module's one op with a body (beside it at most globals, such as the
// LDS array), else `op` itself. Run over a module, MLIR's dead code analysis
// walks every attribute of every op for symbol references
// (SymbolTable::getSymbolUses: which callables have callers it cannot see),
// though the kernel is public and its callers unknown either way. Tile IR
// has no calls.
inline Operation *dataflowScope(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op;
  Operation *kernel = nullptr;
  for (Operation &child : *module.getBody()) {
    if (llvm::all_of(child.getRegions(), [](Region &region) { return region.empty(); }))
      continue; // nothing to analyze: a global (an LLVM global's initializer region is empty)
    if (kernel || !isa<func::FuncOp>(child))
      return op;
    kernel = &child;
  }
  return kernel ? kernel : op;
}

// Not interprocedural: a kernel's arguments are what its caller passes
// (their entry states: the assumptions the specialization made), whatever
// op the solver runs over.
inline DataFlowConfig dataflowConfig() { return DataFlowConfig().setInterprocedural(false); }

} // namespace mlir::tessel
