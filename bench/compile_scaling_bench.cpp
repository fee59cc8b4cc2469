// Compile time against trace size (issue 34): kernels whose trace records N
// ops (a C++ loop at trace time, as Triton's static_range unrolls), compiled
// cold (trace -> .hsaco, no cache) for each N, with every stage's time and the
// exponent fitted between successive sizes (t ~ N^k: k = log(t2 / t1) /
// log(N2 / N1); linear is 1), from wall and from CPU time (the compiling
// thread's: steadier on a shared machine). Three workloads (--workload, default all):
//   elementwise  N multiplies and adds on a [1024] f32 tile
//   memory       N masked loads and stores (N / 2 each) of [1024] f32 tiles
//   where-reduce N ops on a [16, 64] f32 tile: selects (a compare and a where)
//                and row reductions broadcast back (a max or a sum), alternating
//
//   build/bench/bench-compile-scaling                 N = 250, 1000, 2000, 4000
//   build/bench/bench-compile-scaling --large         also 8000 and 16000
//   build/bench/bench-compile-scaling --sizes 500,1000 [--runs R] [--arch gfx942]
//                                     [--workload elementwise|memory|where-reduce]
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

// N / 2 masked loads and N / 2 masked stores, each at its own offset (a
// copy of N / 2 blocks with a scale, so no load is dead).
void loads_stores(Ptr<f32> x, Ptr<f32> out, i32 n, Const<int> OPS) {
  auto offs = arange(0, 1024);
  for (int i = 0; i < OPS / 2; ++i) {
    auto at = offs + i * 1024;
    auto mask = at < n;
    store(out + at, load(x + at, mask) * 2.0f, mask);
  }
}

// N where/reduction ops on a [16, 64] tile: even steps select (v > 0.5 ?
// v : v * 0.25), odd steps subtract the row's max or add a fraction of its sum.
void where_reduce(Ptr<f32> x, Ptr<f32> out, Const<int> OPS) {
  auto r = expand_dims(arange(0, 16), 1);
  auto c = expand_dims(arange(0, 64), 0);
  auto offs = r * 64 + c;
  auto v = load(x + offs);
  for (int i = 0; i < OPS; ++i) {
    if (i % 2 == 0)
      v = where(v > 0.5f, v, v * 0.25f);
    else if (i % 4 == 1)
      v = v - expand_dims(max(v, 1), 1);
    else
      v = v + expand_dims(sum(v, 1), 1) * 0.001f;
  }
  store(out + offs, v);
}

struct Row {
  int ops;
  double total, cpu, passes, codegen; // codegen: optimize + codegen + link
  CompileTimes stages;
};

// Compiles each size `runs` times, prints each size's median run and the table
// of exponents. `traceFor(n)` returns the detail::TraceRequest of size n.
template <class TraceFor>
void measure(const char *workload, const std::vector<int> &sizes, int runs, const std::string &arch,
             TraceFor traceFor) {
  std::printf("== %s (%s)\n", workload, arch.c_str());
  std::vector<Row> rows;
  for (int n : sizes) {
    std::vector<double> totals, cpus;
    std::vector<CompileTimes> all;
    for (int r = 0; r < runs; ++r) {
      bench::ColdCompileResult c = bench::coldCompileOnce(arch, 4, [&] { return traceFor(n); });
      totals.push_back(c.totalMs);
      cpus.push_back(c.cpuMs);
      all.push_back(c.times);
    }
    size_t mid = 0; // the run with the median total
    std::vector<double> sorted = totals;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < totals.size(); ++i)
      if (totals[i] == sorted[sorted.size() / 2])
        mid = i;
    const CompileTimes &t = all[mid];
    rows.push_back({n, totals[mid], bench::medianOf(cpus), t.passes, t.optimize + t.codegen + t.link, t});
    std::printf("N = %5d: total %9.1f ms, cpu %9.1f ms  (%s)\n", n, totals[mid], rows.back().cpu,
                describeStages(t).c_str());
    if (!t.slowestPasses.empty())
      std::printf("          slowest passes: %s\n", describeSlowestPasses(t).c_str());
    std::fflush(stdout);
  }
  auto exponent = [](double t1, double t2, int n1, int n2) { return std::log(t2 / t1) / std::log(double(n2) / n1); };
  std::printf("\n| %s ops | total ms | cpu ms | passes ms | codegen ms (opt+cg+link) | k total | k cpu | k passes "
              "| k codegen |\n|---|---|---|---|---|---|---|---|---|\n",
              workload);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &r = rows[i];
    std::printf("| %d | %.1f | %.1f | %.1f | %.1f |", r.ops, r.total, r.cpu, r.passes, r.codegen);
    if (i == 0) {
      std::printf(" | | | |\n");
      continue;
    }
    const Row &p = rows[i - 1];
    std::printf(" %.2f | %.2f | %.2f | %.2f |\n", exponent(p.total, r.total, p.ops, r.ops),
                exponent(p.cpu, r.cpu, p.ops, r.ops), exponent(p.passes, r.passes, p.ops, r.ops),
                exponent(p.codegen, r.codegen, p.ops, r.ops));
  }
  if (rows.size() > 1)
    std::printf("%s: from %d to %d ops the compile grows %.1fx in wall time, %.1fx in CPU time (linear: %.1fx)\n",
                workload, rows.front().ops, rows.back().ops, rows.back().total / rows.front().total,
                rows.back().cpu / rows.front().cpu, double(rows.back().ops) / rows.front().ops);
  std::printf("\n");
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> sizes = {250, 1000, 2000, 4000};
  int runs = 1;
  std::string arch = "gfx942", workload = "all";
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
    } else if (a == "--workload" && i + 1 < argc &&
               (std::strcmp(argv[i + 1], "elementwise") == 0 || std::strcmp(argv[i + 1], "memory") == 0 ||
                std::strcmp(argv[i + 1], "where-reduce") == 0 || std::strcmp(argv[i + 1], "all") == 0)) {
      workload = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--large] [--sizes N,N,...] [--runs R] [--arch gfx942]\n"
                   "          [--workload elementwise|memory|where-reduce|all]\n",
                   argv[0]);
      return 2;
    }
  }
  Device dev = Device::open(); // only for the arguments' buffers: the compiles are for `arch`
  auto x = dev.alloc<float>(1024), out = dev.alloc<float>(1024);
  bool all = workload == "all";
  if (all || workload == "elementwise") {
    auto kernel = jit<long_chain>();
    measure("elementwise", sizes, runs, arch, [&](int n) { return kernel.trace(x, out, n); });
  }
  if (all || workload == "memory") {
    auto kernel = jit<loads_stores>();
    measure("memory", sizes, runs, arch, [&](int n) { return kernel.trace(x, out, 1000, n); });
  }
  if (all || workload == "where-reduce") {
    auto kernel = jit<where_reduce>();
    measure("where-reduce", sizes, runs, arch, [&](int n) { return kernel.trace(x, out, n); });
  }
  return 0;
}
