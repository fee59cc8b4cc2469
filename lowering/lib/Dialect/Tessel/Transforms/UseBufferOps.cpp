// Masked global accesses through AMDGPU buffer instructions (see Passes.td).
#include "tessel/Analysis/KernelRanges.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/Arith/IR/Arith.h"
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
// addptr(...addptr(splat(base), o1)..., on).
struct BaseAndOffsets {
  Value base;
  SmallVector<Value> offsets;
};
std::optional<BaseAndOffsets> splitPointer(Value ptr) {
  BaseAndOffsets out;
  while (auto add = ptr.getDefiningOp<AddPtrOp>()) {
    if (!elementTypeOf(add.getOffset().getType()).isInteger(32))
      return std::nullopt;
    out.offsets.push_back(add.getOffset());
    ptr = add.getPtr();
  }
  auto splat = ptr.getDefiningOp<SplatOp>();
  if (!splat || out.offsets.empty())
    return std::nullopt;
  out.base = splat.getSrc();
  return out;
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
    for (Operation *op : accesses) {
      Value ptr = isa<LoadOp>(op) ? cast<LoadOp>(op).getPtr() : cast<StoreOp>(op).getPtr();
      std::optional<BaseAndOffsets> split = splitPointer(ptr);
      if (!split)
        continue;
      SmallVector<Value> uniform, varying;
      int64_t constant = 0;
      for (Value offset : split->offsets)
        splitTerms(offset, uniform, constant, varying);
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
      if (!bounded || lo < 0 || (hi + vec) * elemBytes > kMaxBufferBytes)
        continue;

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
      auto offsetType = cast<RankedTensorType>(split->offsets.front().getType());
      Value offsets;
      if (varying.empty()) {
        offsets = b.create<arith::ConstantOp>(loc, offsetType, DenseElementsAttr::get(offsetType, int32_t(0)));
      } else {
        offsets = varying.front();
        for (Value term : ArrayRef<Value>(varying).drop_front())
          offsets = b.create<arith::AddIOp>(loc, offsets, term);
      }
      if (auto load = dyn_cast<LoadOp>(op)) {
        auto buffer = b.create<BufferLoadOp>(loc, load.getType(), base, offsets, load.getMask(),
                                             load.getOther(), load.getVec());
        load.replaceAllUsesWith(buffer.getResult());
      } else {
        auto store = cast<StoreOp>(op);
        b.create<BufferStoreOp>(loc, base, offsets, store.getValue(), store.getMask(), store.getVec());
      }
      op->erase();
    }
  }
};

} // namespace
