// tessel::kernels::attention against a float64 reference on the host: odd
// sequence lengths (not multiples of the blocks), causal and not, head dims
// 64 and 128, f16 and bf16, grouped-query heads, strided Q; on gfx942, gfx950
// and gfx1100. And every error the launcher raises.
#include "e2e_common.hpp"

#include <tessel/kernels/attention.hpp>

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/lowering/target.hpp"

#include <algorithm>
#include <cmath>

using namespace tessel;
using namespace e2e;

namespace {

struct Case {
  int B, Hq, Hkv, Sq, Sk, D;
  bool causal;
  bool kvSeqMajor = false; // K and V stored [B, S_k, H_kv, D] (strides, not a copy)
};

struct Errors {
  double out = 0, lse = 0;
};

// Runs attention on the emulator for `arch` with random inputs in [-2, 2]
// (Q and out with padded row strides, D + 8 and D + 4 elements; K and V
// [B, H, S, D] or [B, S, H, D]), outputs poisoned (out's padding must stay so);
// returns the largest error of out (absolute: out is a convex combination
// of V's rows, so |out| <= 2 and its elements near 0 carry no relative
// meaning) and of lse (absolute, in natural-log units).
template <class T> Errors runAttention(const char *arch, Case c) {
  Device dev = Device::emulator(arch);
  const int qRow = c.D + 8, outRow = c.D + 4; // padded rows: Q read past D, out written past D
  auto make = [](size_t n) {
    std::vector<float> raw = randomFloats(n, -2.f, 2.f);
    return std::vector<T>(raw.begin(), raw.end());
  };
  std::vector<T> hq = make(size_t(c.B) * c.Hq * c.Sq * qRow);
  std::vector<T> hk = make(size_t(c.B) * c.Hkv * c.Sk * c.D), hv = make(size_t(c.B) * c.Hkv * c.Sk * c.D);
  auto q = dev.upload(hq), k = dev.upload(hk), v = dev.upload(hv);
  std::vector<T> junkOut(size_t(c.B) * c.Hq * c.Sq * outRow);
  std::memset(static_cast<void *>(junkOut.data()), 0xA5, junkOut.size() * sizeof(T));
  std::vector<float> junkLse(size_t(c.B) * c.Hq * c.Sq, std::nanf(""));
  auto out = dev.upload(junkOut);
  auto lse = dev.upload(junkLse);
  kernels::AttentionShape shape{.batch = c.B, .heads_q = c.Hq, .heads_kv = c.Hkv, .seq_q = c.Sq, .seq_k = c.Sk,
                                .head_dim = c.D, .causal = c.causal};
  shape.q_strides[0] = int64_t(c.Hq) * c.Sq * qRow;
  shape.q_strides[1] = int64_t(c.Sq) * qRow;
  shape.q_strides[2] = qRow;
  shape.out_strides[0] = int64_t(c.Hq) * c.Sq * outRow;
  shape.out_strides[1] = int64_t(c.Sq) * outRow;
  shape.out_strides[2] = outRow;
  if (c.kvSeqMajor) {
    const int64_t st[4] = {int64_t(c.Sk) * c.Hkv * c.D, c.D, int64_t(c.Hkv) * c.D, 1};
    std::copy(st, st + 4, shape.k_strides);
    std::copy(st, st + 4, shape.v_strides);
  }
  auto kvAt = [&](int b, int h, int j) {
    return c.kvSeqMajor ? ((size_t(b) * c.Sk + j) * c.Hkv + h) * c.D : ((size_t(b) * c.Hkv + h) * c.Sk + j) * c.D;
  };
  kernels::attention(dev, q, k, v, out, lse, shape);
  std::vector<T> got = out.download();
  std::vector<float> gotLse = lse.download();

  // The reference: softmax(Q K^T / sqrt(D)) V in double, from the same
  // (rounded) inputs.
  Errors e;
  const double scale = 1.0 / std::sqrt(double(c.D));
  std::vector<double> s(c.Sk);
  for (int b = 0; b < c.B; ++b)
    for (int h = 0; h < c.Hq; ++h) {
      const int hk_ = h / (c.Hq / c.Hkv);
      for (int i = 0; i < c.Sq; ++i) {
        const T *qi = &hq[((size_t(b) * c.Hq + h) * c.Sq + i) * qRow];
        const int last = c.causal ? i : c.Sk - 1;
        double m = -INFINITY;
        for (int j = 0; j <= last; ++j) {
          const T *kj = &hk[kvAt(b, hk_, j)];
          double dotp = 0;
          for (int d = 0; d < c.D; ++d) dotp += double(float(qi[d])) * double(float(kj[d]));
          s[j] = dotp * scale;
          m = std::max(m, s[j]);
        }
        double total = 0;
        for (int j = 0; j <= last; ++j) total += s[j] = std::exp(s[j] - m);
        const size_t row = (size_t(b) * c.Hq + h) * c.Sq + i;
        e.lse = std::max(e.lse, std::fabs(double(gotLse[row]) - (m + std::log(total))));
        if (std::isnan(gotLse[row])) e.lse = INFINITY;
        for (int d = 0; d < c.D; ++d) {
          double want = 0;
          for (int j = 0; j <= last; ++j)
            want += s[j] * double(float(hv[kvAt(b, hk_, j) + d]));
          want /= total;
          double err = std::fabs(double(float(got[row * outRow + d])) - want);
          e.out = std::isnan(err) ? INFINITY : std::max(e.out, err);
        }
      }
    }
  size_t touched = 0; // out's row padding must keep its poison
  for (size_t row = 0; row < size_t(c.B) * c.Hq * c.Sq; ++row)
    for (int d = c.D; d < outRow; ++d)
      touched += std::memcmp(&got[row * outRow + d], &junkOut[row * outRow + d], sizeof(T)) != 0;
  CHECK_MESSAGE(touched == 0, touched << " padding elements of out were written");
  return e;
}

// Tolerances (absolute; the worst seen is in parentheses). out is a convex
// combination of V's rows, |out| <= 2. Two roundings to T dominate: P to T
// before the second dot (as Triton's tutorial does: a relative error of at
// most half an ulp per weight, 2^-11 for f16 and 2^-8 for bf16, times |V| <=
// 2) and out to T at the end (half an ulp of a value below 2: 2^-11 and
// 2^-8). f16: 2^-10 + 2^-11 = 1.5e-3, tolerance 2e-3 (6.7e-4 seen); bf16:
// 2^-7 + 2^-8 = 1.2e-2, tolerance 1.2e-2 (5.4e-3 seen). lse is f32 from
// end to end (scores |s| <= 4 sqrt(D), a sum of at most S_k terms):
// tolerance 1e-5 (7.2e-7 seen).
template <class T> double outTolerance() { return std::is_same_v<T, half> ? 2e-3 : 1.2e-2; }
constexpr double kLseTolerance = 1e-5;

template <class T> void checkAll(const char *arch, std::initializer_list<Case> cases) {
  for (Case c : cases) {
    CAPTURE(arch);
    CAPTURE(c.B);
    CAPTURE(c.Hq);
    CAPTURE(c.Hkv);
    CAPTURE(c.Sq);
    CAPTURE(c.Sk);
    CAPTURE(c.D);
    CAPTURE(c.causal);
    Errors e = runAttention<T>(arch, c);
    CHECK(e.out <= outTolerance<T>());
    CHECK(e.lse <= kLseTolerance);
  }
}

} // namespace

TEST_CASE("attention f16 matches float64: odd lengths, causal and not, GQA, d64 and d128, gfx942") {
  checkAll<half>("gfx942", {{1, 4, 2, 77, 130, 64, false},
                            {2, 4, 2, 130, 77, 64, false, true},
                            {1, 4, 2, 130, 130, 64, true},
                            {1, 2, 1, 130, 77, 128, false},
                            {1, 2, 2, 77, 77, 128, true},
                            {1, 2, 1, 64, 128, 64, false}}); // whole key blocks only: no masked block
}

TEST_CASE("attention bf16 matches float64: odd lengths, causal and not, GQA, d64 and d128, gfx942") {
  checkAll<bfloat16>("gfx942", {{1, 4, 2, 77, 130, 64, false}, {1, 2, 1, 77, 77, 128, true, true}});
}

TEST_CASE("attention matches float64 on gfx950") {
  checkAll<half>("gfx950", {{2, 4, 2, 77, 77, 64, true}, {1, 2, 1, 130, 77, 128, false}});
  checkAll<bfloat16>("gfx950", {{1, 4, 2, 130, 77, 64, false}});
}

TEST_CASE("attention matches float64 on gfx1100 (wave32, WMMA)") {
  checkAll<half>("gfx1100", {{1, 4, 2, 77, 130, 64, false}, {1, 2, 1, 77, 77, 128, true}});
  checkAll<bfloat16>("gfx1100", {{1, 4, 2, 130, 130, 64, true}});
}

// attention_fwd<half> at head dim d compiled for the GPU at `cfg` (the
// emulator runs the same module retargeted to the host).
static CompiledKernel compileAttention(const char *arch, int d, bool causal, const kernels::AttentionConfig &cfg) {
  auto h = emulator().alloc<half>(64);
  auto f = emulator().alloc<float>(64);
  detail::TraceRequest request = kernels::attentionKernel<half>().trace(
      h, h, h, h, f, 4, 2, 77, 77, 0.1f, 0, 0, d, 1, 0, 0, d, 1, 0, 0, d, 1, 0, 0, d, 1, d, cfg.BLOCK_M, cfg.BLOCK_N,
      causal, cfg.early_v);
  return compileTrace(request.trace, request.spec,
                      {.arch = arch, .numWarps = cfg.num_warps, .wavesPerEu = cfg.waves_per_eu});
}

// Matrix instructions, no scratch.
static void checkCompilesWithoutSpills(const char *arch, int d, kernels::AttentionConfig cfg) {
  const unsigned wave = std::string(arch) == "gfx1100" ? 32 : 64;
  const std::string target = arch; // CAPTURE prints a char pointer's address
  for (bool causal : {false, true}) {
    CAPTURE(target);
    CAPTURE(d);
    CAPTURE(cfg.num_warps);
    CAPTURE(causal);
    std::string assembly;
    std::string log = stderrOf("/tmp/tessel-attention-compile.txt",
                               [&] { assembly = compileAttention(arch, d, causal, cfg).assembly(); });
    CHECK(contains(assembly, wave == 32 ? "v_wmma_f32_16x16x16_f16" : "v_mfma_f32_"));
    CHECK_MESSAGE(!contains(log, "spills"), log);
  }
}

TEST_CASE("attention's default configs compile to matrix instructions without spills on every target (the AMDGPU backend)") {
  for (const char *arch : {"gfx942", "gfx950", "gfx1100"})
    for (int d : {64, 128})
      checkCompilesWithoutSpills(arch, d, kernels::attentionConfig(d, std::string(arch) == "gfx1100" ? 32 : 64));
  // Head dim 128 on gfx1100 also fits 4 waves, at 32 x 16 blocks.
  checkCompilesWithoutSpills("gfx1100", 128, {32, 16, 4});
}

// The tile IR's first loop, up to its first dot.
static std::string firstLoopBeforeDot(const std::string &tileIR) {
  size_t loop = tileIR.find("scf.for");
  REQUIRE(loop != std::string::npos);
  size_t dot = tileIR.find("tessel.dot", loop);
  REQUIRE(dot != std::string::npos);
  return tileIR.substr(loop, dot - loop);
}

TEST_CASE("attention: early_v loads V with K, before the first dot; a default never loses a wave to it") {
  for (const char *arch : {"gfx90a", "gfx942", "gfx950", "gfx1100"})
    for (int d : {64, 128})
      for (bool causal : {false, true}) {
        const std::string target = arch; // CAPTURE prints a char pointer's address
        CAPTURE(target);
        CAPTURE(d);
        CAPTURE(causal);
        const kernels::AttentionConfig chosen = kernels::attentionConfig(d, target == "gfx1100" ? 32 : 64);
        kernels::AttentionConfig other = chosen;
        other.early_v = !chosen.early_v;
        CompiledKernel a = compileAttention(arch, d, causal, chosen), b = compileAttention(arch, d, causal, other);
        const CompiledKernel &early = chosen.early_v ? a : b, &late = chosen.early_v ? b : a;
        // K's load (and V's, when early) before Q K^T in the loop of whole key blocks.
        CHECK(occurrences(firstLoopBeforeDot(early.tileIR), "load %") == 2);
        CHECK(occurrences(firstLoopBeforeDot(late.tileIR), "load %") == 1);
        auto waves = [](const CompiledKernel &k) {
          return occupancyOf(requireTarget(k.arch), kernelResources(k.hsaco, k.name), k.blockSize, k.ldsBytes)
              .wavesPerSimd;
        };
        CHECK(waves(a) >= waves(b));
      }
}

// Waves a SIMD runs of attention's default blocks, at least those of
// Triton 3.9's tutorial kernel at the same blocks (scripts/triton-compare.py
// --case attention): gfx1100 d128 gets there by asking for 8 (waves_per_eu;
// without, 6).
TEST_CASE("attention: the default blocks run at least Triton's waves per SIMD") {
  struct Row {
    const char *arch;
    int d;
    unsigned waves;
  };
  for (const Row &row : {Row{"gfx942", 64, 3}, Row{"gfx942", 128, 2}, Row{"gfx950", 64, 3}, Row{"gfx950", 128, 2},
                         Row{"gfx1100", 64, 8}, Row{"gfx1100", 128, 8}})
    for (bool causal : {false, true}) {
      const std::string target = row.arch; // CAPTURE prints a char pointer's address
      CAPTURE(target);
      CAPTURE(row.d);
      CAPTURE(causal);
      CompiledKernel k =
          compileAttention(row.arch, row.d, causal, kernels::attentionConfig(row.d, target == "gfx1100" ? 32 : 64));
      CHECK(occupancyOf(requireTarget(k.arch), kernelResources(k.hsaco, k.name), k.blockSize, k.ldsBytes).wavesPerSimd >=
            row.waves);
    }
}

// gfx1100 d128's default asks for 8 waves a SIMD. LLVM's own schedule took
// 203 VGPRs (6 a SIMD) and the compiler's occupancy retry asked for 8; since
// the second dot's waves split [1, 8] (a chain's tail on WMMA gives its tie
// to N) it takes 184 unasked and nothing is retried (the retry's own test:
// fp8_dot_test.cpp). Either way: 8 waves, no scratch.
TEST_CASE("attention: gfx1100 d128 runs 8 waves a SIMD, asked for by waves_per_eu = 8 or not") {
  kernels::AttentionConfig asked = kernels::attentionConfig(128, 32), unasked = asked;
  REQUIRE(asked.waves_per_eu == 8);
  unasked.waves_per_eu = 0;
  auto waves = [](const CompiledKernel &k) {
    return occupancyOf(requireTarget(k.arch), kernelResources(k.hsaco, k.name), k.blockSize, k.ldsBytes).wavesPerSimd;
  };
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    CompiledKernel with = compileAttention("gfx1100", 128, causal, asked);
    CompiledKernel without = compileAttention("gfx1100", 128, causal, unasked);
    CHECK(waves(with) == 8);
    CHECK(waves(without) == 8);
    CHECK(kernelResources(with.hsaco, with.name).privateSegmentBytes == 0);
    CHECK(kernelResources(without.hsaco, without.name).privateSegmentBytes == 0);
    CHECK(!contains(without.llvmIR(), "amdgpu-waves-per-eu")); // no retry was needed
  }
}

TEST_CASE("attention: the launcher's errors") {
  Device dev = Device::emulator("gfx942");
  auto q = dev.alloc<half>(4 * 77 * 64), k = dev.alloc<half>(2 * 77 * 64), v = dev.alloc<half>(2 * 77 * 64);
  auto out = dev.alloc<half>(4 * 77 * 64);
  auto lse = dev.alloc<float>(4 * 77);
  auto shape = [] {
    return kernels::AttentionShape{.heads_q = 4, .heads_kv = 2, .seq_q = 77, .seq_k = 77, .head_dim = 64};
  };
  auto s = shape();
  s.head_dim = 96;
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s),
                       "attention: head_dim 96 is not supported (64 or 128)", Error);
  s = shape();
  s.heads_q = 3;
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s),
                       "attention: heads_q = 3 is not a multiple of heads_kv = 2 (grouped-query heads)", Error);
  s = shape();
  s.seq_k = 0;
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s),
                       "attention: batch, heads_q, heads_kv, seq_q and seq_k must be at least 1 (batch = 1, "
                       "heads_q = 4, heads_kv = 2, seq_q = 77, seq_k = 0)",
                       Error);
  s = shape();
  s.causal = true;
  s.seq_k = 70;
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s),
                       "attention: causal attention needs seq_q == seq_k (seq_q = 77, seq_k = 70)", Error);
  s = shape();
  s.seq_k = 78; // K and V one key short
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s),
                       "attention: K: the buffer holds 9856 elements and needs 9984", Error);
  s = shape();
  s.heads_q = 8; // Q, out and lse sized for 4 heads
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s),
                       "attention: Q: the buffer holds 19712 elements and needs 39424", Error);
  s = shape();
  s.out_strides[2] = 65; // out's rows padded: the buffer is too small
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s),
                       "attention: out: the buffer holds 19712 elements and needs 19788", Error);
  s = shape();
  s.batch = 16384;
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s),
                       "attention: batch * heads_q = 65536 is more than 65535 (one program column per head)", Error);
  auto shortLse = dev.alloc<float>(4 * 77 - 1);
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, shortLse, shape()),
                       "attention: lse: the buffer holds 307 elements and needs 308", Error);
  s = shape(); // Q, K, V and out overlapping in place (strides of 1) fit, lse does not
  s.heads_q = 65535;
  s.heads_kv = 1;
  s.seq_q = s.seq_k = 32769;
  for (auto *st : {&s.q_strides, &s.k_strides, &s.v_strides, &s.out_strides})
    for (int64_t &x : *st) x = 1;
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s),
                       "attention: lse spans more than 2^31 - 1 elements (32-bit offsets)", Error);
  s = shape();
  s.scale = -0.125f;
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s),
                       "attention: scale -0.125000 is not a positive finite number (0: 1 / sqrt(head_dim))", Error);
  s = shape();
  s.causal = true;
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s, kernels::AttentionConfig{64, 48, 4}),
                       "attention: causal attention needs BLOCK_M (64) to be a multiple of BLOCK_N (48)", Error);
  s = shape();
  s.k_strides[2] = -64;
  CHECK_THROWS_WITH_AS(kernels::attention(dev, q, k, v, out, lse, s), "attention: K: strides must not be negative",
                       Error);
}

