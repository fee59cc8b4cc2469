// Tutorial 06: fused attention (flash attention, forward).
//
// out = softmax(Q K^T / sqrt(D)) V for one head: Q [S_q, D], K and V
// [S_k, D]. This lesson shows:
//   1. *two dots in a loop*: Q K^T for a block of keys, then P V into an
//      accumulator carried through for_range;
//   2. the *online softmax*: the row max and row sum are kept as the keys go
//      by, and what was summed against an old max is rescaled when the max
//      grows, so the S_q x S_k score matrix is never stored;
//   3. masks for lengths that are not multiples of the blocks, and the
//      *causal* mask, with a loop that stops at the diagonal;
//   4. the log-sum-exp a backward pass needs.
// The library version (batch and heads with strides, grouped-query heads,
// f16 and bf16, head dims 64 and 128) is tessel::kernels::attention in
// kernels/include/tessel/kernels/attention.hpp.
//
// Build and run: scripts/tutorial.sh 06-fused-attention

#include <tessel/tessel.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

using namespace tessel;

// --- Why fuse ---------------------------------------------------------------
//
// Unfused, attention writes S = Q K^T (S_q x S_k floats), reads it back for
// the softmax, writes P, and reads P again for P V. At S = 4096 that is 64 MiB
// per head, four times over, for a result of S x D. Fused, a program holds
// BLOCK_M rows of Q and sees each key block once: the scores of a block live
// in registers between the two dots and are gone before the next block.

// --- 2. The online softmax ----------------------------------------------------
//
// softmax(s)[j] = exp(s[j] - m) / sum_k exp(s[k] - m) for any m; the row max
// keeps exp() at most 1. With the keys in blocks, the max of the keys seen so
// far, m_i, is all we know. Keep, per query row,
//   l_i = sum over seen keys of exp(s - m_i)
//   acc = sum over seen keys of exp(s - m_i) * v
// When a block raises the max to m_new, every term so far is off by the
// factor exp(m_i - m_new): multiply l_i and acc by it (alpha) and add the new
// block's terms. After the last block, out = acc / l_i.
//
// Scores are kept in base 2: s = (q . k) * scale * log2(e), so exp becomes
// exp2, the GPU's exponential instruction (exp(x) = exp2(x * log2(e))), and
// the constant folds into the scale. fast_exp2 is that instruction alone: a
// term below 2^-126 is 0 (exp2 would keep it, ~4 instructions more per
// element), which no row sum of at least 1 can tell. The maxima are nanmax
// and fmax, which need no NaN check per element (a NaN score still makes its
// row NaN: exp2(NaN - m) is NaN and goes into the sum).
void attention(Ptr<half> q, Ptr<half> k, Ptr<half> v, Ptr<half> out, Ptr<float> lse, i32 S_q, i32 S_k,
               f32 qk_scale, Const<int> D, Const<int> BLOCK_M, Const<int> BLOCK_N, Const<bool> CAUSAL) {
  const float negInf = -std::numeric_limits<float>::infinity();
  auto rows = program_id(0) * BLOCK_M + arange(0, BLOCK_M);
  auto dims = arange(0, D);
  auto rowOk = rows < S_q;
  // Q's block is loaded once; rows past S_q read 0 and are never stored.
  auto tq = load(q + expand_dims(rows, 1) * D + expand_dims(dims, 0), expand_dims(rowOk, 1), 0);
  auto m_i = full<float>({BLOCK_M}, negInf);
  auto l_i = zeros<float>({BLOCK_M});
  auto acc = zeros<float>({BLOCK_M, D});

  // --- 3. Causal: query i sees keys 0..i. Key blocks past the last row of
  // this block are masked for every row, so the loop ends there; inside the
  // diagonal block the mask does the rest.
  auto hi = CAUSAL ? minimum((program_id(0) + 1) * BLOCK_M, S_k) : S_k;
  for_range(0, hi, BLOCK_N, [&](i32 start) {
    auto cols = start + arange(0, BLOCK_N);
    auto colOk = cols < S_k;
    auto tk = load(k + expand_dims(cols, 1) * D + expand_dims(dims, 0), expand_dims(colOk, 1), 0);
    // --- 1. The first dot: [BLOCK_M, D] x [D, BLOCK_N] scores. trans(k)
    // is the transposed tile; dot reads it in the layout its matrix
    // instructions need.
    auto qk = dot(tq, trans(tk)) * qk_scale;
    // Keys past S_k (and, causal, past the row's own position) score -inf
    // *before* the max: they never win it and exp2(-inf) = 0 adds nothing.
    // Key 0 is in the first block and valid for every row, so m_i is finite
    // from the first iteration on (no -inf - -inf).
    // CAUSAL is a constant, known while tracing: a C++ `if` picks one mask
    // and the other is never compiled. (kernels::attention goes further: the
    // key blocks no mask touches run in a loop of their own without it,
    // since the select costs an instruction per score.)
    if (CAUSAL) qk = where(expand_dims(colOk, 0) & (expand_dims(cols, 0) <= expand_dims(rows, 1)), qk, negInf);
    else qk = where(expand_dims(colOk, 0), qk, negInf);
    auto m_new = fmax(m_i, nanmax(qk, 1));
    auto p = fast_exp2(qk - expand_dims(m_new, 1));
    auto alpha = fast_exp2(m_i - m_new);
    l_i = l_i * alpha + sum(p, 1);
    auto tv = load(v + expand_dims(cols, 1) * D + expand_dims(dims, 0), expand_dims(colOk, 1), 0);
    // The second dot: P (rounded to f16, as the matrix instructions take
    // it) times V's block, added to the rescaled accumulator.
    acc = dot(cast<half>(p), tv, acc * expand_dims(alpha, 1));
    m_i = m_new;
  });
  store(out + expand_dims(rows, 1) * D + expand_dims(dims, 0), cast<half>(acc / expand_dims(l_i, 1)),
        expand_dims(rowOk, 1));
  // --- 4. log(sum_j exp(scale * q . k_j)) per row, in natural-log units:
  // m_i + log2(l_i) is it in base 2. A backward pass recomputes P from it
  // without a second pass over the keys.
  store(lse + rows, (m_i + log2(l_i)) * 0.69314718f, rowOk);
}

// The largest error of out (absolute) and lse against float64 on the host.
struct Check {
  double out = 0, lse = 0;
};
Check compare(const std::vector<half> &hq, const std::vector<half> &hk, const std::vector<half> &hv,
              const std::vector<half> &got, const std::vector<float> &gotLse, int S_q, int S_k, int D, bool causal) {
  Check c;
  std::vector<double> s(S_k);
  for (int i = 0; i < S_q; ++i) {
    const int last = causal ? i : S_k - 1;
    double m = -INFINITY, total = 0;
    for (int j = 0; j <= last; ++j) {
      double d = 0;
      for (int x = 0; x < D; ++x) d += double(float(hq[size_t(i) * D + x])) * double(float(hk[size_t(j) * D + x]));
      s[j] = d / std::sqrt(double(D));
      m = std::max(m, s[j]);
    }
    for (int j = 0; j <= last; ++j) total += s[j] = std::exp(s[j] - m);
    c.lse = std::max(c.lse, std::fabs(gotLse[i] - (m + std::log(total))));
    for (int x = 0; x < D; ++x) {
      double want = 0;
      for (int j = 0; j <= last; ++j) want += s[j] * double(float(hv[size_t(j) * D + x]));
      c.out = std::max(c.out, std::fabs(double(float(got[size_t(i) * D + x])) - want / total));
    }
  }
  return c;
}

int main() {
  // Lengths that are not multiples of the blocks, small enough for the
  // emulator (which runs every lane as a fiber on the CPU).
  const int S = 200, D = 64, BLOCK_M = 64, BLOCK_N = 32;
  Device dev = Device::open();
  std::printf("device: %s\n", dev.name().c_str());

  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<half> hq(size_t(S) * D), hk(size_t(S) * D), hv(size_t(S) * D);
  for (auto *t : {&hq, &hk, &hv})
    for (half &x : *t) x = half(dist(gen));
  Buffer<half> q = dev.upload(hq), k = dev.upload(hk), v = dev.upload(hv);
  Buffer<half> out = dev.alloc<half>(size_t(S) * D);
  Buffer<float> lse = dev.alloc<float>(S);

  auto kernel = jit<attention>();
  const float qkScale = float(1.0 / std::sqrt(double(D)) * 1.4426950408889634);
  bool ok = true;
  for (bool causal : {false, true}) {
    // One program per BLOCK_M queries: ceil(200 / 64) = 4 programs of 4 waves.
    kernel.launch(dev, {uint32_t((S + BLOCK_M - 1) / BLOCK_M)}, {.num_warps = 4}, q, k, v, out, lse, S, S, qkScale,
                  D, BLOCK_M, BLOCK_N, causal);
    // Tolerances: P is rounded to f16 before the second dot and out is
    // stored as f16 (|out| <= 2), a few units of f16's 2^-11 each.
    Check c = compare(hq, hk, hv, out.download(), lse.download(), S, S, D, causal);
    bool good = c.out <= 4e-3 && c.lse <= 1e-4;
    ok = ok && good;
    std::printf("attention %s, S = %d, D = %d, f16: %s (max error of out %.3g, of lse %.3g)\n",
                causal ? "causal" : "non-causal", S, D, good ? "matches the float64 reference" : "MISMATCH", c.out,
                c.lse);
  }
  // Two specializations (CAUSAL is a constant): two kernels compiled, or
  // none when the disk cache has them from an earlier run.
  const LaunchStats stats = kernel.stats();
  std::printf("kernels compiled: %llu, loaded from the disk cache: %llu\n", (unsigned long long)stats.compiles,
              (unsigned long long)stats.diskHits);
  // The kernel's assembly (TESSEL_DUMP=1) shows two groups of matrix
  // instructions in the key loop, v_exp_f32 for exp2, and the row max and
  // sum as cross-lane reductions over the first dot's result.
  return ok ? 0 : 1;
}
