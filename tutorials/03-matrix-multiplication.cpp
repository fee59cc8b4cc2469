// Tutorial 03: matrix multiplication on the matrix cores.
//
// C = A @ B for A [M, K] and B [K, N] in f16, accumulated in f32. This
// lesson shows:
//   1. *blocking*: each program computes one BM x BN block of C, walking K
//      in steps of BK with a device loop, the accumulator carried through it;
//   2. `dot`, which the compiler turns into the GPU's matrix instructions
//      (MFMA on CDNA GPUs, WMMA on RDNA3) with the operands staged through
//      LDS into the lane layouts those instructions read;
//   3. *grouped ordering*: numbering the programs so that neighbours share
//      blocks of A and B while they are in the cache.
// The library version (f16/bf16/f32/int8, batched, strides, bias and
// activations) is tessel::kernels::matmul in kernels/include/tessel/kernels/matmul.hpp.
//
// Build and run: scripts/tutorial.sh 03-matrix-multiplication

#include <tessel/tessel.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace tessel;

// --- 1. The block program ---------------------------------------------------
//
// The naive way, one program per element of C, reads a whole row of A and a
// column of B per output: 2K loads for 2K flops. A BM x BN block reads
// (BM + BN) * K elements for 2 * BM * BN * K flops, BM * BN / (BM + BN)
// times better (64x for 128 x 128 blocks): blocking is what makes a matmul
// compute-bound instead of memory-bound.
void matmul_block(Ptr<half> a, Ptr<half> b, Ptr<float> c, i32 M, i32 N, i32 K, Const<int> BM, Const<int> BN,
                  Const<int> BK, Const<int> GROUP_M) {
  // --- 3. Grouped ordering ---
  // Programs run roughly in order of their id. Numbered row by row, the
  // first programs would read one block row of A and *every* block column of
  // B before any block of B is reused. Numbered in groups of GROUP_M block
  // rows, consecutive programs walk down a group's rows first, so the blocks
  // of B they read stay in the cache for GROUP_M programs.
  auto pid = program_id(0);
  auto blocksM = cdiv(M, BM), blocksN = cdiv(N, BN);
  auto perGroup = GROUP_M * blocksN;
  auto firstM = (pid / perGroup) * GROUP_M;
  auto groupM = minimum(blocksM - firstM, GROUP_M);
  auto pidM = firstM + (pid % perGroup) % groupM;
  auto pidN = (pid % perGroup) / groupM;

  auto rows = pidM * BM + arange(0, BM);
  auto cols = pidN * BN + arange(0, BN);
  auto ks = arange(0, BK);
  // The accumulator lives in registers for the whole loop: a variable made
  // before for_range and assigned in it is carried from one iteration to the
  // next.
  auto acc = zeros<float>({BM, BN});
  for_range(0, K, BK, [&](i32 k) {
    auto kk = k + ks;
    // Masked loads read 0 past the edges, which adds nothing to a product.
    auto ta = load(a + expand_dims(rows, 1) * K + expand_dims(kk, 0),
                   expand_dims(rows < M, 1) & expand_dims(kk < K, 0), 0);
    auto tb = load(b + expand_dims(kk, 1) * N + expand_dims(cols, 0),
                   expand_dims(kk < K, 1) & expand_dims(cols < N, 0), 0);
    // --- 2. dot ---
    // On gfx942 with 4 waves, a 128 x 128 x 32 step is 2 x 2 waves, each
    // issuing 2 x 2 x 4 = 16 v_mfma_f32_32x32x8_f16 (a 32 x 32 x 8 product
    // each). The tiles arrive from global memory in a layout good for
    // loading (16 bytes per lane, coalesced); `dot` needs each lane to hold
    // exactly the elements the instruction reads from it, so they pass
    // through LDS first (the compiler's layout conversion, sized by the LDS
    // plan).
    acc = dot(ta, tb, acc);
  });
  store(c + expand_dims(rows, 1) * N + expand_dims(cols, 0), acc,
        expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
}

int main() {
  const int M = 512, N = 512, K = 512;
  const int BM = 128, BN = 128, BK = 32, GROUP_M = 8;
  Device dev = Device::open();
  std::printf("device: %s\n", dev.name().c_str());

  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<half> ha(size_t(M) * K), hb(size_t(K) * N);
  for (half &v : ha) v = half(dist(gen));
  for (half &v : hb) v = half(dist(gen));
  Buffer<half> a = dev.upload(ha), b = dev.upload(hb);
  Buffer<float> c = dev.alloc<float>(size_t(M) * N);

  // One program per block of C: (512 / 128)^2 = 16 programs of 4 waves.
  auto matmul = jit<matmul_block>();
  const uint32_t blocks = uint32_t(((M + BM - 1) / BM) * ((N + BN - 1) / BN));
  matmul.launch(dev, {blocks}, {.num_warps = 4}, a, b, c, M, N, K, BM, BN, BK, GROUP_M);

  // Check against the product on the host in double precision. f16 inputs
  // are exact in f32, so the error is the f32 accumulation's: judged against
  // the largest |C|, as sums of K terms cancel.
  std::vector<float> got = c.download();
  std::vector<double> want(size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      double av = float(ha[size_t(i) * K + k]);
      for (int j = 0; j < N; ++j) want[size_t(i) * N + j] += av * float(hb[size_t(k) * N + j]);
    }
  double scale = 0, worst = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / scale);
  bool ok = worst <= 1e-5;
  std::printf("matmul %d x %d x %d f16 -> f32: %s (max error %.3g of the largest |C|)\n", M, N, K,
              ok ? "matches the float64 reference" : "MISMATCH", worst);
  const LaunchStats stats = matmul.stats();
  std::printf("kernels compiled: %llu, loaded from the disk cache: %llu\n", (unsigned long long)stats.compiles,
              (unsigned long long)stats.diskHits);
  // The kernel's assembly (kernel.s in its cache entry, or TESSEL_DUMP=1)
  // shows the v_mfma_* instructions of section 2 inside the K loop.
  return ok ? 0 : 1;
}
