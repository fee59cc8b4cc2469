// Bad input and hostile conditions through the public API: each gives a clear
// tessel::Error naming the problem (and the launch's C++ line), never a
// crash, a hang, a silent wrong result or a damaged cache.
#include "e2e_common.hpp"

#include <atomic>
#include <barrier>
#include <filesystem>
#include <thread>
#include <vector>

using namespace tessel;
using namespace e2e;

namespace {

void hard_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

} // namespace

TEST_CASE("many threads making the first launch of one kernel object share one runtime") {
  constexpr int kThreads = 8, kRounds = 6;
  constexpr int n = 1000;
  auto hx = randomFloats(n), hy = randomFloats(n);
  auto x = emulator().upload(hx), y = emulator().upload(hy);
  for (int round = 0; round < kRounds; ++round) {
    auto kernel = jit<hard_add>();
    std::vector<Buffer<float>> outs;
    for (int t = 0; t < kThreads; ++t)
      outs.push_back(poisoned<float>(n));
    std::barrier start(kThreads);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        try {
          kernel.launch(emulator(), {cdiv(n, 128)}, {.num_warps = 2}, x, y, outs[t], n, 128);
        } catch (...) {
          ++failures;
        }
      });
    for (auto &th : threads)
      th.join();
    CHECK(failures == 0);
    REQUIRE(kernel.runtime() != nullptr);
    const auto &stats = kernel.runtime()->stats();
    CHECK(stats.launches == kThreads);
    CHECK(stats.compiles + stats.diskHits == 1);
    if (round == 0) // a fresh cache directory per test run: the first round compiles
      CHECK(stats.compiles <= 1);
    for (int t = 0; t < kThreads; ++t) {
      auto got = outs[t].download();
      CHECK(got[0] == hx[0] + hy[0]);
      CHECK(got[n - 1] == hx[n - 1] + hy[n - 1]);
    }
  }
}

TEST_CASE("copies of a kernel made before its first launch share its cache") {
  auto kernel = jit<hard_add>();
  auto copy = kernel;
  constexpr int n = 64;
  auto x = emulator().upload(randomFloats(n)), y = emulator().upload(randomFloats(n));
  auto out = poisoned<float>(n);
  kernel.launch(emulator(), {1}, {}, x, y, out, n, 64);
  REQUIRE(copy.runtime() != nullptr);
  CHECK(copy.runtime() == kernel.runtime());
  copy.launch(emulator(), {1}, {}, x, y, out, n, 64);
  CHECK(kernel.runtime()->stats().launches == 2);
  CHECK(kernel.runtime()->stats().memoryHits == 1);

  auto moved = std::move(copy);
  CHECK(moved.runtime() == kernel.runtime());
  std::string msg = errorOf([&] { copy.launch(emulator(), {1}, {}, x, y, out, n, 64); });
  CHECK(contains(msg, "moved from"));
}

namespace {

const Kernel<Ptr<f32>, Const<int>> &selfLauncher();
Buffer<float> *gSelfBuffer = nullptr;

// Launches itself from its own body (depth 0 only): a user error, not a deadlock.
void self_launch(Ptr<f32> out, Const<int> DEPTH) {
  if (DEPTH == 0)
    selfLauncher().launch(emulator(), {1}, {}, *gSelfBuffer, 1);
  store(out + arange(0, 16), zeros<float>({16}));
}
const Kernel<Ptr<f32>, Const<int>> &selfLauncher() {
  static const auto k = jit<self_launch>();
  return k;
}

// Launches a different kernel from its body: an Error too.
void launches_other(Ptr<f32> out) {
  constexpr int n = 16;
  static auto add = jit<hard_add>();
  auto x = emulator().upload(std::vector<float>(n, 1.f)), y = emulator().upload(std::vector<float>(n, 2.f));
  add.launch(emulator(), {1}, {}, x, y, *gSelfBuffer, n, 16);
  store(out + arange(0, 16), zeros<float>({16}) + 5.f);
}

} // namespace

TEST_CASE("a kernel launched while a kernel is traced (itself or another) is an Error, not a deadlock") {
  auto buffer = poisoned<float>(16);
  gSelfBuffer = &buffer;
  auto out = poisoned<float>(16);
  std::string msg = errorOf([&] { selfLauncher().launch(emulator(), {1}, {}, out, 0); });
  CAPTURE(msg);
  CHECK(contains(msg, "kernel self_launch was launched while it is being traced"));
  CHECK(contains(msg, "hardening_test.cpp:"));
  // The failed trace left the kernel usable.
  selfLauncher().launch(emulator(), {1}, {}, out, 1);
  CHECK(out.download()[3] == 0.f);

  // Launching another kernel inside a trace is an Error; nothing runs.
  auto other = jit<launches_other>();
  auto before = buffer.download();
  msg = errorOf([&] { other.launch(emulator(), {1}, {}, out); });
  CAPTURE(msg);
  CHECK(contains(msg, "kernel hard_add was launched while kernel launches_other is being traced: a kernel's body "
                      "cannot launch kernels (it runs once, at trace time); launch it from host code, or call its "
                      "function from the body to make its ops part of launches_other"));
  CHECK(contains(msg, "hardening_test.cpp:"));
  CHECK(buffer.download() == before);
  gSelfBuffer = nullptr;
}

TEST_CASE("null, empty, moved-from and foreign-device pointer arguments are Errors naming the argument") {
  auto add = jit<hard_add>();
  constexpr int n = 64;
  auto x = emulator().upload(randomFloats(n)), y = emulator().upload(randomFloats(n));
  auto out = poisoned<float>(n);
  auto launch = [&](const auto &a, const auto &b) {
    return errorOf([&] { add.launch(emulator(), {1}, {}, a, b, out, n, 64); });
  };
  std::string msg = launch(static_cast<float *>(nullptr), y);
  CAPTURE(msg);
  CHECK(contains(msg, "hardening_test.cpp:"));
  CHECK(contains(msg, "hard_add: argument 0 (Ptr<f32>) is a null pointer"));
  msg = launch(x, Buffer<float>{});
  CHECK(contains(msg, "argument 1 (Ptr<f32>) is a null pointer (an empty or moved-from Buffer)"));
  auto taken = std::move(y);
  msg = launch(x, y);
  CHECK(contains(msg, "argument 1 (Ptr<f32>) is a null pointer (an empty or moved-from Buffer)"));

  // A buffer of the (fake) HIP GPU on the emulator, and the other way round.
  setenv("TESSEL_HIP_LIBRARY", TESSEL_FAKE_HIP_LIBRARY, 1); // as hip_fake_test.cpp, for this process
  Device gpu = Device::hip();
  auto foreign = gpu.upload(randomFloats(n));
  msg = launch(x, foreign);
  CHECK(contains(msg, "argument 1 (Ptr<f32>) is a Buffer on " + gpu.name() +
                          " but the launch is on emulator (gfx942)"));
  msg = errorOf([&] { add.launch(gpu, {1}, {}, foreign, x, out, n, 64); });
  CHECK(contains(msg, "argument 1 (Ptr<f32>) is a Buffer on emulator (gfx942) but the launch is on " + gpu.name()));
  // Without a Device the first Buffer's device is the launch's: the others must match it.
  msg = errorOf([&] { add.launch({1}, {}, foreign, x, out, n, 64); });
  CHECK(contains(msg, "argument 1 (Ptr<f32>) is a Buffer on emulator (gfx942) but the launch is on " + gpu.name()));
  // Every emulator reads every emulator's buffers (host memory).
  Device other = Device::emulator("gfx950");
  auto shared = other.upload(randomFloats(n));
  add.launch(emulator(), {1}, {}, x, shared, out, n, 64);
  CHECK(out.download()[7] == x.download()[7] + shared.download()[7]);

  // Nothing was compiled or launched for the bad calls; a good one still works.
  add.launch(emulator(), {1}, {}, x, taken, out, n, 64);
  CHECK(out.download()[5] == x.download()[5] + taken.download()[5]);
}

TEST_CASE("a num_warps whose workgroup size overflows is an Error and leaves no cache entry") {
  auto add = jit<hard_add>();
  constexpr int n = 64;
  auto x = emulator().upload(randomFloats(n)), y = emulator().upload(randomFloats(n));
  auto out = poisoned<float>(n);
  const unsigned warps = 1u << 26; // * 64 lanes = 2^32 threads: 0 in 32 bits
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::string msg = errorOf([&] { add.launch(emulator(), {1}, {.num_warps = warps}, x, y, out, n, 64); });
    CAPTURE(msg);
    CHECK(contains(msg, "hardening_test.cpp:"));
    CHECK(contains(msg, "num_warps"));
    CHECK(contains(msg, std::to_string(warps)));
    CHECK_FALSE(contains(msg, "compiled without a workgroup size"));
    if (add.runtime())
      CHECK(add.runtime()->stats().diskHits == 0); // the bad kernel was never stored
  }
}

namespace {
size_t threadCount() {
  size_t n = 0;
  for ([[maybe_unused]] auto &task : std::filesystem::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}
} // namespace

TEST_CASE("launching on Device::emulator() made in each call makes no new device per call") {
  auto add = jit<hard_add>();
  constexpr int n = 64;
  auto x = emulator().upload(randomFloats(n)), y = emulator().upload(randomFloats(n));
  auto out = poisoned<float>(n);
  add.launch(Device::emulator(), {1}, {}, x, y, out, n, 64);
  const size_t threads = threadCount();
  for (int i = 0; i < 100; ++i)
    add.launch(Device::emulator(), {1}, {}, x, y, out, n, 64);
  CHECK(threadCount() == threads);
  CHECK(add.runtime()->stats().compiles + add.runtime()->stats().diskHits == 1);
  CHECK(add.runtime()->stats().memoryHits == 100);
}

TEST_CASE("a grid with a zero dimension or too many workgroups is an Error naming the grid") {
  auto add = jit<hard_add>();
  constexpr int n = 64;
  auto x = emulator().upload(randomFloats(n)), y = emulator().upload(randomFloats(n));
  auto out = poisoned<float>(n);
  auto launch = [&](Dim3 grid) { return errorOf([&] { add.launch(emulator(), grid, {}, x, y, out, n, 64); }); };
  std::string msg = launch({0, 1, 1});
  CAPTURE(msg);
  CHECK(contains(msg, "hardening_test.cpp:"));
  CHECK(contains(msg, "the grid {0, 1, 1} has a zero dimension"));
  CHECK(contains(launch({4, 0, 1}), "the grid {4, 0, 1} has a zero dimension"));
  CHECK(contains(launch({4, 2, 0}), "the grid {4, 2, 0} has a zero dimension"));
  // 2^22 * 2^21 * 2^21 = 2^64 workgroups: 0 in 64 bits.
  msg = launch({1u << 22, 1u << 21, 1u << 21});
  CHECK(contains(msg, "the grid {4194304, 2097152, 2097152} has more than 2^64 workgroups"));
  msg = launch({UINT32_MAX, 1, 1});
  CHECK(contains(msg, "the grid {4294967295, 1, 1} of workgroups of 256 threads has more than 2^32 - 1 work-items along x"));
  // Nothing ran.
  auto got = out.download();
  uint32_t bits;
  std::memcpy(&bits, &got[0], 4);
  CHECK(bits == 0xA5A5A5A5u);
}

TEST_CASE("a grid braced from int values launches; a zero or negative one is the grid's Error at the launch's line") {
  auto add = jit<hard_add>();
  const int n = 1000;
  auto hx = randomFloats(n), hy = randomFloats(n);
  auto x = emulator().upload(hx), y = emulator().upload(hy);
  auto out = poisoned<float>(n);
  int blocks = (n + 63) / 64, one = 1;
  add.launch(emulator(), {blocks}, {}, x, y, out, n, 64);   // {m}, an int
  add.launch(emulator(), {blocks, one}, {}, x, y, out, n, 64); // {m, n}
  add.launch({blocks, one, one}, {}, x, y, out, n, 64);     // the Buffers' device
  add.launch(emulator(), {size_t(blocks)}, {}, x, y, out, n, 64);
  auto got = out.download();
  size_t wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += got[i] != hx[i] + hy[i];
  CHECK(wrong == 0);
  const std::string here = std::string(__FILE__) + ":";
  int zero = 0, negative = -3;
  int at = __LINE__ + 1;
  std::string msg = errorOf([&] { add.launch(emulator(), {zero}, {}, x, y, out, n, 64); });
  CHECK(msg == here + std::to_string(at) + ": launching hard_add: kernel 'hard_add': the grid {0, 1, 1} has a zero "
                                           "dimension; each of x, y, z must be at least 1");
  at = __LINE__ + 1;
  msg = errorOf([&] { add.launch(emulator(), {blocks, negative}, {}, x, y, out, n, 64); });
  CHECK(msg == here + std::to_string(at) + ": launching hard_add: kernel 'hard_add': the grid {16, -3, 1} has a "
                                           "negative dimension; each of x, y, z must be at least 1");
  at = __LINE__ + 1;
  msg = errorOf([&] { add.launch(emulator(), {int64_t{1} << 32}, {}, x, y, out, n, 64); });
  CHECK(msg == here + std::to_string(at) + ": launching hard_add: kernel 'hard_add': the grid {4294967296, 1, 1} has "
                                           "a dimension above 4294967295 (grid dimensions are uint32_t)");
  at = __LINE__ + 1;
  msg = errorOf([&] { add.launch(emulator(), {one, one, int64_t{INT64_MIN}}, {}, x, y, out, n, 64); });
  CHECK(msg == here + std::to_string(at) + ": launching hard_add: kernel 'hard_add': the grid {1, 1, "
                                           "-9223372036854775808} has a negative dimension; each of x, y, z must be "
                                           "at least 1");
  // Nothing ran.
  auto poisonedOut = poisoned<float>(n);
  msg = errorOf([&] { add.launch(emulator(), {negative}, {}, x, y, poisonedOut, n, 64); });
  uint32_t bits;
  std::memcpy(&bits, &poisonedOut.download()[0], 4);
  CHECK(bits == 0xA5A5A5A5u);
}
