// The compiler's entry point for the runtime: a trace plus its specialization
// in, every artifact of one kernel out. No MLIR or LLVM types cross this line.
#pragma once

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/core/specialization.hpp"
#include "tessel/core/trace.hpp"

#include <string>

namespace tessel {

struct CompileOptions {
  std::string arch = "gfx942";
  unsigned numWarps = 4;
  unsigned codeObjectVersion = 5; // AMDGPU code object version (4, 5 or 6)
  unsigned numStages = 1;         // software pipelining of dot operand loads (1: none)
  bool fastMath = false;          // LaunchOptions::fast_math (tessel-fast-math)
  bool fpFusion = false;          // LaunchOptions::fp_fusion (tessel-fuse-fma)
  bool debug = false;             // LaunchOptions::debug: device_assert checked (else dropped)
  bool directToLds = false;       // TESSEL_DIRECT_TO_LDS=1: gfx950 staged loads straight into LDS always
  bool noDirectToLds = false;     // TESSEL_DIRECT_TO_LDS=0: never (neither: where it keeps 4 waves a SIMD)
  unsigned wavesPerEu = 0;        // LaunchOptions::waves_per_eu ("amdgpu-waves-per-eu"; 0: none)
};

// Throws tessel::Error (with the user's C++ line where one applies).
CompiledKernel compileTrace(const Trace &trace, const Specialization &spec,
                            const CompileOptions &options);

// Identity of this compiler build, part of every cache key.
const char *compilerIdentity();

} // namespace tessel
