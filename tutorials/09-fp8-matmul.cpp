// Tutorial 09: fp8 matmul, and the two families of 8-bit floats.
//
// C = (A @ B) * scale_a * scale_b with A and B quantized to 8-bit floats,
// accumulated in f32. This lesson shows:
//   1. the two families of 8-bit floats and which GPU takes which: gfx942
//      (MI300) multiplies the *FNUZ* formats, gfx950 (MI350) the *OCP* ones;
//      the same byte means different values in the two;
//   2. `dot` on 8-bit floats (the v_mfma_f32_*_fp8_fp8 family), E4M3 with
//      E5M2 mixed, and the library's kernels::matmul with scales;
//   3. quantizing: a scale per tensor (or per row) maps the data into the
//      format's range, and a saturating conversion rounds it (here on the
//      host; on the device `cast<float8_...>(x, {.saturate = true})`).
//
// Build and run: scripts/tutorial.sh 09-fp8-matmul

#include <tessel/kernels/matmul.hpp>
#include <tessel/tessel.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace tessel;

// --- 1. Two families ----------------------------------------------------------
//
// E4M3 (4 exponent bits, 3 mantissa bits: precision) and E5M2 (5 and 2:
// range) each exist twice:
//
//   OCP (the Open Compute Project's standard; NVIDIA's e4m3 and e5m2):
//     float8_e4m3fn   bias 7,  largest 448,   NaN S.1111.111, -0 exists
//     float8_e5m2     bias 15, largest 57344, infinities, NaNs, -0 (IEEE-like)
//   FNUZ ("finite, no negative zero": gfx942's, as Graphcore's):
//     float8_e4m3fnuz bias 8,  largest 240,   one NaN 0x80, no -0
//     float8_e5m2fnuz bias 16, largest 57344, one NaN 0x80, no -0, no infinity
//
// The bias differs by one, so a byte read in the wrong family is half or
// twice its value, and 0x80 is NaN in one and -0 in the other. gfx942's
// matrix cores take only FNUZ, gfx950's only OCP: a dot in the other family
// is an error at launch naming the formats that work (never a silent
// conversion). In tessel the format is the C++ type, so the kernel below is
// written once and instantiated per family.

// --- 2. A dot on 8-bit floats -------------------------------------------------
//
// A (E4M3: the activations, precision) times B (E5M2: say gradients, range),
// both of one family. Each program computes a BM x BN block, walking K in
// steps of BK; the f32 accumulator is scaled once at the end. On gfx942 a
// 32 x 32 x 16 step is one v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8}: every
// lane gives 8 bytes (8 elements) of A and of B, twice the elements of an
// f16 instruction for the same registers. gfx950 has those too, and for a BK
// of 64 or more (here) four times deeper ones, v_mfma_f32_32x32x64_f8f6f4:
// 32 bytes a lane, the formats of A and B named by fields of the instruction.
template <class E4, class E5>
void fp8_matmul(Ptr<E4> a, Ptr<E5> b, Ptr<float> c, Ptr<float> scales, i32 M, i32 N, i32 K, Const<int> BM,
                Const<int> BN, Const<int> BK) {
  auto rows = program_id(0) * BM + arange(0, BM);
  auto cols = program_id(1) * BN + arange(0, BN);
  auto ks = arange(0, BK);
  auto acc = zeros<float>({BM, BN});
  for_range(0, K, BK, [&](i32 k) {
    auto kk = k + ks;
    // Past the edges, 8-bit float zeros (a literal 0 is not an 8-bit float).
    auto ta = load(a + expand_dims(rows, 1) * K + expand_dims(kk, 0),
                   expand_dims(rows < M, 1) & expand_dims(kk < K, 0), zeros<E4>({BM, BK}));
    auto tb = load(b + expand_dims(kk, 1) * N + expand_dims(cols, 0),
                   expand_dims(kk < K, 1) & expand_dims(cols < N, 0), zeros<E5>({BK, BN}));
    acc = dot(ta, tb, acc); // f32 accumulator
  });
  // scales[0] and scales[1]: A's and B's per-tensor scales.
  acc = acc * (load(scales) * load(scales + 1));
  store(c + expand_dims(rows, 1) * N + expand_dims(cols, 0), acc,
        expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
}

// --- 3. Quantizing ------------------------------------------------------------
//
// x ~ q * scale with q in the format: scale = max|x| / (the format's largest
// value), q = x / scale rounded (saturating, so a rounding up past the
// largest stays finite). Done on the host here with the C++ types' own
// conversion, which rounds as the device's cast does.
template <class F> float largestOf() { return float(F::fromBits(F::kMaxCode)); }
template <class F> std::vector<F> quantize(const std::vector<float> &x, float &scale) {
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  scale = amax / largestOf<F>();
  std::vector<F> q;
  for (float v : x) q.push_back(F::fromBits(F::fromFloat(v / scale, /*saturate=*/true)));
  return q;
}

// What the launches compiled, and what they found in the disk cache.
unsigned long long compiled = 0, fromDisk = 0;
void count(const LaunchStats &stats) {
  compiled += stats.compiles;
  fromDisk += stats.diskHits;
}

// Runs the product on `dev` in the family its matrix cores take; checks it
// against the float64 product of the *quantized* values (what the device
// multiplies), and reports how far quantization moved it from the f32 data.
template <class E4, class E5> bool run(Device &dev, const char *family) {
  const int M = 200, N = 176, K = 320; // not multiples of the blocks: masked edges
  const int BM = 64, BN = 64, BK = 64;
  std::mt19937 gen(9);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> xa(size_t(M) * K), xb(size_t(K) * N);
  for (float &v : xa) v = dist(gen);
  for (float &v : xb) v = 1e-3f * dist(gen); // a small range: the scale takes it
  float sa = 0, sb = 0;
  std::vector<E4> qa = quantize<E4>(xa, sa);
  std::vector<E5> qb = quantize<E5>(xb, sb);
  Buffer<E4> a = dev.upload(qa);
  Buffer<E5> b = dev.upload(qb);
  Buffer<float> scales = dev.upload(std::vector<float>{sa, sb});
  Buffer<float> c = dev.alloc<float>(size_t(M) * N);
  auto kernel = jit<fp8_matmul<E4, E5>>();
  // num_stages = 2: each K step's tiles are loaded one step ahead (LDS slots).
  kernel.launch(dev, {uint32_t((M + BM - 1) / BM), uint32_t((N + BN - 1) / BN)}, {.num_warps = 4, .num_stages = 2},
                a, b, c, scales, M, N, K, BM, BN, BK);
  std::vector<float> got = c.download();

  std::vector<double> want(size_t(M) * N, 0.0), exact(size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const double qav = double(float(qa[size_t(i) * K + k])) * sa, xav = xa[size_t(i) * K + k];
      for (int j = 0; j < N; ++j) {
        want[size_t(i) * N + j] += qav * double(float(qb[size_t(k) * N + j])) * sb;
        exact[size_t(i) * N + j] += xav * double(xb[size_t(k) * N + j]);
      }
    }
  double scale = 0, worst = 0, quantization = 0;
  for (double w : exact) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::fabs(got[i] - want[i]) / scale);
    quantization = std::max(quantization, std::fabs(want[i] - exact[i]) / scale);
  }
  const bool ok = worst <= 1e-5;
  std::printf("%s, %s (float8_e4m3 x float8_e5m2): %s (max error %.3g of the largest |C|); "
              "quantization itself moved C by up to %.3g\n",
              dev.name().c_str(), family, ok ? "matches the float64 reference" : "MISMATCH", worst, quantization);

  // The library: the same product with per-row scales (one per row of A,
  // one per column of B), written as bfloat16.
  std::vector<float> rowScaleA(M, sa), colScaleB(N, sb);
  Buffer<float> ra = dev.upload(rowScaleA), cb = dev.upload(colScaleB);
  Buffer<bfloat16> c16 = dev.alloc<bfloat16>(size_t(M) * N);
  kernels::matmul(dev, a, b, c16, {.M = M, .N = N, .K = K}, {ra, cb, kernels::Fp8Scaling::PerRow}, nullptr,
                  kernels::MatmulConfig{.BM = 64, .BN = 64, .BK = 64, .GROUP_M = 8, .num_warps = 4});
  std::vector<bfloat16> got16 = c16.download();
  double worst16 = 0;
  for (size_t i = 0; i < want.size(); ++i) worst16 = std::max(worst16, std::fabs(float(got16[i]) - want[i]) / scale);
  const bool ok16 = worst16 <= 1e-2; // bfloat16's rounding of C
  std::printf("  kernels::matmul, per-row scales, bfloat16 C: %s (max error %.3g)\n",
              ok16 ? "matches" : "MISMATCH", worst16);
  count(kernel.stats());
  count(kernels::matmulFp8Kernel<E4, E5, bfloat16>().stats());
  return ok && ok16;
}

bool runOn(Device &dev) {
  if (dev.arch() == "gfx942") return run<float8_e4m3fnuz, float8_e5m2fnuz>(dev, "FNUZ");
  if (dev.arch() == "gfx950") return run<float8_e4m3fn, float8_e5m2>(dev, "OCP");
  std::printf("%s: its matrix cores take no 8-bit floats (gfx942 and gfx950 do)\n", dev.arch().c_str());
  return true;
}

int main() {
  Device dev = Device::open();
  bool ok = true;
  if (dev.isEmulator()) {
    // No GPU: the emulator runs both families, each on the target that takes it.
    for (const char *arch : {"gfx942", "gfx950"}) {
      Device emu = Device::emulator(arch);
      ok = runOn(emu) && ok;
    }
  } else {
    ok = runOn(dev);
  }
  std::printf("kernels compiled: %llu, loaded from the disk cache: %llu\n", compiled, fromDisk);
  return ok ? 0 : 1;
}
