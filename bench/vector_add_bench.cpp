// Vector add: cold compile time, disk-cache hit time in a new process, and
// the host cost of a cached launch. Prints numbers; asserts nothing.
//
//   build/bench/bench-vector-add            (runs all three)
//   build/bench/bench-vector-add --compile-only [runs]  (the cold compile alone, for profiling)
//
// Aims (issue 2): cold compile < 100 ms, disk hit < 10 ms, warm launch < 1 us.
#include <tessel/tessel.hpp>

#include "cold_compile.hpp"
#include "vector_add_kernel.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/runtime/disk_cache.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace tessel;
using Clock = std::chrono::steady_clock;

namespace {

using bench::vector_add;
constexpr int kN = bench::kVectorN, kBlock = bench::kVectorBlock;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Trace to .hsaco, no cache involved.
void coldCompile(Device &dev, int runs = 10) {
  auto add = jit<vector_add>();
  auto x = dev.alloc<float>(kN), y = dev.alloc<float>(kN), out = dev.alloc<float>(kN);
  bench::coldCompile("vector add", dev.arch(), 4, runs, [&] { return add.trace(x, y, out, kN, kBlock); });
}

// In a new process: the disk-cache lookup alone, and the whole first launch
// (lookup + loading the kernel on the device; the emulator JIT-compiles the
// module there, a GPU would load the .hsaco).
int diskHitChild() {
  Device dev = Device::open();
  auto add = jit<vector_add>();
  auto x = dev.alloc<float>(kN), y = dev.alloc<float>(kN), out = dev.alloc<float>(kN);
  detail::TraceRequest request = add.trace(x, y, out, kN, kBlock);
  std::string key = DiskCache::entryKey(request.trace.fingerprint(), request.spec, dev.arch(), 4,
                                        compilerIdentity());
  auto t0 = Clock::now();
  std::optional<CompiledKernel> hit = DiskCache::process().load(key);
  double lookup = ms(Clock::now() - t0);
  detail::setDryLaunches(false);
  auto t1 = Clock::now();
  add.launch(dev, {cdiv(kN, kBlock)}, {.num_warps = 4}, x, y, out, kN, kBlock);
  double firstLaunch = ms(Clock::now() - t1);
  const LaunchStats stats = add.stats();
  std::printf("disk-cache hit in a new process: entry read and verified in %.2f ms (%s); "
              "first launch incl. loading on %s: %.2f ms (compiles: %llu, disk hits: %llu)\n",
              lookup, hit ? "hit" : "MISS", dev.name().c_str(), firstLaunch,
              (unsigned long long)stats.compiles, (unsigned long long)stats.diskHits);
  return hit && stats.compiles == 0 ? 0 : 1;
}

void diskHit(const char *self) {
  // Make sure the entry exists, then measure in a fresh process.
  {
    Device dev = Device::open();
    auto add = jit<vector_add>();
    auto x = dev.alloc<float>(kN), y = dev.alloc<float>(kN), out = dev.alloc<float>(kN);
    add.launch(dev, {cdiv(kN, kBlock)}, {.num_warps = 4}, x, y, out, kN, kBlock);
  }
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl(self, self, "--disk-hit-child", (char *)nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
}

// Host work from the call to the device's launch entry point: dry launches
// do everything but the device's launch.
void warmLaunch(Device &dev) {
  auto add = jit<vector_add>();
  auto x = dev.alloc<float>(kN), y = dev.alloc<float>(kN), out = dev.alloc<float>(kN);
  add.launch(dev, {cdiv(kN, kBlock)}, {.num_warps = 4}, x, y, out, kN, kBlock);
  detail::setDryLaunches(true);
  const int iters = 1000000;
  std::vector<double> perCall;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i)
      add.launch(dev, {cdiv(kN, kBlock)}, {.num_warps = 4}, x, y, out, kN, kBlock);
    perCall.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iters);
  }
  detail::setDryLaunches(false);
  std::printf("warm launch host overhead: median %.1f ns per launch (%d launches x 5)\n",
              bench::medianOf(perCall), iters);
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "--disk-hit-child") == 0)
    return diskHitChild();
  if (!std::getenv("TESSEL_CACHE_DIR")) {
    // A private cache so the numbers do not depend on what is already cached.
    std::string dir = std::filesystem::temp_directory_path() / ("tessel-bench-" + std::to_string(getpid()));
    setenv("TESSEL_CACHE_DIR", dir.c_str(), 1);
  }
  Device dev = Device::open();
  if (argc > 1 && std::strcmp(argv[1], "--compile-only") == 0) {
    coldCompile(dev, argc > 2 ? std::max(1, std::atoi(argv[2])) : 10);
    std::filesystem::remove_all(std::getenv("TESSEL_CACHE_DIR"));
    return 0;
  }
  coldCompile(dev);
  diskHit(argv[0]);
  warmLaunch(dev);
  std::filesystem::remove_all(std::getenv("TESSEL_CACHE_DIR"));
  return 0;
}
