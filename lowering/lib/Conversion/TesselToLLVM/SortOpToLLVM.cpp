// tessel.sort: a bitonic network along the axis. Stage (k, j) pairs each
// element with the one whose coordinate along the axis differs in bit j;
// where that bit lives in the layout decides the exchange: another register
// of the same thread, the same register of another lane (a butterfly
// shuffle), or another wave (through LDS between barriers). Each side then
// keeps the smaller or the larger of the pair by its block's direction, so
// no element is ever written by two threads.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct SortOpConversion : TesselOpToLLVMPattern<SortOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;

  // Longer sorts run their network as loops: unrolled, a sort of 4096
  // elements was 78 stages of straight-line code, 24 s to compile.
  static constexpr int64_t kUnrolledLength = 256;

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
    // Where a stable sort's positions are: an operand that is them already
    // (markSortPositions), else a hidden one carried last.
    size_t positionsAt = vals.size();
    bool hidden = false;
    IntegerAttr given = tesselDialect(op->getContext()).getSortPositionsAttrHelper().getAttr(op);
    const bool fits = given && given.getInt() >= 0 && size_t(given.getInt()) < op.getSrcs().size() &&
                      !(op.getMasked() && size_t(given.getInt()) == maskAt) &&
                      getElementTypeOrSelf(op.getSrcs()[given.getInt()].getType()).isInteger(32);
    if (stable && fits) {
      positionsAt = size_t(given.getInt());
    } else if (stable) {
      SmallVector<Value> &index = vals.emplace_back();
      for (size_t r = 0; r < regs; ++r)
        index.push_back(coords[r][axis]);
      hidden = true;
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
      Value earlier =
          rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::slt, x[positionsAt], y[positionsAt]);
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

    using Vals = SmallVector<SmallVector<Value>>;
    // Each register's partner at stage distance `j`, per operand.
    auto partnersAt = [&](int64_t j, const Vals &vals) -> FailureOr<Vals> {
      Vals partner(vals.size(), SmallVector<Value>(regs));
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
      return partner;
    };
    // Stage (k, j): each side keeps the pair's first or second by its
    // block's direction (k and j as values: constants, or a loop's).
    auto keep = [&](Value k, Value j, const Vals &vals, const Vals &partner) {
      Vals next(vals.size(), SmallVector<Value>(regs));
      for (size_t r = 0; r < regs; ++r) {
        Value c = coords[r][axis];
        auto bitClear = [&](Value bit) {
          return rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, rewriter.create<LLVM::AndOp>(loc, c, bit),
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
      return next;
    };

    int64_t logLength = 0;
    while ((int64_t(1) << logLength) < length)
      ++logLength;
    if (length <= kUnrolledLength) {
      for (int64_t k = 2; k <= length; k *= 2)
        for (int64_t j = k / 2; j >= 1; j /= 2) {
          FailureOr<Vals> partner = partnersAt(j, vals);
          if (failed(partner))
            return failure();
          vals = keep(i32Value(rewriter, loc, k), i32Value(rewriter, loc, j), vals, *partner);
        }
    } else {
      // A long network runs as two loops (k = 2^t, j = 2^(t-1-u)), so its
      // code grows with log(length) exchanges, not log^2: one branch per
      // distance j (each exchange is fixed by where j's bit lives), the
      // keeping shared. The branch is uniform: LDS exchanges' barriers are
      // met by every thread.
      SmallVector<Value> flat;
      for (auto &v : vals)
        flat.append(v.begin(), v.end());
      SmallVector<Type> types;
      for (Value v : flat)
        types.push_back(v.getType());
      auto unflatten = [&](ValueRange range) {
        Vals out(vals.size());
        for (size_t i = 0; i < vals.size(); ++i)
          out[i].assign(range.begin() + i * regs, range.begin() + (i + 1) * regs);
        return out;
      };
      auto flatten = [](const Vals &v) {
        SmallVector<Value> out;
        for (auto &row : v)
          out.append(row.begin(), row.end());
        return out;
      };
      Value one = i32Value(rewriter, loc, 1);
      bool failedStage = false;
      // The partners at distance 2^logJ, logJ a value: one branch per
      // distance, nested (the last one needs no test).
      std::function<SmallVector<Value>(Value, const Vals &, int64_t)> partnersOf =
          [&](Value logJ, const Vals &cur, int64_t b) -> SmallVector<Value> {
        auto exchange = [&]() -> SmallVector<Value> {
          FailureOr<Vals> partner = partnersAt(int64_t(1) << b, cur);
          if (failed(partner)) {
            failedStage = true;
            return flatten(cur);
          }
          return flatten(*partner);
        };
        if (b + 1 == logLength)
          return exchange();
        Value here = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, logJ, i32Value(rewriter, loc, b));
        auto branch = rewriter.create<scf::IfOp>(loc, types, here, /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPointToStart(&branch.getThenRegion().front());
          rewriter.create<scf::YieldOp>(loc, exchange());
          rewriter.setInsertionPointToStart(&branch.getElseRegion().front());
          rewriter.create<scf::YieldOp>(loc, partnersOf(logJ, cur, b + 1));
        }
        return SmallVector<Value>(branch.getResults());
      };
      auto outer = rewriter.create<scf::ForOp>(loc, one, i32Value(rewriter, loc, logLength + 1), one, flat);
      {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(outer.getBody());
        Value t = outer.getInductionVar();
        Value k = rewriter.create<LLVM::ShlOp>(loc, one, t);
        auto inner = rewriter.create<scf::ForOp>(loc, i32Value(rewriter, loc, 0), t, one, outer.getRegionIterArgs());
        rewriter.setInsertionPointToStart(inner.getBody());
        Value logJ = rewriter.create<LLVM::SubOp>(loc, rewriter.create<LLVM::SubOp>(loc, t, one), inner.getInductionVar());
        Value j = rewriter.create<LLVM::ShlOp>(loc, one, logJ);
        Vals cur = unflatten(inner.getRegionIterArgs());
        Vals partner = unflatten(partnersOf(logJ, cur, 0));
        rewriter.create<scf::YieldOp>(loc, flatten(keep(k, j, cur, partner)));
        rewriter.setInsertionPointAfter(inner);
        rewriter.create<scf::YieldOp>(loc, inner.getResults());
      }
      if (failedStage)
        return failure();
      vals = unflatten(outer.getResults());
    }
    if (hidden)
      vals.pop_back();
    SmallVector<SmallVector<Value>> results(vals.begin(), vals.end());
    replaceWithRegisters(rewriter, op, results);
    return success();
  }
};

// The dimension d along which `v` holds each element's position, v[idx] =
// idx[d] at every idx, as the ops that make argsort's and topk's payload
// say it (dsl/src/sort.cpp's positions()): a make_range from 0 (d = 0),
// expand_dims (d moves past the new dimension), broadcast along the other
// dimensions (along d every element would hold 0), a layout conversion
// (the same values). Anything else: none.
std::optional<int64_t> positionsAlong(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto range = dyn_cast_or_null<MakeRangeOp>(def))
    return range.getStart() == 0 ? std::optional<int64_t>(0) : std::nullopt;
  if (auto convert = dyn_cast_or_null<ConvertLayoutOp>(def))
    return positionsAlong(convert.getSrc());
  if (auto expand = dyn_cast_or_null<ExpandDimsOp>(def)) {
    std::optional<int64_t> d = positionsAlong(expand.getSrc());
    if (d && *d >= int64_t(expand.getAxis()))
      ++*d;
    return d;
  }
  if (auto broadcast = dyn_cast_or_null<BroadcastOp>(def)) {
    std::optional<int64_t> d = positionsAlong(broadcast.getSrc());
    if (d && cast<RankedTensorType>(broadcast.getSrc().getType()).getDimSize(*d) != broadcast.getType().getDimSize(*d))
      return std::nullopt;
    return d;
  }
  return std::nullopt;
}
} // namespace

void mlir::tessel::markSortPositions(ModuleOp module) {
  TesselDialect::SortPositionsAttrHelper mark = tesselDialect(module.getContext()).getSortPositionsAttrHelper();
  module.walk([&](SortOp sort) {
    sort->removeAttr(mark.getName()); // only this walk's mark counts
    if (!sort.getStable())
      return;
    for (auto [i, src] : llvm::enumerate(sort.getSrcs()))
      if (positionsAlong(src) == int64_t(sort.getAxis())) {
        mark.setAttr(sort, IntegerAttr::get(IntegerType::get(sort.getContext(), 64), int64_t(i)));
        return;
      }
  });
}

void mlir::tessel::populateSortOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                                                RewritePatternSet &patterns) {
  patterns.add<SortOpConversion>(converter, target);
}
