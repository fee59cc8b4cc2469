// Matmul block programs in the two forms users write, and what their compiled
// main loop is made of. bench-matmul prints the loops' make-up; the e2e test
// (tests/unit/e2e/triton_matmul_test.cpp) runs the Triton form against
// float64 and checks its loop's loads; bench-triton-compare sets both next to
// Triton's code. One definition, so all see the same kernel.
#pragma once

#include <tessel/tessel.hpp>

#include <map>
#include <regex>
#include <string>
#include <type_traits>
#include <vector>

namespace tessel::bench {

// Triton's tutorial 03 (python/tutorials/03-matrix-multiplication.py), line
// by line: strides as runtime arguments, pointer tiles made once and moved
// BLOCK_SIZE_K * stride along K each iteration (carried through the loop),
// the K tail masked by what remains of K, rows and columns wrapped with % M
// and % N, and the tutorial's assumptions. C is written as TC (T's own
// type, or f16 for 8-bit float inputs, as Triton's fp8 matmuls write).
template <class T = half, class TC = T>
void triton_matmul(Ptr<T> a_ptr, Ptr<T> b_ptr, Ptr<TC> c_ptr, i32 M, i32 N, i32 K, i32 stride_am, i32 stride_ak,
                   i32 stride_bk, i32 stride_bn, i32 stride_cm, i32 stride_cn, Const<int> BLOCK_SIZE_M,
                   Const<int> BLOCK_SIZE_N, Const<int> BLOCK_SIZE_K, Const<int> GROUP_SIZE_M) {
  auto pid = program_id(0);
  auto num_pid_m = cdiv(M, BLOCK_SIZE_M);
  auto num_pid_n = cdiv(N, BLOCK_SIZE_N);
  auto num_pid_in_group = GROUP_SIZE_M * num_pid_n;
  auto group_id = pid / num_pid_in_group;
  auto first_pid_m = group_id * GROUP_SIZE_M;
  auto group_size_m = minimum(num_pid_m - first_pid_m, GROUP_SIZE_M);
  auto pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m);
  auto pid_n = (pid % num_pid_in_group) / group_size_m;

  assume(pid_m >= 0);
  assume(pid_n >= 0);
  assume(stride_am > 0);
  assume(stride_ak > 0);
  assume(stride_bn > 0);
  assume(stride_bk > 0);
  assume(stride_cm > 0);
  assume(stride_cn > 0);

  auto offs_am = (pid_m * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M)) % M;
  auto offs_bn = (pid_n * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N)) % N;
  auto offs_k = arange(0, BLOCK_SIZE_K);
  auto a_ptrs = a_ptr + (expand_dims(offs_am, 1) * stride_am + expand_dims(offs_k, 0) * stride_ak);
  auto b_ptrs = b_ptr + (expand_dims(offs_k, 1) * stride_bk + expand_dims(offs_bn, 0) * stride_bn);

  auto accumulator = zeros<float>({BLOCK_SIZE_M, BLOCK_SIZE_N});
  for_range(0, cdiv(K, BLOCK_SIZE_K), [&](i32 k) {
    // other = 0 (an 8-bit float's zero is a tile: no literal is one).
    auto zero = [](auto rows, auto cols) {
      if constexpr (detail::is_fp8_elem<T>)
        return zeros<T>({rows, cols});
      else
        return 0;
    };
    auto a = load(a_ptrs, expand_dims(offs_k, 0) < K - k * BLOCK_SIZE_K, zero(BLOCK_SIZE_M, BLOCK_SIZE_K));
    auto b = load(b_ptrs, expand_dims(offs_k, 1) < K - k * BLOCK_SIZE_K, zero(BLOCK_SIZE_K, BLOCK_SIZE_N));
    accumulator = dot(a, b, accumulator);
    a_ptrs += BLOCK_SIZE_K * stride_ak;
    b_ptrs += BLOCK_SIZE_K * stride_bk;
  });
  auto c = cast<TC>(accumulator);

  auto offs_cm = pid_m * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M);
  auto offs_cn = pid_n * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N);
  auto c_ptrs = c_ptr + stride_cm * expand_dims(offs_cm, 1) + stride_cn * expand_dims(offs_cn, 0);
  auto c_mask = (expand_dims(offs_cm, 1) < M) & (expand_dims(offs_cn, 0) < N);
  store(c_ptrs, c, c_mask);
}

// tessel's tutorial 03 (tutorials/03-matrix-multiplication.cpp): offsets
// made from the loop's k each iteration, row-major operands, nothing carried
// but the accumulator.
template <class T = half>
void tutorial_matmul(Ptr<T> a, Ptr<T> b, Ptr<float> c, i32 M, i32 N, i32 K, Const<int> BM, Const<int> BN,
                     Const<int> BK, Const<int> GROUP_M) {
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
  auto acc = zeros<float>({BM, BN});
  for_range(0, K, BK, [&](i32 k) {
    auto kk = k + ks;
    auto ta = load(a + expand_dims(rows, 1) * K + expand_dims(kk, 0),
                   expand_dims(rows < M, 1) & expand_dims(kk < K, 0), 0);
    auto tb = load(b + expand_dims(kk, 1) * N + expand_dims(cols, 0),
                   expand_dims(kk < K, 1) & expand_dims(cols < N, 0), 0);
    acc = dot(ta, tb, acc);
  });
  store(c + expand_dims(rows, 1) * N + expand_dims(cols, 0), acc,
        expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
}

// The loop that holds the matrix instructions, as its basic blocks: the
// blocks of the control-flow graph's strongly connected part (blocks start at
// labels and after branches; a block falls through unless it ends in s_branch
// or s_endpgm) that holds the first v_mfma/v_wmma, in program order. LLVM
// places a loop's blocks in any order around its header (a conditional
// prefetch block before it, exec-masked loads after). Empty if none.
struct LoopBlock {
  std::string text;
  std::vector<size_t> successors; // within the loop (indices into its blocks)
  bool header = false;            // entered from outside the loop
};

inline std::vector<LoopBlock> mainLoopBlocks(const std::string &assembly) {
  struct Block {
    std::string text, label;
    std::vector<std::string> targets;
    bool fallsThrough = true;
  };
  std::vector<Block> blocks(1);
  const std::regex labelLine(R"(^(\.LBB\d+_\d+):)"), branch(R"(^\s+(s_c?branch\w*|s_endpgm)\s*(\.LBB\d+_\d+)?)");
  size_t at = 0;
  while (at < assembly.size()) {
    size_t end = assembly.find('\n', at);
    end = end == std::string::npos ? assembly.size() : end + 1;
    const std::string line = assembly.substr(at, end - at);
    at = end;
    std::smatch m;
    if (std::regex_search(line, m, labelLine)) {
      if (!blocks.back().text.empty() || !blocks.back().label.empty()) // not the empty block after a branch
        blocks.push_back({});
      blocks.back().label = m[1].str();
    }
    blocks.back().text += line;
    if (std::regex_search(line, m, branch)) {
      if (m[2].matched)
        blocks.back().targets.push_back(m[2].str());
      blocks.back().fallsThrough = m[1].str().rfind("s_cbranch", 0) == 0;
      blocks.push_back({});
    }
  }
  std::map<std::string, size_t> byLabel;
  for (size_t i = 0; i < blocks.size(); ++i)
    if (!blocks[i].label.empty())
      byLabel[blocks[i].label] = i;
  auto successors = [&](size_t i) {
    std::vector<size_t> out;
    for (const std::string &t : blocks[i].targets)
      if (byLabel.count(t))
        out.push_back(byLabel[t]);
    if (blocks[i].fallsThrough && i + 1 < blocks.size())
      out.push_back(i + 1);
    return out;
  };
  // Blocks reachable from `from` (itself only through a cycle).
  auto reachable = [&](size_t from) {
    std::vector<bool> seen(blocks.size());
    std::vector<size_t> work = successors(from);
    while (!work.empty()) {
      size_t b = work.back();
      work.pop_back();
      if (seen[b])
        continue;
      seen[b] = true;
      for (size_t s : successors(b))
        work.push_back(s);
    }
    return seen;
  };
  const std::regex matrix(R"(\bv_(mfma|wmma)_)");
  size_t core = blocks.size();
  for (size_t i = 0; i < blocks.size() && core == blocks.size(); ++i)
    if (std::regex_search(blocks[i].text, matrix))
      core = i;
  if (core == blocks.size() || !reachable(core)[core])
    return {};
  const std::vector<bool> fromCore = reachable(core);
  std::vector<size_t> index(blocks.size(), blocks.size()); // a block's place in the loop
  std::vector<size_t> members;
  for (size_t i = 0; i < blocks.size(); ++i)
    if (fromCore[i] && reachable(i)[core]) {
      index[i] = members.size();
      members.push_back(i);
    }
  std::vector<LoopBlock> loop(members.size());
  for (size_t i = 0; i < blocks.size(); ++i)
    for (size_t s : successors(i)) {
      if (index[s] == blocks.size())
        continue;
      if (index[i] == blocks.size())
        loop[index[s]].header = true;
      else
        loop[index[i]].successors.push_back(index[s]);
    }
  for (size_t j = 0; j < members.size(); ++j)
    loop[j].text = blocks[members[j]].text;
  return loop;
}

// The main loop's assembly (mainLoopBlocks' texts in program order).
inline std::string mainLoop(const std::string &assembly) {
  std::string loop;
  for (const LoopBlock &b : mainLoopBlocks(assembly))
    loop += b.text;
  return loop;
}

inline size_t countMatches(const std::string &text, const std::string &pattern) {
  std::regex re(pattern);
  return size_t(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

// What one pass over a loop's text holds (every block once, exec-masked
// ones included).
struct LoopMakeUp {
  size_t instructions, matrix, globalLoads128, globalLoads64, globalLoads32, globalLoads16, ldsReads, ldsWrites,
      barriers, vmovs, execBranches;
};

inline LoopMakeUp loopMakeUp(const std::string &loop) {
  return {countMatches(loop, R"((^|\n)\t[a-z][a-z0-9_]*)"),
          countMatches(loop, R"(\bv_(mfma|wmma)_)"),
          countMatches(loop, R"(\b(global|buffer)_load_(dwordx4|b128)\b)"),
          countMatches(loop, R"(\b(global|buffer)_load_(dwordx2|b64)\b)"),
          countMatches(loop, R"(\b(global|buffer)_load_(dword|b32)\b)"),
          countMatches(loop, R"(\b(global|buffer)_load_(ushort|short_d16(_hi)?|u16|d16(_hi)?_b16)\b)"),
          countMatches(loop, R"(\bds_(read|load)\w*)"),
          countMatches(loop, R"(\bds_(write|store)\w*)"),
          countMatches(loop, R"(\bs_barrier\b)"),
          countMatches(loop, R"(\bv_(mov_b32|mov_b64|pk_mov_b32)(_e32|_e64)?\b)"),
          countMatches(loop, R"(\bs_cbranch_exec(z|nz)\b)")};
}

// Triton's tl.dot_scaled in a tutorial 03 loop (bench/triton/matmul_scaled.py,
// line by line): A [M, K] and B [K, N] in OCP E4M3 (E = float8_e4m3fn) or
// e2m1 (E = int8_t: two to a byte, packed along K, so A is [M, K / 2] bytes
// and B [K / 2, N]; Triton's kernel takes FORMAT "e2m1" and PACK 2), e8m0
// scales per 32 of K ([M, K / 32] and [N, K / 32]), K a multiple of the block
// (no masks on K), C in f16. The comparison bench runs BLOCK_K 64 for E4M3
// (two scale groups a step) and 128 for e2m1 (64 bytes a row).
// Both sides add `assume(pid_n >= 0)` (Triton's test kernel has none; its
// axis analysis ignores the sign of `%`, tessel's does not): without it B is
// loaded a byte at a time, and tessel's narrow-access remark says so.
template <class E>
void mx_matmul_kernel(Ptr<E> a_ptr, Ptr<E> b_ptr, Ptr<half> c_ptr, Ptr<int8_t> a_scale_ptr, Ptr<int8_t> b_scale_ptr,
                      i32 M, i32 N, i32 K, i32 stride_am, i32 stride_ak, i32 stride_bk, i32 stride_bn, i32 stride_cm,
                      i32 stride_cn, i32 stride_asm, i32 stride_ask, i32 stride_bsn, i32 stride_bsk,
                      Const<int> BLOCK_SIZE_M, Const<int> BLOCK_SIZE_N, Const<int> BLOCK_SIZE_K,
                      Const<int> GROUP_SIZE_M) {
  static_assert(std::is_same_v<E, float8_e4m3fn> || std::is_same_v<E, int8_t>, "E4M3 or packed e2m1");
  constexpr MxFormat FORMAT = std::is_same_v<E, int8_t> ? MxFormat::e2m1 : MxFormat::e4m3;
  constexpr int PACK = FORMAT == MxFormat::e2m1 ? 2 : 1;
  auto pid = program_id(0);
  auto num_pid_m = cdiv(M, BLOCK_SIZE_M);
  auto num_pid_n = cdiv(N, BLOCK_SIZE_N);
  auto num_pid_in_group = GROUP_SIZE_M * num_pid_n;
  auto group_id = pid / num_pid_in_group;
  auto first_pid_m = group_id * GROUP_SIZE_M;
  auto group_size_m = minimum(num_pid_m - first_pid_m, GROUP_SIZE_M);
  auto pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m);
  auto pid_n = (pid % num_pid_in_group) / group_size_m;
  assume(pid_n >= 0); // as matmul_scaled.py's tl.assume: B's `% N` keeps runs of 16 (vector loads)
  auto offs_am = (pid_m * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M)) % M;
  auto offs_bn = (pid_n * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N)) % N;
  auto offs_k = arange(0, BLOCK_SIZE_K / PACK);
  auto offs_sk = arange(0, BLOCK_SIZE_K / 32);
  auto a_ptrs = a_ptr + (expand_dims(offs_am, 1) * stride_am + expand_dims(offs_k, 0) * stride_ak);
  auto b_ptrs = b_ptr + (expand_dims(offs_k, 1) * stride_bk + expand_dims(offs_bn, 0) * stride_bn);
  auto a_scale_ptrs = a_scale_ptr + expand_dims(offs_am, 1) * stride_asm + expand_dims(offs_sk, 0) * stride_ask;
  auto b_scale_ptrs = b_scale_ptr + expand_dims(offs_bn, 1) * stride_bsn + expand_dims(offs_sk, 0) * stride_bsk;
  auto accumulator = zeros<float>({BLOCK_SIZE_M, BLOCK_SIZE_N});
  for_range(0, cdiv(K, BLOCK_SIZE_K), [&](i32) {
    auto a = load(a_ptrs);
    auto b = load(b_ptrs);
    Tile<int8_t> a_scale = load(a_scale_ptrs);
    Tile<int8_t> b_scale = load(b_scale_ptrs);
    accumulator = dot_scaled(a, a_scale, FORMAT, b, b_scale, FORMAT, accumulator);
    a_ptrs += (BLOCK_SIZE_K / PACK) * stride_ak;
    b_ptrs += (BLOCK_SIZE_K / PACK) * stride_bk;
    a_scale_ptrs += (BLOCK_SIZE_K / 32) * stride_ask;
    b_scale_ptrs += (BLOCK_SIZE_K / 32) * stride_bsk;
  });
  auto c = cast<half>(accumulator);
  auto offs_cm = pid_m * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M);
  auto offs_cn = pid_n * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N);
  auto c_ptrs = c_ptr + stride_cm * expand_dims(offs_cm, 1) + stride_cn * expand_dims(offs_cn, 0);
  auto c_mask = (expand_dims(offs_cm, 1) < M) & (expand_dims(offs_cn, 0) < N);
  store(c_ptrs, c, c_mask);
}

} // namespace tessel::bench
