// tessel.sort: a bitonic network along the axis. Stage (k, j) pairs each
// element with the one whose coordinate along the axis differs in bit j;
// where that bit lives in the layout decides the exchange: another register
// of the same thread, the same register of another lane (a butterfly
// shuffle), or another wave (through LDS between barriers). Each side then
// keeps the smaller or the larger of the pair by its block's direction, so
// no element is ever written by two threads.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct SortOpConversion : TesselOpToLLVMPattern<SortOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;

  // a < b in the key order: NaN above every number (torch.sort), signed
  // integers.
  static Value less(OpBuilder &b, Location loc, Value x, Value y) {
    if (!isa<FloatType>(x.getType()))
      return b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::slt, x, y);
    Value lt = b.create<LLVM::FCmpOp>(loc, LLVM::FCmpPredicate::olt, x, y);
    Value xNum = b.create<LLVM::FCmpOp>(loc, LLVM::FCmpPredicate::ord, x, x);
    Value yNan = b.create<LLVM::FCmpOp>(loc, LLVM::FCmpPredicate::uno, y, y);
    return b.create<LLVM::OrOp>(loc, lt, b.create<LLVM::AndOp>(loc, xNum, yNan));
  }

  LogicalResult matchAndRewrite(SortOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getSrcs()[0].getType());
    const unsigned axis = op.getAxis();
    const int64_t length = type.getDimSize(axis);
    LinearLayout layout = getLinearLayout(type);
    SmallVector<SmallVector<Value>> coords = emitRegisterCoords(rewriter, loc, target, type);
    const size_t regs = coords.size();

    // The values being sorted, per operand and register; a stable sort
    // carries each element's starting position as the last one.
    SmallVector<SmallVector<Value>> vals;
    for (ValueRange src : adaptor.getSrcs())
      vals.emplace_back(src.begin(), src.end());
    const bool stable = op.getStable();
    // A masked sort's mask is its last operand: masked-off elements go last.
    const size_t maskAt = op.getMasked() ? vals.size() - 1 : 0;
    if (stable) {
      SmallVector<Value> &index = vals.emplace_back();
      for (size_t r = 0; r < regs; ++r)
        index.push_back(coords[r][axis]);
    }
    // x before y in the sorted order.
    std::function<Value(ArrayRef<Value>, ArrayRef<Value>)> keyBefore;
    auto before = [&](ArrayRef<Value> x, ArrayRef<Value> y) -> Value {
      if (!op.getMasked())
        return keyBefore(x, y);
      // (valid, key): x valid and y not, or both alike and x's key first.
      Value yes = constantValue(rewriter, loc, rewriter.getI1Type(), rewriter.getBoolAttr(true));
      Value xOnly = rewriter.create<LLVM::AndOp>(loc, x[maskAt], rewriter.create<LLVM::XOrOp>(loc, y[maskAt], yes));
      Value alike = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, x[maskAt], y[maskAt]);
      return rewriter.create<LLVM::OrOp>(loc, xOnly, rewriter.create<LLVM::AndOp>(loc, alike, keyBefore(x, y)));
    };
    keyBefore = [&](ArrayRef<Value> x, ArrayRef<Value> y) -> Value {
      Value ahead = op.getDescending() ? less(rewriter, loc, y[0], x[0]) : less(rewriter, loc, x[0], y[0]);
      if (!stable)
        return ahead;
      Value behind = op.getDescending() ? less(rewriter, loc, x[0], y[0]) : less(rewriter, loc, y[0], x[0]);
      Value yes = constantValue(rewriter, loc, rewriter.getI1Type(), rewriter.getBoolAttr(true));
      Value tie = rewriter.create<LLVM::AndOp>(loc, rewriter.create<LLVM::XOrOp>(loc, ahead, yes),
                                               rewriter.create<LLVM::XOrOp>(loc, behind, yes));
      Value earlier = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::slt, x.back(), y.back());
      return rewriter.create<LLVM::OrOp>(loc, ahead, rewriter.create<LLVM::AndOp>(loc, tie, earlier));
    };

    auto unit = [&](int64_t step) {
      LinearLayout::Basis b(type.getRank(), 0);
      b[axis] = step;
      return b;
    };
    auto findBit = [&](ArrayRef<LinearLayout::Basis> bases, int64_t step) -> int {
      for (size_t i = 0; i < bases.size(); ++i)
        if (bases[i] == unit(step))
          return int(i);
      return -1;
    };
    auto slot = [&](ArrayRef<Value> c, int64_t bytes) {
      Value index = emitLinearIndex(rewriter, loc, c, type.getShape());
      Value padded = rewriter.create<LLVM::AddOp>(loc, index, rewriter.create<LLVM::LShrOp>(loc, index, i32Value(rewriter, loc, 5)));
      return rewriter.create<LLVM::MulOp>(loc, padded, i32Value(rewriter, loc, bytes)).getResult();
    };

    for (int64_t k = 2; k <= length; k *= 2) {
      for (int64_t j = k / 2; j >= 1; j /= 2) {
        // Each register's partner, per operand.
        SmallVector<SmallVector<Value>> partner(vals.size(), SmallVector<Value>(regs));
        if (int bit = findBit(layout.registerBases(), j); bit >= 0) {
          for (size_t i = 0; i < vals.size(); ++i)
            for (size_t r = 0; r < regs; ++r)
              partner[i][r] = vals[i][r ^ (size_t(1) << bit)];
        } else if (int bit = findBit(layout.laneBases(), j); bit >= 0) {
          for (size_t i = 0; i < vals.size(); ++i)
            for (size_t r = 0; r < regs; ++r)
              partner[i][r] = target.butterflyPartner(rewriter, loc, vals[i][r], int64_t(1) << bit, false);
        } else if (findBit(layout.waveBases(), j) >= 0) {
          // Another wave holds it: through LDS, one operand at a time.
          for (size_t i = 0; i < vals.size(); ++i) {
            Type elem = vals[i][0].getType();
            int64_t bytes = std::max<int64_t>(1, memoryType(rewriter, elem).getIntOrFloatBitWidth() / 8);
            onlyOwners(rewriter, loc, target, type, [&] {
              for (size_t r = 0; r < regs; ++r)
                target.ldsStore(rewriter, loc, op, slot(coords[r], bytes), toMemory(rewriter, loc, vals[i][r]));
            });
            target.ldsBarrier(rewriter, loc);
            for (size_t r = 0; r < regs; ++r) {
              SmallVector<Value> other(coords[r]);
              other[axis] = rewriter.create<LLVM::XOrOp>(loc, other[axis], i32Value(rewriter, loc, j));
              Value v = target.ldsLoad(rewriter, loc, op, slot(other, bytes), memoryType(rewriter, elem));
              partner[i][r] = fromMemory(rewriter, loc, v, elem);
            }
            target.ldsBarrier(rewriter, loc);
          }
        } else {
          return op.emitOpError("no layout basis moves ") << j << " along the sort axis (compiler bug)";
        }
        // Keep the pair's first or second by the block's direction.
        SmallVector<SmallVector<Value>> next(vals.size(), SmallVector<Value>(regs));
        for (size_t r = 0; r < regs; ++r) {
          Value c = coords[r][axis];
          auto bitClear = [&](int64_t bit) {
            return rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq,
                                                 rewriter.create<LLVM::AndOp>(loc, c, i32Value(rewriter, loc, bit)),
                                                 i32Value(rewriter, loc, 0));
          };
          Value up = bitClear(k), lower = bitClear(j);
          SmallVector<Value> mine, theirs;
          for (size_t i = 0; i < vals.size(); ++i) {
            mine.push_back(vals[i][r]);
            theirs.push_back(partner[i][r]);
          }
          // The lower of an ascending pair (or the upper of a descending
          // one) keeps the earlier element.
          Value keepsEarlier = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, lower, up);
          Value take = rewriter.create<LLVM::SelectOp>(loc, keepsEarlier, before(theirs, mine), before(mine, theirs));
          for (size_t i = 0; i < vals.size(); ++i)
            next[i][r] = rewriter.create<LLVM::SelectOp>(loc, take, theirs[i], mine[i]);
        }
        vals = std::move(next);
      }
    }
    if (stable)
      vals.pop_back();
    SmallVector<SmallVector<Value>> results(vals.begin(), vals.end());
    replaceWithRegisters(rewriter, op, results);
    return success();
  }
};

} // namespace

void mlir::tessel::populateSortOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                                                RewritePatternSet &patterns) {
  patterns.add<SortOpConversion>(converter, target);
}
