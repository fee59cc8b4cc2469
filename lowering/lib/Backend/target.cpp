// The one table of AMDGPU targets tessel supports (DESIGN principle 6).
#include "tessel/lowering/target.hpp"

#include "tessel/core/error.hpp"

#include <array>

namespace tessel {
namespace {

constexpr unsigned kLds64KiB = 64 * 1024;
constexpr unsigned kMaxWorkgroup = 1024;

// isaVersion follows the oclc_isa_version_<gfx>.bc convention: major*1000 +
// minor*100 + stepping, with the hex stepping of gfx90a ('a' = 10) spelled 10.
constexpr std::array<TargetInfo, 4> kTargets = {{
    {"gfx90a", 64, kLds64KiB, kMaxWorkgroup, 9010, "+wavefrontsize64", true, false},
    {"gfx942", 64, kLds64KiB, kMaxWorkgroup, 9402, "+wavefrontsize64", true, false},
    {"gfx950", 64, 160 * 1024, kMaxWorkgroup, 9500, "+wavefrontsize64", true, false},
    {"gfx1100", 32, kLds64KiB, kMaxWorkgroup, 11000, "+wavefrontsize32", false, true},
}};

} // namespace

const TargetInfo *lookupTarget(std::string_view arch) {
  for (const TargetInfo &target : kTargets)
    if (arch == target.arch)
      return &target;
  return nullptr;
}

const TargetInfo &requireTarget(std::string_view arch) {
  if (const TargetInfo *target = lookupTarget(arch))
    return *target;
  std::string message = "unsupported AMDGPU target '" + std::string(arch) +
                        "'; tessel supports: ";
  bool first = true;
  for (const TargetInfo &target : kTargets) {
    message += first ? "" : ", ";
    message += target.arch;
    first = false;
  }
  throw Error(message);
}

std::vector<std::string> supportedTargets() {
  std::vector<std::string> names;
  names.reserve(kTargets.size());
  for (const TargetInfo &target : kTargets)
    names.emplace_back(target.arch);
  return names;
}

} // namespace tessel
