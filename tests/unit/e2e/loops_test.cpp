// Device loops (for_range): one scf.for compiled whatever the trip count,
// tiles carried as C++ variables are, run on the emulator against host math.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <regex>

using namespace tessel;
using namespace e2e;

namespace {

constexpr int kCols = 64;

// out[c] = 5 + sum over rows r < n of x[r][c]: a carried tile and a runtime trip count.
void column_sums(Ptr<int32_t> x, Ptr<int32_t> out, i32 n) {
  auto cols = arange(0, kCols);
  auto acc = full({kCols}, 5);
  for_range(0, n, [&](i32 r) { acc = acc + load(x + r * kCols + cols); });
  store(out + cols, acc);
}

// Whether the assembly branches back: a label that a later branch targets.
bool hasBackwardBranch(const std::string &assembly) {
  std::regex label(R"(^(\.LBB\w+):)", std::regex::multiline);
  std::vector<std::pair<size_t, std::string>> labels;
  for (auto it = std::sregex_iterator(assembly.begin(), assembly.end(), label); it != std::sregex_iterator(); ++it)
    labels.push_back({size_t(it->position()), (*it)[1]});
  for (auto &[at, name] : labels) {
    size_t use = assembly.find("s_cbranch", at);
    while (use != std::string::npos) {
      size_t eol = assembly.find('\n', use);
      if (assembly.substr(use, eol - use).find(name) != std::string::npos) return true;
      use = assembly.find("s_cbranch", eol);
    }
  }
  return false;
}

} // namespace

TEST_CASE("a sum over a runtime trip count is exact for n = 0, 1, 7, 1000; one compile") {
  auto kernel = jit<column_sums>();
  const int maxRows = 1000;
  auto hx = randomInts<int32_t>(size_t(maxRows) * kCols, -100000, 100000);
  auto x = emulator().upload(hx);
  auto compiles = [&] { return kernel.runtime()->stats().compiles + kernel.runtime()->stats().diskHits; };
  size_t before = 0;
  for (int n : {0, 1, 7, 1000}) {
    INFO("n = " << n);
    // n = 0 (divisible by 16) and n = 1 are specializations of their own;
    // 7 and 1000 share one kernel whatever the trip count.
    if (n == 1000) before = compiles();
    auto out = poisoned<int32_t>(kCols);
    kernel.launch(emulator(), {1}, {.num_warps = 1}, x, out, n);
    std::vector<int32_t> got = out.download();
    for (int c = 0; c < kCols; ++c) {
      int64_t want = 5;
      for (int r = 0; r < n; ++r) want += hx[size_t(r) * kCols + c];
      REQUIRE(got[c] == want);
    }
  }
  CHECK(compiles() == before);
  const CompiledKernel &k = *kernel.runtime()->lastKernel();
  CHECK(contains(k.tileIR, "scf.for"));
  CHECK(hasBackwardBranch(k.assembly()));
}

namespace {

// Per row: the sum and the largest value of a row of any length, a block at
// a time (a tile and a scalar carried, the last block masked).
void row_stats(Ptr<float> x, Ptr<float> sums, Ptr<float> maxes, i32 N, Const<int> BLOCK) {
  auto row = program_id(0);
  auto base = x + row * N;
  auto acc = zeros<float>({BLOCK});
  auto largest = max(full<float>({BLOCK}, -INFINITY), 0);
  for_range(0, N, BLOCK, [&](i32 k) {
    auto offs = k + arange(0, BLOCK);
    auto v = load(base + offs, offs < N, 0.0f);
    acc = acc + v;
    largest = maximum(largest, max(where(offs < N, v, -INFINITY), 0));
  });
  store(sums + row, sum(acc, 0));
  store(maxes + row, largest);
}

// out[i] = sum over j < i of (sum over m < j of m): nested loops, a scalar
// carried through both, the inner bound the outer induction variable.
void triangle(Ptr<int32_t> out, i32 n) {
  auto total = zeros<int32_t>({});
  for_range(0, n, [&](i32 j) {
    for_range(0, j, [&](i32 m) { total = total + m; });
    store(out + j, total);
  });
}

// A straight-line kernel: masks branch forward only.
void masked_copy(Ptr<float> x, Ptr<float> y, i32 n) {
  auto offs = program_id(0) * 256 + arange(0, 256);
  store(y + offs, load(x + offs, offs < n), offs < n);
}

} // namespace

TEST_CASE("rows of 100000 and 4097 elements: one loop kernel per block size") {
  auto kernel = jit<row_stats>();
  const int BLOCK = 1024;
  for (int N : {100000, 4097}) {
    INFO("N = " << N);
    const int rows = 3;
    auto hx = randomFloats(size_t(rows) * N, -1, 1);
    auto x = emulator().upload(hx);
    auto sums = poisoned<float>(rows), maxes = poisoned<float>(rows);
    kernel.launch(emulator(), {rows}, {.num_warps = 4}, x, sums, maxes, N, BLOCK);
    auto gotSums = sums.download(), gotMaxes = maxes.download();
    for (int r = 0; r < rows; ++r) {
      double want = 0, absSum = 0;
      float largest = -INFINITY;
      for (int c = 0; c < N; ++c) {
        float v = hx[size_t(r) * N + c];
        want += v;
        absSum += std::fabs(v);
        largest = std::max(largest, v);
      }
      CHECK(std::fabs(gotSums[r] - want) <= 1e-5 * absSum);
      CHECK(gotMaxes[r] == largest);
    }
  }
  const CompiledKernel &k = *kernel.runtime()->lastKernel();
  CHECK(hasBackwardBranch(k.assembly()));
}

TEST_CASE("nested loops with a runtime inner bound") {
  auto kernel = jit<triangle>();
  for (int n : {0, 1, 13}) {
    INFO("n = " << n);
    auto out = poisoned<int32_t>(16);
    kernel.launch(emulator(), {1}, {.num_warps = 1}, out, n);
    auto got = out.download();
    int32_t total = 0;
    for (int j = 0; j < n; ++j) {
      for (int m = 0; m < j; ++m) total += m;
      REQUIRE(got[j] == total);
    }
  }
}

TEST_CASE("a straight-line kernel has no backward branch") {
  auto kernel = jit<masked_copy>();
  auto x = emulator().upload(randomFloats(300)), y = poisoned<float>(300);
  kernel.launch(emulator(), {2}, {.num_warps = 4}, x, y, 300);
  CHECK_FALSE(hasBackwardBranch(kernel.runtime()->lastKernel()->assembly()));
}

namespace {

// A row sum whose loads inside the loop move 16 bytes: the induction
// variable steps by BLOCK from 0 and assume(N % 16 == 0) aligns every row.
void aligned_row_sums(Ptr<float> x, Ptr<float> sums, i32 N, Const<int> BLOCK) {
  assume(N % 16 == 0);
  auto base = x + program_id(0) * N;
  auto acc = zeros<float>({BLOCK});
  for_range(0, N, BLOCK, [&](i32 k) {
    auto offs = k + arange(0, BLOCK);
    acc = acc + load(base + offs, offs < N, 0.0f);
  });
  store(sums + program_id(0), sum(acc, 0));
}

} // namespace

TEST_CASE("loads inside a loop vectorize as they do outside it") {
  auto kernel = jit<aligned_row_sums>();
  const int N = 16 * 700, rows = 2; // not a multiple of BLOCK: the last block is masked
  auto hx = randomFloats(size_t(rows) * N, -1, 1);
  auto x = emulator().upload(hx);
  auto sums = poisoned<float>(rows);
  kernel.launch(emulator(), {rows}, {.num_warps = 4}, x, sums, N, 1024);
  auto got = sums.download();
  for (int r = 0; r < rows; ++r) {
    double want = 0, absSum = 0;
    for (int c = 0; c < N; ++c) {
      want += hx[size_t(r) * N + c];
      absSum += std::fabs(hx[size_t(r) * N + c]);
    }
    CHECK(std::fabs(got[r] - want) <= 1e-5 * absSum);
  }
  const CompiledKernel &k = *kernel.runtime()->lastKernel();
  CHECK(contains(k.tileIR, "vec = 4"));
  // 16 bytes a thread, by a global or a buffer load
  CHECK((contains(k.assembly(), "global_load_dwordx4") || contains(k.assembly(), "buffer_load_dwordx4")));
  CHECK(hasBackwardBranch(k.assembly()));
}

namespace {

// Per program: a tile and a scalar assigned in a runtime branch, one only in
// the then side; a branch inside a loop (every third iteration).
void branches(Ptr<int32_t> out, i32 n, i32 threshold) {
  auto cols = arange(0, 64);
  auto v = cols * 2;
  auto s = full({}, 7);
  if_(n > threshold, [&] { v = v + n; s = s * 3; }, [&] { v = v - 1; });
  store(out + cols, v);
  store(out + 64, s);
  auto acc = zeros<int32_t>({64});
  for_range(0, n, [&](i32 k) {
    if_(k % 3 == 0, [&] { acc = acc + k; });
  });
  store(out + 65 + cols, acc);
}

} // namespace

TEST_CASE("if_: tiles assigned in a branch are its results; branches inside loops") {
  auto kernel = jit<branches>();
  for (auto [n, threshold] : {std::pair{10, 3}, std::pair{2, 3}, std::pair{0, 0}}) {
    INFO("n = " << n << ", threshold = " << threshold);
    auto out = poisoned<int32_t>(129);
    kernel.launch(emulator(), {1}, {.num_warps = 1}, out, n, threshold);
    auto got = out.download();
    bool taken = n > threshold;
    for (int c = 0; c < 64; ++c) REQUIRE(got[c] == (taken ? 2 * c + n : 2 * c - 1));
    CHECK(got[64] == (taken ? 21 : 7));
    int32_t acc = 0;
    for (int k = 0; k < n; ++k)
      if (k % 3 == 0) acc += k;
    for (int c = 0; c < 64; ++c) REQUIRE(got[65 + c] == acc);
  }
  CHECK(contains(kernel.runtime()->lastKernel()->tileIR, "scf.if"));
}

namespace {

// Sums x[0], x[1], ... until the sum reaches `limit` or n elements are used:
// a data-dependent trip count. out = {count, total}; also a tile carried.
void sum_until(Ptr<int32_t> x, Ptr<int32_t> out, i32 n, i32 limit) {
  auto i = full({}, 0);
  auto total = full({}, 0);
  auto seen = zeros<int32_t>({16});
  auto lanes = arange(0, 16);
  while_([&] { return (i < n) & (total < limit); }, [&] {
    total = total + load(x + i);
    seen = seen + cast<int32_t>(lanes == i % 16);
    i = i + 1;
  });
  store(out, i);
  store(out + 1, total);
  store(out + 2 + lanes, seen);
}

} // namespace

TEST_CASE("while_: a data-dependent trip count, scalars and a tile carried") {
  auto kernel = jit<sum_until>();
  auto hx = randomInts<int32_t>(100, 0, 20);
  auto x = emulator().upload(hx);
  for (auto [n, limit] : {std::pair{100, 150}, std::pair{100, 0}, std::pair{7, 100000}, std::pair{0, 5}}) {
    INFO("n = " << n << ", limit = " << limit);
    auto out = poisoned<int32_t>(18);
    kernel.launch(emulator(), {1}, {.num_warps = 1}, x, out, n, limit);
    auto got = out.download();
    int32_t i = 0, total = 0;
    std::vector<int32_t> seen(16, 0);
    while (i < n && total < limit) {
      total += hx[size_t(i)];
      seen[size_t(i % 16)] += 1;
      ++i;
    }
    CHECK(got[0] == i);
    CHECK(got[1] == total);
    for (int l = 0; l < 16; ++l) CHECK(got[size_t(2 + l)] == seen[size_t(l)]);
  }
  CHECK(contains(kernel.runtime()->lastKernel()->tileIR, "scf.while"));
}
