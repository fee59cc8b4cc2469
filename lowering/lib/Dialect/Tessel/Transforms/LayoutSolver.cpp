// The layout constraint solver (see LayoutSolver.h).
//
// Each op states its constraints once (LayoutRulesOpInterface; control flow
// here). Tiles that must share a layout are united (a union-find over
// "nodes"); where two cannot (their extents disagree, two slices or two dot
// layouts meet, a scan needs a chunk per thread), one side is cut loose: a
// node standing for a converted copy replaces it for one op, one operand,
// or all its users. The solution is recomputed in memory from the stated
// constraints until no cut is needed, and only then are the copies made, as
// tessel.convert_layout ops.
#include "LayoutSolver.h"
#include "DotLayouts.h"
#include "PipelineDirectLds.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isTile(Value v) { return isa<RankedTensorType>(v.getType()); }

// A tile as one op sees it: an operand slot of that op, or (use null) the
// value as it is defined.
struct Endpoint {
  Value value;
  OpOperand *use = nullptr;
};

// The tile a node stands for: the value itself, or a converted copy of it
// made for all its users, for all its uses in one op, or for one operand.
enum class Copy { None, ForUsers, ForOp, ForOperand };
struct Node {
  Value value;
  Copy copy = Copy::None;
  Operation *at = nullptr; // ForOp
  OpOperand *use = nullptr; // ForOperand
};

class Solver final : public LayoutConstraints {
public:
  Solver(func::FuncOp func, const std::string &arch, unsigned numWarps, unsigned waveSize)
      : func_(func), arch_(arch), numWarps_(numWarps), waveSize_(waveSize) {}

  FailureOr<LayoutGroups> solve();

  // LayoutConstraints: what the op being visited (current_) states.
  void same(Value keep, Value cut) override {
    for (const Endpoint &k : endpoints(keep))
      for (const Endpoint &c : endpoints(cut))
        edges_.push_back({k, c, current_, false});
  }
  void same(Value keep, OpOperand &cut) override {
    for (const Endpoint &k : endpoints(keep))
      edges_.push_back({k, {cut.get(), &cut}, current_, false});
  }
  void sliceOf(Value child, Value parent, unsigned axis) override {
    Slice s{endpoints(child).front(), endpoints(parent).front(), axis, current_};
    // A reduction's result has its slice before any expand_dims asks for
    // one: a conflict converts what expand_dims widens.
    if (s.child.use)
      widenSlices_.push_back(s);
    else
      reduceSlices_.push_back(s);
  }
  void permuteOf(Value result, Value src, ArrayRef<int32_t> order) override {
    permutes_.push_back({endpoints(result).front(), endpoints(src).front(), order});
  }
  void scanAlong(unsigned axis) override { scans_.push_back({current_, axis}); }
  void access(Value ptr, Value mask) override {
    if (!isTile(ptr))
      return; // a scalar access: every thread does the same
    accesses_.push_back({endpoints(ptr).front().use, mask ? endpoints(mask).front().use : nullptr});
  }
  void matrixProduct(DotOp dot) override { dots_.push_back(dot); }

private:
  struct Edge {
    Endpoint keep, cut;
    Operation *at;
    bool force; // always united (they have one type)
  };
  struct Slice {
    Endpoint child, parent;
    unsigned axis;
    Operation *at;
  };
  struct Permute {
    Endpoint result, src;
    ArrayRef<int32_t> order;
  };

  // `v` as the op being visited sees it: each operand slot holding it, or
  // its definition.
  SmallVector<Endpoint, 1> endpoints(Value v) {
    SmallVector<Endpoint, 1> out;
    for (OpOperand &use : current_->getOpOperands())
      if (use.get() == v)
        out.push_back({v, &use});
    if (out.empty())
      out.push_back({v, nullptr});
    return out;
  }
  void collect();
  void structuralRules(Operation *op);

  // --- nodes (cuts exist exactly when their nodes do)
  unsigned newNode(Node n) {
    nodes_.push_back(n);
    grow();
    return nodes_.size() - 1;
  }
  unsigned defNode(Value v) {
    auto [it, inserted] = defNode_.try_emplace(v, 0);
    if (inserted)
      it->second = newNode({v});
    return it->second;
  }
  unsigned resolve(const Endpoint &e) {
    if (!e.use)
      return defNode(e.value);
    if (auto it = operandNode_.find(e.use); it != operandNode_.end())
      return it->second;
    return withoutOperandCopy(e.use);
  }
  // What an operand slot reads before any copy made for it alone.
  unsigned withoutOperandCopy(OpOperand *use) {
    Value v = use->get();
    if (auto it = opNode_.find({v, use->getOwner()}); it != opNode_.end())
      return it->second;
    if (auto it = usersNode_.find(v); it != usersNode_.end())
      return it->second;
    return defNode(v);
  }
  // The node a copy is made from (the tile a tessel.convert_layout reads).
  std::optional<unsigned> sourceOf(const Endpoint &e) {
    unsigned n = resolve(e);
    switch (nodes_[n].copy) {
    case Copy::ForOperand:
      return withoutOperandCopy(nodes_[n].use);
    case Copy::ForOp:
      if (auto it = usersNode_.find(nodes_[n].value); it != usersNode_.end())
        return it->second;
      return defNode(nodes_[n].value);
    case Copy::ForUsers:
      return defNode(nodes_[n].value);
    case Copy::None:
      if (auto convert = e.value.getDefiningOp<ConvertLayoutOp>())
        return resolveAt(convert.getSrc(), convert);
      return std::nullopt;
    }
    return std::nullopt;
  }
  unsigned resolveAt(Value v, Operation *op) {
    for (OpOperand &use : op->getOpOperands())
      if (use.get() == v)
        return resolve({v, &use});
    return defNode(v);
  }
  // Cuts `e` loose at `at` (its uses in `at`, or its users when it is a
  // result). False when it already is.
  bool cut(const Endpoint &e, Operation *at) {
    if (e.use) {
      if (operandNode_.count(e.use))
        return false;
      auto [it, inserted] = opNode_.try_emplace({e.value, at}, 0);
      if (!inserted)
        return false;
      it->second = newNode({e.value, Copy::ForOp, at});
      return true;
    }
    return cutUsers(e.value);
  }
  bool cutUsers(Value v) {
    auto [it, inserted] = usersNode_.try_emplace(v, 0);
    if (inserted)
      it->second = newNode({v, Copy::ForUsers});
    return inserted;
  }
  bool cutOperand(OpOperand &use) {
    auto [it, inserted] = operandNode_.try_emplace(&use, 0);
    if (inserted)
      it->second = newNode({use.get(), Copy::ForOperand, nullptr, &use});
    return inserted;
  }
  // Gives `operands` of `op` and `results` copies of their own. False when
  // they already have them.
  bool isolate(Operation *op, ArrayRef<OpOperand *> operands, ValueRange results);

  // --- one solution: union-find over the nodes
  void reset() {
    parent_.clear();
    extents_.clear();
    groups_.clear();
    grow();
  }
  void grow() {
    while (parent_.size() < nodes_.size()) {
      parent_.push_back(parent_.size());
      SmallVector<int64_t> e;
      for (int64_t d : cast<RankedTensorType>(nodes_[parent_.size() - 1].value.getType()).getShape())
        e.push_back(d == 1 ? 0 : d);
      extents_.push_back(e);
    }
  }
  unsigned find(unsigned x) {
    while (parent_[x] != x)
      x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  // A group must agree on each dim's extent among members wider than 1
  // there: one layout cannot spread 16 and 2048 rows.
  bool compatible(unsigned a, unsigned b) {
    auto &ea = extents_[find(a)], &eb = extents_[find(b)];
    if (ea.size() != eb.size())
      return false;
    for (size_t d = 0; d < ea.size(); ++d)
      if (ea[d] && eb[d] && ea[d] != eb[d])
        return false;
    return true;
  }
  void unite(unsigned a, unsigned b) {
    unsigned ra = find(a), rb = find(b);
    if (ra == rb)
      return;
    for (size_t d = 0; d < extents_[rb].size() && d < extents_[ra].size(); ++d)
      extents_[rb][d] = std::max(extents_[rb][d], extents_[ra][d]);
    parent_[ra] = rb;
  }
  LayoutGroup &group(unsigned node) {
    unsigned root = find(node);
    LayoutGroup &g = groups_[root];
    if (g.shape.empty())
      for (int64_t e : extents_[root])
        g.shape.push_back(e ? e : 1);
    return g;
  }

  enum class Round { Solved, Again, Failed };
  Round solveOnce();
  Round fixDot(DotOp dot);
  Value materialize(unsigned node);
  FailureOr<LayoutGroups> result();

  func::FuncOp func_;
  std::string arch_;
  unsigned numWarps_, waveSize_;
  Operation *current_ = nullptr;

  SmallVector<Edge> edges_;
  SmallVector<Slice> reduceSlices_, widenSlices_;
  SmallVector<Permute> permutes_;
  SmallVector<std::pair<Operation *, unsigned>> scans_;
  SmallVector<DotOp> dots_;
  SmallVector<std::pair<OpOperand *, OpOperand *>> accesses_;

  SmallVector<Node> nodes_;
  llvm::DenseMap<Value, unsigned> defNode_, usersNode_;
  llvm::DenseMap<std::pair<Value, Operation *>, unsigned> opNode_;
  llvm::DenseMap<OpOperand *, unsigned> operandNode_;

  SmallVector<unsigned> parent_;
  SmallVector<SmallVector<int64_t>> extents_;
  llvm::DenseMap<unsigned, LayoutGroup> groups_; // by root
  llvm::DenseMap<unsigned, DotOp> fixedBy_;      // root -> the dot whose accumulator fixed it
  llvm::DenseMap<unsigned, Value> made_;         // node -> its tile, once made
};

// Control flow: a loop-carried tile has one layout (its initial value, the
// body's block argument, what the body yields, the loop's result); where
// they disagree the value is converted on the way in (before the loop,
// before the yield) or out (for the loop's users). An if's results each
// take one layout with what each branch yields.
void Solver::structuralRules(Operation *op) {
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    for (auto [init, arg, result] : llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(), loop.getResults()))
      if (isTile(arg)) {
        same(arg, init);
        same(arg, result);
      }
  } else if (auto loop = dyn_cast<scf::WhileOp>(op)) {
    for (auto [init, arg, bodyArg, result] :
         llvm::zip(loop.getInits(), loop.getBeforeArguments(), loop.getAfterArguments(), loop.getResults()))
      if (isTile(arg)) {
        same(arg, init);
        edges_.push_back({{arg}, {bodyArg}, op, true}); // one shape: the same extents
        same(arg, result);
      }
  } else if (auto condition = dyn_cast<scf::ConditionOp>(op)) {
    auto loop = cast<scf::WhileOp>(op->getParentOp());
    for (auto [value, arg] : llvm::zip(condition.getArgs(), loop.getBeforeArguments()))
      if (isTile(value))
        same(arg, value);
  } else if (auto yield = dyn_cast<scf::YieldOp>(op)) {
    ValueRange targets = op->getParentOp()->getResults();
    if (auto loop = dyn_cast<scf::ForOp>(op->getParentOp()))
      targets = loop.getRegionIterArgs();
    else if (auto loop = dyn_cast<scf::WhileOp>(op->getParentOp()))
      targets = loop.getBeforeArguments();
    for (auto [value, target] : llvm::zip(yield.getOperands(), targets))
      if (isTile(value))
        same(target, value);
  }
}

void Solver::collect() {
  // Tile arguments (tests of the pass) may have no users: give them a node too.
  for (BlockArgument arg : func_.getArguments())
    if (isTile(arg))
      defNode(arg);
  func_.walk([&](Operation *op) {
    current_ = op;
    for (Value v : op->getResults())
      if (isTile(v))
        defNode(v);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (isTile(arg))
            defNode(arg);
    if (isa<scf::ForOp, scf::WhileOp, scf::ConditionOp, scf::YieldOp, scf::IfOp>(op))
      structuralRules(op);
    else if (auto rules = dyn_cast<LayoutRulesOpInterface>(op))
      rules.addLayoutConstraints(*this);
    else
      sameAll(op);
  });
  current_ = nullptr;
  // A reduction's result is a slice of its operand before anything else
  // decides (the last reduction first).
  std::reverse(reduceSlices_.begin(), reduceSlices_.end());
}

bool Solver::isolate(Operation *op, ArrayRef<OpOperand *> operands, ValueRange results) {
  bool changed = false;
  for (OpOperand *operand : operands) {
    Value v = operand->get();
    Copy copy = nodes_[resolve({v, operand})].copy;
    // Already a copy of its own: one made for this operand or this op, or a
    // conversion (made for its users, or in the IR) this op alone reads.
    if (copy == Copy::ForOperand || copy == Copy::ForOp)
      continue;
    if (v.hasOneUse() && (copy == Copy::ForUsers || v.getDefiningOp<ConvertLayoutOp>()))
      continue;
    changed |= cutOperand(*operand);
  }
  for (Value res : results) {
    if (usersNode_.count(res))
      continue;
    bool converted = llvm::all_of(res.getUses(), [&](OpOperand &use) {
      return isa<ConvertLayoutOp>(use.getOwner()) || opNode_.count({res, use.getOwner()}) ||
             operandNode_.count(&use);
    });
    if (!converted)
      changed |= cutUsers(res);
  }
  return changed;
}

Solver::Round Solver::solveOnce() {
  reset();
  fixedBy_.clear();
  // Operand slots an edge has united so far: a cut there after that needs
  // the solution again (those edges saw the slot uncut).
  llvm::DenseSet<OpOperand *> seen;
  bool again = false;
  for (const Edge &e : edges_) {
    unsigned a = resolve(e.keep), b = resolve(e.cut);
    if (e.force || compatible(a, b)) {
      unite(a, b);
    } else {
      if (!cut(e.cut, e.at)) {
        e.at->emitError("layout assignment cannot cut a tile loose (compiler bug)");
        return Round::Failed;
      }
      // A result's users, or a slot an earlier edge saw: solve again.
      again |= !e.cut.use;
      for (OpOperand &use : e.at->getOpOperands())
        again |= use.get() == e.cut.value && seen.count(&use);
      b = resolve(e.cut);
      if (!compatible(a, b)) {
        e.at->emitError("layout assignment cannot reconcile a tile's extents (compiler bug)");
        return Round::Failed;
      }
      unite(a, b);
    }
    for (const Endpoint *p : {&e.keep, &e.cut})
      if (p->use)
        seen.insert(p->use);
  }
  if (again)
    return Round::Again;

  for (auto *list : {&reduceSlices_, &widenSlices_})
    for (const Slice &s : *list) {
      unsigned child = resolve(s.child), parent = resolve(s.parent);
      LayoutGroup &g = group(child);
      if (g.sliceOf && (g.sliceOf->first != s.axis || find(g.sliceOf->second) != find(parent))) {
        // Two slices meet: expand_dims reads a copy (a node of its own, in
        // no other constraint); a reduction's users read one.
        if (!cut(s.child, s.at)) {
          s.at->emitError("layout assignment cannot cut a slice loose (compiler bug)");
          return Round::Failed;
        }
        if (!s.child.use)
          return Round::Again;
        child = resolve(s.child);
      }
      group(child).sliceOf = {s.axis, parent};
    }
  for (const Permute &p : permutes_) {
    unsigned result = resolve(p.result), src = resolve(p.src);
    LayoutGroup &g = group(result);
    if (!g.permuteOf && find(src) != find(result))
      g.permuteOf = {p.order, src};
  }
  for (DotOp dot : dots_)
    if (Round r = fixDot(dot); r != Round::Solved)
      return r;
  // A scan needs one contiguous chunk per thread along its axis: a slice
  // layout, a dot's layout, or a group scanned along another axis too,
  // cannot give it that.
  for (auto [op, axis] : scans_) {
    LayoutGroup &g = group(resolve({op->getOperand(0), &op->getOpOperand(0)}));
    if (g.sliceOf || g.fixed || (g.scanAxis && *g.scanAxis != axis)) {
      SmallVector<OpOperand *> operands;
      for (OpOperand &operand : op->getOpOperands())
        operands.push_back(&operand);
      if (isolate(op, operands, op->getResults()))
        return Round::Again;
      op->emitError("cannot give this scan a layout of its own (compiler bug)");
      return Round::Failed;
    }
    g.scanAxis = axis;
  }
  return Round::Solved;
}

namespace {

// Whether tessel-pipeline-loops will likely load `dot`'s operand tiles
// straight into LDS on `facts`, `numWarps` a workgroup: the dot is in a loop
// of a module pipelined in exactly two stages (the pipeliner loads to LDS at
// distance 1 only), on a target with 16-byte loads to LDS, and either asked
// for (directToLdsMode) or, unless asked not to, two slots for each of A and
// B (their bytes summed) keep the waves by default (slotsKeepWaves, the rule
// scheduleLoop applies to its staged loads' slots). A guess made before the
// slots exist (an operand loaded outside the loop is counted too, padding is
// not): the pipeliner still decides.
bool loadsLikelyToLds(DotOp dot, const ::tessel::TargetFacts &facts, unsigned numWarps) {
  auto module = dot->getParentOfType<ModuleOp>();
  if (!module || !dot->getParentOfType<scf::ForOp>() || facts.directLdsLoadBytes < 16)
    return false;
  IntegerAttr stages = tesselDialect(module.getContext()).getNumStagesAttrHelper().getAttr(module);
  const int mode = pipeline::directToLdsMode(module);
  if (!stages || stages.getInt() != 2 || mode == 0)
    return false;
  if (mode == 1)
    return true;
  int64_t bytes = 0;
  for (Value operand : {dot.getA(), dot.getB()}) {
    auto type = cast<RankedTensorType>(operand.getType());
    bytes += 2 * type.getNumElements() * ldsElementBytes(type.getElementType());
  }
  return pipeline::slotsKeepWaves(bytes, numWarps, facts);
}

} // namespace

// The layouts the target's matrix instruction (or the FMA path) gives the
// dot (DotLayouts.cpp), fixed on the groups of its result and operands. Two
// dots whose accumulators meet (one's result is the other's acc, or both
// are carried by one loop) in different layouts: one of them gets its
// accumulator and result through copies of their own, the one less deep in
// loops, so a loop-carried accumulator keeps its layout.
Solver::Round Solver::fixDot(DotOp dot) {
  FailureOr<DotLayouts> layouts = chooseDotLayouts(dot, arch_, numWarps_, waveSize_);
  if (failed(layouts))
    return Round::Failed;
  MLIRContext *ctx = dot.getContext();
  unsigned accNode = defNode(dot.getResult());
  LayoutGroup &acc = group(accNode);
  if (acc.fixed && acc.fixed != layouts->accumulator) {
    DotOp other = fixedBy_.lookup(find(accNode));
    auto depth = [](Operation *op) {
      unsigned d = 0;
      for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
        d += isa<scf::ForOp, scf::WhileOp>(p);
      return d;
    };
    DotOp first = depth(other) <= depth(dot) ? other : dot, second = first == dot ? other : dot;
    for (DotOp d : {first, second})
      if (isolate(d, {&d.getCMutable()}, d->getResults()))
        return Round::Again;
    dot.emitError("cannot give this dot's accumulator a layout of its own (compiler bug)");
    return Round::Failed;
  }
  acc.fixed = layouts->accumulator;
  fixedBy_[find(accNode)] = dot;
  const unsigned rank = cast<RankedTensorType>(dot.getType()).getRank();
  // B's kWidth and kGroup differ from A's beside an e2m1 operand (bytes).
  const unsigned kGroup = layouts->kGroup, kWidth = layouts->kWidth;
  const unsigned kWidthB = layouts->kWidthB ? layouts->kWidthB : kWidth,
                 kGroupB = layouts->kWidthB ? layouts->kGroupB : kGroup;
  // Where LDS has transpose reads, an 8-bit operand loaded along another
  // dim than K stays along it in LDS (16-byte writes; a run of K bytes would
  // be written 2 bytes at a time: planLdsStaging picks the transpose reads),
  // so a run along K buys nothing there, and it would keep the tile's loads
  // from going straight into LDS (a wave's lanes then skip every other row:
  // planDirectLds; the 4-wave fp8 matmuls' B). A 16-bit operand's run
  // does buy register-staged writes, so it goes only where the loop's loads
  // will likely go straight into LDS (loadsLikelyToLds).
  const ::tessel::TargetFacts *facts = ::tessel::lookupTarget(arch_);
  const bool likelyToLds = facts && facts->ldsTransposeReads && loadsLikelyToLds(dot, *facts, numWarps_);
  auto runBuysWrites = [&](Value operand) {
    const int64_t bytes = ldsElementBytes(cast<RankedTensorType>(operand.getType()).getElementType());
    return !(facts && facts->ldsTransposeReads && (bytes == 1 || (bytes == 2 && likelyToLds)));
  };
  for (auto [use, kDim, width, run] : {std::tuple{&dot.getAMutable(), rank - 1, kWidth, kGroup},
                                       std::tuple{&dot.getBMutable(), rank - 2, kWidthB, kGroupB}})
    if (std::optional<unsigned> src = sourceOf({use->get(), use}); src && runBuysWrites(use->get()))
      group(*src).operandRun = {kDim, run ? run : width};
  // Each operand is a copy of its own (isolated before the first solution).
  group(resolve({dot.getA(), &dot.getAMutable()})).fixed =
      DotOperandLayoutAttr::get(ctx, 0, layouts->accumulator, kWidth, kGroup);
  group(resolve({dot.getB(), &dot.getBMutable()})).fixed =
      DotOperandLayoutAttr::get(ctx, 1, layouts->accumulator, kWidthB, kGroupB);
  // Scales (gfx950's scaled MFMAs): [M, K / 32] and [N, K / 32] as operands
  // of one element a lane and instruction (B's laid out [N, K]: kLast). A
  // scale operand layout puts the scale of row i (column j) and K block g in
  // lane i + m * g (j + n * g) of the instruction that reads block g, the
  // lanes that instruction takes it from (emulator_matrix.cpp's scaleOf
  // gives the sources).
  if (dot.getAScale()) {
    OpOperand &sa = dot->getOpOperand(3), &sb = dot->getOpOperand(4);
    group(resolve({sa.get(), &sa})).fixed = DotOperandLayoutAttr::get(ctx, 0, layouts->accumulator, 1);
    group(resolve({sb.get(), &sb})).fixed = DotOperandLayoutAttr::get(ctx, 1, layouts->accumulator, 1, 0, true);
  }
  return Round::Solved;
}

// The tile `node` stands for, making its copy (a tessel.convert_layout to
// a tile of no layout yet) the first time.
Value Solver::materialize(unsigned node) {
  if (auto it = made_.find(node); it != made_.end())
    return it->second;
  const Node &n = nodes_[node];
  Value made;
  auto copyOf = [&](Value src, OpBuilder &b, Location loc) {
    auto type = cast<RankedTensorType>(src.getType());
    return b.create<ConvertLayoutOp>(loc, RankedTensorType::get(type.getShape(), type.getElementType()), src)
        .getResult();
  };
  switch (n.copy) {
  case Copy::None:
    made = n.value;
    break;
  case Copy::ForUsers: {
    OpBuilder b(n.value.getContext());
    b.setInsertionPointAfterValue(n.value);
    made = copyOf(n.value, b, n.value.getLoc());
    Value value = n.value;
    value.replaceAllUsesExcept(made, made.getDefiningOp());
    break;
  }
  case Copy::ForOp: {
    Value src = materialize(usersNode_.count(n.value) ? usersNode_.lookup(n.value) : defNode(n.value));
    OpBuilder b(n.at);
    made = copyOf(src, b, n.at->getLoc());
    for (OpOperand &use : n.at->getOpOperands())
      if (use.get() == src)
        use.set(made);
    break;
  }
  case Copy::ForOperand: {
    // The slot reads what it read before a copy of its own (made first).
    Value src = materialize(withoutOperandCopy(n.use));
    OpBuilder b(n.use->getOwner());
    assert(n.use->get() == src && "a slot reads its op's copy, its users' copy or the value");
    made = copyOf(src, b, n.use->getOwner()->getLoc());
    n.use->set(made);
    break;
  }
  }
  made_[node] = made;
  return made;
}

FailureOr<LayoutGroups> Solver::result() {
  // Copies for users first, then per op, then per operand: each reads the
  // one before it.
  SmallVector<unsigned> order;
  for (Copy kind : {Copy::None, Copy::ForUsers, Copy::ForOp, Copy::ForOperand})
    for (unsigned n = 0; n < nodes_.size(); ++n)
      if (nodes_[n].copy == kind)
        order.push_back(n);
  LayoutGroups out;
  llvm::DenseMap<unsigned, unsigned> index; // root -> group
  for (unsigned n : order) {
    Value v = materialize(n);
    unsigned root = find(n);
    auto [it, inserted] = index.try_emplace(root, out.groups.size());
    if (inserted) {
      out.groups.push_back(groups_.count(root) ? groups_[root] : LayoutGroup{});
      if (out.groups.back().shape.empty())
        for (int64_t e : extents_[root])
          out.groups.back().shape.push_back(e ? e : 1);
    }
    out.groupOf[v] = it->second;
  }
  // Slices and permutations name nodes; the pass wants groups.
  auto groupIndex = [&](unsigned node) { return index.lookup(find(node)); };
  for (LayoutGroup &g : out.groups) {
    if (g.sliceOf)
      g.sliceOf->second = groupIndex(g.sliceOf->second);
    if (g.permuteOf)
      g.permuteOf->second = groupIndex(g.permuteOf->second);
  }
  for (auto [ptr, mask] : accesses_)
    out.accesses.push_back({ptr->get(), mask ? mask->get() : Value()});
  return out;
}

FailureOr<LayoutGroups> Solver::solve() {
  collect();
  // A dot's operands each read a copy of their own (from whatever layout
  // their producer has to the operand layout).
  for (DotOp dot : dots_) {
    SmallVector<OpOperand *> operands{&dot.getAMutable(), &dot.getBMutable()};
    if (dot.getAScale())
      operands.append({&dot->getOpOperand(3), &dot->getOpOperand(4)});
    isolate(dot, operands, {});
  }
  for (int round = 0;; ++round) {
    Round r = solveOnce();
    if (r == Round::Failed)
      return failure();
    if (r == Round::Solved)
      break;
    if (round > 10000)
      return func_.emitError("layout assignment did not converge (compiler bug)");
  }
  return result();
}

} // namespace

FailureOr<LayoutGroups> mlir::tessel::solveLayoutConstraints(func::FuncOp func, const std::string &arch,
                                                             unsigned numWarps, unsigned waveSize) {
  return Solver(func, arch, numWarps, waveSize).solve();
}
