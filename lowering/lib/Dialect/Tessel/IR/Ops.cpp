// Verifiers of the tessel ops (what ODS constraints cannot say), and the
// folds of splats of constants.
#include "tessel/Dialect/Tessel/IR/Dialect.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::tessel;

LogicalResult MakeRangeOp::verify() {
  auto type = getType();
  if (type.getRank() != 1)
    return emitOpError("result must be a 1-D tile");
  int64_t n = int64_t(getEnd()) - int64_t(getStart());
  if (n <= 0 || type.getDimSize(0) != n)
    return emitOpError("result has ") << type.getDimSize(0) << " elements but the range ["
                                      << getStart() << ", " << getEnd() << ") has " << n;
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = getType();
  if (src.getRank() != dst.getRank())
    return emitOpError("operand and result must have the same rank");
  for (int64_t d = 0; d < src.getRank(); ++d)
    if (src.getDimSize(d) != dst.getDimSize(d) && src.getDimSize(d) != 1)
      return emitOpError("dimension ") << d << " of size " << src.getDimSize(d)
                                       << " cannot be broadcast to " << dst.getDimSize(d);
  return success();
}

LogicalResult ExpandDimsOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis > src.getRank())
    return emitOpError("axis ") << axis << " is out of range for a rank-" << src.getRank()
                                << " tile";
  SmallVector<int64_t> expected(src.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (dst.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be the operand's with a 1 inserted at axis ") << axis;
  return success();
}

// A tile every element of which is the constant `value` (an integer or
// float attribute, or a splat of one), as an attribute of `type`; null for
// anything else (pointers have no constants).
static Attribute constantTile(Attribute value, Type type) {
  auto tile = cast<RankedTensorType>(type);
  if (auto dense = dyn_cast_or_null<SplatElementsAttr>(value))
    return DenseElementsAttr::get(tile, dense.getSplatValue<Attribute>());
  if (isa_and_nonnull<IntegerAttr, FloatAttr>(value) && cast<TypedAttr>(value).getType() == tile.getElementType())
    return DenseElementsAttr::get(tile, value);
  return {};
}

OpFoldResult SplatOp::fold(FoldAdaptor adaptor) { return constantTile(adaptor.getSrc(), getType()); }
OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) { return constantTile(adaptor.getSrc(), getType()); }
OpFoldResult ExpandDimsOp::fold(FoldAdaptor adaptor) { return constantTile(adaptor.getSrc(), getType()); }

static LogicalResult verifySameShape(Operation *op, Type a, Type b, StringRef what) {
  auto ta = dyn_cast<RankedTensorType>(a);
  auto tb = dyn_cast<RankedTensorType>(b);
  if (!ta && !tb)
    return success();
  if (!ta || !tb || ta.getShape() != tb.getShape())
    return op->emitOpError() << what << " must have the pointer operand's shape";
  return success();
}

LogicalResult AddPtrOp::verify() { return verifySameShape(*this, getPtr().getType(), getOffset().getType(), "offset"); }

LogicalResult LoadOp::verify() {
  Type pointee = pointeeOf(getPtr().getType());
  if (elementTypeOf(getType()) != pointee)
    return emitOpError("result element type must be the pointee type ") << pointee;
  if (failed(verifySameShape(*this, getPtr().getType(), getType(), "result")))
    return failure();
  if (getMask() && failed(verifySameShape(*this, getPtr().getType(), getMask().getType(), "mask")))
    return failure();
  if (getOther() && getOther().getType() != getType())
    return emitOpError("other must have the result's type");
  return success();
}

LogicalResult StoreOp::verify() {
  Type pointee = pointeeOf(getPtr().getType());
  if (elementTypeOf(getValue().getType()) != pointee)
    return emitOpError("value element type must be the pointee type ") << pointee;
  if (failed(verifySameShape(*this, getPtr().getType(), getValue().getType(), "value")))
    return failure();
  if (getMask() && failed(verifySameShape(*this, getPtr().getType(), getMask().getType(), "mask")))
    return failure();
  return success();
}

LogicalResult BufferLoadOp::verify() {
  Type pointee = pointeeOf(getBase().getType());
  if (elementTypeOf(getType()) != pointee)
    return emitOpError("result element type must be the pointee type ") << pointee;
  if (failed(verifySameShape(*this, getOffsets().getType(), getType(), "result")))
    return failure();
  if (getMask() && failed(verifySameShape(*this, getOffsets().getType(), getMask().getType(), "mask")))
    return failure();
  if (getOther() && getOther().getType() != getType())
    return emitOpError("other must have the result's type");
  return success();
}

LogicalResult BufferStoreOp::verify() {
  Type pointee = pointeeOf(getBase().getType());
  if (elementTypeOf(getValue().getType()) != pointee)
    return emitOpError("value element type must be the pointee type ") << pointee;
  if (failed(verifySameShape(*this, getOffsets().getType(), getValue().getType(), "value")))
    return failure();
  if (getMask() && failed(verifySameShape(*this, getOffsets().getType(), getMask().getType(), "mask")))
    return failure();
  return success();
}

// The element types an atomic takes: f16, bf16, f32, i32, i64; integers
// only for the bitwise and unsigned kinds.
static LogicalResult verifyAtomic(Operation *op, Value ptr, ArrayRef<std::pair<Value, const char *>> values,
                                  Value mask, Type result, bool integerOnly, StringRef what) {
  Type pointee = pointeeOf(ptr.getType());
  bool isFloat = pointee.isF16() || pointee.isBF16() || pointee.isF32();
  bool isInt = pointee.isInteger(32) || pointee.isInteger(64);
  if (!isInt && !(isFloat && !integerOnly))
    return op->emitOpError() << what << " takes " << (integerOnly ? "i32 or i64" : "f16, bf16, f32, i32 or i64")
                             << " elements, not " << pointee;
  for (auto [v, name] : values) {
    if (elementTypeOf(v.getType()) != pointee)
      return op->emitOpError() << name << " element type must be the pointee type " << pointee;
    if (failed(verifySameShape(op, ptr.getType(), v.getType(), name)))
      return failure();
  }
  if (mask && failed(verifySameShape(op, ptr.getType(), mask.getType(), "mask")))
    return failure();
  if (elementTypeOf(result) != pointee)
    return op->emitOpError("result element type must be the pointee type ") << pointee;
  return verifySameShape(op, ptr.getType(), result, "result");
}

LogicalResult AtomicRMWOp::verify() {
  AtomicKind k = getKind();
  bool integerOnly = k == AtomicKind::and_ || k == AtomicKind::or_ || k == AtomicKind::xor_ ||
                     k == AtomicKind::umax || k == AtomicKind::umin;
  return verifyAtomic(*this, getPtr(), {{getVal(), "value"}}, getMask(), getType(),
                      integerOnly, "atomic " + stringifyAtomicKind(k).str());
}

LogicalResult AtomicCASOp::verify() {
  return verifyAtomic(*this, getPtr(), {{getCmp(), "compared value"}, {getVal(), "value"}}, getMask(), getType(),
                      false, "atomic_cas");
}

LogicalResult GatherOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto idx = cast<RankedTensorType>(getIndices().getType());
  if (getAxis() < 0 || getAxis() >= src.getRank())
    return emitOpError("axis ") << getAxis() << " is out of range for a rank-" << src.getRank() << " tile";
  if (idx.getRank() != src.getRank())
    return emitOpError("indices must have the source's rank (") << src.getRank() << ")";
  for (int64_t d = 0; d < src.getRank(); ++d)
    if (d != getAxis() && idx.getDimSize(d) != src.getDimSize(d))
      return emitOpError("indices must match the source's extent along every dim but the axis (dim ") << d << ")";
  if (!idx.getElementType().isInteger(32) && !idx.getElementType().isInteger(64))
    return emitOpError("indices are i32 or i64");
  if (getType().getShape() != idx.getShape() || getType().getElementType() != src.getElementType())
    return emitOpError("the result has the indices' shape and the source's element type");
  return success();
}

LogicalResult HistogramOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  if (!src.getElementType().isInteger(32) && !src.getElementType().isInteger(64))
    return emitOpError("counts i32 or i64 values, not ") << src.getElementType();
  if (getType().getRank() != 1 || !getType().getElementType().isInteger(32))
    return emitOpError("the result is a 1-D tile of i32 counts");
  if (getMask() && failed(verifySameShape(*this, src, getMask().getType(), "mask")))
    return failure();
  return success();
}

LogicalResult SortOp::verify() {
  if (getSrcs().empty())
    return emitOpError("needs the keys");
  auto keys = cast<RankedTensorType>(getSrcs()[0].getType());
  if (getAxis() < 0 || getAxis() >= keys.getRank())
    return emitOpError("axis ") << getAxis() << " is out of range for a rank-" << keys.getRank() << " tile";
  Type k = keys.getElementType();
  if (!k.isIntOrFloat() || k.isInteger(1))
    return emitOpError("sorts integer or float keys, not ") << k;
  if (getResults().size() != getSrcs().size())
    return emitOpError("has one result per operand");
  for (auto [src, res] : llvm::zip(getSrcs(), getResults())) {
    auto t = cast<RankedTensorType>(src.getType());
    if (t.getShape() != keys.getShape() || t.getEncoding() != keys.getEncoding())
      return emitOpError("operands must have one shape and layout");
    if (res.getType() != t)
      return emitOpError("each result has its operand's type");
  }
  if (getMasked() && (getSrcs().size() < 2 ||
                      !cast<RankedTensorType>(getSrcs().back().getType()).getElementType().isInteger(1)))
    return emitOpError("a masked sort's last operand is the i1 mask");
  return success();
}

namespace {
// Payloads whose results nobody reads stop moving: the sort keeps its keys
// (they order everything) and the payloads someone uses.
struct DropUnreadPayloads : OpRewritePattern<SortOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SortOp op, PatternRewriter &rewriter) const override {
    SmallVector<Value> srcs{op.getSrcs()[0]};
    SmallVector<Value> kept{op.getResults()[0]};
    const size_t n = op.getSrcs().size();
    const size_t payloadsEnd = op.getMasked() ? n - 1 : n; // the mask stays: it orders
    for (size_t i = 1; i < n; ++i)
      if (i >= payloadsEnd || !op.getResults()[i].use_empty()) {
        srcs.push_back(op.getSrcs()[i]);
        kept.push_back(op.getResults()[i]);
      }
    if (srcs.size() == n)
      return failure();
    auto sorted = rewriter.create<SortOp>(op.getLoc(), ValueRange(srcs).getTypes(), srcs, op.getAxisAttr(),
                                          op.getDescendingAttr(), op.getStableAttr(), op.getMaskedAttr());
    for (auto [old, now] : llvm::zip(kept, sorted.getResults()))
      rewriter.replaceAllUsesWith(old, now);
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void SortOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<DropUnreadPayloads>(context);
}

// Shared by reduce and scan: operands of one shape, a combine region taking
// 2N scalars of the operands' element types and yielding N.
static LogicalResult verifyCombiner(Operation *op, ValueRange srcs, Region &combine,
                                    int64_t axis) {
  if (srcs.empty())
    return op->emitOpError("needs at least one operand");
  auto first = cast<RankedTensorType>(srcs[0].getType());
  if (axis < 0 || axis >= first.getRank())
    return op->emitOpError("axis ") << axis << " is out of range for a rank-" << first.getRank()
                                    << " tile";
  for (Value s : srcs) {
    auto t = cast<RankedTensorType>(s.getType());
    if (t.getShape() != first.getShape())
      return op->emitOpError("operands must have one shape");
    // Combined register by register: every operand in the same layout.
    if (t.getEncoding() != first.getEncoding())
      return op->emitOpError("operands must have one layout");
  }
  Block &body = combine.front();
  // The combine is replayed on scalars, per register: each op computes values
  // of one type (one, or arith.mului_extended's two halves).
  for (Operation &nested : body.without_terminator())
    if (nested.getNumResults() == 0 || !llvm::all_equal(nested.getResultTypes()) || nested.getNumRegions() != 0)
      return nested.emitError("a combine function can only compute values");
  size_t n = srcs.size();
  if (body.getNumArguments() != 2 * n)
    return op->emitOpError("combine region must take ") << 2 * n << " arguments";
  for (size_t i = 0; i < 2 * n; ++i)
    if (body.getArgument(i).getType() != elementTypeOf(srcs[i % n].getType()))
      return op->emitOpError("combine argument #")
             << i << " must have the element type of operand #" << i % n;
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != n)
    return op->emitOpError("combine region must yield ") << n << " values";
  for (size_t i = 0; i < n; ++i)
    if (yield.getValues()[i].getType() != elementTypeOf(srcs[i].getType()))
      return op->emitOpError("combine must yield the element type of operand #") << i;
  return success();
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyCombiner(*this, getSrcs(), getCombine(), getAxis())))
    return failure();
  auto srcType = cast<RankedTensorType>(getSrcs()[0].getType());
  SmallVector<int64_t> shape(srcType.getShape());
  shape.erase(shape.begin() + getAxis());
  if (getResults().size() != getSrcs().size())
    return emitOpError("must have one result per operand");
  for (auto [src, result] : llvm::zip(getSrcs(), getResults())) {
    Type elem = elementTypeOf(src.getType());
    if (shape.empty() ? result.getType() != elem
                      : (!isa<RankedTensorType>(result.getType()) ||
                         cast<RankedTensorType>(result.getType()).getShape() != ArrayRef(shape) ||
                         elementTypeOf(result.getType()) != elem))
      return emitOpError("result must have the operand's element type and shape without axis ")
             << getAxis();
  }
  return success();
}

LogicalResult ScanOp::verify() {
  if (failed(verifyCombiner(*this, getSrcs(), getCombine(), getAxis())))
    return failure();
  if (getResults().size() != getSrcs().size())
    return emitOpError("must have one result per operand");
  for (auto [src, result] : llvm::zip(getSrcs(), getResults())) {
    auto s = cast<RankedTensorType>(src.getType()), r = cast<RankedTensorType>(result.getType());
    if (s.getShape() != r.getShape() || s.getElementType() != r.getElementType())
      return emitOpError("results must have the operands' shapes and element types");
    if (s.getEncoding() != r.getEncoding())
      return emitOpError("results must have the operands' layout");
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  if (src.getNumElements() != getType().getNumElements())
    return emitOpError("cannot reshape ") << src.getNumElements() << " elements into "
                                          << getType().getNumElements();
  return success();
}

LogicalResult PermuteOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  ArrayRef<int32_t> order = getOrder();
  if (int64_t(order.size()) != src.getRank())
    return emitOpError("order must list ") << src.getRank() << " dimensions";
  SmallVector<bool> seen(order.size(), false);
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] < 0 || order[i] >= src.getRank() || seen[order[i]])
      return emitOpError("order must be a permutation");
    seen[order[i]] = true;
    if (getType().getDimSize(i) != src.getDimSize(order[i]))
      return emitOpError("result dimension ") << i << " must be operand dimension " << order[i];
  }
  return success();
}

static ArrayRef<int64_t> shapeOrScalar(Type t) {
  if (auto tile = dyn_cast<RankedTensorType>(t))
    return tile.getShape();
  return {};
}

LogicalResult JoinOp::verify() {
  // The operands may sit in different layouts: each goes through LDS.
  if (shapeOrScalar(getLhs().getType()) != shapeOrScalar(getRhs().getType()) ||
      elementTypeOf(getLhs().getType()) != elementTypeOf(getRhs().getType()))
    return emitOpError("operands must have one shape and element type");
  SmallVector<int64_t> shape(shapeOrScalar(getLhs().getType()));
  shape.push_back(2);
  if (getType().getShape() != ArrayRef(shape) ||
      getType().getElementType() != elementTypeOf(getLhs().getType()))
    return emitOpError("result must be the operands' shape with a last dimension of 2");
  return success();
}

LogicalResult SplitOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  if (src.getRank() < 1 || src.getShape().back() != 2)
    return emitOpError("operand's last dimension must be 2");
  if (shapeOrScalar(getType()) != src.getShape().drop_back() ||
      elementTypeOf(getType()) != src.getElementType())
    return emitOpError("result shape must be the operand's without its last dimension");
  if (src.getRank() == 1 && isa<RankedTensorType>(getType()))
    return emitOpError("splitting a 1-D tile gives scalars");
  return success();
}

LogicalResult DotOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType()), b = cast<RankedTensorType>(getB().getType());
  auto c = cast<RankedTensorType>(getC().getType());
  const int64_t rank = a.getRank();
  if ((rank != 2 && rank != 3) || b.getRank() != rank || c.getRank() != rank)
    return emitOpError("operands must be [M, K] * [K, N] + [M, N], or batched [B, M, K] * [B, K, N] + [B, M, N]");
  if (rank == 3 && (b.getDimSize(0) != a.getDimSize(0) || c.getDimSize(0) != a.getDimSize(0)))
    return emitOpError("the batch sizes differ");
  // An e2m1 operand holds two K a byte.
  const int64_t M = a.getDimSize(rank - 2), K = a.getDimSize(rank - 1) * (getAE2m1() ? 2 : 1),
                N = b.getDimSize(rank - 1), KB = b.getDimSize(rank - 2) * (getBE2m1() ? 2 : 1);
  if (KB != K)
    return emitOpError("K differs: a's is ") << K << ", b's " << KB;
  if (c.getDimSize(rank - 2) != M || c.getDimSize(rank - 1) != N)
    return emitOpError("the accumulator must be [M, N] = [") << M << ", " << N << "]";
  Type in = a.getElementType(), inB = b.getElementType(), acc = c.getElementType();
  auto fnuz = [](Type t) { return isa<Float8E4M3FNUZType, Float8E5M2FNUZType>(t); };
  auto ocp = [](Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); };
  // e2m1: i8 bytes beside e2m1 or an OCP 8-bit float, 2-D.
  if (getAE2m1() || getBE2m1()) {
    auto mx = [&](Type t, bool e2m1) { return e2m1 ? t.isInteger(8) : ocp(t); };
    if (rank != 2 || !mx(in, getAE2m1()) || !mx(inB, getBE2m1()) || !acc.isF32())
      return emitOpError("takes e2m1 operands as 2-D i8 bytes beside e2m1 or OCP 8-bit float ones, with an f32 "
                         "accumulator");
  }
  // 8-bit floats mix E4M3 with E5M2 within a family (the MFMAs' fp8/bf8
  // forms); other operands have one element type.
  const bool fp8 = (fnuz(in) && fnuz(inB)) || (ocp(in) && ocp(inB)) || getAE2m1() || getBE2m1();
  if (in != inB && !fp8)
    return emitOpError("a and b must have one element type, or be 8-bit floats of one family (OCP or FNUZ)");
  bool floats = in.isF16() || in.isBF16() || in.isF32() || fp8;
  if (!(floats && acc.isF32()) && !(in.isInteger(8) && acc.isInteger(32)))
    return emitOpError("takes f16, bf16, f32 or 8-bit float operands with an f32 accumulator, or i8 with i32");
  if (!getAScale() && !getBScale())
    return success();
  if (!getAScale() || !getBScale())
    return emitOpError("takes both scales or neither");
  if (rank != 2 || !(ocp(in) || getAE2m1()) || !(ocp(inB) || getBE2m1()) || K % 32 != 0)
    return emitOpError("scales 2-D OCP 8-bit float or e2m1 operands whose K is a multiple of 32");
  auto sa = cast<RankedTensorType>(getAScale().getType()), sb = cast<RankedTensorType>(getBScale().getType());
  if (!sa.getElementType().isInteger(8) || !sb.getElementType().isInteger(8) ||
      sa.getShape() != ArrayRef<int64_t>{M, K / 32} || sb.getShape() != ArrayRef<int64_t>{N, K / 32})
    return emitOpError("scales are i8 [M, K / 32] and [N, K / 32] = [")
           << M << ", " << K / 32 << "] and [" << N << ", " << K / 32 << "]";
  return success();
}

LogicalResult DotScaledOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType()), b = cast<RankedTensorType>(getB().getType());
  auto c = cast<RankedTensorType>(getC().getType());
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError("operands must be [M, K] * [K, N] + [M, N]");
  // e2m1 packs two elements in a byte along K.
  constexpr int32_t kE2m1 = 0;
  const int64_t M = a.getDimSize(0), N = b.getDimSize(1);
  const int64_t K = a.getDimSize(1) * (getAFormat() == kE2m1 ? 2 : 1);
  if (b.getDimSize(0) * (getBFormat() == kE2m1 ? 2 : 1) != K || K % 32 != 0)
    return emitOpError("a and b must hold one K, a multiple of 32");
  if (c.getShape() != ArrayRef<int64_t>{M, N} || !c.getElementType().isF32())
    return emitOpError("the accumulator must be f32 [M, N]");
  auto scaleIs = [&](Value s, ArrayRef<int64_t> shape) {
    if (!s)
      return true;
    auto t = cast<RankedTensorType>(s.getType());
    return t.getElementType().isInteger(8) && t.getShape() == shape;
  };
  if (!scaleIs(getAScale(), {M, K / 32}) || !scaleIs(getBScale(), {N, K / 32}))
    return emitOpError("scales are i8 [M, K / 32] and [N, K / 32]");
  return success();
}

// A tile and the LDS buffer it goes to or comes from.
static LogicalResult verifyLocalAccess(Operation *op, Value buffer, Type tile) {
  auto lds = cast<LdsType>(buffer.getType());
  auto t = cast<RankedTensorType>(tile);
  if (t.getShape() != lds.getTileShape() || t.getElementType() != lds.getElementType())
    return op->emitOpError("tile ") << t << " does not match a slot of " << lds;
  return success();
}

LogicalResult BufferLoadToLocalOp::verify() {
  auto lds = cast<LdsType>(getBuffer().getType());
  if (lds.getElementType() != pointeeOf(getBase().getType()))
    return emitOpError("buffer element type must be the pointee type ") << pointeeOf(getBase().getType());
  if (getOffsets().getType().getShape() != lds.getTileShape())
    return emitOpError("offsets ") << getOffsets().getType() << " do not match a slot of " << lds;
  if (getMask() && failed(verifySameShape(*this, getOffsets().getType(), getMask().getType(), "mask")))
    return failure();
  return success();
}

LogicalResult LocalStoreOp::verify() { return verifyLocalAccess(*this, getBuffer(), getSrc().getType()); }
LogicalResult LocalLoadOp::verify() { return verifyLocalAccess(*this, getBuffer(), getType()); }
