// Layouts' linear forms against the definitions they encode: a blocked
// layout's elements per thread, computed here straight from its parameters,
// must be exactly the elements its LinearLayout gives each thread.
#include "tessel/Dialect/Tessel/IR/Layouts.h"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <vector>

using namespace mlir;
using namespace mlir::tessel;

namespace {

using Coord = std::vector<int64_t>;

struct Blocked {
  std::vector<unsigned> spt, tpw, wpb, order;
};

// The blocked layout's definition: along each dim, thread (lane l, wave w)
// holds elements rep * perBlock + w_d * spt * tpw + l_d * spt + e (mod shape),
// with l_d, w_d its lane and wave coordinates (ids split along `order`).
std::set<Coord> blockedElements(const Blocked &b, const std::vector<int64_t> &shape, int64_t lane,
                                int64_t wave) {
  size_t rank = shape.size();
  auto split = [&](int64_t id, const std::vector<unsigned> &counts) {
    std::vector<int64_t> c(rank);
    for (unsigned d : b.order) {
      c[d] = id % counts[d];
      id /= counts[d];
    }
    return c;
  };
  std::vector<int64_t> l = split(lane, b.tpw), w = split(wave, b.wpb);
  std::vector<std::vector<int64_t>> perDim(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t perBlock = int64_t(b.spt[d]) * b.tpw[d] * b.wpb[d];
    int64_t reps = std::max<int64_t>(1, shape[d] / perBlock);
    int64_t perThread = std::min<int64_t>(b.spt[d], shape[d]);
    for (int64_t r = 0; r < reps; ++r)
      for (int64_t e = 0; e < perThread; ++e)
        perDim[d].push_back((r * perBlock + w[d] * b.spt[d] * b.tpw[d] + l[d] * b.spt[d] + e) %
                            shape[d]);
  }
  std::set<Coord> out = {Coord()};
  for (size_t d = 0; d < rank; ++d) {
    std::set<Coord> next;
    for (const Coord &c : out)
      for (int64_t v : perDim[d]) {
        Coord n = c;
        n.push_back(v);
        next.insert(n);
      }
    out = next;
  }
  return out;
}

std::set<Coord> linearElements(const LinearLayout &layout, int64_t lane, int64_t wave) {
  std::set<Coord> out;
  for (int64_t r = 0; r < layout.numRegisters(); ++r) {
    LinearLayout::Basis c = layout.registerCoords(r);
    for (size_t i = 0; i < layout.laneBases().size(); ++i)
      if (lane >> i & 1)
        for (unsigned d = 0; d < c.size(); ++d)
          c[d] ^= layout.laneBases()[i][d];
    for (size_t i = 0; i < layout.waveBases().size(); ++i)
      if (wave >> i & 1)
        for (unsigned d = 0; d < c.size(); ++d)
          c[d] ^= layout.waveBases()[i][d];
    out.insert(Coord(c.begin(), c.end()));
  }
  return out;
}

struct Context {
  MLIRContext ctx;
  Context() { ctx.loadDialect<TesselDialect>(); }
  BlockedLayoutAttr blocked(const Blocked &b) {
    return BlockedLayoutAttr::get(&ctx, b.spt, b.tpw, b.wpb, b.order);
  }
};

} // namespace

TEST_CASE("a blocked layout's linear form gives each thread the elements the definition does") {
  Context c;
  struct Case {
    Blocked layout;
    std::vector<int64_t> shape;
  };
  const Case cases[] = {
      {{{4}, {64}, {4}, {0}}, {1024}},            // vectors of 4, 4 waves
      {{{4}, {64}, {4}, {0}}, {4096}},            // repeated over the tile
      {{{1}, {64}, {4}, {0}}, {64}},              // smaller than the threads: replicas
      {{{1, 4}, {8, 8}, {2, 2}, {1, 0}}, {32, 64}},
      {{{1, 1}, {64, 1}, {1, 4}, {0, 1}}, {16, 8}}, // columns first, wrapping rows
      {{{2, 2}, {4, 8}, {1, 2}, {1, 0}}, {2, 128}},
      {{{1, 1, 4}, {2, 2, 8}, {1, 2, 1}, {2, 1, 0}}, {4, 2, 64}}, // rank 3
      {{{1}, {32}, {8}, {0}}, {512}},             // wave32, 8 waves
  };
  for (const Case &k : cases) {
    LinearLayout linear = c.blocked(k.layout).toLinearLayout(k.shape);
    int64_t lanes = 1, waves = 1;
    for (unsigned t : k.layout.tpw)
      lanes *= t;
    for (unsigned w : k.layout.wpb)
      waves *= w;
    REQUIRE((int64_t(1) << linear.laneBases().size()) == lanes);
    REQUIRE((int64_t(1) << linear.waveBases().size()) == waves);
    std::map<Coord, int> holders;
    for (int64_t w = 0; w < waves; ++w)
      for (int64_t l = 0; l < lanes; ++l) {
        std::set<Coord> expected = blockedElements(k.layout, k.shape, l, w);
        CHECK(linearElements(linear, l, w) == expected);
        // Owners: a thread with no replica bit set; each element has exactly one.
        if ((uint64_t(l) & linear.laneReplicaMask()) == 0 && (uint64_t(w) & linear.waveReplicaMask()) == 0)
          for (const Coord &e : expected)
            ++holders[e];
      }
    int64_t elements = 1;
    for (int64_t d : k.shape)
      elements *= d;
    CHECK(int64_t(holders.size()) == elements);
    for (auto &[e, n] : holders)
      CHECK(n == 1);
  }
}

TEST_CASE("a slice's linear form is its parent's without the sliced dim") {
  Context c;
  Blocked parent{{1, 4}, {8, 8}, {2, 2}, {1, 0}};
  auto slice = SliceLayoutAttr::get(&c.ctx, 1, c.blocked(parent));
  LinearLayout s = slice.toLinearLayout({32});
  // Lanes and waves along the dropped dim hold the same rows: replicas.
  std::set<Coord> rows;
  for (int64_t w = 0; w < 4; ++w)
    for (int64_t l = 0; l < 64; ++l) {
      std::set<Coord> held = linearElements(s, l, w);
      std::set<Coord> fromParent;
      for (const Coord &e : blockedElements(parent, {32, 1}, l, w))
        fromParent.insert(Coord{e[0]});
      CHECK(held == fromParent);
      rows.insert(held.begin(), held.end());
    }
  CHECK(rows.size() == 32);
  // Order [1, 0]: lane bits 0-2 run along the dropped dim (replicas), 3-5 along the rows.
  CHECK(s.laneBitsAlong(0) == llvm::SmallVector<unsigned>{3, 4, 5});
  CHECK(s.laneReplicaMask() == 0b000111);
}

TEST_CASE("registers: lookup by coordinates, lines along an axis, contiguous runs") {
  Context c;
  LinearLayout l = c.blocked({{2, 4}, {8, 8}, {1, 1}, {1, 0}}).toLinearLayout({32, 64});
  for (int64_t r = 0; r < l.numRegisters(); ++r)
    CHECK(l.registerAt(l.registerCoords(r)) == r);
  CHECK(l.contiguousRegisters(1) == 4);
  CHECK(l.contiguousRegisters(0) == 1);
  // Along dim 1: register bits 0 and 1 step by 1 and 2; bit 2 is the next
  // 32-column repetition, not part of the run. Along dim 0: the pair of rows
  // a thread holds sits 8 registers apart (bit 3), not from register 0.
  CHECK(l.registerRunBits(1) == llvm::SmallVector<unsigned>{0, 1});
  CHECK(l.registerRunBits(0) == llvm::SmallVector<unsigned>{3});
  // 4 lines along dim 1 (2 rows per rep x 2 reps of 16 rows), 8 registers each by column.
  auto lines = l.linesAlong(1);
  REQUIRE(lines.size() == 4);
  for (auto &line : lines) {
    REQUIRE(line.size() == 8);
    for (size_t j = 1; j < line.size(); ++j) {
      CHECK(l.registerCoords(line[j])[1] > l.registerCoords(line[j - 1])[1]);
      CHECK(l.registerCoords(line[j])[0] == l.registerCoords(line[0])[0]);
    }
  }
}

namespace {

// The element register r of lane l of wave w holds.
Coord elementAt(const LinearLayout &layout, int64_t r, int64_t lane, int64_t wave) {
  LinearLayout::Basis c = layout.registerCoords(r);
  for (size_t i = 0; i < layout.laneBases().size(); ++i)
    if (lane >> i & 1)
      for (unsigned d = 0; d < c.size(); ++d) c[d] ^= layout.laneBases()[i][d];
  for (size_t i = 0; i < layout.waveBases().size(); ++i)
    if (wave >> i & 1)
      for (unsigned d = 0; d < c.size(); ++d) c[d] ^= layout.waveBases()[i][d];
  return Coord(c.begin(), c.end());
}

} // namespace

// The CDNA3 ISA guide's tables for one instruction, wave64 (written here from
// the guide, not from the layout code): D of v_mfma_*_32x32x*: lane l,
// register r -> row 8 * (r / 4) + 4 * (l / 32) + r % 4, column l % 32; of
// v_mfma_*_16x16x*: row 4 * (l / 16) + r, column l % 16. A of 32x32x8f16: lane
// l, register r (of 4 halves) -> row l % 32, k 4 * (l / 32) + r; of
// 16x16x16f16: row l % 16, k 4 * (l / 16) + r. B: the same with the column.
TEST_CASE("MFMA accumulator and operand layouts match the ISA guide's lane tables") {
  Context c;
  for (unsigned m : {32u, 16u}) {
    CAPTURE(m);
    auto mfma = MfmaLayoutAttr::get(&c.ctx, {m, m}, {1, 1}, false);
    LinearLayout d = mfma.toLinearLayout({m, m});
    const int64_t regs = m * m / 64;
    REQUIRE(d.numRegisters() == regs);
    for (int64_t l = 0; l < 64; ++l)
      for (int64_t r = 0; r < regs; ++r) {
        Coord want = m == 32 ? Coord{8 * (r / 4) + 4 * (l / 32) + r % 4, l % 32} : Coord{4 * (l / 16) + r, l % 16};
        REQUIRE(elementAt(d, r, l, 0) == want);
      }
    const int64_t k = m == 32 ? 8 : 16;
    LinearLayout a = DotOperandLayoutAttr::get(&c.ctx, 0, mfma, 4).toLinearLayout({m, k});
    LinearLayout b = DotOperandLayoutAttr::get(&c.ctx, 1, mfma, 4).toLinearLayout({k, m});
    REQUIRE(a.numRegisters() == 4);
    REQUIRE(b.numRegisters() == 4);
    for (int64_t l = 0; l < 64; ++l)
      for (int64_t r = 0; r < 4; ++r) {
        REQUIRE(elementAt(a, r, l, 0) == Coord{l % m, 4 * (l / m) + r});
        REQUIRE(elementAt(b, r, l, 0) == Coord{4 * (l / m) + r, l % m});
      }
  }
}

// Transposed, the instruction runs with A and B swapped and computes D^T:
// the guide's row of D is the tile's column and its column the tile's row.
TEST_CASE("a transposed MFMA accumulator holds D^T of the ISA guide's table") {
  Context c;
  for (unsigned m : {32u, 16u}) {
    CAPTURE(m);
    LinearLayout d = MfmaLayoutAttr::get(&c.ctx, {m, m}, {1, 1}, true).toLinearLayout({m, m});
    const int64_t regs = m * m / 64;
    REQUIRE(d.numRegisters() == regs);
    for (int64_t l = 0; l < 64; ++l)
      for (int64_t r = 0; r < regs; ++r) {
        Coord want = m == 32 ? Coord{l % 32, 8 * (r / 4) + 4 * (l / 32) + r % 4} : Coord{l % 16, 4 * (l / 16) + r};
        REQUIRE(elementAt(d, r, l, 0) == want);
      }
  }
}

// Attention's P: the transposed 32x32 accumulator of [128, 64] over 4 waves
// along M is, register for register, the A operand (kWidth 4) of a dot
// whose K is those 64 columns: the conversion between them renames
// registers. Not so for the untransposed accumulator, nor for kWidth 8.
TEST_CASE("a transposed MFMA accumulator is the next dot's A operand with kWidth 4") {
  Context c;
  auto head = MfmaLayoutAttr::get(&c.ctx, {32, 32}, {4, 1}, true);
  auto tail = MfmaLayoutAttr::get(&c.ctx, {32, 32}, {4, 1}, true);
  for (int64_t n : {64, 32}) {
    CAPTURE(n);
    LinearLayout p = head.toLinearLayout({128, n});
    CHECK(p == DotOperandLayoutAttr::get(&c.ctx, 0, tail, 4).toLinearLayout({128, n}));
    CHECK_FALSE(p == DotOperandLayoutAttr::get(&c.ctx, 0, tail, 8).toLinearLayout({128, n}));
    CHECK_FALSE(MfmaLayoutAttr::get(&c.ctx, {32, 32}, {4, 1}, false).toLinearLayout({128, n}) ==
                DotOperandLayoutAttr::get(&c.ctx, 0, tail, 4).toLinearLayout({128, n}));
    // gfx950's 32x32x16 takes 8 K a lane: with the lane groups interleaved
    // at 4 (kGroup), the same accumulator is its A operand too.
    CHECK(p == DotOperandLayoutAttr::get(&c.ctx, 0, tail, 8, 4).toLinearLayout({128, n}));
  }
}

// RDNA3's D of v_wmma_*_16x16x16 (lane l, register r: row 2r + l / 16,
// column l % 16), transposed: the tile's row is the guide's column.
TEST_CASE("a transposed WMMA accumulator holds D^T of the ISA guide's table") {
  Context c;
  LinearLayout d = WmmaLayoutAttr::get(&c.ctx, {1, 1}, true).toLinearLayout({16, 16});
  REQUIRE(d.numRegisters() == 8);
  for (int64_t l = 0; l < 32; ++l)
    for (int64_t r = 0; r < 8; ++r)
      REQUIRE(elementAt(d, r, l, 0) == Coord{l % 16, 2 * r + l / 16});
}

// kGroup, written from its definition: lane group g = l / m holds K
// g * kGroup + j * kGroup * (64 / m) + i in register i + kGroup * j of each
// instruction's kWidth.
TEST_CASE("dot operands with interleaved K runs (kGroup) hold what their definition says") {
  Context c;
  for (unsigned m : {32u, 16u}) {
    CAPTURE(m);
    auto mfma = MfmaLayoutAttr::get(&c.ctx, {m, m}, {1, 1}, true);
    const int64_t groups = 64 / m, k = 8 * groups;
    LinearLayout a = DotOperandLayoutAttr::get(&c.ctx, 0, mfma, 8, 4).toLinearLayout({m, k});
    LinearLayout b = DotOperandLayoutAttr::get(&c.ctx, 1, mfma, 8, 4).toLinearLayout({k, m});
    REQUIRE(a.numRegisters() == 8);
    for (int64_t l = 0; l < 64; ++l)
      for (int64_t r = 0; r < 8; ++r) {
        const int64_t g = l / m, kk = g * 4 + (r / 4) * 4 * groups + r % 4;
        REQUIRE(elementAt(a, r, l, 0) == Coord{l % m, kk});
        REQUIRE(elementAt(b, r, l, 0) == Coord{kk, l % m});
      }
  }
}

TEST_CASE("MFMA layouts over a block: waves tile M then N, repetitions fill the rest") {
  Context c;
  // [128, 128] over 2 x 2 waves of 32x32 instructions: each wave 2 x 2 instruction tiles.
  auto mfma = MfmaLayoutAttr::get(&c.ctx, {32, 32}, {2, 2}, false);
  LinearLayout d = mfma.toLinearLayout({128, 128});
  CHECK(d.numRegisters() == 16 * 4);
  std::set<Coord> all;
  for (int64_t w = 0; w < 4; ++w)
    for (int64_t l = 0; l < 64; ++l)
      for (int64_t r = 0; r < d.numRegisters(); ++r) all.insert(elementAt(d, r, l, w));
  CHECK(all.size() == 128 * 128); // every element once
  // Wave 1 is the next 32 rows, wave 2 the next 32 columns; register 16 the
  // next instruction tile along M (64 rows on), register 32 along N.
  CHECK(elementAt(d, 0, 0, 1) == Coord{32, 0});
  CHECK(elementAt(d, 0, 0, 2) == Coord{0, 32});
  CHECK(elementAt(d, 16, 0, 0) == Coord{64, 0});
  CHECK(elementAt(d, 32, 0, 0) == Coord{0, 64});
  // A [128, 64] operand with kWidth 4: 8 registers of K per instruction row
  // group... and waves along N hold copies of waves along M's rows.
  LinearLayout a = DotOperandLayoutAttr::get(&c.ctx, 0, mfma, 4).toLinearLayout({128, 64});
  CHECK(a.numRegisters() == 4 * (64 / 8) * 2); // kWidth, K repetitions, M repetitions
  for (int64_t l = 0; l < 64; ++l)
    for (int64_t r = 0; r < a.numRegisters(); ++r) {
      CHECK(elementAt(a, r, l, 2) == elementAt(a, r, l, 0)); // wave 2 is wave 0's N neighbour
      CHECK(elementAt(a, r, l, 1)[0] == elementAt(a, r, l, 0)[0] + 32);
    }
  CHECK(a.waveReplicaMask() == 2);
  LinearLayout b = DotOperandLayoutAttr::get(&c.ctx, 1, mfma, 4).toLinearLayout({64, 128});
  CHECK(b.waveReplicaMask() == 1);
  CHECK(elementAt(b, 0, 0, 2) == Coord{0, 32});
}

// The RDNA3 ISA guide's WMMA tables (wave32), written from the guide: the
// 32-bit D of v_wmma_*_16x16x16_*: lane l, register r -> row 2 * r + l / 16,
// column l % 16; A: lane l, element e -> row l % 16, k e (lanes 16..31 the
// same as lanes 0..15); B: column l % 16, k e.
TEST_CASE("WMMA accumulator and operand layouts match the RDNA3 ISA guide's tables") {
  Context c;
  auto wmma = WmmaLayoutAttr::get(&c.ctx, {1, 1});
  LinearLayout d = wmma.toLinearLayout({16, 16});
  REQUIRE(d.numRegisters() == 8);
  for (int64_t l = 0; l < 32; ++l)
    for (int64_t r = 0; r < 8; ++r) REQUIRE(elementAt(d, r, l, 0) == Coord{2 * r + l / 16, l % 16});
  LinearLayout a = DotOperandLayoutAttr::get(&c.ctx, 0, wmma, 16).toLinearLayout({16, 16});
  LinearLayout b = DotOperandLayoutAttr::get(&c.ctx, 1, wmma, 16).toLinearLayout({16, 16});
  REQUIRE(a.numRegisters() == 16);
  for (int64_t l = 0; l < 32; ++l)
    for (int64_t e = 0; e < 16; ++e) {
      REQUIRE(elementAt(a, e, l, 0) == Coord{l % 16, e});
      REQUIRE(elementAt(b, e, l, 0) == Coord{e, l % 16});
    }
  CHECK(a.laneReplicaMask() == 16);
}

// A block smaller than the instruction: the ISA tables with rows and columns
// taken modulo the block (the padding rows and lanes hold copies), except
// that the accumulator keeps only the registers of rows below M, so no two
// of a thread's registers hold one element; D register r of the instruction
// is tile register r mod the kept count.
TEST_CASE("MFMA and WMMA layouts of blocks below the instruction's tile wrap rows and columns and keep distinct registers") {
  Context c;
  for (int64_t M : {1, 2, 4, 8, 16}) {
    CAPTURE(M);
    const int64_t N = 2;
    auto mfma = MfmaLayoutAttr::get(&c.ctx, {16, 16}, {1, 1}, false);
    LinearLayout d = mfma.toLinearLayout({M, N});
    const int64_t kept = std::min<int64_t>(M, 4);
    REQUIRE(d.numRegisters() == kept);
    for (int64_t l = 0; l < 64; ++l)
      for (int64_t r = 0; r < 4; ++r)
        REQUIRE(elementAt(d, r % kept, l, 0) == Coord{(4 * (l / 16) + r) % M, (l % 16) % N});
    LinearLayout a = DotOperandLayoutAttr::get(&c.ctx, 0, mfma, 4).toLinearLayout({M, 16});
    REQUIRE(a.numRegisters() == 4);
    for (int64_t l = 0; l < 64; ++l)
      for (int64_t r = 0; r < 4; ++r) REQUIRE(elementAt(a, r, l, 0) == Coord{(l % 16) % M, 4 * (l / 16) + r});

    auto wide = MfmaLayoutAttr::get(&c.ctx, {32, 32}, {1, 1}, false);
    LinearLayout d32 = wide.toLinearLayout({M, N});
    const int64_t kept32 = M >= 16 ? 8 : std::min<int64_t>(M, 4);
    REQUIRE(d32.numRegisters() == kept32);
    for (int64_t l = 0; l < 64; ++l)
      for (int64_t r = 0; r < 16; ++r)
        REQUIRE(elementAt(d32, r % kept32, l, 0) == Coord{(8 * (r / 4) + 4 * (l / 32) + r % 4) % M, (l % 32) % N});

    auto wmma = WmmaLayoutAttr::get(&c.ctx, {1, 1});
    LinearLayout w = wmma.toLinearLayout({M, N});
    const int64_t keptW = std::max<int64_t>(1, std::min<int64_t>(M / 2, 8));
    REQUIRE(w.numRegisters() == keptW);
    for (int64_t l = 0; l < 32; ++l)
      for (int64_t r = 0; r < 8; ++r)
        REQUIRE(elementAt(w, r % keptW, l, 0) == Coord{(2 * r + l / 16) % M, (l % 16) % N});
  }
}
