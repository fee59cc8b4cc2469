// Data movement between layouts and shapes: every thread that owns an element
// writes it to LDS at the element's (padded) index, a barrier, then each
// thread reads what its new layout or shape gives it, and a barrier before
// the LDS is reused. A conversion that gives every thread the same registers
// only renames them; one whose elements all stay in their wave is an
// in-wave shuffle (LayoutConversion.h chooses).
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

#include "tessel/Dialect/Tessel/IR/LayoutConversion.h"

#include <map>

using namespace mlir;
using namespace mlir::tessel;

namespace {

ArrayRef<int64_t> shapeOf(Type t) {
  if (auto tile = dyn_cast<RankedTensorType>(t))
    return tile.getShape();
  return {};
}

// The result's register r is the source's register picks[r].
LogicalResult renameRegisters(ConversionPatternRewriter &rewriter, Operation *op, ValueRange srcRegs,
                              ArrayRef<int64_t> picks) {
  SmallVector<Value> out;
  for (int64_t p : picks)
    out.push_back(srcRegs[p]);
  replaceWithRegisters(rewriter, op, {out});
  return success();
}

// XOR of `images[i]` over the bits i set in `id` (an i32): a lane's or a
// wave's part of a linear map. A map that keeps or clears each bit is a mask.
Value xorOfBits(OpBuilder &b, Location loc, Value id, ArrayRef<int64_t> images) {
  int64_t keep = 0;
  bool mask = true;
  for (size_t i = 0; i < images.size(); ++i) {
    if (images[i] == int64_t(1) << i)
      keep |= int64_t(1) << i;
    else if (images[i] != 0)
      mask = false;
  }
  if (mask)
    return b.create<LLVM::AndOp>(loc, id, i32Value(b, loc, int32_t(keep)));
  Value acc = i32Value(b, loc, 0);
  for (size_t i = 0; i < images.size(); ++i) {
    if (!images[i])
      continue;
    Value bit = b.create<LLVM::AndOp>(loc, b.create<LLVM::LShrOp>(loc, id, i32Value(b, loc, int32_t(i))),
                                      i32Value(b, loc, 1));
    acc = b.create<LLVM::XOrOp>(loc, acc, b.create<LLVM::MulOp>(loc, bit, i32Value(b, loc, int32_t(images[i]))));
  }
  return acc;
}

// An in-wave shuffle by `plan`: each move once, narrow values of one lane
// pattern packed into 32-bit words (a move is one ds_bpermute or
// v_permlanex16 per word), then each result register selects among its
// moves by the lane's varying part.
LogicalResult shuffleRegisters(ConversionPatternRewriter &b, Operation *op, ValueRange src,
                               const InWaveShuffle &plan, const TargetInfo &target) {
  Location loc = op->getLoc();
  Value lane = target.laneId(b, loc), wave = target.waveId(b, loc);
  auto partOf = [&](ArrayRef<int64_t> byLane, ArrayRef<int64_t> byWave) {
    return b.create<LLVM::XOrOp>(loc, xorOfBits(b, loc, lane, byLane), xorOfBits(b, loc, wave, byWave));
  };
  Value lanePart = partOf(plan.laneToLane, plan.waveToLane);
  Type elem = src.front().getType();
  // Pointers move as their 64-bit addresses.
  SmallVector<Value> asInts;
  if (isa<LLVM::LLVMPointerType>(elem)) {
    for (Value v : src)
      asInts.push_back(b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(), v));
    src = asInts;
  }
  const Type ptrType = isa<LLVM::LLVMPointerType>(elem) ? elem : Type();
  elem = src.front().getType();
  const unsigned bits = elem.getIntOrFloatBitWidth();
  SmallVector<Value> moved(plan.moves.size());
  for (auto [i, m] : llvm::enumerate(plan.moves))
    if (m.kind == LaneMoveKind::Own)
      moved[i] = src[m.srcReg];
  std::map<SmallVector<int64_t>, Value> swapped; // row swaps of the same registers move once
  for (const InWaveShuffle::Word &w : plan.words(bits)) {
    SmallVector<int64_t> regs;
    for (unsigned m : w.members)
      regs.push_back(plan.moves[m].srcReg);
    auto vecType = VectorType::get({int64_t(w.members.size())}, elem);
    Value word = src[regs.front()];
    if (regs.size() > 1) {
      Value vec = b.create<LLVM::PoisonOp>(loc, vecType);
      for (auto [j, r] : llvm::enumerate(regs))
        vec = b.create<LLVM::InsertElementOp>(loc, vec, src[r], i32Value(b, loc, int32_t(j)));
      word = b.create<LLVM::BitcastOp>(loc, b.getIntegerType(bits * regs.size()), vec);
    }
    Value from = b.create<LLVM::XOrOp>(loc, lanePart, i32Value(b, loc, int32_t(w.laneConst)));
    Value out;
    if (w.kind == LaneMoveKind::Permute) {
      out = target.shuffle(b, loc, word, from);
    } else {
      Value &other = swapped[regs];
      if (!other)
        other = target.swapRows(b, loc, word);
      out = other;
      // The other row's value where the source lane is in the other row.
      if (plan.rowsVary()) {
        Value crosses = b.create<LLVM::AndOp>(loc, b.create<LLVM::XOrOp>(loc, from, lane), i32Value(b, loc, 16));
        Value pick = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne, crosses, i32Value(b, loc, 0));
        out = b.create<LLVM::SelectOp>(loc, pick, other, word);
      }
    }
    if (regs.size() == 1) {
      moved[w.members.front()] = out;
      continue;
    }
    Value back = b.create<LLVM::BitcastOp>(loc, vecType, out);
    for (auto [j, m] : llvm::enumerate(w.members))
      moved[m] = b.create<LLVM::ExtractElementOp>(loc, back, i32Value(b, loc, int32_t(j)));
  }
  Value varying = plan.variants().size() > 1 ? partOf(plan.laneToReg, plan.waveToReg) : Value();
  SmallVector<Value> out;
  for (const auto &picks : plan.picks) {
    Value v = moved[picks.front().second];
    for (auto [at, m] : ArrayRef(picks).drop_front()) {
      Value here = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, varying, i32Value(b, loc, int32_t(at)));
      v = b.create<LLVM::SelectOp>(loc, here, moved[m], v);
    }
    out.push_back(ptrType ? Value(b.create<LLVM::IntToPtrOp>(loc, ptrType, v)) : v);
  }
  replaceWithRegisters(b, op, {out});
  return success();
}

class ThroughLds {
public:
  ThroughLds(Operation *op, ConversionPatternRewriter &rewriter, const TargetInfo &target,
             const TesselToLLVMTypeConverter &converter)
      : op_(op), b_(rewriter), target_(target), loc_(op->getLoc()),
        dstType_(op->getResult(0).getType()), elem_(converter.scalarType(dstType_)),
        bytes_(ldsElementBytes(dstType_)) {}

  // Writes the registers `regs` of `src` at the element index `index` gives
  // their coordinates.
  void write(Value src, ValueRange regs, function_ref<Value(ArrayRef<Value>)> index) {
    SmallVector<SmallVector<Value>> coords = emitRegisterCoords(b_, loc_, target_, src.getType());
    onlyOwners(b_, loc_, target_, src.getType(), [&] {
      for (size_t r = 0; r < regs.size(); ++r)
        target_.ldsStore(b_, loc_, op_, slotBytes(index(coords[r])), regs[r]);
    });
  }
  // After the writes: each register of the result from the index `index`
  // gives its coordinates.
  void readAndReplace(function_ref<Value(ArrayRef<Value>)> index) {
    readEach([&](ArrayRef<Value> c, size_t) { return target_.ldsLoad(b_, loc_, op_, slotBytes(index(c)), elem_); });
  }
  // After the writes: each register `r` of the result as `read(its
  // coordinates, r)` gives it.
  void readEach(function_ref<Value(ArrayRef<Value>, size_t)> read) {
    target_.ldsBarrier(b_, loc_);
    SmallVector<Value> out;
    SmallVector<SmallVector<Value>> coords = emitRegisterCoords(b_, loc_, target_, dstType_);
    for (size_t r = 0; r < coords.size(); ++r)
      out.push_back(read(coords[r], r));
    target_.endLdsScratch(b_, loc_, op_);
    replaceWithRegisters(b_, op_, {out});
  }
  Value load(Value index) { return target_.ldsLoad(b_, loc_, op_, slotBytes(index), elem_); }
  Value linear(ArrayRef<Value> coords, ArrayRef<int64_t> shape) {
    return emitLinearIndex(b_, loc_, coords, shape);
  }

  // A layout conversion by `plan`.
  void convert(Value src, ValueRange regs, const LdsStaging &plan) {
    Value base = i32Value(b_, loc_, ldsOffset(op_));
    emitLdsTileWrite(b_, loc_, target_, cast<RankedTensorType>(src.getType()), regs, base, plan);
    target_.ldsBarrier(b_, loc_);
    SmallVector<Value> out = emitLdsTileRead(b_, loc_, target_, cast<RankedTensorType>(dstType_), elem_, base, plan);
    target_.endLdsScratch(b_, loc_, op_);
    replaceWithRegisters(b_, op_, {out});
  }
  // Index of half `half` of an element whose last dim (of 2) was split off.
  Value pair(Value index, int64_t half) {
    return b_.create<LLVM::AddOp>(loc_, b_.create<LLVM::MulOp>(loc_, index, i32Value(b_, loc_, 2)),
                                  i32Value(b_, loc_, half));
  }
  ArrayRef<int64_t> dstShape() const { return shapeOf(dstType_); }

private:
  // Element index -> byte offset, with the padding ldsPaddedSlots counts.
  Value slotBytes(Value index) {
    Value padded = b_.create<LLVM::AddOp>(
        loc_, index, b_.create<LLVM::LShrOp>(loc_, index, i32Value(b_, loc_, 5)));
    return b_.create<LLVM::MulOp>(loc_, padded, i32Value(b_, loc_, bytes_));
  }

  Operation *op_;
  ConversionPatternRewriter &b_;
  const TargetInfo &target_;
  Location loc_;
  Type dstType_, elem_;
  int64_t bytes_;
};

struct ConvertLayoutOpConversion : TesselOpToLLVMPattern<ConvertLayoutOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (auto picks = renamedRegisters(op))
      return renameRegisters(rewriter, op, adaptor.getSrc(), *picks);
    std::optional<InWaveShuffle> shuffle;
    if (conversionPath(op, shuffle) == ConversionPath::Shuffle)
      return shuffleRegisters(rewriter, op, adaptor.getSrc(), *shuffle, target);
    ThroughLds lds(op, rewriter, target, converter);
    lds.convert(op.getSrc(), adaptor.getSrc(),
                planLdsStaging(cast<RankedTensorType>(op.getSrc().getType()), op.getType()));
    return success();
  }
};

// Row-major order is kept: each element goes to its linear index.
struct ReshapeOpConversion : TesselOpToLLVMPattern<ReshapeOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(ReshapeOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    ThroughLds lds(op, rewriter, target, converter);
    lds.write(op.getSrc(), adaptor.getSrc(),
              [&](ArrayRef<Value> c) { return lds.linear(c, shapeOf(op.getSrc().getType())); });
    lds.readAndReplace([&](ArrayRef<Value> c) { return lds.linear(c, lds.dstShape()); });
    return success();
  }
};

// Each element is written where the permuted tile has it; nothing moves
// when the result's layout is the source's, permuted.
struct PermuteOpConversion : TesselOpToLLVMPattern<PermuteOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(PermuteOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (auto picks = renamedRegisters(op))
      return renameRegisters(rewriter, op, adaptor.getSrc(), *picks);
    std::optional<InWaveShuffle> shuffle;
    if (conversionPath(op, shuffle) == ConversionPath::Shuffle)
      return shuffleRegisters(rewriter, op, adaptor.getSrc(), *shuffle, target);
    ThroughLds lds(op, rewriter, target, converter);
    lds.write(op.getSrc(), adaptor.getSrc(), [&](ArrayRef<Value> c) {
      SmallVector<Value> moved;
      for (int32_t d : op.getOrder())
        moved.push_back(c[d]);
      return lds.linear(moved, lds.dstShape());
    });
    lds.readAndReplace([&](ArrayRef<Value> c) { return lds.linear(c, lds.dstShape()); });
    return success();
  }
};

// The source whole into LDS; each result element reads the source element
// its index names along the axis (an index out of range reads 0).
struct GatherOpConversion : TesselOpToLLVMPattern<GatherOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(GatherOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ThroughLds lds(op, rewriter, target, converter);
    ArrayRef<int64_t> srcShape = shapeOf(op.getSrc().getType());
    lds.write(op.getSrc(), adaptor.getSrc(), [&](ArrayRef<Value> c) { return lds.linear(c, srcShape); });
    SmallVector<Value> indices = registersOf(adaptor.getIndices());
    const unsigned axis = op.getAxis();
    Type elem = converter.scalarType(op.getType());
    Value zero = constantValue(rewriter, loc, elem, rewriter.getZeroAttr(elem));
    lds.readEach([&](ArrayRef<Value> c, size_t r) -> Value {
      Value i = indices[r];
      if (i.getType().isInteger(64)) {
        // In range as i64 first: a large index must not wrap into range.
        Value ok = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ult, i,
                                                 constantValue(rewriter, loc, i.getType(),
                                                               rewriter.getI64IntegerAttr(srcShape[axis])));
        i = rewriter.create<LLVM::SelectOp>(loc, ok, rewriter.create<LLVM::TruncOp>(loc, rewriter.getI32Type(), i),
                                            i32Value(rewriter, loc, 0));
        SmallVector<Value> at(c);
        at[axis] = i;
        return rewriter.create<LLVM::SelectOp>(loc, ok, lds.load(lds.linear(at, srcShape)), zero);
      }
      Value ok = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ult, i, i32Value(rewriter, loc, srcShape[axis]));
      SmallVector<Value> at(c);
      at[axis] = rewriter.create<LLVM::SelectOp>(loc, ok, i, i32Value(rewriter, loc, 0));
      return rewriter.create<LLVM::SelectOp>(loc, ok, lds.load(lds.linear(at, srcShape)), zero);
    });
    return success();
  }
};

// The halves interleave along the new last dimension.
struct JoinOpConversion : TesselOpToLLVMPattern<JoinOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(JoinOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    ThroughLds lds(op, rewriter, target, converter);
    ArrayRef<int64_t> halfShape = shapeOf(op.getLhs().getType());
    for (int half = 0; half < 2; ++half)
      lds.write(half ? op.getRhs() : op.getLhs(), half ? adaptor.getRhs() : adaptor.getLhs(),
                [&](ArrayRef<Value> c) { return lds.pair(lds.linear(c, halfShape), half); });
    lds.readAndReplace([&](ArrayRef<Value> c) { return lds.linear(c, lds.dstShape()); });
    return success();
  }
};

struct SplitOpConversion : TesselOpToLLVMPattern<SplitOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(SplitOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    ThroughLds lds(op, rewriter, target, converter);
    lds.write(op.getSrc(), adaptor.getSrc(),
              [&](ArrayRef<Value> c) { return lds.linear(c, shapeOf(op.getSrc().getType())); });
    lds.readAndReplace(
        [&](ArrayRef<Value> c) { return lds.pair(lds.linear(c, lds.dstShape()), op.getHalf()); });
    return success();
  }
};

} // namespace

void mlir::tessel::populateConvertLayoutOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                         const TargetInfo &target,
                                                         RewritePatternSet &patterns) {
  patterns.add<ConvertLayoutOpConversion, ReshapeOpConversion, PermuteOpConversion,
               GatherOpConversion, JoinOpConversion, SplitOpConversion>(converter, target);
}
