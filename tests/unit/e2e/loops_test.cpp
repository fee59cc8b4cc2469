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
  CHECK(hasBackwardBranch(k.assembly));
}
