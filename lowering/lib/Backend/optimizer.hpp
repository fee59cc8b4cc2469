// LLVM's O3 pipeline over a kernel module (optimizer.cpp).
#pragma once

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tessel {

// Runs clang's O3 module pipeline for `machine` over `module` (linked and
// internalized), less the passes that act only on what our kernel modules
// never hold, with SLP only where the module computes on narrow values.
void optimizeKernel(llvm::Module &module, llvm::TargetMachine &machine);

} // namespace tessel
