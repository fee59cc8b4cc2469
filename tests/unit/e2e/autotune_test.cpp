// The autotuner: timed on a GPU (here the fake HIP device with a fake
// timer), by the cost model on the emulator, remembered in the process and
// on disk for a new process; and kernels::matmul choosing its configuration.
#include "e2e_common.hpp"

#include <tessel/kernels/matmul.hpp>

#include <filesystem>

#include <sys/resource.h>
#include <sys/wait.h>

using namespace tessel;
using namespace e2e;

namespace {

std::vector<TuneConfig> threeConfigs() {
  return {TuneConfig{{{"B", 16}}, 1, 1}, TuneConfig{{{"B", 32}}, 2, 1}, TuneConfig{{{"B", 64}}, 4, 1}};
}

Device fakeGpu() {
  setenv("TESSEL_HIP_LIBRARY", TESSEL_FAKE_HIP_LIBRARY, 1);
  return Device::hip();
}

std::string freshDirectory(const char *name) {
  std::string dir = std::string(TESSEL_BINARY_DIR) + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

} // namespace

TEST_CASE("autotune on a GPU times every config once per key and keeps the fastest, across processes") {
  const std::string dir = freshDirectory("autotune-timed");
  Device gpu = fakeGpu();
  REQUIRE_FALSE(gpu.isEmulator());
  std::map<int, double> seconds{{16, 3.0}, {32, 1.0}, {64, 2.0}};
  int timed = 0;
  auto timer = [&](const TuneConfig &c) {
    ++timed;
    return seconds[c.get("B")];
  };
  auto cost = [](const TuneConfig &) -> double { FAIL("the cost model is for the emulator"); return 0; };
  Autotuner tuner("toy", threeConfigs(), dir);
  CHECK(tuner.pick(gpu, "n=1000", timer, cost).get("B") == 32);
  CHECK(tuner.lastMethod() == Autotuner::Method::Timed);
  CHECK(timed == 3);
  CHECK(tuner.pick(gpu, "n=1000", timer, cost).get("B") == 32);
  CHECK(tuner.lastMethod() == Autotuner::Method::Remembered);
  CHECK(timed == 3);
  // Another key is tuned on its own.
  seconds[64] = 0.5;
  CHECK(tuner.pick(gpu, "n=9000", timer, cost).get("B") == 64);
  CHECK(timed == 6);
  // A new tuner (a new process) reads both choices from the file: no timing.
  Autotuner again("toy", threeConfigs(), dir);
  CHECK(again.pick(gpu, "n=1000", timer, cost).get("B") == 32);
  CHECK(again.lastMethod() == Autotuner::Method::FromDisk);
  CHECK(again.pick(gpu, "n=9000", timer, cost).get("B") == 64);
  CHECK(timed == 6);
  // Other configurations under the same name ignore a file written for these.
  Autotuner changed("toy", {TuneConfig{{{"B", 128}}, 8, 1}, TuneConfig{{{"B", 16}}, 1, 2}}, dir);
  changed.pick(gpu, "n=1000", [](const TuneConfig &) { return 1.0; }, cost);
  CHECK(changed.lastMethod() == Autotuner::Method::Timed);
}

TEST_CASE("autotune on the emulator uses the cost model and says so") {
  const std::string dir = freshDirectory("autotune-model");
  Autotuner tuner("toy", threeConfigs(), dir);
  auto timer = [](const TuneConfig &) -> double { FAIL("nothing is timed on the emulator"); return 0; };
  const TuneConfig &c = tuner.pick(emulator(), "n=7", timer, [](const TuneConfig &t) { return double(t.num_warps); });
  CHECK(c.get("B") == 16);
  CHECK(tuner.lastMethod() == Autotuner::Method::CostModel);
  CHECK(std::string(methodName(tuner.lastMethod())).find("static cost model") != std::string::npos);
  CHECK_THROWS_WITH_AS(c.get("BM"), doctest::Contains("autotune: the configuration has no parameter 'BM'"), Error);
}

// The record is lost, not the process: SIGXFSZ is held off while it is
// written (a forked child under the limit; this process stays unlimited).
TEST_CASE("autotune's record past the file-size limit is dropped, without SIGXFSZ") {
  const std::string dir = freshDirectory("autotune-file-size");
  auto timer = [](const TuneConfig &) { return 1.0; };
  auto cost = [](const TuneConfig &t) { return double(t.num_warps); };
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    struct rlimit limit = {10, 10}; // a record line is ~40 bytes
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0)
      ::_exit(10);
    Autotuner tuner("toy", threeConfigs(), dir);
    int status = tuner.pick(emulator(), "n=7", timer, cost).get("B") == 16 ? 0 : 11;
    ::_exit(status); // no exit handlers: this process's threads are not the child's
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status)); // not ended by SIGXFSZ
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("the matmul cost model prefers big blocks for big problems and small ones for small") {
  kernels::MatmulShape big{.M = 4096, .N = 4096, .K = 4096}, small{.M = 48, .N = 40, .K = 64};
  auto best = [](const kernels::MatmulShape &s) {
    std::vector<TuneConfig> configs = kernels::matmulConfigs();
    size_t at = 0;
    for (size_t i = 1; i < configs.size(); ++i)
      if (kernels::matmulCost(configs[i], s) < kernels::matmulCost(configs[at], s)) at = i;
    return configs[at];
  };
  CHECK(best(big).get("BM") == 128);
  CHECK(best(big).get("BN") == 128);
  CHECK(best(small).get("BM") * best(small).get("BN") <= 64 * 64);
  // On wave32 (gfx1100) a 128x128 block holds too many registers per lane.
  for (const TuneConfig &c : kernels::matmulConfigs())
    if (c.get("BM") == 128 && c.get("BN") == 128) CHECK(kernels::matmulCost(c, big, 304, 32) >= 1e30);
}

TEST_CASE("the matmul cost model rules out num_stages whose LDS slots or prefetched registers do not fit") {
  kernels::MatmulShape big{.M = 4096, .N = 4096, .K = 4096};
  auto with = [](int bk, unsigned stages, int bn = 128) {
    return TuneConfig{{{"BM", 128}, {"BN", bn}, {"BK", bk}, {"GROUP_M", 8}}, 4, stages};
  };
  CHECK(kernels::matmulCost(with(64, 2), big) < 1e30); // one slot: 256 x 72 x 2 bytes
  // Two slots of A and B at 128x128x64 f16: 73728 bytes of LDS.
  CHECK(kernels::matmulCost(with(64, 3), big) >= 1e30);
  CHECK(kernels::matmulCost(with(32, 3), big) < 1e30);
  // f32 elements take twice the bytes.
  CHECK(kernels::matmulCost(with(64, 2), big, 304, 64, 4) >= 1e30);
  // 128x256x16 holds 128 + 24 registers per lane; three steps ahead add 72
  // (while its three LDS slots, 55296 bytes, would fit).
  CHECK(kernels::matmulCost(with(16, 1, 256), big) < 1e30);
  CHECK(kernels::matmulCost(with(16, 4, 256), big) >= 1e30);
  for (const TuneConfig &c : kernels::matmulConfigs()) CHECK(c.num_stages == 2);
}

TEST_CASE("the matmul cost model by the compiled kernel: spills rule a config out, occupancy sets the rounds") {
  kernels::MatmulShape big{.M = 4096, .N = 4096, .K = 4096};
  const TuneConfig c{{{"BM", 128}, {"BN", 128}, {"BK", 64}, {"GROUP_M", 8}}, 4, 2};
  KernelUsage two;
  two.vgprs = 180;
  two.wavesPerSimd = 2;
  KernelUsage one = two;
  one.wavesPerSimd = 1;
  // 1024 programs of 4 waves: 608 at a time on 304 compute units at 2 waves
  // per SIMD (2 rounds), 304 at 1 (4 rounds).
  const double atTwo = kernels::matmulCost(c, big, 304, 64, 2, &two);
  CHECK(atTwo < 1e30);
  CHECK(kernels::matmulCost(c, big, 304, 64, 2, &one) == 2 * atTwo);
  KernelUsage spilling = two;
  spilling.spills = 3;
  CHECK(kernels::matmulCost(c, big, 304, 64, 2, &spilling) >= 1e30);
  spilling.spills = 0;
  spilling.scratchBytes = 16;
  CHECK(kernels::matmulCost(c, big, 304, 64, 2, &spilling) >= 1e30);
  // The compiled kernel decides, not the estimate: 128x128x64 at 3 stages is
  // ruled out by the estimate's LDS, not when it compiled without spilling.
  const TuneConfig three{{{"BM", 128}, {"BN", 128}, {"BK", 64}, {"GROUP_M", 8}}, 4, 3};
  CHECK(kernels::matmulCost(three, big) >= 1e30);
  CHECK(kernels::matmulCost(three, big, 304, 64, 2, &one) < 1e30);
}

TEST_CASE("kernels::matmul without a config picks one (cost model on the emulator) and is right") {
  auto fa = randomFloats(96 * 80), fb = randomFloats(80 * 72);
  std::vector<half> ha(fa.begin(), fa.end()), hb(fb.begin(), fb.end());
  auto a = emulator().upload(ha), b = emulator().upload(hb);
  auto c = poisoned<half>(96 * 72);
  const LaunchStats before = kernels::matmulKernel<half>().stats();
  kernels::matmul(emulator(), a, b, c, {.M = 96, .N = 72, .K = 80});
  const Autotuner::Method method = kernels::matmulTuner<half>().lastMethod();
  CHECK(method != Autotuner::Method::Timed);
  // Picked by the code each config compiles to: every candidate compiled
  // (or came from the disk cache) before the launch; the one that ran does
  // not spill.
  const LaunchStats after = kernels::matmulKernel<half>().stats();
  if (method == Autotuner::Method::CostModel)
    CHECK(after.compiles + after.diskHits - before.compiles - before.diskHits >= kernels::matmulConfigs().size());
  CHECK(after.launches == before.launches + 1);
  REQUIRE(kernels::matmulKernel<half>().lastCompiled());
  CHECK(usageOf(*kernels::matmulKernel<half>().lastCompiled()).spills == 0);
  auto got = c.download();
  double worst = 0;
  for (int i = 0; i < 96; ++i)
    for (int j = 0; j < 72; ++j) {
      double want = 0;
      for (int k = 0; k < 80; ++k) want += double(float(ha[size_t(i * 80 + k)])) * double(float(hb[size_t(k * 72 + j)]));
      worst = std::max(worst, std::fabs(double(float(got[size_t(i * 72 + j)])) - want) / std::max(1.0, std::fabs(want)));
    }
  CHECK(worst < 1e-2);
}
