// Trace -> tessel dialect. Every node becomes an op located at the user's C++
// line, so diagnostics from any later pass point at the user's source.
#include "tessel/Dialect/Tessel/IR/Dialect.h"
#include "tessel/lowering/pipeline.hpp"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace tessel {
namespace {

class TraceImporter {
public:
  TraceImporter(MLIRContext &ctx, const Trace &trace) : ctx_(ctx), trace_(trace), b_(&ctx) {}

  OwningOpRef<ModuleOp> run(const Specialization &spec, const TargetFacts &target,
                            unsigned numWarps) {
    Location unknown = UnknownLoc::get(&ctx_);
    OwningOpRef<ModuleOp> module = ModuleOp::create(unknown);
    mlir::tessel::TesselDialect &tessel = mlir::tessel::tesselDialect(&ctx_);
    tessel.getTargetAttrHelper().setAttr(*module, b_.getStringAttr(target.arch));
    tessel.getNumWarpsAttrHelper().setAttr(*module, b_.getI32IntegerAttr(numWarps));
    tessel.getWaveSizeAttrHelper().setAttr(*module, b_.getI32IntegerAttr(target.waveSize));
    tessel.getLdsLimitAttrHelper().setAttr(*module, b_.getI64IntegerAttr(target.ldsBytes));

    SmallVector<Type> argTypes;
    for (const TraceArg &a : trace_.args)
      argTypes.push_back(a.kind == TraceArg::Pointer ? Type(mlir::tessel::PtrType::get(&ctx_, element(a.dtype)))
                                                     : element(a.dtype));
    b_.setInsertionPointToEnd(module->getBody());
    auto func = b_.create<func::FuncOp>(unknown, trace_.kernelName,
                                        b_.getFunctionType(argTypes, {}));
    for (size_t i = 0; i < trace_.args.size(); ++i) {
      const ArgSpecialization s = i < spec.args.size() ? spec.args[i] : ArgSpecialization{};
      if (s.equalsOne && trace_.args[i].kind == TraceArg::Int)
        func.setArgAttr(i, tessel.getEqualToOneAttrHelper().getName(), b_.getUnitAttr());
      if ((s.divisibleBy16 && trace_.args[i].kind == TraceArg::Int) ||
          (s.aligned16 && trace_.args[i].kind == TraceArg::Pointer))
        func.setArgAttr(i, tessel.getDivisibilityAttrHelper().getName(), b_.getI32IntegerAttr(16));
    }
    funcForRegion_ = func;
    Block *body = func.addEntryBlock();
    b_.setInsertionPointToEnd(body);
    values_.resize(trace_.nodes.size());
    for (size_t i = 0; i < trace_.nodes.size(); ++i)
      values_[i] = importNode(trace_.nodes[i], func);
    b_.create<func::ReturnOp>(unknown);
    if (malformed_)
      return nullptr;
    return module;
  }

private:
  Type element(DType t) {
    switch (t) {
    case DType::I1: return b_.getI1Type();
    case DType::I8: return b_.getI8Type();
    case DType::I16: return b_.getI16Type();
    case DType::I32: return b_.getI32Type();
    case DType::I64: return b_.getI64Type();
    case DType::F16: return b_.getF16Type();
    case DType::BF16: return b_.getBF16Type();
    case DType::F32: return b_.getF32Type();
    case DType::F64: return b_.getF64Type();
    }
    return {};
  }

  Type typeOf(const TraceNode &n) {
    Type e = n.isPtr ? Type(mlir::tessel::PtrType::get(&ctx_, element(n.dtype))) : element(n.dtype);
    if (n.shape.empty())
      return e;
    return RankedTensorType::get(n.shape, e);
  }

  Type withElement(Type like, Type elem) {
    if (auto t = dyn_cast<RankedTensorType>(like))
      return RankedTensorType::get(t.getShape(), elem);
    return elem;
  }

  Location locOf(const TraceNode &n) {
    if (!n.loc.file || !*n.loc.file)
      return UnknownLoc::get(&ctx_);
    return FileLineColLoc::get(&ctx_, n.loc.file, n.loc.line, n.loc.column);
  }

  [[noreturn]] void fail(const TraceNode &n, const std::string &what) {
    std::string where = n.loc.file && *n.loc.file
                            ? std::string(n.loc.file) + ":" + std::to_string(n.loc.line) + ": "
                            : std::string();
    throw Error(where + traceOpName(n.op) + ": " + what);
  }

  Value operand(const TraceNode &n, size_t i) {
    if (i >= n.operands.size() || n.operands[i] < 0 ||
        size_t(n.operands[i]) >= values_.size() || !values_[n.operands[i]])
      fail(n, "malformed trace: operand " + std::to_string(i) + " is missing");
    return values_[n.operands[i]];
  }

  Value constantLike(Type type, TypedAttr scalar, Location loc) {
    if (auto t = dyn_cast<RankedTensorType>(type))
      return b_.create<arith::ConstantOp>(loc, DenseElementsAttr::get(t, Attribute(scalar)));
    return b_.create<arith::ConstantOp>(loc, scalar);
  }

  TypedAttr scalarAttr(Type elem, int64_t i, double f) {
    if (isa<FloatType>(elem))
      return b_.getFloatAttr(elem, f);
    return b_.getIntegerAttr(elem, i);
  }

  // Unary math on f16/bf16 runs in f32, as the hardware has no accurate
  // 16-bit versions of most of them.
  template <class OpT> Value mathUnary(Value x, Location loc) {
    Type elem = mlir::tessel::elementTypeOf(x.getType());
    if (elem.isF16() || elem.isBF16()) {
      Type f32 = withElement(x.getType(), b_.getF32Type());
      Value wide = b_.create<arith::ExtFOp>(loc, f32, x);
      Value r = b_.create<OpT>(loc, wide);
      return b_.create<arith::TruncFOp>(loc, x.getType(), r);
    }
    return b_.create<OpT>(loc, x);
  }

  Value cast(Value x, Type to, Location loc) {
    Type from = x.getType();
    Type fe = mlir::tessel::elementTypeOf(from), te = mlir::tessel::elementTypeOf(to);
    if (fe == te)
      return x;
    bool fInt = isa<IntegerType>(fe), tInt = isa<IntegerType>(te);
    unsigned fw = fe.getIntOrFloatBitWidth(), tw = te.getIntOrFloatBitWidth();
    if (tInt && te.isInteger(1)) {
      Value zero = constantLike(from, scalarAttr(fe, 0, 0.0), loc);
      if (fInt)
        return b_.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x, zero);
      return b_.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, x, zero);
    }
    if (fInt && tInt) {
      if (tw > fw)
        return fe.isInteger(1) ? Value(b_.create<arith::ExtUIOp>(loc, to, x))
                               : Value(b_.create<arith::ExtSIOp>(loc, to, x));
      return b_.create<arith::TruncIOp>(loc, to, x);
    }
    if (fInt && !tInt)
      return fe.isInteger(1) ? Value(b_.create<arith::UIToFPOp>(loc, to, x))
                             : Value(b_.create<arith::SIToFPOp>(loc, to, x));
    if (!fInt && tInt)
      return b_.create<arith::FPToSIOp>(loc, to, x);
    // float -> float; bf16 <-> f16 goes through f32
    if ((fe.isBF16() && te.isF16()) || (fe.isF16() && te.isBF16())) {
      Value wide = b_.create<arith::ExtFOp>(loc, withElement(from, b_.getF32Type()), x);
      return b_.create<arith::TruncFOp>(loc, to, wide);
    }
    if (tw > fw)
      return b_.create<arith::ExtFOp>(loc, to, x);
    return b_.create<arith::TruncFOp>(loc, to, x);
  }

  Value importNode(const TraceNode &n, func::FuncOp func) {
    Location loc = locOf(n);
    Type type = typeOf(n);
    auto isFloatVal = [&](Value v) { return isa<FloatType>(mlir::tessel::elementTypeOf(v.getType())); };
    auto binary = [&](auto intOp, auto floatOp) -> Value {
      Value a = operand(n, 0), c = operand(n, 1);
      if (a.getType() != c.getType())
        fail(n, "malformed trace: operands of different types");
      if (isFloatVal(a))
        return b_.create<decltype(floatOp)>(loc, a, c);
      return b_.create<decltype(intOp)>(loc, a, c);
    };
    auto intOnly = [&](auto intOp) -> Value {
      Value a = operand(n, 0), c = operand(n, 1);
      if (isFloatVal(a))
        fail(n, "needs integer operands");
      return b_.create<decltype(intOp)>(loc, a, c);
    };
    auto compare = [&](arith::CmpIPredicate ip, arith::CmpFPredicate fp) -> Value {
      Value a = operand(n, 0), c = operand(n, 1);
      if (isFloatVal(a))
        return b_.create<arith::CmpFOp>(loc, fp, a, c);
      return b_.create<arith::CmpIOp>(loc, ip, a, c);
    };
    auto floatOnly = [&](Value v) {
      if (!isFloatVal(v))
        fail(n, "needs a floating-point operand");
      return v;
    };
    using namespace mlir::arith;
    switch (n.op) {
    case TraceOp::Arg:
      if (n.i0 < 0 || size_t(n.i0) >= func.getNumArguments())
        fail(n, "malformed trace: argument index out of range");
      return func.getArgument(n.i0);
    case TraceOp::ConstInt:
    case TraceOp::ConstFloat:
      return constantLike(type, scalarAttr(mlir::tessel::elementTypeOf(type), n.i0,
                                           n.op == TraceOp::ConstFloat ? n.f : double(n.i0)),
                          loc);
    case TraceOp::Op:
      return importOp(n, type, loc);
    case TraceOp::Add: return binary(AddIOp(), AddFOp());
    case TraceOp::Sub: return binary(SubIOp(), SubFOp());
    case TraceOp::Mul: return binary(MulIOp(), MulFOp());
    case TraceOp::Div: return binary(DivSIOp(), DivFOp());
    case TraceOp::Rem: {
      Value a = operand(n, 0), c = operand(n, 1);
      Type e = mlir::tessel::elementTypeOf(a.getType());
      if (e.isF16() || e.isBF16()) { // fmod in f32 is exact for 16-bit inputs
        Type f32 = withElement(a.getType(), b_.getF32Type());
        Value r = b_.create<RemFOp>(loc, b_.create<ExtFOp>(loc, f32, a),
                                    b_.create<ExtFOp>(loc, f32, c));
        return b_.create<TruncFOp>(loc, a.getType(), r);
      }
      return binary(RemSIOp(), RemFOp());
    }
    case TraceOp::Min: return binary(MinSIOp(), MinimumFOp());
    case TraceOp::Max: return binary(MaxSIOp(), MaximumFOp());
    case TraceOp::And: return intOnly(AndIOp());
    case TraceOp::Or: return intOnly(OrIOp());
    case TraceOp::Xor: return intOnly(XOrIOp());
    case TraceOp::Shl: return intOnly(ShLIOp());
    case TraceOp::Shr: return intOnly(ShRSIOp());
    case TraceOp::CmpEq: return compare(CmpIPredicate::eq, CmpFPredicate::OEQ);
    case TraceOp::CmpNe: return compare(CmpIPredicate::ne, CmpFPredicate::UNE);
    case TraceOp::CmpLt: return compare(CmpIPredicate::slt, CmpFPredicate::OLT);
    case TraceOp::CmpLe: return compare(CmpIPredicate::sle, CmpFPredicate::OLE);
    case TraceOp::CmpGt: return compare(CmpIPredicate::sgt, CmpFPredicate::OGT);
    case TraceOp::CmpGe: return compare(CmpIPredicate::sge, CmpFPredicate::OGE);
    case TraceOp::Neg: {
      Value a = operand(n, 0);
      if (isFloatVal(a))
        return b_.create<NegFOp>(loc, a);
      Type e = mlir::tessel::elementTypeOf(a.getType());
      return b_.create<SubIOp>(loc, constantLike(a.getType(), b_.getIntegerAttr(e, 0), loc), a);
    }
    case TraceOp::Not: {
      Value a = operand(n, 0);
      if (isFloatVal(a))
        fail(n, "needs an integer or boolean operand");
      Type e = mlir::tessel::elementTypeOf(a.getType());
      return b_.create<XOrIOp>(loc, a, constantLike(a.getType(), b_.getIntegerAttr(e, -1), loc));
    }
    case TraceOp::Exp: return mathUnary<math::ExpOp>(floatOnly(operand(n, 0)), loc);
    case TraceOp::Exp2: return mathUnary<math::Exp2Op>(floatOnly(operand(n, 0)), loc);
    case TraceOp::Log: return mathUnary<math::LogOp>(floatOnly(operand(n, 0)), loc);
    case TraceOp::Log2: return mathUnary<math::Log2Op>(floatOnly(operand(n, 0)), loc);
    case TraceOp::Sqrt: return mathUnary<math::SqrtOp>(floatOnly(operand(n, 0)), loc);
    case TraceOp::Rsqrt: return mathUnary<math::RsqrtOp>(floatOnly(operand(n, 0)), loc);
    case TraceOp::Floor: return mathUnary<math::FloorOp>(floatOnly(operand(n, 0)), loc);
    case TraceOp::Ceil: return mathUnary<math::CeilOp>(floatOnly(operand(n, 0)), loc);
    case TraceOp::Sin: return mathUnary<math::SinOp>(floatOnly(operand(n, 0)), loc);
    case TraceOp::Cos: return mathUnary<math::CosOp>(floatOnly(operand(n, 0)), loc);
    case TraceOp::Abs: {
      Value a = operand(n, 0);
      if (isFloatVal(a))
        return mathUnary<math::AbsFOp>(a, loc);
      return b_.create<math::AbsIOp>(loc, a);
    }
    case TraceOp::Fma: {
      Value a = floatOnly(operand(n, 0)), c = operand(n, 1), d = operand(n, 2);
      return b_.create<math::FmaOp>(loc, a, c, d);
    }
    case TraceOp::Where:
      return b_.create<SelectOp>(loc, operand(n, 0), operand(n, 1), operand(n, 2));
    case TraceOp::Cast:
      return cast(operand(n, 0), type, loc);
    case TraceOp::Reduce:
    case TraceOp::Scan:
      return combiner(n, loc);
    case TraceOp::Result: {
      Operation *multi = operand(n, 0).getDefiningOp();
      if (!multi || n.i0 < 0 || n.i0 >= multi->getNumResults())
        fail(n, "malformed trace: result index out of range");
      return multi->getResult(n.i0);
    }
    case TraceOp::RegionArg:
      if (!regionBlock_ || n.i0 < 0 || size_t(n.i0) >= regionBlock_->getNumArguments())
        fail(n, "malformed trace: region argument outside a region");
      return regionBlock_->getArgument(n.i0);
    case TraceOp::Yield: {
      SmallVector<Value> values;
      for (size_t i = 0; i < n.operands.size(); ++i)
        values.push_back(operand(n, i));
      b_.create<mlir::tessel::YieldOp>(loc, values);
      return {};
    }
    }
    fail(n, "unknown op");
  }

  // A generic op, built by name: its verifier (run right after the import)
  // checks operands, types and attributes, so a malformed node is an error.
  Value importOp(const TraceNode &n, Type type, Location loc) {
    // Reported as diagnostics (the module then fails to verify), not thrown:
    // see the note on fail() below.
    std::optional<RegisteredOperationName> name = RegisteredOperationName::lookup(n.name, &ctx_);
    if (!name || n.results > 1) {
      emitError(loc) << "malformed trace: "
                     << (name ? "a generic op has 0 or 1 results" : "no operation named '" + n.name + "'");
      malformed_ = true;
      return n.results ? b_.create<UnrealizedConversionCastOp>(loc, type, ValueRange{}).getResult(0)
                       : Value();
    }
    OperationState state(loc, *name);
    for (size_t i = 0; i < n.operands.size(); ++i)
      state.addOperands(operand(n, i));
    if (n.results == 1)
      state.addTypes(type);
    for (const TraceAttr &a : n.attrs) {
      Attribute attr;
      switch (a.kind) {
      case TraceAttr::I32: attr = b_.getI32IntegerAttr(a.value); break;
      case TraceAttr::I64: attr = b_.getI64IntegerAttr(a.value); break;
      case TraceAttr::Bool: attr = b_.getBoolAttr(a.value != 0); break;
      case TraceAttr::I32Array:
        attr = b_.getDenseI32ArrayAttr(SmallVector<int32_t>(a.values.begin(), a.values.end()));
        break;
      }
      state.addAttribute(a.name, attr);
    }
    Operation *op = b_.create(state);
    return op->getNumResults() ? op->getResult(0) : Value();
  }

  // Reduce or scan: the op, with the combine region imported from the node's
  // own node list.
  Value combiner(const TraceNode &n, Location loc) {
    SmallVector<Value> srcs;
    for (size_t i = 0; i < n.operands.size(); ++i)
      srcs.push_back(operand(n, i));
    if (srcs.empty())
      fail(n, "malformed trace: nothing to combine");
    SmallVector<Type> resultTypes, argTypes;
    for (Value s : srcs) {
      auto t = dyn_cast<RankedTensorType>(s.getType());
      if (!t || n.i0 < 0 || n.i0 >= t.getRank())
        fail(n, "malformed trace: axis out of range");
      SmallVector<int64_t> shape(t.getShape());
      if (n.op == TraceOp::Reduce)
        shape.erase(shape.begin() + n.i0);
      resultTypes.push_back(n.op == TraceOp::Reduce && shape.empty()
                                ? t.getElementType()
                                : Type(RankedTensorType::get(shape, t.getElementType())));
      argTypes.push_back(t.getElementType());
    }
    argTypes.append(SmallVector<Type>(argTypes));
    Operation *op;
    if (n.op == TraceOp::Reduce)
      op = b_.create<mlir::tessel::ReduceOp>(loc, resultTypes, srcs, n.i0);
    else
      op = b_.create<mlir::tessel::ScanOp>(loc, resultTypes, srcs, n.i0, n.i1 != 0);
    Region &region = op->getRegion(0);
    Block *block = new Block();
    region.push_back(block);
    for (Type t : argTypes)
      block->addArgument(t, loc);
    // The region's nodes index their own list.
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(block);
    std::vector<Value> outer;
    std::swap(outer, values_);
    Block *outerBlock = regionBlock_;
    regionBlock_ = block;
    values_.resize(n.region.size());
    for (size_t i = 0; i < n.region.size(); ++i)
      values_[i] = importNode(n.region[i], funcForRegion_);
    std::swap(outer, values_);
    regionBlock_ = outerBlock;
    if (block->empty() || !isa<mlir::tessel::YieldOp>(block->back()))
      fail(n, "malformed trace: the combine function does not end in a yield");
    return op->getResult(0);
  }

  MLIRContext &ctx_;
  const Trace &trace_;
  Block *regionBlock_ = nullptr;
  func::FuncOp funcForRegion_;
  OpBuilder b_;
  std::vector<Value> values_;
  bool malformed_ = false; // an error was emitted as a diagnostic
};

} // namespace

OwningOpRef<ModuleOp> importTrace(MLIRContext &ctx, const Trace &trace,
                                  const Specialization &spec, const TargetFacts &target,
                                  unsigned numWarps) {
  return TraceImporter(ctx, trace).run(spec, target, numWarps);
}

} // namespace tessel
