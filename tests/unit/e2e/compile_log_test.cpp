// What a compile reports about itself: CompiledKernel::times, and
// TESSEL_LOG=compile printing each stage's time per compiled kernel and its
// slowest passes.
#include "e2e_common.hpp"
#include "../scoped_env.hpp"

#include <tessel/kernels/softmax.hpp>

#include <regex>

using namespace tessel;
using namespace e2e;

TEST_CASE("TESSEL_LOG=compile prints the time of every stage and the slowest passes of a softmax compile") {
  Device dev = Device::emulator("gfx90a");
  const int M = 5, N = 1234;
  auto in = dev.upload(randomFloats(size_t(M) * N)), out = dev.alloc<float>(size_t(M) * N);
  testing::ScopedEnv log("TESSEL_LOG", "cache,compile");
  testing::ScopedEnv always("TESSEL_ALWAYS_COMPILE", "1"); // whatever the disk cache holds
  const std::string printed = stderrOf(std::string(TESSEL_BINARY_DIR) + "/compile-log.txt", [&] {
    kernels::softmax(dev, in, out, M, N, N, N);
  });
  CAPTURE(printed);
  std::regex line(R"(tessel: compiled 'tessel_softmax_f32' for gfx90a \(num_warps \d+\) in ([0-9.]+) ms: )"
                  R"(trace [0-9.]+, context [0-9.]+, import [0-9.]+, passes [0-9.]+, translate [0-9.]+, )"
                  R"(optimize [0-9.]+, codegen [0-9.]+, link [0-9.]+ ms)");
  std::smatch match;
  REQUIRE(std::regex_search(printed, match, line));
  const CompiledKernel &k = *kernels::softmaxKernel<float>().runtime()->lastKernel();
  // The stages that always do work took time; the total is their sum.
  CHECK(k.times.passes > 0);
  CHECK(k.times.optimize > 0);
  CHECK(k.times.codegen > 0);
  CHECK(k.times.link > 0);
  CHECK(k.times.total() ==
        doctest::Approx(k.times.trace + k.times.context + k.times.import + k.times.passes + k.times.translate +
                        k.times.optimize + k.times.codegen + k.times.link));
  CHECK(std::stod(match[1]) == doctest::Approx(k.times.total()).epsilon(0.01));
  // The next line names the slowest passes (their arguments, as tessel-opt
  // takes them), slowest first, at most kSlowestPasses of them.
  std::regex passes(R"(tessel: slowest passes of 'tessel_softmax_f32': ((?:[a-z-]+ [0-9.]+, )*[a-z-]+ [0-9.]+) ms\n)");
  std::smatch passMatch;
  REQUIRE(std::regex_search(printed, passMatch, passes));
  CHECK(contains(passMatch[1].str(), "tessel-convert-to-llvm "));
  REQUIRE(!k.times.slowestPasses.empty());
  CHECK(k.times.slowestPasses.size() <= CompileTimes::kSlowestPasses);
  for (size_t i = 1; i < k.times.slowestPasses.size(); ++i)
    CHECK(k.times.slowestPasses[i - 1].ms >= k.times.slowestPasses[i].ms);
  CHECK(passMatch[1].str() + " ms" == describeSlowestPasses(k.times));
  // The compile made no assembly text (it is not on the launch path); asked
  // for, it is made then, and kept.
  CHECK_FALSE(k.hasAssembly());
  CHECK(contains(k.assembly(), ".amdhsa_kernel tessel_softmax_f32"));
  CHECK(k.hasAssembly());
  // Nor LLVM IR text: the kernel module is kept as bitcode, and its text is
  // made when asked.
  REQUIRE(k.llvmModule.size() > 4);
  CHECK(k.llvmModule.compare(0, 4, "BC\xC0\xDE") == 0);
  CHECK_FALSE(k.hasLlvmIR());
  CHECK(contains(k.llvmIR(), "define amdgpu_kernel void @tessel_softmax_f32("));
  CHECK(contains(k.llvmIR(), "!DILocation(line:")); // the line tables the emulator reports with
  CHECK(k.hasLlvmIR());

  // Launched again: from memory, no compile, nothing printed.
  const std::string again = stderrOf(std::string(TESSEL_BINARY_DIR) + "/compile-log-2.txt", [&] {
    kernels::softmax(dev, in, out, M, N, N, N);
  });
  CHECK_FALSE(contains(again, "tessel: compiled"));
}

TEST_CASE("without TESSEL_LOG a compile prints nothing") {
  Device dev = Device::emulator("gfx90a");
  const int M = 3, N = 999;
  auto in = dev.upload(randomFloats(size_t(M) * N)), out = dev.alloc<float>(size_t(M) * N);
  testing::ScopedEnv log("TESSEL_LOG", nullptr);
  testing::ScopedEnv always("TESSEL_ALWAYS_COMPILE", "1");
  const auto compiles = [] { return kernels::softmaxKernel<float>().runtime()->stats().compiles; };
  const uint64_t before = compiles();
  const std::string printed = stderrOf(std::string(TESSEL_BINARY_DIR) + "/compile-log-3.txt", [&] {
    kernels::softmax(dev, in, out, M, N, N, N);
  });
  CHECK(compiles() == before + 1); // it did compile
  CHECK_FALSE(contains(printed, "tessel: compiled"));
}
