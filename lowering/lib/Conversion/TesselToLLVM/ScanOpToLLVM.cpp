// tessel.scan: a sequential scan within each thread's chunk, an inclusive
// Hillis-Steele scan of the thread totals across lanes, the wave totals
// through LDS, then every element takes the prefix of the threads before it.
// The combine's operand order is kept (it need only be associative).
#include "CombineUtility.h"
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct ScanOpConversion : TesselOpToLLVMPattern<ScanOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;

  LogicalResult matchAndRewrite(ScanOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getSrcs()[0].getType());
    unsigned axis = op.getAxis();
    bool reverse = op.getReverse();
    size_t n = op.getSrcs().size();
    LinearLayout layout = getLinearLayout(type);
    SmallVector<unsigned> laneBits = layout.laneBitsAlong(axis);
    // Scan order is thread order: one contiguous chunk per thread along the
    // axis, lanes and waves numbered along it (layout assignment makes it so).
    bool oneChunk = true;
    int64_t expected = 1;
    for (const LinearLayout::Basis &basis : layout.registerBases())
      if (basis[axis]) {
        oneChunk &= basis[axis] == expected;
        expected *= 2;
      }
    if (!oneChunk || !areConsecutive(laneBits) || !areConsecutive(layout.waveBitsAlong(axis)))
      return op.emitError("a scan needs one contiguous chunk per thread along its axis, with "
                          "lanes and waves in axis order (tessel compiler bug: layout "
                          "assignment gives scans such a layout)");
    Region &combine = op.getCombine();
    bool failedCombine = false;
    auto apply = [&](ValueRange lhs, ValueRange rhs) -> SmallVector<Value> {
      FailureOr<SmallVector<Value>> c = applyCombine(rewriter, combine, lhs, rhs);
      if (failed(c)) {
        failedCombine = true;
        return SmallVector<Value>(lhs);
      }
      return *c;
    };

    SmallVector<SmallVector<Value>> vals;
    for (ValueRange regs : adaptor.getSrcs())
      vals.push_back(registersOf(regs));
    SmallVector<SmallVector<int64_t>> lines = layout.linesAlong(axis);
    if (reverse)
      for (SmallVector<int64_t> &line : lines)
        std::reverse(line.begin(), line.end());
    auto at = [&](int64_t reg) {
      SmallVector<Value> v;
      for (size_t i = 0; i < n; ++i)
        v.push_back(vals[i][reg]);
      return v;
    };
    auto put = [&](int64_t reg, ArrayRef<Value> v) {
      for (size_t i = 0; i < n; ++i)
        vals[i][reg] = v[i];
    };

    // 1. Within each thread, in scan order.
    for (const SmallVector<int64_t> &line : lines)
      for (size_t j = 1; j < line.size(); ++j)
        put(line[j], apply(at(line[j - 1]), at(line[j])));

    // 2. Across lanes: inclusive scan of the thread totals.
    int64_t lanes = layout.distinctLanes(axis);
    int64_t stride = laneBits.empty() ? 1 : int64_t(1) << laneBits[0];
    Value lane = target.laneId(rewriter, loc);
    Value laneC = idBitsValue(rewriter, loc, lane, laneBits, target.laneIdBits());
    auto c = [&](int64_t v) { return i32Value(rewriter, loc, v); };
    Value eff = reverse ? Value(rewriter.create<LLVM::SubOp>(loc, c(lanes - 1), laneC)) : laneC;
    int64_t towardsPrevious = reverse ? stride : -stride;
    SmallVector<SmallVector<Value>> incl;
    for (const SmallVector<int64_t> &line : lines)
      incl.push_back(at(line.back()));
    for (int64_t k = 1; k < lanes; k <<= 1) {
      Value from = rewriter.create<LLVM::AddOp>(loc, lane, c(towardsPrevious * k));
      Value take = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::sge, eff, c(k));
      for (SmallVector<Value> &s : incl) {
        SmallVector<Value> other;
        for (Value v : s)
          other.push_back(target.shuffle(rewriter, loc, v, from));
        s = selectEach(rewriter, loc, take, apply(other, s), s);
      }
    }
    // The inclusive total of the lanes before this one (none when the axis
    // lies within one lane).
    SmallVector<SmallVector<Value>> prefix(incl);
    Value prefixValid =
        constantValue(rewriter, loc, rewriter.getI1Type(), rewriter.getBoolAttr(false));
    if (lanes > 1) {
      Value from = rewriter.create<LLVM::AddOp>(loc, lane, c(towardsPrevious));
      for (size_t l = 0; l < lines.size(); ++l)
        for (size_t i = 0; i < n; ++i)
          prefix[l][i] = target.shuffle(rewriter, loc, incl[l][i], from);
      prefixValid = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::sgt, eff, c(0));
    }

    // 3. Across waves: each wave's total through LDS.
    if (layout.distinctWaves(axis) > 1) {
      WaveExchange x(rewriter, loc, target, op, op.getSrcs(), axis, lines);
      int64_t waves = x.waves();
      Value waveC = x.waveCoord();
      Value weff = reverse ? Value(rewriter.create<LLVM::SubOp>(loc, c(waves - 1), waveC)) : waveC;
      // The lane holding the wave's last element in scan order.
      Value lastLane = rewriter.create<LLVM::AddOp>(
          loc, rewriter.create<LLVM::SubOp>(loc, lane, rewriter.create<LLVM::MulOp>(loc, laneC, c(stride))),
          c((reverse ? 0 : lanes - 1) * stride));
      // Every lane takes part in the shuffles; only owners store.
      SmallVector<SmallVector<Value>> totals(lines.size());
      for (size_t l = 0; l < lines.size(); ++l)
        for (size_t i = 0; i < n; ++i)
          totals[l].push_back(target.shuffle(rewriter, loc, incl[l][i], lastLane));
      onlyOwners(rewriter, loc, target, type, [&] {
        for (size_t l = 0; l < lines.size(); ++l)
          for (size_t i = 0; i < n; ++i)
            x.store(rewriter, loc, i, waveC, l, totals[l][i]);
      });
      target.ldsBarrier(rewriter, loc);
      Value waveValid = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::sgt, weff, c(0));
      for (size_t l = 0; l < lines.size(); ++l) {
        auto loadWave = [&](int64_t j) {
          int64_t w = reverse ? waves - 1 - j : j;
          SmallVector<Value> v;
          for (size_t i = 0; i < n; ++i)
            v.push_back(x.load(rewriter, loc, i, w, l, incl[l][i].getType()));
          return v;
        };
        // The last wave in scan order is in no wave's prefix.
        SmallVector<Value> wacc = loadWave(0);
        for (int64_t j = 1; j < waves - 1; ++j) {
          Value inPrefix = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::slt, c(j), weff);
          wacc = selectEach(rewriter, loc, inPrefix, apply(wacc, loadWave(j)), wacc);
        }
        SmallVector<Value> both = apply(wacc, prefix[l]);
        prefix[l] = selectEach(rewriter, loc, prefixValid,
                               selectEach(rewriter, loc, waveValid, both, prefix[l]), wacc);
      }
      prefixValid = rewriter.create<LLVM::OrOp>(loc, prefixValid, waveValid);
      target.endLdsScratch(rewriter, loc, op);
    }

    // 4. Every element takes the prefix of the threads before it.
    for (size_t l = 0; l < lines.size(); ++l)
      for (int64_t reg : lines[l])
        put(reg, selectEach(rewriter, loc, prefixValid, apply(prefix[l], at(reg)), at(reg)));
    if (failedCombine)
      return failure();
    replaceWithRegisters(rewriter, op, std::move(vals));
    return success();
  }
};

} // namespace

void mlir::tessel::populateScanOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                const TargetInfo &target,
                                                RewritePatternSet &patterns) {
  patterns.add<ScanOpConversion>(converter, target);
}
