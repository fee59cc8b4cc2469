// sort, argsort and topk on the emulator against std::stable_sort.
#include "e2e_common.hpp"

#include "../../../bench/sort_kernel.hpp" // sort_keys, which bench-compile-scaling times
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/target.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace tessel;
using namespace e2e;

namespace {

using bench::sort_keys; // bench/sort_kernel.hpp

// The reference: a stable sort of the positions by key, NaN above every
// number (torch.sort).
std::vector<int32_t> stableOrder(const std::vector<float> &x, bool descending) {
  std::vector<int32_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  auto less = [](float a, float b) { return (!std::isnan(a) && std::isnan(b)) || a < b; };
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return descending ? less(x[size_t(b)], x[size_t(a)]) : less(x[size_t(a)], x[size_t(b)]);
  });
  return order;
}

bool sameKey(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void checkSort(Device &dev, int n, int block, unsigned warps, bool descending, bool stable, bool nans) {
  CAPTURE(n);
  CAPTURE(warps);
  CAPTURE(descending);
  CAPTURE(stable);
  // Few distinct values: many ties.
  auto hx = randomInts<int32_t>(size_t(n), -20, 20);
  std::vector<float> x(hx.begin(), hx.end());
  if (nans)
    for (size_t i = 0; i < x.size(); i += 7)
      x[i] = std::nanf("");
  auto dx = dev.upload(x);
  auto keys = dev.upload(std::vector<float>(size_t(n), -12345.f));
  auto pos = dev.upload(std::vector<int32_t>(size_t(n), -1));
  jit<sort_keys>().launch(dev, {1}, {.num_warps = warps}, dx, keys, pos, n, block, descending, stable);
  auto gk = keys.download();
  auto gp = pos.download();
  auto want = stableOrder(x, descending);
  size_t badKeys = 0, badPos = 0;
  std::vector<int> seen(size_t(n), 0);
  for (size_t i = 0; i < size_t(n); ++i) {
    badKeys += !sameKey(gk[i], x[size_t(want[i])]);
    if (gp[i] >= 0 && gp[i] < n) {
      ++seen[size_t(gp[i])];
      badPos += !sameKey(x[size_t(gp[i])], gk[i]); // the payload moved with its key
    } else {
      ++badPos;
    }
  }
  CHECK(badKeys == 0);
  CHECK(badPos == 0);
  CHECK(std::count(seen.begin(), seen.end(), 1) == n); // a permutation
  if (stable)
    CHECK(gp == want);
}

} // namespace

TEST_CASE("sort of lengths 6 and 10 matches std::stable_sort (keys, payloads; stable on request)") {
  for (auto [n, block] : {std::pair{10, 16}, {6, 8}})
    for (unsigned warps : {1u, 4u})
      for (bool descending : {false, true})
        for (bool stable : {false, true})
          checkSort(emulator(), n, block, warps, descending, stable, false);
}

TEST_CASE("sort of lengths 1000 and 4096 matches std::stable_sort, with NaNs (last ascending, first descending)") {
  checkSort(emulator(), 1000, 1024, 4, false, true, true);
  checkSort(emulator(), 1000, 1024, 4, true, true, true);
  checkSort(emulator(), 4096, 4096, 4, true, false, false);
}

TEST_CASE("sort on wave32 (gfx1100) and across 8 waves") {
  Device dev = Device::emulator("gfx1100");
  checkSort(dev, 1000, 1024, 4, false, true, true);
  checkSort(dev, 4096, 4096, 8, true, true, false);
}

namespace {
// sort_keys with its payload loaded (the ids are the positions, but the
// compiler cannot know): a stable sort then carries the positions too.
void sort_loaded_payload(Ptr<f32> x, Ptr<int32_t> ids, Ptr<f32> keys, Ptr<int32_t> pos, i32 n, Const<int> BLOCK) {
  auto offs = arange(0, BLOCK);
  auto inside = offs < n;
  auto v = load(x + offs, inside, std::numeric_limits<float>::quiet_NaN());
  auto [k, p] = sort(v, load(ids + offs, inside, int32_t(0)), {.stable = true});
  store(keys + offs, k, inside);
  store(pos + offs, p, inside);
}
} // namespace

// A stable argsort (payload arange(0, n)) breaks ties by its payload, which
// is each element's position: no hidden copy of the positions beside it
// (markSortPositions). 4096 keys over 4 waves of 64: 16 a lane fewer to
// carry, and their partners; gfx1100 at 4 waves had spilled 69 VGPRs.
TEST_CASE("a stable argsort ties by its position payload: fewer registers than a payload the compiler cannot read") {
  Device dev = Device::emulator("gfx942");
  auto x = dev.alloc<float>(4096), keys = dev.alloc<float>(4096);
  auto ids = dev.alloc<int32_t>(4096), pos = dev.alloc<int32_t>(4096);
  auto argsortKernel = jit<sort_keys>();
  auto loadedKernel = jit<sort_loaded_payload>();
  const CompiledKernel &argsort = argsortKernel.warmup(dev, {.num_warps = 4}, x, keys, pos, 4096, 4096, false, true);
  const CompiledKernel &loaded = loadedKernel.warmup(dev, {.num_warps = 4}, x, ids, keys, pos, 4096, 4096);
  const KernelResources a = kernelResources(argsort.hsaco, argsort.name), l = kernelResources(loaded.hsaco, loaded.name);
  CAPTURE(a.vgprs);
  CAPTURE(l.vgprs);
  CHECK(a.vgprSpills + l.vgprSpills == 0);
  CHECK(a.vgprs + 16 <= l.vgprs);
}

namespace {
// One row of 10 scores (a 16-wide tile), sorted descending and stably with
// an int64 payload.
void sort_row(Ptr<f32> x, Ptr<int64_t> ids, Ptr<f32> keys, Ptr<int64_t> out) {
  auto offs = arange(0, 16);
  auto inside = offs < 10;
  auto v = load(x + offs, inside, -std::numeric_limits<float>::infinity());
  auto id = load(ids + offs, inside, int64_t(-1));
  auto [k, p] = sort(v, id, {.descending = true, .stable = true});
  store(keys + offs, k, inside);
  store(out + offs, p, inside);
}
} // namespace

TEST_CASE("a 1 x 10 f32 descending sort with an int64 payload keeps equal keys in order (stable)") {
  std::vector<float> x{3, 1, 3, 2, 3, 1, 0, 2, 3, 1};
  std::vector<int64_t> ids{100, 101, 102, 103, 104, 105, 106, 107, 108, 109};
  auto keys = poisoned<float>(10);
  auto out = poisoned<int64_t>(10);
  jit<sort_row>().launch(emulator(), {1}, {.num_warps = 1}, emulator().upload(x), emulator().upload(ids), keys, out);
  CHECK(keys.download() == std::vector<float>{3, 3, 3, 3, 2, 2, 1, 1, 1, 0});
  CHECK(out.download() == std::vector<int64_t>{100, 102, 104, 108, 103, 107, 101, 105, 109, 106});
}

namespace {
// topk k = 2 along the last axis of a [B, 2, 2] tensor whose B is known only
// at launch ([?, 2, 2]): one program holds up to 8 rows, masked; values and
// int64 indices; USE_INDICES = false leaves the indices unread.
void topk_b22(Ptr<f32> x, Ptr<f32> vals, Ptr<int64_t> idx, i32 B, Const<bool> USE_INDICES) {
  auto b = expand_dims(expand_dims(arange(0, 8), 1), 2);
  auto i = expand_dims(expand_dims(arange(0, 2), 0), 2);
  auto j = expand_dims(expand_dims(arange(0, 2), 0), 1);
  auto offs = b * 4 + i * 2 + j;
  auto inside = b < B;
  auto [v, k] = topk<int64_t>(load(x + offs, inside, 0.0f), 2);
  store(vals + offs, v, inside);
  if (USE_INDICES)
    store(idx + offs, k, inside);
}
} // namespace

TEST_CASE("topk k = 2 along the last axis of [B, 2, 2] f32 (B = 1, 3, 7 at launch) with int64 indices; indices unused") {
  for (int b : {1, 3, 7}) {
    CAPTURE(b);
    auto hx = randomFloats(size_t(b) * 4, -5, 5);
    auto x = emulator().upload(hx);
    for (bool useIndices : {true, false}) {
      CAPTURE(useIndices);
      auto vals = poisoned<float>(size_t(b) * 4);
      auto idx = emulator().upload(std::vector<int64_t>(size_t(b) * 4, -7));
      auto kernel = jit<topk_b22>();
      kernel.launch(emulator(), {1}, {.num_warps = 1}, x, vals, idx, b, useIndices);
      auto gv = vals.download();
      auto gi = idx.download();
      for (int r = 0; r < b * 2; ++r) {
        float a = hx[size_t(r) * 2], c = hx[size_t(r) * 2 + 1];
        bool firstBigger = a >= c;
        CHECK(gv[size_t(r) * 2] == std::max(a, c));
        CHECK(gv[size_t(r) * 2 + 1] == std::min(a, c));
        if (useIndices) {
          CHECK(gi[size_t(r) * 2] == (firstBigger ? 0 : 1));
          CHECK(gi[size_t(r) * 2 + 1] == (firstBigger ? 1 : 0));
        } else {
          CHECK(gi[size_t(r) * 2] == -7);
        }
      }
      const CompiledKernel &k = *kernel.runtime()->lastKernel();
      CHECK(k.ldsBytes <= 65536);
      // Unread, the positions stop moving with the keys: the sort has one
      // operand (the key) left.
      size_t at = k.tileIR.find("tessel.sort");
      REQUIRE(at != std::string::npos);
      std::string line = k.tileIR.substr(at, k.tileIR.find('\n', at) - at);
      CAPTURE(line);
      CHECK(contains(line, ", %") == useIndices);
    }
  }
}

namespace {
// topk of 5 along each of 4 rows of 64: the first 8 (bit_ceil(5)) of the
// row sorted descending, and their positions.
void topk_rows(Ptr<f32> x, Ptr<f32> vals, Ptr<int32_t> idx, Const<bool> LARGEST) {
  auto rows = expand_dims(arange(0, 4), 1);
  auto v = load(x + rows * 64 + expand_dims(arange(0, 64), 0));
  auto [t, i] = topk(v, 5, {.largest = bool(LARGEST)});
  auto out = rows * 8 + expand_dims(arange(0, 8), 0);
  store(vals + out, t);
  store(idx + out, i);
}
} // namespace

TEST_CASE("topk of 5 per row of [4, 64] (largest and smallest): the sorted first 8 and their positions") {
  auto hx = randomFloats(4 * 64, -100, 100);
  for (bool largest : {true, false}) {
    CAPTURE(largest);
    auto vals = poisoned<float>(32);
    auto idx = emulator().upload(std::vector<int32_t>(32, -1));
    jit<topk_rows>().launch(emulator(), {1}, {.num_warps = 4}, emulator().upload(hx), vals, idx, largest);
    auto gv = vals.download();
    auto gi = idx.download();
    for (int r = 0; r < 4; ++r) {
      std::vector<float> row(hx.begin() + r * 64, hx.begin() + r * 64 + 64);
      auto order = stableOrder(row, largest);
      for (int c = 0; c < 8; ++c) {
        CHECK(gv[size_t(r * 8 + c)] == row[size_t(order[size_t(c)])]);
        CHECK(gi[size_t(r * 8 + c)] == order[size_t(c)]);
      }
    }
  }
}

namespace {
// n valid keys in a tile of BLOCK whose padding is junk (loaded as 0, which
// sorts among the real keys): valid = offs < n sorts it last, internally.
void sort_valid(Ptr<f32> x, Ptr<f32> keys, Ptr<int32_t> pos, i32 n, Const<int> BLOCK, Const<bool> DESC) {
  auto offs = arange(0, BLOCK);
  auto inside = offs < n;
  auto v = load(x + offs, inside, 0.0f);
  auto [k, p] = sort(v, offs, {.descending = bool(DESC), .stable = true, .valid = inside});
  store(keys + offs, k, inside);
  store(pos + offs, p, inside);
}
} // namespace

TEST_CASE("sort with valid = offs < n pads internally: lengths 6, 10, 1000 with NaNs, whatever the padding holds") {
  for (auto [n, block, warps] : {std::tuple{6, 8, 1u}, {10, 16, 1u}, {1000, 1024, 4u}})
    for (bool descending : {false, true}) {
      CAPTURE(n);
      CAPTURE(descending);
      auto hx = randomInts<int32_t>(size_t(n), -20, 20);
      std::vector<float> x(hx.begin(), hx.end());
      for (size_t i = 0; i < x.size(); i += 5)
        x[i] = std::nanf("");
      auto keys = poisoned<float>(size_t(n));
      auto pos = emulator().upload(std::vector<int32_t>(size_t(n), -1));
      jit<sort_valid>().launch(emulator(), {1}, {.num_warps = warps}, emulator().upload(x), keys, pos, n, block,
                               descending);
      auto want = stableOrder(x, descending);
      CHECK(pos.download() == want);
      auto gk = keys.download();
      size_t bad = 0;
      for (size_t i = 0; i < size_t(n); ++i)
        bad += !sameKey(gk[i], x[size_t(want[i])]);
      CHECK(bad == 0);
    }
}

namespace {
// A stable argsort of each of R rows of n keys in a [ROWS, BLOCK] tile: its
// payload is arange(0, BLOCK) broadcast down the rows, each element's
// position along the sorted axis in every row (markSortPositions). Padding
// NaN sorts after every key.
void argsort_rows(Ptr<f32> x, Ptr<int32_t> pos, i32 R, i32 n, Const<int> ROWS, Const<int> BLOCK) {
  auto rows = arange(0, ROWS), cols = arange(0, BLOCK);
  auto at = expand_dims(rows, 1) * n + expand_dims(cols, 0);
  auto inside = expand_dims(rows < R, 1) & expand_dims(cols < n, 0);
  auto v = load(x + at, inside, std::numeric_limits<float>::quiet_NaN());
  store(pos + at, argsort(v, {.stable = true}), inside);
}
// The same sort with the positions loaded (the compiler cannot know them).
void sort_rows_loaded_payload(Ptr<f32> x, Ptr<int32_t> ids, Ptr<int32_t> pos, i32 R, i32 n, Const<int> ROWS,
                              Const<int> BLOCK) {
  auto rows = arange(0, ROWS), cols = arange(0, BLOCK);
  auto at = expand_dims(rows, 1) * n + expand_dims(cols, 0);
  auto inside = expand_dims(rows < R, 1) & expand_dims(cols < n, 0);
  auto v = load(x + at, inside, std::numeric_limits<float>::quiet_NaN());
  auto [k, p] = sort(v, load(ids + at, inside, int32_t(0)), {.stable = true});
  store(pos + at, p, inside);
}
// The 5 largest of each row with int64 indices (topk sorts with the same
// broadcast positions, then casts what it keeps): the first 8 per row.
void topk64_rows(Ptr<f32> x, Ptr<f32> vals, Ptr<int64_t> idx, i32 R, i32 n, Const<int> ROWS, Const<int> BLOCK) {
  auto rows = arange(0, ROWS), cols = arange(0, BLOCK);
  auto at = expand_dims(rows, 1) * n + expand_dims(cols, 0);
  auto inside = expand_dims(rows < R, 1) & expand_dims(cols < n, 0);
  auto v = load(x + at, inside, -std::numeric_limits<float>::infinity());
  auto [t, i] = topk<int64_t>(v, 5);
  auto out = expand_dims(rows, 1) * 8 + expand_dims(arange(0, 8), 0);
  auto kept = expand_dims(rows < R, 1) & expand_dims(arange(0, 8) < n, 0);
  store(vals + out, t, kept);
  store(idx + out, i, kept);
}

constexpr int kRows = 8, kBlock = 512, kR = 7, kN = 501;

// kR rows of kN keys with many ties, and each row's stable ascending order.
struct Rows {
  std::vector<float> x;
  std::vector<std::vector<int32_t>> order;
};
Rows rowsOfTies(bool descending) {
  Rows r;
  auto hx = randomInts<int32_t>(size_t(kR) * kN, -20, 20);
  r.x.assign(hx.begin(), hx.end());
  for (int row = 0; row < kR; ++row)
    r.order.push_back(stableOrder(std::vector<float>(r.x.begin() + row * kN, r.x.begin() + (row + 1) * kN),
                                  descending));
  return r;
}
} // namespace

// The 1-D argsort's saving along the last axis of a 2-D tile: 8 rows of 512
// over 4 waves of 64, 16 keys a lane; the loaded payload carries 16 hidden
// positions a lane (and their partners) beside it.
TEST_CASE("a stable 2-D argsort along its last axis ties by its broadcast positions: fewer registers, same order") {
  Rows r = rowsOfTies(false);
  auto x = emulator().upload(r.x);
  std::vector<int32_t> ids(size_t(kR) * kN);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = int32_t(i % kN);
  auto dids = emulator().upload(ids);
  auto argsortKernel = jit<argsort_rows>();
  auto loadedKernel = jit<sort_rows_loaded_payload>();
  auto got = poisoned<int32_t>(size_t(kR) * kN), gotLoaded = poisoned<int32_t>(size_t(kR) * kN);
  const CompiledKernel &argsort = argsortKernel.warmup(emulator(), {.num_warps = 4}, x, got, kR, kN, kRows, kBlock);
  const CompiledKernel &loaded =
      loadedKernel.warmup(emulator(), {.num_warps = 4}, x, dids, gotLoaded, kR, kN, kRows, kBlock);
  argsortKernel.launch(emulator(), {1}, {.num_warps = 4}, x, got, kR, kN, kRows, kBlock);
  loadedKernel.launch(emulator(), {1}, {.num_warps = 4}, x, dids, gotLoaded, kR, kN, kRows, kBlock);
  std::vector<int32_t> want;
  for (auto &o : r.order)
    want.insert(want.end(), o.begin(), o.end());
  CHECK(got.download() == want);
  CHECK(gotLoaded.download() == want);
  const KernelResources a = kernelResources(argsort.hsaco, argsort.name), l = kernelResources(loaded.hsaco, loaded.name);
  CAPTURE(a.vgprs);
  CAPTURE(l.vgprs);
  CHECK(a.vgprSpills + l.vgprSpills == 0);
  CHECK(a.vgprs + 16 <= l.vgprs);
}

// topk<int64_t> goes the same way: it sorts by the i32 positions (the
// broadcast ones on a 2-D tile) and casts the kept indices to int64 after.
TEST_CASE("topk<int64_t> of 5 per row of a 2-D tile (7 rows of 501): no hidden positions, the stable first 8") {
  Rows r = rowsOfTies(true);
  auto vals = poisoned<float>(size_t(kR) * 8);
  auto idx = poisoned<int64_t>(size_t(kR) * 8);
  auto kernel = jit<topk64_rows>();
  auto x = emulator().upload(r.x);
  const CompiledKernel &t = kernel.warmup(emulator(), {.num_warps = 4}, x, vals, idx, kR, kN, kRows, kBlock);
  kernel.launch(emulator(), {1}, {.num_warps = 4}, x, vals, idx, kR, kN, kRows, kBlock);
  auto gv = vals.download();
  auto gi = idx.download();
  for (int row = 0; row < kR; ++row)
    for (int c = 0; c < 8; ++c) {
      CAPTURE(row);
      CAPTURE(c);
      const int32_t want = r.order[size_t(row)][size_t(c)];
      CHECK(gi[size_t(row * 8 + c)] == want);
      CHECK(gv[size_t(row * 8 + c)] == r.x[size_t(row * kN + want)]);
    }
  // No hidden positions: fewer registers than the loaded payload's sort,
  // though topk keeps its first 8 after the sort (a reduce).
  auto loadedKernel = jit<sort_rows_loaded_payload>();
  auto ids = emulator().alloc<int32_t>(size_t(kR) * kN), pos = emulator().alloc<int32_t>(size_t(kR) * kN);
  const CompiledKernel &loaded = loadedKernel.warmup(emulator(), {.num_warps = 4}, x, ids, pos, kR, kN, kRows, kBlock);
  const KernelResources a = kernelResources(t.hsaco, t.name), l = kernelResources(loaded.hsaco, loaded.name);
  CAPTURE(a.vgprs);
  CAPTURE(l.vgprs);
  CHECK(a.vgprSpills + l.vgprSpills == 0);
  CHECK(a.vgprs + 16 <= l.vgprs);
}
