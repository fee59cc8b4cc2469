// A helper in a header of its own for remarks_test.cpp: a remark about the
// % inside it names this file with the line.
#pragma once

#include <tessel/tessel.hpp>

namespace remarks_helper {

inline int gHelperWrapLine = 0;

// x % n, as a helper a kernel calls.
inline tessel::Tile<int32_t> wrapped(const tessel::Tile<int32_t> &x, const tessel::i32 &n) {
  gHelperWrapLine = __LINE__ + 1;
  return x % n;
}

} // namespace remarks_helper
