// dot on blocks below the matrix instructions' tile (M or N under 16, K
// under an instruction's depth) and on blocks whose operands are packed
// 16- and 8-bit registers, on the emulator against a float64 (int64 for
// int8) host product, on gfx942, gfx950 and gfx1100.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/compile.hpp"

using namespace tessel;
using namespace e2e;

namespace {

template <class T> using acc_t = detail::dot_acc_t<T>;

// C = A @ B + ACC in one program: A [M, K], B [K, N], row-major; with
// BATCH > 0 each is BATCH of them, [BATCH, M, K] and so on.
template <class T>
void block_dot(Ptr<T> a, Ptr<T> b, Ptr<acc_t<T>> acc, Ptr<acc_t<T>> c, Const<int> BATCH, Const<int> M, Const<int> N,
               Const<int> K) {
  if (BATCH == 0) {
    auto i = arange(0, M), j = arange(0, N), k = arange(0, K);
    auto ta = load(a + expand_dims(i, 1) * K + expand_dims(k, 0));
    auto tb = load(b + expand_dims(k, 1) * N + expand_dims(j, 0));
    auto out = expand_dims(i, 1) * N + expand_dims(j, 0);
    store(c + out, dot(ta, tb, load(acc + out)));
  } else {
    auto z = expand_dims(expand_dims(arange(0, BATCH), 1), 2); // [B, 1, 1]
    auto i = expand_dims(expand_dims(arange(0, M), 0), 2);     // [1, M, 1]
    auto kc = expand_dims(expand_dims(arange(0, K), 0), 0);    // [1, 1, K]
    auto kr = expand_dims(expand_dims(arange(0, K), 0), 2);    // [1, K, 1]
    auto j = expand_dims(expand_dims(arange(0, N), 0), 0);     // [1, 1, N]
    auto ta = load(a + z * (M * K) + i * K + kc);
    auto tb = load(b + z * (K * N) + kr * N + j);
    auto out = z * (M * N) + i * N + j;
    store(c + out, dot(ta, tb, load(acc + out)));
  }
}

struct Shape3 {
  int batch, m, n, k; // batch 0: 2-D tiles
};

template <class T> std::vector<T> randomInputs(size_t n) {
  if constexpr (std::is_same_v<T, int8_t>) {
    return randomInts<int8_t>(n, -128, 127);
  } else {
    auto f = randomFloats(n, -1, 1);
    return std::vector<T>(f.begin(), f.end());
  }
}

// Runs block_dot<T> on `arch` and returns the largest error relative to the
// largest |C| of the reference (0 when exact: int8 must be).
template <class T>
double runBlockDot(const char *arch, Shape3 s, unsigned warps, std::string *tileIR = nullptr) {
  using Acc = acc_t<T>;
  const size_t batches = size_t(std::max(s.batch, 1));
  Device dev = Device::emulator(arch);
  std::vector<T> ha = randomInputs<T>(batches * s.m * s.k), hb = randomInputs<T>(batches * s.k * s.n);
  std::vector<Acc> hacc;
  if constexpr (std::is_same_v<Acc, int32_t>)
    hacc = randomInts<int32_t>(batches * s.m * s.n, -100000, 100000);
  else
    hacc = randomFloats(batches * s.m * s.n, -1, 1);
  auto a = dev.upload(ha), b = dev.upload(hb);
  auto acc = dev.upload(hacc);
  std::vector<Acc> junk(hacc.size());
  std::memset(static_cast<void *>(junk.data()), 0xA5, junk.size() * sizeof(Acc));
  auto c = dev.upload(junk);
  static auto kernel = jit<block_dot<T>>();
  kernel.launch(dev, {1}, {.num_warps = warps}, a, b, acc, c, s.batch, s.m, s.n, s.k);
  if (tileIR)
    *tileIR = kernel.runtime()->lastKernel()->tileIR;
  std::vector<Acc> got = c.download();
  double scale = 0, worst = 0;
  std::vector<double> want(got.size());
  for (size_t z = 0; z < batches; ++z)
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j) {
        const size_t at = (z * s.m + i) * s.n + j;
        double sum = double(hacc[at]);
        for (int k = 0; k < s.k; ++k)
          sum += double(float(ha[(z * s.m + i) * s.k + k])) * double(float(hb[(z * s.k + k) * s.n + j]));
        want[at] = sum;
        scale = std::max(scale, std::fabs(sum));
      }
  for (size_t e = 0; e < got.size(); ++e)
    worst = std::max(worst, std::fabs(double(got[e]) - want[e]) / std::max(scale, 1e-30));
  return worst;
}

const Shape3 kSmallShapes[] = {
    {0, 2, 2, 16},  // Triton's test_dot 2x2x16
    {0, 16, 4, 16}, // N below 16
    {0, 4, 16, 32}, // M below 16
    {4, 1, 16, 32}, // [4, 1, 32] x [4, 32, 16]: one row per batch
    {2, 8, 2, 64},  // batched, both below 16
    {0, 8, 64, 32}, // M below 16, N over several waves' tiles
    {0, 16, 16, 8}, // K below 16 (multiply-adds where no instruction is that shallow)
    {0, 1, 1, 1},
};

} // namespace

TEST_CASE("dot on blocks with M, N or K below 16 matches the host on gfx942, gfx950 and gfx1100") {
  for (const char *arch : {"gfx942", "gfx950", "gfx1100"})
    for (const Shape3 &s : kSmallShapes) {
      CAPTURE(arch);
      CAPTURE(s.batch);
      CAPTURE(s.m);
      CAPTURE(s.n);
      CAPTURE(s.k);
      CHECK(runBlockDot<half>(arch, s, 4) < 1e-5);
      CHECK(runBlockDot<bfloat16>(arch, s, 4) < 1e-5);
      CHECK(runBlockDot<float>(arch, s, 4) < 1e-5);
      CHECK(runBlockDot<int8_t>(arch, s, 4) == 0);
    }
  // One wave, and waves that all hold the same padded tile.
  CHECK(runBlockDot<half>("gfx942", {0, 2, 2, 16}, 1) < 1e-5);
  CHECK(runBlockDot<half>("gfx1100", {4, 1, 16, 32}, 1) < 1e-5);
  CHECK(runBlockDot<int8_t>("gfx1100", {0, 4, 32, 16}, 2) == 0);
}

TEST_CASE("a block below the instruction's tile pads the matrix instruction; a K no instruction divides takes multiply-adds") {
  std::string ir;
  REQUIRE(runBlockDot<half>("gfx942", {0, 2, 2, 16}, 4, &ir) < 1e-5);
  CHECK(contains(ir, "#tessel.mfma<instrShape = [16, 16]"));
  REQUIRE(runBlockDot<half>("gfx942", {0, 8, 64, 32}, 4, &ir) < 1e-5);
  CHECK(contains(ir, "#tessel.mfma<instrShape = [16, 16], wavesPerBlock = [1, 4]>"));
  REQUIRE(runBlockDot<int8_t>("gfx942", {0, 2, 2, 16}, 4, &ir) == 0);
  CHECK(contains(ir, "#tessel.mfma<instrShape = [32, 32]")); // the only i8 instruction 16 deep
  REQUIRE(runBlockDot<half>("gfx1100", {4, 1, 16, 32}, 4, &ir) < 1e-5);
  CHECK(contains(ir, "#tessel.wmma<"));
  REQUIRE(runBlockDot<half>("gfx1100", {0, 16, 16, 8}, 4, &ir) < 1e-5);
  CHECK_FALSE(contains(ir, "#tessel.wmma<"));
  REQUIRE(runBlockDot<int8_t>("gfx950", {0, 2, 2, 16}, 4, &ir) == 0); // gfx950's i8 instructions are 32 and 64 deep
  CHECK_FALSE(contains(ir, "#tessel.mfma<"));
}

TEST_CASE("16- and 8-bit dot operands count as packed registers: gfx1100 compiles f16 [8, 32, 32] and int8 [128, 128]") {
  // (On one wave it compiles too, spilling, but its code generation takes ~25 s.)
  for (unsigned warps : {2u, 4u}) {
    CAPTURE(warps);
    CHECK(runBlockDot<half>("gfx1100", {8, 32, 32, 32}, warps) < 1e-5);
  }
  CHECK(runBlockDot<int8_t>("gfx1100", {0, 128, 128, 128}, 4) == 0);
  CHECK(runBlockDot<int8_t>("gfx942", {0, 128, 128, 128}, 4) == 0);
}

namespace {

// C[M, N] = A[M, K] @ B[K, N] by BM x BN blocks and a K loop of BK steps,
// every edge masked (dot_test.cpp's matmul with blocks below 16).
template <class T>
void loop_matmul(Ptr<T> a, Ptr<T> b, Ptr<acc_t<T>> c, i32 M, i32 N, i32 K, Const<int> BM, Const<int> BN, Const<int> BK) {
  auto rows = program_id(0) * BM + arange(0, BM);
  auto cols = program_id(1) * BN + arange(0, BN);
  auto ks = arange(0, BK);
  auto acc = zeros<acc_t<T>>({BM, BN});
  for_range(0, K, BK, [&](i32 k) {
    auto ka = k + ks;
    auto ta = load(a + expand_dims(rows, 1) * K + expand_dims(ka, 0), expand_dims(rows < M, 1) & expand_dims(ka < K, 0), 0);
    auto tb = load(b + expand_dims(ka, 1) * N + expand_dims(cols, 0), expand_dims(ka < K, 1) & expand_dims(cols < N, 0), 0);
    acc = dot(ta, tb, acc);
  });
  store(c + expand_dims(rows, 1) * N + expand_dims(cols, 0), acc, expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
}

// A padded dot's result reduced along each axis and fed to a second dot.
void padded_neighbours(Ptr<half> a, Ptr<half> b, Ptr<half> v, Ptr<float> rowsums, Ptr<float> colsums, Ptr<float> out) {
  auto r = arange(0, 2), k = arange(0, 16), n = arange(0, 4);
  auto ta = load(a + expand_dims(r, 1) * 16 + expand_dims(k, 0)); // [2, 16]
  auto tb = load(b + expand_dims(k, 1) * 4 + expand_dims(n, 0));  // [16, 4]
  auto s = dot(ta, tb);                                            // [2, 4]
  store(rowsums + r, sum(s, 1));
  store(colsums + n, sum(s, 0));
  auto tv = load(v + expand_dims(n, 1) * 16 + expand_dims(k, 0)); // [4, 16]
  store(out + expand_dims(r, 1) * 16 + expand_dims(k, 0), dot(cast<half>(s), tv));
}

} // namespace

TEST_CASE("K loops over blocks below 16 (masked edges, num_stages 1 and 2) match the host") {
  const int M = 13, N = 70, K = 100;
  auto fa = randomFloats(size_t(M) * K, -1, 1), fb = randomFloats(size_t(K) * N, -1, 1);
  std::vector<half> ha(fa.begin(), fa.end()), hb(fb.begin(), fb.end());
  std::vector<double> want(size_t(M) * N, 0.0);
  double scale = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      for (int kk = 0; kk < K; ++kk) want[size_t(i) * N + j] += double(float(ha[size_t(i) * K + kk])) * double(float(hb[size_t(kk) * N + j]));
      scale = std::max(scale, std::fabs(want[size_t(i) * N + j]));
    }
  struct Block {
    int bm, bn, bk;
  };
  auto kernel = jit<loop_matmul<half>>();
  for (const char *arch : {"gfx942", "gfx950", "gfx1100"})
    for (Block blk : {Block{2, 16, 16}, Block{4, 64, 32}, Block{16, 8, 32}, Block{1, 32, 64}, Block{8, 8, 8}})
      for (unsigned stages : {1u, 2u}) {
        CAPTURE(arch);
        CAPTURE(blk.bm);
        CAPTURE(blk.bn);
        CAPTURE(blk.bk);
        CAPTURE(stages);
        Device dev = Device::emulator(arch);
        auto a = dev.upload(ha), b = dev.upload(hb);
        auto c = dev.upload(std::vector<float>(size_t(M) * N, std::nanf("")));
        kernel.launch(dev, {uint32_t((M + blk.bm - 1) / blk.bm), uint32_t((N + blk.bn - 1) / blk.bn)},
                      {.num_warps = 4, .num_stages = stages}, a, b, c, M, N, K, blk.bm, blk.bn, blk.bk);
        auto got = c.download();
        double worst = 0;
        for (size_t e = 0; e < got.size(); ++e) worst = std::max(worst, std::fabs(double(got[e]) - want[e]) / scale);
        CHECK(worst < 1e-5);
      }
}

TEST_CASE("a padded dot's result reduced along each axis and fed to another dot matches the host") {
  for (const char *arch : {"gfx942", "gfx950", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    auto fa = randomFloats(32, -1, 1), fb = randomFloats(64, -1, 1), fv = randomFloats(64, -1, 1);
    std::vector<half> ha(fa.begin(), fa.end()), hb(fb.begin(), fb.end()), hv(fv.begin(), fv.end());
    auto a = dev.upload(ha), b = dev.upload(hb), v = dev.upload(hv);
    auto rowsums = dev.upload(std::vector<float>(2, std::nanf(""))), colsums = dev.upload(std::vector<float>(4, std::nanf("")));
    auto out = dev.upload(std::vector<float>(32, std::nanf("")));
    jit<padded_neighbours>().launch(dev, {1}, {.num_warps = 4}, a, b, v, rowsums, colsums, out);
    double s[2][4] = {};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 16; ++k) s[i][j] += double(float(ha[i * 16 + k])) * double(float(hb[k * 4 + j]));
    auto rs = rowsums.download(), cs = colsums.download(), o = out.download();
    for (int i = 0; i < 2; ++i) CHECK(std::fabs(rs[i] - (s[i][0] + s[i][1] + s[i][2] + s[i][3])) < 1e-4);
    for (int j = 0; j < 4; ++j) CHECK(std::fabs(cs[j] - (s[0][j] + s[1][j])) < 1e-4);
    double worst = 0;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 16; ++k) {
        double want = 0;
        for (int j = 0; j < 4; ++j) want += double(float(half(float(s[i][j])))) * double(float(hv[j * 16 + k]));
        worst = std::max(worst, std::fabs(o[i * 16 + k] - want));
      }
    CHECK(worst < 1e-3);
  }
}
