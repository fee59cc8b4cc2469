// Layout assignment (see Passes.td). Tiles that must share a layout are
// grouped with a union-find; each group gets one blocked layout chosen from
// the axis analysis of its memory ops, or the slice of another group's layout
// when it feeds tessel.expand_dims.
#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "DotLayouts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELASSIGNLAYOUTS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isTile(Value v) { return isa<RankedTensorType>(v.getType()); }

// An atomic add of 16-bit floats moves pairs as one packed atomic where
// its pointers allow (the backend's global_atomic_pk_add_{f16,bf16}, or a
// 32-bit compare-and-swap loop where the target has none).
bool packsPairs(AtomicRMWOp op) {
  Type elem = pointeeOf(op.getPtr().getType());
  return op.getKind() == AtomicKind::add && (elem.isF16() || elem.isBF16()) && isa<RankedTensorType>(op.getPtr().getType());
}

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

struct UnionFind {
  llvm::DenseMap<Value, unsigned> id;
  SmallVector<unsigned> parent;
  SmallVector<Value> values;
  // Per root: each dim's extent among members wider than 1 there (0: all 1).
  // A group must agree on it: one layout cannot spread 16 and 2048 rows.
  SmallVector<SmallVector<int64_t>> extents;
  unsigned get(Value v) {
    auto [it, inserted] = id.try_emplace(v, parent.size());
    if (inserted) {
      parent.push_back(parent.size());
      values.push_back(v);
      SmallVector<int64_t> e;
      for (int64_t d : cast<RankedTensorType>(v.getType()).getShape())
        e.push_back(d == 1 ? 0 : d);
      extents.push_back(e);
    }
    return it->second;
  }
  unsigned find(unsigned x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  bool compatible(Value a, Value b) {
    auto &ea = extents[find(get(a))], &eb = extents[find(get(b))];
    if (ea.size() != eb.size())
      return false;
    for (size_t d = 0; d < ea.size(); ++d)
      if (ea[d] && eb[d] && ea[d] != eb[d])
        return false;
    return true;
  }
  void unite(Value a, Value b) {
    unsigned ra = find(get(a)), rb = find(get(b));
    if (ra == rb)
      return;
    for (size_t d = 0; d < extents[rb].size() && d < extents[ra].size(); ++d)
      extents[rb][d] = std::max(extents[rb][d], extents[ra][d]);
    parent[ra] = rb;
  }
};

struct LayoutGroup {
  SmallVector<int64_t> shape; // the extent of each dim (members agree or are 1)
  struct Anchor {
    unsigned dim;
    int64_t vec;
  };
  SmallVector<Anchor> anchors;
  // Set when the group's layout must be a slice of another group's: it feeds
  // tessel.expand_dims, or it is the result of tessel.reduce.
  std::optional<std::pair<unsigned, Value>> sliceOf; // (axis, a value of the parent group)
  std::optional<unsigned> scanAxis; // a scan runs along this dim: one chunk per thread
  // The group is a tessel.permute's result: with no access of its own to
  // suit, it takes its source's layout, permuted (no data moves).
  std::optional<std::pair<ArrayRef<int32_t>, Value>> permuteOf; // (order, the source)
  Attribute fixed; // a matrix-core layout a dot gives the group
  Operation *fixedBy = nullptr; // the dot whose accumulator gave it
  // The group goes (through LDS) into a dot operand, which reads runs of
  // `second` elements along dim `first` (K): holding such runs too, a thread
  // writes them to LDS as vectors even when its loads run along another dim.
  std::optional<std::pair<unsigned, int64_t>> operandRun;
  Attribute layout;
  bool resolving = false;
};

// Ops whose tile operands and results may live in different layouts: they
// move data through LDS.
bool movesThroughLds(Operation *op) {
  return isa<ConvertLayoutOp, ReshapeOp, PermuteOp, JoinOp, SplitOp, HistogramOp>(op);
}

// A tessel.convert_layout of `v` to a tile of no layout yet (the assignment
// gives it one).
Value convertedCopy(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return b.create<ConvertLayoutOp>(loc, RankedTensorType::get(type.getShape(), type.getElementType()), v);
}

// The users of `v` (a result of `def`) read a converted copy made after `def`.
void convertForUsers(Operation *def, Value v) {
  OpBuilder b(def->getContext());
  b.setInsertionPointAfter(def);
  Value copy = convertedCopy(b, def->getLoc(), v);
  v.replaceAllUsesExcept(copy, copy.getDefiningOp());
}

// `operand` reads a converted copy made before its op.
void convertOperand(OpOperand &operand) {
  OpBuilder b(operand.getOwner());
  operand.set(convertedCopy(b, operand.getOwner()->getLoc(), operand.get()));
}

// Gives `operands` of `op` and `results` conversions of their own, so that
// they form layout groups of their own. False when they already have them.
bool isolate(Operation *op, ArrayRef<OpOperand *> operands, ValueRange results) {
  bool changed = false;
  for (OpOperand *operand : operands) {
    Value v = operand->get();
    if (v.getDefiningOp<ConvertLayoutOp>() && v.hasOneUse())
      continue;
    convertOperand(*operand);
    changed = true;
  }
  for (Value res : results) {
    if (llvm::all_of(res.getUsers(), [](Operation *u) { return isa<ConvertLayoutOp>(u); }))
      continue;
    convertForUsers(op, res);
    changed = true;
  }
  return changed;
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
  UnionFind uf_;
  llvm::DenseMap<unsigned, LayoutGroup> groups_;

  LayoutGroup &groupOf(Value v) { return groups_[uf_.find(uf_.get(v))]; }

  // `op` needs `a` and `b` in one layout. When their groups disagree on an
  // extent, the operand among them is remembered to be cut loose.
  std::optional<std::pair<Operation *, Value>> cut_;
  void uniteOrCut(Value a, Value b, Operation *op) {
    if (uf_.compatible(a, b)) {
      uf_.unite(a, b);
      return;
    }
    if (!cut_) {
      bool bIsOperand = llvm::is_contained(op->getOperands(), b);
      cut_ = {op, bIsOperand ? b : a};
    }
  }
  unsigned rootOf(Value v) { return uf_.find(uf_.get(v)); }

  // Groups tiles and records slice constraints. On a conflicting constraint
  // it inserts a tessel.convert_layout that resolves it and returns true:
  // the caller starts over.
  FailureOr<bool> buildGroups(func::FuncOp func) {
    uf_ = UnionFind();
    groups_.clear();
    cut_.reset();
    struct SliceConstraint {
      Value child, parent;
      unsigned axis;
      Operation *op;
    };
    SmallVector<SliceConstraint> constraints;
    SmallVector<ScanOp> scans;
    SmallVector<PermuteOp> permutes;
    SmallVector<DotOp> dots;
    // Tile arguments (tests of the pass) may have no users: give them a group too.
    for (BlockArgument arg : func.getArguments())
      if (isTile(arg))
        uf_.get(arg);
    func.walk([&](Operation *op) {
      SmallVector<Value> tiles;
      for (Value v : op->getOperands())
        if (isTile(v))
          tiles.push_back(v);
      for (Value v : op->getResults())
        if (isTile(v))
          tiles.push_back(v);
      for (Value v : tiles)
        uf_.get(v);
      if (auto e = dyn_cast<ExpandDimsOp>(op)) {
        constraints.push_back({e.getSrc(), e.getResult(), unsigned(e.getAxis()), op});
        return;
      }
      if (auto r = dyn_cast<ReduceOp>(op)) {
        for (Value src : r.getSrcs())
          uniteOrCut(r.getSrcs()[0], src, op);
        for (Value res : r.getResults())
          if (isTile(res))
            constraints.insert(constraints.begin(),
                               {res, r.getSrcs()[0], unsigned(r.getAxis()), op});
        return;
      }
      if (auto scan = dyn_cast<ScanOp>(op))
        scans.push_back(scan);
      if (auto permute = dyn_cast<PermuteOp>(op))
        permutes.push_back(permute);
      // A dot's accumulator and result share the matrix-core layout; its
      // operands, each a conversion of its own, take the operand layouts.
      if (auto dot = dyn_cast<DotOp>(op)) {
        dots.push_back(dot);
        uniteOrCut(dot.getResult(), dot.getC(), op);
        return;
      }
      // A loop-carried tile has one layout: its initial value, the body's
      // block argument, what the body yields and the loop's result. Where
      // they disagree the value is converted on the way in (before the loop,
      // before the yield) or out (after the loop).
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        for (auto [init, arg, result] :
             llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(), loop.getResults())) {
          if (!isTile(arg))
            continue;
          uniteOrCut(arg, init, op);
          if (uf_.compatible(arg, result))
            uf_.unite(arg, result);
          else if (!cut_)
            cut_ = {op, result};
        }
        return;
      }
      // A while loop's carried tile: init, the condition's block argument and
      // what it forwards, the body's block argument and yield, the result.
      if (auto loop = dyn_cast<scf::WhileOp>(op)) {
        for (auto [init, arg, bodyArg, result] : llvm::zip(loop.getInits(), loop.getBeforeArguments(),
                                                           loop.getAfterArguments(), loop.getResults())) {
          if (!isTile(arg))
            continue;
          uniteOrCut(arg, init, op);
          uf_.unite(arg, bodyArg); // one shape: the same extents
          if (uf_.compatible(arg, result))
            uf_.unite(arg, result);
          else if (!cut_)
            cut_ = {op, result};
        }
        return;
      }
      if (auto condition = dyn_cast<scf::ConditionOp>(op)) {
        auto loop = cast<scf::WhileOp>(op->getParentOp());
        for (auto [value, arg] : llvm::zip(condition.getArgs(), loop.getBeforeArguments()))
          if (isTile(value))
            uniteOrCut(arg, value, op);
        return;
      }
      // An if's results each take one layout with what each branch yields.
      if (isa<scf::IfOp>(op))
        return;
      if (auto yield = dyn_cast<scf::YieldOp>(op)) {
        if (auto loop = dyn_cast<scf::ForOp>(op->getParentOp())) {
          for (auto [value, arg] : llvm::zip(yield.getOperands(), loop.getRegionIterArgs()))
            if (isTile(value))
              uniteOrCut(arg, value, op);
        } else if (auto loop = dyn_cast<scf::WhileOp>(op->getParentOp())) {
          for (auto [value, arg] : llvm::zip(yield.getOperands(), loop.getBeforeArguments()))
            if (isTile(value))
              uniteOrCut(arg, value, op);
        } else {
          for (auto [value, result] : llvm::zip(yield.getOperands(), op->getParentOp()->getResults()))
            if (isTile(value))
              uniteOrCut(result, value, op);
        }
        return;
      }
      // A gather reads its source through LDS; its result takes its indices'
      // layout (each thread reads for the indices it holds).
      if (auto histogram = dyn_cast<HistogramOp>(op)) {
        if (histogram.getMask())
          uniteOrCut(histogram.getSrc(), histogram.getMask(), op);
        return;
      }
      if (auto gather = dyn_cast<GatherOp>(op)) {
        uniteOrCut(gather.getIndices(), gather.getResult(), op);
        return;
      }
      if (isa<SplatOp, MakeRangeOp, arith::ConstantOp, ub::PoisonOp>(op) || movesThroughLds(op))
        return;
      for (size_t i = 1; i < tiles.size(); ++i)
        uniteOrCut(tiles[0], tiles[i], op);
    });
    if (cut_) {
      // One layout cannot hold both: the operand gets a converted copy (or
      // the result, a loop's, is converted for its users).
      auto [op, value] = *cut_;
      cut_.reset();
      if (value.getDefiningOp() == op) {
        convertForUsers(op, value);
        return true;
      }
      OpBuilder b(op);
      Value copy = convertedCopy(b, op->getLoc(), value);
      for (OpOperand &use : op->getOpOperands())
        if (use.get() == value)
          use.set(copy);
      return true;
    }
    for (DotOp dot : dots)
      if (isolateDotOperands(dot))
        return true;
    // A group's shape: the extents its members agree on (1 where all are 1).
    for (unsigned i = 0; i < uf_.values.size(); ++i) {
      unsigned root = uf_.find(i);
      LayoutGroup &g = groups_[root];
      if (g.shape.empty())
        for (int64_t e : uf_.extents[root])
          g.shape.push_back(e ? e : 1);
    }
    for (const SliceConstraint &c : constraints) {
      LayoutGroup &g = groupOf(c.child);
      if (g.sliceOf && (g.sliceOf->first != c.axis ||
                        rootOf(g.sliceOf->second) != rootOf(c.parent))) {
        resolveConflict(c.op, c.child);
        return true;
      }
      g.sliceOf = {c.axis, c.parent};
    }
    for (PermuteOp permute : permutes) {
      LayoutGroup &g = groupOf(permute.getResult());
      if (!g.permuteOf && rootOf(permute.getSrc()) != rootOf(permute.getResult()))
        g.permuteOf = {permute.getOrder(), permute.getSrc()};
    }
    for (DotOp dot : dots) {
      FailureOr<bool> restart = fixDotLayouts(dot);
      if (failed(restart) || *restart)
        return restart;
    }
    // A scan needs one contiguous chunk per thread along its axis: a slice
    // layout, a dot's layout, or a group scanned along another axis too,
    // cannot give it that.
    for (ScanOp scan : scans) {
      LayoutGroup &g = groupOf(scan.getSrcs()[0]);
      if (g.sliceOf || g.fixed || (g.scanAxis && *g.scanAxis != scan.getAxis())) {
        if (isolateScan(scan))
          return true;
        return scan.emitError("cannot give this scan a layout of its own (compiler bug)");
      }
      g.scanAxis = scan.getAxis();
    }
    return false;
  }

  // Gives each operand of `dot` a conversion of its own (from whatever
  // layout its producer has to the operand layout). False when it has them.
  bool isolateDotOperands(DotOp dot) { return isolate(dot, {&dot.getAMutable(), &dot.getBMutable()}, {}); }

  // The layouts the target's matrix instruction (or the FMA path) gives
  // `dot` (DotLayouts.cpp), fixed on the groups of its result and operands.
  // True when a conversion was inserted instead (the caller starts over).
  FailureOr<bool> fixDotLayouts(DotOp dot) {
    FailureOr<DotLayouts> layouts = chooseDotLayouts(dot, arch_, numWarps_, waveSize_);
    if (failed(layouts))
      return failure();
    return fixDotGroups(dot, layouts->accumulator, layouts->kWidth, layouts->kGroup);
  }

  // Fixes the layouts of `dot`'s accumulator group and operand groups. Two
  // dots whose accumulators meet (one's result is the other's acc, or both
  // are carried by one loop) in different layouts: one of them gets its
  // accumulator and result through conversions of their own, the one less
  // deep in loops, so a loop-carried accumulator keeps its layout.
  FailureOr<bool> fixDotGroups(DotOp dot, DistributedLayoutAttr acc, unsigned kWidth, unsigned kGroup) {
    MLIRContext *ctx = dot.getContext();
    LayoutGroup &accGroup = groupOf(dot.getResult());
    if (accGroup.fixed && accGroup.fixed != acc) {
      auto other = cast<DotOp>(accGroup.fixedBy);
      auto depth = [](Operation *op) {
        unsigned d = 0;
        for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
          d += isa<scf::ForOp, scf::WhileOp>(p);
        return d;
      };
      DotOp first = depth(other) <= depth(dot) ? other : dot, second = first == dot ? other : dot;
      if (isolateAccumulator(first) || isolateAccumulator(second))
        return true;
      return dot.emitError("cannot give this dot's accumulator a layout of its own (compiler bug)");
    }
    accGroup.fixed = acc;
    accGroup.fixedBy = dot;
    const unsigned rank = cast<RankedTensorType>(dot.getType()).getRank();
    for (auto [operand, kDim] : {std::pair{dot.getA(), rank - 1}, std::pair{dot.getB(), rank - 2}})
      if (auto convert = operand.getDefiningOp<ConvertLayoutOp>())
        groupOf(convert.getSrc()).operandRun = {kDim, kGroup ? kGroup : kWidth};
    // Each operand is a conversion of its own (isolateDotOperands).
    groupOf(dot.getA()).fixed = DotOperandLayoutAttr::get(ctx, 0, acc, kWidth, kGroup);
    groupOf(dot.getB()).fixed = DotOperandLayoutAttr::get(ctx, 1, acc, kWidth, kGroup);
    return false;
  }

  // Moves `dot`'s accumulator and result through conversions of their own.
  // False when they already are.
  bool isolateAccumulator(DotOp dot) { return isolate(dot, {&dot.getCMutable()}, dot->getResults()); }

  // Moves a scan's operands and results through layout conversions so that
  // its tiles form a group of their own. False when they already do.
  bool isolateScan(ScanOp scan) {
    SmallVector<OpOperand *> operands;
    for (OpOperand &operand : scan->getOpOperands())
      operands.push_back(&operand);
    return isolate(scan, operands, scan->getResults());
  }

  // `value` is needed in two layouts at `op`: give `op` its own copy,
  // moved through LDS.
  void resolveConflict(Operation *op, Value value) {
    if (auto e = dyn_cast<ExpandDimsOp>(op))
      return convertOperand(e.getSrcMutable());
    // A reduce result: its users get a converted copy.
    convertForUsers(op, value);
  }

  LogicalResult assign(func::FuncOp func) {
    rematerializeShapeOperands(func);
    for (int attempt = 0;; ++attempt) {
      FailureOr<bool> restart = buildGroups(func);
      if (failed(restart))
        return failure();
      if (!*restart)
        break;
      if (attempt > 10000)
        return func.emitError("layout assignment did not converge (compiler bug)");
    }
    AxisInfoAnalysis axis(func);

    // What the memory ops want.
    auto addAnchor = [&](Value ptr, Value mask) {
      if (!isTile(ptr))
        return; // a scalar access: every thread does the same
      unsigned dim = axis.contiguousDim(ptr);
      groupOf(ptr).anchors.push_back({dim, axis.vectorWidth(ptr, dim, mask)});
    };
    func.walk([&](Operation *op) {
      if (auto load = dyn_cast<LoadOp>(op))
        addAnchor(load.getPtr(), load.getMask());
      if (auto store = dyn_cast<StoreOp>(op))
        addAnchor(store.getPtr(), store.getMask());
      if (auto atomic = dyn_cast<AtomicRMWOp>(op); atomic && packsPairs(atomic))
        addAnchor(atomic.getPtr(), atomic.getMask());
    });

    // Layout per group: blocked, or a slice of the parent group's.
    MLIRContext *ctx = func.getContext();
    std::function<Attribute(unsigned)> layoutOf = [&](unsigned root) -> Attribute {
      LayoutGroup &g = groups_[root];
      if (g.layout)
        return g.layout;
      if (g.fixed)
        return g.layout = g.fixed;
      if (g.sliceOf) {
        unsigned parentRoot = rootOf(g.sliceOf->second);
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
        auto blocked = dyn_cast_or_null<BlockedLayoutAttr>(layoutOf(rootOf(g.permuteOf->second)));
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
      Attribute layout = layoutOf(rootOf(v));
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
