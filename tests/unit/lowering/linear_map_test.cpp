// The layout algebra (LinearMap: compose, right inverse, restriction,
// kernel; a layout's map; an LDS swizzle's map) and the in-wave shuffle
// plans built on it, each against brute-force enumeration.
#include "tessel/Dialect/Tessel/IR/LayoutConversion.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"

#include <doctest/doctest.h>

#include <map>
#include <random>

using namespace mlir;
using namespace mlir::tessel;

namespace {

using Dims = llvm::SmallVector<LinearMap::Dim>;

LinearMap randomMap(std::mt19937 &rng, Dims ins, Dims outs) {
  unsigned inBits = 0, outBits = 0;
  for (auto &d : ins)
    inBits += d.bits;
  for (auto &d : outs)
    outBits += d.bits;
  llvm::SmallVector<uint64_t> cols;
  for (unsigned i = 0; i < inBits; ++i)
    cols.push_back(rng() & ((uint64_t(1) << outBits) - 1));
  return LinearMap(ins, outs, cols);
}

// The image of every input, enumerated.
std::vector<uint64_t> table(const LinearMap &f) {
  std::vector<uint64_t> out;
  for (uint64_t x = 0; x < (uint64_t(1) << f.inBits()); ++x)
    out.push_back(f.applyPacked(x));
  return out;
}

struct Context {
  MLIRContext ctx;
  Context() { ctx.loadDialect<TesselDialect>(); }
};

const Dims kLayoutIns = {{"register", 3}, {"lane", 5}, {"wave", 2}};

} // namespace

TEST_CASE("LinearMap: compose applies the inner map, then the outer") {
  std::mt19937 rng(7);
  Dims a = {{"x", 3}, {"y", 2}}, b = {{"u", 4}}, c = {{"p", 2}, {"q", 3}};
  for (int trial = 0; trial < 20; ++trial) {
    LinearMap f = randomMap(rng, a, b), g = randomMap(rng, b, c);
    LinearMap gf = g.compose(f);
    for (uint64_t x = 0; x < 32; ++x)
      CHECK(gf.applyPacked(x) == g.applyPacked(f.applyPacked(x)));
  }
  // Per-dimension values go in and come out as the packing says.
  LinearMap id = LinearMap::identity(a);
  CHECK(id.apply({5, 2}) == llvm::SmallVector<int64_t>{5, 2});
}

TEST_CASE("LinearMap: a right inverse reaches every output, from the earliest inputs") {
  std::mt19937 rng(11);
  Dims outs = {{"dim0", 3}, {"dim1", 2}};
  int surjective = 0;
  for (int trial = 0; trial < 50; ++trial) {
    LinearMap f = randomMap(rng, kLayoutIns, outs);
    std::vector<uint64_t> t = table(f);
    std::vector<bool> reached(32);
    for (uint64_t y : t)
      reached[y] = true;
    bool onto = std::all_of(reached.begin(), reached.end(), [](bool r) { return r; });
    std::optional<LinearMap> g = f.rightInverse();
    REQUIRE(g.has_value() == onto);
    CHECK(f.isSurjective() == onto);
    if (!onto)
      continue;
    ++surjective;
    for (uint64_t y = 0; y < 32; ++y)
      CHECK(f.applyPacked(g->applyPacked(y)) == y);
  }
  CHECK(surjective > 10);
  // Replicas: register bit 0 and lane bit 0 both move dim0 by 1; the inverse
  // takes the register (earlier), and never the zero lane bit.
  LinearMap f(kLayoutIns, {{"dim0", 1}}, {1, 0, 0, /*lanes*/ 1, 0, 0, 0, 0, /*waves*/ 0, 0});
  std::optional<LinearMap> g = f.rightInverse();
  REQUIRE(g);
  CHECK(g->applyPacked(1) == 1);
}

TEST_CASE("LinearMap: the kernel is every input that maps to zero") {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 30; ++trial) {
    LinearMap f = randomMap(rng, kLayoutIns, {{"dim0", 2}, {"dim1", 2}});
    llvm::SmallVector<uint64_t> k = f.kernel();
    for (uint64_t v : k)
      CHECK(f.applyPacked(v) == 0);
    std::vector<uint64_t> t = table(f);
    int64_t zeros = std::count(t.begin(), t.end(), 0u);
    CHECK(zeros == int64_t(1) << k.size());
    CHECK(f.rank() == f.inBits() - k.size());
  }
}

TEST_CASE("LinearMap: a restriction is the map with the other inputs at zero") {
  std::mt19937 rng(17);
  LinearMap f = randomMap(rng, kLayoutIns, {{"dim0", 4}, {"dim1", 3}});
  LinearMap lanes = f.restrict({"lane"}), lanesWaves = f.restrict({"lane", "wave"});
  REQUIRE(lanes.inBits() == 5);
  REQUIRE(lanesWaves.inBits() == 7);
  for (int64_t l = 0; l < 32; ++l) {
    CHECK(lanes.apply({l}) == f.apply({0, l, 0}));
    for (int64_t w = 0; w < 4; ++w)
      CHECK(lanesWaves.apply({l, w}) == f.apply({0, l, w}));
  }
}

TEST_CASE("a layout's map gives each register its coordinates, XOR bases too, and comes back") {
  Context c;
  auto wmma = WmmaLayoutAttr::get(&c.ctx, {2, 1}, true);
  LinearLayout layouts[] = {
      wmma.toLinearLayout({64, 32}),
      DotOperandLayoutAttr::get(&c.ctx, 0, wmma, 16).toLinearLayout({64, 32}),
      MfmaLayoutAttr::get(&c.ctx, {32, 32}, {2, 2}, false).toLinearLayout({128, 64}),
      // A swizzled layout: lane 1 moves row 1 and column 1 at once.
      LinearLayout({8, 8}, {{0, 2}, {0, 4}}, {{1, 1}, {2, 0}, {4, 0}, {0, 0}, {0, 0}}, {}),
  };
  for (const LinearLayout &l : layouts) {
    LinearMap m = l.map();
    for (int64_t r = 0; r < l.numRegisters(); ++r)
      for (int64_t lane = 0; lane < (int64_t(1) << l.laneBases().size()); ++lane)
        for (int64_t w = 0; w < (int64_t(1) << l.waveBases().size()); ++w) {
          LinearLayout::Basis want = l.coords(r, lane, w);
          CHECK(m.apply({r, lane, w}) == llvm::SmallVector<int64_t>(want.begin(), want.end()));
        }
    CHECK(LinearLayout::fromMap(l.shape(), m) == l);
  }
  CHECK(layouts[0].isSimple());
  CHECK(!layouts[3].isSimple());
}

TEST_CASE("an LDS swizzle is a linear map: composed with a layout it gives each register's offset") {
  Context c;
  const LdsStaging swizzled{.order = {1, 0}, .pad = 0, .unit = 8, .perPhase = 2, .maxPhase = 8};
  LdsStaging plain = swizzled;
  plain.maxPhase = 1;
  LinearLayout layout = BlockedLayoutAttr::get(&c.ctx, {1, 8}, {8, 4}, {4, 1}, {1, 0}).toLinearLayout({64, 64});
  for (const LdsStaging &plan : {swizzled, plain}) {
    std::optional<LinearMap> offsets = ldsOffsetMap(plan, {64, 64});
    REQUIRE(offsets);
    for (int64_t row = 0; row < 64; ++row)
      for (int64_t col = 0; col < 64; ++col)
        CHECK(offsets->apply({row, col})[0] == plan.offset({row, col}, {64, 64}));
    LinearMap where = offsets->compose(layout.map());
    for (int64_t r = 0; r < layout.numRegisters(); ++r)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t w = 0; w < 4; ++w)
          CHECK(where.apply({r, lane, w})[0] == plan.offset(layout.coords(r, lane, w), {64, 64}));
  }
  LdsStaging padded = plain;
  padded.pad = 4;
  CHECK(!ldsOffsetMap(padded, {64, 64}));
}

namespace {

// Every result register of every lane of every wave reads, by the plan, a
// source register and lane of its own wave that hold its element.
void checkShuffle(const LinearLayout &src, const LinearLayout &dst, const InWaveShuffle &plan) {
  const int64_t lanes = int64_t(1) << dst.laneBases().size(), waves = int64_t(1) << dst.waveBases().size();
  auto xorOf = [](llvm::ArrayRef<int64_t> images, int64_t id) {
    int64_t v = 0;
    for (size_t i = 0; i < images.size(); ++i)
      if (id >> i & 1)
        v ^= images[i];
    return v;
  };
  for (int64_t w = 0; w < waves; ++w)
    for (int64_t l = 0; l < lanes; ++l) {
      int64_t varying = xorOf(plan.laneToReg, l) ^ xorOf(plan.waveToReg, w);
      int64_t lanePart = xorOf(plan.laneToLane, l) ^ xorOf(plan.waveToLane, w);
      for (int64_t r = 0; r < dst.numRegisters(); ++r) {
        // The pick the lowering selects at this lane.
        const InWaveShuffle::Move *move = nullptr;
        for (auto [at, m] : plan.picks[r])
          if (at == varying)
            move = &plan.moves[m];
        REQUIRE(move);
        int64_t srcLane = lanePart ^ move->laneConst;
        CHECK(src.coords(move->srcReg, srcLane, w) == dst.coords(r, l, w));
        if (move->kind == LaneMoveKind::Own)
          CHECK(srcLane == l);
        if (move->kind == LaneMoveKind::SwapRows)
          CHECK(((srcLane ^ l) & ~int64_t(16)) == 0);
      }
    }
}

} // namespace

TEST_CASE("in-wave shuffles: every element from a lane of the thread's own wave") {
  Context c;
  SUBCASE("gfx1100 attention's P: the transposed WMMA result to the next dot's A swaps rows of 16") {
    auto acc = WmmaLayoutAttr::get(&c.ctx, {4, 1}, true);
    auto a = DotOperandLayoutAttr::get(&c.ctx, 0, acc, 16);
    LinearLayout from = acc.toLinearLayout({128, 64}), to = a.toLinearLayout({128, 64});
    std::optional<InWaveShuffle> plan = planInWaveShuffle(from, to, 32, /*swapRows=*/true);
    REQUIRE(plan);
    checkShuffle(from, to, *plan);
    for (const auto &m : plan->moves)
      CHECK(m.kind != LaneMoveKind::Permute);
    // 16-bit values: each of a thread's 64 source registers moves once, two to a word.
    InWaveShuffle::Count n = plan->count(16);
    CHECK(n.permutes == 0);
    CHECK(n.rowSwaps == 32);
    // Without v_permlanex16, ds_bpermute.
    std::optional<InWaveShuffle> bperm = planInWaveShuffle(from, to, 32, /*swapRows=*/false);
    REQUIRE(bperm);
    checkShuffle(from, to, *bperm);
    CHECK(bperm->count(16).permutes > 0);
  }
  SUBCASE("a transpose within each wave (wave64 and wave32, registers chosen per lane)") {
    struct Case {
      unsigned wave;
      BlockedLayoutAttr rows, cols;
      int64_t m, n;
    };
    const Case cases[] = {
        {64, BlockedLayoutAttr::get(&c.ctx, {1, 2}, {16, 4}, {2, 1}, {1, 0}),
         BlockedLayoutAttr::get(&c.ctx, {2, 1}, {8, 8}, {2, 1}, {0, 1}), 32, 16},
        {32, BlockedLayoutAttr::get(&c.ctx, {1, 2}, {8, 4}, {2, 1}, {1, 0}),
         BlockedLayoutAttr::get(&c.ctx, {2, 1}, {4, 8}, {2, 1}, {0, 1}), 16, 16},
    };
    for (const Case &k : cases) {
      LinearLayout from = k.rows.toLinearLayout({k.m, k.n}), to = k.cols.toLinearLayout({k.m, k.n});
      std::optional<InWaveShuffle> plan = planInWaveShuffle(from, to, k.wave, true);
      REQUIRE(plan);
      CHECK(plan->variants().size() > 1); // the source register depends on the lane
      checkShuffle(from, to, *plan);
    }
  }
  SUBCASE("replicated sources are read in the reader's own wave") {
    // Every wave holds the whole row; the result spreads it over 4 waves.
    auto everywhere = BlockedLayoutAttr::get(&c.ctx, {4}, {64}, {1}, {0});
    auto spread = BlockedLayoutAttr::get(&c.ctx, {1}, {64}, {4}, {0});
    LinearLayout from = everywhere.toLinearLayout({256}), to = spread.toLinearLayout({256});
    LinearLayout wide(from.shape(), llvm::SmallVector<LinearLayout::Basis>(from.registerBases()),
                      llvm::SmallVector<LinearLayout::Basis>(from.laneBases()), {{0}, {0}});
    std::optional<InWaveShuffle> plan = planInWaveShuffle(wide, to, 64, false);
    REQUIRE(plan);
    checkShuffle(wide, to, *plan);
  }
  SUBCASE("an element held only by another wave is not in-wave") {
    auto byWave = BlockedLayoutAttr::get(&c.ctx, {1, 1}, {1, 64}, {4, 1}, {1, 0});
    auto otherWave = BlockedLayoutAttr::get(&c.ctx, {1, 1}, {64, 1}, {1, 4}, {0, 1});
    CHECK(!planInWaveShuffle(byWave.toLinearLayout({64, 64}), otherWave.toLinearLayout({64, 64}), 64, true));
  }
}
