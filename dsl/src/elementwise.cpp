// Elementwise ops: the tracer picks the MLIR op for the element type, so the
// trace holds plain arith and math ops (arith.addi for ints, arith.addf for
// floats, math.exp through f32 for f16 and bf16) and the compiler needs no
// case of its own for any of them.
#include "tracer_internal.hpp"

#include <array>

namespace tessel::detail {

namespace {

// arith's FastMathFlags: arcp (reciprocal allowed, 16) | afn (approximate functions, 64).
constexpr int64_t kFastDivision = 16 | 64;
// arith's FastMathFlags::afn: the approximate form of a math function.
constexpr int64_t kApproximateFunction = 64;

// arith.cmpi / arith.cmpf predicates (MLIR's CmpIPredicate / CmpFPredicate values).
enum : int64_t { kCmpIEq = 0, kCmpINe = 1, kCmpISlt = 2, kCmpISle = 3, kCmpISgt = 4, kCmpISge = 5 };
enum : int64_t { kCmpFOeq = 1, kCmpFOgt = 2, kCmpFOge = 3, kCmpFOlt = 4, kCmpFOle = 5, kCmpFUne = 13 };

struct Names {
  const char *intOp, *floatOp; // null: not defined for that kind
  int64_t intPredicate = -1, floatPredicate = -1;
};

Names namesOf(Elementwise op) {
  switch (op) {
  case Elementwise::Add: return {"arith.addi", "arith.addf"};
  case Elementwise::Sub: return {"arith.subi", "arith.subf"};
  case Elementwise::Mul: return {"arith.muli", "arith.mulf"};
  case Elementwise::Div: return {"arith.divsi", "arith.divf"};
  case Elementwise::Rem: return {"arith.remsi", "arith.remf"};
  case Elementwise::FDiv: return {nullptr, "arith.divf"};
  case Elementwise::DivRn: return {nullptr, "arith.divf"};
  case Elementwise::Min: return {"arith.minsi", "arith.minimumf"};
  case Elementwise::Max: return {"arith.maxsi", "arith.maximumf"};
  case Elementwise::MinNum: return {"arith.minsi", "arith.minnumf"};
  case Elementwise::MaxNum: return {"arith.maxsi", "arith.maxnumf"};
  case Elementwise::UMulHi: return {"arith.mului_extended", nullptr};
  case Elementwise::Pow: return {nullptr, "math.powf"};
  case Elementwise::Atan2: return {nullptr, "math.atan2"};
  case Elementwise::And: return {"arith.andi", nullptr};
  case Elementwise::Or: return {"arith.ori", nullptr};
  case Elementwise::Xor: return {"arith.xori", nullptr};
  case Elementwise::Shl: return {"arith.shli", nullptr};
  case Elementwise::Shr: return {"arith.shrsi", nullptr};
  case Elementwise::CmpEq: return {"arith.cmpi", "arith.cmpf", kCmpIEq, kCmpFOeq};
  case Elementwise::CmpNe: return {"arith.cmpi", "arith.cmpf", kCmpINe, kCmpFUne};
  case Elementwise::CmpLt: return {"arith.cmpi", "arith.cmpf", kCmpISlt, kCmpFOlt};
  case Elementwise::CmpLe: return {"arith.cmpi", "arith.cmpf", kCmpISle, kCmpFOle};
  case Elementwise::CmpGt: return {"arith.cmpi", "arith.cmpf", kCmpISgt, kCmpFOgt};
  case Elementwise::CmpGe: return {"arith.cmpi", "arith.cmpf", kCmpISge, kCmpFOge};
  case Elementwise::Neg: return {nullptr, "arith.negf"};
  case Elementwise::Not: return {nullptr, nullptr};
  case Elementwise::Exp: return {nullptr, "math.exp"};
  case Elementwise::Exp2: return {nullptr, "math.exp2"};
  case Elementwise::Log: return {nullptr, "math.log"};
  case Elementwise::Log2: return {nullptr, "math.log2"};
  case Elementwise::Sqrt: return {nullptr, "math.sqrt"};
  case Elementwise::Rsqrt: return {nullptr, "math.rsqrt"};
  case Elementwise::Abs: return {"math.absi", "math.absf"};
  case Elementwise::Floor: return {nullptr, "math.floor"};
  case Elementwise::Ceil: return {nullptr, "math.ceil"};
  case Elementwise::Sin: return {nullptr, "math.sin"};
  case Elementwise::Cos: return {nullptr, "math.cos"};
  case Elementwise::FastExp: return {nullptr, "math.exp"};
  case Elementwise::FastExp2: return {nullptr, "math.exp2"};
  case Elementwise::Erf: return {nullptr, "math.erf"};
  case Elementwise::Tanh: return {nullptr, "math.tanh"};
  case Elementwise::Log1p: return {nullptr, "math.log1p"};
  case Elementwise::Expm1: return {nullptr, "math.expm1"};
  case Elementwise::Sinh: return {nullptr, "math.sinh"};
  case Elementwise::Cosh: return {nullptr, "math.cosh"};
  case Elementwise::Asin: return {nullptr, "math.asin"};
  case Elementwise::Acos: return {nullptr, "math.acos"};
  case Elementwise::Atan: return {nullptr, "math.atan"};
  case Elementwise::Cbrt: return {nullptr, "math.cbrt"};
  case Elementwise::Round: return {nullptr, "math.round"};
  case Elementwise::Rint: return {nullptr, "math.roundeven"};
  case Elementwise::Trunc: return {nullptr, "math.trunc"};
  case Elementwise::Sigmoid: return {nullptr, nullptr}; // composed in emitSigmoid
  }
  return {nullptr, nullptr};
}

bool isComparison(Elementwise op) { return op >= Elementwise::CmpEq && op <= Elementwise::CmpGe; }
bool isHalf(DType t) { return t == DType::F16 || t == DType::BF16; }

int32_t emit(TraceContext &ctx, const OpSite &site, const char *name, std::vector<int32_t> operands, DType dtype,
             const Shape &shape, std::vector<TraceAttr> attrs = {}) {
  return emitOp(ctx, site, name, std::move(operands), dtype, false, shape, std::move(attrs)).id;
}

// A constant filling `shape` with `value` (ints) in `dtype`.
int32_t fill(TraceContext &ctx, const OpSite &site, DType dtype, const Shape &shape, int64_t value) {
  TraceNode n = makeNode(isFloat(dtype) ? TraceOp::ConstFloat : TraceOp::ConstInt, dtype, false, shape, {}, site.loc);
  n.i0 = value;
  n.f = static_cast<double>(value);
  return ctx.addNode(std::move(n));
}

// `name` applied to `operands` of one float type; in f32 when that type is
// f16 or bf16 (the hardware has no accurate 16-bit versions of most math,
// and fmod in f32 is exact for 16-bit inputs).
int32_t floatOp(TraceContext &ctx, const OpSite &site, const char *name, std::vector<int32_t> operands, DType dtype,
                const Shape &shape, std::vector<TraceAttr> attrs = {}) {
  if (!isHalf(dtype)) return emit(ctx, site, name, std::move(operands), dtype, shape, std::move(attrs));
  for (int32_t &id : operands) id = emit(ctx, site, "arith.extf", {id}, DType::F32, shape);
  int32_t wide = emit(ctx, site, name, std::move(operands), DType::F32, shape, std::move(attrs));
  return emit(ctx, site, "arith.truncf", {wide}, dtype, shape);
}

// Every operand made to one broadcast shape; literals become `elems[i]`.
template <size_t N>
std::array<int32_t, N> broadcastOperands(TraceContext &ctx, const OpSite &site, const std::array<const Operand *, N> &ops,
                                         const std::array<DType, N> &elems, Shape &shape) {
  std::array<int32_t, N> ids;
  for (size_t i = 0; i < N; ++i) {
    ids[i] = materialize(ctx, site, *ops[i], elems[i]);
    shape = i == 0 ? ctx.type(ids[i]).shape : broadcastShapes(site, shape, ctx.type(ids[i]).shape);
  }
  for (int32_t &id : ids) id = broadcastNode(ctx, site, id, shape);
  return ids;
}

// The low and high halves of a and b's unsigned product: the results of
// arith.mului_extended (the low half is what arith.muli gives).
std::pair<int32_t, int32_t> unsignedMulExtended(TraceContext &ctx, const OpSite &site, int32_t a, int32_t b,
                                                DType dtype, const Shape &shape) {
  TraceNode product = makeNode(TraceOp::Op, dtype, false, shape, {a, b}, site.loc);
  product.name = "arith.mului_extended";
  product.results = 2;
  product.resultTypes = {TraceType{dtype, false, shape}, TraceType{dtype, false, shape}};
  const int32_t id = ctx.addNode(std::move(product));
  std::array<int32_t, 2> halves;
  for (int64_t k = 0; k < 2; ++k) {
    TraceNode half = makeNode(TraceOp::Result, dtype, false, shape, {id}, site.loc);
    half.i0 = k;
    halves[size_t(k)] = ctx.addNode(std::move(half));
  }
  return {halves[0], halves[1]};
}

// 1 / (1 + e^-x) in `dtype` (f32 or f64) without its two losses: for
// x < 0, e^-x overflows to inf long before the result leaves the float
// range (sigmoid(-100) is 3.7e-44, a denormal, not 0), and 1 + e^-x
// rounds e^-x away. With e = e^-|x| <= 1, sigmoid(x) is 1 / (1 + e) for
// x >= 0 and e / (1 + e) below: one exp, one add, one correctly rounded
// division (a few ulp in all). A NaN stays NaN (e is NaN).
int32_t sigmoid(TraceContext &ctx, const OpSite &site, int32_t x, DType dtype, const Shape &shape) {
  int32_t zero = fill(ctx, site, dtype, shape, 0), one = fill(ctx, site, dtype, shape, 1);
  int32_t negAbs = emit(ctx, site, "arith.negf", {emit(ctx, site, "math.absf", {x}, dtype, shape)}, dtype, shape);
  int32_t e = emit(ctx, site, "math.exp", {negAbs}, dtype, shape);
  int32_t nonNegative = emit(ctx, site, "arith.cmpf", {x, zero}, DType::I1, shape, {{TraceAttr::I64, "predicate", kCmpFOge}});
  int32_t numerator = emit(ctx, site, "arith.select", {nonNegative, one, e}, dtype, shape);
  int32_t denominator = emit(ctx, site, "arith.addf", {one, e}, dtype, shape);
  return emit(ctx, site, "arith.divf", {numerator, denominator}, dtype, shape);
}

} // namespace

std::pair<ValueRef, ValueRef> emitMulExtended(const OpSite &site, Operand a, Operand b, DType elem) {
  TraceContext &ctx = contextOf(site, {&a, &b});
  Shape shape;
  auto [ia, ib] = broadcastOperands<2>(ctx, site, {&a, &b}, {elem, elem}, shape);
  auto [low, high] = unsignedMulExtended(ctx, site, ia, ib, elem, shape);
  return {ctx.ref(low), ctx.ref(high)};
}

ValueRef emitBinary(Elementwise op, const OpSite &site, Operand a, Operand b, DType elem) {
  TraceContext &ctx = contextOf(site, {&a, &b});
  Shape shape;
  auto [ia, ib] = broadcastOperands<2>(ctx, site, {&a, &b}, {elem, elem}, shape);
  Names names = namesOf(op);
  const char *name = isFloat(elem) ? names.floatOp : names.intOp;
  if (!name) fail(site, std::string("is not defined for ") + dtypeName(elem) + " operands");
  if (isComparison(op))
    return ctx.ref(emit(ctx, site, name, {ia, ib}, DType::I1, shape,
                        {{TraceAttr::I64, "predicate", isFloat(elem) ? names.floatPredicate : names.intPredicate}}));
  if (op == Elementwise::UMulHi) return ctx.ref(unsignedMulExtended(ctx, site, ia, ib, elem, shape).second);
  if ((op == Elementwise::Rem || op == Elementwise::Pow || op == Elementwise::Atan2) && isFloat(elem))
    return ctx.ref(floatOp(ctx, site, name, {ia, ib}, elem, shape));
  if (op == Elementwise::FDiv)
    return ctx.ref(emit(ctx, site, name, {ia, ib}, elem, shape, {{TraceAttr::I64, "fastmath", kFastDivision}}));
  if (op == Elementwise::DivRn)
    return ctx.ref(emit(ctx, site, name, {ia, ib}, elem, shape, {{TraceAttr::Bool, "tessel.div_rn", 1}}));
  return ctx.ref(emit(ctx, site, name, {ia, ib}, elem, shape));
}

ValueRef emitUnary(Elementwise op, const OpSite &site, ValueRef a) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  const TraceType src = ctx.type(a.id);
  if (op == Elementwise::Not) { // x ^ all-ones (1 for i1)
    if (isFloat(src.dtype)) fail(site, "needs an integer or bool operand");
    int32_t ones = fill(ctx, site, src.dtype, src.shape, src.dtype == DType::I1 ? 1 : -1);
    return ctx.ref(emit(ctx, site, "arith.xori", {a.id, ones}, src.dtype, src.shape));
  }
  if (op == Elementwise::Neg && !isFloat(src.dtype)) // 0 - x
    return ctx.ref(emit(ctx, site, "arith.subi", {fill(ctx, site, src.dtype, src.shape, 0), a.id}, src.dtype,
                        src.shape));
  if (op == Elementwise::Sigmoid && isFloat(src.dtype)) {
    if (!isHalf(src.dtype)) return ctx.ref(sigmoid(ctx, site, a.id, src.dtype, src.shape));
    int32_t wide = emit(ctx, site, "arith.extf", {a.id}, DType::F32, src.shape);
    return ctx.ref(emit(ctx, site, "arith.truncf", {sigmoid(ctx, site, wide, DType::F32, src.shape)}, src.dtype,
                        src.shape));
  }
  Names names = namesOf(op);
  const char *name = isFloat(src.dtype) ? names.floatOp : names.intOp;
  if (!name) fail(site, std::string("is not defined for ") + dtypeName(src.dtype) + " operands");
  if (!isFloat(src.dtype) || op == Elementwise::Neg) return ctx.ref(emit(ctx, site, name, {a.id}, src.dtype, src.shape));
  std::vector<TraceAttr> attrs;
  if (op == Elementwise::FastExp || op == Elementwise::FastExp2)
    attrs.push_back({TraceAttr::I64, "fastmath", kApproximateFunction});
  return ctx.ref(floatOp(ctx, site, name, {a.id}, src.dtype, src.shape, std::move(attrs)));
}

ValueRef emitFma(const OpSite &site, Operand a, Operand b, Operand c, DType elem) {
  TraceContext &ctx = contextOf(site, {&a, &b, &c});
  Shape shape;
  auto [ia, ib, ic] = broadcastOperands<3>(ctx, site, {&a, &b, &c}, {elem, elem, elem}, shape);
  return ctx.ref(emit(ctx, site, "math.fma", {ia, ib, ic}, elem, shape));
}

ValueRef emitWhere(const OpSite &site, Operand cond, Operand a, Operand b, DType elem) {
  TraceContext &ctx = contextOf(site, {&cond, &a, &b});
  Shape shape;
  auto [ic, ia, ib] = broadcastOperands<3>(ctx, site, {&cond, &a, &b}, {DType::I1, elem, elem}, shape);
  // Pointer tiles choose pointers (Triton's tl.where(c, p, q)).
  const bool isPtr = ctx.type(ia).isPtr;
  return emitOp(ctx, site, "arith.select", {ic, ia, ib}, elem, isPtr, shape, {});
}

// int <-> float, widening and narrowing, to and from bool (x != 0).
ValueRef emitCast(const OpSite &site, ValueRef a, DType to, bool saturate) {
  Operand oa = Operand::of(a);
  TraceContext &ctx = contextOf(site, {&oa});
  const TraceType src = ctx.type(a.id);
  const DType from = src.dtype;
  if (saturate && !isFloat8(to))
    fail(site, std::string("cast's saturate option applies to casts to an 8-bit float type (float8_e4m3fn, "
                           "float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz); this cast is to ") +
                   dtypeCppName(to));
  if (from == to) return a; // nothing to convert
  const Shape &shape = src.shape;
  auto one = [&](const char *name, int32_t id, DType dtype) { return emit(ctx, site, name, {id}, dtype, shape); };
  if (isFloat8(from) || isFloat8(to)) {
    // Through f32: every 8-bit float is exact in f32 (and in f16 and bf16),
    // so the one rounding is the last step's. Saturating clamps first, NaN
    // propagating (arith.maximumf / minimumf), so the conversion never
    // overflows and NaN stays NaN.
    int32_t id = from == DType::F32 ? a.id : one("arith.extf", a.id, DType::F32);
    if (saturate) {
      const int64_t max = to == DType::F8E4M3FN ? 448 : to == DType::F8E4M3FNUZ ? 240 : 57344;
      id = emit(ctx, site, "arith.maximumf", {id, fill(ctx, site, DType::F32, shape, -max)}, DType::F32, shape);
      id = emit(ctx, site, "arith.minimumf", {id, fill(ctx, site, DType::F32, shape, max)}, DType::F32, shape);
    }
    return ctx.ref(to == DType::F32 ? id : one("arith.truncf", id, to));
  }
  const bool fromInt = !isFloat(from), toInt = !isFloat(to);
  int32_t id = a.id;
  if (to == DType::I1) {
    int32_t zero = fill(ctx, site, from, shape, 0);
    id = fromInt ? emit(ctx, site, "arith.cmpi", {id, zero}, to, shape, {{TraceAttr::I64, "predicate", kCmpINe}})
                 : emit(ctx, site, "arith.cmpf", {id, zero}, to, shape, {{TraceAttr::I64, "predicate", kCmpFUne}});
  } else if (fromInt && toInt) {
    id = dtypeBits(to) > dtypeBits(from) ? one(from == DType::I1 ? "arith.extui" : "arith.extsi", id, to)
                                         : one("arith.trunci", id, to);
  } else if (fromInt) {
    id = one(from == DType::I1 ? "arith.uitofp" : "arith.sitofp", id, to);
  } else if (toInt) {
    // To i8 / i16 through i32, then its low bits: one result on every
    // target (gfx11 would convert two f32 -> i16 at once where the backend
    // pairs them, saturating to 16 bits, and the others one at a time
    // through 32 bits); the 32-bit conversion saturates, NaN -> 0.
    id = dtypeBits(to) < 32 ? one("arith.trunci", one("arith.fptosi", id, DType::I32), to) : one("arith.fptosi", id, to);
  } else if (isHalf(from) && isHalf(to)) { // bf16 <-> f16 through f32
    id = one("arith.truncf", one("arith.extf", id, DType::F32), to);
  } else {
    id = one(dtypeBits(to) > dtypeBits(from) ? "arith.extf" : "arith.truncf", id, to);
  }
  return ctx.ref(id);
}

} // namespace tessel::detail
