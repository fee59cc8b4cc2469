// Matrix multiply on the matrix cores: C = A @ B (+ bias) (activation),
// batched, with any row and column strides (so transposed operands are
// strides, not copies). f16, bf16 and f32 inputs accumulate in f32 and
// write C in their own type; int8 inputs accumulate and write int32.
//
//   tessel::kernels::matmul(dev, a, b, c, {.M = 512, .N = 512, .K = 512});
#pragma once

#include <tessel/tessel.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tessel::kernels {

enum class Activation : int { None = 0, Relu = 1, Gelu = 2 };

// The problem: sizes and strides in elements (row-major by default: set the
// strides to zero to get them from the sizes).
struct MatmulShape {
  int64_t M = 0, N = 0, K = 0;
  int64_t batch = 1;
  int64_t a_stride_m = 0, a_stride_k = 0; // A[m, k] at m * a_stride_m + k * a_stride_k
  int64_t b_stride_k = 0, b_stride_n = 0;
  int64_t c_stride_m = 0, c_stride_n = 0;
  int64_t a_batch_stride = 0, b_batch_stride = 0, c_batch_stride = 0; // 0: M*K, K*N, M*N
  Activation activation = Activation::None;
};

namespace detail {

template <class T> constexpr const char *matmulSuffix() {
  if constexpr (std::is_same_v<T, float>) return "f32";
  else if constexpr (std::is_same_v<T, half>) return "f16";
  else if constexpr (std::is_same_v<T, bfloat16>) return "bf16";
  else return "i8";
}

template <class T> using matmul_out_t = std::conditional_t<std::is_same_v<T, int8_t>, int32_t, T>;
template <class T> using matmul_acc_t = tessel::detail::dot_acc_t<T>;

template <class Acc> Tile<Acc> activate(const Tile<Acc> &x, int activation) {
  if constexpr (std::is_same_v<Acc, float>) {
    if (activation == int(Activation::Relu)) return maximum(x, 0.0f);
    if (activation == int(Activation::Gelu)) {
      // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), tanh y = 1 - 2 / (1 + exp(2 y))
      auto y = 0.7978845608f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (2.0f - 2.0f / (1.0f + exp(2.0f * y)));
    }
  } else {
    if (activation == int(Activation::Relu)) return maximum(x, 0);
  }
  return x;
}

} // namespace detail

// The block program: program (p, batch) computes a BM x BN block of C,
// walking K in steps of BK. Programs are numbered in groups of GROUP_M
// block rows (Triton's grouped ordering): consecutive programs share the
// same columns of B and nearby rows of A, which the GPU's caches then hold.
template <class T>
void matmul_block(Ptr<T> a, Ptr<T> b, Ptr<detail::matmul_out_t<T>> c, Ptr<detail::matmul_out_t<T>> bias, i32 M, i32 N,
                  i32 K, i32 sam, i32 sak, i32 sbk, i32 sbn, i32 scm, i32 scn, i32 batch_a, i32 batch_b, i32 batch_c,
                  Const<int> BM, Const<int> BN, Const<int> BK, Const<int> GROUP_M, Const<int> HAS_BIAS,
                  Const<int> ACTIVATION) {
  using Acc = detail::matmul_acc_t<T>;
  auto pid = program_id(0);
  auto blocksM = cdiv(M, BM), blocksN = cdiv(N, BN);
  auto perGroup = GROUP_M * blocksN;
  auto firstM = (pid / perGroup) * GROUP_M;
  auto groupM = minimum(blocksM - firstM, GROUP_M);
  auto pidM = firstM + (pid % perGroup) % groupM;
  auto pidN = (pid % perGroup) / groupM;
  auto batch = program_id(1);
  auto rows = pidM * BM + arange(0, BM);
  auto cols = pidN * BN + arange(0, BN);
  auto ks = arange(0, BK);
  auto aBase = a + batch * batch_a, bBase = b + batch * batch_b;
  auto acc = zeros<Acc>({BM, BN});
  for_range(0, K, BK, [&](i32 k) {
    auto kk = k + ks;
    auto ta = load(aBase + expand_dims(rows, 1) * sam + expand_dims(kk, 0) * sak,
                   expand_dims(rows < M, 1) & expand_dims(kk < K, 0), 0);
    auto tb = load(bBase + expand_dims(kk, 1) * sbk + expand_dims(cols, 0) * sbn,
                   expand_dims(kk < K, 1) & expand_dims(cols < N, 0), 0);
    acc = dot(ta, tb, acc);
  });
  if (HAS_BIAS) acc = acc + expand_dims(cast<Acc>(load(bias + cols, cols < N, 0)), 0);
  acc = detail::activate(acc, ACTIVATION);
  store(c + batch * batch_c + expand_dims(rows, 1) * scm + expand_dims(cols, 0) * scn,
        cast<detail::matmul_out_t<T>>(acc), expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
}

template <class T> auto &matmulKernel() {
  static auto kernel = jit(&matmul_block<T>, std::string("tessel_matmul_") + detail::matmulSuffix<T>());
  return kernel;
}

// Launch configuration: block sizes, waves, grouping, pipelining (the K
// loop's operands loaded num_stages - 1 steps ahead, kept in num_stages - 1
// LDS slots).
struct MatmulConfig {
  int BM = 128, BN = 128, BK = 32, GROUP_M = 8;
  unsigned num_warps = 4, num_stages = 2;
};

// The configurations the autotuner chooses among.
inline std::vector<TuneConfig> matmulConfigs() {
  auto config = [](int bm, int bn, int bk, unsigned warps) {
    return TuneConfig{{{"BM", bm}, {"BN", bn}, {"BK", bk}, {"GROUP_M", 8}}, warps, 2};
  };
  return {config(128, 128, 32, 4), config(128, 64, 32, 4), config(64, 128, 32, 4), config(64, 64, 32, 4),
          config(32, 64, 32, 2), config(32, 32, 32, 1), config(16, 64, 32, 1)};
}

// The static cost model the autotuner uses on the emulator: the time of the
// slowest wave slot, in units of one 32x32x8 matrix instruction. A program
// of BM x BN over K costs its padded multiply-accumulates at the matrix
// cores' rate per wave (BM * BN * K / (32 * 32 * 8) / waves, padding
// included: a block mostly past the edge of C still costs a full block),
// plus its loads (BM + BN) * K elements at 64 bytes per instruction time per
// wave; programs run `slots` at a time, so the grid costs
// ceil(programs / slots) rounds of that.
//
// With `usage`, what the config's kernel compiled to (Kernel::warmup,
// usageOf): a kernel that spills is ruled out, and `slots` is the programs
// its occupancy lets every compute unit hold at once (waves per SIMD x 4
// SIMDs / waves per program). Without it, an estimate: each compute unit
// holds 8 waves, and a config whose accumulator, operand and prefetched
// registers (num_stages - 1 K steps of A and B) would not fit a lane (192 of
// its 256 VGPRs; wave32 WMMA holds each operand twice) is ruled out, as is
// one whose LDS slots ((num_stages - 1) x (BM + BN) x (BK + 8) elements of
// `elemBytes`) pass 64 KiB.
inline double matmulCost(const TuneConfig &c, const MatmulShape &s, int computeUnits = 304, int waveSize = 64,
                         int elemBytes = 2, const KernelUsage *usage = nullptr) {
  const double bm = c.get("BM"), bn = c.get("BN"), bk = c.get("BK"), waves = c.num_warps;
  const double lanes = waves * waveSize, ahead = std::max(1u, c.num_stages) - 1.0;
  double slots = std::max(1.0, double(computeUnits) * 8 / waves);
  if (usage) {
    if (usage->spills || usage->scratchBytes) return 1e30;
    slots = std::max(1.0, std::floor(double(computeUnits) * usage->wavesPerSimd * 4 / waves));
  } else {
    const double operands = (bm + bn) * bk / lanes;
    const double registers = bm * bn / lanes + operands * (waveSize == 32 ? 2 : 1) + operands * ahead;
    if (registers > 192) return 1e30;
    if (std::max(1.0, ahead) * (bm + bn) * (bk + 8) * elemBytes > 65536) return 1e30;
  }
  const double k = double(cdiv(s.K, int64_t(bk))) * bk;
  const double programs = double(cdiv(s.M, int64_t(bm)) * cdiv(s.N, int64_t(bn)) * s.batch);
  const double perProgram = bm * bn * k / (32.0 * 32 * 8) / waves + (bm + bn) * k * 2 / 64.0 / waves;
  return std::ceil(programs / slots) * perProgram;
}

// The tuner kernels::matmul uses when no MatmulConfig is given.
template <class T> Autotuner &matmulTuner() {
  static Autotuner tuner(std::string("tessel_matmul_") + detail::matmulSuffix<T>(), matmulConfigs());
  return tuner;
}

// C = A @ B (+ bias[N]) (activation) for `shape`; `bias` may be null. With
// no `config`, matmulTuner<T>() picks one for the device and shape (timed on
// a GPU, by matmulCost on the emulator; remembered on disk).
template <class T>
void matmul(Device &dev, const Buffer<T> &a, const Buffer<T> &b, Buffer<detail::matmul_out_t<T>> &c,
            MatmulShape shape, const Buffer<detail::matmul_out_t<T>> *bias = nullptr,
            std::optional<MatmulConfig> config = std::nullopt) {
  auto fail = [](const std::string &why) { throw Error("matmul: " + why); };
  if (shape.M < 1 || shape.N < 1 || shape.K < 1 || shape.batch < 1)
    fail("M, N, K and batch must be at least 1 (M = " + std::to_string(shape.M) + ", N = " + std::to_string(shape.N) +
         ", K = " + std::to_string(shape.K) + ", batch = " + std::to_string(shape.batch) + ")");
  auto orDefault = [](int64_t v, int64_t d) { return v ? v : d; };
  const int64_t sam = orDefault(shape.a_stride_m, shape.K), sak = orDefault(shape.a_stride_k, 1);
  const int64_t sbk = orDefault(shape.b_stride_k, shape.N), sbn = orDefault(shape.b_stride_n, 1);
  const int64_t scm = orDefault(shape.c_stride_m, shape.N), scn = orDefault(shape.c_stride_n, 1);
  const int64_t ba = orDefault(shape.a_batch_stride, shape.M * shape.K);
  const int64_t bb = orDefault(shape.b_batch_stride, shape.K * shape.N);
  const int64_t bc = orDefault(shape.c_batch_stride, shape.M * shape.N);
  auto span = [](int64_t batchStride, int64_t batch, int64_t rows, int64_t rs, int64_t cols, int64_t cs) {
    return (batch - 1) * batchStride + (rows - 1) * rs + (cols - 1) * cs + 1;
  };
  auto check = [&](const char *what, size_t have, int64_t need) {
    if (need > INT32_MAX) fail(std::string(what) + " spans more than 2^31 - 1 elements (32-bit offsets)");
    if (int64_t(have) < need)
      fail(std::string(what) + ": the buffer holds " + std::to_string(have) + " elements and needs " +
           std::to_string(need));
  };
  check("A", a.size(), span(ba, shape.batch, shape.M, sam, shape.K, sak));
  check("B", b.size(), span(bb, shape.batch, shape.K, sbk, shape.N, sbn));
  check("C", c.size(), span(bc, shape.batch, shape.M, scm, shape.N, scn));
  if (bias) check("bias", bias->size(), shape.N);
  const Buffer<detail::matmul_out_t<T>> &biasBuffer = bias ? *bias : c;
  // Calls `f(options, args...)` with the kernel's launch options and
  // arguments for `cfg`.
  auto withArguments = [&](const MatmulConfig &cfg, auto &&f) {
    return f(LaunchOptions{.num_warps = cfg.num_warps, .num_stages = cfg.num_stages}, a, b, c, biasBuffer,
             int32_t(shape.M), int32_t(shape.N), int32_t(shape.K), int32_t(sam), int32_t(sak), int32_t(sbk),
             int32_t(sbn), int32_t(scm), int32_t(scn), int32_t(ba), int32_t(bb), int32_t(bc), cfg.BM, cfg.BN,
             cfg.BK, cfg.GROUP_M, bias ? 1 : 0, int(shape.activation));
  };
  auto launchWith = [&](const MatmulConfig &cfg) {
    const uint32_t blocks = uint32_t(cdiv(shape.M, cfg.BM) * cdiv(shape.N, cfg.BN));
    withArguments(cfg, [&](const LaunchOptions &options, const auto &...args) {
      matmulKernel<T>().launch(dev, {blocks, uint32_t(shape.batch)}, options, args...);
    });
  };
  auto fromTune = [](const TuneConfig &t) {
    return MatmulConfig{t.get("BM"), t.get("BN"), t.get("BK"), t.get("GROUP_M"), t.num_warps, t.num_stages};
  };
  if (!config) {
    std::string key = dev.arch() + " M=" + std::to_string(shape.M) + " N=" + std::to_string(shape.N) +
                      " K=" + std::to_string(shape.K) + " batch=" + std::to_string(shape.batch);
    auto timer = [&](const TuneConfig &t) {
      launchWith(fromTune(t)); // compile and warm up
      dev.synchronize();
      auto start = std::chrono::steady_clock::now();
      launchWith(fromTune(t));
      dev.synchronize();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    // Without a GPU to time on: each config by the code it compiles to.
    // A config that cannot compile (its LDS does not fit) is ruled out.
    auto cost = [&](const TuneConfig &t) {
      try {
        const CompiledKernel *k = withArguments(fromTune(t), [&](const LaunchOptions &options, const auto &...args) {
          return &matmulKernel<T>().warmup(dev, options, args...);
        });
        const KernelUsage usage = usageOf(*k);
        return matmulCost(t, shape, 304, int(dev.waveSize()), int(sizeof(T)), &usage);
      } catch (const Error &) {
        return 1e30;
      }
    };
    config = fromTune(matmulTuner<T>().pick(dev, key, timer, cost));
  }
  launchWith(*config);
}

} // namespace tessel::kernels
