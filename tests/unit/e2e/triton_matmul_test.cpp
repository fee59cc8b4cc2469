// Matmul written as Triton's tutorial 03 is, line by line: strides as
// runtime arguments, pointer tiles built once and advanced by BLOCK_K *
// stride each iteration of the K loop (carried through for_range), the K
// tail masked by what remains of K. Results on the emulator at odd sizes
// against float64, and the gfx942 / gfx950 main loop: 128-bit global loads
// (a stride specialized to 1 and a pointer tile advanced by a uniform amount
// keep the axis analysis' contiguity and divisibility).
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/compile.hpp"

#include <algorithm>
#include <cmath>
#include <map>

using namespace tessel;
using namespace e2e;

namespace {

void triton_matmul(Ptr<half> a_ptr, Ptr<half> b_ptr, Ptr<half> c_ptr, i32 M, i32 N, i32 K, i32 stride_am,
                   i32 stride_ak, i32 stride_bk, i32 stride_bn, i32 stride_cm, i32 stride_cn,
                   Const<int> BLOCK_SIZE_M, Const<int> BLOCK_SIZE_N, Const<int> BLOCK_SIZE_K,
                   Const<int> GROUP_SIZE_M) {
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
    auto a = load(a_ptrs, expand_dims(offs_k, 0) < K - k * BLOCK_SIZE_K, 0);
    auto b = load(b_ptrs, expand_dims(offs_k, 1) < K - k * BLOCK_SIZE_K, 0);
    accumulator = dot(a, b, accumulator);
    a_ptrs += BLOCK_SIZE_K * stride_ak;
    b_ptrs += BLOCK_SIZE_K * stride_bk;
  });
  auto c = cast<half>(accumulator);

  auto offs_cm = pid_m * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M);
  auto offs_cn = pid_n * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N);
  auto c_ptrs = c_ptr + stride_cm * expand_dims(offs_cm, 1) + stride_cn * expand_dims(offs_cn, 0);
  auto c_mask = expand_dims(offs_cm, 1) < M & expand_dims(offs_cn, 0) < N;
  store(c_ptrs, c, c_mask);
}

constexpr int BM = 128, BN = 128, BK = 64, GROUP_M = 8;

} // namespace

TEST_CASE("Triton's tutorial 03 matmul, line by line: odd M, N, K against float64 on the emulator") {
  // Odd sizes (narrow accesses), then sizes divisible by 16 but not by the
  // blocks (the 128-bit loads, a masked K tail of 16).
  for (auto [M, N, K] : {std::array{333, 201, 150}, std::array{130, 257, 77}, std::array{400, 208, 464}}) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(K);
    std::vector<half> ha(size_t(M) * K), hb(size_t(K) * N);
    auto fa = randomFloats(ha.size(), -1, 1), fb = randomFloats(hb.size(), -1, 1);
    std::copy(fa.begin(), fa.end(), ha.begin());
    std::copy(fb.begin(), fb.end(), hb.begin());
    auto a = emulator().upload(ha), b = emulator().upload(hb);
    auto c = poisoned<half>(size_t(M) * N);
    static auto kernel = jit<triton_matmul>();
    const uint32_t grid = cdiv(M, BM) * cdiv(N, BN);
    kernel.launch(emulator(), {grid}, {.num_warps = 4, .num_stages = 2}, a, b, c, M, N, K, K, 1, N, 1, N, 1, BM,
                  BN, BK, GROUP_M);
    std::vector<half> got = c.download();
    std::vector<double> want(size_t(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k) {
        const double av = float(ha[size_t(i) * K + k]);
        for (int j = 0; j < N; ++j)
          want[size_t(i) * N + j] += av * float(hb[size_t(k) * N + j]);
      }
    double scale = 0, worst = 0;
    for (double w : want)
      scale = std::max(scale, std::fabs(w));
    for (size_t e = 0; e < want.size(); ++e)
      worst = std::max(worst, std::fabs(double(float(got[e])) - want[e]));
    CHECK(worst / scale < 1e-2);
  }
}

namespace {

// The text of the innermost loop that holds the matrix instructions: from a
// label that branches go back to, to the last of them.
std::string mainLoop(const std::string &assembly) {
  std::map<std::string, std::pair<size_t, size_t>> loops; // label -> [its line, the last branch back]
  const std::regex branch(R"(s_(c)?branch\w*\s+(\.LBB\d+_\d+))");
  for (auto it = std::sregex_iterator(assembly.begin(), assembly.end(), branch); it != std::sregex_iterator(); ++it) {
    const std::string label = (*it)[2].str();
    const size_t at = assembly.find("\n" + label + ":"), from = size_t(it->position());
    if (at != std::string::npos && at < from)
      loops[label] = {at, from};
  }
  std::string best;
  for (const auto &[label, span] : loops) {
    std::string body = assembly.substr(span.first, span.second - span.first);
    if (contains(body, "v_mfma") && (best.empty() || body.size() < best.size()))
      best = body;
  }
  return best;
}

CompiledKernel compileTutorialForm(const std::string &arch, int M, int N, int K) {
  auto a = emulator().alloc<half>(size_t(M) * K), b = emulator().alloc<half>(size_t(K) * N);
  auto c = emulator().alloc<half>(size_t(M) * N);
  detail::TraceRequest request =
      jit<triton_matmul>().trace(a, b, c, M, N, K, K, 1, N, 1, N, 1, BM, BN, BK, GROUP_M);
  CompileOptions options{arch, 4};
  options.numStages = 2;
  return compileTrace(request.trace, request.spec, options);
}

} // namespace

TEST_CASE("Triton's tutorial 03 matmul, line by line: the main loop loads 128 bits at a time on gfx942 and gfx950") {
  for (std::string arch : {"gfx942", "gfx950"}) {
    CAPTURE(arch);
    // M, N, K divisible by 16 (not by the blocks: the K tail is masked).
    CompiledKernel k = compileTutorialForm(arch, 400, 208, 464);
    const std::string loop = mainLoop(k.assembly());
    REQUIRE(!loop.empty());
    CAPTURE(loop);
    // A 128x64 and a 64x128 f16 tile over 256 lanes: 4 + 4 loads of 8 halves each.
    CHECK(matchCount(loop, std::regex(R"((global|buffer)_load_dwordx4\b)")) == 8);
    CHECK(matchCount(loop, std::regex(R"((global|buffer)_load_(?!dwordx4\b)\w+)")) == 0);
  }
}
