// Masked global accesses through AMDGPU buffer instructions (see Passes.td).
#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Analysis/KernelRanges.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELUSEBUFFEROPS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

// The largest byte offset + access size every in-range element may reach:
// below the resource's num_records (kBufferNumRecords in the lowering), and
// below the offset a masked-off element gets (2^31).
constexpr int64_t kMaxBufferBytes = (int64_t(1) << 31) - 2;

// A pointer tile as a scalar base plus i32 offset tiles, when it is
// addptr(...addptr(splat(base), o1)..., on), possibly through broadcasts of
// the pointer tile (`row + col` pointers are addptr(broadcast(addptr(splat
// (base), rows)), cols)): offsets from below a broadcast have the smaller
// shape (toShape broadcasts them when they are used).
struct BaseAndOffsets {
  Value base;
  SmallVector<Value> offsets;
};
std::optional<BaseAndOffsets> splitPointer(Value ptr) {
  BaseAndOffsets out;
  while (true) {
    if (auto add = ptr.getDefiningOp<AddPtrOp>()) {
      if (!elementTypeOf(add.getOffset().getType()).isInteger(32))
        return std::nullopt;
      out.offsets.push_back(add.getOffset());
      ptr = add.getPtr();
    } else if (auto broadcast = ptr.getDefiningOp<BroadcastOp>()) {
      ptr = broadcast.getSrc();
    } else {
      break;
    }
  }
  auto splat = ptr.getDefiningOp<SplatOp>();
  if (!splat || out.offsets.empty())
    return std::nullopt;
  out.base = splat.getSrc();
  return out;
}

// `offset` as an i32 tile of the access's shape (`ptrType`'s).
Value toShape(OpBuilder &b, Location loc, Value offset, Type ptrType) {
  auto tile = cast<RankedTensorType>(ptrType);
  auto type = RankedTensorType::get(tile.getShape(), b.getI32Type(), tile.getEncoding());
  if (offset.getType() == type)
    return offset;
  return b.create<BroadcastOp>(loc, type, offset);
}

// The sum of i32 offset tiles, in the access's shape.
Value sumInShape(OpBuilder &b, Location loc, ArrayRef<Value> terms, Type ptrType) {
  Value sum = toShape(b, loc, terms.front(), ptrType);
  for (Value term : terms.drop_front())
    sum = b.create<arith::AddIOp>(loc, sum, toShape(b, loc, term, ptrType));
  return sum;
}

// An i32 offset tile as a sum of terms: splatted scalars and constants (the
// same for every element; `constant` sums the constants) and the rest.
void splitTerms(Value offset, SmallVectorImpl<Value> &uniform, int64_t &constant,
                SmallVectorImpl<Value> &varying) {
  if (auto add = offset.getDefiningOp<arith::AddIOp>()) {
    splitTerms(add.getLhs(), uniform, constant, varying);
    splitTerms(add.getRhs(), uniform, constant, varying);
    return;
  }
  if (auto splat = offset.getDefiningOp<SplatOp>()) {
    uniform.push_back(splat.getSrc());
    return;
  }
  APInt c;
  if (matchPattern(offset, m_ConstantInt(&c))) {
    constant += c.getSExtValue();
    return;
  }
  varying.push_back(offset);
}

// The kernel argument a scalar pointer is, through scalar i32 addptrs
// (their offsets appended to `offsets`), when the call's Buffer was small
// enough (tessel.pointer_range): then any valid access's byte offset from it
// fits 31 bits.
BlockArgument smallBufferArgument(Value ptr, SmallVectorImpl<Value> &offsets) {
  while (auto add = ptr.getDefiningOp<AddPtrOp>()) {
    if (isa<RankedTensorType>(add.getType()) || !add.getOffset().getType().isInteger(32))
      return {};
    offsets.push_back(add.getOffset());
    ptr = add.getPtr();
  }
  auto arg = dyn_cast<BlockArgument>(ptr);
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : func::FuncOp();
  if (!func || arg.getOwner() != &func.getBody().front())
    return {};
  StringAttr range = tesselDialect(func.getContext()).getPointerRangeAttrHelper().getName();
  auto bits = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), range);
  return bits && bits.getInt() <= 31 ? arg : BlockArgument();
}

// The masked access as a buffer op: `base` scalar, `offsets` i32 elements.
void replaceWithBufferOp(Operation *op, Value base, Value offsets) {
  OpBuilder b(op);
  if (auto load = dyn_cast<LoadOp>(op)) {
    auto buffer = b.create<BufferLoadOp>(op->getLoc(), load.getType(), base, offsets, load.getMask(),
                                         load.getOther(), load.getVec());
    load.replaceAllUsesWith(buffer.getResult());
  } else {
    auto store = cast<StoreOp>(op);
    b.create<BufferStoreOp>(op->getLoc(), base, offsets, store.getValue(), store.getMask(), store.getVec());
  }
  op->erase();
}

// An access through a small Buffer: the whole offset from the argument
// (scalar terms splatted, added to the tile's) is the buffer offset. Valid
// elements' offsets are then within the Buffer, below 2^31 - 2 bytes;
// invalid ones are masked off. Preferred when the offset cannot be negative:
// the resource is the argument itself (one per argument, loop-invariant, no
// 64-bit address arithmetic) and accesses with one index tile share one
// offset. False, leaving the access alone, when the pointer is not such an
// argument plus i32 offsets.
// With `onlyIf`, also false unless it holds for the scalar offsets on the
// way to the argument.
bool useSmallBuffer(Operation *op, Value ptr, const BaseAndOffsets &split,
                    function_ref<bool(Value)> onlyIf = nullptr) {
  SmallVector<Value> scalarOffsets;
  BlockArgument arg = smallBufferArgument(split.base, scalarOffsets);
  if (!arg || (onlyIf && !llvm::all_of(scalarOffsets, onlyIf)))
    return false;
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value offsets = sumInShape(b, loc, split.offsets, ptr.getType());
  if (!scalarOffsets.empty()) {
    Value sum = scalarOffsets.front();
    for (Value term : ArrayRef<Value>(scalarOffsets).drop_front())
      sum = b.create<arith::AddIOp>(loc, sum, term);
    offsets = b.create<arith::AddIOp>(loc, offsets, b.create<SplatOp>(loc, offsets.getType(), sum));
  }
  replaceWithBufferOp(op, arg, offsets);
  return true;
}

struct UseBufferOpsPass : mlir::tessel::impl::TesselUseBufferOpsBase<UseBufferOpsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringAttr arch = tesselDialect(module.getContext()).getTargetAttrHelper().getAttr(module);
    const ::tessel::TargetFacts *target = arch ? ::tessel::lookupTarget(arch.getValue().str()) : nullptr;
    if (!target || target->bufferResourceFlags == 0)
      return;
    SmallVector<Operation *> accesses;
    module.walk([&](Operation *op) {
      if (auto load = dyn_cast<LoadOp>(op); load && load.getMask() && isa<RankedTensorType>(load.getType()))
        accesses.push_back(op);
      if (auto store = dyn_cast<StoreOp>(op); store && store.getMask() && isa<RankedTensorType>(store.getValue().getType()))
        accesses.push_back(op);
    });
    if (accesses.empty()) // most kernels: no range analysis to run
      return;
    KernelRanges ranges(module);
    if (failed(ranges.status()))
      return signalPassFailure();
    AxisInfoAnalysis axis(module);
    for (Operation *op : accesses) {
      Value ptr = isa<LoadOp>(op) ? cast<LoadOp>(op).getPtr() : cast<StoreOp>(op).getPtr();
      std::optional<BaseAndOffsets> split = splitPointer(ptr);
      if (!split)
        continue;
      SmallVector<Value> uniform, varying;
      int64_t constant = 0;
      for (Value offset : split->offsets)
        splitTerms(offset, uniform, constant, varying);
      // Through a small Buffer, the whole offset from the argument when no
      // term can be negative. A term that may be (a runtime start) stays in
      // the scalar base below, where the emulator's sanitizer sees an
      // address before the Buffer; a negative whole offset would only read
      // 0 silently, as out of range.
      // (The axis analysis's non-negativity: index arithmetic from program
      // ids, aranges and constants, assumed not to wrap.)
      auto nonNegative = [&](Value term) {
        std::optional<ConstantIntRanges> range = ranges.rangeOf(term);
        return (range && range->smin().isNonNegative()) || axis.get(term).nonNegative;
      };
      if (constant >= 0 && llvm::all_of(uniform, nonNegative) && llvm::all_of(varying, nonNegative) &&
          useSmallBuffer(op, ptr, *split, nonNegative))
        continue;
      // Any other pointer: a scalar base (the uniform terms added to it) and
      // the varying offsets, when the range analysis bounds them.
      // Every element's byte offset, plus its access, within the range.
      Type pointee = pointeeOf(ptr.getType());
      const int64_t elemBytes = std::max<int64_t>(1, pointee.getIntOrFloatBitWidth() / 8);
      const int64_t vec = isa<LoadOp>(op) ? cast<LoadOp>(op).getVec() : cast<StoreOp>(op).getVec();
      int64_t lo = 0, hi = 0;
      bool bounded = true;
      for (Value term : varying) {
        std::optional<ConstantIntRanges> range = ranges.rangeOf(term);
        if (!range) {
          bounded = false;
          break;
        }
        lo += range->smin().getSExtValue();
        hi += range->smax().getSExtValue();
      }
      if (!bounded || lo < 0 || (hi + vec) * elemBytes > kMaxBufferBytes) {
        useSmallBuffer(op, ptr, *split);
        continue;
      }

      OpBuilder b(op);
      Location loc = op->getLoc();
      Value base = split->base;
      if (constant != 0)
        uniform.push_back(b.create<arith::ConstantIntOp>(loc, b.getI32Type(), int32_t(constant)));
      if (!uniform.empty()) {
        Value sum = uniform.front();
        for (Value term : ArrayRef<Value>(uniform).drop_front())
          sum = b.create<arith::AddIOp>(loc, sum, term);
        base = b.create<AddPtrOp>(loc, base.getType(), base, sum);
      }
      Value offsets;
      if (varying.empty()) {
        auto tile = cast<RankedTensorType>(ptr.getType());
        auto offsetType = RankedTensorType::get(tile.getShape(), b.getI32Type(), tile.getEncoding());
        offsets = b.create<arith::ConstantOp>(loc, offsetType, DenseElementsAttr::get(offsetType, int32_t(0)));
      } else {
        offsets = sumInShape(b, loc, varying, ptr.getType());
      }
      replaceWithBufferOp(op, base, offsets);
    }
  }
};

} // namespace
