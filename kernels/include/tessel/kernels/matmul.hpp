// Matrix multiply on the matrix cores: C = A @ B (+ bias) (activation),
// batched, with any row and column strides (so transposed operands are
// strides, not copies). f16, bf16 and f32 inputs accumulate in f32 and
// write C in their own type; int8 inputs accumulate and write int32; 8-bit
// float inputs take f32 scales (per tensor or per row), accumulate in f32
// and write float, half or bfloat16.
//
//   tessel::kernels::matmul(dev, a, b, c, {.M = 512, .N = 512, .K = 512});
//   tessel::kernels::matmul(dev, a8, b8, c, {.M = 512, .N = 512, .K = 512}, {scaleA, scaleB});
#pragma once

#include <tessel/tessel.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
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

// The rows and columns of C that program (p, batch) computes: programs are
// numbered in groups of GROUP_M block rows (Triton's grouped ordering).
inline std::pair<i32, i32> groupedBlock(const i32 &M, const i32 &N, Const<int> BM, Const<int> BN, Const<int> GROUP_M) {
  auto pid = program_id(0);
  auto blocksM = cdiv(M, BM), blocksN = cdiv(N, BN);
  auto perGroup = GROUP_M * blocksN;
  auto firstM = (pid / perGroup) * GROUP_M;
  auto groupM = minimum(blocksM - firstM, GROUP_M);
  auto pidM = firstM + (pid % perGroup) % groupM;
  auto pidN = (pid % perGroup) / groupM;
  return {pidM * BM + arange(0, BM), pidN * BN + arange(0, BN)};
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
  auto block = detail::groupedBlock(M, N, BM, BN, GROUP_M);
  auto rows = block.first, cols = block.second;
  auto batch = program_id(1);
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

// 8-bit float inputs: C = (A @ B) * scale_a * scale_b (+ bias) (activation),
// accumulated in f32 and written as Out (float, half or bfloat16). A and B
// are 8-bit floats of one family, in any E4M3 / E5M2 mix (float8_e4m3fnuz /
// float8_e5m2fnuz on gfx942, float8_e4m3fn / float8_e5m2 on gfx950). The
// scales are f32 in device memory: one each (ROW_SCALES = 0, per tensor), or
// scale_a[M] per row of A and scale_b[N] per column of B (ROW_SCALES = 1),
// applied to the f32 accumulator before the bias.
template <class Ea, class Eb, class Out>
void matmul_fp8_block(Ptr<Ea> a, Ptr<Eb> b, Ptr<Out> c, Ptr<float> scale_a, Ptr<float> scale_b, Ptr<Out> bias, i32 M,
                      i32 N, i32 K, i32 sam, i32 sak, i32 sbk, i32 sbn, i32 scm, i32 scn, i32 batch_a, i32 batch_b,
                      i32 batch_c, Const<int> BM, Const<int> BN, Const<int> BK, Const<int> GROUP_M,
                      Const<int> HAS_BIAS, Const<int> ACTIVATION, Const<int> ROW_SCALES) {
  auto block = detail::groupedBlock(M, N, BM, BN, GROUP_M);
  auto rows = block.first, cols = block.second;
  auto batch = program_id(1);
  auto ks = arange(0, BK);
  auto aBase = a + batch * batch_a;
  auto bBase = b + batch * batch_b;
  auto acc = zeros<float>({BM, BN});
  for_range(0, K, BK, [&](i32 k) {
    auto kk = k + ks;
    auto ta = load(aBase + expand_dims(rows, 1) * sam + expand_dims(kk, 0) * sak,
                   expand_dims(rows < M, 1) & expand_dims(kk < K, 0), zeros<Ea>({BM, BK}));
    auto tb = load(bBase + expand_dims(kk, 1) * sbk + expand_dims(cols, 0) * sbn,
                   expand_dims(kk < K, 1) & expand_dims(cols < N, 0), zeros<Eb>({BK, BN}));
    acc = dot(ta, tb, acc);
  });
  if (ROW_SCALES)
    acc = acc * expand_dims(load(scale_a + rows, rows < M, 0.0f), 1) * expand_dims(load(scale_b + cols, cols < N, 0.0f), 0);
  else
    acc = acc * (load(scale_a) * load(scale_b));
  if (HAS_BIAS) acc = acc + expand_dims(cast<float>(load(bias + cols, cols < N, 0)), 0);
  acc = detail::activate(acc, ACTIVATION);
  store(c + batch * batch_c + expand_dims(rows, 1) * scm + expand_dims(cols, 0) * scn, cast<Out>(acc),
        expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
}

namespace detail {
template <class T> constexpr const char *fp8Suffix() {
  if constexpr (std::is_same_v<T, float8_e4m3fn>) return "e4m3";
  else if constexpr (std::is_same_v<T, float8_e5m2>) return "e5m2";
  else if constexpr (std::is_same_v<T, float8_e4m3fnuz>) return "e4m3fnuz";
  else return "e5m2fnuz";
}
template <class Ea, class Eb, class Out> std::string fp8MatmulName() {
  return std::string("tessel_matmul_") + fp8Suffix<Ea>() + "_" + fp8Suffix<Eb>() + "_" + matmulSuffix<Out>();
}
} // namespace detail

template <class Ea, class Eb, class Out> auto &matmulFp8Kernel() {
  static auto kernel = jit(&matmul_fp8_block<Ea, Eb, Out>, detail::fp8MatmulName<Ea, Eb, Out>());
  return kernel;
}

// Launch configuration: block sizes, waves, grouping, pipelining (the K
// loop's operands loaded num_stages - 1 steps ahead, kept in num_stages - 1
// LDS slots).
struct MatmulConfig {
  int BM = 128, BN = 128, BK = 32, GROUP_M = 8;
  unsigned num_warps = 4, num_stages = 2;
};

// The configurations the autotuner chooses among; for 1-byte inputs K steps
// of 64 (the same bytes a step as 32 of f16).
inline std::vector<TuneConfig> matmulConfigs(int elemBytes = 2) {
  const int bk = elemBytes == 1 ? 64 : 32;
  auto config = [](int bm, int bn, int bk, unsigned warps) {
    return TuneConfig{{{"BM", bm}, {"BN", bn}, {"BK", bk}, {"GROUP_M", 8}}, warps, 2};
  };
  return {config(128, 128, bk, 4), config(128, 64, bk, 4), config(64, 128, bk, 4), config(64, 64, bk, 4),
          config(32, 64, bk, 2), config(32, 32, bk, 1), config(16, 64, bk, 1)};
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
template <class Ea, class Eb, class Out> Autotuner &matmulFp8Tuner() {
  static Autotuner tuner(detail::fp8MatmulName<Ea, Eb, Out>(), matmulConfigs(1));
  return tuner;
}

namespace detail {

// A matmul's strides in elements (zeros replaced by the row-major ones),
// checked against the buffers' sizes.
struct MatmulStrides {
  int64_t sam, sak, sbk, sbn, scm, scn, ba, bb, bc;
};
inline MatmulStrides matmulStrides(const MatmulShape &shape, size_t aSize, size_t bSize, size_t cSize,
                                   const size_t *biasSize) {
  auto fail = [](const std::string &why) { throw Error("matmul: " + why); };
  if (shape.M < 1 || shape.N < 1 || shape.K < 1 || shape.batch < 1)
    fail("M, N, K and batch must be at least 1 (M = " + std::to_string(shape.M) + ", N = " + std::to_string(shape.N) +
         ", K = " + std::to_string(shape.K) + ", batch = " + std::to_string(shape.batch) + ")");
  auto orDefault = [](int64_t v, int64_t d) { return v ? v : d; };
  MatmulStrides s{orDefault(shape.a_stride_m, shape.K),       orDefault(shape.a_stride_k, 1),
                  orDefault(shape.b_stride_k, shape.N),       orDefault(shape.b_stride_n, 1),
                  orDefault(shape.c_stride_m, shape.N),       orDefault(shape.c_stride_n, 1),
                  orDefault(shape.a_batch_stride, shape.M * shape.K), orDefault(shape.b_batch_stride, shape.K * shape.N),
                  orDefault(shape.c_batch_stride, shape.M * shape.N)};
  auto span = [](int64_t batchStride, int64_t batch, int64_t rows, int64_t rs, int64_t cols, int64_t cs) {
    return (batch - 1) * batchStride + (rows - 1) * rs + (cols - 1) * cs + 1;
  };
  auto check = [&](const char *what, size_t have, int64_t need) {
    if (need > INT32_MAX) fail(std::string(what) + " spans more than 2^31 - 1 elements (32-bit offsets)");
    if (int64_t(have) < need)
      fail(std::string(what) + ": the buffer holds " + std::to_string(have) + " elements and needs " +
           std::to_string(need));
  };
  check("A", aSize, span(s.ba, shape.batch, shape.M, s.sam, shape.K, s.sak));
  check("B", bSize, span(s.bb, shape.batch, shape.K, s.sbk, shape.N, s.sbn));
  check("C", cSize, span(s.bc, shape.batch, shape.M, s.scm, shape.N, s.scn));
  if (biasSize) check("bias", *biasSize, shape.N);
  return s;
}

// Launches `launchWith(config)`; with no `config`, the one `tuner` picks for
// the device and shape: timed on a GPU, by matmulCost of the code
// `warmupWith(config)` compiles to on the emulator.
template <class LaunchWith, class WarmupWith>
void tuneAndLaunch(Device &dev, const MatmulShape &shape, std::optional<MatmulConfig> config, Autotuner &tuner,
                   int elemBytes, LaunchWith &&launchWith, WarmupWith &&warmupWith) {
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
        const KernelUsage usage = usageOf(*warmupWith(fromTune(t)));
        return matmulCost(t, shape, 304, int(dev.waveSize()), elemBytes, &usage);
      } catch (const Error &) {
        return 1e30;
      }
    };
    config = fromTune(tuner.pick(dev, key, timer, cost));
  }
  launchWith(*config);
}

} // namespace detail

// C = A @ B (+ bias[N]) (activation) for `shape`; `bias` may be null. With
// no `config`, matmulTuner<T>() picks one for the device and shape (timed on
// a GPU, by matmulCost on the emulator; remembered on disk).
template <class T>
void matmul(Device &dev, const Buffer<T> &a, const Buffer<T> &b, Buffer<detail::matmul_out_t<T>> &c,
            MatmulShape shape, const Buffer<detail::matmul_out_t<T>> *bias = nullptr,
            std::optional<MatmulConfig> config = std::nullopt) {
  const size_t biasSize = bias ? bias->size() : 0;
  const detail::MatmulStrides s = detail::matmulStrides(shape, a.size(), b.size(), c.size(), bias ? &biasSize : nullptr);
  const Buffer<detail::matmul_out_t<T>> &biasBuffer = bias ? *bias : c;
  // Calls `f(options, args...)` with the kernel's launch options and
  // arguments for `cfg`.
  auto withArguments = [&](const MatmulConfig &cfg, auto &&f) {
    return f(LaunchOptions{.num_warps = cfg.num_warps, .num_stages = cfg.num_stages}, a, b, c, biasBuffer,
             int32_t(shape.M), int32_t(shape.N), int32_t(shape.K), int32_t(s.sam), int32_t(s.sak), int32_t(s.sbk),
             int32_t(s.sbn), int32_t(s.scm), int32_t(s.scn), int32_t(s.ba), int32_t(s.bb), int32_t(s.bc), cfg.BM,
             cfg.BN, cfg.BK, cfg.GROUP_M, bias ? 1 : 0, int(shape.activation));
  };
  detail::tuneAndLaunch(
      dev, shape, config, matmulTuner<T>(), int(sizeof(T)),
      [&](const MatmulConfig &cfg) {
        const uint32_t blocks = uint32_t(cdiv(shape.M, cfg.BM) * cdiv(shape.N, cfg.BN));
        withArguments(cfg, [&](const LaunchOptions &options, const auto &...args) {
          matmulKernel<T>().launch(dev, {blocks, uint32_t(shape.batch)}, options, args...);
        });
      },
      [&](const MatmulConfig &cfg) {
        return withArguments(cfg, [&](const LaunchOptions &options, const auto &...args) {
          return &matmulKernel<T>().warmup(dev, options, args...);
        });
      });
}

// How an 8-bit float matmul's f32 scales apply (Fp8Scales).
enum class Fp8Scaling : int {
  PerTensor = 0, // scale_a and scale_b hold one value each
  PerRow = 1,    // scale_a[M]: one per row of A (of C); scale_b[N]: one per column of B (of C)
};
struct Fp8Scales {
  const Buffer<float> &a, &b;
  Fp8Scaling scaling = Fp8Scaling::PerTensor;
};

// C = (A @ B) * scales (+ bias[N]) (activation) for 8-bit float A and B
// (one family; E4M3 and E5M2 mix), C in float, half or bfloat16. The
// quantized values times their scales are what A and B stand for: a
// per-tensor scale is the whole tensor's, per-row scales are A's rows' and
// B's columns' (the usual quantization of weights and activations). With
// no `config`, matmulFp8Tuner picks one (K steps of 64).
template <class Ea, class Eb, class Out>
void matmul(Device &dev, const Buffer<Ea> &a, const Buffer<Eb> &b, Buffer<Out> &c, MatmulShape shape,
            const Fp8Scales &scales, const std::type_identity_t<Buffer<Out>> *bias = nullptr,
            std::optional<MatmulConfig> config = std::nullopt) {
  static_assert(tessel::detail::is_fp8_elem<Ea> && tessel::detail::is_fp8_elem<Eb>,
                "tessel: kernels::matmul with scales takes 8-bit float A and B");
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, half> || std::is_same_v<Out, bfloat16>,
                "tessel: an 8-bit float matmul writes float, half or bfloat16");
  const size_t biasSize = bias ? bias->size() : 0;
  const detail::MatmulStrides s = detail::matmulStrides(shape, a.size(), b.size(), c.size(), bias ? &biasSize : nullptr);
  const bool rows = scales.scaling == Fp8Scaling::PerRow;
  const int64_t needA = rows ? shape.M : 1, needB = rows ? shape.N : 1;
  if (int64_t(scales.a.size()) < needA || int64_t(scales.b.size()) < needB)
    throw Error(std::string("matmul: ") + (rows ? "per-row" : "per-tensor") + " scales need " +
                std::to_string(needA) + " values for A and " + std::to_string(needB) + " for B; the buffers hold " +
                std::to_string(scales.a.size()) + " and " + std::to_string(scales.b.size()));
  const Buffer<Out> &biasBuffer = bias ? *bias : c;
  auto withArguments = [&](const MatmulConfig &cfg, auto &&f) {
    return f(LaunchOptions{.num_warps = cfg.num_warps, .num_stages = cfg.num_stages}, a, b, c, scales.a, scales.b,
             biasBuffer, int32_t(shape.M), int32_t(shape.N), int32_t(shape.K), int32_t(s.sam), int32_t(s.sak),
             int32_t(s.sbk), int32_t(s.sbn), int32_t(s.scm), int32_t(s.scn), int32_t(s.ba), int32_t(s.bb),
             int32_t(s.bc), cfg.BM, cfg.BN, cfg.BK, cfg.GROUP_M, bias ? 1 : 0, int(shape.activation), rows ? 1 : 0);
  };
  detail::tuneAndLaunch(
      dev, shape, config, matmulFp8Tuner<Ea, Eb, Out>(), 1,
      [&](const MatmulConfig &cfg) {
        const uint32_t blocks = uint32_t(cdiv(shape.M, cfg.BM) * cdiv(shape.N, cfg.BN));
        withArguments(cfg, [&](const LaunchOptions &options, const auto &...args) {
          matmulFp8Kernel<Ea, Eb, Out>().launch(dev, {blocks, uint32_t(shape.batch)}, options, args...);
        });
      },
      [&](const MatmulConfig &cfg) {
        return withArguments(cfg, [&](const LaunchOptions &options, const auto &...args) {
          return &matmulFp8Kernel<Ea, Eb, Out>().warmup(dev, options, args...);
        });
      });
}

} // namespace tessel::kernels
