// Softmax and layer norm (tessel::kernels): cold compile time, and run time on
// the tutorials' shapes. Prints numbers; asserts nothing.
//
//   build/bench/bench-softmax                 (compile times and emulator run times)
//   build/bench/bench-softmax --compile-only [runs]  (the cold compiles alone, 20 runs each unless told)
//
// Run times are of the *CPU emulator* unless a HIP GPU is in use (the device
// line says which): they measure tessel's emulator, not a GPU, and are no
// guide to GPU performance.
#include <tessel/kernels/layer_norm.hpp>
#include <tessel/kernels/softmax.hpp>

#include "cold_compile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace tessel;
using Clock = std::chrono::steady_clock;

namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::vector<float> randomFloats(size_t n) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-4.f, 4.f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

// The first launch compiles (or loads from the disk cache); then the median
// of a few timed launches, each followed by a synchronize.
template <class LaunchFn>
void runTime(const char *what, Device &dev, double bytesMoved, LaunchFn launchOnce) {
  launchOnce();
  dev.synchronize();
  std::vector<double> times;
  for (int i = 0; i < 3; ++i) {
    auto t0 = Clock::now();
    launchOnce();
    dev.synchronize();
    times.push_back(ms(Clock::now() - t0));
  }
  double t = bench::medianOf(times);
  std::printf("%s on %s: median %.1f ms over %zu runs", what, dev.name().c_str(), t, times.size());
  if (dev.isEmulator())
    std::printf(" (CPU emulator, not a GPU)\n");
  else
    std::printf(" (%.1f GB/s of memory traffic)\n", bytesMoved / (t * 1e-3) / 1e9);
}

} // namespace

int main(int argc, char **argv) {
  // --compile-only [runs]: the cold compiles alone, 20 runs each unless
  // told (for profiling).
  const bool compileOnly = argc > 1 && std::string(argv[1]) == "--compile-only";
  const int runs = !compileOnly ? 5 : argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  if (!std::getenv("TESSEL_CACHE_DIR")) {
    std::string dir = std::filesystem::temp_directory_path() / ("tessel-bench-" + std::to_string(getpid()));
    setenv("TESSEL_CACHE_DIR", dir.c_str(), 1);
  }
  Device dev = Device::open();
  if (dev.isEmulator())
    std::printf("note: run times below are tessel's CPU emulator executing the kernel module, not a GPU\n");

  // Softmax, tutorial 02's shape.
  {
    const int M = 1823, N = 781;
    kernels::RowConfig cfg = kernels::rowConfig("softmax", N, dev.waveSize());
    auto in = dev.upload(randomFloats(size_t(M) * N));
    auto out = dev.alloc<float>(size_t(M) * N);
    bench::coldCompile("softmax f32 (N = 781)", dev.arch(), cfg.num_warps, runs, [&] {
      return kernels::softmaxKernel<float>().trace(in, out, M, N, N, N, cfg.rows, cfg.block, M % cfg.rows == 0,
                                                   N == cfg.block);
    });
    if (!compileOnly)
      runTime("softmax f32 1823 x 781", dev, 2.0 * M * N * sizeof(float),
              [&] { kernels::softmax(dev, in, out, M, N, N, N); });
  }
  // Softmax of rows longer than a block: the looped kernel (two passes).
  {
    const int M = 4, N = 100000;
    kernels::RowConfig cfg = kernels::rowConfig("softmax", N, dev.waveSize());
    auto in = dev.upload(randomFloats(size_t(M) * N));
    auto out = dev.alloc<float>(size_t(M) * N);
    bench::coldCompile("softmax f32, looped (N = 100000)", dev.arch(), cfg.num_warps, runs, [&] {
      return kernels::softmaxLongKernel<float>().trace(in, out, N, N, N, cfg.block);
    });
    if (!compileOnly)
      runTime("softmax f32 4 x 100000 (looped)", dev, 3.0 * M * N * sizeof(float),
              [&] { kernels::softmax(dev, in, out, M, N, N, N); });
  }
  // Layer norm, tutorial 05's shape.
  {
    const int M = 1151, N = 8192;
    kernels::RowConfig cfg = kernels::rowConfig("layer_norm", N, dev.waveSize());
    auto x = dev.upload(randomFloats(size_t(M) * N)), w = dev.upload(randomFloats(N)),
         b = dev.upload(randomFloats(N));
    auto y = dev.alloc<float>(size_t(M) * N);
    auto mean = dev.alloc<float>(M), rstd = dev.alloc<float>(M);
    bench::coldCompile("layer norm f32 (N = 8192)", dev.arch(), cfg.num_warps, runs, [&] {
      return kernels::layerNormKernel<float>().trace(x, y, w, b, mean, rstd, M, N, N, N, 1e-5f, cfg.rows,
                                                     cfg.block, M % cfg.rows == 0, N == cfg.block);
    });
    if (!compileOnly)
      runTime("layer norm f32 1151 x 8192", dev, 2.0 * M * N * sizeof(float),
              [&] { kernels::layer_norm(dev, x, y, w, b, mean, rstd, M, N, N, N); });
  }
  // Layer norm of rows longer than a block: the looped kernel (three passes).
  {
    const int M = 64, N = 65536;
    kernels::RowConfig cfg = kernels::rowConfig("layer_norm", N, dev.waveSize());
    auto x = dev.upload(randomFloats(size_t(M) * N)), w = dev.upload(randomFloats(N)),
         b = dev.upload(randomFloats(N));
    auto y = dev.alloc<float>(size_t(M) * N);
    auto mean = dev.alloc<float>(M), rstd = dev.alloc<float>(M);
    bench::coldCompile("layer norm f32, looped (N = 65536)", dev.arch(), cfg.num_warps, runs, [&] {
      return kernels::layerNormLongKernel<float>().trace(x, y, w, b, mean, rstd, N, N, N, 1e-5f, cfg.block);
    });
    if (!compileOnly)
      runTime("layer norm f32 64 x 65536 (looped)", dev, 4.0 * M * N * sizeof(float),
              [&] { kernels::layer_norm(dev, x, y, w, b, mean, rstd, M, N, N, N); });
  }
  std::filesystem::remove_all(std::getenv("TESSEL_CACHE_DIR"));
  return 0;
}
