// multiple_of / max_contiguous let loads vectorize where the analysis alone
// cannot prove alignment.
#include "e2e_common.hpp"

#include <regex>

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
  // Without the hint the load's alignment is unknown: one 4-byte load per
  // element (LLVM may still merge a thread's four into one unaligned
  // global_load_dwordx4 where the target allows it, as gfx942 does). With it,
  // the compiler itself emits 16-byte aligned vector loads.
  const auto &plainIR = plain.runtime()->lastKernel()->llvmIR();
  const auto &hintedIR = hinted.runtime()->lastKernel()->llvmIR();
  CHECK_FALSE(contains(plainIR, "load <4 x float>"));
  CHECK(contains(plainIR, "load float, ptr addrspace(1) %"));
  CHECK(contains(hintedIR, "load <4 x float>, ptr addrspace(1) %"));
  CHECK(contains(hintedIR, "align 16"));
  CHECK(contains(hinted.runtime()->lastKernel()->assembly(), "global_load_dwordx4"));
}

namespace {

// assume(N >= 1024) makes cols < N true for the first 1024 columns: the load
// of x needs no mask; the columns of the second tile (1024..2047) keep theirs.
void assumed_width(Ptr<float> x, Ptr<float> out, i32 N) {
  assume(N >= 1024);
  auto cols = arange(0, 1024);
  auto row = program_id(0) * N;
  store(out + row + cols, load(x + row + cols, cols < N, 0.0f) * 2.0f, cols < N);
  auto tail = 1024 + cols;
  store(out + row + tail, load(x + row + tail, tail < N, 0.0f) * 2.0f, tail < N);
}

} // namespace

TEST_CASE("range facts: assume(N >= C) folds the masks it makes always true") {
  auto kernel = jit<assumed_width>();
  const int N = 1500, rows = 2;
  auto hx = randomFloats(size_t(rows) * N);
  auto x = emulator().upload(hx);
  auto out = poisoned<float>(size_t(rows) * N);
  kernel.launch(emulator(), {rows}, {.num_warps = 4}, x, out, N);
  auto got = out.download();
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == hx[i] * 2.0f);
  const std::string &ir = kernel.runtime()->lastKernel()->tileIR;
  // One load keeps its mask (and its `other`), one has none; likewise the stores.
  // (the masked one through a buffer instruction whose range is the mask:
  // `tail < N` bounds its offsets; the unmasked one is at a scalar base plus
  // offsets, without a bound)
  std::regex maskedLoad(R"(tessel\.(load %\w+, %\w+, other|buffer_load %\w+\[%\w+\] bound))"),
      plainLoad(R"(tessel\.(load %\w+|buffer_load %\w+\[%\w+\]) [:{])");
  CHECK(matchCount(ir, maskedLoad) == 1);
  CHECK(matchCount(ir, plainLoad) == 1);
}
