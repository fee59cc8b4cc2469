// The compiler's entry point for the runtime: a trace plus its specialization
// in, every artifact of one kernel out. No MLIR or LLVM types cross this line.
#pragma once

#include "tessel/trace.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

struct CompileOptions {
  std::string arch = "gfx942";
  unsigned numWarps = 4;
  unsigned codeObjectVersion = 5; // AMDGPU code object version (4, 5 or 6)
};

struct CompiledKernel {
  std::string name;           // kernel symbol in the module and the code object
  std::string tileIR;         // tessel dialect after specialization (text)
  std::string llvmIR;         // the kernel module both executors start from
  std::string assembly;       // AMDGPU assembly of the code object
  std::vector<uint8_t> hsaco; // linked code object
  uint32_t ldsBytes = 0;      // planned workgroup memory
  uint32_t blockSize = 0;     // threads per workgroup (numWarps * waveSize)
  uint32_t waveSize = 0;
  KernargLayout kernargs;
};

// Throws tessel::Error (with the user's C++ line where one applies).
CompiledKernel compileTrace(const Trace &trace, const Specialization &spec,
                            const CompileOptions &options);

// Identity of this compiler build, part of every cache key.
const char *compilerIdentity();

} // namespace tessel
