// The tracer's untyped core: records nodes, checks shapes, and makes every
// elementwise node's operands share one shape (Splat, ExpandDims, Broadcast).
#include "tessel/tracer.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <initializer_list>
#include <limits>
#include <string>

namespace tessel::detail {

namespace {

// Traces open on this thread, innermost last.
thread_local std::vector<TraceContext *> openTraces;

std::string formatShape(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

constexpr size_t kMaxRank = 2;

// The most elements one tile may hold (Triton's limit too): a block
// program's tile lives in one workgroup's registers and LDS, and far larger
// shapes would only exhaust the compiler's memory.
constexpr int kMaxTileElementsLog2 = 20;

// Error unless a shape of power-of-two dimensions has at most 2^20 elements.
void checkTileElements(const OpSite &site, const Shape &shape) {
  int log2 = 0;
  for (int64_t d : shape)
    log2 += std::countr_zero(static_cast<uint64_t>(d)); // d is a power of two
  if (log2 > kMaxTileElementsLog2)
    fail(site, "shape " + formatShape(shape) + " has 2^" + std::to_string(log2) + " elements; a tile holds at most 2^" +
                   std::to_string(kMaxTileElementsLog2) + " = " + std::to_string(1 << kMaxTileElementsLog2) +
                   " (split the work over more programs)");
}

// Tile shapes the user asks for must be powers of two, at most 2-D and at
// most 2^20 elements.
void checkTileShape(const OpSite &site, const Shape &shape) {
  if (shape.size() > kMaxRank)
    fail(site, "rank-" + std::to_string(shape.size()) + " tiles are not supported yet (at most 2-D); shape " +
                   formatShape(shape));
  for (int64_t d : shape)
    if (!isPowerOfTwo(d))
      fail(site, "dimension " + std::to_string(d) + " of shape " + formatShape(shape) +
                     " is not a power of two (tile dimensions must be powers of two)");
  checkTileElements(site, shape);
}

// Whether `v`'s trace is still being recorded. Compares addresses before
// touching the context, which may have been destroyed.
bool isLive(const ValueRef &v) {
  return std::find(openTraces.begin(), openTraces.end(), v.ctx) != openTraces.end() &&
         v.ctx->serial() == v.serial;
}

std::atomic<uint64_t> nextSerial{1};

constexpr const char *kCaptureMessage =
    "a combine function may only use its arguments (and literals), not tiles from outside it";

// The trace all tile operands belong to.
template <class Operands> TraceContext &contextOfAll(const OpSite &site, const Operands &operands) {
  TraceContext *inner = openTraces.empty() ? nullptr : openTraces.back();
  TraceContext *found = nullptr;
  for (const Operand *o : operands) {
    if (!o || o->kind != Operand::Value) continue;
    TraceContext *ctx = o->value.ctx;
    if (!ctx)
      fail(site, "uses an empty tile (default-constructed and never assigned)");
    if (!isLive(o->value))
      fail(site, "uses a tile of a trace that has ended (tiles live only while their kernel is traced)");
    // While a combine function is traced, every value must come from it.
    if (inner && inner->isRegion() && ctx != inner)
      fail(site, kCaptureMessage);
    if (found && found != ctx)
      fail(site, "combines tiles of two different traces");
    found = ctx;
  }
  if (!found) fail(site, "needs at least one tile operand");
  return *found;
}
TraceContext &contextOf(const OpSite &site, std::initializer_list<const Operand *> operands) {
  return contextOfAll(site, operands);
}

// Inside a combine function every value is a scalar.
void checkRegionScalar(const TraceContext &ctx, const OpSite &site, const Shape &shape) {
  if (ctx.isRegion() && !shape.empty())
    fail(site, "a combine function works on scalars; this would make a tile of shape " + formatShape(shape));
}

bool intFits(int64_t v, DType t) {
  switch (t) {
  case DType::I1: return v == 0 || v == 1;
  case DType::I8: return v >= INT8_MIN && v <= INT8_MAX;
  case DType::I16: return v >= INT16_MIN && v <= INT16_MAX;
  case DType::I32: return v >= INT32_MIN && v <= INT32_MAX;
  default: return true;
  }
}

TraceNode makeNode(TraceOp op, DType dtype, bool isPtr, Shape shape, std::vector<int32_t> operands,
                   SourceLoc loc) {
  TraceNode n{};
  n.op = op;
  n.dtype = dtype;
  n.isPtr = isPtr;
  n.shape = std::move(shape);
  n.operands = std::move(operands);
  n.loc = loc;
  return n;
}

// A constant of element type `elem` (scalar unless `shape` is given).
int32_t constant(TraceContext &ctx, const OpSite &site, const Operand &lit, DType elem, Shape shape = {}) {
  if (lit.kind == Operand::FloatLiteral && !isFloat(elem))
    fail(site, "a floating-point literal cannot become " + std::string(dtypeName(elem)));
  if (lit.kind == Operand::IntLiteral && (lit.literalTooLarge || !intFits(lit.i, elem)) && !isFloat(elem))
    fail(site, "literal " + (lit.literalTooLarge ? std::string("above INT64_MAX") : std::to_string(lit.i)) +
                   " does not fit in " + dtypeName(elem));
  bool asFloat = isFloat(elem);
  TraceNode n = makeNode(asFloat ? TraceOp::ConstFloat : TraceOp::ConstInt, elem, false, std::move(shape), {},
                         site.loc);
  if (asFloat)
    n.f = lit.kind == Operand::FloatLiteral ? lit.f : static_cast<double>(lit.i);
  else
    n.i0 = lit.i;
  return ctx.addNode(std::move(n));
}

// The node id of an operand; literals become constants of `elem`.
int32_t materialize(TraceContext &ctx, const OpSite &site, const Operand &o, DType elem) {
  if (o.kind == Operand::Value) return o.value.id;
  return constant(ctx, site, o, elem);
}

// numpy/Triton broadcasting of two shapes.
Shape broadcastShapes(const OpSite &site, const Shape &a, const Shape &b) {
  Shape result(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < result.size(); ++i) {
    // Align trailing dimensions; missing leading dims are 1.
    size_t ra = result.size() - i, rb = result.size() - i;
    int64_t da = ra <= a.size() ? a[a.size() - ra] : 1;
    int64_t db = rb <= b.size() ? b[b.size() - rb] : 1;
    if (da != db && da != 1 && db != 1)
      fail(site, "shapes " + formatShape(a) + " and " + formatShape(b) + " are not broadcast-compatible");
    result[i] = da == 1 ? db : da;
  }
  checkTileElements(site, result); // [N, 1] + [1, N] grows
  return result;
}

// Whether `from` grows into `to` by adding leading 1s and growing size-1 dims.
bool broadcastsTo(const Shape &from, const Shape &to) {
  if (from.size() > to.size()) return false;
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != to[lead + i] && from[i] != 1) return false;
  return true;
}

// Reshapes node `id` to `to` (which it must broadcast to): Splat for scalars,
// else ExpandDims(0) per missing leading dim, then Broadcast.
int32_t broadcastNode(TraceContext &ctx, const OpSite &site, int32_t id, const Shape &to) {
  TraceNode src = ctx.node(id); // copy: addNode may move the node storage
  if (src.shape == to) return id;
  if (src.shape.empty())
    return emitOp(ctx, site, "tessel.splat", {id}, src.dtype, src.isPtr, to, {}).id;
  Shape shape = src.shape;
  while (shape.size() < to.size()) {
    shape.insert(shape.begin(), 1);
    id = emitOp(ctx, site, "tessel.expand_dims", {id}, src.dtype, src.isPtr, shape,
                {{TraceAttr::I32, "axis", 0}}).id;
  }
  if (shape != to)
    id = emitOp(ctx, site, "tessel.broadcast", {id}, src.dtype, src.isPtr, to, {}).id;
  return id;
}

bool isComparison(TraceOp op) { return op >= TraceOp::CmpEq && op <= TraceOp::CmpGe; }

} // namespace

TraceContext::TraceContext(std::string kernelName, bool isRegion)
    : serial_(nextSerial++), isRegion_(isRegion) {
  trace_.kernelName = std::move(kernelName);
}

int32_t TraceContext::addNode(TraceNode node) {
  trace_.nodes.push_back(std::move(node));
  return static_cast<int32_t>(trace_.nodes.size() - 1);
}

int32_t TraceContext::addArg(TraceArg arg, SourceLoc loc) {
  TraceNode n = makeNode(TraceOp::Arg, arg.dtype, arg.kind == TraceArg::Pointer, {}, {}, loc);
  n.i0 = static_cast<int64_t>(trace_.args.size());
  trace_.args.push_back(arg);
  return addNode(std::move(n));
}

TraceScope::TraceScope(TraceContext &context) { openTraces.push_back(&context); }
TraceScope::~TraceScope() { openTraces.pop_back(); }

void fail(const OpSite &site, const std::string &message) {
  throw Error(std::string(site.loc.file) + ":" + std::to_string(site.loc.line) + ": " + site.name + ": " +
              message);
}

TraceContext &currentContext(const char *op, SourceLoc loc) {
  if (openTraces.empty())
    fail({op, loc}, "called outside a kernel trace (tile ops run only while jit/Kernel traces a kernel)");
  return *openTraces.back();
}

Shape shapeOf(ValueRef v, const OpSite &site) {
  Operand o = Operand::of(v);
  contextOf(site, {&o}); // the same checks as any op: empty, ended
  return v.ctx->node(v.id).shape;
}

ValueRef emitBinary(TraceOp op, const OpSite &site, Operand a, Operand b, DType elem) {
  TraceContext &ctx = contextOf(site, {&a, &b});
  int32_t ia = materialize(ctx, site, a, elem);
  int32_t ib = materialize(ctx, site, b, elem);
  Shape shape = broadcastShapes(site, ctx.node(ia).shape, ctx.node(ib).shape);
  ia = broadcastNode(ctx, site, ia, shape);
  ib = broadcastNode(ctx, site, ib, shape);
  DType result = isComparison(op) ? DType::I1 : elem;
  return ctx.ref(ctx.addNode(makeNode(op, result, false, std::move(shape), {ia, ib}, site.loc)));
}

ValueRef emitUnary(TraceOp op, const OpSite &site, ValueRef a) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  const TraceNode &src = ctx.node(a.id);
  TraceNode n = makeNode(op, src.dtype, false, src.shape, {a.id}, site.loc);
  return ctx.ref(ctx.addNode(std::move(n)));
}

ValueRef emitFma(const OpSite &site, Operand a, Operand b, Operand c, DType elem) {
  TraceContext &ctx = contextOf(site, {&a, &b, &c});
  int32_t ids[3] = {materialize(ctx, site, a, elem), materialize(ctx, site, b, elem),
                    materialize(ctx, site, c, elem)};
  Shape shape = broadcastShapes(site, broadcastShapes(site, ctx.node(ids[0]).shape, ctx.node(ids[1]).shape),
                                ctx.node(ids[2]).shape);
  for (int32_t &id : ids) id = broadcastNode(ctx, site, id, shape);
  return ctx.ref(ctx.addNode(makeNode(TraceOp::Fma, elem, false, shape, {ids[0], ids[1], ids[2]}, site.loc)));
}

ValueRef emitWhere(const OpSite &site, Operand cond, Operand a, Operand b, DType elem) {
  TraceContext &ctx = contextOf(site, {&cond, &a, &b});
  int32_t ids[3] = {materialize(ctx, site, cond, DType::I1), materialize(ctx, site, a, elem),
                    materialize(ctx, site, b, elem)};
  Shape shape = broadcastShapes(site, broadcastShapes(site, ctx.node(ids[0]).shape, ctx.node(ids[1]).shape),
                                ctx.node(ids[2]).shape);
  for (int32_t &id : ids) id = broadcastNode(ctx, site, id, shape);
  return ctx.ref(ctx.addNode(makeNode(TraceOp::Where, elem, false, shape, {ids[0], ids[1], ids[2]}, site.loc)));
}

ValueRef emitCast(const OpSite &site, ValueRef a, DType to) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  const TraceNode &src = ctx.node(a.id);
  if (src.dtype == to) return a; // nothing to convert
  TraceNode n = makeNode(TraceOp::Cast, to, false, src.shape, {a.id}, site.loc);
  return ctx.ref(ctx.addNode(std::move(n)));
}

ValueRef emitAddPtr(const OpSite &site, Operand ptr, Operand offset) {
  TraceContext &ctx = contextOf(site, {&ptr, &offset});
  int32_t ip = ptr.value.id;
  // A literal offset is i32 when it fits (the common case), else i64.
  int32_t io = offset.kind == Operand::Value
                   ? offset.value.id
                   : constant(ctx, site, offset, intFits(offset.i, DType::I32) ? DType::I32 : DType::I64);
  Shape shape = broadcastShapes(site, ctx.node(ip).shape, ctx.node(io).shape);
  ip = broadcastNode(ctx, site, ip, shape);
  io = broadcastNode(ctx, site, io, shape);
  DType pointee = ctx.node(ip).dtype;
  return emitOp(ctx, site, "tessel.addptr", {ip, io}, pointee, true, std::move(shape), {});
}

ValueRef emitLoad(const OpSite &site, ValueRef ptr, const Operand *mask, const Operand *other) {
  Operand op = Operand::of(ptr);
  TraceContext &ctx = contextOf(site, {&op, mask, other});
  DType pointee = ctx.node(ptr.id).dtype;
  std::vector<int32_t> ids{ptr.id};
  if (mask) ids.push_back(materialize(ctx, site, *mask, DType::I1));
  if (other) ids.push_back(materialize(ctx, site, *other, pointee));
  Shape shape = ctx.node(ptr.id).shape;
  for (size_t i = 1; i < ids.size(); ++i) shape = broadcastShapes(site, shape, ctx.node(ids[i]).shape);
  for (int32_t &id : ids) id = broadcastNode(ctx, site, id, shape);
  std::vector<int64_t> segments{1, mask ? 1 : 0, other ? 1 : 0};
  return emitOp(ctx, site, "tessel.load", std::move(ids), pointee, false, std::move(shape),
                {{TraceAttr::I32Array, "operandSegmentSizes", 0, std::move(segments)}});
}

void emitStore(const OpSite &site, ValueRef ptr, Operand value, const Operand *mask) {
  Operand op = Operand::of(ptr);
  TraceContext &ctx = contextOf(site, {&op, &value, mask});
  DType pointee = ctx.node(ptr.id).dtype;
  Shape shape = ctx.node(ptr.id).shape;
  // Store writes where the pointers say: values and mask follow the pointers' shape.
  auto fitToPointers = [&](int32_t id, const char *what) {
    const Shape &from = ctx.node(id).shape;
    if (!broadcastsTo(from, shape))
      fail(site, std::string(what) + " of shape " + formatShape(from) +
                     " does not broadcast to the pointers' shape " + formatShape(shape));
    return broadcastNode(ctx, site, id, shape);
  };
  std::vector<int32_t> ids{ptr.id, fitToPointers(materialize(ctx, site, value, pointee), "the value")};
  if (mask) ids.push_back(fitToPointers(materialize(ctx, site, *mask, DType::I1), "the mask"));
  emitOp(ctx, site, "tessel.store", std::move(ids), pointee, false, std::move(shape), {}, /*results=*/0);
}

ValueRef emitOp(TraceContext &ctx, const OpSite &site, const char *name, std::vector<int32_t> operands,
                DType dtype, bool isPtr, Shape shape, std::vector<TraceAttr> attrs, uint8_t results) {
  TraceNode n = makeNode(TraceOp::Op, dtype, isPtr, std::move(shape), std::move(operands), site.loc);
  n.name = name;
  n.attrs = std::move(attrs);
  n.results = results;
  return ctx.ref(ctx.addNode(std::move(n)));
}

ValueRef emitProgramIndex(const char *opName, const OpSite &site, int axis) {
  TraceContext &ctx = currentContext(site.name, site.loc);
  if (ctx.isRegion()) fail(site, "cannot be used inside a combine function");
  if (axis < 0 || axis > 2)
    fail(site, "axis " + std::to_string(axis) + " is out of range (0, 1 or 2)");
  return emitOp(ctx, site, opName, {}, DType::I32, false, {}, {{TraceAttr::I32, "axis", axis}});
}

ValueRef emitArange(const OpSite &site, int64_t lo, int64_t hi) {
  TraceContext &ctx = currentContext(site.name, site.loc);
  if (ctx.isRegion()) fail(site, "cannot be used inside a combine function");
  if (lo < INT32_MIN || hi > INT32_MAX)
    fail(site, "bounds [" + std::to_string(lo) + ", " + std::to_string(hi) + ") do not fit in i32");
  if (!isPowerOfTwo(hi - lo))
    fail(site, "length hi - lo = " + std::to_string(hi - lo) + " (arange(" + std::to_string(lo) + ", " +
                   std::to_string(hi) + ")) must be a power of two > 0");
  checkTileElements(site, {hi - lo});
  return emitOp(ctx, site, "tessel.make_range", {}, DType::I32, false, {hi - lo},
                {{TraceAttr::I32, "start", lo}, {TraceAttr::I32, "end", hi}});
}

ValueRef emitFull(const OpSite &site, const Shape &shape, Operand value, DType elem) {
  TraceContext &ctx =
      value.kind == Operand::Value ? contextOf(site, {&value}) : currentContext(site.name, site.loc);
  checkTileShape(site, shape);
  checkRegionScalar(ctx, site, shape);
  if (value.kind != Operand::Value) return ctx.ref(constant(ctx, site, value, elem, shape));
  if (!ctx.node(value.value.id).shape.empty())
    fail(site, "the fill value must be a scalar, not a tile of shape " +
                   formatShape(ctx.node(value.value.id).shape));
  return ctx.ref(broadcastNode(ctx, site, value.value.id, shape));
}

ValueRef emitBroadcastTo(const OpSite &site, ValueRef a, const Shape &shape) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  checkTileShape(site, shape);
  checkRegionScalar(ctx, site, shape);
  const Shape &from = ctx.node(a.id).shape;
  if (!broadcastsTo(from, shape))
    fail(site, "shape " + formatShape(from) + " does not broadcast to " + formatShape(shape));
  return ctx.ref(broadcastNode(ctx, site, a.id, shape));
}

ValueRef emitExpandDims(const OpSite &site, ValueRef a, int64_t axis) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  TraceNode src = ctx.node(a.id);
  int64_t rank = static_cast<int64_t>(src.shape.size());
  if (axis < -(rank + 1) || axis > rank)
    fail(site, "axis " + std::to_string(axis) + " is out of range for a rank-" + std::to_string(rank) +
                   " tile (valid: " + std::to_string(-(rank + 1)) + " to " + std::to_string(rank) + ")");
  if (axis < 0) axis += rank + 1;
  Shape shape = src.shape;
  shape.insert(shape.begin() + axis, 1);
  checkTileShape(site, shape);
  checkRegionScalar(ctx, site, shape);
  // A scalar (a 1-D reduction kept with keep_dims) becomes a 1-element tile.
  if (src.shape.empty())
    return emitOp(ctx, site, "tessel.splat", {a.id}, src.dtype, src.isPtr, std::move(shape), {});
  return emitOp(ctx, site, "tessel.expand_dims", {a.id}, src.dtype, src.isPtr, std::move(shape),
                {{TraceAttr::I32, "axis", axis}});
}


// ---- shape changes ----

namespace {
int64_t elementCount(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// `axis` (negative counts from the end) as an index into a tile of `shape`.
int64_t normalizeAxis(const OpSite &site, const Shape &shape, int64_t axis) {
  int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0)
    fail(site, "needs a tile with at least one dimension, not a scalar");
  if (axis < -rank || axis >= rank)
    fail(site, "axis " + std::to_string(axis) + " is out of range for a rank-" + std::to_string(rank) +
                   " tile (valid: " + std::to_string(-rank) + " to " + std::to_string(rank - 1) + ")");
  return axis < 0 ? axis + rank : axis;
}
} // namespace

ValueRef emitReshape(const OpSite &site, ValueRef a, const Shape &shape) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  TraceNode src = ctx.node(a.id);
  if (src.shape.empty())
    fail(site, "the operand is a scalar; make a tile of it with full(shape, value)");
  if (shape.empty())
    fail(site, "cannot reshape to a scalar (shape []); use a reduction such as sum");
  checkTileShape(site, shape);
  if (elementCount(src.shape) != elementCount(shape))
    fail(site, "cannot reshape " + formatShape(src.shape) + " (" + std::to_string(elementCount(src.shape)) +
                   " elements) to " + formatShape(shape) + " (" + std::to_string(elementCount(shape)) +
                   " elements)");
  if (src.shape == shape) return a;
  return emitOp(ctx, site, "tessel.reshape", {a.id}, src.dtype, src.isPtr, shape, {});
}

ValueRef emitPermute(const OpSite &site, ValueRef a, const std::vector<int64_t> &perm) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  TraceNode src = ctx.node(a.id);
  size_t rank = src.shape.size();
  std::vector<bool> seen(rank, false);
  bool valid = perm.size() == rank;
  for (size_t i = 0; valid && i < rank; ++i) {
    valid = perm[i] >= 0 && perm[i] < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(perm[i])];
    if (valid) seen[static_cast<size_t>(perm[i])] = true;
  }
  if (!valid)
    fail(site, "dims " + formatShape(perm) + " are not a permutation of the " + std::to_string(rank) +
                   " dimensions of shape " + formatShape(src.shape) + " (each of 0.." +
                   std::to_string(static_cast<int64_t>(rank) - 1) + " once)");
  bool identity = true;
  Shape shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    shape[i] = src.shape[static_cast<size_t>(perm[i])];
    identity = identity && perm[i] == static_cast<int64_t>(i);
  }
  if (identity) return a;
  return emitOp(ctx, site, "tessel.permute", {a.id}, src.dtype, src.isPtr, std::move(shape),
                {{TraceAttr::I32Array, "order", 0, perm}});
}

ValueRef emitTrans(const OpSite &site, ValueRef a) {
  Shape shape = shapeOf(a, site);
  if (shape.size() != 2)
    fail(site, "needs a 2-D tile, not shape " + formatShape(shape) + " (use permute for other ranks)");
  return emitPermute(site, a, {1, 0});
}

ValueRef emitJoin(const OpSite &site, ValueRef a, ValueRef b) {
  Operand oa = Operand::of(a), ob = Operand::of(b);
  TraceContext &ctx = contextOf(site, {&oa, &ob});
  TraceNode src = ctx.node(a.id);
  const Shape &other = ctx.node(b.id).shape;
  if (src.shape != other)
    fail(site, "the tiles' shapes differ: " + formatShape(src.shape) + " and " + formatShape(other) +
                   " (join needs one shape)");
  Shape shape = src.shape;
  shape.push_back(2);
  if (shape.size() > kMaxRank)
    fail(site, "joining tiles of shape " + formatShape(src.shape) + " would make the rank-3 tile " +
                   formatShape(shape) + "; at most 2-D tiles are supported yet (join 1-D tiles or scalars)");
  checkTileElements(site, shape);
  checkRegionScalar(ctx, site, shape);
  return emitOp(ctx, site, "tessel.join", {a.id, b.id}, src.dtype, src.isPtr, std::move(shape), {});
}

std::pair<ValueRef, ValueRef> emitSplit(const OpSite &site, ValueRef a) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  TraceNode src = ctx.node(a.id);
  if (src.shape.empty() || src.shape.back() != 2)
    fail(site, "the last dimension must be 2, not shape " + formatShape(src.shape) + " (split undoes join)");
  Shape shape(src.shape.begin(), src.shape.end() - 1);
  ValueRef halves[2];
  for (int64_t half = 0; half < 2; ++half) {
    halves[half] = emitOp(ctx, site, "tessel.split", {a.id}, src.dtype, src.isPtr, shape,
                          {{TraceAttr::I32, "half", half}});
  }
  return {halves[0], halves[1]};
}

// ---- reductions and scans ----

std::vector<ValueRef> emitRegionOp(TraceOp op, const OpSite &site, const std::vector<ValueRef> &inputs,
                                   int64_t axis, bool flag, const CombineFn &combine) {
  std::vector<Operand> operands;
  for (const ValueRef &v : inputs) operands.push_back(Operand::of(v));
  std::vector<const Operand *> pointers;
  for (const Operand &o : operands) pointers.push_back(&o);
  TraceContext &ctx = contextOfAll(site, pointers);
  const size_t n = inputs.size();
  Shape shape = ctx.node(inputs[0].id).shape;
  for (size_t k = 1; k < n; ++k)
    if (ctx.node(inputs[k].id).shape != shape)
      fail(site, "the inputs' shapes differ: input 0 is " + formatShape(shape) + ", input " + std::to_string(k) +
                     " is " + formatShape(ctx.node(inputs[k].id).shape));
  axis = normalizeAxis(site, shape, axis);

  // Trace the combine once, into its own (region) context.
  TraceContext region("combine", /*isRegion=*/true);
  {
    TraceScope scope(region);
    std::vector<ValueRef> args;
    for (size_t k = 0; k < 2 * n; ++k) {
      TraceNode arg = makeNode(TraceOp::RegionArg, ctx.node(inputs[k % n].id).dtype, false, {}, {}, site.loc);
      arg.i0 = static_cast<int64_t>(k);
      args.push_back(region.ref(region.addNode(std::move(arg))));
    }
    std::vector<ValueRef> results = combine(args);
    // The typed layer checks the count and element types at compile time;
    // what it cannot see is where the returned values come from.
    std::vector<int32_t> ids;
    for (size_t k = 0; k < results.size(); ++k) {
      const ValueRef &r = results[k];
      if (!r.ctx)
        fail(site, "the combine function returned an empty tile (default-constructed and never assigned)");
      if (r.ctx != &region || r.serial != region.serial())
        fail(site, kCaptureMessage);
      const TraceNode &rn = region.node(r.id);
      if (k >= n || rn.dtype != ctx.node(inputs[k].id).dtype || !rn.shape.empty())
        fail(site, "the combine function must return " + std::to_string(n) +
                       " scalars of the inputs' element types");
      ids.push_back(r.id);
    }
    if (results.size() != n)
      fail(site, "the combine function must return " + std::to_string(n) + " scalars of the inputs' element types");
    region.addNode(makeNode(TraceOp::Yield, region.node(ids[0]).dtype, false, {}, std::move(ids), site.loc));
  }

  Shape resultShape = shape;
  if (op == TraceOp::Reduce) resultShape.erase(resultShape.begin() + axis);
  std::vector<int32_t> inputIds;
  for (const ValueRef &v : inputs) inputIds.push_back(v.id);
  TraceNode node = makeNode(op, ctx.node(inputs[0].id).dtype, false, resultShape, std::move(inputIds), site.loc);
  node.i0 = axis;
  if (op == TraceOp::Scan) node.i1 = flag ? 1 : 0;
  node.region = region.take().nodes;
  int32_t id = ctx.addNode(std::move(node));

  std::vector<ValueRef> results;
  for (size_t k = 0; k < n; ++k) {
    TraceNode r = makeNode(TraceOp::Result, ctx.node(inputs[k].id).dtype, false, resultShape, {id}, site.loc);
    r.i0 = static_cast<int64_t>(k);
    ValueRef result = ctx.ref(ctx.addNode(std::move(r)));
    if (op == TraceOp::Reduce && flag) result = emitExpandDims(site, result, axis);
    results.push_back(result);
  }
  return results;
}

ValueRef emitBinaryRegionOp(TraceOp op, TraceOp combineOp, const OpSite &site, ValueRef a, int64_t axis,
                            bool flag) {
  Operand oa = Operand::of(a);
  DType dtype = contextOf(site, {&oa}).node(a.id).dtype;
  CombineFn combine = [&](const std::vector<ValueRef> &args) {
    return std::vector<ValueRef>{emitBinary(combineOp, site, Operand::of(args[0]), Operand::of(args[1]), dtype)};
  };
  return emitRegionOp(op, site, {a}, axis, flag, combine)[0];
}

ValueRef emitArgReduce(const OpSite &site, ValueRef a, int64_t axis, bool keepDims, bool isMax) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  TraceNode src = ctx.node(a.id);
  axis = normalizeAxis(site, src.shape, axis);

  // Each element's index along `axis`, as a tile of the input's shape.
  int64_t length = src.shape[static_cast<size_t>(axis)];
  ValueRef index = emitOp(ctx, site, "tessel.make_range", {}, DType::I32, false, {length},
                          {{TraceAttr::I32, "start", 0}, {TraceAttr::I32, "end", length}});
  if (src.shape.size() == 2) {
    index = emitExpandDims(site, index, 1 - axis);
    index = ctx.ref(broadcastNode(ctx, site, index.id, src.shape));
  }

  // (v0, i0) accumulated, (v1, i1) next: take the next pair when its value is
  // more extreme, or equally extreme at a smaller index. A total order (NaN
  // most extreme for floats), so the combine is associative.
  CombineFn combine = [&](const std::vector<ValueRef> &args) {
    auto bin = [&](TraceOp op, ValueRef x, ValueRef y, DType dt) {
      return emitBinary(op, site, Operand::of(x), Operand::of(y), dt);
    };
    ValueRef v0 = args[0], i0 = args[1], v1 = args[2], i1 = args[3];
    DType dt = src.dtype;
    ValueRef better = bin(isMax ? TraceOp::CmpGt : TraceOp::CmpLt, v1, v0, dt);
    ValueRef tie = bin(TraceOp::CmpEq, v1, v0, dt);
    if (isFloat(dt)) {
      ValueRef nan1 = bin(TraceOp::CmpNe, v1, v1, dt), nan0 = bin(TraceOp::CmpNe, v0, v0, dt);
      better = bin(TraceOp::Or, better, bin(TraceOp::And, nan1, emitUnary(TraceOp::Not, site, nan0), DType::I1),
                   DType::I1);
      tie = bin(TraceOp::Or, tie, bin(TraceOp::And, nan1, nan0, DType::I1), DType::I1);
    }
    ValueRef take = bin(TraceOp::Or, better, bin(TraceOp::And, tie, bin(TraceOp::CmpLt, i1, i0, DType::I32), DType::I1),
                        DType::I1);
    return std::vector<ValueRef>{
        emitWhere(site, Operand::of(take), Operand::of(v1), Operand::of(v0), dt),
        emitWhere(site, Operand::of(take), Operand::of(i1), Operand::of(i0), DType::I32)};
  };
  // Only the index is returned: keep_dims expands it alone, so the value
  // result stays unread and the compiler may drop it.
  ValueRef result = emitRegionOp(TraceOp::Reduce, site, {a, index}, axis, false, combine)[1];
  return keepDims ? emitExpandDims(site, result, axis) : result;
}

// ---- facts for the analyses ----

void emitAssume(const OpSite &site, ValueRef cond) {
  Operand oc = Operand::of(cond);
  TraceContext &ctx = contextOf(site, {&oc});
  if (ctx.isRegion()) fail(site, "cannot be used inside a combine function");
  const Shape &shape = ctx.node(cond.id).shape;
  if (!shape.empty())
    fail(site, "the condition must be a scalar bool, not a tile of shape " + formatShape(shape));
  emitOp(ctx, site, "tessel.assume", {cond.id}, DType::I1, false, {}, {}, /*results=*/0);
}

namespace {
// The facts are about offsets of the kernel's tiles; a combine function's
// scalars have none to state.
TraceContext &hintContext(const OpSite &site, ValueRef a) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  if (ctx.isRegion()) fail(site, "cannot be used inside a combine function");
  return ctx;
}

// tessel.multiple_of / tessel.max_contiguous: the value unchanged, with a fact.
ValueRef emitHint(const char *opName, const char *attr, const OpSite &site, ValueRef a, int64_t value) {
  TraceContext &ctx = hintContext(site, a);
  const TraceNode &src = ctx.node(a.id);
  return emitOp(ctx, site, opName, {a.id}, src.dtype, src.isPtr, src.shape, {{TraceAttr::I64, attr, value}});
}
} // namespace

ValueRef emitMultipleOf(const OpSite &site, ValueRef a, int64_t d) {
  if (!isPowerOfTwo(d))
    fail(site, "the divisor " + std::to_string(d) + " must be a power of two > 0");
  if (hintContext(site, a).node(a.id).shape.empty())
    fail(site, "needs a tile of offsets, not a scalar; for a scalar n say assume(n % " + std::to_string(d) +
                   " == 0)");
  return emitHint("tessel.multiple_of", "divisor", site, a, d);
}

ValueRef emitMaxContiguous(const OpSite &site, ValueRef a, int64_t c) {
  if (!isPowerOfTwo(c))
    fail(site, "the run length " + std::to_string(c) + " must be a power of two > 0");
  hintContext(site, a);
  Shape shape = shapeOf(a, site);
  if (shape.empty())
    fail(site, "needs a tile, not a scalar (runs are along the last dimension)");
  if (c > shape.back())
    fail(site, "the run length " + std::to_string(c) + " exceeds the last dimension of shape " +
                   formatShape(shape));
  return emitHint("tessel.max_contiguous", "count", site, a, c);
}

} // namespace tessel::detail
