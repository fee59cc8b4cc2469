// What the row-wise kernels (softmax, layer norm) share on the host: how a
// row length becomes a block shape and a wave count, and the checks of a
// launch's sizes against its buffers.
#pragma once

#include <tessel/tessel.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tessel::kernels {

// The longest row a row-wise kernel holds in registers at once: 16384 /
// 512 threads = 32 floats per thread (8 waves of 64 lanes, or 16 of 32).
// Longer rows are walked a block at a time by a loop in the kernel.
inline constexpr int kMaxRowBlock = 16384;
// The block a looped kernel walks a long row with: one kernel (per element
// type) serves every row length above kMaxRowBlock.
inline constexpr int kLoopBlock = 2048;
// A program's threads at most: 8 waves of 64 lanes, 16 of 32.
inline constexpr int kMaxRowThreads = 512;

// How one launch of a row-wise kernel is shaped: each program handles
// `rows` rows of `block` columns (block = the next power of two >= N) with
// `num_warps` waves; or, when `looped`, one row a block at a time.
struct RowConfig {
  int block = 1;
  int rows = 1;
  unsigned num_warps = 1;
  bool looped = false;
};

// Picks the shape for rows of N elements on a target with `waveSize`-lane
// waves (Device::waveSize()). Short rows are packed several to a program so
// that a program holds at least 512 elements; the wave count grows with the
// elements a program holds, 8 per lane (as Triton's tutorials raise
// num_warps for long rows), up to 512 threads: on wave64, 1024 columns take
// 2 waves and 4096 and more take 8; on wave32 twice the waves, so a lane
// holds as many elements on either. Rows longer than kMaxRowBlock are looped
// over in blocks of kLoopBlock by 512 threads, one row per program.
inline RowConfig rowConfig(const char *kernel, int64_t N, unsigned waveSize = 64) {
  if (N < 1)
    throw Error(std::string(kernel) + ": rows need at least one element (N = " + std::to_string(N) + ")");
  if (waveSize != 32 && waveSize != 64)
    throw Error(std::string(kernel) + ": waves have 32 or 64 lanes (waveSize = " + std::to_string(waveSize) + ")");
  const unsigned maxWarps = kMaxRowThreads / waveSize;
  RowConfig c;
  if (N > kMaxRowBlock)
    return {kLoopBlock, 1, maxWarps, true};
  c.block = static_cast<int>(std::bit_ceil(static_cast<uint64_t>(N)));
  c.rows = c.block >= 512 ? 1 : 512 / c.block;
  int64_t elems = int64_t(c.rows) * c.block;
  c.num_warps = static_cast<unsigned>(std::clamp<int64_t>(elems / (8 * int64_t(waveSize)), 1, maxWarps));
  return c;
}

namespace detail {

// Error unless an M x N matrix with row stride `stride` fits in `count`
// elements and its offsets fit the kernels' 32-bit index arithmetic.
inline void checkMatrix(const char *kernel, const char *what, size_t count, int64_t M, int64_t N,
                        int64_t stride) {
  auto fail = [&](const std::string &why) { throw Error(std::string(kernel) + ": " + what + ": " + why); };
  if (stride < N)
    fail("the row stride (" + std::to_string(stride) + ") is smaller than the row length N = " +
         std::to_string(N));
  int64_t needed = (M - 1) * stride + N;
  if (needed > INT32_MAX)
    fail("an M x N = " + std::to_string(M) + " x " + std::to_string(N) + " matrix with row stride " +
         std::to_string(stride) + " spans more than 2^31 - 1 elements (32-bit offsets)");
  if (static_cast<int64_t>(count) < needed)
    fail("the buffer holds " + std::to_string(count) + " elements; M x N = " + std::to_string(M) + " x " +
         std::to_string(N) + " with row stride " + std::to_string(stride) + " needs " +
         std::to_string(needed));
}

// Error unless a vector of `n` elements fits in `count`.
inline void checkVector(const char *kernel, const char *what, size_t count, int64_t n) {
  if (static_cast<int64_t>(count) < n)
    throw Error(std::string(kernel) + ": " + what + ": the buffer holds " + std::to_string(count) +
                " elements and needs " + std::to_string(n));
}

// f32 accumulation: loads of f16/bf16 widen to f32; f32 stays as it is.
template <class T> Tile<float> widen(const Tile<T> &t) {
  if constexpr (std::is_same_v<T, float>) return t;
  else return cast<float>(t);
}
template <class T> Tile<T> narrow(const Tile<float> &t) {
  if constexpr (std::is_same_v<T, float>) return t;
  else return cast<T>(t);
}

// "f32", "f16", "bf16": the suffix of a kernel's name.
template <class T> constexpr const char *typeSuffix() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>,
                "tessel::kernels: row-wise kernels take float, half or bfloat16 elements");
  if constexpr (std::is_same_v<T, float>) return "f32";
  else if constexpr (std::is_same_v<T, half>) return "f16";
  else return "bf16";
}

} // namespace detail
} // namespace tessel::kernels
