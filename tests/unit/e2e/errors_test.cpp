// Errors a user can cause that are found by the compiler (after tracing):
// each names the user's C++ line, and none crashes.
#include "e2e_common.hpp"

#include "tessel/lowering/compile.hpp"

#include <fstream>
#include <unistd.h>

using namespace tessel;
using namespace e2e;

namespace {

// Transposing a 256 x 128 f32 tile moves 128 KiB (132 KiB padded) through LDS.
constexpr int kTransposeLine = __LINE__ + 5;
void big_transpose(Ptr<f32> x, Ptr<f32> out) {
  auto r = arange(0, 256), c = arange(0, 128);
  auto in = expand_dims(r, 1) * 128 + expand_dims(c, 0);
  auto v = load(x + in);
  auto t = trans(v);
  store(out + expand_dims(c, 1) * 256 + expand_dims(r, 0), t);
}

// BLOCK f32 over the threads of the launch: 131072 over 4 waves of 64 is
// 512 registers per thread (1024 for its pointers); 1048576 over one wave,
// 16384 for its offsets.
constexpr int kHugeTileLine = __LINE__ + 2;
void huge_tile(Ptr<f32> x, Ptr<f32> out, Const<int> BLOCK) {
  auto offs = arange(0, BLOCK);
  store(out + offs, load(x + offs) * 2.0f);
}

constexpr int kAssumeLine = __LINE__ + 2;
void promised_multiple(Ptr<f32> x, i32 n) {
  assume(n % 128 == 0);
  auto offs = arange(0, 128);
  store(x + offs, load(x + offs, offs < n, 0.0f) + 1.0f, offs < n);
}

void copy(Ptr<f32> x, Ptr<f32> out, i32 n) {
  auto offs = arange(0, 128);
  store(out + offs, load(x + offs, offs < n), offs < n);
}

} // namespace

TEST_CASE("a kernel over the LDS budget fails at compile time, naming the line, bytes and limit") {
  auto kernel = jit<big_transpose>();
  auto x = emulator().upload(randomFloats(256 * 128));
  auto out = poisoned<float>(256 * 128);
  try {
    kernel.launch(emulator(), {1}, {}, x, out);
    FAIL("expected an error");
  } catch (const Error &e) {
    std::string msg = e.what();
    CAPTURE(msg);
    CHECK(contains(msg, "errors_test.cpp:" + std::to_string(kTransposeLine) + ":"));
    CHECK(contains(msg, "needs 135168 bytes of LDS"));
    CHECK(contains(msg, "gfx942 has 65536"));
    CHECK(contains(msg, "smaller block size"));
  }
  // The failed compile left nothing behind that breaks the next launch.
  auto ok = jit<copy>();
  auto cx = emulator().upload(randomFloats(128));
  auto cout = poisoned<float>(128);
  ok.launch(emulator(), {1}, {}, cx, cout, 100);
  CHECK(cout.download()[99] == cx.download()[99]);

  // gfx950 has 160 KiB of LDS: the same kernel fits and transposes.
  Device big = Device::emulator("gfx950");
  auto hx = randomFloats(256 * 128);
  auto bx = big.upload(hx);
  auto bout = big.alloc<float>(256 * 128);
  kernel.launch(big, {1}, {}, bx, bout);
  auto got = bout.download();
  size_t wrong = 0;
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 128; ++j)
      wrong += got[size_t(j) * 256 + i] != hx[size_t(i) * 128 + j];
  CHECK(wrong == 0);
  CHECK(kernel.runtime()->lastKernel()->ldsBytes == 135168);
  // The code object's group segment is exactly the plan.
  CHECK(contains(kernel.runtime()->lastKernel()->assembly(), ".amdhsa_group_segment_fixed_size 135168"));
}

TEST_CASE("num_warps must be a power of two within the workgroup limit") {
  auto kernel = jit<copy>();
  auto x = emulator().upload(randomFloats(128));
  auto out = poisoned<float>(128);
  for (unsigned warps : {0u, 3u, 32u}) {
    CAPTURE(warps);
    try {
      kernel.launch(emulator(), {1}, {.num_warps = warps}, x, out, 128);
      FAIL("expected an error");
    } catch (const Error &e) {
      CHECK(contains(e.what(), "num_warps must be a power of two"));
    }
  }
}

TEST_CASE("a tile over a thread's 256 registers compiles and runs (as Triton's does); past 8192 it is an error at its line") {
  auto kernel = jit<huge_tile>();
  auto hx = randomFloats(131072);
  auto x = emulator().upload(hx);
  auto out = poisoned<float>(131072);
  kernel.launch(emulator(), {1}, {.num_warps = 4}, x, out, 131072); // 512 registers per thread
  auto got = out.download();
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i)
    wrong += got[i] != hx[i] * 2.0f;
  CHECK(wrong == 0);

  auto big = emulator().alloc<float>(1 << 20);
  try {
    kernel.launch(emulator(), {1}, {.num_warps = 1}, big, big, 1 << 20);
    FAIL("expected an error");
  } catch (const Error &e) {
    std::string msg = e.what();
    CAPTURE(msg);
    CHECK(contains(msg, "errors_test.cpp:" + std::to_string(kHugeTileLine) + ":"));
    CHECK(contains(msg, "this tile ([1048576] i32) needs 16384 registers per thread: 1 wave of 64 threads share it; "
                        "a thread has 256 (more spill to scratch memory), and tessel compiles at most 8192 per tile; "
                        "use a smaller block or more warps (num_warps)"));
    CHECK_FALSE(contains(msg, "see current operation"));
  }
}

TEST_CASE("a failed launch names the line of the launch") {
  auto kernel = jit<copy>();
  auto x = emulator().upload(randomFloats(128));
  auto out = poisoned<float>(128);
  int line = __LINE__ + 2;
  try {
    kernel.launch(emulator(), {1}, {.num_warps = 3}, x, out, 128);
    FAIL("expected an error");
  } catch (const Error &e) {
    std::string msg = e.what();
    CAPTURE(msg);
    CHECK(contains(msg, "errors_test.cpp:" + std::to_string(line) + ": launching copy: "));
    CHECK(contains(msg, "num_warps must be a power of two"));
  }
}

TEST_CASE("an assumption the launch's own arguments break is an error at its line") {
  auto kernel = jit<promised_multiple>();
  auto x = emulator().upload(randomFloats(128));
  try {
    kernel.launch(emulator(), {1}, {.num_warps = 1}, x, 1);
    FAIL("expected an error");
  } catch (const Error &e) {
    std::string msg = e.what();
    CAPTURE(msg);
    CHECK(contains(msg, "errors_test.cpp:" + std::to_string(kAssumeLine) + ":"));
    CHECK(contains(msg, "this assumption is false for the arguments of this launch"));
  }
  // Kept, it runs.
  auto before = x.download();
  kernel.launch(emulator(), {1}, {.num_warps = 1}, x, 128);
  CHECK(x.download()[5] == before[5] + 1.0f);
}

namespace {
// Four 4096-element tiles live at once in one wave of 32 (gfx1100): 512 registers.
void spilling(Ptr<f32> a, Ptr<f32> b, Ptr<f32> c, Ptr<f32> d, Ptr<f32> out) {
  auto offs = arange(0, 4096);
  auto va = load(a + offs), vb = load(b + offs), vc = load(c + offs), vd = load(d + offs);
  store(out + offs, va * vb + vc * vd + va * vd + vb * vc);
}
} // namespace

TEST_CASE("a kernel that spills registers says so when it is compiled") {
  std::string log = std::string(TESSEL_BINARY_DIR) + "/spill-warning.txt";
  auto a = emulator().alloc<float>(8192), b = emulator().alloc<float>(8192),
       c = emulator().alloc<float>(8192), d = emulator().alloc<float>(8192),
       out = emulator().alloc<float>(8192);
  // Compiled directly (no cache): the warning comes with every compile.
  bool failed = false;
  std::string text = stderrOf(log, [&] {
    try {
      detail::TraceRequest request = jit<spilling>().trace(a, b, c, d, out);
      compileTrace(request.trace, request.spec, {"gfx1100", 1});
    } catch (...) {
      failed = true;
    }
  });
  CAPTURE(text);
  CHECK_FALSE(failed);
  CHECK(contains(text, "tessel: warning: kernel 'spilling' spills"));
  CHECK(contains(text, "errors_test.cpp:"));
}
