#include "tessel/runtime/usage.hpp"

#include "tessel/core/error.hpp"
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/target.hpp"

namespace tessel {

KernelUsage usageOf(const CompiledKernel &kernel) {
  const TargetFacts &target = requireTarget(kernel.arch);
  const KernelResources r = kernelResources(kernel.hsaco, kernel.name);
  if (r.vgprs == 0 && r.sgprs == 0)
    throw Error("kernel '" + kernel.name + "' (" + kernel.arch +
                "): its code object has no register counts for it (no metadata note)");
  const Occupancy o = occupancyOf(target, r, kernel.blockSize, kernel.ldsBytes);
  KernelUsage out;
  out.vgprs = r.vgprs;
  out.agprs = r.agprs;
  out.sgprs = r.sgprs;
  out.spills = r.vgprSpills + r.sgprSpills;
  out.scratchBytes = r.privateSegmentBytes;
  out.ldsBytes = kernel.ldsBytes;
  out.wavesPerSimd = o.wavesPerSimd;
  out.limiter = o.limiter;
  return out;
}

} // namespace tessel
