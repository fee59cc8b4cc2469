// Tutorial 02: fused softmax.
//
// softmax(x)[j] = exp(x[j]) / sum_k exp(x[k]), row by row over a 1823 x 781
// matrix of floats. This lesson shows:
//   1. *fusion*: one kernel reads each row once, does every step of softmax
//      in registers and writes the result once;
//   2. *reductions*: max() and sum() over a tile, and how tessel spreads one
//      over the threads and waves of a workgroup;
//   3. the numerics: subtracting the row max, and accumulating in f32 even
//      when the data is f16 or bf16.
// The same kernel, for f32, f16 and bf16, several short rows per program and
// a launcher that picks the block and the wave count, is
// tessel::kernels::softmax in kernels/include/tessel/kernels/softmax.hpp.
//
// Build and run: scripts/tutorial.sh 02-fused-softmax

#include <tessel/tessel.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

using namespace tessel;

// --- Why fuse ---------------------------------------------------------------
//
// Written as separate array operations, softmax of an M x N matrix x is
//   m = max(x, axis 1)   reads MN,        writes M
//   z = x - m[:, None]   reads MN + M,    writes MN
//   e = exp(z)           reads MN,        writes MN
//   s = sum(e, axis 1)   reads MN,        writes M
//   y = e / s[:, None]   reads MN + M,    writes MN
// about 5MN elements read and 3MN written. Softmax is memory bound (a few
// flops per element), so that traffic is its run time. A row of 781 floats
// fits in the registers of one workgroup, so one kernel can read x once and
// write y once: 2MN in all, about four times less.

// --- 1. The block program ---------------------------------------------------
//
// Program instance `row` computes one row. BLOCK is the next power of two >=
// N (tiles have power-of-two sizes); the columns past N are masked.
void softmax_row(Ptr<f32> in, Ptr<f32> out, i32 N, i32 in_stride, i32 out_stride, Const<int> BLOCK) {
  auto row = program_id(0);
  auto cols = arange(0, BLOCK);
  auto mask = cols < N;
  // Masked-off columns read -inf: it never wins the max, and exp(-inf) = 0
  // adds nothing to the sum, so the padding drops out of the result.
  auto x = load(in + row * in_stride + cols, mask, -std::numeric_limits<float>::infinity());

  // --- 2. The row max, a reduction ---
  // max(x, 0) reduces the BLOCK elements along axis 0 to one scalar. The
  // tile is spread over the workgroup (here 2 waves of 64 lanes, so each
  // thread holds 1024 / 128 = 8 columns), and tessel reduces in three steps:
  //   a. each thread combines the elements in its own registers;
  //   b. the lanes of a wave combine their partial results with a butterfly
  //      of cross-lane moves (ds_bpermute_b32 on AMD GPUs): log2(64) = 6 steps,
  //      after which every lane holds the wave's result;
  //   c. the waves exchange their results through LDS (workgroup memory):
  //      each writes its slot, a barrier, each reads all slots and combines
  //      them. The LDS plan sizes those slots when compiling.
  // Every thread ends up with the row max, ready to broadcast.
  //
  // Why subtract it: exp(x) overflows f32 once x > 88.7, but softmax does
  // not change when a constant is subtracted from the whole row; with the
  // max subtracted every exponent is <= 0, so exp() lies in (0, 1] and the
  // sum in [1, N].
  auto z = x - max(x, 0);
  auto num = exp(z);

  // --- The sum, the same machinery with + as the combine ---
  // Sums accumulate in f32 here. For f16 or bf16 data the library kernel
  // widens each element with cast<float>(...) after loading and narrows
  // only the result before storing: f16 keeps 11 bits of mantissa (bf16 8),
  // and a sum of hundreds of terms in 16 bits would lose most of them.
  auto den = sum(num, 0);
  store(out + row * out_stride + cols, num / den, mask);
}

int main() {
  const int M = 1823, N = 781;
  // The whole row in one tile: 781 -> 1024 columns.
  const int BLOCK = static_cast<int>(std::bit_ceil(static_cast<unsigned>(N)));
  // More waves for longer rows (as Triton's tutorials do): one wave per 512
  // columns, at most 8, so 1024 columns take 2 waves, 8 floats per thread.
  // Fewer waves than a GPU would like also keep the emulator quick: it runs
  // every lane as a fiber on the CPU.
  const unsigned numWarps = static_cast<unsigned>(std::clamp(BLOCK / 512, 1, 8));

  Device dev = Device::open();
  std::printf("device: %s\n", dev.name().c_str());

  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  std::vector<float> hx(size_t(M) * N);
  for (float &v : hx)
    v = dist(gen);
  Buffer<float> x = dev.upload(hx);
  Buffer<float> y = dev.alloc<float>(size_t(M) * N);

  // --- 3. Launch: one program per row ---
  auto softmax = jit<softmax_row>();
  softmax.launch(dev, {uint32_t(M)}, {.num_warps = numWarps}, x, y, N, N, N, BLOCK);

  // Check against softmax computed on the host in double precision.
  std::vector<float> got = y.download();
  double worst = 0;
  std::vector<double> e(N);
  for (int r = 0; r < M; ++r) {
    const float *row = &hx[size_t(r) * N];
    double m = *std::max_element(row, row + N), total = 0;
    for (int c = 0; c < N; ++c)
      total += e[c] = std::exp(double(row[c]) - m);
    for (int c = 0; c < N; ++c) {
      double want = e[c] / total;
      worst = std::max(worst, std::fabs(got[size_t(r) * N + c] - want) / want);
    }
  }
  bool ok = worst <= 1e-5; // a few f32 roundings: exp, the sum, the division
  const LaunchStats stats = softmax.stats();
  std::printf("softmax over %d x %d floats: %s (max relative error %.3g)\n", M, N,
              ok ? "matches the float64 reference" : "MISMATCH", worst);
  std::printf("kernels compiled: %llu, loaded from the disk cache: %llu\n",
              (unsigned long long)stats.compiles, (unsigned long long)stats.diskHits);
  // The kernel's AMDGPU assembly (kernel.s in its cache entry, or
  // TESSEL_DUMP=1) shows the ds_bpermute_b32 of step b and the LDS of step c.
  return ok ? 0 : 1;
}
