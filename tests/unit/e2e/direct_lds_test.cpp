// gfx950's loads straight into LDS as the default where they keep the waves
// (tessel-pipeline-loops' automatic choice): tutorial 03's fp8 matmul with B
// row-major (read from LDS by ds_read_b64_tr_b8), 8 waves, num_stages 2, as
// the comparison bench compiles it, run on the emulator against float64 at
// odd sizes, and its main loop's shape (one barrier, the loads right after
// it: boundDirectLoads).
#include "e2e_common.hpp"
#include "lds_waits.hpp"
#include "../scoped_env.hpp"

#include "../../../bench/matmul_forms.hpp" // the kernel, and what its main loop holds

#include "tessel/core/compiled_kernel.hpp"

#include <cmath>
#include <random>

using namespace tessel;
using namespace e2e;

namespace {

constexpr int BM = 128, BN = 128, BK = 64, GROUP_M = 8;

struct Run {
  double error = 0;     // worst |C - float64| over the largest |C|
  std::string loop;     // the main loop's assembly
  std::string assembly; // all of it
};

// Each `Variant` its own kernel object: TESSEL_DIRECT_TO_LDS is read when a
// kernel compiles, and the in-memory cache does not key on it.
template <int Variant> Run fp8Matmul(int M, int N, int K, unsigned warps) {
  static Device gfx950 = Device::emulator("gfx950");
  std::vector<double> va = e4m3Exact(size_t(M) * K, 5150), vb = e4m3Exact(size_t(K) * N, 5151);
  std::vector<float8_e4m3fn> ha, hb;
  for (double v : va)
    ha.push_back(float8_e4m3fn(float(v)));
  for (double v : vb)
    hb.push_back(float8_e4m3fn(float(v)));
  auto a = gfx950.upload(ha), b = gfx950.upload(hb);
  auto c = gfx950.upload(std::vector<half>(size_t(M) * N, half(std::nanf(""))));
  static auto kernel = jit(&bench::triton_matmul<float8_e4m3fn, half>, "matmul_kernel");
  kernel.launch(gfx950, {cdiv(M, BM) * cdiv(N, BN)}, {.num_warps = warps, .num_stages = 2}, a, b, c, M, N, K, K, 1,
                N, 1, N, 1, BM, BN, BK, GROUP_M);
  Run run;
  run.assembly = kernel.lastCompiled()->assembly();
  run.loop = bench::mainLoop(run.assembly);
  std::vector<half> got = c.download();
  run.error = matmulRelError(got, va, vb, M, N, K);
  return run;
}


} // namespace

TEST_CASE("gfx950 fp8 matmul, B row-major, 8 waves: loaded straight into LDS by default, odd M, N, K against "
          "float64") {
  // M odd, N a multiple of 16 (16-byte rows of B) but not of the block, K
  // with a masked tail: an odd and an even number of K steps, and a single
  // one. The last iteration's loads (masked off: branch-free) write zeros
  // into the slot nobody reads; a wrong slot, wait or barrier puts stale or
  // zero K chunks into C.
  for (auto [M, N, K] : {std::array{333, 208, 464}, std::array{129, 272, 160}, std::array{200, 144, 48}}) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(K);
    Run run = fp8Matmul<0>(M, N, K, 8);
    CHECK(run.error < 1e-3);
    REQUIRE(!run.loop.empty());
    CAPTURE(run.loop);
    const bench::LoopMakeUp made = bench::loopMakeUp(run.loop);
    // A 128x64 and a 64x128 fp8 tile over 512 lanes, 16 bytes a load: 1 + 1,
    // into two slots each: one barrier, no stores to LDS, no branch around
    // the loads.
    CHECK(intoLds(run.loop) == 2u);
    CHECK(ldsLoadHazards(run.assembly) == "");
    CHECK(made.barriers == 1u);
    CHECK(made.ldsWrites == 0u);
    CHECK(made.execBranches == 0u);
    // boundDirectLoads: the wait for this iteration's slot, the barrier,
    // then at once the next tile's loads (their M0 and offsets computed
    // before the wait), not after the LDS reads.
    CHECK(matchCount(run.loop, std::regex(R"(s_waitcnt vmcnt\(0\)\s*\n\s*s_barrier\s*\n(\s*s_mov_b32 m0[^\n]*\n)?)"
                                          R"(\s*buffer_load_dwordx4\b[^\n]*\blds\b)")) == 1u);
    const size_t firstLoad = run.loop.find(" lds\n"), firstRead = run.loop.find("ds_read");
    CHECK(firstLoad < firstRead);
  }
}

TEST_CASE("gfx950 fp8 matmul: TESSEL_DIRECT_TO_LDS=0 stages through registers, with the same result") {
  testing::ScopedEnv off("TESSEL_DIRECT_TO_LDS", "0"); // unset again however the case ends
  Run run = fp8Matmul<1>(333, 208, 464, 8);
  CHECK(run.error < 1e-3);
  CHECK(intoLds(run.loop) == 0u);
  CHECK(bench::loopMakeUp(run.loop).ldsWrites == 2u);
}

// At 4 waves B's loads used to hold 2 rows of K a thread (an operand run for
// LDS writes along K, which gfx950's transpose reads do not take), so a wave's
// lanes skipped every other row of its slot: no loads to LDS even when asked
// for. Without the run, 2 loads of A and 2 of B a thread go straight in.
TEST_CASE("gfx950 fp8 matmul at 4 waves loads straight into LDS by default and matches float64; "
          "TESSEL_DIRECT_TO_LDS=0 stages through registers") {
  Run run = fp8Matmul<2>(333, 208, 464, 4);
  CHECK(run.error < 1e-3);
  CHECK(intoLds(run.loop) == 4u);
  CHECK(ldsLoadHazards(run.assembly) == "");
  CHECK(bench::loopMakeUp(run.loop).ldsWrites == 0u);
  CHECK(bench::loopMakeUp(run.loop).barriers == 1u);
  testing::ScopedEnv off("TESSEL_DIRECT_TO_LDS", "0");
  Run regs = fp8Matmul<3>(333, 208, 464, 4);
  CHECK(regs.error < 1e-3);
  CHECK(intoLds(regs.loop) == 0u);
}

// The loads to LDS under the race sanitizer: each iteration's loads write the
// slot the other waves finished reading before the barrier, and the reads of
// the slot they wrote wait for the next barrier (the emulator runs a load to
// LDS at once, so only the sanitizer sees a misplaced barrier).
TEST_CASE("gfx950 fp8 matmul with loads to LDS has no LDS race (TESSEL_SANITIZE=races)") {
  testing::ScopedEnv races("TESSEL_SANITIZE", "races");
  Run run = fp8Matmul<4>(203, 144, 336, 8); // N and K multiples of 16, as the loads to LDS need
  CHECK(run.error < 1e-3);
  CHECK(intoLds(run.loop) > 0u);
  CHECK(ldsLoadHazards(run.assembly) == "");
}
