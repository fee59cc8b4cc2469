// The LDS plan (see Passes.td).
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELPLANLDS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct Buffer {
  Operation *op;
  int64_t bytes, start, end; // live over op indices [start, end]
  int64_t offset = 0;
};

// First fit: the lowest offset that overlaps no buffer alive at the same time.
void place(SmallVectorImpl<Buffer> &buffers) {
  SmallVector<Buffer *> placed;
  for (Buffer &b : buffers) {
    int64_t offset = 0;
    bool moved = true;
    while (moved) {
      moved = false;
      for (Buffer *p : placed) {
        bool together = p->start <= b.end && b.start <= p->end;
        bool overlap = p->offset < offset + b.bytes && offset < p->offset + p->bytes;
        if (together && overlap) {
          offset = (p->offset + p->bytes + 15) / 16 * 16;
          moved = true;
        }
      }
    }
    b.offset = offset;
    placed.push_back(&b);
  }
}

struct PlanLdsPass : mlir::tessel::impl::TesselPlanLdsBase<PlanLdsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    TesselDialect &dialect = tesselDialect(module.getContext());
    int64_t total = 0;
    if (failed(verifyEveryTileHasLayout(module)))
      return signalPassFailure();
    Operation *largest = nullptr;
    int64_t largestBytes = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      SmallVector<Buffer> buffers;
      int64_t index = 0;
      // Indices in post-order: an op with regions comes after everything in them.
      DenseMap<Operation *, int64_t> indexOf;
      func.walk([&](Operation *op) { indexOf[op] = ++index; });
      func.walk([&](Operation *op) {
        if (int64_t bytes = ldsScratchBytes(op)) {
          // Scratch lives while its op runs (the op ends with a barrier); a
          // buffer from tessel.local_alloc until its last use (a use inside
          // a loop: until the loop ends).
          int64_t start = indexOf[op], end = start;
          if (isa<LocalAllocOp>(op))
            for (Operation *user : op->getUsers())
              if (Operation *at = op->getBlock()->findAncestorOpInBlock(*user))
                end = std::max(end, indexOf[at]);
          buffers.push_back({op, bytes, start, end});
          if (bytes > largestBytes) {
            largestBytes = bytes;
            largest = op;
          }
        }
      });
      place(buffers);
      Builder b(module.getContext());
      for (Buffer &buf : buffers) {
        dialect.getLdsOffsetAttrHelper().setAttr(buf.op, b.getI64IntegerAttr(buf.offset));
        total = std::max(total, buf.offset + buf.bytes);
      }
    }
    total = (total + 15) / 16 * 16;
    dialect.getLdsBytesAttrHelper().setAttr(module, Builder(module.getContext()).getI64IntegerAttr(total));
    IntegerAttr limit = dialect.getLdsLimitAttrHelper().getAttr(module);
    if (limit && total > limit.getInt()) {
      StringAttr target = dialect.getTargetAttrHelper().getAttr(module);
      largest->emitError() << "needs " << largestBytes << " bytes of LDS (workgroup memory) for "
                           << cast<LdsScratchOpInterface>(largest).describeLdsUse() << "; the kernel's LDS plan totals " << total
                           << " bytes but " << (target ? target.getValue() : "the target")
                           << " has " << limit.getInt()
                           << "; use smaller tiles (a smaller block size) or fewer warps";
      signalPassFailure();
    }
  }
};

} // namespace
