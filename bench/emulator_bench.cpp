// The emulator's speed against plain host code (issue 35): the library's
// softmax 1823 x 781 f32 and layer norm 1151 x 8192 f32, each next to a
// straightforward single-threaded host loop over the same data, and matmul
// 512^3 f16 (f32 accumulation) with the library's default configuration.
// Each time is the median of 3 runs after a first (compiling) one, in one
// process. Prints numbers; asserts nothing.
//
//   build/bench/bench-emulator [softmax|layernorm|matmul]...   (default: all)
#include <tessel/kernels/layer_norm.hpp>
#include <tessel/kernels/matmul.hpp>
#include <tessel/kernels/softmax.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
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

std::vector<float> randomFloats(size_t n, float lo = -4.f, float hi = 4.f) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

template <class F> double medianMs(F &&f, int runs = 3) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Keeps the host loops from being optimized away.
volatile float gSink;

void report(const char *what, double emulatorMs, double hostMs) {
  if (hostMs > 0)
    std::printf("%-28s emulator %9.1f ms   host %7.1f ms   ratio %6.1fx\n", what, emulatorMs, hostMs,
                emulatorMs / hostMs);
  else
    std::printf("%-28s emulator %9.1f ms\n", what, emulatorMs);
  std::fflush(stdout);
}

void softmaxCase(Device &dev) {
  const int M = 1823, N = 781;
  std::vector<float> x = randomFloats(size_t(M) * N), y(x.size());
  auto in = dev.upload(x);
  auto out = dev.alloc<float>(x.size());
  auto launch = [&] {
    kernels::softmax(dev, in, out, M, N, N, N);
    dev.synchronize();
  };
  launch();
  double emu = medianMs(launch);
  double host = medianMs([&] {
    for (int r = 0; r < M; ++r) {
      const float *row = &x[size_t(r) * N];
      float *o = &y[size_t(r) * N];
      float m = -INFINITY;
      for (int j = 0; j < N; ++j)
        m = std::max(m, row[j]);
      float s = 0;
      for (int j = 0; j < N; ++j)
        s += o[j] = std::exp(row[j] - m);
      for (int j = 0; j < N; ++j)
        o[j] /= s;
    }
    gSink = y[size_t(M / 2) * N];
  });
  report("softmax f32 1823 x 781", emu, host);
}

void layerNormCase(Device &dev) {
  const int M = 1151, N = 8192;
  std::vector<float> x = randomFloats(size_t(M) * N), w = randomFloats(N), b = randomFloats(N), y(x.size());
  std::vector<float> hm(M), hr(M);
  auto dx = dev.upload(x), dw = dev.upload(w), db = dev.upload(b);
  auto dy = dev.alloc<float>(x.size());
  auto mean = dev.alloc<float>(M), rstd = dev.alloc<float>(M);
  auto launch = [&] {
    kernels::layer_norm(dev, dx, dy, dw, db, mean, rstd, M, N, N, N);
    dev.synchronize();
  };
  launch();
  double emu = medianMs(launch);
  double host = medianMs([&] {
    for (int r = 0; r < M; ++r) {
      const float *row = &x[size_t(r) * N];
      float *o = &y[size_t(r) * N];
      float s = 0;
      for (int j = 0; j < N; ++j)
        s += row[j];
      const float mu = s / float(N);
      float v = 0;
      for (int j = 0; j < N; ++j)
        v += (row[j] - mu) * (row[j] - mu);
      const float rs = 1.0f / std::sqrt(v / float(N) + 1e-5f);
      for (int j = 0; j < N; ++j)
        o[j] = (row[j] - mu) * rs * w[size_t(j)] + b[size_t(j)];
      hm[size_t(r)] = mu;
      hr[size_t(r)] = rs;
    }
    gSink = y[size_t(M / 2) * N] + hm[1] + hr[1];
  });
  report("layer norm f32 1151 x 8192", emu, host);
}

void matmulCase(Device &dev) {
  const int M = 512, N = 512, K = 512;
  std::vector<float> fa = randomFloats(size_t(M) * K, -1, 1), fb = randomFloats(size_t(K) * N, -1, 1);
  std::vector<half> ha(fa.begin(), fa.end()), hb(fb.begin(), fb.end());
  auto a = dev.upload(ha), b = dev.upload(hb);
  auto c = dev.alloc<half>(size_t(M) * N);
  auto launch = [&] {
    kernels::matmul(dev, a, b, c, {.M = M, .N = N, .K = K});
    dev.synchronize();
  };
  launch();
  report("matmul f16 512^3", medianMs(launch), 0);
}

} // namespace

int main(int argc, char **argv) {
  const bool ownCache = !std::getenv("TESSEL_CACHE_DIR");
  if (ownCache) {
    std::string dir = std::filesystem::temp_directory_path() / ("tessel-bench-" + std::to_string(getpid()));
    setenv("TESSEL_CACHE_DIR", dir.c_str(), 1);
  }
  Device dev = Device::open();
  std::printf("device: %s\n", dev.name().c_str());
  auto wanted = [&](const char *name) {
    if (argc < 2)
      return true;
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]) == name)
        return true;
    return false;
  };
  if (wanted("softmax"))
    softmaxCase(dev);
  if (wanted("layernorm"))
    layerNormCase(dev);
  if (wanted("matmul"))
    matmulCase(dev);
  if (ownCache)
    std::filesystem::remove_all(std::getenv("TESSEL_CACHE_DIR"));
  return 0;
}
