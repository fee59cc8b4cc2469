// The tracer's untyped core: the trace context and its regions, the checks
// every op starts with, constants and broadcasting (Splat, ExpandDims,
// Broadcast), and the builders of leaf, memory, shape and hint ops.
// Elementwise ops are in elementwise.cpp, reductions and scans in combine.cpp.
#include "tracer_internal.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <limits>
#include <string>

namespace tessel::detail {

namespace {

// Traces open on this thread, innermost last.
thread_local std::vector<TraceContext *> openTraces;

// Whether `v`'s trace is still being recorded. Compares addresses before
// touching the context, which may have been destroyed.
bool isLive(const ValueRef &v) {
  return std::find(openTraces.begin(), openTraces.end(), v.ctx) != openTraces.end() &&
         v.ctx->serial() == v.serial;
}

std::atomic<uint64_t> nextSerial{1};

constexpr const char *kCaptureMessage =
    "a combine function may only use its arguments (and literals), not tiles from outside it";

} // namespace

std::string formatShape(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

constexpr size_t kMaxRank = 4;

// The most elements one tile may hold (Triton's limit too): a block
// program's tile lives in one workgroup's registers and LDS, and far larger
// shapes would only exhaust the compiler's memory.
constexpr int kMaxTileElementsLog2 = 20;

void checkTileElements(const OpSite &site, const Shape &shape) {
  int log2 = 0;
  for (int64_t d : shape)
    log2 += std::countr_zero(static_cast<uint64_t>(d)); // d is a power of two
  if (log2 > kMaxTileElementsLog2)
    fail(site, "shape " + formatShape(shape) + " has 2^" + std::to_string(log2) + " elements; a tile holds at most 2^" +
                   std::to_string(kMaxTileElementsLog2) + " = " + std::to_string(1 << kMaxTileElementsLog2) +
                   " (split the work over more programs)");
}

void checkTileShape(const OpSite &site, const Shape &shape) {
  if (shape.size() > kMaxRank)
    fail(site, "rank-" + std::to_string(shape.size()) + " tiles are not supported (at most " +
                   std::to_string(kMaxRank) + "-D); shape " + formatShape(shape));
  for (int64_t d : shape)
    if (!isPowerOfTwo(d))
      fail(site, "dimension " + std::to_string(d) + " of shape " + formatShape(shape) +
                     " is not a power of two (tile dimensions must be powers of two)");
  checkTileElements(site, shape);
}

TraceContext &contextOfAll(const OpSite &site, const std::vector<const Operand *> &operands) {
  TraceContext *found = nullptr;
  for (const Operand *o : operands) {
    if (!o || o->kind != Operand::Value) continue;
    TraceContext *ctx = o->value.ctx;
    if (!ctx)
      fail(site, "uses an empty tile (default-constructed and never assigned)");
    if (!isLive(o->value))
      fail(site, "uses a tile of a trace that has ended (tiles live only while their kernel is traced)");
    if (found && found != ctx)
      fail(site, "combines tiles of two different traces");
    ctx->checkVisible(site, o->value.id);
    found = ctx;
  }
  if (!found) fail(site, "needs at least one tile operand");
  return *found;
}

void checkRegionScalar(const TraceContext &ctx, const OpSite &site, const Shape &shape) {
  if (ctx.inCombine() && !shape.empty())
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

int32_t constant(TraceContext &ctx, const OpSite &site, const Operand &lit, DType elem, Shape shape) {
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

int32_t materialize(TraceContext &ctx, const OpSite &site, const Operand &o, DType elem) {
  if (o.kind == Operand::Value) return o.value.id;
  return constant(ctx, site, o, elem);
}

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
  TraceType src = ctx.type(id); // copy: addNode may move the value table
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

int64_t normalizeAxis(const OpSite &site, const Shape &shape, int64_t axis) {
  int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0)
    fail(site, "needs a tile with at least one dimension, not a scalar");
  if (axis < -rank || axis >= rank)
    fail(site, "axis " + std::to_string(axis) + " is out of range for a rank-" + std::to_string(rank) +
                   " tile (valid: " + std::to_string(-rank) + " to " + std::to_string(rank - 1) + ")");
  return axis < 0 ? axis + rank : axis;
}

// ---- the trace context ----

TraceContext::TraceContext(std::string kernelName) : serial_(nextSerial++) {
  trace_.kernelName = std::move(kernelName);
  scopes_.push_back({RegionKind::Kernel, -1});
}

int32_t TraceContext::addNode(TraceNode node) { return addNodeTo(current_, std::move(node)); }

int32_t TraceContext::addNodeTo(int32_t scopeIndex, TraceNode node) {
  // A multi-result op's node is read through its Result nodes only.
  node.id = static_cast<int32_t>(values_.size());
  values_.push_back({node.results > 1 ? node.resultTypes.front() : node.type(), scopeIndex});
  Scope &scope = scopes_[static_cast<size_t>(scopeIndex)];
  (scope.kind == RegionKind::Kernel ? trace_.nodes : scope.nodes).push_back(std::move(node));
  return static_cast<int32_t>(values_.size() - 1);
}

int32_t TraceContext::openRegion(RegionKind kind) {
  scopes_.push_back({kind, current_});
  current_ = static_cast<int32_t>(scopes_.size() - 1);
  return current_;
}

int32_t TraceContext::appendRegionArg(int32_t scope, TraceRegion &nodes, TraceType type) {
  TraceNode arg = makeNode(TraceOp::RegionArg, type.dtype, type.isPtr, std::move(type.shape), {}, SourceLoc{});
  arg.i0 = scopes_[static_cast<size_t>(scope)].numArgs++;
  return appendTo(scope, nodes, std::move(arg));
}

int32_t TraceContext::appendTo(int32_t scope, TraceRegion &nodes, TraceNode node) {
  node.id = static_cast<int32_t>(values_.size());
  values_.push_back({node.type(), scope});
  nodes.push_back(std::move(node));
  return static_cast<int32_t>(values_.size() - 1);
}

TraceRegion TraceContext::closeRegion() {
  Scope &scope = scopes_[static_cast<size_t>(current_)];
  scope.open = false;
  current_ = scope.parent;
  return std::move(scope.nodes);
}

void TraceContext::checkVisible(const OpSite &site, int32_t id) const {
  int32_t home = values_[static_cast<size_t>(id)].scope;
  for (int32_t s = current_; s != home; s = scopes_[static_cast<size_t>(s)].parent) {
    // Climbing out of a combine function: the value is from outside it.
    if (s < 0 || scopes_[static_cast<size_t>(s)].kind == RegionKind::Combine) {
      if (s >= 0)
        fail(site, kCaptureMessage);
      break;
    }
  }
  // The value's region has closed: it was made inside a region traced
  // earlier and was not carried out of it.
  const Scope &scope = scopes_[static_cast<size_t>(home)];
  if (!scope.open) {
    if (scope.kind == RegionKind::Loop)
      fail(site, "uses a tile made inside a loop body after the loop; give its variable a value before the "
                 "loop, so that the loop carries it");
    if (scope.kind == RegionKind::Branch)
      fail(site, "uses a tile made inside a branch of if_ after it; give its variable a value before the if_, "
                 "so that the if_ returns it");
    fail(site, "uses a tile made inside a combine function outside of it");
  }
}

void TraceContext::carry(ValueRef &tile, bool assigning) {
  if (tile.ctx != this || tile.serial != serial_ || tile.id < 0) return;
  const int32_t home = values_[static_cast<size_t>(tile.id)].scope;
  // The loop bodies (and, for an assignment, branches) between the value's
  // region and here, innermost first.
  std::vector<int32_t> crossed;
  for (int32_t s = current_; s != home; s = scopes_[static_cast<size_t>(s)].parent) {
    if (s < 0) return; // made in a closed region: an error where it is used
    RegionKind kind = scopes_[static_cast<size_t>(s)].kind;
    if (kind == RegionKind::Combine) return; // a capture: an error where it is used
    if (kind == RegionKind::Loop || (assigning && kind == RegionKind::Branch)) crossed.push_back(s);
  }
  for (auto it = crossed.rbegin(); it != crossed.rend(); ++it) {
    if (scopes_[static_cast<size_t>(*it)].kind == RegionKind::Branch) {
      // A branch has no block arguments: the tile keeps its value until it
      // is assigned, and the branch returns what it then holds.
      std::vector<Carried> &list = scopes_[static_cast<size_t>(*it)].carried;
      if (std::none_of(list.begin(), list.end(), [&](const Carried &c) { return c.tile == &tile; }))
        list.push_back({&tile, tile.id, -1});
      continue;
    }
    TraceNode arg = makeNode(TraceOp::RegionArg, type(tile.id).dtype, type(tile.id).isPtr, type(tile.id).shape, {},
                             SourceLoc{});
    Scope &loop = scopes_[static_cast<size_t>(*it)];
    arg.i0 = loop.numArgs++;
    int32_t id = addNodeTo(*it, std::move(arg));
    scopes_[static_cast<size_t>(*it)].carried.push_back({&tile, tile.id, id});
    tile.id = id;
  }
}

void TraceContext::forget(const ValueRef *tile) {
  for (int32_t s = current_; s >= 0; s = scopes_[static_cast<size_t>(s)].parent)
    for (Carried &c : scopes_[static_cast<size_t>(s)].carried)
      if (c.tile == tile) c.tile = nullptr;
}

int32_t TraceContext::addRegionArg(TraceType type, SourceLoc loc) {
  TraceNode arg = makeNode(TraceOp::RegionArg, type.dtype, type.isPtr, std::move(type.shape), {}, loc);
  arg.i0 = scopes_[static_cast<size_t>(current_)].numArgs++;
  return addNode(std::move(arg));
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

void touchTile(ValueRef &v) {
  if (v.ctx && isLive(v)) v.ctx->carry(v, /*assigning=*/false);
}

void assignTile(ValueRef &v) {
  if (v.ctx && isLive(v)) v.ctx->carry(v, /*assigning=*/true);
}

void releaseTile(const ValueRef &v) {
  if (v.ctx && isLive(v)) v.ctx->forget(&v);
}

TraceContext &currentContext(const char *op, SourceLoc loc) {
  if (openTraces.empty())
    fail({op, loc}, "called outside a kernel trace (tile ops run only while jit/Kernel traces a kernel)");
  return *openTraces.back();
}

Shape shapeOf(ValueRef v, const OpSite &site) {
  Operand o = Operand::of(v);
  contextOf(site, {&o}); // the same checks as any op: empty, ended
  return v.ctx->type(v.id).shape;
}


ValueRef emitAddPtr(const OpSite &site, Operand ptr, Operand offset) {
  TraceContext &ctx = contextOf(site, {&ptr, &offset});
  int32_t ip = ptr.value.id;
  // A literal offset is i32 when it fits (the common case), else i64.
  int32_t io = offset.kind == Operand::Value
                   ? offset.value.id
                   : constant(ctx, site, offset, intFits(offset.i, DType::I32) ? DType::I32 : DType::I64);
  Shape shape = broadcastShapes(site, ctx.type(ip).shape, ctx.type(io).shape);
  ip = broadcastNode(ctx, site, ip, shape);
  io = broadcastNode(ctx, site, io, shape);
  DType pointee = ctx.type(ip).dtype;
  return emitOp(ctx, site, "tessel.addptr", {ip, io}, pointee, true, std::move(shape), {});
}

ValueRef emitLoad(const OpSite &site, ValueRef ptr, const Operand *mask, const Operand *other) {
  Operand op = Operand::of(ptr);
  TraceContext &ctx = contextOf(site, {&op, mask, other});
  DType pointee = ctx.type(ptr.id).dtype;
  std::vector<int32_t> ids{ptr.id};
  if (mask) ids.push_back(materialize(ctx, site, *mask, DType::I1));
  if (other) ids.push_back(materialize(ctx, site, *other, pointee));
  Shape shape = ctx.type(ptr.id).shape;
  for (size_t i = 1; i < ids.size(); ++i) shape = broadcastShapes(site, shape, ctx.type(ids[i]).shape);
  for (int32_t &id : ids) id = broadcastNode(ctx, site, id, shape);
  std::vector<int64_t> segments{1, mask ? 1 : 0, other ? 1 : 0};
  return emitOp(ctx, site, "tessel.load", std::move(ids), pointee, false, std::move(shape),
                {{TraceAttr::I32Array, "operandSegmentSizes", 0, std::move(segments)}});
}

void emitStore(const OpSite &site, ValueRef ptr, Operand value, const Operand *mask) {
  Operand op = Operand::of(ptr);
  TraceContext &ctx = contextOf(site, {&op, &value, mask});
  DType pointee = ctx.type(ptr.id).dtype;
  Shape shape = ctx.type(ptr.id).shape;
  // Store writes where the pointers say: values and mask follow the pointers' shape.
  auto fitToPointers = [&](int32_t id, const char *what) {
    const Shape &from = ctx.type(id).shape;
    if (!broadcastsTo(from, shape))
      fail(site, std::string(what) + " of shape " + formatShape(from) +
                     " does not broadcast to the pointers' shape " + formatShape(shape));
    return broadcastNode(ctx, site, id, shape);
  };
  std::vector<int32_t> ids{ptr.id, fitToPointers(materialize(ctx, site, value, pointee), "the value")};
  if (mask) ids.push_back(fitToPointers(materialize(ctx, site, *mask, DType::I1), "the mask"));
  emitOp(ctx, site, "tessel.store", std::move(ids), pointee, false, std::move(shape), {}, /*results=*/0);
}

ValueRef emitAtomic(const OpSite &site, int kind, ValueRef ptr, std::vector<Operand> values, const Operand *mask,
                    int sem, int scope) {
  Operand op = Operand::of(ptr);
  std::vector<const Operand *> all{&op, mask};
  for (const Operand &v : values) all.push_back(&v);
  TraceContext &ctx = contextOfAll(site, all);
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  DType pointee = ctx.type(ptr.id).dtype;
  Shape shape = ctx.type(ptr.id).shape;
  // As a store: values and mask follow the pointers' shape.
  auto fitToPointers = [&](int32_t id, const char *what) {
    const Shape &from = ctx.type(id).shape;
    if (!broadcastsTo(from, shape))
      fail(site, std::string(what) + " of shape " + formatShape(from) + " does not broadcast to the pointers' shape " +
                     formatShape(shape));
    return broadcastNode(ctx, site, id, shape);
  };
  std::vector<int32_t> ids{ptr.id};
  for (const Operand &v : values) ids.push_back(fitToPointers(materialize(ctx, site, v, pointee), "the value"));
  if (mask) ids.push_back(fitToPointers(materialize(ctx, site, *mask, DType::I1), "the mask"));
  std::vector<TraceAttr> attrs{{TraceAttr::I32, "sem", sem}, {TraceAttr::I32, "scope", scope}};
  if (kind >= 0) attrs.push_back({TraceAttr::I32, "kind", kind});
  return emitOp(ctx, site, kind >= 0 ? "tessel.atomic_rmw" : "tessel.atomic_cas", std::move(ids), pointee, false,
                std::move(shape), std::move(attrs));
}

void emitBarrier(const OpSite &site) {
  TraceContext &ctx = currentContext(site.name, site.loc);
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  emitOp(ctx, site, "tessel.barrier", {}, DType::I1, false, {}, {}, /*results=*/0);
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
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  if (axis < 0 || axis > 2)
    fail(site, "axis " + std::to_string(axis) + " is out of range (0, 1 or 2)");
  return emitOp(ctx, site, opName, {}, DType::I32, false, {}, {{TraceAttr::I32, "axis", axis}});
}

ValueRef emitArange(const OpSite &site, int64_t lo, int64_t hi) {
  TraceContext &ctx = currentContext(site.name, site.loc);
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
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
  if (!ctx.type(value.value.id).shape.empty())
    fail(site, "the fill value must be a scalar, not a tile of shape " +
                   formatShape(ctx.type(value.value.id).shape));
  return ctx.ref(broadcastNode(ctx, site, value.value.id, shape));
}

ValueRef emitBroadcastTo(const OpSite &site, ValueRef a, const Shape &shape) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  checkTileShape(site, shape);
  checkRegionScalar(ctx, site, shape);
  const Shape &from = ctx.type(a.id).shape;
  if (!broadcastsTo(from, shape))
    fail(site, "shape " + formatShape(from) + " does not broadcast to " + formatShape(shape));
  return ctx.ref(broadcastNode(ctx, site, a.id, shape));
}

ValueRef emitExpandDims(const OpSite &site, ValueRef a, int64_t axis) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  TraceType src = ctx.type(a.id);
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
} // namespace

ValueRef emitReshape(const OpSite &site, ValueRef a, const Shape &shape) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  TraceType src = ctx.type(a.id);
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

ValueRef emitHistogram(const OpSite &site, ValueRef src, int64_t bins, const Operand *mask) {
  Operand os = Operand::of(src);
  TraceContext &ctx = contextOf(site, {&os, mask});
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  TraceType s = ctx.type(src.id);
  if (s.shape.empty()) fail(site, "counts a tile, not a scalar");
  if (!isPowerOfTwo(bins))
    fail(site, "bins = " + std::to_string(bins) + " must be a power of two (the result is a tile)");
  std::vector<int32_t> ids{src.id};
  if (mask) {
    int32_t m = materialize(ctx, site, *mask, DType::I1);
    if (!broadcastsTo(ctx.type(m).shape, s.shape))
      fail(site, "the mask of shape " + formatShape(ctx.type(m).shape) + " does not broadcast to the values' shape " +
                     formatShape(s.shape));
    ids.push_back(broadcastNode(ctx, site, m, s.shape));
  }
  return emitOp(ctx, site, "tessel.histogram", std::move(ids), DType::I32, false, {bins}, {});
}

ValueRef emitGather(const OpSite &site, ValueRef src, ValueRef indices, int64_t axis) {
  Operand os = Operand::of(src), oi = Operand::of(indices);
  TraceContext &ctx = contextOf(site, {&os, &oi});
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  TraceType s = ctx.type(src.id), i = ctx.type(indices.id);
  if (s.shape.empty()) fail(site, "gathers from a tile, not a scalar");
  axis = normalizeAxis(site, s.shape, axis);
  bool fits = i.shape.size() == s.shape.size();
  for (size_t d = 0; fits && d < s.shape.size(); ++d)
    fits = static_cast<int64_t>(d) == axis || i.shape[d] == s.shape[d];
  if (!fits)
    fail(site, "indices of shape " + formatShape(i.shape) + " must match the source's shape " + formatShape(s.shape) +
                   " in every dim but the axis (" + std::to_string(axis) + ")");
  return emitOp(ctx, site, "tessel.gather", {src.id, indices.id}, s.dtype, s.isPtr, i.shape,
                {{TraceAttr::I32, "axis", axis}});
}

ValueRef emitPermute(const OpSite &site, ValueRef a, const std::vector<int64_t> &perm) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  TraceType src = ctx.type(a.id);
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
  TraceType src = ctx.type(a.id);
  const Shape &other = ctx.type(b.id).shape;
  if (src.shape != other)
    fail(site, "the tiles' shapes differ: " + formatShape(src.shape) + " and " + formatShape(other) +
                   " (join needs one shape)");
  Shape shape = src.shape;
  shape.push_back(2);
  if (shape.size() > kMaxRank)
    fail(site, "joining tiles of shape " + formatShape(src.shape) + " would make the rank-" +
                   std::to_string(shape.size()) + " tile " + formatShape(shape) + "; tiles have at most " +
                   std::to_string(kMaxRank) + " dimensions");
  checkTileElements(site, shape);
  checkRegionScalar(ctx, site, shape);
  return emitOp(ctx, site, "tessel.join", {a.id, b.id}, src.dtype, src.isPtr, std::move(shape), {});
}

std::pair<ValueRef, ValueRef> emitSplit(const OpSite &site, ValueRef a) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  TraceType src = ctx.type(a.id);
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

// ---- facts for the analyses ----

void emitAssume(const OpSite &site, ValueRef cond) {
  Operand oc = Operand::of(cond);
  TraceContext &ctx = contextOf(site, {&oc});
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  const Shape &shape = ctx.type(cond.id).shape;
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
  if (ctx.inCombine()) fail(site, "cannot be used inside a combine function");
  return ctx;
}

// tessel.multiple_of / tessel.max_contiguous: the value unchanged, with a fact.
ValueRef emitHint(const char *opName, const char *attr, const OpSite &site, ValueRef a, int64_t value) {
  TraceContext &ctx = hintContext(site, a);
  const TraceType &src = ctx.type(a.id);
  return emitOp(ctx, site, opName, {a.id}, src.dtype, src.isPtr, src.shape, {{TraceAttr::I64, attr, value}});
}
} // namespace

ValueRef emitMultipleOf(const OpSite &site, ValueRef a, int64_t d) {
  if (!isPowerOfTwo(d))
    fail(site, "the divisor " + std::to_string(d) + " must be a power of two > 0");
  if (hintContext(site, a).type(a.id).shape.empty())
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

