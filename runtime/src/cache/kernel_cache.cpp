// The launch path: memory cache -> disk cache -> compile, then load & launch.
#include "tessel/runtime/kernel_cache.hpp"

#include <atomic>
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

struct Entry {
  KernelKey key;
  std::shared_ptr<DeviceImpl> device; // keeps the device alive while its kernel is loaded
  CompiledKernel compiled;
  std::unique_ptr<LoadedKernel> loaded;
};
} // namespace

void setDryLaunches(bool on) { gDryLaunches.store(on, std::memory_order_relaxed); }
bool dryLaunches() { return gDryLaunches.load(std::memory_order_relaxed); }

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

Entry &KernelCache::Impl::find(Device &device, const LaunchOptions &options, const KernelKey &key,
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

Entry &KernelCache::Impl::build(Device &device, const LaunchOptions &options, const KernelKey &key,
                                TraceFn trace, const void *traceContext) {
  TraceRequest request = trace(traceContext);
  const std::string arch = device.arch();
  const unsigned codeObjectVersion = device.impl().codeObjectVersion();
  DiskCache &cache = disk ? *disk : DiskCache::process();
  const std::string diskKey = DiskCache::entryKey(request.trace.fingerprint(), request.spec, arch,
                                                  options.num_warps, compilerIdentity,
                                                  codeObjectVersion);
  auto entry = std::make_unique<Entry>();
  entry->key = key;
  entry->device = device.shared();
  if (std::optional<CompiledKernel> cached = cache.load(diskKey)) {
    entry->compiled = std::move(*cached);
    ++stats.diskHits;
  } else {
    entry->compiled = compile(request.trace, request.spec, CompileOptions{arch, options.num_warps, codeObjectVersion});
    ++stats.compiles;
    cache.store(diskKey, entry->compiled);
  }
  const CompiledKernel &compiled = entry->compiled;
  if (compiled.blockSize == 0)
    throw Error("kernel '" + kernelName + "' was compiled without a workgroup size");
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
  Entry *entry;
  {
    std::lock_guard lock(impl_->mutex);
    ++impl_->stats.launches;
    entry = &impl_->find(device, options, key, trace, traceContext);
  }
  const CompiledKernel &compiled = entry->compiled;
  if (kernargBytes != compiled.kernargs.totalBytes)
    throw Error("kernel '" + impl_->kernelName + "': the launch passed " +
                std::to_string(kernargBytes) + " bytes of arguments but the kernel's layout has " +
                std::to_string(compiled.kernargs.totalBytes));
  if (gDryLaunches.load(std::memory_order_relaxed))
    return;
  entry->device->launch(*entry->loaded, grid, compiled.blockSize, kernarg, kernargBytes);
}

} // namespace tessel::detail
