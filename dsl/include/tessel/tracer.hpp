// The tracer's untyped core: a trace context that records TraceNodes, the
// scope that makes one context current for leaf ops, and the node builders
// that check shapes and insert Splat/Broadcast/ExpandDims. The typed layer
// (tile.hpp, ops.hpp) checks element types at compile time and calls these.
#pragma once

#include "tessel/core/error.hpp"
#include "tessel/core/source_loc.hpp"
#include "tessel/core/trace.hpp"

#include <cstdint>
#include <functional>
#include <source_location>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessel::detail {

inline SourceLoc toSourceLoc(const std::source_location &loc) {
  return SourceLoc{loc.file_name(), loc.line(), loc.column()};
}

struct ValueRef;
struct OpSite;

// Records one trace. Values (Tile handles) point at their context, so ops
// find their trace through their operands; leaf ops use the current scope.
//
// Nodes go to the innermost open region: the kernel body, or a region being
// traced (a combine function, later a loop body), which closes into the op
// that owns it. Every value remembers the region it was made in, so a use
// from where it is not visible is an error at the user's line.
class TraceContext {
public:
  explicit TraceContext(std::string kernelName);
  TraceContext(const TraceContext &) = delete;
  TraceContext &operator=(const TraceContext &) = delete;

  // Appends `node` to the innermost open region; returns its value id.
  int32_t addNode(TraceNode node);
  // A handle to value `id` of this trace.
  ValueRef ref(int32_t id) const;
  // Unique per context ever made: tells a live trace from a dead one at the same address.
  uint64_t serial() const { return serial_; }
  const TraceType &type(int32_t id) const { return values_[static_cast<size_t>(id)].type; }
  // Adds a runtime kernel argument and its Arg node; returns the value id.
  int32_t addArg(TraceArg arg, SourceLoc loc);

  // Kernel: the kernel body. Combine: a combine function (reduce, scan),
  // which sees only its own values, all scalars. Loop: a loop body, which
  // carries every tile it touches that was made outside it. Branch: one
  // side of an if, whose results are the tiles from outside it it assigns.
  enum class RegionKind : uint8_t { Kernel, Combine, Loop, Branch };
  // Opens a region and returns its index (for appendTo once it is closed).
  int32_t openRegion(RegionKind kind);
  // Closes the innermost region and returns its nodes.
  TraceRegion closeRegion();
  // Whether the innermost open region is a combine function.
  bool inCombine() const { return scopes_[static_cast<size_t>(current_)].kind == RegionKind::Combine; }
  // Error unless value `id` may be used where nodes go now.
  void checkVisible(const OpSite &site, int32_t id) const;
  // Whether value `id` was made in the innermost open region.
  bool isLocal(int32_t id) const { return values_[static_cast<size_t>(id)].scope == current_; }

  // Loop bodies. A Tile object that holds a value from outside the loop
  // bodies open now and is read or assigned in one is *carried*: each loop it
  // crosses gets a block argument for it (initialized with the value it held),
  // the Tile is pointed at the argument, and when the loop closes what the
  // Tile then holds is yielded and the Tile gets the loop's result. This is
  // C++'s meaning of a variable assigned in a loop body, so the user lists
  // nothing. Called from Tile on every read and assignment; an assignment
  // (`assigning`) also makes the tile a result of the branches it crosses.
  void carry(ValueRef &tile, bool assigning);
  // A Tile object is gone (destroyed inside a loop body or a branch): nothing
  // reads what the open regions would carry out for it.
  void forget(const ValueRef *tile);
  // Adds a block argument of `type` to the innermost open region.
  int32_t addRegionArg(TraceType type, SourceLoc loc);
  // Appends `node` to `nodes`, the nodes of the closed region `scope`.
  int32_t appendTo(int32_t scope, TraceRegion &nodes, TraceNode node);
  // Appends a block argument of `type` to the closed region `scope`.
  int32_t appendRegionArg(int32_t scope, TraceRegion &nodes, TraceType type);
  struct Carried {
    ValueRef *tile; // the Tile object's handle; null once the object is gone
    int32_t init, arg; // arg: -1 in a branch (no block argument)
  };
  // The tiles the innermost open region carries, in block-argument order
  // (after the induction variable).
  const std::vector<Carried> &carried() const { return scopes_[static_cast<size_t>(current_)].carried; }

  const Trace &trace() const { return trace_; }
  Trace take() { return std::move(trace_); }

private:
  struct Scope {
    RegionKind kind;
    int32_t parent;    // -1 for the kernel body
    bool open = true;
    TraceRegion nodes; // the kernel body's go to trace_.nodes
    int64_t numArgs = 0;
    std::vector<Carried> carried; // Loop
  };
  struct ValueInfo {
    TraceType type;
    int32_t scope;
  };
  int32_t addNodeTo(int32_t scope, TraceNode node);

  Trace trace_;
  uint64_t serial_;
  std::vector<ValueInfo> values_;
  std::vector<Scope> scopes_;
  int32_t current_ = 0;
};

// Makes `context` current for leaf ops (program_id, arange, ...) on this
// thread for the scope's lifetime. Scopes nest.
class TraceScope {
public:
  explicit TraceScope(TraceContext &context);
  ~TraceScope();
  TraceScope(const TraceScope &) = delete;
  TraceScope &operator=(const TraceScope &) = delete;
};

// The innermost open trace; Error naming `op` at `loc` when there is none.
TraceContext &currentContext(const char *op, SourceLoc loc);

// Tile's hooks: a read or assignment of the handle `v` (carries it through
// the open loop bodies), and the end of its Tile object.
void touchTile(ValueRef &v);
void assignTile(ValueRef &v);
void releaseTile(const ValueRef &v);

// An untyped traced value.
struct ValueRef {
  TraceContext *ctx = nullptr;
  int32_t id = -1;
  uint64_t serial = 0; // of ctx when the value was made
};

inline ValueRef TraceContext::ref(int32_t id) const { return {const_cast<TraceContext *>(this), id, serial_}; }

// An operand of an op: a traced value or a C++ literal that becomes a
// constant of the op's element type.
struct Operand {
  enum Kind : uint8_t { Value, IntLiteral, FloatLiteral } kind = Value;
  bool literalTooLarge = false; // an unsigned literal above INT64_MAX
  ValueRef value;
  int64_t i = 0;
  double f = 0;

  static Operand of(ValueRef v) { Operand o; o.value = v; return o; }
  template <class L> static Operand literal(L v) {
    Operand o;
    if constexpr (std::is_floating_point_v<L>) {
      o.kind = FloatLiteral;
      o.f = static_cast<double>(v);
    } else {
      o.kind = IntLiteral;
      if constexpr (std::is_unsigned_v<L> && sizeof(L) >= sizeof(int64_t))
        o.literalTooLarge = v > static_cast<L>(INT64_MAX);
      o.i = static_cast<int64_t>(v);
    }
    return o;
  }
};

using Shape = std::vector<int64_t>;

// What every builder gets: the op's name (for messages) and the user's line.
struct OpSite {
  const char *name;
  SourceLoc loc;
};

// Throws Error("file:line: name: message").
[[noreturn]] void fail(const OpSite &site, const std::string &message);

Shape shapeOf(ValueRef v, const OpSite &site);

// The elementwise operations of the typed layer. The tracer picks the MLIR op
// for the element type (arith.addi or arith.addf, math.exp through f32 for
// f16 and bf16, ...), so the compiler sees plain arith and math.
enum class Elementwise : uint8_t {
  // binary: (a, b) of one shape and dtype; result dtype = operand's
  Add, Sub, Mul,
  Div,         // ints: truncating (C); floats: IEEE
  Rem,         // ints: sign of dividend (C); floats: fmod
  Min, Max,    // floats: NaN-propagating
  And, Or, Xor,
  Shl, Shr,    // Shr is arithmetic (the ints are signed)
  FDiv,        // floats: fast division (reciprocal times dividend), fast_math or not
  DivRn,       // floats: correctly rounded division, fast_math or not
  MinNum, MaxNum, // floats: a NaN operand loses to a number (C's fmin / fmax)
  UMulHi,      // ints: the high half of the unsigned product (arith.mului_extended's result 1)
  Pow, Atan2,  // floats: C's pow(a, b) and atan2(y, x) (ocml), f16/bf16 through f32
  // comparisons: (a, b) -> i1 of the same shape
  CmpEq, CmpNe, CmpLt, CmpLe, CmpGt, CmpGe,
  // unary
  Neg, Not,    // Not: bitwise for ints, logical for i1
  Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Abs, Floor, Ceil, Sin, Cos,
  FastExp, FastExp2, // the hardware's v_exp_f32 (1 ulp; results below 2^-126 flush to 0)
  Erf, Tanh, Log1p, Expm1, Sinh, Cosh, Asin, Acos, Atan, Cbrt, // ocml
  Round,       // to the nearest integer, halves away from zero (C's round)
  Rint,        // to the nearest integer, halves to even (C's rint)
  Trunc,       // toward zero
  Sigmoid,     // 1 / (1 + e^-x), as exp(x) / (1 + exp(x)) below 0
};

// Elementwise binary op (arithmetic, bitwise, comparison, min/max): `elem`
// is the element type both operands have (literals become constants of it).
ValueRef emitBinary(Elementwise op, const OpSite &site, Operand a, Operand b, DType elem);
ValueRef emitUnary(Elementwise op, const OpSite &site, ValueRef a);
ValueRef emitFma(const OpSite &site, Operand a, Operand b, Operand c, DType elem);
ValueRef emitWhere(const OpSite &site, Operand cond, Operand a, Operand b, DType elem);
// saturate: an 8-bit float destination's overflow becomes its largest finite value.
ValueRef emitCast(const OpSite &site, ValueRef a, DType to, bool saturate = false);
// a [M, K] * b [K, N] + acc [M, N] (zeros of the accumulator type when null).
ValueRef emitDot(const OpSite &site, ValueRef a, ValueRef b, const ValueRef *acc);
// tessel.dot_scaled: a, b in formats aFormat, bFormat (MxFormat), acc
// [M, N], scales [M, K / 32] and [N, K / 32] or null, and `fallback`, the
// same product composed from upcasts (checked by the caller).
ValueRef emitDotScaled(const OpSite &site, ValueRef a, ValueRef b, ValueRef acc, ValueRef fallback,
                       const ValueRef *aScale, const ValueRef *bScale, int aFormat, int bFormat);
ValueRef emitAddPtr(const OpSite &site, Operand ptr, Operand offset);
ValueRef emitLoad(const OpSite &site, ValueRef ptr, const Operand *mask, const Operand *other);
void emitStore(const OpSite &site, ValueRef ptr, Operand value, const Operand *mask);
// tessel.atomic_rmw (kind >= 0, one value) or tessel.atomic_cas (kind < 0,
// the compared value then the new one); sem and scope as the dialect's
// MemSem / MemScope numbers.
// tessel.sort of keys (inputs[0]) with payloads; one result per input.
// With `valid` (a bool tile of the keys' shape), elements where it is false
// sort last.
std::vector<ValueRef> emitSort(const OpSite &site, const std::vector<ValueRef> &inputs, int64_t axis, bool descending,
                               bool stable, const ValueRef *valid = nullptr);
// The positions that sort `x` along `axis` (i32).
ValueRef emitArgsort(const OpSite &site, ValueRef x, int64_t axis, bool descending, bool stable,
                     const ValueRef *valid = nullptr);
// The first bit_ceil(k) of `x` sorted along `axis` (largest first when
// `largest`), and their positions as `indexType`.
std::pair<ValueRef, ValueRef> emitTopk(const OpSite &site, ValueRef x, int64_t k, int64_t axis, bool largest,
                                       DType indexType, const ValueRef *valid = nullptr);
ValueRef emitAtomic(const OpSite &site, int kind, ValueRef ptr, std::vector<Operand> values, const Operand *mask,
                    int sem, int scope);
// A generic op (TraceOp::Op) named by its MLIR name, with its result type and
// attributes: how a new op is traced (the importer needs no case for it).
// `results`: 1, or 0 for an op with no result (then the node is an effect).
// Operands must be visible here (TraceContext::checkVisible).
ValueRef emitOp(TraceContext &ctx, const OpSite &site, const char *name, std::vector<int32_t> operands,
                DType dtype, bool isPtr, Shape shape, std::vector<TraceAttr> attrs, uint8_t results = 1);
// tessel.program_id / tessel.num_programs along `axis`.
ValueRef emitProgramIndex(const char *opName, const OpSite &site, int axis);
ValueRef emitArange(const OpSite &site, int64_t lo, int64_t hi);
ValueRef emitFull(const OpSite &site, const Shape &shape, Operand value, DType elem);
ValueRef emitBroadcastTo(const OpSite &site, ValueRef a, const Shape &shape);
ValueRef emitExpandDims(const OpSite &site, ValueRef a, int64_t axis);
ValueRef emitReshape(const OpSite &site, ValueRef a, const Shape &shape);
ValueRef emitPermute(const OpSite &site, ValueRef a, const std::vector<int64_t> &perm);
ValueRef emitHistogram(const OpSite &site, ValueRef src, int64_t bins, const Operand *mask);
// tessel.barrier: every thread of the workgroup, with a fence for all memory.
void emitBarrier(const OpSite &site);
ValueRef emitGather(const OpSite &site, ValueRef src, ValueRef indices, int64_t axis);
ValueRef emitTrans(const OpSite &site, ValueRef a); // permute {1, 0} of a 2-D tile
ValueRef emitJoin(const OpSite &site, ValueRef a, ValueRef b);
// The halves [..., 0] and [..., 1] of a tile whose last dim is 2.
std::pair<ValueRef, ValueRef> emitSplit(const OpSite &site, ValueRef a);

// Reductions and scans. The combine function gets the region's 2N argument
// values (N accumulated, then N next; scalars of a region context) and
// returns the N combined values.
using CombineFn = std::function<std::vector<ValueRef>(const std::vector<ValueRef> &args)>;
enum class Combining : uint8_t { Reduce, Scan };
// A tessel.reduce (flag = keep_dims) or tessel.scan (flag = reverse) over
// `inputs`, the combine traced into its region; returns the N results.
std::vector<ValueRef> emitRegionOp(Combining op, const OpSite &site, const std::vector<ValueRef> &inputs,
                                   int64_t axis, bool flag, const CombineFn &combine);
// A reduce or scan whose combine is the elementwise binary `combineOp`
// (Add, Mul, Max, Min, Xor).
ValueRef emitBinaryRegionOp(Combining op, Elementwise combineOp, const OpSite &site, ValueRef a, int64_t axis,
                            bool flag);
// argmax (isMax) / argmin: i32 index of the first extreme value along
// `axis`; floats order NaN above (argmax) or below (argmin) every number.
ValueRef emitArgReduce(const OpSite &site, ValueRef a, int64_t axis, bool keepDims, bool isMax);

// A loop body and the induction variable types it takes: run(k, wide) with
// an i64 k when `wide`, else an i32 one.
struct LoopBody {
  bool takes32, takes64;
  std::function<void(ValueRef, bool)> run;
};
// A device loop: scf.for from lo to hi (exclusive) by step, i32 or i64
// scalars (literals or tiles); a step that is not a positive constant
// (negative, or known only at run time) counts down when it is negative.
// `body` gets the induction variable. Tiles the body touches from outside
// it are carried (TraceContext::carry).
void emitForRange(const OpSite &site, Operand lo, Operand hi, Operand step, LoopBody body);

// A runtime loop: scf.while, `cond` traced into its before region (it
// returns a scalar bool value), `body` into its after region; tiles either
// touches from outside are carried.
void emitWhile(const OpSite &site, const std::function<ValueRef()> &cond, const std::function<void()> &body);

// A runtime branch: scf.if on the scalar bool `cond`. Tiles from outside that
// either side assigns are the if's results (TraceContext::carry).
void emitIf(const OpSite &site, Operand cond, const std::function<void()> &thenBody,
            const std::function<void()> &elseBody);

// Facts for the analyses.
void emitAssume(const OpSite &site, ValueRef cond);
ValueRef emitMultipleOf(const OpSite &site, ValueRef a, int64_t d);
ValueRef emitMaxContiguous(const OpSite &site, ValueRef a, int64_t c);

} // namespace tessel::detail
