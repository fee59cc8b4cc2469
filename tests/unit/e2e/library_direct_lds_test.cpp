// kernels::matmul's K loop with loads straight into LDS (gfx950): the
// library computes its operands' offsets from the loop's k each iteration
// (`(k + ks) * stride`), and tessel-use-buffer-ops gathers the uniform part
// of each offset apart (a loop-invariant tile plus a scalar that moves), so
// the lanes' offsets for the slots' swizzle move between lanes once, before
// the loop, not each iteration. Run on the emulator against float64 at odd
// sizes (rows, columns and K masked), and the main loop's shape.
#include "e2e_common.hpp"
#include "lds_waits.hpp"

#include "../../../bench/matmul_forms.hpp" // what a main loop holds

#include <tessel/kernels/matmul.hpp>

#include "tessel/core/compiled_kernel.hpp"

#include <cmath>
#include <random>

using namespace tessel;
using namespace e2e;

namespace {

struct Run {
  double error = 0; // worst |C - float64| over the largest |C|
  std::string loop; // the main loop's assembly
  std::string assembly; // all of it
};

// C = A @ B through kernels::matmul on gfx950, A [M, K] row-major, B [K, N]
// row-major or (transB) stored [N, K]; E the inputs' type (8-bit floats
// with scales of 1, C in f16; or f16 in, f16 out).
template <class E> Run libraryMatmul(int M, int N, int K, bool transB, unsigned warps) {
  static Device gfx950 = Device::emulator("gfx950");
  std::vector<double> va = e4m3Exact(size_t(M) * K, 11), vb = e4m3Exact(size_t(K) * N, 12);
  std::vector<E> ha, hb(size_t(K) * N);
  for (double v : va)
    ha.push_back(E(float(v)));
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j)
      hb[transB ? size_t(j) * K + k : size_t(k) * N + j] = E(float(vb[size_t(k) * N + j]));
  auto a = gfx950.upload(ha), b = gfx950.upload(hb);
  auto c = gfx950.upload(std::vector<half>(size_t(M) * N, half(std::nanf(""))));
  kernels::MatmulShape shape{.M = M, .N = N, .K = K};
  if (transB) {
    shape.b_stride_k = 1;
    shape.b_stride_n = K;
  }
  const kernels::MatmulConfig config{128, 128, 64, 8, warps, 2};
  const CompiledKernel *compiled;
  if constexpr (std::is_same_v<E, half>) {
    kernels::matmul(gfx950, a, b, c, shape, nullptr, config);
    compiled = kernels::matmulKernel<half>().lastCompiled();
  } else {
    auto ones = gfx950.upload(std::vector<float>{1.0f});
    kernels::matmul(gfx950, a, b, c, shape, {ones, ones}, nullptr, config);
    compiled = kernels::matmulFp8Kernel<E, E, half>().lastCompiled();
  }
  Run run;
  run.assembly = compiled->assembly();
  run.loop = bench::mainLoop(run.assembly);
  std::vector<half> got = c.download();
  run.error = matmulRelError(got, va, vb, M, N, K);
  return run;
}

size_t lanesMoved(const std::string &loop) { return matchCount(loop, std::regex(R"(\bds_bpermute_b32\b)")); }
// A lane mask made a 0/1 per lane and compared back: the backend's ballot of
// an AND of masks (the lowering takes the AND of the masks' ballots).
size_t ballotsRebuilt(const std::string &loop) {
  return matchCount(loop, std::regex(R"(\bv_cndmask_b32_e64 v\d+, 0, 1,)"));
}

} // namespace

TEST_CASE("kernels::matmul on gfx950, loads straight into LDS: odd sizes against float64, the offsets move between "
          "lanes before the loop") {
  for (auto [M, N, K] : {std::array{333, 208, 464}, std::array{129, 272, 160}}) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(K);
    for (bool transB : {false, true}) {
      CAPTURE(transB);
      Run f8 = libraryMatmul<float8_e4m3fn>(M, N, K, transB, 8);
      CHECK(f8.error < 1e-3);
      CAPTURE(f8.loop);
      // A and B one 16-byte load a lane each, into their slots; the lanes'
      // offsets for the swizzle moved before the loop (each iteration
      // moved them by ds_bpermute: 2 here).
      CHECK(intoLds(f8.loop) == 2u);
      CHECK(ldsLoadHazards(f8.assembly) == "");
      CHECK(lanesMoved(f8.loop) == 0u);
      // No ballot in the loop: each lane's mask bit is made from its
      // source lane's thread id (before, A's row mask's ballot was rebuilt
      // in the loop: LLVM does not hoist a ballot).
      CHECK(ballotsRebuilt(f8.loop) == 0u);
      Run f16 = libraryMatmul<half>(M, N, K, transB, 8);
      CHECK(f16.error < 1e-3);
      // f16 goes into LDS, 4 loads (with B stored [N, K], each iteration
      // once moved their offsets: 4 ds_bpermute). B row-major too: its
      // layout has no run along K where the loads will go into LDS
      // (loadsLikelyToLds; with the run, through registers).
      CAPTURE(f16.loop);
      CHECK(intoLds(f16.loop) == 4u);
      CHECK(ldsLoadHazards(f16.assembly) == "");
      CHECK(lanesMoved(f16.loop) == 0u);
      CHECK(ballotsRebuilt(f16.loop) == 0u);
    }
  }
}
