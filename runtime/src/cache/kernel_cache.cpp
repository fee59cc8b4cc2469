// The launch path: memory cache -> disk cache -> compile, then load & launch.
#include "tessel/runtime/kernel_cache.hpp"

#include "tessel/core/environment.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tessel::detail {

void KernelKey::push(uint64_t w) {
  if (size >= kCapacity)
    throw Error("a kernel's specialization key has more than " + std::to_string(kCapacity) +
                " words: too many arguments and constants");
  words[size++] = w;
}

bool KernelKey::operator==(const KernelKey &o) const {
  return size == o.size && std::memcmp(words.data(), o.words.data(), size * sizeof(uint64_t)) == 0;
}

uint64_t KernelKey::hash() const {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ size;
  for (uint32_t i = 0; i < size; ++i) {
    h ^= words[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
  }
  return h ^ (h >> 31);
}

namespace {
std::atomic<bool> gDryLaunches{false};
constexpr uint32_t kMaxBlockSize = 1024; // threads in one workgroup, on every AMDGPU target

// A kernel is cached per specialization key and per device.
struct EntryKey {
  KernelKey key;
  const DeviceImpl *device;
  bool operator==(const EntryKey &o) const { return device == o.device && key == o.key; }
};
struct EntryKeyHash {
  size_t operator()(const EntryKey &k) const {
    return k.key.hash() ^ (reinterpret_cast<uintptr_t>(k.device) * 0x9E3779B97F4A7C15ull);
  }
};

} // namespace

struct KernelCache::Entry {
  KernelKey key;
  std::shared_ptr<DeviceImpl> device; // keeps the device alive while its kernel is loaded
  CompiledKernel compiled;
  std::unique_ptr<LoadedKernel> loaded;
};

// The kernel caches whose kernel this thread is tracing, innermost first: a
// kernel body may launch other kernels, but launching a kernel that is being
// traced on this thread would wait forever for its own cache's lock.
struct TracingOnThisThread {
  const void *cache;
  const TracingOnThisThread *outer;
};
thread_local const TracingOnThisThread *tTracing = nullptr;

class TracingScope {
public:
  explicit TracingScope(const void *cache) : node_{cache, tTracing} { tTracing = &node_; }
  ~TracingScope() { tTracing = node_.outer; }
  TracingScope(const TracingScope &) = delete;
  TracingScope &operator=(const TracingScope &) = delete;

private:
  TracingOnThisThread node_;
};

// The rule for grids on every device: each dimension at least 1 (HIP refuses
// 0; launching nothing is not launching; a negative int is named as given),
// at most 2^32 - 1 work-items along x (the dispatch packet's grid size is 32
// bits) and a workgroup count that fits in 64 bits. Error naming the grid
// otherwise.
void checkGrid(const std::string &kernelName, Dim3 grid, uint32_t blockSize) {
  auto text = [&] {
    return "kernel '" + kernelName + "': the grid {" + std::to_string(grid.x) + ", " + std::to_string(grid.y) +
           ", " + std::to_string(grid.z) + "}";
  };
  if (grid.outOfRange())
    throw Error("kernel '" + kernelName + "': " + grid.rangeProblem());
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    throw Error(text() + " has a zero dimension; each of x, y, z must be at least 1");
  if (uint64_t(grid.x) * blockSize > UINT32_MAX)
    throw Error(text() + " of workgroups of " + std::to_string(blockSize) +
                " threads has more than 2^32 - 1 work-items along x");
  uint64_t workgroups;
  if (__builtin_mul_overflow(uint64_t(grid.x) * grid.y, uint64_t(grid.z), &workgroups))
    throw Error(text() + " has more than 2^64 workgroups");
}

void setDryLaunches(bool on) { gDryLaunches.store(on, std::memory_order_relaxed); }
bool dryLaunches() { return gDryLaunches.load(std::memory_order_relaxed); }

bool debugEnabled(const LaunchOptions &options) {
  static const bool fromEnvironment = environmentFlag("TESSEL_DEBUG");
  return options.debug || fromEnvironment;
}

struct KernelCache::Impl {
  std::string kernelName;
  CompileFn compile;
  std::string compilerIdentity;
  DiskCache *disk;
  std::mutex mutex;
  std::vector<std::unique_ptr<Entry>> entries; // never removed: pointers stay valid
  std::unordered_map<EntryKey, Entry *, EntryKeyHash> index;
  Entry *last = nullptr;
  LaunchStats stats;

  Entry &find(Device &device, const LaunchOptions &options, const KernelKey &key, TraceFn trace,
              const void *traceContext);
  Entry &build(Device &device, const LaunchOptions &options, const KernelKey &key, TraceFn trace,
               const void *traceContext);
};

KernelCache::KernelCache(std::string kernelName, CompileFn compile, std::string compilerIdentity,
                         DiskCache *disk)
    : impl_(std::make_unique<Impl>()) {
  impl_->kernelName = std::move(kernelName);
  impl_->compile = compile;
  impl_->compilerIdentity = std::move(compilerIdentity);
  impl_->disk = disk;
}
KernelCache::~KernelCache() = default;
KernelCache::KernelCache(KernelCache &&) noexcept = default;
KernelCache &KernelCache::operator=(KernelCache &&) noexcept = default;

const LaunchStats &KernelCache::stats() const { return impl_->stats; }
const CompiledKernel *KernelCache::lastKernel() const {
  return impl_->last ? &impl_->last->compiled : nullptr;
}

KernelCache::Entry &KernelCache::Impl::find(Device &device, const LaunchOptions &options, const KernelKey &key,
                               TraceFn trace, const void *traceContext) {
  DeviceImpl *dev = &device.impl();
  if (last && last->device.get() == dev && last->key == key) { // the common case: no hashing
    ++stats.memoryHits;
    return *last;
  }
  if (auto it = index.find(EntryKey{key, dev}); it != index.end()) {
    ++stats.memoryHits;
    return *(last = it->second);
  }
  return *(last = &build(device, options, key, trace, traceContext));
}

KernelCache::Entry &KernelCache::Impl::build(Device &device, const LaunchOptions &options, const KernelKey &key,
                                TraceFn trace, const void *traceContext) {
  StageClock clock;
  TraceRequest request = [&] {
    TracingScope tracing(this);
    return trace(traceContext);
  }();
  const double traceMs = clock.lap();
  const std::string arch = device.arch();
  const unsigned codeObjectVersion = device.impl().codeObjectVersion();
  DiskCache &cache = disk ? *disk : DiskCache::process();
  if (options.num_stages < 1 || options.num_stages > 4)
    throw Error("kernel '" + kernelName + "': num_stages must be 1 to 4, not " + std::to_string(options.num_stages));
  // What decides the code: the compile's options, and so the disk key.
  // TESSEL_DIRECT_TO_LDS (docs/user-guide.md): gfx950's staged dot operands
  // loaded straight into LDS always (1), never (0), or unset: where the
  // pipeliner finds the two slots keep 4 waves a SIMD.
  const std::string direct = environmentValue("TESSEL_DIRECT_TO_LDS");
  const CompileOptions compileOptions{.arch = arch,
                                      .numWarps = options.num_warps,
                                      .codeObjectVersion = codeObjectVersion,
                                      .numStages = options.num_stages,
                                      .fastMath = options.fast_math,
                                      .fpFusion = options.fp_fusion,
                                      .debug = debugEnabled(options),
                                      .directToLds = !direct.empty() && direct != "0",
                                      .noDirectToLds = direct == "0",
                                      .wavesPerEu = options.waves_per_eu};
  const CompileOptions &o = compileOptions;
  const std::string diskKey =
      DiskCache::entryKey(request.trace.fingerprint(), request.spec, o.arch, o.numWarps, compilerIdentity,
                          o.codeObjectVersion, o.numStages, o.fastMath, o.fpFusion, o.debug, o.directToLds,
                          o.wavesPerEu, o.noDirectToLds);
  auto entry = std::make_unique<Entry>();
  entry->key = key;
  entry->device = device.shared();
  // A workgroup holds 1 to 1024 threads on every AMDGPU target. A kernel
  // outside that is refused before it is stored: a bad entry in the disk
  // cache would fail every later launch (and run) too.
  auto checkBlockSize = [&](const CompiledKernel &k) {
    if (k.blockSize == 0 || k.blockSize > kMaxBlockSize)
      throw Error("kernel '" + kernelName + "' was compiled for num_warps = " + std::to_string(options.num_warps) +
                  " with a workgroup of " + std::to_string(k.blockSize) + " threads (waves of " +
                  std::to_string(k.waveSize) + "); a workgroup holds 1 to " + std::to_string(kMaxBlockSize) +
                  " threads, so use a smaller num_warps");
  };
  // TESSEL_ALWAYS_COMPILE=1: compile even when the disk cache has the
  // kernel (an entry already there stays as it is); later launches in the
  // process reuse the compiled kernel from memory, as without the flag.
  std::optional<CompiledKernel> cached;
  if (!environmentFlag("TESSEL_ALWAYS_COMPILE"))
    cached = cache.load(diskKey, request.trace.kernelName);
  if (cached) {
    entry->compiled = std::move(*cached);
    ++stats.diskHits;
    checkBlockSize(entry->compiled);
  } else {
    entry->compiled = compile(request.trace, request.spec, compileOptions);
    entry->compiled.times.trace = traceMs;
    ++stats.compiles;
    if (environmentLists("TESSEL_LOG", "compile"))
      std::fprintf(stderr, "tessel: compiled '%s' for %s (num_warps %u) in %.2f ms: %s\n",
                   kernelName.c_str(), arch.c_str(), options.num_warps,
                   entry->compiled.times.total(), describeStages(entry->compiled.times).c_str());
    if (environmentLists("TESSEL_LOG", "compile") && !entry->compiled.times.slowestPasses.empty())
      std::fprintf(stderr, "tessel: slowest passes of '%s': %s\n", kernelName.c_str(),
                   describeSlowestPasses(entry->compiled.times).c_str());
    checkBlockSize(entry->compiled);
    cache.store(diskKey, entry->compiled);
  }
  const CompiledKernel &compiled = entry->compiled;
  // TESSEL_REMARKS=1: each kernel's performance remarks, once per process
  // (compiled now or read from the disk cache).
  if (environmentFlag("TESSEL_REMARKS"))
    std::fputs(describeRemarks(compiled).c_str(), stderr);
  try {
    entry->loaded = device.impl().load(compiled);
  } catch (const Error &e) {
    throw Error("loading kernel '" + kernelName + "' on " + device.name() + ": " + e.what());
  }
  Entry *raw = entry.get();
  entries.push_back(std::move(entry));
  index.emplace(EntryKey{key, &device.impl()}, raw);
  return *raw;
}

void KernelCache::launch(Device &device, Dim3 grid, const LaunchOptions &options,
                         const KernelKey &key, const void *kernarg, size_t kernargBytes,
                         TraceFn trace, const void *traceContext) {
  Entry &entry = find(device, options, key, trace, traceContext, /*launching=*/true);
  const CompiledKernel &compiled = entry.compiled;
  if (kernargBytes != compiled.kernargs.totalBytes)
    throw Error("kernel '" + impl_->kernelName + "': the launch passed " +
                std::to_string(kernargBytes) + " bytes of arguments but the kernel's layout has " +
                std::to_string(compiled.kernargs.totalBytes));
  checkGrid(impl_->kernelName, grid, compiled.blockSize);
  if (gDryLaunches.load(std::memory_order_relaxed))
    return;
  entry.device->launch(*entry.loaded, grid, compiled.blockSize, kernarg, kernargBytes, options.stream);
}

const CompiledKernel &KernelCache::compile(Device &device, const LaunchOptions &options, const KernelKey &key,
                                           TraceFn trace, const void *traceContext) {
  return find(device, options, key, trace, traceContext, /*launching=*/false).compiled;
}

KernelCache::Entry &KernelCache::find(Device &device, const LaunchOptions &options, const KernelKey &key, TraceFn trace,
                         const void *traceContext, bool launching) {
  // A kernel body runs on the host once, while it is traced, not on the GPU:
  // a launch inside it would run once at trace time, whatever the outer
  // kernel's grid, and could not be part of it.
  if (const TracingOnThisThread *t = tTracing) { // null unless inside a trace
    const std::string &outer = static_cast<const Impl *>(t->cache)->kernelName;
    const char *what = launching ? "launched" : "compiled";
    if (t->cache == impl_.get())
      throw Error("kernel " + impl_->kernelName + " was " + what +
                  " while it is being traced: a kernel's body cannot launch the kernel itself");
    throw Error("kernel " + impl_->kernelName + " was " + what + " while kernel " + outer +
                " is being traced: a kernel's body cannot launch kernels (it runs once, at trace time); launch "
                "it from host code, or call its function from the body to make its ops part of " + outer);
  }
  std::lock_guard lock(impl_->mutex);
  if (launching)
    ++impl_->stats.launches;
  return impl_->find(device, options, key, trace, traceContext);
}

} // namespace tessel::detail
