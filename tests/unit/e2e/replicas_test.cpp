// Tiles smaller than the threads that cover them are held by several
// threads; only one of them may store each element (on a GPU the others'
// stores would race), and bool tiles are bytes in memory.
#include "e2e_common.hpp"

using namespace tessel;
using namespace e2e;

namespace {

void double_in_place(Ptr<f32> x, Const<int> B) {
  auto offs = arange(0, B);
  store(x + offs, load(x + offs) * 2.0f);
}

// A row vector broadcast over rows: the [1, C] slice is held by every row of threads.
void add_to_row(Ptr<f32> x, Ptr<f32> acc, Const<int> R, Const<int> C) {
  auto cols = arange(0, C);
  auto tile = load(x + expand_dims(arange(0, R), 1) * C + expand_dims(cols, 0));
  store(acc + cols, load(acc + cols) + sum(tile, 0));
}

void scalar_in_place(Ptr<f32> x) { store(x, load(x) + 1.0f); }

void negate_bools(Ptr<i1> in, Ptr<i1> out, i32 n) {
  auto offs = arange(0, 64);
  store(out + offs, !load(in + offs));
  auto m = offs < n;
  store(out + 64 + offs, load(in + offs, m, true) & load(in + offs, m, false), m);
}

} // namespace

TEST_CASE("an in-place update of a tile smaller than the workgroup happens once") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    Device dev = Device::emulator(arch);
    for (int B : {1, 16, 64, 256, 1024}) {
      for (unsigned warps : {1u, 4u, 8u}) {
        INFO(arch << " B = " << B << " warps = " << warps);
        auto hx = randomFloats(B);
        auto x = dev.upload(hx);
        jit<double_in_place>().launch(dev, {1}, {.num_warps = warps}, x, B);
        auto got = x.download();
        size_t wrong = 0;
        for (int i = 0; i < B; ++i)
          wrong += got[i] != hx[i] * 2.0f;
        CHECK(wrong == 0);
      }
    }
  }
}

TEST_CASE("a slice held by every row of threads is stored once") {
  const int R = 16, C = 32;
  auto hx = randomInts<int32_t>(R * C, -4, 4);
  std::vector<float> fx(hx.begin(), hx.end());
  std::vector<float> hacc(C, 1.0f);
  auto x = emulator().upload(fx);
  auto acc = emulator().upload(hacc);
  jit<add_to_row>().launch(emulator(), {1}, {.num_warps = 4}, x, acc, R, C);
  auto got = acc.download();
  size_t wrong = 0;
  for (int c = 0; c < C; ++c) {
    float want = 1.0f;
    for (int r = 0; r < R; ++r)
      want += fx[r * C + c];
    wrong += got[c] != want;
  }
  CHECK(wrong == 0);

  auto s = emulator().upload(std::vector<float>{41.0f});
  jit<scalar_in_place>().launch(emulator(), {1}, {.num_warps = 4}, s);
  CHECK(s.download()[0] == 42.0f);
}

TEST_CASE("bool tiles load and store as bytes") {
  std::vector<uint8_t> bytes(64);
  for (int i = 0; i < 64; ++i)
    bytes[i] = (i * 7) % 3 == 0;
  std::vector<bool> unused;
  auto in = emulator().alloc<bool>(64), out = emulator().alloc<bool>(128);
  emulator().impl().copyToDevice(in.devicePtr(), bytes.data(), 64);
  std::vector<uint8_t> junk(128, 0xA5);
  emulator().impl().copyToDevice(out.devicePtr(), junk.data(), 128);
  int n = 37;
  jit<negate_bools>().launch(emulator(), {1}, {.num_warps = 1}, in, out, n);
  std::vector<uint8_t> got(128);
  emulator().impl().copyToHost(got.data(), out.devicePtr(), 128);
  size_t wrong = 0;
  for (int i = 0; i < 64; ++i) {
    wrong += got[i] != (bytes[i] ? 0 : 1);
    wrong += got[64 + i] != (i < n ? bytes[i] : 0xA5);
  }
  CHECK(wrong == 0);
}

namespace {
// The tile loaded before the in-place update is what moves through LDS, even
// when the threads holding copies of it load after an owner's store.
void update_then_move(Ptr<i32> x, Ptr<i32> y, Ptr<i32> z, Const<int> B) {
  auto o = arange(0, B);
  auto t = load(x + o);
  store(x + o, t + 100);
  auto rr = expand_dims(arange(0, 2), 1) * (B / 2) + expand_dims(arange(0, B / 2), 0);
  store(y + rr, reshape(t, {2, B / 2}));
  store(z + arange(0, 1), full({1}, 0) + sum(t, 0));
}
} // namespace

TEST_CASE("data moved between threads after an in-place update is the loaded copy") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    Device dev = Device::emulator(arch);
    for (int B : {16, 64, 256}) {
      for (unsigned warps : {1u, 4u}) {
        INFO(arch << " B = " << B << " warps = " << warps);
        std::vector<int32_t> hx(B);
        for (int i = 0; i < B; ++i)
          hx[i] = i;
        auto x = dev.upload(hx);
        auto y = poisoned<int32_t>(B), z = poisoned<int32_t>(1);
        jit<update_then_move>().launch(dev, {1}, {.num_warps = warps}, x, y, z, B);
        auto gx = x.download(), gy = y.download();
        size_t wrong = 0;
        for (int i = 0; i < B; ++i) {
          wrong += gx[i] != i + 100;
          wrong += gy[i] != i;
        }
        CHECK(wrong == 0);
        CHECK(z.download()[0] == B * (B - 1) / 2);
      }
    }
  }
}
