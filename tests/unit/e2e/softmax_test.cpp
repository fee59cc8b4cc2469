// tessel::kernels::softmax against a float64 reference on the host, for f32,
// f16 and bf16 at odd shapes, with row strides; and the code it compiles to.
#include "e2e_common.hpp"

#include <tessel/kernels/softmax.hpp>

#include "tessel/core/compiled_kernel.hpp"

#include <algorithm>
#include <regex>

using namespace tessel;
using namespace e2e;

namespace {

struct Shape2 {
  int M, N;
};

// Softmax of an M x N matrix (strides N + 3 in, N + 5 out); returns the
// largest relative error (floor `floor`) and checks the output's padding.
template <class T> double runSoftmax(Shape2 s, float lo, float hi, double floor) {
  const int inStride = s.N + 3, outStride = s.N + 5;
  std::vector<float> raw = randomFloats(size_t(s.M) * inStride, lo, hi);
  std::vector<T> hin(raw.begin(), raw.end());
  auto in = emulator().upload(hin);
  auto out = poisoned<T>(size_t(s.M) * outStride);
  std::vector<T> before = out.download();
  kernels::softmax(emulator(), in, out, s.M, s.N, inStride, outStride);
  std::vector<T> got = out.download();

  double worst = 0;
  size_t touched = 0;
  std::vector<double> e(s.N);
  for (int r = 0; r < s.M; ++r) {
    const T *x = &hin[size_t(r) * inStride];
    double m = -INFINITY;
    for (int c = 0; c < s.N; ++c)
      m = std::max(m, double(float(x[c])));
    double total = 0;
    for (int c = 0; c < s.N; ++c)
      total += e[c] = std::exp(double(float(x[c])) - m);
    for (int c = 0; c < outStride; ++c) {
      size_t i = size_t(r) * outStride + c;
      if (c < s.N)
        worst = std::max(worst, relError(float(got[i]), e[c] / total, floor));
      else
        touched += std::memcmp(&got[i], &before[i], sizeof(T)) != 0;
    }
  }
  CHECK_MESSAGE(touched == 0, touched << " padding elements past N were written");
  return worst;
}

const Shape2 kShapes[] = {
    {1, 781},  // a single row, N not a power of two
    {37, 1},   // a single column: every output is 1
    {1, 1},    {5, 3},    {300, 17},  {129, 1000}, {2, 513}, // 513: just past half its block
    {64, 1024}, // N exactly a power of two
    {2000, 64}, // many short rows, several per program (no mask: EVEN_M, EVEN_N)
    {301, 64},  // full rows, the last program's 8 rows partly past M (EVEN_N only)
    {3, 4097},  // a row of 8192 columns over 8 waves
    {2, 16384}, // the largest block
};

} // namespace

TEST_CASE("softmax f32 matches a float64 reference at odd shapes") {
  for (Shape2 s : kShapes) {
    CAPTURE(s.M);
    CAPTURE(s.N);
    double err = runSoftmax<float>(s, -10.f, 10.f, 1e-30);
    CHECK(err < 1e-5);
  }
}

TEST_CASE("softmax at N = 781 on gfx942: the row's first half needs no mask, the rest no branch") {
  // rowConfig's block is the next power of two, so N > BLOCK / 2: with 128
  // lanes of 8 slots, slots 0-3 (columns below 512) are in range for every
  // thread (the assume plus the thread id's range), slots 4-7 take -inf by
  // one compare and select each (8 without the assume).
  CHECK(runSoftmax<float>({1, 781}, -10.f, 10.f, 1e-30) < 1e-5);
  const std::string &s = kernels::softmaxKernel<float>().runtime()->lastKernel()->assembly();
  CHECK(occurrences(s, "v_cndmask_b32") == 4);
  CHECK_FALSE(contains(s, "s_cbranch_execz"));
  // N <= BLOCK (assumed too): the buffer's byte bound N * 4 needs no clamp
  // against 32-bit overflow (s_min_u32).
  CHECK_FALSE(contains(s, "s_min_u32"));
  // The IEEE mode bit is clear: the row max's DPP steps (4 within rows, 2
  // row broadcasts) are v_max_f32_dpp, and no v_max_f32 vN, vM, vM quiets
  // an operand first.
  CHECK(contains(s, ".amdhsa_ieee_mode 0"));
  CHECK(occurrences(s, "v_max_f32_dpp") == 6);
  CHECK_FALSE(std::regex_search(s, std::regex(R"(v_max_f32_e(32|64) (v\d+), (v\d+), \3\b)")));
}

TEST_CASE("softmax f16 and bf16 match a float64 reference (f32 inside)") {
  // Outputs far below the largest are judged against a floor: f16 keeps
  // only subnormal precision under 6e-5.
  for (Shape2 s : kShapes) {
    CAPTURE(s.M);
    CAPTURE(s.N);
    CHECK(runSoftmax<half>(s, -4.f, 4.f, 1e-4) < 1e-2);
    CHECK(runSoftmax<bfloat16>(s, -4.f, 4.f, 1e-4) < 1e-2);
  }
}

TEST_CASE("softmax launch shapes: short rows share a program, long rows get more waves") {
  auto check = [](int N, int block, int rows, unsigned warps) {
    CAPTURE(N);
    kernels::RowConfig c = kernels::rowConfig("softmax", N);
    CHECK(c.block == block);
    CHECK(c.rows == rows);
    CHECK(c.num_warps == warps);
  };
  check(1, 1, 512, 1);
  check(3, 4, 128, 1);
  check(781, 1024, 1, 2);
  check(1024, 1024, 1, 2);
  check(8192, 8192, 1, 8);
  check(16384, 16384, 1, 8);
  // Longer rows: one row per program, walked a block at a time.
  kernels::RowConfig c = kernels::rowConfig("softmax", 16385);
  CHECK(c.looped);
  CHECK(c.block == kernels::kLoopBlock);
  CHECK(c.num_warps == 8);
  CHECK_FALSE(kernels::rowConfig("softmax", 16384).looped);
}

TEST_CASE("softmax launch shapes know the wave size: a lane holds as many elements on wave32 as on wave64") {
  CHECK(emulator().waveSize() == 64);
  CHECK(Device::emulator("gfx1100").waveSize() == 32);
  for (int N : {1, 3, 200, 781, 1024, 4096, 8192, 16384, 16385, 100000}) {
    CAPTURE(N);
    kernels::RowConfig w64 = kernels::rowConfig("softmax", N, 64), w32 = kernels::rowConfig("softmax", N, 32);
    CHECK(w32.block == w64.block);
    CHECK(w32.rows == w64.rows);
    CHECK(w32.looped == w64.looped);
    // Twice the waves of half the lanes: the same threads, 8 elements per lane.
    CHECK(w32.num_warps == 2 * w64.num_warps);
  }
  CHECK(kernels::rowConfig("softmax", 4096, 32).num_warps == 16);
  CHECK(kernels::rowConfig("softmax", 1024, 32).num_warps == 4);
  CHECK(kernels::rowConfig("softmax", 200, 32).num_warps == 2); // 2 rows of 256: 512 elements
  CHECK(kernels::rowConfig("softmax", 100000, 32).num_warps == 16);
  CHECK_THROWS_WITH_AS(kernels::rowConfig("softmax", 100, 48), "softmax: waves have 32 or 64 lanes (waveSize = 48)",
                       Error);
}

TEST_CASE("softmax of rows longer than a block: 4 x 100000 and 3 x 16385, one kernel per block") {
  for (Shape2 s : {Shape2{4, 100000}, Shape2{3, kernels::kMaxRowBlock + 1}}) {
    CAPTURE(s.M);
    CAPTURE(s.N);
    CHECK(runSoftmax<float>(s, -10.f, 10.f, 1e-30) < 1e-5);
    CHECK(runSoftmax<bfloat16>(s, -4.f, 4.f, 1e-4) < 1e-2);
  }
  // Large inputs: the running max rescales the running sums without overflow.
  CHECK(runSoftmax<float>({2, 20000}, 1000.f, 1080.f, 1e-30) < 1e-5);
  // Row lengths with the same specialization share one kernel.
  auto &k = kernels::softmaxLongKernel<float>();
  auto compiles = [&] { return k.runtime()->stats().compiles + k.runtime()->stats().diskHits; };
  auto in = emulator().upload(randomFloats(2 * 48000)), out = poisoned<float>(2 * 48000);
  kernels::softmax(emulator(), in, out, 2, 32000, 32000, 32000);
  size_t before = compiles();
  kernels::softmax(emulator(), in, out, 2, 48000, 48000, 48000);
  CHECK(compiles() == before);
  const CompiledKernel &compiled = *k.runtime()->lastKernel();
  CHECK(contains(compiled.tileIR, "scf.for"));
  std::regex backward(R"(s_cbranch_\w+\s+(\.LBB\w+))");
  bool loops = false;
  for (auto it = std::sregex_iterator(compiled.assembly().begin(), compiled.assembly().end(), backward);
       it != std::sregex_iterator(); ++it) {
    size_t label = compiled.assembly().find((*it)[1].str() + ":");
    loops |= label != std::string::npos && label < size_t(it->position());
  }
  CHECK(loops); // a backward branch: a loop, not 100000 / BLOCK copies of the body
}

TEST_CASE("softmax on a wave32 target (gfx1100)") {
  Device dev = Device::emulator("gfx1100");
  for (Shape2 s : {Shape2{3, 781}, Shape2{100, 5}, Shape2{2, 4097}}) {
    CAPTURE(s.M);
    CAPTURE(s.N);
    auto hin = randomFloats(size_t(s.M) * s.N);
    auto in = dev.upload(hin);
    std::vector<float> junk(size_t(s.M) * s.N, -1.f);
    auto out = dev.upload(junk);
    kernels::softmax(dev, in, out, s.M, s.N, s.N, s.N);
    auto got = out.download();
    double worst = 0;
    for (int r = 0; r < s.M; ++r) {
      const float *x = &hin[size_t(r) * s.N];
      double m = *std::max_element(x, x + s.N), total = 0;
      for (int c = 0; c < s.N; ++c)
        total += std::exp(double(x[c]) - m);
      for (int c = 0; c < s.N; ++c)
        worst = std::max(worst, relError(got[size_t(r) * s.N + c], std::exp(double(x[c]) - m) / total));
    }
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("softmax subtracts the row max: large inputs do not overflow") {
  double err = runSoftmax<float>({7, 300}, 1000.f, 1080.f, 1e-30);
  CHECK(err < 1e-5);
}

TEST_CASE("softmax on gfx942: cross-lane reduction, and the LDS the plan asked for") {
  Device dev = Device::emulator("gfx942");
  const int M = 3, N = 781; // 1024 columns over 2 waves: the row max and sum cross waves
  auto in = dev.upload(randomFloats(size_t(M) * N));
  auto out = dev.alloc<float>(size_t(M) * N);
  kernels::softmax(dev, in, out, M, N, N, N);
  const auto *runtime = kernels::softmaxKernel<float>().runtime();
  REQUIRE(runtime != nullptr);
  REQUIRE(runtime->lastKernel() != nullptr);
  const CompiledKernel &k = *runtime->lastKernel();
  // Each row reduction spans all 64 lanes of a wave: DPP within rows of 16,
  // then row broadcasts into lane 63 and v_readlane; no ds_bpermute.
  CHECK(occurrences(k.assembly(), "row_bcast:15") == 2);
  CHECK(occurrences(k.assembly(), "row_bcast:31") == 2);
  CHECK(occurrences(k.assembly(), "v_readlane_b32") == 2);
  CHECK_FALSE(contains(k.assembly(), "ds_bpermute_b32"));
  std::smatch match;
  std::regex groupSegment(R"(\.amdhsa_group_segment_fixed_size\s+(\d+))");
  REQUIRE(std::regex_search(k.assembly(), match, groupSegment));
  CHECK(std::stoul(match[1].str()) == k.ldsBytes);
  CHECK(k.ldsBytes > 0);
}

TEST_CASE("softmax rejects sizes that do not fit") {
  Device &dev = emulator();
  auto small = dev.alloc<float>(100);
  auto big = dev.alloc<float>(200);
  CHECK_THROWS_WITH_AS(kernels::softmax(dev, small, big, 2, 60, 60, 60), doctest::Contains("needs 120"), Error);
  CHECK_THROWS_WITH_AS(kernels::softmax(dev, small, big, 2, 10, 5, 10), doctest::Contains("row stride"), Error);
  CHECK_THROWS_AS(kernels::softmax(dev, small, big, 1, 0, 1, 1), Error);
}
