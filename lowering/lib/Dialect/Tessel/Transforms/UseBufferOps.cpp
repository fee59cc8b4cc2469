// Global accesses at a scalar base plus 32-bit offsets (see Passes.td).
#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Analysis/KernelRanges.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <cstdint>

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
  return isSmallBufferArgument(ptr) ? cast<BlockArgument>(ptr) : BlockArgument();
}

// The masked access as a buffer op: `base` scalar, `offsets` i32 elements.
void replaceWithBufferOp(Operation *op, Value base, Value offsets) {
  OpBuilder b(op);
  if (auto load = dyn_cast<LoadOp>(op)) {
    auto buffer = b.create<BufferLoadOp>(op->getLoc(), load.getType(), base, offsets, load.getMask(),
                                         load.getOther(), Value(), load.getVec());
    load.replaceAllUsesWith(buffer.getResult());
  } else {
    auto store = cast<StoreOp>(op);
    b.create<BufferStoreOp>(op->getLoc(), base, offsets, store.getValue(), store.getMask(), Value(),
                            store.getVec());
  }
  op->erase();
}

// Scalars for tiles every element of which is provably the same: a splat,
// a one-element range, a splat constant, or arith's elementwise ops (and
// shape changes) of such. A scalar is created (once) right after the tile's
// definition, so it dominates wherever the tile is used.
class Scalarizer {
public:
  // Whether `v` is such a tile (or a scalar); creates nothing.
  bool uniform(Value v) {
    if (!isa<RankedTensorType>(v.getType()))
      return true;
    auto [it, inserted] = uniform_.try_emplace(v, false);
    if (!inserted)
      return it->second;
    bool out = false;
    Operation *def = v.getDefiningOp();
    if (isa_and_nonnull<SplatOp>(def))
      out = true;
    else if (isa_and_nonnull<BroadcastOp, ExpandDimsOp, ConvertLayoutOp, ReshapeOp>(def))
      out = uniform(def->getOperand(0));
    else if (auto range = dyn_cast_or_null<MakeRangeOp>(def))
      out = range.getEnd() - range.getStart() == 1;
    else if (auto constant = dyn_cast_or_null<arith::ConstantOp>(def))
      out = isa<DenseElementsAttr>(constant.getValue()) && cast<DenseElementsAttr>(constant.getValue()).isSplat();
    else if (def && isa<arith::ArithDialect>(def->getDialect()) && def->hasTrait<OpTrait::Elementwise>() &&
             def->getNumResults() == 1 && def->getNumRegions() == 0)
      out = llvm::all_of(def->getOperands(), [&](Value operand) { return uniform(operand); });
    uniform_[v] = out;
    return out;
  }

  // `v`'s scalar; `v` must be uniform().
  Value get(Value v) {
    if (!isa<RankedTensorType>(v.getType()))
      return v;
    if (Value done = scalar_.lookup(v))
      return done;
    assert(uniform(v) && "not a uniform tile");
    Operation *def = v.getDefiningOp();
    Value out;
    OpBuilder b(def->getContext());
    if (auto splat = dyn_cast<SplatOp>(def)) {
      out = splat.getSrc();
    } else if (isa<BroadcastOp, ExpandDimsOp, ConvertLayoutOp, ReshapeOp>(def)) {
      out = get(def->getOperand(0));
    } else if (auto range = dyn_cast<MakeRangeOp>(def)) {
      b.setInsertionPointAfter(def);
      out = b.create<arith::ConstantIntOp>(def->getLoc(), b.getI32Type(), range.getStart());
    } else if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
      b.setInsertionPointAfter(def);
      out = b.create<arith::ConstantOp>(def->getLoc(),
                                        cast<DenseElementsAttr>(constant.getValue()).getSplatValue<TypedAttr>());
    } else {
      SmallVector<Value> operands;
      for (Value operand : def->getOperands())
        operands.push_back(get(operand));
      b.setInsertionPointAfter(def); // (after the operands' scalars, also created after theirs)
      OperationState state(def->getLoc(), def->getName());
      state.addOperands(operands);
      state.addTypes(elementTypeOf(v.getType()));
      state.addAttributes(def->getAttrs());
      out = b.create(state)->getResult(0);
    }
    scalar_[v] = out;
    return out;
  }

private:
  DenseMap<Value, bool> uniform_;
  DenseMap<Value, Value> scalar_;
};

// An i32 offset tile as varying + splat(uniform), the uniform part gathered
// from under broadcasts, expand_dims and products with a uniform factor
// (`(k + ks) * stride` is `ks * stride + splat(k * stride)`): i32 sums and
// products wrap alike in any order, so each element is the same. A loop's
// access then reads a loop-invariant tile plus a scalar that moves: the
// tile is made once before the loop, and a load straight into LDS moves it
// between lanes once, not each iteration (tessel-pipeline-loops passes the
// scalar as the load's shift). Either part may be null; an offset with no
// uniform part is kept as it is (a scalar made on the way may be left for
// the dead-code cleanup).
struct PeeledOffset {
  Value varying, uniform;
};
// Whether peelUniform would find a uniform part under `v` (builds nothing).
bool peelsUniform(Value v, Scalarizer &scalars) {
  if (scalars.uniform(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumResults() != 1)
    return false;
  if (auto sum = dyn_cast<arith::AddIOp>(def))
    return peelsUniform(sum.getLhs(), scalars) || peelsUniform(sum.getRhs(), scalars);
  if (auto product = dyn_cast<arith::MulIOp>(def))
    return (scalars.uniform(product.getRhs()) && peelsUniform(product.getLhs(), scalars)) ||
           (scalars.uniform(product.getLhs()) && peelsUniform(product.getRhs(), scalars));
  if (isa<BroadcastOp, ExpandDimsOp>(def))
    return peelsUniform(def->getOperand(0), scalars);
  return false;
}
PeeledOffset peelUniform(OpBuilder &b, Location loc, Value v, Scalarizer &scalars) {
  if (scalars.uniform(v))
    return {Value(), scalars.get(v)};
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumResults() != 1)
    return {v, Value()};
  auto add = [&](Value x, Value y) -> Value {
    if (!x || !y)
      return x ? x : y;
    return b.create<arith::AddIOp>(loc, x, y);
  };
  if (auto sum = dyn_cast<arith::AddIOp>(def)) {
    PeeledOffset l = peelUniform(b, loc, sum.getLhs(), scalars), r = peelUniform(b, loc, sum.getRhs(), scalars);
    if (!l.uniform && !r.uniform)
      return {v, Value()};
    return {add(l.varying, r.varying), add(l.uniform, r.uniform)};
  }
  if (auto product = dyn_cast<arith::MulIOp>(def)) {
    for (auto [x, factor] : {std::pair(product.getLhs(), product.getRhs()),
                             std::pair(product.getRhs(), product.getLhs())}) {
      if (!scalars.uniform(factor))
        continue;
      PeeledOffset p = peelUniform(b, loc, x, scalars);
      if (!p.uniform || !p.varying)
        return {v, Value()};
      return {b.create<arith::MulIOp>(loc, p.varying, factor),
              b.create<arith::MulIOp>(loc, p.uniform, scalars.get(factor))};
    }
    return {v, Value()};
  }
  if (isa<BroadcastOp, ExpandDimsOp>(def)) {
    PeeledOffset p = peelUniform(b, loc, def->getOperand(0), scalars);
    if (!p.uniform || !p.varying)
      return {v, Value()};
    IRMapping map;
    map.map(def->getOperand(0), p.varying);
    return {b.clone(*def, map)->getResult(0), p.uniform};
  }
  return {v, Value()};
}

// `offsets` (i32 elements) as varying + splat(uniform) when a uniform part
// can be gathered (peelUniform), plus `extra` (a scalar or null); else
// offsets + splat(extra).
Value withUniformApart(OpBuilder &b, Location loc, Value offsets, Value extra, Scalarizer &scalars) {
  // Already x + splat(s), x with nothing uniform to gather (`offs` of a
  // pid * BLOCK + arange): kept, so accesses with one index share it.
  if (auto sum = offsets.getDefiningOp<arith::AddIOp>(); sum && !extra)
    for (Value x : {sum.getLhs(), sum.getRhs()})
      if (Value s = x == sum.getLhs() ? sum.getRhs() : sum.getLhs();
          s.getDefiningOp<SplatOp>() && !scalars.uniform(x) && !peelsUniform(x, scalars))
        return offsets;
  PeeledOffset p = peelUniform(b, loc, offsets, scalars);
  if (!p.uniform || !p.varying) {
    if (!extra)
      return offsets;
    return b.create<arith::AddIOp>(loc, offsets, b.create<SplatOp>(loc, offsets.getType(), extra));
  }
  Value uniform = extra ? b.create<arith::AddIOp>(loc, p.uniform, extra).getResult() : p.uniform;
  return b.create<arith::AddIOp>(loc, p.varying, b.create<SplatOp>(loc, offsets.getType(), uniform));
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
bool useSmallBuffer(Operation *op, Value ptr, const BaseAndOffsets &split, Scalarizer &scalars,
                    function_ref<bool(Value)> onlyIf = nullptr) {
  SmallVector<Value> scalarOffsets;
  BlockArgument arg = smallBufferArgument(split.base, scalarOffsets);
  if (!arg || (onlyIf && !llvm::all_of(scalarOffsets, onlyIf)))
    return false;
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value sum;
  for (Value term : scalarOffsets)
    sum = sum ? b.create<arith::AddIOp>(loc, sum, term).getResult() : term;
  Value offsets = withUniformApart(b, loc, sumInShape(b, loc, split.offsets, ptr.getType()), sum, scalars);
  replaceWithBufferOp(op, arg, offsets);
  return true;
}

// A tile as the value it views: through broadcasts, layout conversions and
// expand_dims (their axes, outermost first), which move no element. Two
// tiles of one shape with the same root and axes agree element by element.
struct View {
  Value root;
  SmallVector<int64_t> axes;
  bool operator==(const View &o) const { return root == o.root && axes == o.axes; }
};
View viewOf(Value v, SmallVector<int64_t> axes = {}) {
  while (true) {
    if (auto expand = v.getDefiningOp<ExpandDimsOp>()) {
      axes.push_back(expand.getAxis());
      v = expand.getSrc();
    } else if (isa_and_nonnull<BroadcastOp, ConvertLayoutOp>(v.getDefiningOp())) {
      v = v.getDefiningOp()->getOperand(0);
    } else {
      return {v, axes};
    }
  }
}

// The conjuncts of an i1 mask (through andi and element-preserving views),
// each as a view from the mask's shape.
void collectConjuncts(Value mask, SmallVectorImpl<View> &out, SmallVector<int64_t> axes = {}) {
  View view = viewOf(mask, axes);
  if (auto conj = view.root.getDefiningOp<arith::AndIOp>()) {
    collectConjuncts(conj.getLhs(), out, view.axes);
    collectConjuncts(conj.getRhs(), out, view.axes);
    return;
  }
  out.push_back(view);
}

// Whether a tile is all +0.0 / 0 (what an out-of-range buffer read gives).
bool isZeroTile(Value v) {
  if (auto splat = v.getDefiningOp<SplatOp>())
    v = splat.getSrc();
  Attribute value;
  if (!matchPattern(v, m_Constant(&value)))
    return false;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (!dense.isSplat())
      return false;
    value = dense.getSplatValue<Attribute>();
  }
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValue().isPosZero();
  if (auto i = dyn_cast<IntegerAttr>(value))
    return i.getValue().isZero();
  return false;
}

// A masked access whose mask bounds one of its offset tiles, the canonical
// `ptr + ... + x` under `... & (x < n) & ...`: when every other offset tile
// and every other conjunct is uniform, the resource starts at the pointer
// minus x's varying part v (x = u + v, u uniform) and holds n - u elements
// (0 where a uniform conjunct is false), so the hardware's range check is
// the whole mask: no compare, select or offset per element. A load's
// non-zero `other` is one compare of v with that bound. `reach` is the
// largest sum of v's terms when v's byte offsets (masked-off ones too: they
// must not wrap 32 bits) stay below 2^31 - 2, none otherwise.
// Through a small Buffer with x the only offset tile, the resource is the
// argument itself and x the offset (no 64-bit base arithmetic per access):
// see the `whole` case below.
bool useBoundedBuffer(Operation *op, Value ptr, Value mask, const BaseAndOffsets &split, Scalarizer &scalars,
                      function_ref<bool(Value)> nonNegative,
                      function_ref<std::optional<int64_t>(ArrayRef<Value>)> reach, int64_t elemBytes, int64_t vec) {
  SmallVector<View> conjuncts;
  collectConjuncts(mask, conjuncts);
  for (size_t c = 0; c < conjuncts.size(); ++c) {
    auto cmp = conjuncts[c].root.getDefiningOp<arith::CmpIOp>();
    if (!cmp)
      continue;
    arith::CmpIPredicate pred = cmp.getPredicate();
    Value x = cmp.getLhs(), n = cmp.getRhs();
    if (pred == arith::CmpIPredicate::sgt || pred == arith::CmpIPredicate::ugt)
      std::swap(x, n);
    const bool isSigned = pred == arith::CmpIPredicate::slt || pred == arith::CmpIPredicate::sgt;
    if (!isSigned && pred != arith::CmpIPredicate::ult && pred != arith::CmpIPredicate::ugt)
      continue;
    // x is one of the pointer's offset tiles, element for element.
    View xView = viewOf(x, conjuncts[c].axes);
    auto term = llvm::find_if(split.offsets, [&](Value t) { return viewOf(t) == xView; });
    if (term == split.offsets.end())
      continue;
    SmallVector<Value> others(split.offsets.begin(), term);
    others.append(std::next(term), split.offsets.end());
    // x = u + v: u its splatted scalars and constants (none negative), v the
    // rest (none negative, bytes bounded).
    SmallVector<Value> xUniform, xVarying;
    int64_t xConstant = 0;
    splitTerms(*term, xUniform, xConstant, xVarying);
    if (xVarying.empty() || xConstant < 0 || !llvm::all_of(xUniform, nonNegative) ||
        !llvm::all_of(xVarying, nonNegative))
      continue;
    std::optional<int64_t> vMax = reach(xVarying);
    if (!vMax)
      continue;
    // Everything else is uniform.
    SmallVector<Value> conds;
    for (size_t o = 0; o < conjuncts.size(); ++o)
      if (o != c)
        conds.push_back(conjuncts[o].root);
    auto uniform = [&](Value v) { return scalars.uniform(v); };
    if (!uniform(n) || !llvm::all_of(others, uniform) || !llvm::all_of(conds, uniform))
      continue;

    SmallVector<Value> argOffsets;
    BlockArgument arg = smallBufferArgument(split.base, argOffsets);
    const bool whole = arg && argOffsets.empty() && others.empty();

    Value bound = scalars.get(n);
    SmallVector<Value> baseTerms, uniformConds;
    for (Value t : others)
      baseTerms.push_back(scalars.get(t));
    for (Value cond : conds)
      uniformConds.push_back(scalars.get(cond));
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value zero = b.create<arith::ConstantIntOp>(loc, b.getI32Type(), 0);
    Value u;
    for (Value t : xUniform)
      u = u ? b.create<arith::AddIOp>(loc, u, t).getResult() : t;
    if (xConstant != 0) {
      Value k = b.create<arith::ConstantIntOp>(loc, b.getI32Type(), int32_t(xConstant));
      u = u ? b.create<arith::AddIOp>(loc, u, k).getResult() : k;
    }
    // x < n with x >= 0: x <u max(n, 0) (signed) or n (unsigned).
    if (isSigned)
      bound = b.create<arith::MaxSIOp>(loc, bound, zero);
    Value base = split.base, offsets;
    if (whole) {
      // The offset is x itself, from the argument: x's bytes stay below
      // 2^32 (no lane wraps back into range) while u <= T, T = (2^32 - 1) /
      // bytes - (v's largest + vec). Past T, every lane's x * bytes exceeds
      // 2^31 + 1 (v's bytes being below 2^31 - 2): no element of a Buffer
      // under 2^31 - 2 bytes, so the bound is 0 - all masked off. (As
      // everywhere in this pass, sums of non-negative index terms are taken
      // not to wrap: a u that wrapped past 2^32 would mask lanes the i32
      // arithmetic brought back into the Buffer.)
      offsets = sumInShape(b, loc, {*term}, ptr.getType());
      if (u) {
        const int64_t limit = ((int64_t(1) << 32) - 1) / elemBytes - (*vMax + vec);
        Value far = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, u,
                                            b.create<arith::ConstantIntOp>(loc, b.getI32Type(), int32_t(limit)));
        bound = b.create<arith::SelectOp>(loc, far, zero, bound);
      }
    } else {
      // The base moves by the other terms and u, one addptr each (each term
      // sign-extends on its own, as in the original chain); then v <u
      // bound - u, none when u exceeds it (no overflow: both >= 0).
      for (Value t : baseTerms)
        base = b.create<AddPtrOp>(loc, base.getType(), base, t);
      if (u) {
        base = b.create<AddPtrOp>(loc, base.getType(), base, u);
        Value past = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, u, bound);
        bound = b.create<arith::SelectOp>(loc, past, zero, b.create<arith::SubIOp>(loc, bound, u));
      }
      offsets = sumInShape(b, loc, xVarying, ptr.getType());
    }
    for (Value cond : uniformConds)
      bound = b.create<arith::SelectOp>(loc, cond, bound, zero);
    if (auto load = dyn_cast<LoadOp>(op)) {
      Value result = b.create<BufferLoadOp>(loc, load.getType(), base, offsets, Value(), Value(), bound,
                                            load.getVec());
      // The mask is x <u bound: one compare per element, the uniform
      // conjuncts being in the bound.
      if (load.getOther() && !isZeroTile(load.getOther())) {
        Value inRange = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, offsets,
                                                b.create<SplatOp>(loc, offsets.getType(), bound));
        result = b.create<arith::SelectOp>(loc, inRange, result, load.getOther());
      }
      load.replaceAllUsesWith(result);
    } else {
      auto store = cast<StoreOp>(op);
      b.create<BufferStoreOp>(loc, base, offsets, store.getValue(), Value(), bound, store.getVec());
    }
    op->erase();
    return true;
  }
  return false;
}

// Whether each thread holds one `vec`-element vector of an access's tile
// (false without a layout).
bool oneVectorPerThread(Type ptrType, int64_t vec) {
  auto tile = dyn_cast<RankedTensorType>(ptrType);
  return tile && tile.getEncoding() && registersPerThread(tile) == vec;
}

struct UseBufferOpsPass : mlir::tessel::impl::TesselUseBufferOpsBase<UseBufferOpsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringAttr arch = tesselDialect(module.getContext()).getTargetAttrHelper().getAttr(module);
    const ::tessel::TargetFacts *target = arch ? ::tessel::lookupTarget(arch.getValue().str()) : nullptr;
    if (!target || target->bufferResourceFlags == 0)
      return markAllAnalysesPreserved();
    SmallVector<Operation *> accesses;
    module.walk([&](Operation *op) {
      if (auto load = dyn_cast<LoadOp>(op); load && isa<RankedTensorType>(load.getType()))
        accesses.push_back(op);
      if (auto store = dyn_cast<StoreOp>(op); store && isa<RankedTensorType>(store.getValue().getType()))
        accesses.push_back(op);
    });
    if (accesses.empty()) // no range analysis to run
      return markAllAnalysesPreserved();
    KernelRanges ranges(module);
    if (failed(ranges.status()))
      return signalPassFailure();
    AxisInfoAnalysis axis(module);
    Scalarizer scalars;
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
      // address before the Buffer; a negative whole offset through a buffer
      // resource would only read 0 silently, as out of range.
      // (The axis analysis's non-negativity: index arithmetic from program
      // ids, aranges and constants, assumed not to wrap.)
      auto nonNegative = [&](Value term) {
        std::optional<ConstantIntRanges> range = ranges.rangeOf(term);
        return (range && range->smin().isNonNegative()) || axis.get(term).nonNegative;
      };
      Type pointee = pointeeOf(ptr.getType());
      const int64_t elemBytes = pointee.isIntOrFloat() ? std::max<int64_t>(1, pointee.getIntOrFloatBitWidth() / 8) : 8;
      const int64_t vec = isa<LoadOp>(op) ? cast<LoadOp>(op).getVec() : cast<StoreOp>(op).getVec();
      // The largest sum of `terms` when their ranges put its every byte
      // offset (with its access) in [0, the resource's range).
      auto reach = [&](ArrayRef<Value> terms) -> std::optional<int64_t> {
        int64_t lo = 0, hi = 0;
        for (Value term : terms) {
          std::optional<ConstantIntRanges> range = ranges.rangeOf(term);
          if (!range)
            return std::nullopt;
          lo += range->smin().getSExtValue();
          hi += range->smax().getSExtValue();
        }
        if (lo < 0 || (hi + vec) * elemBytes > kMaxBufferBytes)
          return std::nullopt;
        return hi;
      };
      // A masked access whose mask bounds an offset: the mask as the
      // resource's range, unless a thread holds one vector of it and a plain
      // form below applies - then the lowering's one branch per thread costs
      // less than the resource.
      Value mask = isa<LoadOp>(op) ? cast<LoadOp>(op).getMask() : cast<StoreOp>(op).getMask();
      const bool oneVector = oneVectorPerThread(ptr.getType(), vec);
      auto bounded = [&] {
        return mask &&
               useBoundedBuffer(op, ptr, mask, *split, scalars, nonNegative, reach, elemBytes, vec);
      };
      if (!oneVector && bounded())
        continue;
      if (constant >= 0 && llvm::all_of(uniform, nonNegative) && llvm::all_of(varying, nonNegative) &&
          useSmallBuffer(op, ptr, *split, scalars, nonNegative))
        continue;
      // Any other pointer: a scalar base (the uniform terms added to it, one
      // addptr each, as the pointer chain added them: no i32 sum to wrap)
      // and the varying offsets, when the range analysis bounds them.
      if (!reach(varying) || constant < INT32_MIN || constant > INT32_MAX) {
        if (!useSmallBuffer(op, ptr, *split, scalars) && oneVector)
          bounded();
        continue;
      }

      OpBuilder b(op);
      Location loc = op->getLoc();
      Value base = split->base;
      if (constant != 0)
        uniform.push_back(b.create<arith::ConstantIntOp>(loc, b.getI32Type(), int32_t(constant)));
      for (Value term : uniform)
        base = b.create<AddPtrOp>(loc, base.getType(), base, term);
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
