// Layout assignment (see Passes.td). The ops state their constraints
// (LayoutRulesOpInterface); LayoutSolver.cpp groups the tiles that share a
// layout and inserts the conversions where constraints cannot all hold.
// Each group then gets its layout here: a dot's matrix layout, the slice of
// another group's, a permuted one, or a blocked layout chosen from the axis
// analysis of its memory accesses.
#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "LayoutSolver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELASSIGNLAYOUTS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isTile(Value v) { return isa<RankedTensorType>(v.getType()); }

// Ops whose tile results are cheap to compute again where they are used.
bool isRematerializable(Operation *op) {
  if (!op || op->getNumResults() != 1 || op->getNumRegions() != 0)
    return false;
  if (isa<MakeRangeOp, SplatOp, arith::ConstantOp>(op))
    return true; // no tile operands
  if (!isa<BroadcastOp, ExpandDimsOp>(op) &&
      !isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return false;
  for (Value operand : op->getOperands())
    if (isTile(operand) && !isRematerializable(operand.getDefiningOp()))
      return false;
  return true;
}

// Gives every tessel.expand_dims and tessel.broadcast its own copy of a
// cheap operand computation, so one index tile used along two axes (or
// broadcast to two shapes) does not need a layout conversion.
void rematerializeShapeOperands(func::FuncOp func) {
  SmallVector<Operation *> expands;
  func.walk([&](Operation *op) {
    if (isa<ExpandDimsOp, BroadcastOp>(op))
      expands.push_back(op);
  });
  for (Operation *expand : expands) {
    Operation *def = expand->getOperand(0).getDefiningOp();
    // Cloned even when used once: the tree may share values with tiles of
    // another layout (the same range indexing a load elsewhere).
    if (!isRematerializable(def))
      continue;
    OpBuilder builder(expand);
    IRMapping mapping;
    std::function<Value(Value)> cloneTree = [&](Value v) -> Value {
      if (!isTile(v))
        return v;
      if (Value mapped = mapping.lookupOrNull(v))
        return mapped;
      Operation *op = v.getDefiningOp();
      for (Value operand : op->getOperands())
        cloneTree(operand);
      Operation *copy = builder.clone(*op, mapping);
      return copy->getResult(0);
    };
    expand->setOperand(0, cloneTree(expand->getOperand(0)));
  }
  // Drop originals nobody uses any more.
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : llvm::reverse(ops))
    if (op->getNumResults() == 1 && isTile(op->getResult(0)) && op->use_empty() &&
        isRematerializable(op))
      op->erase();
}

struct AssignLayoutsPass : mlir::tessel::impl::TesselAssignLayoutsBase<AssignLayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<KernelConfig> config = getKernelConfig(module, getArgument());
    if (failed(config))
      return signalPassFailure();
    numWarps_ = config->numWarps;
    waveSize_ = config->waveSize;
    StringAttr target = tesselDialect(module.getContext()).getTargetAttrHelper().getAttr(module);
    arch_ = target ? target.getValue().str() : "";
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(assign(func)))
        return signalPassFailure();
  }

  unsigned numWarps_ = 4, waveSize_ = 64;
  std::string arch_;
  LayoutGroups groups_;

  LayoutGroup &groupOf(Value v) { return groups_.groups[groups_.of(v)]; }

  LogicalResult assign(func::FuncOp func) {
    rematerializeShapeOperands(func);
    FailureOr<LayoutGroups> groups = solveLayoutConstraints(func, arch_, numWarps_, waveSize_);
    if (failed(groups))
      return failure();
    groups_ = std::move(*groups);
    AxisInfoAnalysis axis(func);

    // What the memory accesses want.
    for (auto [ptr, mask] : groups_.accesses) {
      unsigned dim = axis.contiguousDim(ptr);
      groupOf(ptr).anchors.push_back({dim, axis.vectorWidth(ptr, dim, mask)});
    }

    // Layout per group: blocked, or a slice of the parent group's.
    MLIRContext *ctx = func.getContext();
    std::function<Attribute(unsigned)> layoutOf = [&](unsigned root) -> Attribute {
      LayoutGroup &g = groups_.groups[root];
      if (g.layout)
        return g.layout;
      if (g.fixed)
        return g.layout = g.fixed;
      if (g.sliceOf) {
        unsigned parentRoot = g.sliceOf->second;
        if (g.resolving)
          return {};
        g.resolving = true;
        Attribute parent = layoutOf(parentRoot);
        if (!parent)
          return {};
        return g.layout = SliceLayoutAttr::get(ctx, g.sliceOf->first,
                                               cast<DistributedLayoutAttr>(parent));
      }
      if (g.permuteOf && g.anchors.empty() && !g.scanAxis && !g.resolving) {
        g.resolving = true;
        auto blocked = dyn_cast_or_null<BlockedLayoutAttr>(layoutOf(g.permuteOf->second));
        g.resolving = false;
        if (blocked)
          return g.layout = permutedBlocked(blocked, g.permuteOf->first);
      }
      unsigned rank = g.shape.size();
      SmallVector<unsigned> order;
      int64_t vec = std::numeric_limits<int64_t>::max();
      if (!g.anchors.empty()) {
        // Each thread holds runs as long as the widest access along the
        // contiguous dim wants (8 halves for a 16-byte f16 load); an f32
        // access of the same tile moves such a run as two 16-byte vectors.
        // An access along another dim wants single elements.
        order.push_back(g.anchors.front().dim);
        bool allAlong = true;
        int64_t widest = 1;
        for (auto &a : g.anchors) {
          allAlong &= a.dim == order[0];
          widest = std::max(widest, a.vec);
        }
        vec = allAlong ? widest : 1;
      } else {
        vec = 1;
      }
      for (int d = rank - 1; d >= 0; --d)
        if (order.empty() || unsigned(d) != order[0])
          order.push_back(d);
      // A dot operand's K run, as long as every thread still holds distinct
      // elements (no replication).
      std::optional<std::pair<unsigned, int64_t>> run;
      if (g.operandRun && g.operandRun->first != order[0]) {
        int64_t elements = 1;
        for (int64_t d : g.shape)
          elements *= d;
        int64_t perThread = elements / (int64_t(numWarps_) * waveSize_) / std::min<int64_t>(vec, g.shape[order[0]]);
        if (int64_t n = std::min(g.operandRun->second, perThread); n >= 2)
          run = {g.operandRun->first, n};
      }
      BlockedLayoutAttr blocked = makeBlockedLayout(ctx, g.shape, order, vec, numWarps_, waveSize_, run);
      if (g.scanAxis)
        blocked = oneChunkPerThread(blocked, g.shape, *g.scanAxis);
      return g.layout = blocked;
    };

    // Rewrite every tile type; record vector widths.
    auto withLayout = [&](Value v) -> LogicalResult {
      auto type = cast<RankedTensorType>(v.getType());
      if (!groups_.groupOf.count(v))
        return emitError(v.getLoc(), "a tile in no layout group (compiler bug)");
      Attribute layout = layoutOf(groups_.of(v));
      if (!layout)
        return emitError(v.getLoc(), "cyclic layout constraint (compiler bug)");
      v.setType(RankedTensorType::get(type.getShape(), type.getElementType(), layout));
      return success();
    };
    WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
      for (Value v : op->getResults())
        if (isTile(v) && failed(withLayout(v)))
          return WalkResult::interrupt();
      if (auto c = dyn_cast<arith::ConstantOp>(op))
        if (auto dense = dyn_cast<DenseElementsAttr>(c.getValue()); dense && isTile(c))
          c.setValueAttr(dense.isSplat()
                             ? DenseElementsAttr::get(cast<ShapedType>(c.getType()),
                                                      dense.getSplatValue<Attribute>())
                             : DenseElementsAttr::getFromRawBuffer(
                                   cast<ShapedType>(c.getType()), dense.getRawData()));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    // Tile arguments (in tests of the pass; kernels take scalars and pointers).
    for (BlockArgument arg : func.getArguments())
      if (isTile(arg) && failed(withLayout(arg)))
        return failure();
    // Loop bodies' block arguments: the carried tiles.
    walk = func.walk([&](Operation *op) -> WalkResult {
      if (op == func.getOperation())
        return WalkResult::advance();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (isTile(arg) && failed(withLayout(arg)))
              return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    func.setType(FunctionType::get(ctx, func.getBody().getArgumentTypes(),
                                   func.getFunctionType().getResults()));

    if (failed(checkRegisterBudget(func)))
      return failure();

    auto vecFor = [&](Value ptr, Value mask) -> int64_t {
      if (!isTile(ptr))
        return 1;
      unsigned dim = axis.contiguousDim(ptr);
      int64_t want = axis.vectorWidth(ptr, dim, mask);
      return std::max<int64_t>(
          1, std::min(want, contiguousPerThread(cast<RankedTensorType>(ptr.getType()), dim)));
    };
    func.walk([&](Operation *op) {
      if (auto load = dyn_cast<LoadOp>(op))
        load.setVec(vecFor(load.getPtr(), load.getMask()));
      if (auto store = dyn_cast<StoreOp>(op))
        store.setVec(vecFor(store.getPtr(), store.getMask()));
      if (auto atomic = dyn_cast<AtomicRMWOp>(op); atomic && packsPairs(atomic))
        atomic.setVec(std::min<int64_t>(2, vecFor(atomic.getPtr(), atomic.getMask())));
    });
    return success();
  }

  // A thread's vector registers hold its share of every tile, packed as the
  // hardware holds them: two 16-bit or four 8-bit elements (or booleans) in
  // a 32-bit register, a 64-bit element or pointer in two. A tile over the
  // 256 a thread has compiles (as Triton's does): the code object spills to
  // scratch memory, and the compile warns. The AMDGPU code generation of such
  // straight-line code grows with the tile, though (a load, multiply and
  // store through one wave, whose pointer tile is the largest: 1024
  // registers ~1 s, 2048 ~6-15 s, 4096 ~15-25 s, 8192 ~35-40 s, 16384 ~65 s
  // on gfx942 and gfx1100 here), and its scratch toward LLVM's per-thread
  // stack limit, so a tile past kMaxRegistersPerTile is an error at its op's
  // line. 8192 still lets every tile Triton allows (2^20 elements, pointers
  // too) compile on 4 waves of 64 threads or 8 of 32.
  static constexpr int64_t kRegistersPerThread = 256;
  static constexpr int64_t kMaxRegistersPerTile = 8192;
  LogicalResult checkRegisterBudget(func::FuncOp func) {
    WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
      // A splat constant is one value (an immediate where it is used), not a
      // tile of registers; its users' tiles are counted.
      if (auto constant = dyn_cast<arith::ConstantOp>(op); constant && isa<SplatElementsAttr>(constant.getValue()))
        return WalkResult::advance();
      for (Value v : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type)
          continue;
        int64_t registers = packedRegistersPerThread(type);
        if (registers <= kMaxRegistersPerTile)
          continue;
        std::string shape;
        for (int64_t d : type.getShape())
          shape += (shape.empty() ? "" : ", ") + std::to_string(d);
        std::string elemName;
        llvm::raw_string_ostream os(elemName);
        if (auto ptr = dyn_cast<PtrType>(type.getElementType()))
          os << "pointers to " << ptr.getPointeeType();
        else
          os << type.getElementType();
        emitUserError(op) << "this tile ([" << shape << "] " << elemName << ") needs " << registers
                        << " registers per thread: " << numWarps_
                        << (numWarps_ == 1 ? " wave of " : " waves of ") << waveSize_
                        << " threads share it; a thread has " << kRegistersPerThread
                        << " (more spill to scratch memory), and tessel compiles at most "
                        << kMaxRegistersPerTile << " per tile; use a smaller block or more warps (num_warps)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  // The blocked layout of a tile whose dim i is dim order[i] of a tile of
  // layout `l`: every thread holds the same elements.
  static BlockedLayoutAttr permutedBlocked(BlockedLayoutAttr l, ArrayRef<int32_t> order) {
    SmallVector<unsigned> spt, tpw, wpb, fastest;
    for (int32_t d : order) {
      spt.push_back(l.getSizePerThread()[d]);
      tpw.push_back(l.getThreadsPerWave()[d]);
      wpb.push_back(l.getWavesPerBlock()[d]);
    }
    for (unsigned d : l.getOrder())
      fastest.push_back(unsigned(llvm::find(order, int32_t(d)) - order.begin()));
    return BlockedLayoutAttr::get(l.getContext(), spt, tpw, wpb, fastest);
  }

  // A scan walks its axis in order: each thread holds one contiguous chunk
  // along it (no repetitions), so the thread, lane and wave orders agree.
  static BlockedLayoutAttr oneChunkPerThread(BlockedLayoutAttr l, ArrayRef<int64_t> shape,
                                             unsigned axis) {
    SmallVector<unsigned> spt(l.getSizePerThread());
    int64_t cover = int64_t(l.getThreadsPerWave()[axis]) * l.getWavesPerBlock()[axis];
    spt[axis] = std::max<int64_t>(spt[axis], shape[axis] / cover);
    return BlockedLayoutAttr::get(l.getContext(), spt, l.getThreadsPerWave(),
                                  l.getWavesPerBlock(), l.getOrder());
  }
};

} // namespace
