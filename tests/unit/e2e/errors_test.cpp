// Errors a user can cause that are found by the compiler (after tracing):
// each names the user's C++ line, and none crashes.
#include "e2e_common.hpp"

using namespace tessel;
using namespace e2e;

namespace {

constexpr int kConflictLine = __LINE__ + 5;
void outer_sum_of_loaded(Ptr<i32> x, Ptr<i32> out) {
  auto r = arange(0, 16);
  auto v = load(x + r);
  auto rows = expand_dims(v, 1);
  auto sum = rows + expand_dims(v, 0);
  store(out + expand_dims(r, 1) * 16 + expand_dims(r, 0), sum);
}

void copy(Ptr<f32> x, Ptr<f32> out, i32 n) {
  auto offs = arange(0, 128);
  store(out + offs, load(x + offs, offs < n), offs < n);
}

} // namespace

TEST_CASE("a tile used along two axes is an error at the user's line") {
  auto kernel = jit<outer_sum_of_loaded>();
  auto x = emulator().upload(std::vector<int32_t>(16, 1));
  auto out = poisoned<int32_t>(256);
  try {
    kernel.launch(emulator(), {1}, {}, x, out);
    FAIL("expected an error");
  } catch (const Error &e) {
    std::string msg = e.what();
    CAPTURE(msg);
    CHECK(contains(msg, "errors_test.cpp:" + std::to_string(kConflictLine) + ":"));
    CHECK(contains(msg, "used along two different axes"));
  }
  // The failed compile left nothing behind that breaks the next launch.
  auto ok = jit<copy>();
  auto cx = emulator().upload(randomFloats(128));
  auto cout = poisoned<float>(128);
  ok.launch(emulator(), {1}, {}, cx, cout, 100);
  CHECK(cout.download()[99] == cx.download()[99]);
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
