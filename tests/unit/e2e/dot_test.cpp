// dot on the matrix cores: what the compiler emits for gfx942 (MFMA), and
// results on the emulator against a float64 host matmul.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/compile.hpp"

#include <tessel/kernels/matmul.hpp>

using namespace tessel;
using namespace e2e;

namespace {

// C[M, N] = A[M, K] @ B[K, N], row-major, one program per BM x BN block,
// a loop over K in steps of BK; edges masked.
template <class T>
void matmul(Ptr<T> a, Ptr<T> b, Ptr<detail::dot_acc_t<T>> c, i32 M, i32 N, i32 K, Const<int> BM, Const<int> BN,
            Const<int> BK) {
  auto rows = program_id(0) * BM + arange(0, BM);
  auto cols = program_id(1) * BN + arange(0, BN);
  auto ks = arange(0, BK);
  auto acc = zeros<detail::dot_acc_t<T>>({BM, BN});
  for_range(0, K, BK, [&](i32 k) {
    auto ka = k + ks;
    auto ta = load(a + expand_dims(rows, 1) * K + expand_dims(ka, 0),
                   expand_dims(rows < M, 1) & expand_dims(ka < K, 0), 0);
    auto tb = load(b + expand_dims(ka, 1) * N + expand_dims(cols, 0),
                   expand_dims(ka < K, 1) & expand_dims(cols < N, 0), 0);
    acc = dot(ta, tb, acc);
  });
  store(c + expand_dims(rows, 1) * N + expand_dims(cols, 0), acc,
        expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
}

// The same, with A's tiles also summed into an f32 [BM, BK] tile: A's tile
// is read by more than its dot, so the pipeliner carries it in registers.
void matmulSummingA(Ptr<half> a, Ptr<half> b, Ptr<float> c, Ptr<float> sums, i32 M, i32 N, i32 K, Const<int> BM,
                    Const<int> BN, Const<int> BK) {
  auto rows = program_id(0) * BM + arange(0, BM);
  auto cols = program_id(1) * BN + arange(0, BN);
  auto ks = arange(0, BK);
  auto acc = zeros<float>({BM, BN});
  auto sum = zeros<float>({BM, BK});
  for_range(0, K, BK, [&](i32 k) {
    auto ka = k + ks;
    auto ta = load(a + expand_dims(rows, 1) * K + expand_dims(ka, 0),
                   expand_dims(rows < M, 1) & expand_dims(ka < K, 0), 0);
    auto tb = load(b + expand_dims(ka, 1) * N + expand_dims(cols, 0),
                   expand_dims(ka < K, 1) & expand_dims(cols < N, 0), 0);
    acc = dot(ta, tb, acc);
    sum = sum + cast<float>(ta);
  });
  store(c + expand_dims(rows, 1) * N + expand_dims(cols, 0), acc,
        expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
  store(sums + expand_dims(rows, 1) * BK + expand_dims(ks, 0), sum, expand_dims(rows < M, 1));
}

} // namespace

TEST_CASE("dot compiles to MFMA on gfx942: 64x64x32 f16 blocks, 4 waves") {
  auto kernel = jit<matmul<half>>();
  auto a = emulator().alloc<half>(64 * 64), b = emulator().alloc<half>(64 * 64);
  auto c = emulator().alloc<float>(64 * 64);
  detail::TraceRequest request = kernel.trace(a, b, c, 64, 64, 64, 64, 64, 32);
  CompiledKernel k = compileTrace(request.trace, request.spec, {"gfx942", 4});
  CHECK(contains(k.tileIR, "#tessel.mfma<instrShape = [32, 32], wavesPerBlock = [2, 2], transposed = true>"));
  CHECK(contains(k.assembly(), "v_mfma_f32_32x32x8"));
  CHECK(contains(k.assembly(), "s_cbranch")); // the K loop
}

TEST_CASE("kernels::matmul compiles for f16, bf16, f32 and int8 on gfx942 with MFMA") {
  auto check = [](auto tag, const char *mfma) {
    using T = decltype(tag);
    using Out = kernels::detail::matmul_out_t<T>;
    auto a = emulator().alloc<T>(64), b = emulator().alloc<T>(64);
    auto c = emulator().alloc<Out>(64);
    detail::TraceRequest request = kernels::matmulKernel<T>().trace(a, b, c, c, 64, 64, 64, 64, 1, 64, 1, 64, 1, 0, 0,
                                                                    0, 64, 64, 32, 8, 0, 0);
    CompiledKernel k = compileTrace(request.trace, request.spec, {"gfx942", 4});
    CAPTURE(mfma);
    CHECK(contains(k.assembly(), mfma));
  };
  check(half(), "v_mfma_f32_32x32x8");
  check(bfloat16(), "v_mfma_f32_32x32x8_bf16");
  check(float(), "v_mfma_f32_32x32x2_f32");
  check(int8_t(), "v_mfma_i32_32x32x16");
}

namespace {

// What else meets a dot: a reduction of its result, an accumulator loaded
// from memory, a dot feeding another (attention's two products).
void dot_neighbours(Ptr<half> q, Ptr<half> k, Ptr<half> v, Ptr<float> acc0, Ptr<float> out, Ptr<float> rowsums) {
  auto r = arange(0, 32), c = arange(0, 64);
  auto tq = load(q + expand_dims(r, 1) * 64 + expand_dims(c, 0));      // [32, 64]
  auto tk = load(k + expand_dims(c, 1) * 32 + expand_dims(r, 0));      // [64, 32]
  auto start = load(acc0 + expand_dims(r, 1) * 32 + expand_dims(r, 0)); // [32, 32] f32
  auto s = dot(tq, tk, start);
  store(rowsums + r, sum(s, 1));
  auto tv = load(v + expand_dims(r, 1) * 64 + expand_dims(c, 0));      // [32, 64]
  auto o = dot(cast<half>(s), tv);                                      // [32, 64]
  store(out + expand_dims(r, 1) * 64 + expand_dims(c, 0), o);
}

} // namespace

TEST_CASE("a dot's result reduced, its accumulator loaded, its result fed to another dot: compiles") {
  auto kernel = jit<dot_neighbours>();
  auto h = emulator().alloc<half>(4096);
  auto f = emulator().alloc<float>(4096);
  detail::TraceRequest request = kernel.trace(h, h, h, f, f, f);
  for (const char *arch : {"gfx90a", "gfx942", "gfx950"}) {
    CAPTURE(arch);
    CompiledKernel k = compileTrace(request.trace, request.spec, {arch, 4});
    CHECK(contains(k.assembly(), "v_mfma_f32_"));
  }
}

TEST_CASE("dot compiles to WMMA on gfx1100 (wave32): f16, bf16, int8") {
  auto check = [](auto tag, const char *wmma) {
    using T = decltype(tag);
    using Out = kernels::detail::matmul_out_t<T>;
    auto a = emulator().alloc<T>(64), b = emulator().alloc<T>(64);
    auto c = emulator().alloc<Out>(64);
    detail::TraceRequest request = kernels::matmulKernel<T>().trace(a, b, c, c, 64, 64, 64, 64, 1, 64, 1, 64, 1, 0, 0,
                                                                    0, 64, 64, 32, 8, 0, 0);
    CompiledKernel k = compileTrace(request.trace, request.spec, {"gfx1100", 4});
    CAPTURE(wmma);
    CHECK(contains(k.tileIR, "#tessel.wmma<wavesPerBlock = [2, 2], transposed = true>"));
    CHECK(contains(k.assembly(), wmma));
  };
  check(half(), "v_wmma_f32_16x16x16_f16");
  check(bfloat16(), "v_wmma_f32_16x16x16_bf16");
  check(int8_t(), "v_wmma_i32_16x16x16_iu8");
}

namespace {

// C = A @ B on the emulator against a float64 host matmul; inputs random in
// [-1, 1], C poisoned first. Returns the largest error relative to the
// largest |C| of the reference (products of K terms cancel, so elements
// near zero are judged against the matrix's scale).
template <class T>
double runMatmul(int M, int N, int K, int BM, int BN, int BK, unsigned warps, const char *arch = "gfx942") {
  Device dev = Device::emulator(arch);
  auto ha = randomFloats(size_t(M) * K, -1, 1), hb = randomFloats(size_t(K) * N, -1, 1);
  std::vector<T> ta(ha.begin(), ha.end()), tb(hb.begin(), hb.end());
  auto a = dev.upload(ta), b = dev.upload(tb);
  std::vector<float> junk(size_t(M) * N, std::nanf(""));
  auto c = dev.upload(junk);
  static auto kernel = jit<matmul<T>>();
  kernel.launch(dev, {uint32_t((M + BM - 1) / BM), uint32_t((N + BN - 1) / BN)}, {.num_warps = warps}, a, b, c, M, N, K,
                BM, BN, BK);
  std::vector<float> got = c.download();
  std::vector<double> want(size_t(M) * N, 0.0);
  double scale = 0;
  for (int i = 0; i < M; ++i)
    for (int kk = 0; kk < K; ++kk) {
      double av = double(float(ta[size_t(i) * K + kk]));
      for (int j = 0; j < N; ++j) want[size_t(i) * N + j] += av * double(float(tb[size_t(kk) * N + j]));
    }
  for (double w : want) scale = std::max(scale, std::fabs(w));
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / std::max(scale, 1e-30));
  return worst;
}

} // namespace

TEST_CASE("matmul on the matrix cores matches float64: 512^3 f16 and bf16, odd shapes with masked edges") {
  CHECK(runMatmul<half>(512, 512, 512, 128, 128, 32, 4) < 1e-2);
  CHECK(runMatmul<bfloat16>(512, 512, 512, 128, 128, 32, 4) < 1e-2);
  CHECK(runMatmul<half>(129, 63, 65, 64, 64, 32, 4) < 1e-2);   // every edge masked
  CHECK(runMatmul<half>(1, 4096, 256, 32, 128, 64, 4) < 1e-2); // one row
  CHECK(runMatmul<float>(70, 50, 33, 32, 32, 16, 4) < 1e-5);   // f32 on 32x32x2
  CHECK(runMatmul<half>(100, 90, 80, 32, 32, 32, 1, "gfx950") < 1e-2);
}

TEST_CASE("matmul on gfx1100's WMMA units matches float64; f32, which WMMA does not take, by multiply-adds") {
  CHECK(runMatmul<half>(100, 90, 80, 64, 64, 32, 4, "gfx1100") < 1e-2);
  CHECK(runMatmul<bfloat16>(64, 64, 64, 32, 32, 32, 2, "gfx1100") < 1e-2);
  CHECK(runMatmul<float>(70, 50, 40, 32, 32, 16, 2, "gfx1100") < 1e-5);
}

namespace {

// C[z] = A[z] @ B[z] for 4 batches of [32, 32] x [32, 64] in one program: a
// rank-3 dot.
void batched(Ptr<half> a, Ptr<half> b, Ptr<float> c) {
  auto z = expand_dims(expand_dims(arange(0, 4), 1), 2);   // [4, 1, 1]
  auto i = expand_dims(expand_dims(arange(0, 32), 0), 2);  // [1, 32, 1]
  auto k = expand_dims(expand_dims(arange(0, 32), 0), 0);  // [1, 1, 32]
  auto kr = expand_dims(expand_dims(arange(0, 32), 0), 2); // [1, 32, 1]
  auto j = expand_dims(expand_dims(arange(0, 64), 0), 0);  // [1, 1, 64]
  auto ta = load(a + z * 1024 + i * 32 + k);               // [4, 32, 32]
  auto tb = load(b + z * 2048 + kr * 64 + j);              // [4, 32, 64]
  store(c + z * 2048 + i * 64 + j, dot(ta, tb));           // [4, 32, 64]
}

} // namespace

TEST_CASE("a batched (rank-3) dot matches float64, on MFMA and on WMMA") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    auto fa = randomFloats(4 * 32 * 32, -1, 1), fb = randomFloats(4 * 32 * 64, -1, 1);
    std::vector<half> ha(fa.begin(), fa.end()), hb(fb.begin(), fb.end());
    auto a = dev.upload(ha), b = dev.upload(hb);
    auto c = dev.upload(std::vector<float>(4 * 32 * 64, std::nanf("")));
    auto kernel = jit<batched>();
    kernel.launch(dev, {1}, {.num_warps = 4}, a, b, c);
    auto got = c.download();
    double worst = 0;
    for (int zz = 0; zz < 4; ++zz)
      for (int ii = 0; ii < 32; ++ii)
        for (int jj = 0; jj < 64; ++jj) {
          double want = 0;
          for (int kk = 0; kk < 32; ++kk)
            want += double(float(ha[size_t(zz * 1024 + ii * 32 + kk)])) * double(float(hb[size_t(zz * 2048 + kk * 64 + jj)]));
          worst = std::max(worst, std::fabs(got[size_t(zz * 2048 + ii * 64 + jj)] - want));
        }
    CHECK(worst < 1e-4);
  }
}

namespace {
size_t countOf(const std::string &text, const std::string &what, size_t from = 0, size_t to = std::string::npos) {
  size_t n = 0;
  for (size_t at = text.find(what, from); at != std::string::npos && at < to; at = text.find(what, at + 1))
    ++n;
  return n;
}
} // namespace

TEST_CASE("num_stages = s: the K loop loads operands s - 1 steps ahead and keeps them in s - 1 LDS slots; same results") {
  Device dev = Device::emulator("gfx942");
  const int M = 129, N = 100, K = 200, BM = 64, BN = 64, BK = 32;
  auto fa = randomFloats(size_t(M) * K, -1, 1), fb = randomFloats(size_t(K) * N, -1, 1);
  std::vector<half> ha(fa.begin(), fa.end()), hb(fb.begin(), fb.end());
  auto a = dev.upload(ha), b = dev.upload(hb);
  auto kernel = jit<matmul<half>>();
  std::vector<std::vector<float>> results;
  for (unsigned stages : {1u, 2u, 3u, 4u}) {
    CAPTURE(stages);
    auto c = dev.upload(std::vector<float>(size_t(M) * N, std::nanf("")));
    kernel.launch(dev, {uint32_t((M + BM - 1) / BM), uint32_t((N + BN - 1) / BN)}, {.num_warps = 4, .num_stages = stages},
                  a, b, c, M, N, K, BM, BN, BK);
    results.push_back(c.download());
    const std::string &ir = kernel.runtime()->lastKernel()->tileIR;
    size_t loop = ir.find("scf.for");
    REQUIRE(loop != std::string::npos);
    // The loop's closing brace, at the indentation of its `scf.for` line
    // (branches inside the body have yields of their own).
    size_t lineStart = ir.rfind('\n', loop) + 1;
    size_t indent = ir.find_first_not_of(' ', lineStart) - lineStart;
    size_t loopEnd = ir.find("\n" + std::string(indent, ' ') + "}", loop);
    REQUIRE(loopEnd != std::string::npos);
    // Before the loop: the first s - 1 steps' A and B tiles, the first into
    // LDS. In the loop: the tiles s - 1 steps ahead, the operands read from
    // LDS, the next step's written; one barrier per step (two with one slot).
    // (masked global loads: tessel.load, or tessel.buffer_load through a small Buffer)
    auto loads = [&](size_t from, size_t to) {
      return countOf(ir, "tessel.load", from, to) + countOf(ir, "tessel.buffer_load", from, to);
    };
    CHECK(loads(0, loop) == 2 * (stages - 1));
    CHECK(loads(loop, loopEnd) == 2);
    if (stages == 1) {
      CHECK(countOf(ir, "local_alloc") == 0);
      CHECK(countOf(ir, "tessel.convert_layout", loop, loopEnd) >= 2);
    } else {
      std::string slots = "<" + std::to_string(stages - 1) + "x";
      CHECK(countOf(ir, "local_alloc {tessel.lds_offset", 0, loop) == 2);
      CHECK(countOf(ir, "local_alloc {tessel.lds_offset = 0 : i64} : " + slots, 0, loop) == 1);
      CHECK(countOf(ir, "tessel.local_store", 0, loop) == 2);
      CHECK(countOf(ir, "tessel.local_load", loop, loopEnd) == 2);
      CHECK(countOf(ir, "tessel.local_store", loop, loopEnd) == 2);
      CHECK(countOf(ir, "tessel.barrier", loop, loopEnd) == (stages == 2 ? 2u : 1u));
      CHECK(countOf(ir, "tessel.convert_layout", loop, loopEnd) == 0);
    }
  }
  for (size_t s = 1; s < results.size(); ++s)
    CHECK(results[0] == results[s]); // the same arithmetic in the same order
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int kk = 0; kk < K; ++kk) want += double(float(ha[size_t(i) * K + kk])) * double(float(hb[size_t(kk) * N + j]));
      worst = std::max(worst, std::fabs(results.back()[size_t(i) * N + j] - want));
    }
  CHECK(worst < 1e-3);
}

TEST_CASE("num_stages = s: an operand tile read by more than its dot waits in registers, s - 1 sets; same results") {
  Device dev = Device::emulator("gfx942");
  const int M = 77, N = 45, K = 143, BM = 64, BN = 64, BK = 32;
  // Its own generator: the suite's shared one feeds later tests' inputs
  // (fast_math_test counts how many of its inputs flush), which stay as they were.
  std::mt19937_64 gen(3232);
  std::uniform_real_distribution<float> unit(-1, 1);
  std::vector<half> ha(size_t(M) * K), hb(size_t(K) * N);
  for (half &x : ha) x = half(unit(gen));
  for (half &x : hb) x = half(unit(gen));
  auto a = dev.upload(ha), b = dev.upload(hb);
  auto kernel = jit<matmulSummingA>();
  const uint32_t rowBlocks = uint32_t((M + BM - 1) / BM);
  for (unsigned stages : {1u, 2u, 3u}) {
    CAPTURE(stages);
    auto c = dev.upload(std::vector<float>(size_t(M) * N, std::nanf("")));
    auto sums = dev.upload(std::vector<float>(size_t(rowBlocks) * BM * BK, std::nanf("")));
    kernel.launch(dev, {rowBlocks, uint32_t((N + BN - 1) / BN)}, {.num_warps = 4, .num_stages = stages}, a, b, c, sums, M,
                  N, K, BM, BN, BK);
    const std::string &ir = kernel.runtime()->lastKernel()->tileIR;
    size_t loop = ir.find("scf.for");
    REQUIRE(loop != std::string::npos);
    // Only B goes through LDS slots; A's s - 1 tiles are carried.
    if (stages > 1) {
      CHECK(countOf(ir, "local_alloc {tessel.lds_offset", 0, loop) == 1);
      size_t header = ir.find('\n', loop);
      CHECK(countOf(ir, "tensor<64x32xf16", loop, header) == stages - 1);
    }
    auto got = c.download(), gotSums = sums.download();
    double worst = 0, worstSum = 0;
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        double want = 0;
        for (int kk = 0; kk < K; ++kk)
          want += double(float(ha[size_t(i) * K + kk])) * double(float(hb[size_t(kk) * N + j]));
        worst = std::max(worst, std::fabs(got[size_t(i) * N + j] - want));
      }
      for (int j = 0; j < BK; ++j) {
        double want = 0;
        for (int k0 = 0; k0 + j < K; k0 += BK) want += double(float(ha[size_t(i) * K + size_t(k0 + j)]));
        worstSum = std::max(worstSum, std::fabs(gotSums[size_t(i) * BK + size_t(j)] - want));
      }
    }
    CHECK(worst < 1e-3);
    CHECK(worstSum < 1e-4);
  }
}

TEST_CASE("num_stages outside 1..4 is refused at the launch") {
  auto kernel = jit<matmul<half>>();
  auto a = emulator().alloc<half>(64 * 64), b = emulator().alloc<half>(64 * 64);
  auto c = emulator().alloc<float>(64 * 64);
  CHECK_THROWS_WITH_AS(kernel.launch(emulator(), {1, 1}, {.num_warps = 4, .num_stages = 7}, a, b, c, 64, 64, 64, 64, 64,
                                     32),
                       doctest::Contains("num_stages must be 1 to 4, not 7"), Error);
}

TEST_CASE("small blocks stage their operands in swizzled LDS rows; results match float64 (gfx942, gfx950, gfx1100)") {
  // The bank model picks a swizzle over padding for an operand of some of
  // these blocks (LDS rows whose chunks XOR with the row's phase), padding
  // for others: the buffer type says which, and odd sizes over several
  // blocks come out right, with num_stages 1 (conversions, staged the same
  // way) and 2 (LDS buffers kept over the loop: swizzled whenever a swizzle
  // is as conflict-free as a pad, so they take the tiles' bytes).
  const int M = 45, N = 96, K = 112; // N, K divisible by 16: vector loads
  auto fa = randomFloats(size_t(M) * K, -1, 1), fb = randomFloats(size_t(K) * N, -1, 1);
  std::vector<half> ha(fa.begin(), fa.end()), hb(fb.begin(), fb.end());
  std::vector<double> want(size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int kk = 0; kk < K; ++kk)
      for (int j = 0; j < N; ++j)
        want[size_t(i) * N + j] += double(float(ha[size_t(i) * K + kk])) * double(float(hb[size_t(kk) * N + j]));
  struct Block {
    const char *arch;
    int bm, bn, bk;
    unsigned warps;
    size_t padded; // staged operand buffers that pad (no swizzle as conflict-free); the others swizzle
    size_t inWave; // operands whose conversion is an in-wave shuffle: not staged
  };
  // gfx950's 16-row A is replicated over the 4 waves: each wave's lanes hold
  // what its operand layout needs, so it moves by ds_bpermute, not through LDS.
  for (Block blk : {Block{"gfx942", 16, 64, 64, 1, 0, 0}, Block{"gfx942", 32, 32, 32, 1, 0, 0},
                    Block{"gfx950", 16, 128, 32, 4, 0, 1}, Block{"gfx1100", 32, 32, 32, 1, 1, 0}}) {
    for (unsigned stages : {1u, 2u}) {
      const std::string arch = blk.arch;
      CAPTURE(arch);
      CAPTURE(blk.bm);
      CAPTURE(stages);
      Device dev = Device::emulator(blk.arch);
      auto a = dev.upload(ha), b = dev.upload(hb);
      auto c = dev.upload(std::vector<float>(size_t(M) * N, std::nanf("")));
      auto kernel = jit<matmul<half>>();
      kernel.launch(dev, {uint32_t((M + blk.bm - 1) / blk.bm), uint32_t((N + blk.bn - 1) / blk.bn)},
                    {.num_warps = blk.warps, .num_stages = stages}, a, b, c, M, N, K, blk.bm, blk.bn, blk.bk);
      if (stages == 2) {
        const std::string &ir = kernel.runtime()->lastKernel()->tileIR;
        const size_t padded = matchCount(ir, std::regex(R"(local_alloc[^\n]*pad [1-9])")),
                     swizzled = matchCount(ir, std::regex(R"(local_alloc[^\n]*pad 0, swizzle \[)"));
        CAPTURE(padded);
        CAPTURE(swizzled);
        CHECK(padded == blk.padded);
        CHECK(swizzled == 2 - blk.padded - blk.inWave);
      }
      auto got = c.download();
      double worst = 0;
      for (size_t e = 0; e < got.size(); ++e)
        worst = std::max(worst, std::fabs(double(got[e]) - want[e]));
      CHECK(worst < 1e-3);
    }
  }
}
