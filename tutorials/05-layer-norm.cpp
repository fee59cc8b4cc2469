// Tutorial 05: layer norm.
//
// Layer normalization (Ba et al., 2016) rescales each row of an M x N matrix
// to zero mean and unit variance, then applies a learned per-column scale and
// shift:
//   mean = sum(x) / N,   var = sum((x - mean)^2) / N   (biased, as PyTorch)
//   rstd = 1 / sqrt(var + eps)
//   y    = (x - mean) * rstd * weight + bias
// Here over 1151 rows of 8192 floats. This lesson shows:
//   1. two reductions in a row, each feeding the next step, in one kernel;
//   2. a long row (8192 elements) spread over the waves of a workgroup;
//   3. extra per-row outputs (mean and rstd, which a backward pass reuses);
//   4. why the statistics are computed in two passes and in f32;
//   5. rows longer than a tile (64 x 65536): loops over the row, with the
//      running sums carried from one iteration to the next.
// The library version (f32, f16 and bf16; several short rows per program;
// a launcher that picks the block and the wave count) is
// tessel::kernels::layer_norm in kernels/include/tessel/kernels/layer_norm.hpp.
//
// Build and run: scripts/tutorial.sh 05-layer-norm

#include <tessel/tessel.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace tessel;

// --- 1. The block program ---------------------------------------------------
//
// Program instance `row` normalizes one row. Like softmax, layer norm reads
// each element once and writes it once when fused, so the row is loaded into
// registers a single time and every step happens there.
void layer_norm_row(Ptr<f32> x, Ptr<f32> y, Ptr<f32> weight, Ptr<f32> bias, Ptr<f32> mean, Ptr<f32> rstd,
                    i32 N, i32 stride, f32 eps, Const<int> BLOCK) {
  auto row = program_id(0);
  auto cols = arange(0, BLOCK);
  auto mask = cols < N;
  // Masked-off columns read 0, which adds nothing to a sum.
  auto v = load(x + row * stride + cols, mask, 0.0f);
  auto n = cast<float>(N); // divide by the real row length, not BLOCK

  // --- 2. First reduction: the mean ---
  // sum(v, 0) reduces the 8192 elements to one scalar. With 4 waves of 64
  // lanes (256 threads) each thread first adds its own 32 elements, then
  // the lanes of each wave combine their partial sums through a butterfly
  // of cross-lane moves (ds_bpermute_b32, 6 steps for 64 lanes), and the 4
  // wave sums meet in LDS behind a barrier. Every thread gets the mean.
  auto mu = sum(v, 0) / n;

  // --- Second reduction: the variance, in a second pass ---
  // E[x^2] - E[x]^2 needs one reduction fewer but subtracts two large,
  // nearly equal numbers when |mean| is large next to the spread, and f32
  // keeps only 24 bits of the difference. Subtracting the mean first (the
  // row is still in registers, so this pass costs no memory traffic) keeps
  // every term small. The padding must be zeroed again: 0 - mean is not 0.
  auto d = where(mask, v - mu, 0.0f);
  auto var = sum(d * d, 0) / n;
  // 1 / sqrt, not rsqrt: the GPU's rsqrt instruction is an approximation,
  // and the result must match PyTorch to f32 precision.
  auto rs = 1.0f / sqrt(var + eps);

  // --- 3. Scale, shift, store; and the statistics ---
  // weight and bias are the same for every row; each program reads them
  // (they stay in the GPU's caches across programs).
  auto w = load(weight + cols, mask, 0.0f);
  auto b = load(bias + cols, mask, 0.0f);
  store(y + row * stride + cols, d * rs * w + b, mask);
  // A scalar store: mean and rstd of this row, kept for the backward pass.
  store(mean + row, mu);
  store(rstd + row, rs);
  // For f16 or bf16 data, load, cast<float>(...) and accumulate in f32 as
  // the library kernel does: a 16-bit sum of 8192 terms would keep almost
  // none of their low bits.
}

// --- 5. Rows longer than a tile: loops ---------------------------------------
//
// A row of 65536 floats is walked BLOCK columns at a time by for_range, a
// loop on the device compiled once whatever N is. `acc` and `dev` are made
// before their loops and assigned in the bodies, so each iteration adds to
// what the previous one left, as in C++; nothing lists them. The row is no
// longer in registers, so the two passes of section 4 become two reads of
// memory (a third writes y): the price of numerics that do not cancel.
void layer_norm_long_row(Ptr<f32> x, Ptr<f32> y, Ptr<f32> weight, Ptr<f32> bias, Ptr<f32> mean, Ptr<f32> rstd,
                         i32 N, f32 eps, Const<int> BLOCK) {
  auto row = program_id(0);
  auto src = x + row * N, dst = y + row * N;
  auto n = cast<float>(N);
  auto acc = zeros<float>({BLOCK}); // per column position: a running sum
  for_range(0, N, BLOCK, [&](i32 k) {
    auto cols = k + arange(0, BLOCK);
    acc = acc + load(src + cols, cols < N, 0.0f);
  });
  auto mu = sum(acc, 0) / n;
  auto dev = zeros<float>({BLOCK});
  for_range(0, N, BLOCK, [&](i32 k) {
    auto cols = k + arange(0, BLOCK);
    auto d = where(cols < N, load(src + cols, cols < N, 0.0f) - mu, 0.0f);
    dev = dev + d * d;
  });
  auto rs = 1.0f / sqrt(sum(dev, 0) / n + eps);
  for_range(0, N, BLOCK, [&](i32 k) {
    auto cols = k + arange(0, BLOCK);
    auto v = load(src + cols, cols < N, 0.0f);
    auto w = load(weight + cols, cols < N, 0.0f), b = load(bias + cols, cols < N, 0.0f);
    store(dst + cols, (v - mu) * rs * w + b, cols < N);
  });
  store(mean + row, mu);
  store(rstd + row, rs);
}

// The largest error of y, mean and rstd against the same computation on the
// host in double precision. y crosses zero, so its error is judged relative
// to max(|y|, 1) (its values are of order 1); mean and rstd relative to
// themselves.
double worstError(const std::vector<float> &hx, const std::vector<float> &hw, const std::vector<float> &hb,
                  const std::vector<float> &got, const std::vector<float> &gotMean,
                  const std::vector<float> &gotRstd, int M, int N, float eps) {
  double worst = 0;
  for (int r = 0; r < M; ++r) {
    const float *row = &hx[size_t(r) * N];
    double total = 0, sq = 0;
    for (int c = 0; c < N; ++c)
      total += row[c];
    double mu = total / N;
    for (int c = 0; c < N; ++c)
      sq += (row[c] - mu) * (row[c] - mu);
    double rs = 1.0 / std::sqrt(sq / N + eps);
    worst = std::max(worst, std::fabs(gotMean[r] - mu) / std::fabs(mu));
    worst = std::max(worst, std::fabs(gotRstd[r] - rs) / rs);
    for (int c = 0; c < N; ++c) {
      double want = (row[c] - mu) * rs * hw[c] + hb[c];
      worst = std::max(worst, std::fabs(got[size_t(r) * N + c] - want) / std::max(std::fabs(want), 1.0));
    }
  }
  return worst;
}

int main() {
  const int M = 1151, N = 8192;
  const float eps = 1e-5f;
  const int BLOCK = static_cast<int>(std::bit_ceil(static_cast<unsigned>(N)));
  // 8192 elements over 4 waves of 64 lanes: 32 registers per thread hold the
  // row. On a GPU more waves (8, as Triton's layer-norm heuristic picks for
  // rows of 32 KiB) hide memory latency better; the emulator runs every lane
  // as a fiber on the CPU, and fewer lanes keep this lesson quick there.
  const unsigned numWarps = 4;

  Device dev = Device::open();
  std::printf("device: %s\n", dev.name().c_str());

  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> hx(size_t(M) * N), hw(N), hb(N);
  for (float &v : hx)
    v = 3.0f + 2.0f * dist(gen); // rows whose mean is not zero
  for (int c = 0; c < N; ++c) {
    hw[c] = 1.0f + 0.5f * dist(gen);
    hb[c] = 0.5f * dist(gen);
  }
  Buffer<float> x = dev.upload(hx), w = dev.upload(hw), b = dev.upload(hb);
  Buffer<float> y = dev.alloc<float>(size_t(M) * N);
  Buffer<float> mean = dev.alloc<float>(M), rstd = dev.alloc<float>(M);

  // --- 4. Launch: one program per row ---
  auto layer_norm = jit<layer_norm_row>();
  layer_norm.launch(dev, {uint32_t(M)}, {.num_warps = numWarps}, x, y, w, b, mean, rstd, N, N, eps, BLOCK);

  double worst = worstError(hx, hw, hb, y.download(), mean.download(), rstd.download(), M, N, eps);
  bool ok = worst <= 1e-5;
  const LaunchStats stats = layer_norm.stats();
  std::printf("layer norm over %d x %d floats: %s (max relative error %.3g)\n", M, N,
              ok ? "matches the float64 reference" : "MISMATCH", worst);
  std::printf("kernels compiled: %llu, loaded from the disk cache: %llu\n",
              (unsigned long long)stats.compiles, (unsigned long long)stats.diskHits);

  // --- 5. Long rows: 64 x 65536, one program per row, 2048 columns a step ---
  const int LM = 64, LN = 65536, LBLOCK = 2048;
  std::vector<float> lx(size_t(LM) * LN), lw(LN), lb(LN);
  for (float &v : lx)
    v = 3.0f + 2.0f * dist(gen);
  for (int c = 0; c < LN; ++c) {
    lw[c] = 1.0f + 0.5f * dist(gen);
    lb[c] = 0.5f * dist(gen);
  }
  Buffer<float> longX = dev.upload(lx), longW = dev.upload(lw), longB = dev.upload(lb);
  Buffer<float> longY = dev.alloc<float>(lx.size());
  Buffer<float> longMean = dev.alloc<float>(LM), longRstd = dev.alloc<float>(LM);
  auto longNorm = jit<layer_norm_long_row>();
  longNorm.launch(dev, {uint32_t(LM)}, {.num_warps = 8}, longX, longY, longW, longB, longMean, longRstd, LN, eps,
                  LBLOCK);
  double longWorst = worstError(lx, lw, lb, longY.download(), longMean.download(), longRstd.download(), LM, LN, eps);
  bool longOk = longWorst <= 1e-5;
  std::printf("layer norm over %d x %d floats by loops: %s (max relative error %.3g)\n", LM, LN,
              longOk ? "matches the float64 reference" : "MISMATCH", longWorst);
  return ok && longOk ? 0 : 1;
}
