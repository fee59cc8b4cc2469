// Where tessel's dataflow analyses (AxisInfo, KernelRanges) run, and how.
#pragma once

#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tessel {

// The op a solver runs over for `op`: a module's kernel function when the
// module holds one function and nothing else, else `op` itself. Run over a
// module, MLIR's dead code analysis walks every attribute of every op for
// symbol references (SymbolTable::getSymbolUses: which callables have
// callers it cannot see), a twentieth of a small kernel's passes, though the
// kernel is public and its callers unknown either way. Tile IR has no calls.
inline Operation *dataflowScope(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op;
  Block *body = module.getBody();
  if (body->empty() || std::next(body->begin()) != body->end())
    return op;
  auto func = dyn_cast<func::FuncOp>(body->front());
  return func ? func.getOperation() : op;
}

// Not interprocedural: a kernel's arguments are what its caller passes
// (their entry states: the assumptions the specialization made), whatever
// op the solver runs over.
inline DataFlowConfig dataflowConfig() { return DataFlowConfig().setInterprocedural(false); }

} // namespace mlir::tessel
