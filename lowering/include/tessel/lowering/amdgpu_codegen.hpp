// AMDGPU code generation for a finished kernel module: optimize, emit the
// object and the assembly, link the .hsaco with lld in process.
#pragma once

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/target.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Module;
}

namespace tessel {

// Sets triple (amdgcn-amd-amdhsa), data layout and code object version on a
// kernel module about to be generated for `target`.
void configureModuleForTarget(llvm::Module &module, const TargetFacts &target);

struct AmdgpuCode {
  std::vector<uint8_t> hsaco; // linked code object (ELF, one kernel descriptor per kernel)
  std::string assembly;       // the same code as text
  CompileTimes times;         // optimize, codegen, assembly and link filled in
};

// `module` is the kernel module both executors start from; it is not
// modified (work happens on a clone). Calls to __ocml_* functions are linked
// from the ROCm device libraries. Throws tessel::Error on failure, including
// when the linked code object still has undefined symbols.
AmdgpuCode generateAmdgpuCode(const llvm::Module &module, const TargetFacts &target);

} // namespace tessel
