// Kernels that once produced wrong results: masks whose constancy the axis
// analysis overclaimed through non-elementwise ops (a vector access then
// touched masked-off elements), and scans of tiles in slice layouts.
#include "e2e_common.hpp"

using namespace tessel;
using namespace e2e;

namespace {

// A mask computed through a scan, a join/split, a transpose or a reduction;
// each equals `offs < n` (or a per-column predicate).
void scan_mask(Ptr<f32> x, Ptr<f32> y, i32 n, Const<int> B) {
  auto offs = arange(0, B);
  auto mask = cumsum(full<int32_t>({B}, 1), 0) <= n;
  store(y + offs, load(x + offs, mask, 0.f), mask);
}
void split_mask(Ptr<f32> x, Ptr<f32> y, i32 n, Const<int> B) {
  auto offs = arange(0, B);
  auto [a, b] = split(join(offs, offs));
  auto mask = a < n;
  store(y + offs, load(x + offs, mask, 0.f), mask);
}
void trans_mask(Ptr<f32> x, Ptr<f32> y, i32 n, Const<int> R, Const<int> C) {
  auto offs = expand_dims(arange(0, R), 1) * C + expand_dims(arange(0, C), 0);
  auto colIndex = trans(broadcast_to(expand_dims(arange(0, C), 1), {C, R}));
  auto mask = colIndex < n;
  store(y + offs, load(x + offs, mask, 0.f), mask);
}
void reduce_mask(Ptr<f32> x, Ptr<f32> y, Ptr<f32> z, Const<int> R, Const<int> C) {
  auto cols = arange(0, C);
  auto offs = expand_dims(arange(0, R), 1) * C + expand_dims(cols, 0);
  auto mask = sum(load(x + offs), 0) > 0.f;
  store(z + cols, load(y + cols, mask, -1.f), mask);
}

// Scans of a reduction result and of a tile that feeds expand_dims.
void scan_of_sum(Ptr<f32> x, Ptr<f32> out, Const<int> R, Const<int> C) {
  auto rows = arange(0, R);
  auto offs = expand_dims(rows, 1) * C + expand_dims(arange(0, C), 0);
  store(out + rows, cumsum(sum(load(x + offs), 1), 0));
}
void scan_then_expand(Ptr<f32> x, Ptr<f32> out, Const<int> R, Const<int> C) {
  auto rows = arange(0, R);
  auto c = cumsum(load(x + rows), 0);
  auto offs = expand_dims(rows, 1) * C + expand_dims(arange(0, C), 0);
  store(out + offs, broadcast_to(expand_dims(c, 1), {R, C}));
}

bool untouched(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits == 0xA5A5A5A5u;
}

} // namespace

TEST_CASE("masks computed through scans, joins, transposes and reductions guard every element") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    INFO(arch);
    Device dev = Device::emulator(arch);
    const int B = 256, n = 5;
    std::vector<float> hx(B);
    for (int i = 0; i < B; ++i)
      hx[i] = float(i + 1);
    auto x = dev.upload(hx);
    for (int which = 0; which < 2; ++which) {
      INFO((which ? "split" : "scan"));
      auto y = poisoned<float>(B);
      if (which == 0)
        jit<scan_mask>().launch(dev, {1}, {.num_warps = 4}, x, y, n, B);
      else
        jit<split_mask>().launch(dev, {1}, {.num_warps = 4}, x, y, n, B);
      auto got = y.download();
      size_t wrong = 0;
      for (int i = 0; i < B; ++i)
        wrong += i < n ? got[i] != hx[i] : !untouched(got[i]);
      CHECK(wrong == 0);
    }
    {
      const int R = 16, C = 64;
      auto hx2 = randomFloats(R * C);
      auto x2 = dev.upload(hx2);
      auto y = poisoned<float>(R * C);
      jit<trans_mask>().launch(dev, {1}, {.num_warps = 4}, x2, y, n, R, C);
      auto got = y.download();
      size_t wrong = 0;
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
          wrong += c < n ? got[r * C + c] != hx2[r * C + c] : !untouched(got[r * C + c]);
      CHECK(wrong == 0);
    }
    {
      const int R = 16, C = 64;
      std::vector<float> hx3(R * C), hy(C);
      for (int c = 0; c < C; ++c) {
        hy[c] = float(c);
        for (int r = 0; r < R; ++r)
          hx3[r * C + c] = c % 3 == 0 ? 1.f : -1.f;
      }
      auto x3 = dev.upload(hx3), y = dev.upload(hy);
      auto z = poisoned<float>(C);
      jit<reduce_mask>().launch(dev, {1}, {.num_warps = 4}, x3, y, z, R, C);
      auto got = z.download();
      size_t wrong = 0;
      for (int c = 0; c < C; ++c)
        wrong += c % 3 == 0 ? got[c] != hy[c] : !untouched(got[c]);
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("scans of tiles in slice layouts") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    INFO(arch);
    Device dev = Device::emulator(arch);
    const int R = 64, C = 64;
    std::vector<float> hx(R * C);
    for (int i = 0; i < R * C; ++i)
      hx[i] = float((i * 7) % 5 - 2);
    auto x = dev.upload(hx);
    {
      auto out = poisoned<float>(R);
      jit<scan_of_sum>().launch(dev, {1}, {.num_warps = 4}, x, out, R, C);
      auto got = out.download();
      double acc = 0;
      size_t wrong = 0;
      for (int r = 0; r < R; ++r) {
        for (int c = 0; c < C; ++c)
          acc += hx[r * C + c];
        wrong += got[r] != acc;
      }
      CHECK(wrong == 0);
    }
    {
      auto out = poisoned<float>(R * C);
      jit<scan_then_expand>().launch(dev, {1}, {.num_warps = 4}, x, out, R, C);
      auto got = out.download();
      double acc = 0;
      size_t wrong = 0;
      for (int r = 0; r < R; ++r) {
        acc += hx[r];
        for (int c = 0; c < C; ++c)
          wrong += got[r * C + c] != acc;
      }
      CHECK(wrong == 0);
    }
  }
}

namespace {
// Index tiles built with / and % by constants: of non-negative offsets (runs
// kept, vectorized) and of offsets that go negative (C++ truncation: a
// quotient's steps are not where a floor's would be; nothing may be assumed).
void div_rem_gather(Ptr<f32> x, Ptr<f32> q, Ptr<f32> r, Const<int> SHIFT) {
  auto offs = arange(0, 256) - SHIFT;
  store(q + arange(0, 256), load(x + 512 + offs / 4));
  store(r + arange(0, 256), load(x + 512 + offs % 12));
}
} // namespace

TEST_CASE("/ and % by constants index correctly for non-negative and negative offsets") {
  auto hx = randomFloats(1024);
  auto x = emulator().upload(hx);
  for (int shift : {0, 100, 3}) {
    CAPTURE(shift);
    auto q = poisoned<float>(256), r = poisoned<float>(256);
    jit<div_rem_gather>().launch(emulator(), {1}, {}, x, q, r, shift);
    auto gq = q.download(), gr = r.download();
    size_t bad = 0;
    for (int i = 0; i < 256; ++i) {
      const int o = i - shift; // C++ truncating division and remainder, as the kernel's
      bad += gq[size_t(i)] != hx[size_t(512 + o / 4)];
      bad += gr[size_t(i)] != hx[size_t(512 + o % 12)];
    }
    CHECK(bad == 0);
  }
}
