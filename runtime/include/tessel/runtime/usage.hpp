// What a compiled kernel uses of its target, read from its code object:
// registers, spills, LDS, and how many of its waves one SIMD holds (Triton's
// compiled kernel's n_regs, n_spills and shared). Kernel::warmup gives the
// kernel a launch would run without running it.
#pragma once

#include "tessel/core/compiled_kernel.hpp"

#include <string>

namespace tessel {

struct KernelUsage {
  unsigned vgprs = 0;      // per lane: VGPRs, and on gfx90a+ the AGPRs with them (what occupancy counts)
  unsigned agprs = 0;      // per lane: accumulation registers (gfx90a+; part of vgprs)
  unsigned sgprs = 0;      // per wave
  unsigned spills = 0;     // registers spilled to scratch memory (VGPRs and SGPRs)
  uint32_t scratchBytes = 0; // scratch memory per lane (tessel allocates none but spills)
  uint32_t ldsBytes = 0;     // workgroup memory (LDS)
  // Waves of this kernel resident per SIMD (whole workgroups spread over
  // a compute unit's SIMDs), and what limits them: "wave slots", "VGPRs",
  // "SGPRs", "barriers" or "LDS".
  double wavesPerSimd = 0;
  std::string limiter;
};

// Throws tessel::Error when the kernel's target is not one tessel supports
// or its code object has no metadata for it.
KernelUsage usageOf(const CompiledKernel &kernel);

} // namespace tessel
