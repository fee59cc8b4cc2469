// The consumer's block program, for the JIT (main.cpp) and for its
// tessel-compile (aot_kernels.cpp).
#pragma once

#include <tessel/tessel.hpp>

inline void vector_add(tessel::Ptr<tessel::f32> x, tessel::Ptr<tessel::f32> y, tessel::Ptr<tessel::f32> out,
                       tessel::i32 n, tessel::Const<int> BLOCK) {
  using namespace tessel;
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}
