// A thread keeps what compiles can share: its MLIR context and the pass
// manager over it (Compile.cpp), its code generation pipelines
// (amdgpu_codegen.cpp). A compile must not depend on what compiled before it
// on the thread: the same trace gives the same tile IR, LLVM IR and code
// object as on a thread of its own, after other kernels, other options and a
// compile that failed.
#include "e2e_common.hpp"
#include "../scoped_env.hpp"

#include <tessel/kernels/matmul.hpp>
#include <tessel/kernels/softmax.hpp>

#include "tessel/lowering/compile.hpp"

#include <future>

using namespace tessel;
using namespace e2e;

namespace {

void scaled_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, f32 alpha) {
  auto offs = program_id(0) * 256 + arange(0, 256);
  store(out + offs, load(x + offs, offs < n) / alpha + load(y + offs, offs < n), offs < n);
}

void promised_multiple_of_64(Ptr<f32> x, i32 n) {
  assume(n % 64 == 0);
  auto offs = arange(0, 64);
  store(x + offs, load(x + offs, offs < n, 0.0f) * 2.0f, offs < n);
}

struct Compiled {
  std::string tileIR, llvmIR;
  std::vector<uint8_t> hsaco;
  bool operator==(const Compiled &) const = default;
};

Compiled compiled(const detail::TraceRequest &request, const CompileOptions &options) {
  CompiledKernel k = compileTrace(request.trace, request.spec, options);
  return {k.tileIR, k.llvmIR(), k.hsaco};
}

} // namespace

TEST_CASE("compiles on one thread give what fresh threads give") {
  testing::ScopedEnv printing("TESSEL_PRINT_AFTER_ALL", nullptr); // (it gets passes of its own)
  auto x = emulator().alloc<float>(1000), y = emulator().alloc<float>(1000), out = emulator().alloc<float>(1000);
  auto a = emulator().alloc<half>(64 * 64), b = emulator().alloc<half>(64 * 64);
  auto c = emulator().alloc<kernels::detail::matmul_out_t<half>>(64 * 64);
  const detail::TraceRequest add = jit<scaled_add>().trace(x, y, out, 1000, 0.5f);
  const detail::TraceRequest softmax = kernels::softmaxKernel<float>().trace(
      x, out, int32_t(3), int32_t(333), int32_t(333), int32_t(333), int32_t(1), int32_t(512), false, false);
  const detail::TraceRequest matmul = kernels::matmulKernel<half>().trace(
      a, b, c, c, 64, 64, 64, 64, 1, 64, 1, 64, 1, 0, 0, 0, 64, 64, 32, 8, 0, 0);
  const detail::TraceRequest broken = jit<promised_multiple_of_64>().trace(x, 1); // 1 % 64 != 0
  const CompileOptions gfx942{"gfx942", 4}, wave32{"gfx1100", 2};
  CompileOptions pipelined{"gfx942", 4};
  pipelined.numStages = 3;
  CompileOptions fast{"gfx942", 4};
  fast.fastMath = true;
  fast.fpFusion = true;

  // Each on a new thread: a context, passes and code generators of its own.
  auto onNewThread = [](auto work) { return std::async(std::launch::async, work).get(); };
  const Compiled freshAdd = onNewThread([&] { return compiled(add, gfx942); });
  const Compiled freshSoftmax = onNewThread([&] { return compiled(softmax, gfx942); });
  const Compiled freshSoftmax32 = onNewThread([&] { return compiled(softmax, wave32); });
  const Compiled freshMatmul = onNewThread([&] { return compiled(matmul, pipelined); });
  const Compiled freshFast = onNewThread([&] { return compiled(add, fast); });
  REQUIRE(freshAdd.llvmIR != freshFast.llvmIR);
  REQUIRE(freshSoftmax.hsaco != freshSoftmax32.hsaco);

  std::vector<Compiled> kept = onNewThread([&] {
    std::vector<Compiled> got;
    got.push_back(compiled(add, gfx942));
    got.push_back(compiled(softmax, gfx942));
    got.push_back(compiled(matmul, pipelined));
    got.push_back(compiled(add, fast));
    got.push_back(compiled(add, gfx942));
    got.push_back(compiled(softmax, wave32));
    // A compile that throws leaves nothing for the next (context and passes are made anew).
    CHECK_THROWS_WITH_AS(compiled(broken, gfx942), doctest::Contains("this assumption is false"), Error);
    got.push_back(compiled(softmax, gfx942));
    got.push_back(compiled(add, gfx942));
    // More compiles than a context serves (64): the next context's passes.
    for (int i = 0; i < 64; ++i)
      compiled(add, wave32);
    got.push_back(compiled(matmul, pipelined));
    got.push_back(compiled(softmax, gfx942));
    return got;
  });
  REQUIRE(kept.size() == 10);
  CHECK(kept[0] == freshAdd);
  CHECK(kept[1] == freshSoftmax);
  CHECK(kept[2] == freshMatmul);
  CHECK(kept[3] == freshFast);
  CHECK(kept[4] == freshAdd);
  CHECK(kept[5] == freshSoftmax32);
  CHECK(kept[6] == freshSoftmax);
  CHECK(kept[7] == freshAdd);
  CHECK(kept[8] == freshMatmul);
  CHECK(kept[9] == freshSoftmax);
}
