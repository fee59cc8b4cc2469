// Compile time against trace size (issue 34): kernels whose trace records N
// ops (a C++ loop at trace time, as Triton's static_range unrolls), compiled
// cold (trace -> .hsaco, no cache) for each N, with every stage's time and the
// exponent fitted between successive sizes (t ~ N^k: k = log(t2 / t1) /
// log(N2 / N1); linear is 1), from wall and from CPU time (the compiling
// thread's: steadier on a shared machine). Four workloads (--workload, default all):
//   elementwise  N multiplies and adds on a [1024] f32 tile
//   memory       N masked loads and stores (N / 2 each) of [1024] f32 tiles
//   where-reduce N ops on a [16, 64] f32 tile: selects (a compare and a where)
//                and row reductions broadcast back (a max or a sum), alternating
//   sort         the sorts of tests/unit/e2e/sort_test.cpp (f32 keys, an int32
//                position payload, stable): 1000 keys at 4 waves, 4096 at 4 and
//                8, on gfx90a, gfx942, gfx950 and gfx1100 (or --arch's alone),
//                each against issue 34's 1 s; --sizes and --large do not apply
//
//   build/bench/bench-compile-scaling                 N = 250, 1000, 2000, 4000
//   build/bench/bench-compile-scaling --large         also 8000 and 16000
//   build/bench/bench-compile-scaling --sizes 500,1000 [--runs R] [--arch gfx942]
//                                     [--workload elementwise|memory|where-reduce|sort]
//
// TESSEL_LOG=compile adds the slowest passes of each compile.
#include "cold_compile.hpp"
#include "sort_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
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

// `runs` cold compiles of `traceOnce()`'s kernel: the run with the median
// total, and the median CPU time.
struct MedianRun {
  double total, cpu;
  CompileTimes stages;
};
template <class TraceFn>
MedianRun medianRun(const std::string &arch, unsigned numWarps, int runs, TraceFn traceOnce) {
  std::vector<double> totals, cpus;
  std::vector<CompileTimes> all;
  for (int r = 0; r < runs; ++r) {
    bench::ColdCompileResult c = bench::coldCompileOnce(arch, numWarps, traceOnce);
    totals.push_back(c.totalMs);
    cpus.push_back(c.cpuMs);
    all.push_back(c.times);
  }
  size_t mid = 0;
  std::vector<double> sorted = totals;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < totals.size(); ++i)
    if (totals[i] == sorted[sorted.size() / 2])
      mid = i;
  return {totals[mid], bench::medianOf(cpus), all[mid]};
}

// Compiles each size `runs` times, prints each size's median run and the table
// of exponents. `traceFor(n)` returns the detail::TraceRequest of size n.
template <class TraceFor>
void measure(const char *workload, const std::vector<int> &sizes, int runs, const std::string &arch,
             TraceFor traceFor) {
  std::printf("== %s (%s)\n", workload, arch.c_str());
  // One untimed compile first: a process's first compile also makes the
  // MLIR context, the target machine and the code generation pipeline a
  // thread keeps (~0.1 s), which would inflate the first size and hide
  // growth (as bench/triton/compile_scaling.py warms Triton).
  bench::coldCompileOnce(arch, 4, [&] { return traceFor(sizes.front()); });
  std::vector<Row> rows;
  for (int n : sizes) {
    MedianRun m = medianRun(arch, 4, runs, [&] { return traceFor(n); });
    const CompileTimes &t = m.stages;
    rows.push_back({n, m.total, m.cpu, t.passes, t.optimize + t.codegen + t.link, t});
    std::printf("N = %5d: total %9.1f ms, cpu %9.1f ms  (%s)\n", n, m.total, m.cpu,
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

// Issue 34's sort target: "a sort of 1000 or 4096 elements compiles in under
// 1 s on every target". One line per (n, waves, arch), then a table of totals.
void measureSorts(const std::vector<std::string> &archs, int runs, Device &dev) {
  struct SortCase {
    int n, block;
    unsigned warps;
    bool descending;
  };
  // sort_test.cpp's "sort of lengths 1000 and 4096" and "across 8 waves", all stable.
  const SortCase cases[] = {{1000, 1024, 4, false}, {4096, 4096, 4, true}, {4096, 4096, 8, true}};
  constexpr double kTargetMs = 1000;
  auto x = dev.alloc<float>(4096), keys = dev.alloc<float>(4096);
  auto pos = dev.alloc<int32_t>(4096);
  auto kernel = jit<bench::sort_keys>();
  std::printf("== sort (stable, f32 keys, int32 positions; issue 34's target: under %.0f ms on every target)\n",
              kTargetMs);
  std::vector<std::vector<MedianRun>> results; // [case][arch]
  double slowest = 0, slowestCpu = 0;
  std::string slowestWhat;
  for (const SortCase &c : cases) {
    results.emplace_back();
    for (const std::string &arch : archs) {
      MedianRun m = medianRun(arch, c.warps, runs,
                              [&] { return kernel.trace(x, keys, pos, c.n, c.block, c.descending, true); });
      results.back().push_back(m);
      slowestCpu = std::max(slowestCpu, m.cpu);
      // Wall time is the target's measure; on a loaded machine it can be over while the CPU time is not.
      const char *verdict = m.total < kTargetMs ? "under 1 s"
                            : m.cpu < kTargetMs ? "OVER 1 s in wall time, under in CPU time (a loaded machine?)"
                                                : "OVER 1 s";
      std::printf("sort n = %4d (block %4d), %u waves, %-7s: total %7.1f ms, cpu %7.1f ms: %s  (%s)\n", c.n, c.block,
                  c.warps, arch.c_str(), m.total, m.cpu, verdict, describeStages(m.stages).c_str());
      if (!m.stages.slowestPasses.empty())
        std::printf("          slowest passes: %s\n", describeSlowestPasses(m.stages).c_str());
      std::fflush(stdout);
      if (m.total > slowest) {
        slowest = m.total;
        slowestWhat = "n = " + std::to_string(c.n) + ", " + std::to_string(c.warps) + " waves, " + arch;
      }
    }
  }
  std::printf("\n| sort n | waves |");
  for (const std::string &arch : archs)
    std::printf(" %s ms (cpu) |", arch.c_str());
  std::printf("\n|---|---|");
  for (size_t a = 0; a < archs.size(); ++a)
    std::printf("---|");
  std::printf("\n");
  for (size_t i = 0; i < std::size(cases); ++i) {
    std::printf("| %d | %u |", cases[i].n, cases[i].warps);
    for (const MedianRun &m : results[i])
      std::printf(" %.1f (%.1f) |", m.total, m.cpu);
    std::printf("\n");
  }
  std::printf("sort: %s under 1 s on %s (slowest %.1f ms: %s); in CPU time %s (slowest %.1f ms)\n\n",
              slowest < kTargetMs ? "every compile" : "NOT every compile",
              archs.size() > 1 ? "every target" : archs.front().c_str(), slowest, slowestWhat.c_str(),
              slowestCpu < kTargetMs ? "every compile under 1 s" : "NOT every compile under 1 s", slowestCpu);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> sizes = {250, 1000, 2000, 4000};
  int runs = 1;
  std::string arch = "gfx942", workload = "all";
  bool archGiven = false;
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
      archGiven = true;
    } else if (a == "--workload" && i + 1 < argc &&
               (std::strcmp(argv[i + 1], "elementwise") == 0 || std::strcmp(argv[i + 1], "memory") == 0 ||
                std::strcmp(argv[i + 1], "where-reduce") == 0 || std::strcmp(argv[i + 1], "sort") == 0 ||
                std::strcmp(argv[i + 1], "all") == 0)) {
      workload = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--large] [--sizes N,N,...] [--runs R] [--arch gfx942]\n"
                   "          [--workload elementwise|memory|where-reduce|sort|all]\n",
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
  if (all || workload == "sort")
    measureSorts(archGiven ? std::vector<std::string>{arch}
                           : std::vector<std::string>{"gfx90a", "gfx942", "gfx950", "gfx1100"},
                 runs, dev);
  return 0;
}
