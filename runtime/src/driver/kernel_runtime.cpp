// KernelRuntime: the launch path of a typed kernel, with the compiler
// (compileTrace) plugged into KernelCache, which does the work.
#include "tessel/runtime/kernel_runtime.hpp"

#include "tessel/lowering/compile.hpp"
#include "tessel/runtime/kernel_cache.hpp"

namespace tessel::detail {

struct KernelRuntime::Impl {
  KernelCache cache;
};

KernelRuntime::KernelRuntime(std::string kernelName)
    : impl_(std::make_unique<Impl>(
          Impl{KernelCache(std::move(kernelName), &compileTrace, compilerIdentity())})) {}
KernelRuntime::~KernelRuntime() = default;
KernelRuntime::KernelRuntime(KernelRuntime &&) noexcept = default;
KernelRuntime &KernelRuntime::operator=(KernelRuntime &&) noexcept = default;

void KernelRuntime::launch(Device &device, Dim3 grid, const LaunchOptions &options,
                           const KernelKey &key, const void *kernarg, size_t kernargBytes,
                           TraceFn trace, const void *traceContext) {
  impl_->cache.launch(device, grid, options, key, kernarg, kernargBytes, trace, traceContext);
}

const CompiledKernel &KernelRuntime::compile(Device &device, const LaunchOptions &options, const KernelKey &key,
                                             TraceFn trace, const void *traceContext) {
  return impl_->cache.compile(device, options, key, trace, traceContext);
}

const LaunchStats &KernelRuntime::stats() const { return impl_->cache.stats(); }
const CompiledKernel *KernelRuntime::lastKernel() const { return impl_->cache.lastKernel(); }

} // namespace tessel::detail
