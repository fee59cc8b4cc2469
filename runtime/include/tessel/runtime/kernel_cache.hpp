// The launch path with the compiler plugged in as a function: KernelRuntime
// (tessel_runtime) passes compileTrace; tests pass a stand-in. Lives in
// tessel_devices so it can be tested without the compiler.
#pragma once

#include "tessel/lowering/compile.hpp"
#include "tessel/runtime/disk_cache.hpp"
#include "tessel/runtime/kernel_runtime.hpp"

#include <memory>
#include <string>

namespace tessel::detail {

using CompileFn = CompiledKernel (*)(const Trace &trace, const Specialization &spec,
                                     const CompileOptions &options);

class KernelCache {
public:
  // `disk` null: the process-wide DiskCache::process().
  KernelCache(std::string kernelName, CompileFn compile, std::string compilerIdentity,
              DiskCache *disk = nullptr);
  ~KernelCache();
  KernelCache(KernelCache &&) noexcept;
  KernelCache &operator=(KernelCache &&) noexcept;

  // As KernelRuntime::launch. A memory hit compares the key with the last
  // launch's (else one hash lookup), checks kernargBytes, then launches:
  // no allocation, no tracing, no hashing of IR.
  void launch(Device &device, Dim3 grid, const LaunchOptions &options, const KernelKey &key,
              const void *kernarg, size_t kernargBytes, TraceFn trace, const void *traceContext);
  // As KernelRuntime::compile: launch's lookup and compile, no launch.
  const CompiledKernel &compile(Device &device, const LaunchOptions &options, const KernelKey &key,
                                TraceFn trace, const void *traceContext);

  const LaunchStats &stats() const;
  const CompiledKernel *lastKernel() const;

private:
  struct Impl;
  struct Entry;
  Entry &find(Device &device, const LaunchOptions &options, const KernelKey &key, TraceFn trace,
              const void *traceContext, bool launching);
  std::unique_ptr<Impl> impl_;
};

} // namespace tessel::detail
