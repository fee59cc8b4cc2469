// Cold compile of one kernel, trace to .hsaco with no cache involved: the
// median over a few runs, and the median of every stage (CompileTimes).
#pragma once

#include <tessel/tessel.hpp>

#include "tessel/lowering/compile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <time.h>
#include <vector>

namespace tessel::bench {

inline double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct ColdCompileResult {
  double totalMs; // trace + compile
  CompileTimes times;
  double cpuMs; // the calling thread's CPU time for it (the compile runs there): steadier than wall time on a shared machine
};

inline double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// One cold compile: `traceOnce()` returns a detail::TraceRequest.
template <class TraceFn>
ColdCompileResult coldCompileOnce(const std::string &arch, unsigned numWarps, TraceFn traceOnce) {
  using Clock = std::chrono::steady_clock;
  double cpu0 = threadCpuMs();
  auto t0 = Clock::now();
  detail::TraceRequest request = traceOnce();
  double traceMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  CompiledKernel k = compileTrace(request.trace, request.spec, {arch, numWarps});
  k.times.trace = traceMs;
  return {std::chrono::duration<double, std::milli>(Clock::now() - t0).count(), k.times, threadCpuMs() - cpu0};
}

// `traceOnce()` returns a detail::TraceRequest. TESSEL_BENCH_ONLY=text skips
// the kernels whose description does not contain `text` (to profile one).
template <class TraceFn>
void coldCompile(const char *what, const std::string &arch, unsigned numWarps, int runs, TraceFn traceOnce) {
  const char *only = std::getenv("TESSEL_BENCH_ONLY");
  if (only && std::string(what).find(only) == std::string::npos)
    return;
  std::vector<CompileTimes> stages;
  std::vector<double> totals;
  for (int i = 0; i < runs; ++i) {
    ColdCompileResult run = coldCompileOnce(arch, numWarps, traceOnce);
    totals.push_back(run.totalMs);
    stages.push_back(run.times);
    if (std::getenv("TESSEL_BENCH_EACH"))
      std::printf("  run %d: %.2f ms (%s)\n", i, totals.back(), describeStages(run.times).c_str());
  }
  auto stage = [&](double CompileTimes::*field) {
    std::vector<double> v;
    for (const CompileTimes &t : stages)
      v.push_back(t.*field);
    return medianOf(v);
  };
  CompileTimes median;
  for (double CompileTimes::*field :
       {&CompileTimes::trace, &CompileTimes::context, &CompileTimes::import, &CompileTimes::passes,
        &CompileTimes::translate, &CompileTimes::optimize, &CompileTimes::codegen,
        &CompileTimes::link})
    median.*field = stage(field);
  std::printf("cold compile of %s (trace -> hsaco, %s, %u waves): median %.2f ms, min %.2f ms over %d runs\n"
              "  stage medians: %s\n",
              what, arch.c_str(), numWarps, medianOf(totals), *std::min_element(totals.begin(), totals.end()),
              runs, describeStages(median).c_str());
}

} // namespace tessel::bench
