// The layouts of a tessel.dot (see DotLayouts.h).
#include "DotLayouts.h"

#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

using namespace mlir;
using namespace mlir::tessel;
using ::tessel::DType;
using ::tessel::lookupTarget;
using ::tessel::MatrixCore;
using ::tessel::MatrixInstr;
using ::tessel::TargetFacts;

// No matrix instruction takes the dot: multiply-adds on a blocked
// accumulator, each thread holding whole K rows of A and columns of B for
// its own rows and columns of the result. Threads are split over the batch
// (waves only), M and N so that those operand registers, batches * (rows +
// columns) * K, are fewest; threads past an extent would hold copies, which
// count as the elements they repeat. Ties give a thread more columns
// (contiguous: vectors along N).
static BlockedLayoutAttr fmaAccumulatorLayout(MLIRContext *ctx, ArrayRef<int64_t> shape, int64_t K,
                                              unsigned numWarps, unsigned waveSize) {
  const unsigned rank = shape.size();
  const int64_t B = rank == 3 ? shape[0] : 1, M = shape[rank - 2], N = shape[rank - 1];
  auto share = [](int64_t extent, int64_t threads) { return std::max<int64_t>(1, extent / threads); };
  auto copies = [](int64_t extent, int64_t threads) { return std::max<int64_t>(1, threads / extent); };
  struct Split {
    unsigned wavesB, lanesM, wavesM;
    int64_t cost;
  };
  std::optional<Split> best;
  for (unsigned wavesB = 1; wavesB <= (rank == 3 ? numWarps : 1u); wavesB *= 2)
    for (unsigned lanesM = 1; lanesM <= waveSize; lanesM *= 2)
      for (unsigned wavesM = 1; wavesM <= numWarps / wavesB; wavesM *= 2) {
        int64_t tM = int64_t(lanesM) * wavesM, tN = int64_t(waveSize / lanesM) * (numWarps / wavesB / wavesM);
        int64_t rows = share(M, tM), cols = share(N, tN);
        int64_t cost = 2 * share(B, wavesB) * (rows + cols) * K * copies(B, wavesB) * copies(M, tM) * copies(N, tN) +
                       (cols >= rows ? 0 : 1);
        if (!best || cost < best->cost)
          best = Split{wavesB, lanesM, wavesM, cost};
      }
  SmallVector<unsigned> spt(rank, 1), tpw(rank, 1), wpb(rank, 1), order;
  const unsigned m = rank - 2, n = rank - 1;
  tpw[m] = best->lanesM;
  tpw[n] = waveSize / best->lanesM;
  wpb[m] = best->wavesM;
  wpb[n] = numWarps / best->wavesB / best->wavesM;
  spt[m] = unsigned(share(M, int64_t(tpw[m]) * wpb[m]));
  spt[n] = unsigned(share(N, int64_t(tpw[n]) * wpb[n]));
  if (rank == 3) {
    wpb[0] = best->wavesB;
    spt[0] = unsigned(share(B, best->wavesB));
  }
  for (int64_t d = rank - 1; d >= 0; --d)
    order.push_back(unsigned(d));
  return BlockedLayoutAttr::get(ctx, spt, tpw, wpb, order);
}

// Ops a dot's result can pass through on its way into another dot's
// operand without another thread needing it: elementwise math, casts,
// selects, layout conversions.
static bool passesThrough(Operation *op) {
  if (isa<ConvertLayoutOp>(op))
    return true;
  return op->getNumRegions() == 0 && op->getNumResults() == 1 &&
         isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) &&
         isa<RankedTensorType>(op->getResult(0).getType());
}

// Attention's P = softmax(Q K^T) feeding P V: the result of `dot` reaches
// operand A of another dot (a chain's head), or its A comes from another
// dot's result (a chain's tail). Both take their waves along M only, so
// P's rows stay with the threads that computed them and the head's
// transposed accumulator is the tail's A operand as it is.
// Walks from `start` through the values `next` gives (the ops the walk may
// pass through) until `found` holds for one.
static bool reaches(Value start, function_ref<bool(Value)> found,
                    function_ref<void(Value, SmallVectorImpl<Value> &)> next) {
  SmallVector<Value> work{start};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (found(v))
      return true;
    next(v, work);
  }
  return false;
}
static bool isChainHead(DotOp dot) {
  return reaches(
      dot.getResult(),
      [](Value v) {
        return llvm::any_of(v.getUses(),
                            [](OpOperand &use) { return isa<DotOp>(use.getOwner()) && use.getOperandNumber() == 0; });
      },
      [](Value v, SmallVectorImpl<Value> &work) {
        for (Operation *user : v.getUsers())
          if (passesThrough(user))
            work.push_back(user->getResult(0));
      });
}
static bool isChainTail(DotOp dot) {
  return reaches(
      dot.getA(), [](Value v) { return isa_and_nonnull<DotOp>(v.getDefiningOp()); },
      [](Value v, SmallVectorImpl<Value> &work) {
        if (Operation *def = v.getDefiningOp(); def && passesThrough(def))
          for (Value operand : def->getOperands())
            if (isa<RankedTensorType>(operand.getType()))
              work.push_back(operand);
      });
}

// Whether the instruction's transposed accumulator is, register for
// register, the A operand (kWidth 4) of a following dot: MFMA's is; WMMA's
// A gives a lane all 16 K of its row, which the accumulator spreads over
// both half-waves (columns 2 * r + l / 16), so a chain's P crosses lanes on
// any wave split.
static bool accumulatorIsOperandA(const MatrixInstr &instr) { return instr.kind == MatrixCore::Mfma; }

FailureOr<DotLayouts> mlir::tessel::chooseDotLayouts(DotOp dot, const std::string &arch, unsigned numWarps,
                                                     unsigned waveSize) {
  auto a = cast<RankedTensorType>(dot.getA().getType()), c = cast<RankedTensorType>(dot.getC().getType());
  const int64_t rank = c.getRank(); // a batch dim, if any, comes first
  // K counts elements: an e2m1 operand's bytes hold two.
  const int64_t M = c.getDimSize(rank - 2), N = c.getDimSize(rank - 1),
                K = a.getDimSize(rank - 1) * (dot.getAE2m1() ? 2 : 1);
  const TargetFacts *target = lookupTarget(arch);
  const MatrixInstr *chosen = nullptr;
  std::vector<MatrixInstr> candidates;
  if (target)
    candidates = matrixInstrsForDot(*target, dot);
  // A scaled dot runs on the scaled instructions alone (tessel-legalize-dots
  // made it for one that takes the block unpadded).
  if (dot.getAScale())
    llvm::erase_if(candidates, [](const MatrixInstr &i) { return !i.formatOperands; });
  // The largest instruction that fits the block; for a block with fewer rows
  // or columns than every instruction (M or N below 16: Triton's 2x2x16 or
  // [B, 1, K] blocks), the one that pads it least: the extra rows and columns
  // are copies in registers the result drops (Layouts.cpp). K is never
  // padded (zeros there would need a select per lane): a K that no
  // instruction divides takes the multiply-adds below.
  int64_t leastPadded = 0;
  for (const MatrixInstr &i : candidates) {
    if (K % i.k != 0)
      continue;
    if (i.m <= M && i.n <= N) {
      chosen = &i;
      break;
    }
    const int64_t padded = std::max<int64_t>(M, i.m) * std::max<int64_t>(N, i.n);
    if (!leastPadded || padded < leastPadded) {
      chosen = &i;
      leastPadded = padded;
    }
  }
  MLIRContext *ctx = dot.getContext();
  if (!chosen)
    return DotLayouts{fmaAccumulatorLayout(ctx, c.getShape(), K, numWarps, waveSize), unsigned(K)};
  // Waves split M and N, the longer first, while there are instruction
  // tiles to share; any left over replicate. A chain of dots puts them all
  // along M where M has a tile for each. Where LDS reads transpose (gfx950),
  // a tie goes to N, as Triton's AMD backend splits: each wave then reads
  // more of A and less of B (a 128x128 block at 8 waves: waves [2, 4], 8
  // 16-byte reads of A and 8 transposed 8-byte reads of B a lane, against
  // 4 and 16 with [4, 2]; llvm-mca cycles of the 8-wave f16 matmuls
  // 122.1-131.1 -> 113.2-124.2). On gfx942 and gfx1100 the same rule made
  // the 8-wave f16 matmuls slower (gfx942 175.5 -> 194.5) or cost them 2
  // waves a SIMD (gfx1100, and gfx942's fp8). A scaled dot keeps the tie
  // on M: split [2, 4], its scale bytes of a side no longer shared a register
  // (mxfp4 at 8 waves 132.2 -> 134.1). A chain's head keeps it on M too,
  // and so does its tail where the head's accumulator is its A operand as
  // it is (MFMA: P stays in registers; split [2, 4] on gfx950 at 8 waves it
  // went through LDS, attention d128 276.0 -> 334.9 cycles). On WMMA P
  // crosses lanes or waves on any split, and the tail gives its tie to N:
  // each wave reads fewer tiles of B (V); gfx1100's attention 0.2-19% fewer
  // llvm-mca cycles a key block (d128 f16 757.0 -> 636.8).
  unsigned wM = 1, wN = 1;
  const bool chained = isChainHead(dot) || isChainTail(dot);
  if (M % (int64_t(chosen->m) * numWarps) == 0 && chained)
    wM = numWarps;
  const bool tieToN = target && !dot.getAScale() &&
                      (chained ? isChainTail(dot) && !isChainHead(dot) && !accumulatorIsOperandA(*chosen)
                               : target->ldsTransposeReads);
  for (unsigned left = numWarps / wM; left > 1; left /= 2) {
    int64_t tilesM = M / (int64_t(chosen->m) * wM), tilesN = N / (int64_t(chosen->n) * wN);
    if (tilesM > 1 && (tilesM > tilesN || (tilesM == tilesN && !tieToN)))
      wM *= 2;
    else if (tilesN > 1)
      wN *= 2;
    else
      wM *= 2;
  }
  DistributedLayoutAttr mfma;
  unsigned kWidth;
  if (chosen->kind == MatrixCore::Wmma) { // wave32: a lane holds all 16 K of its row
    mfma = WmmaLayoutAttr::get(ctx, {wM, wN}, /*transposed=*/M >= 16 && N >= 16);
    kWidth = chosen->k;
  } else {
    // Transposed (as Triton's AMD backend does) unless the block is smaller
    // than the instruction (its padding drops register rows, Layouts.cpp).
    const bool transposed = M >= chosen->m && N >= chosen->n;
    mfma = MfmaLayoutAttr::get(ctx, {chosen->m, chosen->n}, {wM, wN}, transposed);
    kWidth = chosen->k / (64 / chosen->m);
    // A chain's tail takes the head's transposed accumulator as A: runs of
    // 4 along N (its K). An instruction that takes more K a lane reads them
    // with the lane groups interleaved at 4 (kGroup), B alike.
    if (kWidth > 4 && !dot.getAE2m1() && !dot.getBE2m1() && isChainTail(dot))
      return DotLayouts{mfma, kWidth, 4};
    // gfx950's f8f6f4 MFMAs take their 32 bytes a lane as runs of 16 (the
    // target table's kRun), as the hardware orders K (any order A and B
    // share sums the same products; this one is the instruction's). An
    // e2m1 operand's 32 nibbles a lane are consecutive K: 16 bytes, one run.
    if (chosen->kRun) {
      auto width = [&](bool e2m1) { return e2m1 ? kWidth / 2 : kWidth; };
      auto group = [&](bool e2m1) { return e2m1 ? 0u : chosen->kRun; };
      DotLayouts layouts{mfma, width(dot.getAE2m1()), group(dot.getAE2m1())};
      if (dot.getAE2m1() != dot.getBE2m1()) {
        layouts.kWidthB = width(dot.getBE2m1());
        layouts.kGroupB = group(dot.getBE2m1());
      }
      return layouts;
    }
  }
  return DotLayouts{mfma, kWidth};
}

std::vector<MatrixInstr> mlir::tessel::matrixInstrsForDot(const TargetFacts &target, DotOp dot) {
  std::optional<DType> in = dtypeOf(dot.getA().getType().getElementType()),
                       inB = dtypeOf(dot.getB().getType().getElementType()),
                       acc = dtypeOf(dot.getC().getType().getElementType());
  if (!in || !inB || !acc)
    return {};
  if (!dot.getAE2m1() && !dot.getBE2m1())
    return target.matrixInstrsFor(*in, *inB, *acc);
  std::vector<MatrixInstr> rows;
  for (const MatrixInstr &i : target.matrixInstrs)
    if (i.formatOperands && i.accumulator == *acc && (dot.getAE2m1() || i.operand == *in) &&
        (dot.getBE2m1() || i.operandB == *inB))
      rows.push_back(i);
  return rows;
}

const MatrixInstr *mlir::tessel::scaledMatrixInstr(const TargetFacts &target, std::optional<DType> a,
                                                   std::optional<DType> b, int64_t M, int64_t N, int64_t K) {
  for (const MatrixInstr &i : target.matrixInstrs)
    if (i.formatOperands && (!a || i.operand == *a) && (!b || i.operandB == *b) && i.accumulator == DType::F32 &&
        K % i.k == 0 && i.m <= M && i.n <= N)
      return &i;
  return nullptr;
}
