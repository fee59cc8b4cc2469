// Compile time against trace size (issue 34): a kernel whose trace records N
// elementwise ops on a [1024] f32 tile (a C++ loop at trace time, as Triton's
// static_range unrolls), compiled cold (trace -> .hsaco, no cache) for each N,
// with every stage's time and the exponent fitted between successive sizes
// (t ~ N^k: k = log(t2 / t1) / log(N2 / N1); linear is 1).
//
//   build/bench/bench-compile-scaling                 N = 250, 1000, 2000, 4000
//   build/bench/bench-compile-scaling --large         also 8000 and 16000
//   build/bench/bench-compile-scaling --sizes 500,1000 [--runs R] [--arch gfx942]
//
// TESSEL_LOG=compile adds the slowest passes of each compile.
#include "cold_compile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace tessel;

namespace {

// N ops, alternating a multiply and an add (no fusion: fp_fusion is off).
void long_chain(Ptr<f32> x, Ptr<f32> out, Const<int> OPS) {
  auto offs = arange(0, 1024);
  auto v = load(x + offs);
  for (int i = 0; i < OPS; ++i)
    v = i % 2 == 0 ? v * 1.0001f : v + 0.5f;
  store(out + offs, v);
}

struct Row {
  int ops;
  double total, passes, codegen; // codegen: optimize + codegen + link
  CompileTimes stages;
};

} // namespace

int main(int argc, char **argv) {
  std::vector<int> sizes = {250, 1000, 2000, 4000};
  int runs = 1;
  std::string arch = "gfx942";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--large") {
      sizes.push_back(8000);
      sizes.push_back(16000);
    } else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream list(argv[++i]);
      for (std::string s; std::getline(list, s, ',');)
        sizes.push_back(std::atoi(s.c_str()));
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--arch" && i + 1 < argc) {
      arch = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--large] [--sizes N,N,...] [--runs R] [--arch gfx942]\n", argv[0]);
      return 2;
    }
  }
  auto kernel = jit<long_chain>();
  Device dev = Device::open(); // only for the arguments' buffers: the compiles are for `arch`
  auto x = dev.alloc<float>(1024), out = dev.alloc<float>(1024);
  std::vector<Row> rows;
  for (int n : sizes) {
    std::vector<double> totals;
    std::vector<CompileTimes> all;
    for (int r = 0; r < runs; ++r) {
      bench::ColdCompileResult c = bench::coldCompileOnce(arch, 4, [&] { return kernel.trace(x, out, n); });
      totals.push_back(c.totalMs);
      all.push_back(c.times);
    }
    size_t mid = 0; // the run with the median total
    std::vector<double> sorted = totals;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < totals.size(); ++i)
      if (totals[i] == sorted[sorted.size() / 2])
        mid = i;
    const CompileTimes &t = all[mid];
    rows.push_back({n, totals[mid], t.passes, t.optimize + t.codegen + t.link, t});
    std::printf("N = %5d: total %9.1f ms  (%s)\n", n, totals[mid], describeStages(t).c_str());
    if (!t.slowestPasses.empty())
      std::printf("          slowest passes: %s\n", describeSlowestPasses(t).c_str());
    std::fflush(stdout);
  }
  auto exponent = [](double t1, double t2, int n1, int n2) { return std::log(t2 / t1) / std::log(double(n2) / n1); };
  std::printf("\n| ops | total ms | passes ms | codegen ms (opt+cg+link) | k total | k passes | k codegen |\n"
              "|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &r = rows[i];
    std::printf("| %d | %.1f | %.1f | %.1f |", r.ops, r.total, r.passes, r.codegen);
    if (i == 0) {
      std::printf(" | | |\n");
      continue;
    }
    const Row &p = rows[i - 1];
    std::printf(" %.2f | %.2f | %.2f |\n", exponent(p.total, r.total, p.ops, r.ops),
                exponent(p.passes, r.passes, p.ops, r.ops), exponent(p.codegen, r.codegen, p.ops, r.ops));
  }
  return 0;
}
