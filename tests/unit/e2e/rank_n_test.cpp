// Tiles of rank 3 and 4: reductions and scans along each axis of a padded,
// masked [3, 5, 7] block, a rank-4 permute round trip, reshape and join of
// rank-3 tiles, on the emulator against host loops.
#include "e2e_common.hpp"

#include <range/v3/view/cartesian_product.hpp>
#include <range/v3/view/iota.hpp>

#include <array>

using namespace tessel;
using namespace e2e;
namespace views = ranges::views;

namespace {

// Every index of an n0 x n1 x ... block, row-major.
template <class... N> auto indexSpace(N... n) { return views::cartesian_product(views::iota(0, n)...); }

constexpr std::array<int, 3> kValid = {3, 5, 7}; // padded to [4, 8, 8]

// Index tiles along each dim of a rank-3 tile: [n0, 1, 1], [1, n1, 1], [1, 1, n2].
std::array<i32, 3> indices3(int n0, int n1, int n2) {
  return {expand_dims(expand_dims(arange(0, n0), 1), 2), expand_dims(expand_dims(arange(0, n1), 0), 2),
          expand_dims(expand_dims(arange(0, n2), 0), 0)};
}

// The dense strides of the valid block with `axis` removed (0 for `axis`).
std::array<int, 3> reducedStrides(int axis) {
  std::array<int, 3> strides{};
  int stride = 1;
  for (int d = 2; d >= 0; --d) {
    if (d == axis) continue;
    strides[d] = stride;
    stride *= kValid[d];
  }
  return strides;
}

// Sum, max, argmax and an inclusive cumsum of x[3][5][7] along AXIS
// (padding masked).
void reduce3(Ptr<float> x, Ptr<float> sums, Ptr<float> maxes, Ptr<float> scans, Ptr<int32_t> args,
             Const<int> AXIS) {
  auto [i, j, k] = indices3(4, 8, 8);
  auto mask = (i < kValid[0]) & (j < kValid[1]) & (k < kValid[2]);
  auto offs = i * (kValid[1] * kValid[2]) + j * kValid[2] + k;
  auto s = sum(load(x + offs, mask, 0.0f), AXIS, /*keep_dims=*/true);
  auto m = max(load(x + offs, mask, -INFINITY), AXIS, /*keep_dims=*/true);
  auto am = argmax(load(x + offs, mask, -INFINITY), AXIS, /*keep_dims=*/true);
  store(scans + offs, cumsum(load(x + offs, mask, 0.0f), AXIS), mask);
  // The reduced axis has length 1: index it with arange(0, 1).
  int a = AXIS;
  auto [ri, rj, rk] = indices3(a == 0 ? 1 : 4, a == 1 ? 1 : 8, a == 2 ? 1 : 8);
  std::array<int, 3> st = reducedStrides(a);
  auto rmask = (ri < kValid[0]) & (rj < kValid[1]) & (rk < kValid[2]);
  auto roffs = ri * st[0] + rj * st[1] + rk * st[2];
  store(sums + roffs, s, rmask);
  store(maxes + roffs, m, rmask);
  store(args + roffs, am, rmask);
}

// y = x permuted by {2, 0, 3, 1} (x is [2, 4, 8, 2], y is [8, 2, 2, 4]), then
// permuted back into z: z must equal x.
void permute4(Ptr<int32_t> x, Ptr<int32_t> y, Ptr<int32_t> z) {
  auto a = reshape(arange(0, 128), {2, 4, 8, 2}); // the dense offsets of x
  auto v = load(x + a);
  auto p = permute(v, {2, 0, 3, 1});
  auto pa = reshape(arange(0, 128), {8, 2, 2, 4}); // the dense offsets of y
  store(y + pa, p);
  store(z + a, permute(p, {1, 3, 0, 2}));
}

// Rank-3 reshape and join: out1 = reshape([4, 8, 8] -> [16, 16]) written
// densely; out2[i][j][k][t] = t ? -x : x for the first [2, 4, 4] block.
void shapes3(Ptr<float> x, Ptr<float> out1, Ptr<float> out2) {
  auto [i, j, k] = indices3(4, 8, 8);
  auto v = load(x + (i * 64 + j * 8 + k));
  store(out1 + reshape(arange(0, 256), {16, 16}), reshape(v, {16, 16}));
  auto [a, b, c] = indices3(2, 4, 4);
  auto w = load(x + (a * 64 + b * 8 + c));
  auto joined = join(w, -w); // [2, 4, 4, 2]
  store(out2 + reshape(arange(0, 64), {2, 4, 4, 2}), joined);
}

} // namespace

TEST_CASE("rank-3 reductions and scans along each axis of a [3, 5, 7]-valid tile") {
  auto kernel = jit<reduce3>();
  const int n = kValid[0] * kValid[1] * kValid[2];
  auto hx = randomFloats(n, -8, 8);
  auto x = emulator().upload(hx);
  auto at = [&](int i, int j, int k) { return hx[size_t(i) * 35 + size_t(j) * 7 + size_t(k)]; };
  for (int axis = 0; axis < 3; ++axis) {
    CAPTURE(axis);
    const int outCount = n / kValid[size_t(axis)];
    auto sums = poisoned<float>(outCount), maxes = poisoned<float>(outCount), scans = poisoned<float>(n);
    auto args = poisoned<int32_t>(outCount);
    kernel.launch(emulator(), {1}, {.num_warps = 2}, x, sums, maxes, scans, args, axis);
    auto gotSums = sums.download(), gotMaxes = maxes.download(), gotScans = scans.download();
    auto gotArgs = args.download();
    std::array<int, 3> st = reducedStrides(axis);
    for (auto [i, j, k] : indexSpace(kValid[0], kValid[1], kValid[2])) {
      std::array<int, 3> idx = {i, j, k};
      // Along the axis up to and including this element.
      double run = 0;
      for (int t = 0; t <= idx[size_t(axis)]; ++t) {
        std::array<int, 3> q = idx;
        q[size_t(axis)] = t;
        run += at(q[0], q[1], q[2]);
      }
      REQUIRE(std::fabs(gotScans[size_t(i) * 35 + size_t(j) * 7 + size_t(k)] - run) <= 1e-4);
      if (idx[size_t(axis)] != 0) continue; // one output per line along the axis
      double total = 0;
      float largest = -INFINITY;
      int first = -1;
      for (int t = 0; t < kValid[size_t(axis)]; ++t) {
        std::array<int, 3> q = idx;
        q[size_t(axis)] = t;
        total += at(q[0], q[1], q[2]);
        if (at(q[0], q[1], q[2]) > largest) first = t;
        largest = std::max(largest, at(q[0], q[1], q[2]));
      }
      size_t o = size_t(i * st[0] + j * st[1] + k * st[2]);
      REQUIRE(std::fabs(gotSums[o] - total) <= 1e-4);
      REQUIRE(gotMaxes[o] == largest);
      REQUIRE(gotArgs[o] == first);
    }
  }
}

TEST_CASE("a rank-4 permute round-trips") {
  auto kernel = jit<permute4>();
  auto hx = randomInts<int32_t>(128, -1000, 1000);
  auto x = emulator().upload(hx);
  auto y = poisoned<int32_t>(128), z = poisoned<int32_t>(128);
  kernel.launch(emulator(), {1}, {.num_warps = 1}, x, y, z);
  auto gotY = y.download(), gotZ = z.download();
  CHECK(gotZ == hx);
  // y[c][a][d][b] = x[a][b][c][d]
  for (auto [a, b, c, d] : indexSpace(2, 4, 8, 2))
    REQUIRE(gotY[size_t(((c * 2 + a) * 2 + d) * 4 + b)] == hx[size_t(((a * 4 + b) * 8 + c) * 2 + d)]);
}

TEST_CASE("rank-3 reshape and join") {
  auto kernel = jit<shapes3>();
  auto hx = randomFloats(256);
  auto x = emulator().upload(hx);
  auto out1 = poisoned<float>(256), out2 = poisoned<float>(64);
  kernel.launch(emulator(), {1}, {.num_warps = 2}, x, out1, out2);
  CHECK(out1.download() == hx); // a reshape keeps the row-major order
  auto got = out2.download();
  for (auto [a, b, c, t] : indexSpace(2, 4, 4, 2)) {
    float v = hx[size_t(a * 64 + b * 8 + c)];
    REQUIRE(got[size_t(((a * 4 + b) * 4 + c) * 2 + t)] == (t ? -v : v));
  }
}
