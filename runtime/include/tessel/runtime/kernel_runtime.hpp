// The bridge from a typed kernel object (dsl/, templates) to compilation and
// launch (runtime/). The template side computes the key and the kernarg bytes
// from the call's arguments; this side finds or builds the kernel and
// launches it. A cached launch must not allocate and must not trace.
#pragma once

#include "tessel/core/specialization.hpp"
#include "tessel/core/trace.hpp"
#include "tessel/runtime/device.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace tessel {
struct CompiledKernel;
namespace detail {

// The in-memory specialization key: per runtime argument its specialization
// bits, then the values of the trace-time constants, then num_warps.
// Fixed capacity so building one never allocates.
struct KernelKey {
  static constexpr size_t kCapacity = 48;
  std::array<uint64_t, kCapacity> words{};
  uint32_t size = 0;
  void push(uint64_t w); // throws tessel::Error past kCapacity
  bool operator==(const KernelKey &o) const;
  uint64_t hash() const;
};

// What the runtime needs only on a miss: the trace for these constants and
// what the call's arguments let the compiler assume.
struct TraceRequest {
  Trace trace;
  Specialization spec;
};
using TraceFn = TraceRequest (*)(const void *context);

struct LaunchStats {
  uint64_t launches = 0, memoryHits = 0, diskHits = 0, compiles = 0;
};

// For benchmarks of tessel's own host cost: while on, every launch does all
// its work (key lookup, checks, compile on a miss) except the final
// DeviceImpl::launch, so a loop of cached launches times the host path alone.
// Process-wide; off by default; reading it costs one relaxed atomic load.
void setDryLaunches(bool on);
bool dryLaunches();

// Whether a launch compiles device_assert in: LaunchOptions::debug, or
// TESSEL_DEBUG=1 in the environment (read once per process).
bool debugEnabled(const LaunchOptions &options);

class KernelRuntime {
public:
  explicit KernelRuntime(std::string kernelName);
  ~KernelRuntime();
  KernelRuntime(KernelRuntime &&) noexcept;
  KernelRuntime &operator=(KernelRuntime &&) noexcept;

  // Finds (memory, then disk cache) or compiles the kernel for `key` on
  // `device`'s target, then launches it over `grid` workgroups of
  // options.num_warps waves. `kernarg` holds the runtime arguments laid out
  // as kernargLayout() says.
  void launch(Device &device, Dim3 grid, const LaunchOptions &options,
              const KernelKey &key, const void *kernarg, size_t kernargBytes,
              TraceFn trace, const void *traceContext);

  // The same lookup and compile, without a launch: the kernel `launch`
  // would run for these arguments (Kernel::warmup).
  const CompiledKernel &compile(Device &device, const LaunchOptions &options, const KernelKey &key,
                                TraceFn trace, const void *traceContext);

  const LaunchStats &stats() const;
  // The artifacts of the most recently launched kernel (for tests, tools).
  const CompiledKernel *lastKernel() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace detail

// Counters of one kernel object's launches (Kernel::stats()).
using LaunchStats = detail::LaunchStats;

} // namespace tessel
