// The LDS bank model (ldsAccessCycles) against cases worked by hand from its
// definition: 32 banks of 4 bytes, 128 bytes a cycle in groups of
// consecutive lanes; the padding planLdsStaging picks for the matrix
// operands; and the lanes of a load straight into LDS (planDirectLds).
#include "tessel/Dialect/Tessel/IR/DirectLds.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/IR/LinearLayout.h"

#include <doctest/doctest.h>

#include <set>

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct Context {
  MLIRContext ctx;
  Context() { ctx.loadDialect<TesselDialect>(); }
  RankedTensorType tile(ArrayRef<int64_t> shape, Type elem, Attribute layout) {
    return RankedTensorType::get(shape, elem, layout);
  }
  Attribute blocked(ArrayRef<unsigned> spt, ArrayRef<unsigned> tpw, ArrayRef<unsigned> wpb, ArrayRef<unsigned> order) {
    return BlockedLayoutAttr::get(&ctx, spt, tpw, wpb, order);
  }
};
LdsStaging rowMajor(int64_t pad) {
  LdsStaging plan;
  plan.order = {1, 0};
  plan.pad = pad;
  return plan;
}
} // namespace

TEST_CASE("LDS banks: a column read of a row-major f32 tile is 32-way without a pad, conflict-free with one") {
  Context c;
  // One wave; lane l holds row l % 32 of column l / 32 (+ 2 per register).
  auto type = c.tile({32, 32}, Float32Type::get(&c.ctx), c.blocked({1, 1}, {32, 2}, {1, 1}, {0, 1}));
  // 16 registers, each read by two groups of 32 lanes. Without a pad lanes
  // 0..31 read dwords 32 r + c: all in bank c, 32 different dwords.
  LdsCycles bare = ldsAccessCycles(type, rowMajor(0), 1);
  CHECK(bare.conflictFree == 16 * 2);
  CHECK(bare.cycles == 16 * 2 * 32);
  // With one pad element: dword 33 r + c, bank (r + c) % 32, all different.
  LdsCycles padded = ldsAccessCycles(type, rowMajor(1), 1);
  CHECK(padded.cycles == padded.conflictFree);
  // Reading rows instead (lane l: column l % 32): consecutive dwords.
  auto rows = c.tile({32, 32}, Float32Type::get(&c.ctx), c.blocked({1, 1}, {2, 32}, {1, 1}, {1, 0}));
  LdsCycles along = ldsAccessCycles(rows, rowMajor(0), 1);
  CHECK(along.cycles == along.conflictFree);
}

TEST_CASE("LDS banks: 8- and 16-byte accesses are served 16 and 8 lanes at a time") {
  Context c;
  // Lane l holds 4 f32 of row l (64 rows of 4 + pad): lanes 0..7 of a
  // 16-byte access touch dwords (4 + p) l .. + 3.
  auto type = c.tile({64, 4}, Float32Type::get(&c.ctx), c.blocked({1, 4}, {64, 1}, {1, 1}, {1, 0}));
  // No pad: 8 lanes x 4 dwords = 32 consecutive dwords, one per bank.
  LdsCycles bare = ldsAccessCycles(type, rowMajor(0), 4);
  CHECK(bare.conflictFree == 8);
  CHECK(bare.cycles == 8);
  // Pad 4: row stride 8 dwords, lanes 0..7 touch banks 0-3, 8-11, ..., 56-59
  // mod 32: lanes l and l + 4 share banks, 2-way.
  LdsCycles padded = ldsAccessCycles(type, rowMajor(4), 4);
  CHECK(padded.cycles == 2 * padded.conflictFree);
  // 8-byte accesses (2 f32): 16 lanes a group, 4 groups for each of 2 runs.
  // No pad: lane l's first pair is dwords 4 l, 4 l + 1: banks 4 l mod 32,
  // lanes l and l + 8 collide, 2-way.
  LdsCycles pairs = ldsAccessCycles(type, rowMajor(0), 2);
  CHECK(pairs.conflictFree == 2 * 4);
  CHECK(pairs.cycles == 2 * pairs.conflictFree);
}

TEST_CASE("planLdsStaging pads the A operand's rows so the MFMA reads are conflict-free (gfx942, f16)") {
  Context c;
  Type f16 = Float16Type::get(&c.ctx);
  auto mfma = MfmaLayoutAttr::get(&c.ctx, {32, 32}, {2, 2}, false);
  // A [128, 64] as loaded (rows of 8 halves, 8 x 8 lanes, 4 waves along M)
  // to the 32x32x8 operand (lane l: row l % 32, 4 halves of K at 4 (l / 32)).
  auto loaded = c.tile({128, 64}, f16, c.blocked({1, 8}, {8, 8}, {4, 1}, {1, 0}));
  auto operand = c.tile({128, 64}, f16, DotOperandLayoutAttr::get(&c.ctx, 0, mfma, 4));
  LdsStaging plan = planLdsStaging(loaded, operand);
  CHECK(plan.order == SmallVector<unsigned>{1, 0}); // K fastest
  CHECK(plan.readVec == 4);                         // ds_read_b64
  LdsCycles reads = ldsAccessCycles(operand, plan, plan.readVec);
  LdsCycles writes = ldsAccessCycles(loaded, plan, plan.writeVec);
  CHECK(reads.cycles == reads.conflictFree);
  CHECK(writes.cycles == writes.conflictFree);
  // A pad of the widest access (8 halves, 36 dwords a row) would put rows r
  // and r + 8 of a 16-lane group in one bank: 2-way.
  LdsStaging wide = plan;
  wide.pad = 8;
  LdsCycles wideReads = ldsAccessCycles(operand, wide, 4);
  CHECK(wideReads.cycles == 2 * wideReads.conflictFree);
  MESSAGE("A: pad ", plan.pad, ", write ", plan.writeVec, " x ", writes.cycles, " cycles, read ", plan.readVec, " x ",
          reads.cycles, " cycles");
}
TEST_CASE("planLdsStaging swizzles a transposing f16 conversion: conflict-free both ways, where every pad leaves a side in conflict") {
  Context c;
  Type f16 = Float16Type::get(&c.ctx);
  // Rows of 8 halves per lane to columns of 8: LDS rows run along dim 0
  // (the reads' vectors); the writes are single halves.
  auto src = c.tile({64, 64}, f16, c.blocked({1, 8}, {8, 8}, {4, 1}, {1, 0}));
  auto dst = c.tile({64, 64}, f16, c.blocked({8, 1}, {8, 8}, {1, 4}, {0, 1}));
  LdsStaging plan = planLdsStaging(src, dst);
  REQUIRE(plan.swizzled());
  CHECK(plan.order == SmallVector<unsigned>{0, 1});
  CHECK(plan.pad == 0);
  CHECK(plan.readVec == 8);
  // By hand: phase = (column / 8) % 8 = lane % 8 for a write, so lane l's
  // half of row l / 8 lands in chunk l % 8: dword 256 a + 32 j + 4 a + b / 2
  // (a = l % 8, b = l / 8), banks 4 a + b / 2, pairs of lanes sharing a dword.
  LdsCycles writes = ldsAccessCycles(src, plan, plan.writeVec);
  LdsCycles reads = ldsAccessCycles(dst, plan, plan.readVec);
  CHECK(writes.cycles == writes.conflictFree);
  CHECK(reads.cycles == reads.conflictFree);
  for (int64_t pad = 0; pad <= 16; ++pad) {
    LdsStaging padded = plan;
    padded.maxPhase = 1;
    padded.pad = pad;
    int64_t vec = 8;
    while ((64 + pad) % vec)
      vec /= 2;
    CAPTURE(pad);
    CHECK(ldsAccessCycles(src, padded, 1).cycles + ldsAccessCycles(dst, padded, vec).cycles >
          writes.cycles + reads.cycles);
  }
}

TEST_CASE("LdsStaging::offset: a swizzle permutes chunks within each row, one to one") {
  LdsStaging plan;
  plan.order = {1, 0};
  plan.pad = 0;
  plan.unit = 4;
  plan.perPhase = 2;
  plan.maxPhase = 4;
  std::vector<int> hits(16 * 32, 0);
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t col = 0; col < 32; ++col) {
      int64_t at = plan.offset({r, col}, {16, 32});
      REQUIRE(at / 32 == r);            // stays in its row
      REQUIRE(at % 4 == col % 4);       // and in its place within a chunk
      ++hits[size_t(at)];
    }
  for (int h : hits)
    CHECK(h == 1);
  // Row 5: phase (5 / 2) % 4 = 2, so chunk 1 (columns 4..7) goes to chunk 3.
  CHECK(plan.offset({5, 4}, {16, 32}) == 5 * 32 + 12);
}

TEST_CASE("planDirectLds: gfx950's A operand loads straight into its swizzled slot, the MFMA reads stay conflict-free") {
  Context c;
  Type f16 = Float16Type::get(&c.ctx);
  auto mfma = MfmaLayoutAttr::get(&c.ctx, {32, 32}, {2, 2}, true);
  // A [128, 64] as loaded (8 halves a lane, 8 x 8 lanes, 4 waves along M),
  // read as the 32x32x16 operand (8 halves of K a lane).
  Attribute loadedLayout = c.blocked({1, 8}, {8, 8}, {4, 1}, {1, 0});
  auto loaded = c.tile({128, 64}, f16, loadedLayout);
  auto operand = c.tile({128, 64}, f16, DotOperandLayoutAttr::get(&c.ctx, 0, mfma, 8));
  LdsStaging plan = planLdsStaging(loaded, operand, LdsPriority::Bytes);
  REQUIRE(plan.swizzled());
  CHECK(plan.pad == 0);
  // The bank model: the operand's reads from the slot are conflict-free.
  LdsCycles reads = ldsAccessCycles(operand, plan, plan.readVec);
  CHECK(reads.cycles == reads.conflictFree);

  auto lds = LdsType::get(&c.ctx, {2, 128, 64}, f16, plan.order, plan.pad, swizzleOf(plan));
  auto offsets = c.tile({128, 64}, IntegerType::get(&c.ctx, 32), loadedLayout);
  std::optional<DirectLdsPlan> direct = planDirectLds(offsets, lds, 8);
  REQUIRE(direct);
  CHECK(direct->permutes); // the swizzle moves chunks between the lanes of a row
  // Lane l of wave w writes 8 halves at its wave's start + 8 l; the element
  // it loads (the source lane's register g * 8) must sit there in the
  // slot's swizzled layout (LdsStaging::offset), every chunk once.
  LinearLayout layout = getLinearLayout(offsets);
  std::set<int64_t> written;
  for (int64_t w = 0; w < 4; ++w)
    for (size_t g = 0; g < direct->groupStart.size(); ++g)
      for (int64_t l = 0; l < 64; ++l) {
        int64_t start = direct->groupStart[g], src = direct->groupLane[g];
        for (size_t j = 0; j < direct->waveStep.size(); ++j)
          if (w >> j & 1) {
            start += direct->waveStep[j];
            src ^= direct->waveLaneXor[j];
          }
        for (size_t i = 0; i < direct->laneXor.size(); ++i)
          if (l >> i & 1)
            src ^= direct->laneXor[i];
        CAPTURE(w);
        CAPTURE(g);
        CAPTURE(l);
        CHECK(plan.offset(layout.coords(int64_t(g) * 8, src, w), {128, 64}) == start + 8 * l);
        written.insert(start + 8 * l);
      }
  CHECK(written.size() == 128 * 64 / 8);

  // A padded slot cannot take it: the lanes' chunks are consecutive.
  auto padded = LdsType::get(&c.ctx, {2, 128, 64}, f16, plan.order, 8, {});
  CHECK(!planDirectLds(offsets, padded, 8));
}

TEST_CASE("planLdsStaging keeps 8-bit operand reads as wide as the operand's runs: narrower chunks cost copies and registers") {
  Context c;
  Type fp8 = Float8E4M3FNType::get(&c.ctx);
  auto mfma = MfmaLayoutAttr::get(&c.ctx, {32, 32}, {2, 2}, true);
  // gfx950's fp8 B [64, 128] as tutorial 03 loads it (16 bytes along N, two
  // rows of K a thread), read as the f8f6f4 operand (32 bytes of K a lane in
  // runs of 16). Chunks of 4 bytes avoided the b16 writes' bank conflicts
  // but split each run into 4-byte reads that ds_read2 pairs across tiles:
  // 12 v_mov an iteration and ~8 VGPRs (bench-triton-compare, gfx950 fp8 w4:
  // 353.9 -> 338.9 llvm-mca cycles with 8-byte reads); 8-byte chunks still
  // pair, and at 8 waves cost two waves (88 against 78 VGPRs with 16).
  auto loaded = c.tile({64, 128}, fp8, c.blocked({2, 16}, {8, 8}, {4, 1}, {1, 0}));
  auto operand = c.tile({64, 128}, fp8, DotOperandLayoutAttr::get(&c.ctx, 1, mfma, 32, 16));
  LdsStaging plan = planLdsStaging(loaded, operand, LdsPriority::Bytes);
  CHECK(plan.order.front() == 0); // K fastest: the reads' runs
  CHECK(plan.readVec == 16);
  CHECK(plan.writeVec == 1); // two rows of K a thread: bytes (ldsVectorElems)
  // gfx942's 8-byte operand reads (32x32x16) may still take narrower chunks.
  auto narrow = c.tile({64, 128}, fp8, DotOperandLayoutAttr::get(&c.ctx, 1, mfma, 8));
  CHECK(planLdsStaging(loaded, narrow, LdsPriority::Bytes).readVec == 8);
}

TEST_CASE("planLdsStaging keeps a WMMA operand's reads 16 bytes wide: narrower chunks cost reads, copies and registers") {
  Context c;
  Type f16 = Float16Type::get(&c.ctx);
  // gfx1100's B [64, 128] as tutorial 03 loads it over 8 waves of 32 (4 rows
  // of K by 8 halves of N a thread), read as the 16x16x16 WMMA operand (16
  // halves of K a lane: two 16-byte runs). The bank model alone prefers
  // 4-byte chunks, whose swizzle spares the 8-byte writes (rows 8 apart) a
  // conflict; they took 64 ds_load_2addr_b32 and 199 VGPRs (6 waves) where
  // 16-byte chunks take 32 ds_load_b128 and 187 VGPRs (8 waves).
  auto wmma = WmmaLayoutAttr::get(&c.ctx, {4, 2}, true);
  auto loaded = c.tile({64, 128}, f16, c.blocked({4, 8}, {2, 16}, {8, 1}, {1, 0}));
  auto operand = c.tile({64, 128}, f16, DotOperandLayoutAttr::get(&c.ctx, 1, wmma, 16));
  LdsStaging plan = planLdsStaging(loaded, operand, LdsPriority::Bytes);
  CHECK(plan.order.front() == 0); // K fastest: the reads' runs
  CHECK(plan.readVec == 8);
  CHECK(plan.writeVec == 4);
  CHECK((!plan.swizzled() || plan.unit >= 8));
  // An MFMA operand of the same 16-byte runs (gfx950's 32x32x16) may still
  // take narrower chunks where they spare bank conflicts.
  auto mfma = MfmaLayoutAttr::get(&c.ctx, {32, 32}, {2, 2}, true);
  auto loaded64 = c.tile({64, 128}, f16, c.blocked({4, 8}, {4, 16}, {4, 1}, {1, 0}));
  auto mfmaOperand = c.tile({64, 128}, f16, DotOperandLayoutAttr::get(&c.ctx, 1, mfma, 8));
  CHECK(planLdsStaging(loaded64, mfmaOperand, LdsPriority::Bytes).readVec < 8);
}

TEST_CASE("ldsVectorElems: two 8-bit elements go a byte at a time (a 2-byte access packs two registers with VALU)") {
  Context c;
  Type fp8 = Float8E4M3FNType::get(&c.ctx), f16 = Float16Type::get(&c.ctx);
  // Two rows of K a thread (dim 0), 16 along N.
  Attribute layout = c.blocked({2, 16}, {8, 8}, {4, 1}, {1, 0});
  CHECK(ldsVectorElems(c.tile({64, 128}, fp8, layout), 0) == 1);
  CHECK(ldsVectorElems(c.tile({64, 128}, fp8, layout), 1) == 16);
  CHECK(ldsVectorElems(c.tile({64, 128}, f16, layout), 0) == 2); // one register of two halves
  // Four bytes stay one 4-byte access.
  CHECK(ldsVectorElems(c.tile({128, 128}, fp8, c.blocked({4, 16}, {8, 8}, {4, 1}, {1, 0})), 0) == 4);
}

// gfx950's LDS transpose reads (ds_read_b64_tr_b16: 4 halves a lane; in each
// group of 16 lanes, element e of lane s's read lands in lane 4 (s % 4) + e,
// element s / 4). A row-major f16 B [64, 128] as loaded (N fastest, 16 bytes
// a lane) for the 32x32x16 operand (lane l: column l % 32, 8 halves of K).
TEST_CASE("ldsTransposedRead: a B kept along N is read transposed, its reading layout the exchange's inverse") {
  Context c;
  Type f16 = Float16Type::get(&c.ctx);
  auto mfma = MfmaLayoutAttr::get(&c.ctx, {32, 32}, {2, 2}, false);
  auto loaded = c.tile({64, 128}, f16, c.blocked({1, 8}, {4, 16}, {4, 1}, {1, 0}));
  auto operand = c.tile({64, 128}, f16, DotOperandLayoutAttr::get(&c.ctx, 1, mfma, 8));
  // Without the reads the buffer runs along K; with them it stays along N.
  LdsStaging usual = planLdsStaging(loaded, operand, LdsPriority::Bytes, false);
  CHECK(usual.order == SmallVector<unsigned>{0, 1});
  CHECK(!usual.transposedRead);
  LdsStaging plan = planLdsStaging(loaded, operand, LdsPriority::Bytes, true);
  CHECK(plan.order == SmallVector<unsigned>{1, 0});
  CHECK(plan.transposedRead);
  CHECK(plan.readVec == 4);
  CHECK(plan.writeVec == 8);
  std::optional<LdsTransposedRead> read = ldsTransposedRead(operand, plan);
  REQUIRE(read.has_value());
  CHECK(read->elems == 4);
  // Every element the reading layout has lane s read, as element e, is the
  // one the exchange delivers to lane 4 (s % 4) + e of its group, as the
  // receiver's element s / 4 of the same run (the moved register bits).
  LinearLayout receiver = getLinearLayout(operand);
  auto withMoved = [&](int64_t reg, int64_t value) {
    for (size_t i = 0; i < read->moved.size(); ++i)
      reg = (reg & ~(int64_t(1) << read->moved[i])) | (((value >> i) & 1) << read->moved[i]);
    return reg;
  };
  for (int64_t reg = 0; reg < receiver.numRegisters(); ++reg)
    for (int64_t lane = 0; lane < 64; ++lane)
      for (int64_t e = 0; e < 4; ++e) {
        const int64_t s = lane % 16, to = lane - s + 4 * (s % 4) + e;
        CHECK(read->loading.coords(withMoved(reg, e), lane, 0) == receiver.coords(withMoved(reg, s / 4), to, 0));
      }
  // Not when the reads would not be 8 aligned bytes along the buffer's order,
  // nor along K (the receiver's lanes run along N), nor for bools.
  LdsStaging padded = plan;
  padded.unit = padded.perPhase = padded.maxPhase = 1;
  padded.pad = 2;
  CHECK(!ldsTransposedRead(operand, padded));
  CHECK(ldsTransposedRead(operand, rowMajor(4)).has_value());
  LdsStaging alongK = rowMajor(0);
  alongK.order = {0, 1};
  CHECK(!ldsTransposedRead(operand, alongK));
  auto bools = c.tile({64, 128}, IntegerType::get(&c.ctx, 1), DotOperandLayoutAttr::get(&c.ctx, 1, mfma, 8));
  CHECK(!ldsTransposedRead(bools, rowMajor(0)));
}

// gfx942's fp8 B [64, 128] over 8 waves as tutorial 03 loads it (16 bytes
// along N a thread, one row of K), kept along K for the 32x32x16 operand
// (8 bytes of K a lane): each thread writes its 16 bytes to 16 rows (N) a
// byte at a time. Swizzles whose phase changes every 4 or every 8 rows cost
// the same bank cycles (the writes' conflicts move to the reads), but a
// thread's 16 rows span 4 phases under the first, each write XOR its own
// address register kept across the loop, and 2 under the second: the
// 8-wave matmul's 2 registers between 66 and 64 live (8 waves a SIMD).
TEST_CASE("planLdsStaging: at equal bank cycles a kept tile takes the swizzle whose accesses need fewer address registers") {
  Context c;
  Type fp8 = Float8E4M3FNUZType::get(&c.ctx);
  auto mfma = MfmaLayoutAttr::get(&c.ctx, {32, 32}, {4, 2}, true);
  auto loaded = c.tile({64, 128}, fp8, c.blocked({1, 16}, {8, 8}, {8, 1}, {1, 0}));
  auto operand = c.tile({64, 128}, fp8, DotOperandLayoutAttr::get(&c.ctx, 1, mfma, 8));
  LdsStaging plan = planLdsStaging(loaded, operand, LdsPriority::Bytes);
  REQUIRE(plan.order.front() == 0);
  REQUIRE(plan.swizzled());
  CHECK(plan.unit == 8);
  CHECK(plan.maxPhase == 8);
  CHECK(plan.perPhase == 8);
  CHECK(plan.writeVec == 1);
  CHECK(plan.readVec == 8);
  LdsStaging every4 = plan;
  every4.perPhase = 4;
  auto cycles = [&](const LdsStaging &p) {
    return ldsAccessCycles(loaded, p, p.writeVec).cycles + ldsAccessCycles(operand, p, p.readVec).cycles;
  };
  CHECK(cycles(every4) == cycles(plan));
}
