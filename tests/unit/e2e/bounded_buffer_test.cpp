// Masks the buffer resource's range carries (tessel-use-buffer-ops' bound):
// `x < n` over the access's own offset tile, with every other conjunct and
// offset term uniform, becomes the resource's size; the program's results
// must be exactly what the mask says, including past-the-end rows, counts
// of zero or below, and `other` where the resource reads 0.
#include "e2e_common.hpp"

#include <cstring>

using namespace tessel;
using namespace e2e;

namespace {

// One row per program, BLOCK columns, rows and columns masked; every program
// also writes the row sum of what it loaded, unmasked (a row past M loaded
// `other` everywhere).
void masked_rows(Ptr<f32> in, Ptr<f32> out, Ptr<f32> sums, i32 M, i32 N, i32 stride, Const<int> BLOCK) {
  auto rows = program_id(0) + arange(0, 1);
  auto cols = arange(0, BLOCK);
  auto mask = expand_dims(rows < M, 1) & expand_dims(cols < N, 0);
  auto r = expand_dims(rows, 1);
  auto c = expand_dims(cols, 0);
  auto x = load(in + r * stride + c, mask, -7.0f);
  store(out + r * stride + c, x * 2.0f, mask);
  store(sums + rows, sum(x, 1));
}

// A 1-D masked copy that also writes what it loaded without a mask.
// 1024 elements over 128 threads: several groups per thread, so the masked
// accesses take a bounded resource (one group per thread would be a global
// access under one branch).
void copy_below(Ptr<f32> in, Ptr<f32> out, Ptr<f32> seen, i32 n) {
  auto offs = program_id(0) * 1024 + arange(0, 1024);
  auto x = load(in + offs, offs < n, 3.0f);
  store(out + offs, x, offs < n);
  store(seen + offs, x);
}

// Elements from a runtime start (>= 0) through small Buffers, masked by
// `start + i < n`: the resource is the argument itself and start + i the
// offset. A start whose elements are 2^30 floats in - past any Buffer under
// 2 GiB - must mask everything off, not wrap its byte offsets (4 * 2^30 =
// 2^32) back to the Buffer's first elements.
void copy_from_start(Ptr<f32> in, Ptr<f32> out, Ptr<f32> seen, i32 start, i32 n) {
  assume(start >= 0);
  auto offs = start + arange(0, 1024);
  auto x = load(in + offs, offs < n, 5.0f);
  store(out + offs, x, offs < n);
  store(seen + arange(0, 1024), x);
}

float poisonValue() {
  float f;
  uint32_t bits = 0xA5A5A5A5u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

} // namespace

TEST_CASE("bounded buffer accesses: rows past M read `other` and write nothing") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    auto kernel = jit<masked_rows>();
    const int M = 5, N = 201, stride = 211, programs = M + 2, BLOCK = 256;
    auto hin = randomFloats(size_t(programs) * stride);
    auto in = emulator().upload(hin);
    auto out = poisoned<float>(size_t(programs) * stride);
    auto sums = poisoned<float>(programs);
    kernel.launch(dev, {programs}, {.num_warps = 2}, in, out, sums, M, N, stride, BLOCK);
    auto got = out.download();
    auto gotSums = sums.download();
    const float poison = poisonValue();
    for (int row = 0; row < programs; ++row) {
      CAPTURE(row);
      double want = 0;
      for (int col = 0; col < BLOCK; ++col)
        want += row < M && col < N ? double(hin[size_t(row) * stride + col]) : -7.0;
      CHECK(relError(gotSums[row], want, 1e-3) < 1e-5);
      for (int col = 0; col < stride; ++col) {
        size_t i = size_t(row) * stride + col;
        if (row < M && col < N)
          REQUIRE(got[i] == hin[i] * 2.0f);
        else
          REQUIRE(std::memcmp(&got[i], &poison, sizeof poison) == 0);
      }
    }
    // The masks became the resources' ranges: no mask operand is left on
    // the buffer accesses, and `other` is one compare against the bound.
    const std::string &ir = kernel.runtime()->lastKernel()->tileIR;
    CHECK(contains(ir, "] bound %"));
    CHECK_FALSE(contains(ir, "tessel.load"));
    CHECK(contains(ir, "arith.cmpi ult"));
  }
}

TEST_CASE("bounded buffer accesses: a count of zero or below masks every element") {
  auto kernel = jit<copy_below>();
  const int size = 3 * 1024;
  auto hin = randomFloats(size);
  auto in = emulator().upload(hin);
  const float poison = poisonValue();
  for (int n : {-5, 0, 1, 200, size}) {
    CAPTURE(n);
    auto out = poisoned<float>(size);
    auto seen = poisoned<float>(size);
    kernel.launch(emulator(), {3}, {.num_warps = 2}, in, out, seen, n);
    auto got = out.download(), gotSeen = seen.download();
    for (int i = 0; i < size; ++i) {
      CAPTURE(i);
      if (i < n) {
        REQUIRE(got[i] == hin[i]);
        REQUIRE(gotSeen[i] == hin[i]);
      } else {
        REQUIRE(std::memcmp(&got[i], &poison, sizeof poison) == 0);
        REQUIRE(gotSeen[i] == 3.0f);
      }
    }
  }
  CHECK(contains(kernel.runtime()->lastKernel()->tileIR, "] bound %"));
}

TEST_CASE("bounded buffer accesses from the argument: a start past 2^30 floats wraps nothing back in") {
  auto kernel = jit<copy_from_start>();
  const int size = 1024 + 37;
  auto hin = randomFloats(size);
  auto in = emulator().upload(hin);
  const float poison = poisonValue();
  // 2^30 - 512: past the limit (2^32 - 1) / 4 - (1023 + 1) only by the
  // reach of the block's own offsets; its upper 512 lanes would wrap.
  for (auto [start, n] : {std::pair{0, 1000}, std::pair{37, 1061}, std::pair{1 << 30, (1 << 30) + 300},
                          std::pair{(1 << 30) + 5, (1 << 30) + 1000}, std::pair{(1 << 30) - 512, (1 << 30) + 512}}) {
    CAPTURE(start);
    CAPTURE(n);
    auto out = poisoned<float>(size);
    auto seen = poisoned<float>(1024);
    kernel.launch(emulator(), {1}, {.num_warps = 2}, in, out, seen, start, n);
    auto got = out.download(), gotSeen = seen.download();
    const bool far = start + 1024 > size;
    for (int i = 0; i < 1024; ++i) {
      CAPTURE(i);
      const bool valid = !far && start + i < n;
      REQUIRE(gotSeen[i] == (valid ? hin[size_t(start + i)] : 5.0f));
    }
    for (int i = 0; i < size; ++i) {
      CAPTURE(i);
      if (!far && i >= start && i < n)
        REQUIRE(got[i] == hin[i]);
      else
        REQUIRE(std::memcmp(&got[i], &poison, sizeof poison) == 0);
    }
  }
  const std::string &ir = kernel.runtime()->lastKernel()->tileIR;
  CHECK(contains(ir, "tessel.buffer_load %arg0["));
  CHECK(contains(ir, "] bound %"));
}
