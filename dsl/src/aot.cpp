// The registry of TESSEL_AOT_KERNEL kernels (filled at static initialization).
#include "tessel/aot.hpp"

namespace tessel::aot {

namespace {
std::vector<KernelEntry> &registry() {
  static std::vector<KernelEntry> kernels; // a function-local static: safe from other initializers
  return kernels;
}
} // namespace

void registerKernel(KernelEntry entry) { registry().push_back(std::move(entry)); }

const std::vector<KernelEntry> &registeredKernels() { return registry(); }

} // namespace tessel::aot
