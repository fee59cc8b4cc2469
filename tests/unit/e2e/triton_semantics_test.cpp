// Cases of Triton's language tests (test_core.py) that tessel once got
// wrong or refused: a lock built from atomics, where() on pointers, loops
// with int64 bounds and with negative or run-time steps. Each runs on the
// emulator for gfx942, gfx950 and gfx1100 against the same program in C++.
#include "e2e_common.hpp"

#include <cinttypes>

using namespace tessel;
using namespace e2e;

namespace {

constexpr const char *kArchs[] = {"gfx942", "gfx950", "gfx1100"};

// test_atomic_cas's serialized add: one program at a time holds the lock,
// reads the data, adds one and writes it back, then releases the lock. With
// BARRIER = false the release order alone must keep the program's stores
// before the lock's release (tessel's promise; Triton's test adds
// tl.debug_barrier()).
void serialized_add(Ptr<float> data, Ptr<int32_t> lock, Const<int> SEM, Const<bool> BARRIER) {
  const AtomicOrder order{MemSem(int(SEM)), MemScope::agent};
  const AtomicOrder release{bool(BARRIER) ? MemSem(int(SEM)) : MemSem::release, MemScope::agent};
  auto ptrs = data + arange(0, 128);
  while_([&] { return atomic_cas(lock, 0, 1, true, order) == 1; }, [] {});
  store(ptrs, load(ptrs) + 1.0f);
  if (BARRIER) debug_barrier();
  (void)atomic_xchg(lock, 0, true, release);
}

} // namespace

TEST_CASE("a spin lock from atomic_cas and atomic_xchg serializes 2000 programs (test_atomic_cas)") {
  const int programs = 2000;
  for (const char *arch : kArchs)
    for (MemSem sem : {MemSem::acquire, MemSem::release, MemSem::acq_rel})
      for (bool barrier : {true, false}) {
        CAPTURE(arch);
        CAPTURE(int(sem));
        CAPTURE(barrier);
        Device dev = Device::emulator(arch);
        auto kernel = jit<serialized_add>();
        for (int run = 0; run < 3; ++run) {
          auto data = dev.upload(std::vector<float>(128, 0.0f));
          auto lock = dev.upload(std::vector<int32_t>{0});
          kernel.launch(dev, {programs}, {.num_warps = 4}, data, lock, int(sem), barrier);
          std::vector<float> got = data.download();
          size_t wrong = 0;
          for (float v : got) wrong += v != float(programs);
          CAPTURE(got[0]);
          REQUIRE(wrong == 0);
          CHECK(lock.download()[0] == 0);
        }
      }
}

namespace {

// where() choosing between pointers: tiles of pointers, and scalars.
void where_pointers(Ptr<float> a, Ptr<float> b, Ptr<float> out, i32 n) {
  auto offs = arange(0, 64);
  auto inside = offs < n;
  auto p = where(offs % 3 == 0, a + offs, b + offs);
  store(out + offs, load(p, inside, -1.0f), inside);
  auto q = where(n > 40, a, b); // pointer scalars
  store(out + 64 + offs, load(q + offs, inside, -1.0f), inside);
  auto r = where(offs < 7, a + offs, b + 2); // a tile and a broadcast scalar
  store(out + 128 + offs, load(r, inside, -1.0f), inside);
}

} // namespace

TEST_CASE("where() on pointer tiles and pointer scalars (tl.where(c, p, q))") {
  auto ha = randomFloats(64), hb = randomFloats(64);
  for (const char *arch : kArchs)
    for (int n : {64, 45, 13}) {
      CAPTURE(arch);
      CAPTURE(n);
      Device dev = Device::emulator(arch);
      auto a = dev.upload(ha), b = dev.upload(hb);
      auto out = dev.upload(std::vector<float>(192, 12345.0f));
      jit<where_pointers>().launch(dev, {1}, {.num_warps = 1}, a, b, out, n);
      std::vector<float> got = out.download();
      for (int i = 0; i < 64; ++i) {
        CAPTURE(i);
        float unset = 12345.0f;
        CHECK(got[size_t(i)] == (i < n ? (i % 3 == 0 ? ha : hb)[size_t(i)] : unset));
        CHECK(got[size_t(64 + i)] == (i < n ? (n > 40 ? ha : hb)[size_t(i)] : unset));
        CHECK(got[size_t(128 + i)] == (i < n ? (i < 7 ? ha[size_t(i)] : hb[2]) : unset));
      }
    }
}

namespace {

// for_range(lo, hi, step) in the forms Python's range takes: a negative
// constant step, a step known only at run time (either sign, or zero), and
// int64 bounds beyond int32. out[0] = iterations, out[1] = sum of k,
// out[2] = the last k (or -7 when none ran); sums in i64.
void loop_forms(Ptr<int64_t> out, i32 lo, i32 hi, i32 step, i64 base, i64 big) {
  auto count = full({}, int64_t(0)), total = full({}, int64_t(0)), last = full({}, int64_t(-7));
  auto record = [&](auto k) {
    count = count + 1;
    total = total + cast<int64_t>(k);
    last = cast<int64_t>(k);
  };
  auto flush = [&](int slot) {
    store(out + 3 * slot, count);
    store(out + 3 * slot + 1, total);
    store(out + 3 * slot + 2, last);
    count = full({}, int64_t(0));
    total = full({}, int64_t(0));
    last = full({}, int64_t(-7));
  };
  for_range(15, -16, -1, [&](i32 k) { record(k); }); // range(15, -16, -1)
  flush(0);
  for_range(lo, hi, step, [&](i32 k) { record(k); }); // a run-time step
  flush(1);
  for_range(int64_t(1) << 35, (int64_t(1) << 35) + 20, [&](i64 k) { record(k); }); // range(2**35, 2**35 + 20)
  flush(2);
  for_range(base + 3, base - 10, -3, [&](i64 k) { record(k); }); // i64 tiles, negative step
  flush(3);
  for_range(hi, lo, -2, [&](i32 k) { record(k); });
  flush(4);
  // a trip count near INT64_MAX / step: (span + step - 1) would overflow
  for_range(int64_t(0), INT64_MAX - 5, big, [&](i64 k) { record(k); });
  flush(5);
}

struct LoopSums {
  int64_t count = 0, total = 0, last = -7;
};

LoopSums pythonRange(int64_t lo, int64_t hi, int64_t step) {
  LoopSums s;
  if (step == 0) return s;
  for (int64_t k = lo; step > 0 ? k < hi : k > hi;) {
    ++s.count;
    s.total = int64_t(uint64_t(s.total) + uint64_t(k)); // wraps as the GPU's i64 does
    s.last = k;
    if (__builtin_add_overflow(k, step, &k)) break; // past the int64 range: past hi
  }
  return s;
}

} // namespace

TEST_CASE("for_range with negative, run-time and int64 bounds and steps (Python's range)") {
  const int64_t base = (int64_t(1) << 40) + 5;
  struct Case {
    int lo, hi, step;
  };
  for (const char *arch : kArchs)
    for (Case c : {Case{0, 10, 3}, Case{10, 0, -3}, Case{10, -5, -1}, Case{-5, 10, -1}, Case{3, 9, 0},
                   Case{7, 7, 2}, Case{-2000000000, 2000000000, 1000000007},
                   Case{2147483647, -2147483647 - 1, -2147483647}}) {
      // A span beyond int32 makes the loop with the constant step -2 run 2 * 10^9
      // iterations in every lane: 12 s on the emulator for a wave of 64, 6 s for 32.
      // The loops' trip counts are target-independent IR, so wave32 alone runs it.
      if (c.lo == -2000000000 && std::string(arch) != "gfx1100")
        continue;
      CAPTURE(arch);
      INFO("lo = " << c.lo << ", hi = " << c.hi << ", step = " << c.step);
      Device dev = Device::emulator(arch);
      const int64_t big = int64_t(1) << 61;
      auto out = dev.upload(std::vector<int64_t>(18, 0x5A5A5A5A));
      jit<loop_forms>().launch(dev, {1}, {.num_warps = 1}, out, c.lo, c.hi, c.step, base, big);
      std::vector<int64_t> got = out.download();
      const LoopSums want[6] = {pythonRange(15, -16, -1), pythonRange(c.lo, c.hi, c.step),
                                pythonRange(int64_t(1) << 35, (int64_t(1) << 35) + 20, 1),
                                pythonRange(base + 3, base - 10, -3), pythonRange(c.hi, c.lo, -2),
                                pythonRange(0, INT64_MAX - 5, big)};
      for (int slot = 0; slot < 6; ++slot) {
        CAPTURE(slot);
        CHECK(got[size_t(3 * slot)] == want[slot].count);
        CHECK(got[size_t(3 * slot + 1)] == want[slot].total);
        CHECK(got[size_t(3 * slot + 2)] == want[slot].last);
      }
    }
}

namespace {
constexpr int kWideLoopLine = __LINE__ + 4;
constexpr int kZeroStepLine = __LINE__ + 7;
void wide_loop_narrow_body(Ptr<int32_t> out) {
  auto acc = full({}, 0);
  for_range(0, int64_t(1) << 33, int64_t(1) << 32, [&](i32 k) { acc = acc + k; });
  store(out, acc);
}
void zero_step(Ptr<int32_t> out) {
  for_range(0, 10, 0, [&](i32 k) { store(out, k); });
}
std::string at(int line) { return "triton_semantics_test.cpp:" + std::to_string(line) + ": "; }
} // namespace

TEST_CASE("for_range: a 64-bit bound with an i32 body, and a zero constant step, are errors with the line") {
  auto out = emulator().alloc<int32_t>(1);
  const std::string wide = at(kWideLoopLine) +
                           "for_range: a bound needs 64 bits (an int64 tile, or a literal outside int32), so the "
                           "induction variable is an i64: write the body as [&](i64 k) { ... }";
  const std::string zero =
      at(kZeroStepLine) + "for_range: the step must not be 0 (the loop counts from lo towards hi, hi excluded)";
  CHECK_THROWS_WITH(jit<wide_loop_narrow_body>().launch(emulator(), {1}, {.num_warps = 1}, out),
                    doctest::Contains(wide.c_str()));
  CHECK_THROWS_WITH(jit<zero_step>().launch(emulator(), {1}, {.num_warps = 1}, out), doctest::Contains(zero.c_str()));
}

namespace {

// Issue 35's example: every lane reads the first element of its group of 8,
// then every lane stores. On the GPU the wave's loads all happen before any
// of its stores, so x[4] is 100 + the old x[0], not 200 + it.
void first_of_eight(Ptr<float> x) {
  auto i = arange(0, 64);
  auto first = load(x + (i / 8) * 8);
  store(x + i, first + 100.0f);
}

// The epilogue shape of test_dot's "add-rows" cases: z += z[m, 0] in place,
// an 8 x 8 tile in one wave (row m's first column is read by every lane of
// the row before any lane stores).
void add_first_column(Ptr<float> z) {
  auto m = arange(0, 8), n = arange(0, 8);
  auto ptrs = z + expand_dims(m, 1) * 8 + expand_dims(n, 0);
  auto col0 = load(z + expand_dims(m, 1) * 8);
  store(ptrs, load(ptrs) + col0);
}

} // namespace

TEST_CASE("a wave's lanes load before any of them stores (lockstep, issue 35)") {
  auto hx = randomFloats(64);
  for (const char *arch : kArchs) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    // One warp: one wave (64 lanes, or 32 lanes with 2 elements each on gfx1100).
    auto x = dev.upload(hx);
    jit<first_of_eight>().launch(dev, {1}, {.num_warps = 1}, x);
    std::vector<float> got = x.download();
    for (int i = 0; i < 64; ++i)
      REQUIRE(got[i] == hx[i / 8 * 8] + 100.0f);
    auto z = dev.upload(hx);
    jit<add_first_column>().launch(dev, {1}, {.num_warps = 1}, z);
    std::vector<float> gz = z.download();
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c)
        REQUIRE(gz[r * 8 + c] == hx[r * 8 + c] + hx[r * 8]);
  }
}
