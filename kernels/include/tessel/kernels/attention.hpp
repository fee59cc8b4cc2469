// Flash attention, forward: out = softmax(Q K^T * scale) V per (batch, head),
// the S_q x S_k score matrix never written to memory (Triton's tutorial 06).
// Each program takes BLOCK_M queries of one (batch, head) and walks the keys
// BLOCK_N at a time, keeping a running row max and row sum (online softmax);
// it also writes the log-sum-exp of each query's scores for a backward pass.
// f16 and bf16 in and out, f32 arithmetic; head dims 64 and 128; causal or
// not; grouped-query heads (H_q a multiple of H_kv).
//
//   tessel::kernels::attention(dev, q, k, v, out, lse,
//                              {.batch = 2, .heads_q = 8, .heads_kv = 2,
//                               .seq_q = 1024, .seq_k = 1024, .head_dim = 64, .causal = true});
#pragma once

#include <tessel/tessel.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

namespace tessel::kernels {

// The problem: Q [batch, heads_q, seq_q, head_dim], K and V [batch, heads_kv,
// seq_k, head_dim], out like Q, lse [batch, heads_q, seq_q] (f32, dense).
// Strides are in elements, one per dimension (batch, head, seq, dim); zero
// means dense row-major from the sizes. scale 0 means 1 / sqrt(head_dim);
// any other must be positive and finite.
struct AttentionShape {
  int64_t batch = 1, heads_q = 1, heads_kv = 1, seq_q = 0, seq_k = 0, head_dim = 64;
  bool causal = false;
  float scale = 0;
  int64_t q_strides[4] = {0, 0, 0, 0};
  int64_t k_strides[4] = {0, 0, 0, 0};
  int64_t v_strides[4] = {0, 0, 0, 0};
  int64_t out_strides[4] = {0, 0, 0, 0};
};

// Launch configuration: queries and keys per block, waves per program, and
// where a key block's V is loaded. early_v: with K, before the first dot, so
// the load's latency hides behind Q K^T and the softmax (gfx942 head dim 64:
// 522 -> 449 llvm-mca cycles a key block) while V's tile waits in registers
// (no default config loses a wave to them); otherwise after the softmax,
// next to the dot that reads it.
struct AttentionConfig {
  int BLOCK_M = 128, BLOCK_N = 64;
  unsigned num_warps = 4;
  bool early_v = true;
  unsigned waves_per_eu = 0; // LaunchOptions::waves_per_eu (0: no request)
};

// The default per head dim and wave size: 128 x 64 blocks over 4 waves at
// head dim 64 (Triton's choice for the forward pass), 128 x 32 at head dim
// 128 (the accumulator and Q's tile double). On wave32 (gfx1100) those spill
// registers to scratch (a WMMA operand holds all 16 K of its row in two
// lanes); 64 x 32 over 8 waves at head dim 64, and 32 x 16 over 8 waves at
// head dim 128 (32 x 32 spills 20-40 bytes; 32 x 16 over 4 waves also fits,
// at 1.3x the cycles per key) are the largest tried that do not. At head
// dim 128 on wave32 LLVM's own choice was 203 VGPRs, 6 waves a SIMD (its
// middle end hoists loop-invariant LDS addresses out of the key loops),
// and asked for 8 waves (waves_per_eu) 192. Since the second dot splits
// its waves [1, 8] (tessel-assign-layouts: a chain's tail on WMMA gives a
// tie to N) LLVM's own choice is 184 VGPRs, 8 waves, and the request
// changes no instruction; it stays as a floor (Triton's kernel: 184).
inline AttentionConfig attentionConfig(int64_t headDim, unsigned waveSize = 64) {
  if (waveSize == 32) return headDim <= 64 ? AttentionConfig{64, 32, 8} : AttentionConfig{32, 16, 8, true, 8};
  return headDim <= 64 ? AttentionConfig{128, 64, 4} : AttentionConfig{128, 32, 4};
}

// ln(2): the kernel works in base 2 (exp2 is the hardware's exponential) and
// converts the log-sum-exp to the natural log at the end.
inline constexpr float kLn2 = 0.69314718055994530942f;

// The block program. Program (pid_m, b * H_q + h) computes rows
// [pid_m * BLOCK_M, (pid_m + 1) * BLOCK_M) of head h of batch b. Scores are
// kept in base 2: qk = (q . k) * scale * log2(e), so softmax's exp is exp2.
// For each key block:
//   m_new = max(m_i, rowmax(qk));  p = exp2(qk - m_new)
//   alpha = exp2(m_i - m_new)      (the old sums were taken against m_i)
//   l_i = l_i * alpha + rowsum(p); acc = acc * alpha + p @ v
// and at the end out = acc / l_i, lse = (m_i + log2(l_i)) * ln(2), the
// natural log of sum_j exp(scale * q . k_j). Keys past S_k (and, when
// CAUSAL, past the query's own position) score -inf before the max; query
// rows past S_q compute on zeros and are not stored. The first key block
// always holds a valid key for every row (key 0), so m_i is finite after it
// and exp2(m_i - m_new) never sees -inf - -inf. As Triton's tutorial: the
// exponential is the GPU's alone (fast_exp2: a term below 2^-126 is 0, which
// no row sum of at least 1 can tell) and the maxima skip NaNs (nanmax,
// fmax: no NaN check per element; a NaN score still makes its row NaN
// through exp2 and the sum).
template <class T>
void attention_fwd(Ptr<T> q, Ptr<T> k, Ptr<T> v, Ptr<T> out, Ptr<float> lse, i32 H_q, i32 GROUP, i32 S_q, i32 S_k,
                   f32 qk_scale, i32 sqb, i32 sqh, i32 sqs, i32 sqd, i32 skb, i32 skh, i32 sks, i32 skd, i32 svb,
                   i32 svh, i32 svs, i32 svd, i32 sob, i32 soh, i32 sos, i32 sod, Const<int> HEAD_DIM,
                   Const<int> BLOCK_M, Const<int> BLOCK_N, Const<bool> CAUSAL, Const<bool> EARLY_V) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  auto pidM = program_id(0);
  auto bh = program_id(1);
  auto b = bh / H_q, h = bh % H_q;
  auto hkv = h / GROUP; // grouped-query heads: GROUP query heads share one K/V head
  auto rows = pidM * BLOCK_M + arange(0, BLOCK_M);
  auto dims = arange(0, HEAD_DIM);
  auto keys = arange(0, BLOCK_N);
  auto rowOk = rows < S_q;
  auto qBase = q + b * sqb + h * sqh;
  auto kBase = k + b * skb + hkv * skh;
  auto vBase = v + b * svb + hkv * svh;
  // Q is loaded once and stays in registers for the whole key loop.
  auto tq = load(qBase + expand_dims(rows, 1) * sqs + expand_dims(dims, 0) * sqd, expand_dims(rowOk, 1), 0);
  auto m_i = full<float>({BLOCK_M}, kNegInf);
  auto l_i = zeros<float>({BLOCK_M});
  auto acc = zeros<float>({BLOCK_M, HEAD_DIM});
  // One key block. Scores stay unscaled until the exponent: the max of the
  // scaled scores is the scaled max (scale > 0), and qk * scale - m is one
  // fma. MASKED blocks hold keys past S_k or, CAUSAL, past some row's own
  // position; only they pay for the mask.
  auto block = [&](i32 start, bool masked) {
    auto cols = start + keys;
    auto colOk = cols < S_k;
    auto kPtrs = kBase + expand_dims(cols, 1) * sks + expand_dims(dims, 0) * skd;
    auto vPtrs = vBase + expand_dims(cols, 1) * svs + expand_dims(dims, 0) * svd;
    auto loadV = [&] { return masked ? load(vPtrs, expand_dims(colOk, 1), 0) : load(vPtrs); };
    auto tk = masked ? load(kPtrs, expand_dims(colOk, 1), 0) : load(kPtrs);
    std::optional<Tile<T>> early;
    if (EARLY_V)
      early = loadV();
    auto qk = dot(tq, trans(tk));
    if (masked) {
      auto keep = CAUSAL ? expand_dims(colOk, 0) & (expand_dims(cols, 0) <= expand_dims(rows, 1))
                         : expand_dims(colOk, 0);
      qk = where(keep, qk, kNegInf);
    }
    auto m_new = fmax(m_i, nanmax(qk, 1) * qk_scale);
    auto p = fast_exp2(fma(qk, qk_scale, -expand_dims(m_new, 1)));
    auto alpha = fast_exp2(m_i - m_new);
    l_i = l_i * alpha + sum(p, 1);
    auto tv = early ? *early : loadV();
    acc = dot(cast<T>(p), tv, acc * expand_dims(alpha, 1));
    m_i = m_new;
  };
  // Whole key blocks every row sees in full (below the block's first row
  // when CAUSAL: BLOCK_M is a multiple of BLOCK_N) run without a mask; then
  // the blocks that need one: the last, partial block, or the diagonal
  // ones, where the loop stops (keys past the block's last row are masked
  // for every row).
  auto whole = (S_k / BLOCK_N) * BLOCK_N;
  auto unmasked = CAUSAL ? minimum(pidM * BLOCK_M, whole) : whole;
  auto hi = CAUSAL ? minimum((pidM + 1) * BLOCK_M, S_k) : S_k;
  for_range(0, unmasked, BLOCK_N, [&](i32 start) { block(start, false); });
  for_range(unmasked, hi, BLOCK_N, [&](i32 start) { block(start, true); });
  store(out + b * sob + h * soh + expand_dims(rows, 1) * sos + expand_dims(dims, 0) * sod,
        cast<T>(acc / expand_dims(l_i, 1)), expand_dims(rowOk, 1));
  store(lse + bh * S_q + rows, (m_i + log2(l_i)) * kLn2, rowOk);
}

namespace detail {
template <class T> constexpr const char *attentionSuffix() {
  static_assert(std::is_same_v<T, half> || std::is_same_v<T, bfloat16>,
                "tessel::kernels::attention takes half or bfloat16 elements");
  if constexpr (std::is_same_v<T, half>) return "f16";
  else return "bf16";
}
} // namespace detail

// The kernel object for element type T, one per process.
template <class T> auto &attentionKernel() {
  static auto kernel = jit(&attention_fwd<T>, std::string("tessel_attention_fwd_") + detail::attentionSuffix<T>());
  return kernel;
}

// out = softmax(Q K^T * scale (causal-masked)) V for `shape`, and lse[b, h,
// i] = ln(sum_j exp(scale * Q[b,h,i] . K[b,h/(H_q/H_kv),j])) (over the keys
// the causal mask keeps). Causal attention aligns query i with key i and
// needs seq_q == seq_k. Throws tessel::Error on sizes that do not fit.
template <class T>
void attention(Device &dev, const Buffer<T> &q, const Buffer<T> &k, const Buffer<T> &v, Buffer<T> &out,
               Buffer<float> &lse, AttentionShape s, std::optional<AttentionConfig> config = std::nullopt) {
  auto fail = [](const std::string &why) { throw Error("attention: " + why); };
  auto str = [](int64_t x) { return std::to_string(x); };
  if (s.batch < 1 || s.heads_q < 1 || s.heads_kv < 1 || s.seq_q < 1 || s.seq_k < 1)
    fail("batch, heads_q, heads_kv, seq_q and seq_k must be at least 1 (batch = " + str(s.batch) +
         ", heads_q = " + str(s.heads_q) + ", heads_kv = " + str(s.heads_kv) + ", seq_q = " + str(s.seq_q) +
         ", seq_k = " + str(s.seq_k) + ")");
  if (s.head_dim != 64 && s.head_dim != 128)
    fail("head_dim " + str(s.head_dim) + " is not supported (64 or 128)");
  if (s.heads_q % s.heads_kv != 0)
    fail("heads_q = " + str(s.heads_q) + " is not a multiple of heads_kv = " + str(s.heads_kv) +
         " (grouped-query heads)");
  if (s.causal && s.seq_q != s.seq_k)
    fail("causal attention needs seq_q == seq_k (seq_q = " + str(s.seq_q) + ", seq_k = " + str(s.seq_k) + ")");
  if (s.batch * s.heads_q > 65535) // the grid's second dimension
    fail("batch * heads_q = " + str(s.batch * s.heads_q) + " is more than 65535 (one program column per head)");
  auto dense = [](int64_t (&st)[4], int64_t heads, int64_t seq, int64_t d) {
    const int64_t def[4] = {heads * seq * d, seq * d, d, 1};
    for (int i = 0; i < 4; ++i)
      if (st[i] == 0) st[i] = def[i];
  };
  dense(s.q_strides, s.heads_q, s.seq_q, s.head_dim);
  dense(s.k_strides, s.heads_kv, s.seq_k, s.head_dim);
  dense(s.v_strides, s.heads_kv, s.seq_k, s.head_dim);
  dense(s.out_strides, s.heads_q, s.seq_q, s.head_dim);
  auto check = [&](const char *what, size_t have, const int64_t (&st)[4], int64_t heads, int64_t seq) {
    for (int i = 0; i < 4; ++i)
      if (st[i] < 0) fail(std::string(what) + ": strides must not be negative");
    const int64_t need =
        (s.batch - 1) * st[0] + (heads - 1) * st[1] + (seq - 1) * st[2] + (s.head_dim - 1) * st[3] + 1;
    if (need > INT32_MAX) fail(std::string(what) + " spans more than 2^31 - 1 elements (32-bit offsets)");
    if (int64_t(have) < need)
      fail(std::string(what) + ": the buffer holds " + str(int64_t(have)) + " elements and needs " + str(need));
  };
  const int64_t lseNeed = s.batch * s.heads_q * s.seq_q; // indexed in i32: (b * H_q + h) * S_q + row
  if (lseNeed > INT32_MAX) fail("lse spans more than 2^31 - 1 elements (32-bit offsets)");
  check("Q", q.size(), s.q_strides, s.heads_q, s.seq_q);
  check("K", k.size(), s.k_strides, s.heads_kv, s.seq_k);
  check("V", v.size(), s.v_strides, s.heads_kv, s.seq_k);
  check("out", out.size(), s.out_strides, s.heads_q, s.seq_q);
  if (int64_t(lse.size()) < lseNeed)
    fail("lse: the buffer holds " + str(int64_t(lse.size())) + " elements and needs " + str(lseNeed));
  if (!(s.scale >= 0) || std::isinf(s.scale)) // the kernel takes the max before scaling
    fail("scale " + std::to_string(s.scale) + " is not a positive finite number (0: 1 / sqrt(head_dim))");
  const AttentionConfig cfg = config ? *config : attentionConfig(s.head_dim, dev.waveSize());
  if (s.causal && cfg.BLOCK_M % cfg.BLOCK_N != 0)
    fail("causal attention needs BLOCK_M (" + str(cfg.BLOCK_M) + ") to be a multiple of BLOCK_N (" +
         str(cfg.BLOCK_N) + ")");
  const float scale = s.scale != 0 ? s.scale : float(1.0 / std::sqrt(double(s.head_dim)));
  const float qkScale = scale * 1.44269504088896340736f; // log2(e): the kernel's exp is exp2
  attentionKernel<T>().launch(
      dev, {uint32_t(cdiv(s.seq_q, int64_t(cfg.BLOCK_M))), uint32_t(s.batch * s.heads_q)},
      {.num_warps = cfg.num_warps, .waves_per_eu = cfg.waves_per_eu}, q, k, v, out, lse, int32_t(s.heads_q), int32_t(s.heads_q / s.heads_kv),
      int32_t(s.seq_q), int32_t(s.seq_k), qkScale, int32_t(s.q_strides[0]), int32_t(s.q_strides[1]),
      int32_t(s.q_strides[2]), int32_t(s.q_strides[3]), int32_t(s.k_strides[0]), int32_t(s.k_strides[1]),
      int32_t(s.k_strides[2]), int32_t(s.k_strides[3]), int32_t(s.v_strides[0]), int32_t(s.v_strides[1]),
      int32_t(s.v_strides[2]), int32_t(s.v_strides[3]), int32_t(s.out_strides[0]), int32_t(s.out_strides[1]),
      int32_t(s.out_strides[2]), int32_t(s.out_strides[3]), int(s.head_dim), cfg.BLOCK_M, cfg.BLOCK_N,
      s.causal, cfg.early_v);
}

} // namespace tessel::kernels
