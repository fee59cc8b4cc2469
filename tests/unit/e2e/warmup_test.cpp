// Kernel::warmup compiles what a launch would run, without running it, and
// tessel::usageOf reads what the compiled kernel uses of its target.
#include "e2e_common.hpp"

#include <tessel/kernels/matmul.hpp>

using namespace tessel;
using namespace e2e;

namespace {

void warm_scale(Ptr<f32> x, Ptr<f32> out, i32 n, f32 alpha) {
  auto offs = program_id(0) * 256 + arange(0, 256);
  store(out + offs, load(x + offs, offs < n) * alpha, offs < n);
}

auto &warmScale() {
  static auto kernel = jit(&warm_scale, "warm_scale");
  return kernel;
}

void warms_inside(Ptr<f32> out) {
  auto x = emulator().upload(std::vector<float>(16, 1.f));
  warmScale().warmup(emulator(), {}, x, x, 16, 2.f);
  store(out + arange(0, 16), zeros<float>({16}));
}

} // namespace

TEST_CASE("warmup compiles the kernel a launch would run, runs nothing; the launch then finds it in memory") {
  const int n = 1001;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i)
    host[i] = float(i % 97) - 40.5f;
  auto x = emulator().upload(host);
  auto out = poisoned<float>(n);
  const auto before = out.download();
  auto kernel = jit(&warm_scale, "warm_scale_fresh");
  const CompiledKernel &warm = kernel.warmup(emulator(), {.num_warps = 2}, x, out, n, 3.f);
  CHECK(warm.name == "warm_scale_fresh");
  CHECK(warm.blockSize == 2 * emulator().waveSize());
  CHECK(!warm.hsaco.empty());
  CHECK(kernel.lastCompiled() == &warm);
  CHECK(kernel.stats().launches == 0);
  CHECK(kernel.stats().compiles + kernel.stats().diskHits == 1);
  CHECK(out.download() == before); // nothing ran

  kernel.launch(emulator(), {uint32_t(cdiv(n, 256))}, {.num_warps = 2}, x, out, n, 3.f);
  CHECK(kernel.stats().launches == 1);
  CHECK(kernel.stats().compiles + kernel.stats().diskHits == 1); // the warmed kernel ran
  CHECK(kernel.lastCompiled() == &warm);
  const auto got = out.download();
  for (int i = 0; i < n; ++i)
    REQUIRE(got[i] == host[i] * 3.f);

  // Other options are another kernel.
  const CompiledKernel &four = kernel.warmup(emulator(), {.num_warps = 4}, x, out, n, 3.f);
  CHECK(&four != &warm);
  CHECK(four.blockSize == 4 * emulator().waveSize());
}

TEST_CASE("usageOf: registers, spills and LDS from the code object; waves per SIMD by the target's limits") {
  // A 128 x 128 x 64 f16 matmul block at num_stages 2 on gfx942 stages 32 KiB
  // of operands in LDS: two workgroups of 4 waves fit a compute unit's 64
  // KiB, so 2 waves per SIMD (its 160-200 VGPRs allow 2 as well; a tie
  // names the registers).
  Device dev = Device::emulator("gfx942");
  const int M = 256, N = 256, K = 128;
  auto a = dev.alloc<half>(size_t(M) * K), b = dev.alloc<half>(size_t(K) * N);
  auto c = dev.alloc<half>(size_t(M) * N);
  detail::setDryLaunches(true); // compiles; runs nothing
  kernels::matmul(dev, a, b, c, {.M = M, .N = N, .K = K}, nullptr, kernels::MatmulConfig{128, 128, 64, 8, 4, 2});
  detail::setDryLaunches(false);
  const CompiledKernel *k = kernels::matmulKernel<half>().lastCompiled();
  REQUIRE(k);
  const KernelUsage u = usageOf(*k);
  CAPTURE(u.vgprs);
  CHECK(u.vgprs > 64);
  CHECK(u.vgprs <= 256);
  CHECK(u.agprs <= u.vgprs);
  CHECK(u.sgprs > 0);
  CHECK(u.spills == 0);
  CHECK(u.scratchBytes == 0);
  CHECK(u.ldsBytes == k->ldsBytes);
  CHECK(u.ldsBytes == 32768);
  CHECK(u.wavesPerSimd == 2.0);
  CHECK((u.limiter == "LDS" || u.limiter == "VGPRs"));

  // A small elementwise kernel over 4 waves uses no LDS and few registers:
  // CDNA's 8 wave slots per SIMD are the limit.
  auto f = dev.alloc<float>(16);
  const CompiledKernel &add = warmScale().warmup(dev, {}, f, f, 16, 1.f);
  const KernelUsage v = usageOf(add);
  CAPTURE(v.vgprs);
  CHECK(v.ldsBytes == 0);
  CHECK(v.vgprs < 64);
  CHECK(v.wavesPerSimd == 8.0);
  CHECK(v.limiter == "wave slots");
}

TEST_CASE("usageOf and warmup errors: an unknown target, a code object without metadata, a warmup while tracing") {
  CompiledKernel bogus;
  bogus.name = "nothing";
  bogus.arch = "gfx000";
  std::string msg = errorOf([&] { usageOf(bogus); });
  CAPTURE(msg);
  CHECK(contains(msg, "gfx000"));
  CHECK(contains(msg, "gfx942"));

  bogus.arch = "gfx942";
  msg = errorOf([&] { usageOf(bogus); });
  CHECK(msg == "kernel 'nothing' (gfx942): its code object has no register counts for it (no metadata note)");

  static auto inside = jit(&warms_inside, "warms_inside");
  auto out = poisoned<float>(16);
  msg = errorOf([&] { inside.launch(emulator(), {1}, {}, out); });
  CAPTURE(msg);
  CHECK(contains(msg, "kernel warm_scale was compiled while kernel warms_inside is being traced"));
  CHECK(contains(msg, "warmup_test.cpp:"));
}
