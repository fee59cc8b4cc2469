// The vector add the benches measure (as tutorial 01): bench-vector-add
// compiles and launches it, bench-code-objects compares its code object with
// bench/hip/vector_add.hip. One definition, so both measure the same kernel.
#pragma once

#include <tessel/tessel.hpp>

namespace tessel::bench {

inline void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

inline constexpr int kVectorN = 98432, kVectorBlock = 1024;
inline constexpr unsigned kVectorWarps = 4;

} // namespace tessel::bench
