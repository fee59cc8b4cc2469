// Facts about the AMDGPU targets tessel compiles for, in one table
// (DESIGN principle 6: targets are data).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessel {

struct TargetInfo {
  const char *arch;            // "gfx942"
  unsigned waveSize;           // 64 (gfx9) or 32 (gfx11)
  unsigned ldsBytes;           // workgroup memory per workgroup
  unsigned maxWorkgroupSize;   // threads per workgroup
  unsigned isaVersion;         // e.g. 9402, for __oclc_ISA_version
  const char *features;        // LLVM target features string ("+wavefrontsize64", ...)
  bool hasMfma;                // matrix cores, gfx9 style
  bool hasWmma;                // matrix cores, gfx11 style
};

// nullptr when `arch` is not one tessel supports.
const TargetInfo *lookupTarget(std::string_view arch);
// Throws tessel::Error listing the supported targets when `arch` is unknown.
const TargetInfo &requireTarget(std::string_view arch);
std::vector<std::string> supportedTargets();

} // namespace tessel
