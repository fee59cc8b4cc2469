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

// How much more LDS the plan may use so that consecutive LDS users get
// disjoint bytes and no barrier is needed after each one's last read.
constexpr int64_t kNoReuseBudgetBytes = 1024;

// Whether `op` is certain to run a barrier after it writes LDS and before
// the next op: an op with LDS scratch (its lowering writes, waits at a
// barrier, then reads) or the user's tessel.barrier.
bool runsBarrier(Operation *op) { return isa<BarrierOp>(op) || (!isa<LocalAllocOp>(op) && ldsScratchBytes(op) > 0); }

int64_t roundUp16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

struct FunctionPlan {
  SmallVector<Buffer> buffers;
  // Scratch ops whose bytes no later LDS user writes before a barrier.
  SmallVector<Operation *> noReuse;
  int64_t total = 0;
};

// The buffers of `func`. The scratch of an op in the function's own block
// (not in a loop or a branch) is guarded from its op to the next op of that
// block that runs a barrier (or the end): a buffer placed on its bytes and
// alive there could be written while a slower wave still reads them, so the
// op keeps its barrier after its last read. With `keepUntilBarrier` the
// scratch stays reserved over that span, so no buffer shares its bytes there.
FunctionPlan planFunction(func::FuncOp func, bool keepUntilBarrier) {
  FunctionPlan plan;
  int64_t index = 0;
  // Indices in post-order: an op with regions comes after everything in them.
  DenseMap<Operation *, int64_t> indexOf;
  func.walk([&](Operation *op) { indexOf[op] = ++index; });
  const int64_t last = index;
  Block &body = func.getBody().front();
  DenseMap<Operation *, int64_t> guardEnd;
  func.walk([&](Operation *op) {
    int64_t bytes = ldsScratchBytes(op);
    if (!bytes)
      return;
    // Scratch lives while its op runs (the op ends with a barrier unless
    // tessel.lds_no_reuse); a buffer from tessel.local_alloc until its last
    // use (a use inside a loop: until the loop ends).
    int64_t start = indexOf[op], end = start;
    if (isa<LocalAllocOp>(op)) {
      for (Operation *user : op->getUsers())
        if (Operation *at = op->getBlock()->findAncestorOpInBlock(*user))
          end = std::max(end, indexOf[at]);
    } else if (op->getBlock() == &body) {
      int64_t guard = last;
      for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
        if (runsBarrier(next)) {
          guard = indexOf[next];
          break;
        }
      guardEnd[op] = guard;
      if (keepUntilBarrier)
        end = guard;
    }
    plan.buffers.push_back({op, bytes, start, end});
  });
  place(plan.buffers);
  for (const Buffer &buf : plan.buffers)
    plan.total = std::max(plan.total, buf.offset + buf.bytes);
  plan.total = roundUp16(plan.total);
  for (const Buffer &s : plan.buffers) {
    auto guard = guardEnd.find(s.op);
    if (guard == guardEnd.end())
      continue;
    bool shared = llvm::any_of(plan.buffers, [&](const Buffer &b) {
      bool inSpan = b.end > s.start && b.start <= guard->second;
      bool overlap = b.offset < s.offset + s.bytes && s.offset < b.offset + b.bytes;
      return b.op != s.op && inSpan && overlap;
    });
    if (!shared)
      plan.noReuse.push_back(s.op);
  }
  return plan;
}

struct PlanLdsPass : mlir::tessel::impl::TesselPlanLdsBase<PlanLdsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    TesselDialect &dialect = tesselDialect(module.getContext());
    int64_t total = 0;
    if (failed(verifyEveryTileHasLayout(module)))
      return signalPassFailure();
    IntegerAttr limit = dialect.getLdsLimitAttrHelper().getAttr(module);
    Operation *largest = nullptr;
    int64_t largestBytes = 0;
    Builder b(module.getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      // Disjoint bytes for consecutive users when that costs little LDS.
      FunctionPlan plan = planFunction(func, /*keepUntilBarrier=*/false);
      FunctionPlan spread = planFunction(func, /*keepUntilBarrier=*/true);
      if (spread.total <= plan.total + kNoReuseBudgetBytes && (!limit || spread.total <= limit.getInt()))
        plan = std::move(spread);
      for (Buffer &buf : plan.buffers) {
        dialect.getLdsOffsetAttrHelper().setAttr(buf.op, b.getI64IntegerAttr(buf.offset));
        if (buf.bytes > largestBytes) {
          largestBytes = buf.bytes;
          largest = buf.op;
        }
      }
      for (Operation *op : plan.noReuse)
        dialect.getLdsNoReuseAttrHelper().setAttr(op, b.getUnitAttr());
      total = std::max(total, plan.total);
    }
    dialect.getLdsBytesAttrHelper().setAttr(module, b.getI64IntegerAttr(total));
    if (limit && total > limit.getInt()) {
      StringAttr target = dialect.getTargetAttrHelper().getAttr(module);
      emitUserError(largest) << "needs " << largestBytes << " bytes of LDS (workgroup memory) for "
                           << cast<LdsScratchOpInterface>(largest).describeLdsUse() << "; the kernel's LDS plan totals " << total
                           << " bytes but " << (target ? target.getValue() : "the target")
                           << " has " << limit.getInt()
                           << "; use smaller tiles (a smaller block size) or fewer warps";
      signalPassFailure();
    }
  }
};

} // namespace
