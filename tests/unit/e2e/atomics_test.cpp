// Atomics on global memory, on the emulator: workgroups run on parallel host
// threads, so contention is real; results against host folds.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <algorithm>
#include <map>
#include <numeric>

using namespace tessel;
using namespace e2e;

namespace {

// bins[x[i]] += 1 for every i: every workgroup hits the same 256 counters.
void histogram(Ptr<int32_t> x, Ptr<int32_t> bins, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto inside = offs < n;
  auto v = load(x + offs, inside, 0);
  atomic_add(bins + v, 1, inside, {MemSem::relaxed});
}

} // namespace

TEST_CASE("a histogram of 1e6 random ints into 256 bins is exact") {
  const int n = 1000000, block = 1024;
  auto hx = randomInts<int32_t>(n, 0, 255);
  auto x = emulator().upload(hx);
  auto bins = emulator().upload(std::vector<int32_t>(256, 0));
  jit<histogram>().launch(emulator(), {cdiv(n, block)}, {.num_warps = 4}, x, bins, n, block);
  std::vector<int32_t> want(256, 0);
  for (int32_t v : hx)
    ++want[size_t(v)];
  CHECK(bins.download() == want);
}

namespace {

// Each workgroup adds 1 to one counter by compare-and-swap: try
// guess -> guess + 1; a failed try returns what the counter held, the next
// guess. (Only values the atomic returned decide the loop: every thread of
// the program sees the same ones.)
void cas_counter(Ptr<int32_t> counter, Ptr<int32_t> tries) {
  auto done = full({}, false);
  auto guess = full({}, 0);
  auto attempts = full({}, 0);
  while_([&] { return !done; }, [&] {
    auto old = atomic_cas(counter, guess, guess + 1);
    done = old == guess;
    guess = old;
    attempts = attempts + 1;
  });
  atomic_add(tries, attempts);
}

} // namespace

TEST_CASE("atomic_cas builds a lock-free counter under contention from every workgroup") {
  const uint32_t groups = 64;
  auto counter = emulator().upload(std::vector<int32_t>{0});
  auto tries = emulator().upload(std::vector<int32_t>{0});
  jit<cas_counter>().launch(emulator(), {groups}, {.num_warps = 1}, counter, tries);
  // A scalar program: one increment per workgroup.
  CHECK(counter.download()[0] == int32_t(groups));
  CHECK(tries.download()[0] >= int32_t(groups));
}
