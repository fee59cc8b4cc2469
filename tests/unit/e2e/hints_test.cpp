// multiple_of / max_contiguous let loads vectorize where the analysis alone
// cannot prove alignment.
#include "e2e_common.hpp"

using namespace tessel;
using namespace e2e;

namespace {

// Copies 256 floats starting at `start`; with HINT the caller promises that
// start is a multiple of 4.
void copy_from(Ptr<f32> x, Ptr<f32> out, i32 start, Const<bool> HINT) {
  auto offs = start + arange(0, 256);
  if (HINT)
    offs = max_contiguous(multiple_of(offs, 4), 256);
  store(out + arange(0, 256), load(x + offs));
}

} // namespace

TEST_CASE("multiple_of and max_contiguous vectorize loads at a runtime offset") {
  auto plain = jit<copy_from>(), hinted = jit<copy_from>();
  auto hx = randomFloats(1024);
  auto x = emulator().upload(hx);
  for (int start : {20, 36, 100}) { // multiples of 4, not of 16
    INFO("start = " << start);
    auto out = poisoned<float>(256);
    plain.launch(emulator(), {1}, {.num_warps = 1}, x, out, start, false);
    CHECK(out.download() == std::vector<float>(hx.begin() + start, hx.begin() + start + 256));
    auto out2 = poisoned<float>(256);
    hinted.launch(emulator(), {1}, {.num_warps = 1}, x, out2, start, true);
    CHECK(out2.download() == std::vector<float>(hx.begin() + start, hx.begin() + start + 256));
  }
  CHECK_FALSE(contains(plain.runtime()->lastKernel()->assembly, "global_load_dwordx4"));
  CHECK(contains(hinted.runtime()->lastKernel()->assembly, "global_load_dwordx4"));
}
