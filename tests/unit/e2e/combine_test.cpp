// User combine functions: reduce and associative_scan with C++ lambdas,
// single and tuple forms, traced into the kernel.
#include "e2e_common.hpp"

#include <tuple>

using namespace tessel;
using namespace e2e;

namespace {

constexpr int R = 16, C = 64;

// Row-wise: bitwise OR of ints; (max, how many times it occurs); running
// max forward and backward; running (max, index of the max).
void combines(Ptr<i32> x, Ptr<i32> orOut, Ptr<i32> maxOut, Ptr<i32> countOut, Ptr<i32> cummax,
              Ptr<i32> rcummax, Ptr<i32> argOut) {
  auto rows = arange(0, R), cols = arange(0, C);
  auto offs = expand_dims(rows, 1) * C + expand_dims(cols, 0);
  auto v = load(x + offs);
  store(orOut + rows, reduce(v, 1, [](auto a, auto b) { return a | b; }));

  auto ones = full({R, C}, 1);
  auto [m, count] = reduce(std::tuple{v, ones}, 1, [](auto am, auto ac, auto bm, auto bc) {
    auto count = where(am == bm, ac + bc, where(am > bm, ac, bc));
    return std::tuple{maximum(am, bm), count};
  });
  store(maxOut + rows, m);
  store(countOut + rows, count);

  auto runningMax = [](auto a, auto b) { return maximum(a, b); };
  store(cummax + offs, associative_scan(v, 1, runningMax));
  store(rcummax + offs, associative_scan(v, 1, runningMax, /*reverse=*/true));

  auto index = broadcast_to(expand_dims(cols, 0), {R, C});
  auto [best, where_] = associative_scan(std::tuple{v, index}, 1,
                                         [](auto av, auto ai, auto bv, auto bi) {
                                           auto takeB = bv > av;
                                           return std::tuple{where(takeB, bv, av), where(takeB, bi, ai)};
                                         });
  store(argOut + offs, where_);
}

} // namespace

TEST_CASE("reduce and associative_scan with user combine functions") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    INFO(arch);
    Device dev = Device::emulator(arch);
    auto hx = randomInts<int32_t>(R * C, 0, 9); // small range: many ties
    auto x = dev.upload(hx);
    auto orOut = poisoned<int32_t>(R), maxOut = poisoned<int32_t>(R), countOut = poisoned<int32_t>(R);
    auto cummax = poisoned<int32_t>(R * C), rcummax = poisoned<int32_t>(R * C),
         argOut = poisoned<int32_t>(R * C);
    jit<combines>().launch(dev, {1}, {.num_warps = 4}, x, orOut, maxOut, countOut, cummax, rcummax,
                           argOut);
    auto gOr = orOut.download(), gMax = maxOut.download(), gCount = countOut.download();
    auto gCum = cummax.download(), gRev = rcummax.download(), gArg = argOut.download();
    size_t wrong = 0;
    for (int r = 0; r < R; ++r) {
      const int32_t *row = &hx[size_t(r) * C];
      int32_t o = 0, mx = row[0], cnt = 0;
      for (int c = 0; c < C; ++c) {
        o |= row[c];
        mx = std::max(mx, row[c]);
      }
      for (int c = 0; c < C; ++c)
        cnt += row[c] == mx;
      wrong += gOr[r] != o;
      wrong += gMax[r] != mx;
      wrong += gCount[r] != cnt;
      int32_t run = row[0], best = 0;
      for (int c = 0; c < C; ++c) {
        run = std::max(run, row[c]);
        wrong += gCum[size_t(r) * C + c] != run;
        if (row[c] > row[best])
          best = c;
        wrong += gArg[size_t(r) * C + c] != best;
      }
      run = row[C - 1];
      for (int c = C - 1; c >= 0; --c) {
        run = std::max(run, row[c]);
        wrong += gRev[size_t(r) * C + c] != run;
      }
    }
    CHECK(wrong == 0);
  }
}

namespace {
// keep_dims on a 1-D reduction: a scalar becomes a 1-element tile again.
void normalize_1d(Ptr<f32> x, Ptr<f32> out) {
  auto offs = arange(0, 64);
  auto v = load(x + offs);
  store(out + offs, v - sum(v, 0, /*keep_dims=*/true) / 64.0f);
}
} // namespace

TEST_CASE("keep_dims on a 1-D reduction") {
  auto hx = randomInts<int32_t>(64, -8, 8);
  std::vector<float> fx(hx.begin(), hx.end());
  auto x = emulator().upload(fx);
  auto out = poisoned<float>(64);
  jit<normalize_1d>().launch(emulator(), {1}, {.num_warps = 1}, x, out);
  double mean = 0;
  for (float v : fx)
    mean += v;
  mean /= 64;
  auto got = out.download();
  size_t wrong = 0;
  for (int i = 0; i < 64; ++i)
    wrong += relError(got[i], fx[i] - mean, 1.0) > 1e-6;
  CHECK(wrong == 0);
}
