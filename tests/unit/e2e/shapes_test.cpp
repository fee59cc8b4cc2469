// 2-D tiles, broadcasting, grids, constants and scalar accesses on the emulator.
#include "e2e_common.hpp"

using namespace tessel;
using namespace e2e;

namespace {

// out[r, c] = x[r, c] * scale + bias[c] over an M x N matrix with row stride.
void add_row_bias(Ptr<f32> x, Ptr<f32> bias, Ptr<f32> out, i32 M, i32 N, i32 stride, f32 scale,
                  Const<int> BM, Const<int> BN) {
  auto rows = program_id(0) * BM + arange(0, BM);
  auto cols = program_id(1) * BN + arange(0, BN);
  auto offs = expand_dims(rows, 1) * stride + expand_dims(cols, 0);
  auto mask = expand_dims(rows < M, 1) & expand_dims(cols < N, 0);
  auto b = load(bias + cols, cols < N, 0.0f);
  auto v = load(x + offs, mask) * scale + expand_dims(b, 0);
  store(out + offs, v, mask);
}

} // namespace

TEST_CASE("2-D tiles: row bias over odd matrix shapes and several block shapes") {
  auto kernel = jit<add_row_bias>();
  struct Case {
    int M, N, BM, BN;
  } cases[] = {{1, 1, 16, 16}, {1, 781, 1, 256}, {37, 1, 32, 1}, {67, 129, 16, 64},
               {128, 64, 64, 64}, {5, 1000, 4, 128}};
  for (auto [M, N, BM, BN] : cases) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(BM);
    CAPTURE(BN);
    int stride = N + 3;
    auto hx = randomFloats(size_t(M) * stride), hb = randomFloats(N);
    auto x = emulator().upload(hx), b = emulator().upload(hb);
    auto out = poisoned<float>(size_t(M) * stride);
    std::vector<float> before = out.download();
    float scale = 0.75f;
    kernel.launch(emulator(), {cdiv(M, BM), cdiv(N, BN)}, {.num_warps = 2}, x, b, out, M, N,
                  stride, scale, BM, BN);
    auto got = out.download();
    size_t wrong = 0, touched = 0;
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < stride; ++c) {
        size_t i = size_t(r) * stride + c;
        if (c < N) {
          // Two roundings in f32 (multiply, then add): judge the error
          // against the size of the operands, not of a result near zero.
          double want = double(hx[i]) * scale + hb[c];
          double scaleOfOperands = std::fabs(double(hx[i]) * scale) + std::fabs(hb[c]);
          wrong += std::fabs(got[i] - want) > 1e-6 * scaleOfOperands;
        }
        else
          touched += std::memcmp(&got[i], &before[i], sizeof(float)) != 0;
      }
    CHECK(wrong == 0);
    CHECK(touched == 0); // the padding past N is never written
  }
}

namespace {

// Writes, per program, its ids and the grid's extent.
void grid_ids(Ptr<i32> out) {
  auto pid = program_id(0) + program_id(1) * num_programs(0) +
             program_id(2) * num_programs(0) * num_programs(1);
  auto slot = arange(0, 8);
  auto values = where(slot == 0, full({8}, 0) + program_id(0),
                where(slot == 1, full({8}, 0) + program_id(1),
                where(slot == 2, full({8}, 0) + program_id(2),
                where(slot == 3, full({8}, 0) + num_programs(0),
                where(slot == 4, full({8}, 0) + num_programs(1),
                      full({8}, 0) + num_programs(2))))));
  store(out + pid * 8 + slot, values, slot < 6);
}

} // namespace

TEST_CASE("program_id and num_programs over a 3-D grid") {
  auto kernel = jit<grid_ids>();
  Dim3 grid{5, 3, 2};
  size_t programs = 5 * 3 * 2;
  auto out = poisoned<int32_t>(programs * 8);
  kernel.launch(emulator(), grid, {.num_warps = 1}, out);
  auto got = out.download();
  for (uint32_t z = 0; z < 2; ++z)
    for (uint32_t y = 0; y < 3; ++y)
      for (uint32_t x = 0; x < 5; ++x) {
        size_t p = x + y * 5 + z * 15;
        CAPTURE(p);
        CHECK(got[p * 8 + 0] == int(x));
        CHECK(got[p * 8 + 1] == int(y));
        CHECK(got[p * 8 + 2] == int(z));
        CHECK(got[p * 8 + 3] == 5);
        CHECK(got[p * 8 + 4] == 3);
        CHECK(got[p * 8 + 5] == 2);
      }
}

namespace {

// Constants, broadcast_to, zeros, where, and a scalar load and store.
void fill_and_clamp(Ptr<f32> x, Ptr<f32> out, Ptr<f32> total, i32 n, f32 limit) {
  auto offs = arange(0, 64);
  auto grid = broadcast_to(expand_dims(offs, 0), {4, 64}) + expand_dims(arange(0, 4), 1) * 64;
  auto m = grid < n;
  auto v = load(x + grid, m, 0.0f);
  auto clamped = where(v > limit, full({4, 64}, 1.0f) * limit, v);
  auto nonneg = maximum(clamped, zeros<float>({4, 64}));
  store(out + grid, nonneg, m);
  // Scalars: every thread writes the same value.
  store(total, load(x + 1) * 2.0f + limit);
}

} // namespace

TEST_CASE("constants, broadcast_to, where, zeros and scalar accesses") {
  auto kernel = jit<fill_and_clamp>();
  for (int n : {1, 100, 256}) {
    CAPTURE(n);
    auto hx = randomFloats(256, -5, 5);
    auto x = emulator().upload(hx);
    auto out = poisoned<float>(256);
    auto total = poisoned<float>(1);
    float limit = 2.5f;
    kernel.launch(emulator(), {1}, {.num_warps = 2}, x, out, total, n, limit);
    auto got = out.download();
    size_t wrong = 0;
    for (int i = 0; i < n; ++i)
      wrong += got[i] != std::max(0.0f, hx[i] > limit ? limit : hx[i]);
    CHECK(wrong == 0);
    CHECK(total.download()[0] == hx[1] * 2.0f + limit);
  }
}
