// Atomics on global memory, on the emulator: workgroups run on parallel host
// threads, so contention is real; results against host folds.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/compile.hpp"

#include <algorithm>
#include <map>
#include <numeric>

using namespace tessel;
using namespace e2e;

namespace {

// bins[x[i]] += 1 for every i: every workgroup hits the same 256 counters.
void histogram_by_atomics(Ptr<int32_t> x, Ptr<int32_t> bins, i32 n, Const<int> BLOCK) {
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
  jit<histogram_by_atomics>().launch(emulator(), {cdiv(n, block)}, {.num_warps = 4}, x, bins, n, block);
  std::vector<int32_t> want(256, 0);
  for (int32_t v : hx)
    ++want[size_t(v)];
  CHECK(bins.download() == want);
}

namespace {
// The idiom: each program counts its block with histogram() (bins in LDS),
// then adds its 256 counts to the global bins: 256 atomics per program
// instead of one per element.
void histogram_blocks(Ptr<int64_t> x, Ptr<int32_t> bins, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto counts = histogram(load(x + offs, offs < n, int64_t(0)), 256, offs < n);
  atomic_add(bins + arange(0, 256), counts, {MemSem::relaxed});
}
} // namespace

TEST_CASE("histogram(x, 256) per block plus atomic_add of the counts: 1e6 random int64 values, some outside the bins, exact") {
  const int n = 1000000, block = 2048;
  auto hx = randomInts<int64_t>(n, -20, 275); // values outside [0, 256) are not counted
  auto x = emulator().upload(hx);
  auto bins = emulator().upload(std::vector<int32_t>(256, 0));
  auto kernel = jit<histogram_blocks>();
  kernel.launch(emulator(), {cdiv(n, block)}, {.num_warps = 4}, x, bins, n, block);
  std::vector<int32_t> want(256, 0);
  for (int64_t v : hx)
    if (v >= 0 && v < 256)
      ++want[size_t(v)];
  CHECK(bins.download() == want);
  CHECK(kernel.runtime()->lastKernel()->ldsBytes >= 256 * 4);
  CHECK(contains(kernel.runtime()->lastKernel()->tileIR, "tessel.histogram"));
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

namespace {

// 256 elements, 4 waves, each element to one of `slots` counters picked by
// `idx` (heavy contention); old values stored where each element was.
template <class T, detail::AtomicKind K>
void rmw_kernel(Ptr<T> mem, Ptr<int32_t> idx, Ptr<T> vals, Ptr<T> olds) {
  auto offs = arange(0, 256);
  auto i = load(idx + offs);
  auto v = load(vals + offs);
  auto p = mem + i;
  Tile<T> old = [&] {
    if constexpr (K == detail::AtomicKind::add) return atomic_add(p, v);
    else if constexpr (K == detail::AtomicKind::max) return atomic_max(p, v);
    else if constexpr (K == detail::AtomicKind::min) return atomic_min(p, v);
    else if constexpr (K == detail::AtomicKind::xchg) return atomic_xchg(p, v);
    else if constexpr (std::is_integral_v<T>) {
      if constexpr (K == detail::AtomicKind::umax) return atomic_umax(p, v);
      else if constexpr (K == detail::AtomicKind::umin) return atomic_umin(p, v);
      else if constexpr (K == detail::AtomicKind::and_) return atomic_and(p, v);
      else if constexpr (K == detail::AtomicKind::or_) return atomic_or(p, v);
      else return atomic_xor(p, v);
    } else return atomic_xchg(p, v);
  }();
  store(olds + offs, old);
}

template <class T> T fold(detail::AtomicKind k, T m, T v) {
  using U = std::make_unsigned_t<std::conditional_t<std::is_integral_v<T>, T, int>>;
  switch (k) {
  case detail::AtomicKind::add: return T(m + v);
  case detail::AtomicKind::max: return std::max(m, v);
  case detail::AtomicKind::min: return std::min(m, v);
  case detail::AtomicKind::umax: if constexpr (std::is_integral_v<T>) return T(std::max(U(m), U(v))); else return m;
  case detail::AtomicKind::umin: if constexpr (std::is_integral_v<T>) return T(std::min(U(m), U(v))); else return m;
  case detail::AtomicKind::and_: if constexpr (std::is_integral_v<T>) return T(m & v); else return m;
  case detail::AtomicKind::or_: if constexpr (std::is_integral_v<T>) return T(m | v); else return m;
  case detail::AtomicKind::xor_: if constexpr (std::is_integral_v<T>) return T(m ^ v); else return m;
  case detail::AtomicKind::xchg: return v;
  }
  return m;
}

// Runs kind K over 256 values into 5 counters and checks: each counter ends
// as the fold of its values (any order: these kinds commute, but xchg, whose
// counter ends as one of its values); and the old values replay: for every
// counter, its olds are, in some order, the successive states of a fold.
template <class T, detail::AtomicKind K> void checkRmw(std::vector<T> init, std::vector<T> hv) {
  const int slots = int(init.size());
  auto hidx = randomInts<int32_t>(256, 0, slots - 1);
  auto mem = emulator().upload(init);
  auto idx = emulator().upload(hidx);
  auto vals = emulator().upload(hv);
  auto olds = poisoned<T>(256);
  jit<rmw_kernel<T, K>>().launch(emulator(), {1}, {.num_warps = 4}, mem, idx, vals, olds);
  auto got = mem.download(), gold = olds.download();
  for (int s = 0; s < slots; ++s) {
    CAPTURE(s);
    // The elements that went to counter s, and what each saw.
    std::vector<std::pair<T, T>> seen; // (old, value)
    for (size_t e = 0; e < 256; ++e)
      if (hidx[e] == s)
        seen.push_back({gold[e], hv[e]});
    // Replay: start from init[s]; each step one element whose old is the
    // current state applies its value. Every element must be used once. A
    // depth-first search: several elements may see the same state (max's
    // losers, add's zeros, a state met twice), and which goes first decides
    // whether the rest can follow; one that leaves the state as it is goes
    // first.
    std::vector<bool> used(seen.size(), false);
    size_t applied = 0, best = 0;
    T state = init[s];
    auto replay = [&](auto &&self, T at) -> bool {
      best = std::max(best, applied);
      if (applied == seen.size()) {
        state = at;
        return true;
      }
      for (bool keeps : {true, false})
        for (size_t e = 0; e < seen.size(); ++e) {
          if (used[e] || !(seen[e].first == at))
            continue;
          const T next = fold(K, at, seen[e].second);
          if ((next == at) != keeps)
            continue;
          used[e] = true;
          ++applied;
          if (self(self, next))
            return true;
          used[e] = false;
          --applied;
          if (keeps)
            return false; // another that keeps the state cannot do better
        }
      return false;
    };
    replay(replay, state);
    applied = best;
    CHECK(applied == seen.size());
    CHECK(got[size_t(s)] == state);
  }
}

} // namespace

TEST_CASE("every atomic kind under contention: final values fold, old values replay (i32, i64, f32)") {
  using K = detail::AtomicKind;
  auto ints = [](int64_t lo, int64_t hi) { return randomInts<int32_t>(256, lo, hi); };
  // add with +1s: the olds of a counter are 0, 1, 2, ... in some order.
  checkRmw<int32_t, K::add>({0, 0, 0, 0, 0}, std::vector<int32_t>(256, 1));
  checkRmw<int32_t, K::add>({7, -3, 0, 100, 5}, ints(-1000, 1000));
  checkRmw<int32_t, K::max>({0, -50, 50, 0, 0}, ints(-1000, 1000));
  checkRmw<int32_t, K::min>({0, -50, 50, 0, 0}, ints(-1000, 1000));
  checkRmw<int32_t, K::umax>({0, -1, 5, 0, 0}, ints(-1000, 1000));
  checkRmw<int32_t, K::umin>({-1, -1, 5, 0, -7}, ints(-1000, 1000));
  checkRmw<int32_t, K::and_>({-1, -1, 0x0F0F0F0F, -1, 0x7FFFFFFF}, ints(INT32_MIN, INT32_MAX));
  checkRmw<int32_t, K::or_>({0, 0, 1, 2, 3}, ints(0, 1 << 20));
  checkRmw<int32_t, K::xor_>({0, 1, 2, 3, 4}, ints(INT32_MIN, INT32_MAX));
  checkRmw<int32_t, K::xchg>({-1, -2, -3, -4, -5}, ints(0, 1 << 30));
  auto i64s = randomInts<int64_t>(256, -(int64_t(1) << 40), int64_t(1) << 40);
  checkRmw<int64_t, K::add>({0, 1, 2, 3, 4}, i64s);
  checkRmw<int64_t, K::max>({0, 1, 2, 3, 4}, i64s);
  // Float add of small integers is exact in any order; max/min commute.
  std::vector<float> small(256);
  for (size_t i = 0; i < 256; ++i)
    small[i] = float(int(i % 13) - 6);
  checkRmw<float, K::add>({0, 0.5f, -2, 0, 1}, small);
  checkRmw<float, K::max>({0, -100, 100, 0, 0}, randomFloats(256, -50, 50));
  checkRmw<float, K::min>({0, -100, 100, 0, 0}, randomFloats(256, -50, 50));
  checkRmw<float, K::xchg>({1, 2, 3, 4, 5}, randomFloats(256, -50, 50));
}

namespace {
// 64 elements over 4 waves of 64 threads: each element is held by 4
// threads, and must be added once. A scalar atomic runs once per program;
// every thread must see its old value: broadcast to a 256-element tile
// (one element per thread), each thread stores its own copy.
void replicated(Ptr<int32_t> mem, Ptr<int32_t> olds, Ptr<int32_t> counter, Ptr<int32_t> copies) {
  auto offs = arange(0, 64);
  auto old = atomic_add(mem + offs, offs + 1);
  store(olds + offs, old * 2);
  auto seen = atomic_add(counter, 1);
  auto all = arange(0, 256);
  store(copies + all, seen + all * 0);
}
} // namespace

TEST_CASE("an atomic on a replicated tile updates each element once; a scalar atomic's old value reaches every thread") {
  std::vector<int32_t> init(64);
  std::iota(init.begin(), init.end(), 100);
  auto mem = emulator().upload(init);
  auto olds = poisoned<int32_t>(64), copies = poisoned<int32_t>(256);
  auto counter = emulator().upload(std::vector<int32_t>{41});
  auto kernel = jit<replicated>();
  kernel.launch(emulator(), {1}, {.num_warps = 4}, mem, olds, counter, copies);
  auto got = mem.download(), gold = olds.download();
  for (int i = 0; i < 64; ++i) {
    CHECK(got[size_t(i)] == init[size_t(i)] + i + 1);
    CHECK(gold[size_t(i)] == 2 * init[size_t(i)]);
  }
  CHECK(counter.download()[0] == 42);
  CHECK(copies.download() == std::vector<int32_t>(256, 41));
  CHECK(kernel.runtime()->lastKernel()->ldsBytes > 0);
}

namespace {
// out[idx[b, i, j], i, j] += src[b, i, j]: scatter_add along dim 0 of a
// [16, 32, 32] tensor, one program per b.
template <class T> void scatter_add_dim0(Ptr<T> out, Ptr<int64_t> idx, Ptr<T> src) {
  auto b = program_id(0);
  auto plane = expand_dims(arange(0, 32), 1) * 32 + expand_dims(arange(0, 32), 0);
  auto row = load(idx + b * 1024 + plane);
  scatter_add(out + cast<int32_t>(row) * 1024 + plane, load(src + b * 1024 + plane));
}

template <class T> void checkScatterAdd(const char *arch, bool allToRowZero) {
  CAPTURE(arch);
  CAPTURE(allToRowZero);
  Device dev = Device::emulator(arch);
  const size_t n = 16 * 32 * 32;
  auto hidx = allToRowZero ? std::vector<int64_t>(n, 0) : randomInts<int64_t>(n, 0, 15);
  auto fsrc = randomFloats(n, -1, 1);
  std::vector<T> hsrc(fsrc.begin(), fsrc.end());
  auto out = dev.upload(std::vector<T>(n, T(0.0f)));
  auto idx = dev.upload(hidx);
  auto src = dev.upload(hsrc);
  auto kernel = jit<scatter_add_dim0<T>>();
  kernel.launch(dev, {16}, {.num_warps = 4}, out, idx, src);
  CHECK(kernel.runtime()->lastKernel()->ldsBytes <= 65536);
  std::vector<double> want(n, 0.0);
  std::vector<int> adds(n, 0);
  for (size_t e = 0; e < n; ++e) {
    size_t to = size_t(hidx[e]) * 1024 + e % 1024;
    want[to] += double(float(hsrc[e]));
    ++adds[to];
  }
  // Each add rounds to T once: at most half an ulp of the partial sum (at
  // most the number of adds) per add.
  double ulp = std::is_same_v<T, float> ? 0x1p-23 : std::is_same_v<T, half> ? 0x1p-10 : 0x1p-7;
  auto got = out.download();
  size_t bad = 0;
  for (size_t e = 0; e < n; ++e)
    bad += std::fabs(double(float(got[e])) - want[e]) > adds[e] * (adds[e] + 1) * ulp / 2 + 1e-12;
  CHECK(bad == 0);
}
} // namespace

TEST_CASE("scatter_add into zeros [16, 32, 32] along dim 0: every row to row 0, and random rows (f32, f16, bf16; gfx942, gfx90a, gfx1100)") {
  for (const char *arch : {"gfx942", "gfx90a", "gfx1100"})
    for (bool allToRowZero : {true, false}) {
      checkScatterAdd<float>(arch, allToRowZero);
      checkScatterAdd<half>(arch, allToRowZero);
      checkScatterAdd<bfloat16>(arch, allToRowZero);
    }
}

TEST_CASE("gfx942: scatter_add of f32 is global_atomic_add_f32") {
  auto kernel = jit<scatter_add_dim0<float>>();
  auto out = emulator().alloc<float>(16 * 1024), src = emulator().alloc<float>(16 * 1024);
  auto idx = emulator().alloc<int64_t>(16 * 1024);
  detail::TraceRequest request = kernel.trace(out, idx, src);
  CompiledKernel k = compileTrace(request.trace, request.spec, {"gfx942", 4});
  CHECK(contains(k.assembly(), "global_atomic_add_f32"));
  CHECK(!contains(k.assembly(), "global_atomic_cmpswap"));
}

namespace {
// out[j] += x[i, j] for each row i: contiguous pointers, 4-byte aligned
// pairs (split-K style reduction into one row).
template <class T> void add_rows(Ptr<T> out, Ptr<T> x, i32 cols, Const<int> ROWS, Const<int> COLS) {
  auto j = arange(0, COLS);
  auto inside = j < cols;
  for (int i = 0; i < ROWS; ++i)
    scatter_add(out + j, load(x + i * cols + j, inside, 0.0f), inside);
}

template <class T> void checkAddRows(const char *arch, int cols) {
  CAPTURE(arch);
  CAPTURE(cols);
  Device dev = Device::emulator(arch);
  const int rows = 8;
  auto fx = randomFloats(size_t(rows) * cols, -1, 1);
  std::vector<T> hx(fx.begin(), fx.end());
  auto out = dev.upload(std::vector<T>(size_t(cols), T(0.0f)));
  auto x = dev.upload(hx);
  jit<add_rows<T>>().launch(dev, {1}, {.num_warps = 2}, out, x, cols, rows, 256);
  double ulp = std::is_same_v<T, half> ? 0x1p-10 : 0x1p-7;
  auto got = out.download();
  size_t bad = 0;
  for (int c = 0; c < cols; ++c) {
    double want = 0;
    for (int r = 0; r < rows; ++r)
      want += double(float(hx[size_t(r) * cols + c]));
    bad += std::fabs(double(float(got[size_t(c)])) - want) > rows * (rows + 1) * ulp / 2;
  }
  CHECK(bad == 0);
}
} // namespace

TEST_CASE("16-bit float adds through contiguous pointers go in packed pairs (gfx942: global_atomic_pk_add_bf16/f16)") {
  for (const char *arch : {"gfx942", "gfx90a", "gfx1100"})
    for (int cols : {256, 255, 130}) { // odd: the last pair half masked off
      checkAddRows<half>(arch, cols);
      checkAddRows<bfloat16>(arch, cols);
    }
  auto out = emulator().alloc<bfloat16>(256), x = emulator().alloc<bfloat16>(8 * 256);
  auto kernel = jit<add_rows<bfloat16>>();
  detail::TraceRequest request = kernel.trace(out, x, 256, 8, 256);
  CompiledKernel k = compileTrace(request.trace, request.spec, {"gfx942", 2});
  CHECK(contains(k.tileIR, "vec = 2"));
  CHECK(contains(k.assembly(), "global_atomic_pk_add_bf16"));
  auto outH = emulator().alloc<half>(256), xH = emulator().alloc<half>(8 * 256);
  detail::TraceRequest requestH = jit<add_rows<half>>().trace(outH, xH, 256, 8, 256);
  CompiledKernel kh = compileTrace(requestH.trace, requestH.spec, {"gfx942", 2});
  CHECK(contains(kh.assembly(), "global_atomic_pk_add_f16"));
}

namespace {
// 64 values over 4 waves (each held by 4 threads) into 16 bins: each value
// counted once; every thread reads the counts it holds.
void small_histogram(Ptr<int32_t> x, Ptr<int32_t> out) {
  auto counts = histogram(load(x + arange(0, 64)), 16);
  store(out + arange(0, 16), counts);
}
} // namespace

TEST_CASE("histogram of a replicated tile counts each value once") {
  auto hx = randomInts<int32_t>(64, -3, 18);
  auto out = poisoned<int32_t>(16);
  jit<small_histogram>().launch(emulator(), {1}, {.num_warps = 4}, emulator().upload(hx), out);
  std::vector<int32_t> want(16, 0);
  for (int32_t v : hx)
    if (v >= 0 && v < 16)
      ++want[size_t(v)];
  CHECK(out.download() == want);
}
