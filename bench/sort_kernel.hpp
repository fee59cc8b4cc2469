// The sort that tests/unit/e2e/sort_test.cpp checks and bench-compile-scaling
// times (issue 34: a sort of 1000 or 4096 keys compiles in under 1 s).
#pragma once

#include <tessel/tessel.hpp>

#include <limits>

namespace tessel::bench {

// n valid keys in a tile of BLOCK (padded so the padding sorts last: -inf
// descending; ascending NaN, which sorts above +inf, and a stable sort keeps
// it after the real NaNs: its positions are larger); the position of each as
// payload.
inline void sort_keys(Ptr<f32> x, Ptr<f32> keys, Ptr<int32_t> pos, i32 n, Const<int> BLOCK, Const<bool> DESC,
                      Const<bool> STABLE) {
  auto offs = arange(0, BLOCK);
  auto inside = offs < n;
  float pad = DESC ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  auto v = load(x + offs, inside, pad);
  auto [k, p] = sort(v, offs, {.descending = bool(DESC), .stable = bool(STABLE)});
  store(keys + offs, k, inside);
  store(pos + offs, p, inside);
}

} // namespace tessel::bench
