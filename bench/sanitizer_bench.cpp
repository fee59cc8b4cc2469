// What the emulator's sanitizer costs: the same launches with
// TESSEL_SANITIZE=off, memory (the default) and races, and the ratio to off.
// The mode is read when a kernel is loaded, so each mode runs in a child
// process (this program, with --one). Prints numbers; asserts nothing.
//
//   build/bench/bench-sanitizer
#include <tessel/kernels/layer_norm.hpp>
#include <tessel/kernels/matmul.hpp>
#include <tessel/kernels/softmax.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace tessel;
using Clock = std::chrono::steady_clock;

namespace {

void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n) {
  auto offs = program_id(0) * 1024 + arange(0, 1024);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

std::vector<float> randomFloats(size_t n) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-4.f, 4.f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

// Median of 3 timed launches after a first one that compiles and loads.
template <class F> double timed(F &&launch) {
  launch();
  std::vector<double> t;
  for (int i = 0; i < 3; ++i) {
    auto t0 = Clock::now();
    launch();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[1];
}

// Child: one line per workload, "name<TAB>ms".
int runOne() {
  Device dev = Device::emulator();
  {
    const int n = 1 << 22;
    auto x = dev.upload(randomFloats(n)), y = dev.upload(randomFloats(n));
    auto out = dev.alloc<float>(n);
    double ms = timed([&] { jit<vector_add>().launch(dev, {uint32_t(cdiv(n, 1024))}, {}, x, y, out, n); });
    std::printf("vector add, 2^22 f32\t%.2f\n", ms);
  }
  {
    const int M = 1823, N = 781;
    auto in = dev.upload(randomFloats(size_t(M) * N));
    auto out = dev.alloc<float>(size_t(M) * N);
    double ms = timed([&] { kernels::softmax(dev, in, out, M, N, N, N); });
    std::printf("softmax f32 1823 x 781\t%.2f\n", ms);
  }
  {
    const int M = 257, N = 8192;
    auto x = dev.upload(randomFloats(size_t(M) * N)), w = dev.upload(randomFloats(N)),
         b = dev.upload(randomFloats(N));
    auto y = dev.alloc<float>(size_t(M) * N);
    auto mean = dev.alloc<float>(M), rstd = dev.alloc<float>(M);
    double ms = timed([&] { kernels::layer_norm(dev, x, y, w, b, mean, rstd, M, N, N, N); });
    std::printf("layer norm f32 257 x 8192\t%.2f\n", ms);
  }
  {
    const int M = 256, N = 256, K = 256;
    auto a = dev.upload(randomFloats(size_t(M) * K)), b = dev.upload(randomFloats(size_t(K) * N));
    auto c = dev.alloc<float>(size_t(M) * N);
    kernels::MatmulConfig config{64, 64, 32, 8, 4, 2};
    double ms = timed([&] { kernels::matmul<float>(dev, a, b, c, {M, N, K}, nullptr, config); });
    std::printf("matmul f32 256^3 (LDS-staged, 2 stages)\t%.2f\n", ms);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--one")
    return runOne();
  const char *modes[] = {"off", "memory", "races"};
  std::map<std::string, std::map<std::string, double>> table; // workload -> mode -> ms
  std::vector<std::string> order;
  for (const char *mode : modes) {
    std::string command = "TESSEL_SANITIZE=" + std::string(mode) + " '" + argv[0] + "' --one";
    FILE *child = popen(command.c_str(), "r");
    if (!child) {
      std::perror("popen");
      return 1;
    }
    char line[512];
    while (std::fgets(line, sizeof line, child)) {
      std::string s(line);
      size_t tab = s.find('\t');
      if (tab == std::string::npos)
        continue;
      std::string name = s.substr(0, tab);
      if (!table.count(name))
        order.push_back(name);
      table[name][mode] = std::atof(s.c_str() + tab + 1);
    }
    if (pclose(child) != 0) {
      std::fprintf(stderr, "the run with TESSEL_SANITIZE=%s failed\n", mode);
      return 1;
    }
  }
  std::printf("emulator launch time (median of 3, ms) by TESSEL_SANITIZE; ratio to off\n");
  std::printf("%-42s %10s %18s %18s\n", "workload", "off", "memory", "races");
  for (const std::string &name : order) {
    auto &row = table[name];
    std::printf("%-42s %10.2f %10.2f (%4.2fx) %10.2f (%4.2fx)\n", name.c_str(), row["off"], row["memory"],
                row["memory"] / row["off"], row["races"], row["races"] / row["off"]);
  }
  return 0;
}
