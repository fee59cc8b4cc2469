// Shape changes that move data between threads through LDS: reshape,
// trans/permute, join, split, and the layout conversions the compiler
// inserts when one tile is needed in two layouts.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

using namespace tessel;
using namespace e2e;

namespace {

enum Op { kTrans, kReshape, kJoinSplit, kOuterOfLoaded };

// x holds R*C floats. Each op writes R*C floats to out.
void shape_ops(Ptr<f32> x, Ptr<f32> out, Const<int> R, Const<int> C, Const<int> OP) {
  auto r = arange(0, R), c = arange(0, C);
  auto offs = expand_dims(r, 1) * C + expand_dims(c, 0);
  auto v = load(x + offs);
  switch (int(OP)) {
  case kTrans: // out is C x R
    store(out + expand_dims(c, 1) * R + expand_dims(r, 0), trans(v));
    break;
  case kReshape: { // the same row-major elements as a C x R tile, doubled
    auto w = reshape(v, {C, R}) * 2.0f;
    store(out + expand_dims(c, 1) * R + expand_dims(r, 0), w);
    break;
  }
  case kJoinSplit: { // interleave the first row with the second, then split back, swapped
    auto flat = arange(0, C);
    auto a = load(x + flat), b = load(x + C + flat);
    auto [lo, hi] = split(join(a, b));
    auto both = join(hi * 10.0f, lo);
    auto pair = arange(0, 2);
    store(out + expand_dims(flat, 1) * 2 + expand_dims(pair, 0), both);
    break;
  }
  default: { // a loaded row used both as rows and as columns: out[i][j] = x[i] + x[j]
    auto row = load(x + c);
    auto sum = expand_dims(row, 1) + expand_dims(row, 0);
    store(out + expand_dims(c, 1) * C + expand_dims(c, 0), sum);
    break;
  }
  }
}

void checkShapeOp(Device &dev, int op, int R, int C, unsigned warps) {
  INFO("op " << op << ", " << R << "x" << C << ", warps " << warps << ", " << dev.arch());
  auto kernel = jit<shape_ops>();
  auto hx = randomFloats(size_t(R) * C);
  auto x = dev.upload(hx);
  size_t outElems = op == kJoinSplit ? size_t(2) * C : op == kOuterOfLoaded ? size_t(C) * C
                                                                           : size_t(R) * C;
  auto out = poisoned<float>(outElems);
  kernel.launch(dev, {1}, {.num_warps = warps}, x, out, R, C, op);
  auto got = out.download();
  size_t wrong = 0;
  if (op == kTrans) {
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j)
        wrong += got[size_t(j) * R + i] != hx[size_t(i) * C + j];
  } else if (op == kReshape) {
    for (size_t k = 0; k < size_t(R) * C; ++k)
      wrong += got[k] != hx[k] * 2.0f;
  } else if (op == kJoinSplit) {
    for (int j = 0; j < C; ++j) {
      wrong += got[2 * j] != hx[C + j] * 10.0f;
      wrong += got[2 * j + 1] != hx[j];
    }
  } else {
    for (int i = 0; i < C; ++i)
      for (int j = 0; j < C; ++j)
        wrong += got[size_t(i) * C + j] != hx[i] + hx[j];
  }
  CHECK(wrong == 0);
}

} // namespace

TEST_CASE("trans, reshape, join/split and inserted layout conversions") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    Device dev = Device::emulator(arch);
    for (int op : {kTrans, kReshape, kJoinSplit, kOuterOfLoaded})
      for (auto [R, C, warps] : {std::tuple{2, 64, 1u}, {16, 32, 4u}, {64, 16, 2u}, {8, 256, 8u}}) {
        // A C x C tile of pointers with C = 256 is over the register budget
        // (see errors_test.cpp); the outer product stops at 128.
        if (op == kOuterOfLoaded && C > 128)
          continue;
        checkShapeOp(dev, op, R, C, warps);
      }
  }
}

TEST_CASE("the inserted conversion shows in the tile IR") {
  auto kernel = jit<shape_ops>();
  auto x = emulator().upload(randomFloats(16 * 32));
  auto out = poisoned<float>(32 * 32);
  kernel.launch(emulator(), {1}, {}, x, out, 16, 32, int(kOuterOfLoaded));
  const CompiledKernel &k = *kernel.runtime()->lastKernel();
  CHECK(contains(k.tileIR, "tessel.convert_layout"));
  CHECK(k.ldsBytes >= 32 * 4);
}

namespace {
// Tiles of pointers move through LDS too: transposed, and (inserted by the
// compiler) converted when one pointer tile is used along both axes.
void pointer_tiles(Ptr<f32> x, Ptr<f32> y, Ptr<f32> z, Const<int> R, Const<int> C) {
  auto rows = arange(0, R), cols = arange(0, C);
  auto offs = expand_dims(rows, 1) * C + expand_dims(cols, 0);
  auto transposed = trans(x + offs); // [C, R] of pointers
  store(y + expand_dims(cols, 1) * R + expand_dims(rows, 0), load(transposed));
  auto p = x + cols; // one row of pointers, used as a column and as a row
  auto outer = load(expand_dims(p, 1)) + load(expand_dims(p, 0));
  store(z + expand_dims(cols, 1) * C + expand_dims(cols, 0), outer);
}
} // namespace

TEST_CASE("tiles of pointers through LDS") {
  const int R = 16, C = 32;
  auto hx = randomFloats(R * C);
  auto x = emulator().upload(hx);
  auto y = poisoned<float>(R * C), z = poisoned<float>(C * C);
  jit<pointer_tiles>().launch(emulator(), {1}, {.num_warps = 4}, x, y, z, R, C);
  auto gy = y.download(), gz = z.download();
  size_t wrong = 0;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      wrong += gy[size_t(c) * R + r] != hx[size_t(r) * C + c];
  for (int i = 0; i < C; ++i)
    for (int j = 0; j < C; ++j)
      wrong += gz[size_t(i) * C + j] != hx[i] + hx[j];
  CHECK(wrong == 0);
}

namespace {
// join of scalars and split of a 1-D pair give scalars back.
void scalar_pairs(Ptr<f32> x, Ptr<f32> out) {
  auto pair = load(x + arange(0, 2));
  auto [a, b] = split(pair);
  auto swapped = join(b * 2.0f, a);
  store(out + arange(0, 2), swapped);
  store(out + 2, a + b);
}
} // namespace

TEST_CASE("split of a 1-D pair and join of scalars") {
  std::vector<float> hx = {3.0f, -5.0f};
  auto x = emulator().upload(hx);
  auto out = poisoned<float>(3);
  jit<scalar_pairs>().launch(emulator(), {1}, {.num_warps = 1}, x, out);
  CHECK(out.download() == std::vector<float>{-10.0f, 3.0f, -2.0f});
}

namespace {
// gather along each axis of an 8 x 64 tile: by [8, 16] i32 indices along
// axis 1, and by [4, 64] i64 indices along axis 0.
void gathers(Ptr<f32> x, Ptr<int32_t> idx1, Ptr<int64_t> idx0, Ptr<f32> out1, Ptr<f32> out0) {
  auto r8 = expand_dims(arange(0, 8), 1), c64 = expand_dims(arange(0, 64), 0);
  auto v = load(x + r8 * 64 + c64);
  auto c16 = expand_dims(arange(0, 16), 0);
  store(out1 + r8 * 16 + c16, gather(v, load(idx1 + r8 * 16 + c16), 1));
  auto r4 = expand_dims(arange(0, 4), 1);
  store(out0 + r4 * 64 + c64, gather(v, load(idx0 + r4 * 64 + c64), 0));
}
} // namespace

TEST_CASE("gather within a tile along either axis, i32 and i64 indices; out-of-range indices read 0") {
  auto hx = randomFloats(8 * 64);
  auto h1 = randomInts<int32_t>(8 * 16, 0, 63);
  auto h0 = randomInts<int64_t>(4 * 64, 0, 7);
  h1[3] = -1, h1[17] = 64, h1[40] = 100000;
  h0[5] = int64_t(1) << 33, h0[6] = -8;
  for (unsigned warps : {1u, 4u}) {
    CAPTURE(warps);
    auto out1 = poisoned<float>(8 * 16), out0 = poisoned<float>(4 * 64);
    auto kernel = jit<gathers>();
    kernel.launch(emulator(), {1}, {.num_warps = warps}, emulator().upload(hx), emulator().upload(h1),
                  emulator().upload(h0), out1, out0);
    auto g1 = out1.download(), g0 = out0.download();
    size_t wrong = 0;
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 16; ++c) {
        int32_t i = h1[size_t(r * 16 + c)];
        wrong += g1[size_t(r * 16 + c)] != (i >= 0 && i < 64 ? hx[size_t(r * 64 + i)] : 0.0f);
      }
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 64; ++c) {
        int64_t i = h0[size_t(r * 64 + c)];
        wrong += g0[size_t(r * 64 + c)] != (i >= 0 && i < 8 ? hx[size_t(i * 64 + c)] : 0.0f);
      }
    CHECK(wrong == 0);
    CHECK(contains(kernel.runtime()->lastKernel()->tileIR, "tessel.gather"));
  }
}
