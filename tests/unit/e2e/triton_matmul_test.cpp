// Matmul written as Triton's tutorial 03 is, line by line
// (bench::triton_matmul): strides as runtime arguments, pointer tiles built
// once and moved BLOCK_SIZE_K * stride along K each iteration (carried
// through for_range), the K tail masked by what remains of K. Results on the
// emulator against float64 at odd sizes and at sizes divisible by 16, A
// row-major and transposed, with num_stages 2 and 3; and the gfx942 / gfx950
// main loop: 128-bit global loads only (a stride specialized to 1 folds away,
// % N by an N divisible by 16 keeps runs of 16, and pointer tiles moved by a
// uniform amount stay contiguous and aligned through the loop), and the loads
// through the carried pointers software-pipelined: the next K step's tiles
// load while this one computes, staged through LDS with num_stages - 1 slots
// (two barriers a step with one slot, one with two), as buffer loads from a
// carried offset (no exec-mask branches).
#include "e2e_common.hpp"
#include "lds_waits.hpp"
#include "../scoped_env.hpp"

#include "../../../bench/matmul_forms.hpp" // the kernel, and what its main loop holds

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/lowering/target.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace tessel;
using namespace e2e;
using bench::triton_matmul;

namespace {

constexpr int BM = 128, BN = 128, BK = 64, GROUP_M = 8;
// With num_stages 3 the K block is halved: two LDS slots of 128x64 and 64x128
// f16 tiles (64 KiB) would not fit in gfx942's 64 KiB with anything else.
constexpr int blockK(unsigned stages) { return stages > 2 ? BK / 2 : BK; }

} // namespace

namespace {

// Largest |C - A @ B| over the largest |A @ B|; A [M, K] stored row-major, or
// transposed ([K, M], strides (1, M)); B [K, N] row-major, or stored [N, K]
// (strides (1, K)); on `dev`. `assembly` gets the code that ran.
double tritonFormError(int M, int N, int K, bool transA, unsigned stages = 2, Device &dev = emulator(),
                       bool transB = false, std::string *assembly = nullptr, unsigned warps = 4) {
  std::vector<half> ha(size_t(M) * K), hb(size_t(K) * N);
  auto fa = randomFloats(ha.size(), -1, 1), fb = randomFloats(hb.size(), -1, 1);
  std::copy(fa.begin(), fa.end(), ha.begin());
  std::copy(fb.begin(), fb.end(), hb.begin());
  auto a = dev.upload(ha), b = dev.upload(hb);
  std::vector<half> junk(size_t(M) * N);
  std::memset(static_cast<void *>(junk.data()), 0xA5, junk.size() * sizeof(half)); // as poisoned(), on `dev`
  auto c = dev.upload(junk);
  static auto kernel = jit<triton_matmul<>>();
  const uint32_t grid = cdiv(M, BM) * cdiv(N, BN);
  const int sam = transA ? 1 : K, sak = transA ? M : 1, sbk = transB ? 1 : N, sbn = transB ? K : 1;
  kernel.launch(dev, {grid}, {.num_warps = warps, .num_stages = stages}, a, b, c, M, N, K, sam, sak, sbk, sbn, N, 1,
                BM, BN, blockK(stages), GROUP_M);
  if (assembly)
    *assembly = kernel.lastCompiled()->assembly();
  std::vector<half> got = c.download();
  std::vector<double> want(size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const double av = float(ha[transA ? size_t(k) * M + i : size_t(i) * K + k]);
      for (int j = 0; j < N; ++j)
        want[size_t(i) * N + j] += av * float(hb[transB ? size_t(j) * K + k : size_t(k) * N + j]);
    }
  double scale = 0, worst = 0;
  for (double w : want)
    scale = std::max(scale, std::fabs(w));
  for (size_t e = 0; e < want.size(); ++e)
    worst = std::max(worst, std::fabs(double(float(got[e])) - want[e]));
  return worst / scale;
}

} // namespace

TEST_CASE("Triton's tutorial 03 matmul, line by line: odd M, N, K against float64 on the emulator") {
  // Odd sizes (narrow accesses), then sizes divisible by 16 but not by the
  // blocks (the 128-bit loads, a masked K tail of 16).
  for (auto [M, N, K] : {std::array{333, 201, 150}, std::array{130, 257, 77}, std::array{400, 208, 464}}) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(K);
    CHECK(tritonFormError(M, N, K, false) < 1e-2);
  }
  CHECK(tritonFormError(131, 70, 99, true) < 1e-2);
  CHECK(tritonFormError(272, 144, 208, true) < 1e-2);
}

TEST_CASE("Triton's tutorial 03 matmul, line by line, pipelined two steps ahead: odd sizes against float64") {
  // num_stages 3 (K blocks of 32): two tiles before the loop; K from one step
  // (less than the pipeline's depth) to several with a tail.
  for (auto [M, N, K] : {std::array{333, 201, 150}, std::array{130, 257, 20}, std::array{400, 208, 464}}) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(K);
    CHECK(tritonFormError(M, N, K, false, 3) < 1e-2);
  }
  CHECK(tritonFormError(131, 70, 99, true, 3) < 1e-2);
}

TEST_CASE("Triton's tutorial 03 matmul on gfx950 with TESSEL_DIRECT_TO_LDS, A and B^T loaded straight into LDS: odd "
          "M, N, K against float64") {
  // With B stored [N, K], both operands run along K in global memory and in
  // their slots: each loads straight into LDS (the test after the next
  // checks the code). The emulator writes lane l's 16 bytes at the wave's
  // LDS pointer + 16 l (runtime/src/devices/emulator_buffer.cpp, from the
  // ISA): a wrong lane permutation, LDS pointer, slot or offset puts K
  // chunks in the wrong place. K a multiple of 16 (aligned 16-byte loads:
  // into LDS) with K tails (masked lanes write zeros), M and N not multiples
  // of the blocks, an odd and an even number of K steps; odd K (narrower
  // loads: through registers), A transposed (loaded along M: through
  // registers) and num_stages 3 (direct loads only at 2) for comparison.
  static Device gfx950 = Device::emulator("gfx950");
  testing::ScopedEnv direct("TESSEL_DIRECT_TO_LDS", "1"); // unset again however the case ends
  // The main loop's loads straight into LDS: 4 + 4 with num_stages 2.
  auto intoLds = [](const std::string &loop) {
    return matchCount(loop, std::regex(R"(\bbuffer_load_dwordx4\b[^\n]*\blds\b)"));
  };
  std::string assembly;
  for (auto [M, N, K] : {std::array{333, 201, 160}, std::array{400, 208, 464}, std::array{129, 131, 64},
                         std::array{130, 257, 192}}) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(K);
    CHECK(tritonFormError(M, N, K, false, 2, gfx950, true, &assembly) < 1e-2);
    CHECK(intoLds(bench::mainLoop(assembly)) == 8u);
    CHECK(ldsLoadHazards(assembly) == "");
    CHECK(tritonFormError(M, N, K, false, 3, gfx950, true, &assembly) < 1e-2);
    CHECK(intoLds(bench::mainLoop(assembly)) == 0u);
  }
  CHECK(tritonFormError(130, 257, 77, false, 2, gfx950, true, &assembly) < 1e-2);
  CHECK(intoLds(bench::mainLoop(assembly)) == 0u);
  CHECK(tritonFormError(131, 70, 96, true, 2, gfx950, true, &assembly) < 1e-2);
  CHECK(intoLds(bench::mainLoop(assembly)) == 0u);
  CHECK(tritonFormError(131, 70, 96, false, 2, gfx950, false, &assembly) < 1e-2);
  CHECK(intoLds(bench::mainLoop(assembly)) == 0u);
}

namespace {

CompiledKernel compileTritonForm(const std::string &arch, int M, int N, int K, bool transA, unsigned stages = 2,
                                 bool transB = false, bool directToLds = false, unsigned warps = 4) {
  auto a = emulator().alloc<half>(size_t(M) * K), b = emulator().alloc<half>(size_t(K) * N);
  auto c = emulator().alloc<half>(size_t(M) * N);
  const int sam = transA ? 1 : K, sak = transA ? M : 1, sbk = transB ? 1 : N, sbn = transB ? K : 1;
  detail::TraceRequest request =
      jit<triton_matmul<>>().trace(a, b, c, M, N, K, sam, sak, sbk, sbn, N, 1, BM, BN, blockK(stages), GROUP_M);
  CompileOptions options{arch, warps};
  options.numStages = stages;
  options.directToLds = directToLds;
  return compileTrace(request.trace, request.spec, options);
}

} // namespace

TEST_CASE("Triton's tutorial 03 matmul, line by line: the main loop loads 128 bits at a time on gfx942 and gfx950") {
  for (std::string arch : {"gfx942", "gfx950"}) {
    for (bool transA : {false, true}) {
      CAPTURE(arch);
      CAPTURE(transA);
      // M, N, K divisible by 16 (not by the blocks: the K tail is masked).
      // Transposed, A's tile is contiguous along M and moves by 64 * M.
      CompiledKernel k = compileTritonForm(arch, 400, 208, 464, transA);
      const std::string loop = bench::mainLoop(k.assembly());
      REQUIRE(!loop.empty());
      CAPTURE(loop);
      // A 128x64 and a 64x128 f16 tile over 256 lanes: 4 + 4 loads of 8 halves each.
      CHECK(matchCount(loop, std::regex(R"((global|buffer)_load_dwordx4\b)")) == 8);
      CHECK(matchCount(loop, std::regex(R"((global|buffer)_load_(?!dwordx4\b)\w+)")) == 0);
    }
  }
}

TEST_CASE("Triton's tutorial 03 matmul, line by line: loads through the carried pointers are pipelined") {
  for (std::string arch : {"gfx942", "gfx950"}) {
    for (unsigned stages : {2u, 3u}) {
      CAPTURE(arch);
      CAPTURE(stages);
      CompiledKernel k = compileTritonForm(arch, 400, 208, 464, false, stages);
      const std::string loop = bench::mainLoop(k.assembly());
      REQUIRE(!loop.empty());
      CAPTURE(loop);
      const bench::LoopMakeUp made = bench::loopMakeUp(loop);
      // The operands go through LDS slots, not through a layout conversion
      // per operand (two barriers each) as they do unpipelined.
      CHECK(made.barriers == (stages == 2 ? 2u : 1u));
      // A 128xBK and a BKx128 f16 tile over 256 lanes, 8 halves a load.
      CHECK(made.globalLoads128 == size_t(2 * 128 * blockK(stages) / (256 * 8)));
      CHECK(made.ldsWrites > 0);
      // The carried pointers became a carried offset from the argument
      // (tessel-carry-offsets): buffer loads, masked by the hardware's range
      // check, no exec-mask branch around each vector.
      CHECK(made.execBranches == 0);
      CHECK(matchCount(loop, std::regex(R"(\bbuffer_load_dwordx4\b)")) == made.globalLoads128);
    }
  }
}

TEST_CASE("Triton's tutorial 03 matmul, B stored [N, K], direct-to-LDS asked for: gfx950 loads both operands straight "
          "into LDS, one barrier") {
  for (std::string arch : {"gfx942", "gfx950"}) {
    for (bool direct : {false, true}) {
      CAPTURE(arch);
      CAPTURE(direct);
      CompiledKernel k = compileTritonForm(arch, 400, 208, 464, false, 2, true, direct);
      const std::string loop = bench::mainLoop(k.assembly());
      REQUIRE(!loop.empty());
      CAPTURE(loop);
      const bench::LoopMakeUp made = bench::loopMakeUp(loop);
      const bool intoLds = direct && arch == "gfx950";
      // 128x64 and 64x128 f16 tiles over 256 lanes, 16 bytes a load: 4 + 4,
      // into LDS on gfx950 when asked (two slots each: one barrier),
      // through registers and one slot each (two barriers) otherwise:
      // gfx942's loads to LDS move 4 bytes a lane.
      CHECK(matchCount(loop, std::regex(R"(\bbuffer_load_dwordx4\b[^\n]*\blds\b)")) == (intoLds ? 8u : 0u));
      CHECK(matchCount(loop, std::regex(R"(\bbuffer_load_dwordx4\b)")) == 8u);
      CHECK(made.barriers == (intoLds ? 1u : 2u));
      if (intoLds) {
        CHECK(matchCount(loop, std::regex(R"(\bds_write)")) == 0u); // nothing staged through registers
        // The wait for the loads to LDS before the barrier.
        CHECK(matchCount(loop, std::regex(R"(s_waitcnt vmcnt\(0\)[^\n]*\n\s*s_barrier)")) == 1u);
        CHECK(ldsLoadHazards(k.assembly()) == "");
      }
    }
  }
}

TEST_CASE("Triton's tutorial 03 matmul, B stored [N, K]: the staged stores pair and follow a quarter of the products") {
  for (std::string arch : {"gfx942", "gfx950"}) {
    CAPTURE(arch);
    CompiledKernel k = compileTritonForm(arch, 400, 208, 464, false, 2, true);
    const std::string loop = bench::mainLoop(k.assembly());
    REQUIRE(!loop.empty());
    CAPTURE(loop);
    const bench::LoopMakeUp made = bench::loopMakeUp(loop);
    // boundStagedStores: the first quarter of the products come before the
    // next tile's stores to LDS, so the stores do not wait on this
    // iteration's global loads with nothing between (gfx942 had 6 of 32).
    const size_t firstWrite = loop.find("ds_write");
    REQUIRE(firstWrite != std::string::npos);
    CHECK(bench::loopMakeUp(loop.substr(0, firstWrite)).matrix >= made.matrix / 4);
    // Each 16-byte load is staged as two swizzled 8-byte halves on gfx942;
    // the stores through one address register sit together, so LLVM pairs
    // them: 8 ds_write2st64_b64, not 16 ds_write_b64. gfx950 writes 16 bytes.
    if (arch == "gfx942") {
      CHECK(matchCount(loop, std::regex(R"(\bds_write2(st64)?_b64\b)")) == 8u);
      CHECK(matchCount(loop, std::regex(R"(\bds_write_b64\b)")) == 0u);
    }
  }
}

// gfx1100 (wave32, 16x16x16 WMMA): B's slot keeps 16-byte chunks, so each
// lane reads its 16 halves of K as two ds_load_b128 (planLdsStaging prices a
// WMMA operand's narrower reads), and the 16-bit halves B gathers along K for
// its LDS writes are packed by v_perm_b32, not moved into register halves
// (target.cpp: -real-true16). Before: 64 ds_load_2addr_b32 an iteration, 199
// VGPRs (6 waves a SIMD) at 8 waves; 55 VGPRs spilled at 4 (Triton spills 56).
TEST_CASE("Triton's tutorial 03 matmul on gfx1100: 16-byte operand reads, 8 waves a SIMD at 8 waves, odd sizes against "
          "float64") {
  for (unsigned warps : {4u, 8u}) {
    CAPTURE(warps);
    CompiledKernel k = compileTritonForm("gfx1100", 400, 208, 464, false, 2, false, false, warps);
    const std::string loop = bench::mainLoop(k.assembly());
    REQUIRE(!loop.empty());
    CAPTURE(loop);
    // A wave's 16x16x16 operands over K = 64: (M / 16 + N / 16 of its part) x 4 K steps x 2 reads; the waves
    // as [2, 2] (M and N parts of 64) or [4, 2] (32 and 64): 64 or 48 reads, Triton's.
    CHECK(matchCount(loop, std::regex(R"(\bds_load_b128\b)")) == (warps == 4 ? 64 : 48));
    CHECK(matchCount(loop, std::regex(R"(\bds_load_(?!b128\b)\w+)")) == 0);
    CHECK(matchCount(loop, std::regex(R"(\bv\d+\.[lh]\b)")) == 0);
    const KernelResources r = kernelResources(k.hsaco, k.name);
    if (warps == 8) {
      CHECK(occupancyOf(requireTarget(k.arch), r, k.blockSize, k.ldsBytes).wavesPerSimd == 8);
      CHECK(r.vgprSpills + r.sgprSpills == 0);
    } else {
      CHECK(r.vgprSpills < 16);
    }
  }
  Device gfx1100 = Device::emulator("gfx1100");
  for (unsigned warps : {4u, 8u}) {
    CAPTURE(warps);
    CHECK(tritonFormError(133, 150, 201, false, 2, gfx1100, false, nullptr, warps) < 1e-2);
    CHECK(tritonFormError(129, 257, 96, true, 2, gfx1100, false, nullptr, warps) < 1e-2);
  }
}

// gfx1100 at 4 waves, B stored [N, K]: 256 VGPRs. The tiles' LDS stores go
// through one address register (StagedAddresses: a swizzled slot's thread
// part is an XOR); as a sum, CodeGenPrepare sank the add next to each store
// and both addends were spilled and reloaded every iteration. The one reload
// left (the lane's K index for the mask) goes with the second compile a
// spilling pipelined loop gets (compileTrace: B's loads placed after the
// products, kept for spilling less). At 464 = 7 * 64 + 16 the last K block is
// masked, and 400 and 208 wrap rows and columns (% M, % N).
TEST_CASE("Triton's tutorial 03 matmul on gfx1100 at 4 waves, B stored [N, K]: no reload in the loop; against "
          "float64") {
  CompiledKernel k = compileTritonForm("gfx1100", 400, 208, 464, false, 2, true, false, 4);
  const std::string loop = bench::mainLoop(k.assembly());
  REQUIRE(!loop.empty());
  CAPTURE(loop);
  CHECK(matchCount(loop, std::regex(R"(\bds_store_b128\b)")) == 16u);
  CHECK(matchCount(loop, std::regex(R"(\bscratch_load_\w+)")) == 0u);
  Device gfx1100 = Device::emulator("gfx1100");
  CHECK(tritonFormError(400, 208, 464, false, 2, gfx1100, true, nullptr, 4) < 1e-2);
  CHECK(tritonFormError(129, 257, 96, false, 2, gfx1100, true, nullptr, 4) < 1e-2);
}
