// tessel.reduce: combine within each thread, then across the lanes of a wave
// with a butterfly (operand order kept; DPP within a row of 16 lanes,
// ds_bpermute beyond), then across waves through LDS between barriers.
#include "CombineUtility.h"
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct ReduceOpConversion : TesselOpToLLVMPattern<ReduceOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;

  LogicalResult matchAndRewrite(ReduceOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getSrcs()[0].getType());
    unsigned axis = op.getAxis();
    size_t n = op.getSrcs().size();
    LinearLayout layout = getLinearLayout(type);
    SmallVector<SmallVector<int64_t>> lines = layout.linesAlong(axis);
    Region &combine = op.getCombine();
    auto apply = [&](ValueRange lhs, ValueRange rhs) { return applyCombine(rewriter, combine, lhs, rhs); };

    // 1. Within each thread.
    SmallVector<SmallVector<Value>> acc;
    for (const SmallVector<int64_t> &line : lines) {
      auto at = [&](int64_t reg) {
        SmallVector<Value> v;
        for (size_t i = 0; i < n; ++i)
          v.push_back(adaptor.getSrcs()[i][reg]);
        return v;
      };
      SmallVector<Value> a = at(line[0]);
      for (size_t j = 1; j < line.size(); ++j) {
        FailureOr<SmallVector<Value>> c = apply(a, at(line[j]));
        if (failed(c))
          return failure();
        a = *c;
      }
      acc.push_back(a);
    }

    // 2. Across the lanes of a wave: a butterfly over the lane bits along
    // the axis; the lower lane's value stays the left operand.
    SmallVector<unsigned> laneBits = layout.laneBitsAlong(axis);
    Value lane = target.laneId(rewriter, loc);
    for (size_t k = 0; k < laneBits.size(); ++k) {
      int64_t distance = int64_t(1) << laneBits[k];
      bool lowerBitsReduced = laneBits[k] == k; // every lower lane bit was reduced already
      Value upper = rewriter.create<LLVM::ICmpOp>(
          loc, LLVM::ICmpPredicate::ne,
          rewriter.create<LLVM::AndOp>(loc, lane, i32Value(rewriter, loc, distance)),
          i32Value(rewriter, loc, 0));
      for (SmallVector<Value> &a : acc) {
        SmallVector<Value> other;
        for (Value v : a)
          other.push_back(target.butterflyPartner(rewriter, loc, v, distance, lowerBitsReduced));
        FailureOr<SmallVector<Value>> c = apply(selectEach(rewriter, loc, upper, other, a),
                                                selectEach(rewriter, loc, upper, a, other));
        if (failed(c))
          return failure();
        a = *c;
      }
    }

    // 3. Across waves, through LDS.
    if (layout.distinctWaves(axis) > 1) {
      WaveExchange x(rewriter, loc, target, op, op.getSrcs(), axis, lines);
      onlyOwners(rewriter, loc, target, type, [&] {
        for (size_t l = 0; l < lines.size(); ++l)
          for (size_t i = 0; i < n; ++i)
            x.store(rewriter, loc, i, x.waveCoord(), l, acc[l][i]);
      });
      target.ldsBarrier(rewriter, loc);
      for (size_t l = 0; l < lines.size(); ++l) {
        auto loadWave = [&](int64_t w) {
          SmallVector<Value> v;
          for (size_t i = 0; i < n; ++i)
            v.push_back(x.load(rewriter, loc, i, w, l, acc[l][i].getType()));
          return v;
        };
        SmallVector<Value> a = loadWave(0);
        for (int64_t w = 1; w < x.waves(); ++w) {
          FailureOr<SmallVector<Value>> c = apply(a, loadWave(w));
          if (failed(c))
            return failure();
          a = *c;
        }
        acc[l] = a;
      }
      target.endLdsScratch(rewriter, loc, op);
    }

    SmallVector<SmallVector<Value>> results(n);
    for (size_t i = 0; i < n; ++i)
      for (SmallVector<Value> &a : acc)
        results[i].push_back(a[i]);
    rewriter.replaceOpWithMultiple(op, std::move(results));
    return success();
  }
};

} // namespace

void mlir::tessel::populateReduceOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                  const TargetInfo &target,
                                                  RewritePatternSet &patterns) {
  patterns.add<ReduceOpConversion>(converter, target);
}
