// Tutorial 02: fused softmax.
//
// softmax(x)[j] = exp(x[j]) / sum_k exp(x[k]), row by row over a 1823 x 781
// matrix of floats. This lesson shows:
//   1. *fusion*: one kernel reads each row once, does every step of softmax
//      in registers and writes the result once;
//   2. *reductions*: max() and sum() over a tile, and how tessel spreads one
//      over the threads and waves of a workgroup;
//   3. the numerics: subtracting the row max, and accumulating in f32 even
//      when the data is f16 or bf16;
//   4. rows too long for one tile (4 x 100000): a loop on the device, and
//      values carried from one iteration to the next (online softmax).
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

// --- 4. Rows longer than a tile: a device loop ---------------------------
//
// A row of 100000 floats does not fit one tile (tiles hold at most 2^20
// elements, and registers far fewer). The program walks the row BLOCK
// columns at a time with for_range, a loop on the GPU: `k` takes the values
// 0, BLOCK, 2 * BLOCK, ... while k < N, and the loop is compiled once,
// whatever N is (a C++ `for` would instead unroll while tracing).
//
// Values carried through the loop are plain C++ variables: `m` and `s` are
// made before the loop and assigned in its body, so each iteration sees
// what the previous one left in them, as in C++ (and as in Triton's
// `for k in range(0, N, BLOCK):`). There is no list of carried values.
//
// The first pass keeps, per column position, the largest value seen (m) and
// the sum of exp(x - m) (s). When a new x exceeds m the sum so far was taken
// against a smaller max, so it is rescaled by exp(m - x): that is the online
// softmax, one read of the row for both statistics. The positions then
// combine into the row's max and sum, and a second pass writes the result.
void softmax_long_row(Ptr<f32> in, Ptr<f32> out, i32 N, Const<int> BLOCK) {
  const float negInf = -std::numeric_limits<float>::infinity();
  auto row = program_id(0);
  auto src = in + row * N, dst = out + row * N;
  auto m = full<float>({BLOCK}, negInf);
  auto s = zeros<float>({BLOCK});
  for_range(0, N, BLOCK, [&](i32 k) {
    auto cols = k + arange(0, BLOCK);
    auto x = load(src + cols, cols < N, negInf);
    // e = exp(-|x - m|) is the rescale factor when x is the new max and x's
    // own term otherwise; padding (-inf) leaves both unchanged.
    auto e = exp(-abs(x - m));
    s = where(x > m, s * e + 1.0f, where(x == negInf, s, s + e));
    m = maximum(m, x);
  });
  auto rowMax = max(m, 0);
  auto rowSum = sum(s * exp(m - rowMax), 0);
  for_range(0, N, BLOCK, [&](i32 k) {
    auto cols = k + arange(0, BLOCK);
    auto x = load(src + cols, cols < N, negInf);
    store(dst + cols, exp(x - rowMax) / rowSum, cols < N);
  });
}

// The largest relative error of y against softmax of the rows of x (M x N,
// dense), computed on the host in double precision.
double worstError(const std::vector<float> &x, const std::vector<float> &y, int M, int N) {
  double worst = 0;
  std::vector<double> e(N);
  for (int r = 0; r < M; ++r) {
    const float *row = &x[size_t(r) * N];
    double m = *std::max_element(row, row + N), total = 0;
    for (int c = 0; c < N; ++c)
      total += e[c] = std::exp(double(row[c]) - m);
    for (int c = 0; c < N; ++c)
      worst = std::max(worst, std::fabs(y[size_t(r) * N + c] - e[c] / total) / (e[c] / total));
  }
  return worst;
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
  double worst = worstError(hx, y.download(), M, N);
  bool ok = worst <= 1e-5; // a few f32 roundings: exp, the sum, the division
  const LaunchStats stats = softmax.stats();
  std::printf("softmax over %d x %d floats: %s (max relative error %.3g)\n", M, N,
              ok ? "matches the float64 reference" : "MISMATCH", worst);
  std::printf("kernels compiled: %llu, loaded from the disk cache: %llu\n",
              (unsigned long long)stats.compiles, (unsigned long long)stats.diskHits);
  // The kernel's AMDGPU assembly (kernel.s in its cache entry, or
  // TESSEL_DUMP=1) shows the ds_bpermute_b32 of step b and the LDS of step c.

  // --- 4. Long rows: 4 x 100000, one program per row, 2048 columns a step ---
  const int LM = 4, LN = 100000, LBLOCK = 2048;
  std::vector<float> lx(size_t(LM) * LN);
  for (float &v : lx)
    v = dist(gen);
  Buffer<float> longIn = dev.upload(lx);
  Buffer<float> longOut = dev.alloc<float>(lx.size());
  auto longSoftmax = jit<softmax_long_row>();
  longSoftmax.launch(dev, {uint32_t(LM)}, {.num_warps = 8}, longIn, longOut, LN, LBLOCK);
  double longWorst = worstError(lx, longOut.download(), LM, LN);
  bool longOk = longWorst <= 1e-5;
  std::printf("softmax over %d x %d floats by a loop: %s (max relative error %.3g)\n", LM, LN,
              longOk ? "matches the float64 reference" : "MISMATCH", longWorst);
  // Its assembly has a backward branch (s_cbranch_scc1 to an earlier label):
  // one loop body, not 100000 / 2048 copies of it.
  return ok && longOk ? 0 : 1;
}
