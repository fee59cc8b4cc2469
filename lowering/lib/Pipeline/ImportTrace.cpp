// Trace -> tessel dialect. Every node becomes an op located at the user's C++
// line, so diagnostics from any later pass point at the user's source.
#include "tessel/Dialect/Tessel/IR/Dialect.h"
#include "tessel/lowering/pipeline.hpp"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <functional>

using namespace mlir;

namespace tessel {
namespace {

class TraceImporter {
public:
  TraceImporter(MLIRContext &ctx, const Trace &trace)
      : ctx_(ctx), trace_(trace), b_(&ctx), divRn_(mlir::tessel::tesselDialect(&ctx).getDivRnAttrHelper().getName()) {}

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
      if (s.within2GiB && trace_.args[i].kind == TraceArg::Pointer)
        func.setArgAttr(i, tessel.getPointerRangeAttrHelper().getName(), b_.getI32IntegerAttr(31));
    }
    func_ = func;
    Block *body = func.addEntryBlock();
    b_.setInsertionPointToEnd(body);
    std::function<size_t(const std::vector<TraceNode> &)> count = [&](const std::vector<TraceNode> &nodes) {
      size_t c = nodes.size();
      for (const TraceNode &n : nodes)
        for (const TraceRegion &r : n.regions)
          c += count(r);
      return c;
    };
    idLimit_ = count(trace_.nodes);
    importNodes(trace_.nodes, body);
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
    case DType::F8E4M3FN: return b_.getType<Float8E4M3FNType>();
    case DType::F8E5M2: return b_.getType<Float8E5M2Type>();
    case DType::F8E4M3FNUZ: return b_.getType<Float8E4M3FNUZType>();
    case DType::F8E5M2FNUZ: return b_.getType<Float8E5M2FNUZType>();
    }
    return {};
  }

  Type typeOf(const TraceType &t) {
    Type e = t.isPtr ? Type(mlir::tessel::PtrType::get(&ctx_, element(t.dtype))) : element(t.dtype);
    if (t.shape.empty())
      return e;
    return RankedTensorType::get(t.shape, e);
  }
  Type typeOf(const TraceNode &n) { return typeOf(n.type()); }

  Location locOf(const TraceNode &n) {
    if (!n.loc.file || !*n.loc.file)
      return UnknownLoc::get(&ctx_);
    return FileLineColLoc::get(&ctx_, n.loc.file, n.loc.line, n.loc.column);
  }

  [[noreturn]] void fail(const TraceNode &n, const std::string &what) {
    std::string where = n.loc.file && *n.loc.file
                            ? std::string(n.loc.file) + ":" + std::to_string(n.loc.line) + ": "
                            : std::string();
    throw Error(where + (n.op == TraceOp::Op ? n.name : std::string(traceOpName(n.op))) + ": " + what);
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

  // Imports `nodes` into `block` (the builder's insertion point); each
  // node's value is found by its id from then on.
  void importNodes(const std::vector<TraceNode> &nodes, Block *block) {
    Block *outer = block_;
    block_ = block;
    for (const TraceNode &n : nodes) {
      // Ids are below the node count (the tracer numbers them densely).
      if (n.id < 0 || size_t(n.id) >= idLimit_ || (size_t(n.id) < values_.size() && defined_[n.id]))
        fail(n, "malformed trace: value id " + std::to_string(n.id) + " is out of range or used twice");
      Value v = importNode(n);
      if (size_t(n.id) >= values_.size()) {
        values_.resize(n.id + 1);
        defined_.resize(n.id + 1);
      }
      values_[n.id] = v;
      defined_[n.id] = true;
    }
    block_ = outer;
  }

  Value importNode(const TraceNode &n) {
    Location loc = locOf(n);
    Type type = typeOf(n);
    switch (n.op) {
    case TraceOp::Arg:
      if (n.i0 < 0 || size_t(n.i0) >= func_.getNumArguments())
        fail(n, "malformed trace: argument index out of range");
      return func_.getArgument(n.i0);
    case TraceOp::ConstInt:
    case TraceOp::ConstFloat:
      return constantLike(type, scalarAttr(mlir::tessel::elementTypeOf(type), n.i0,
                                           n.op == TraceOp::ConstFloat ? n.f : double(n.i0)),
                          loc);
    case TraceOp::Op:
      return importOp(n, type, loc);
    case TraceOp::Result: {
      Operation *multi = operand(n, 0).getDefiningOp();
      if (!multi || n.i0 < 0 || n.i0 >= multi->getNumResults())
        fail(n, "malformed trace: result index out of range");
      return multi->getResult(n.i0);
    }
    case TraceOp::RegionArg:
      // The block's arguments are its first nodes, in order.
      if (block_ == &func_.getBody().front() || n.i0 != block_->getNumArguments())
        fail(n, "malformed trace: a region argument out of place");
      return block_->addArgument(type, loc);
    }
    fail(n, "unknown node kind");
  }

  // A generic op, built by name: its verifier (run right after the import)
  // checks operands, types and attributes, so a malformed node is an error.
  Value importOp(const TraceNode &n, Type type, Location loc) {
    // Reported as a diagnostic at the node's line, as the verifier reports
    // everything else about the op.
    std::optional<RegisteredOperationName> name = RegisteredOperationName::lookup(n.name, &ctx_);
    if (!name || (n.results > 1 && n.resultTypes.size() != n.results)) {
      mlir::tessel::emitUserError(loc) << "malformed trace: "
                     << (name ? "the op's result types are missing" : "no operation named '" + n.name + "'");
      malformed_ = true;
      return n.results ? b_.create<UnrealizedConversionCastOp>(loc, type, ValueRange{}).getResult(0)
                       : Value();
    }
    OperationState state(loc, *name);
    for (size_t i = 0; i < n.operands.size(); ++i)
      state.addOperands(operand(n, i));
    if (n.results == 1)
      state.addTypes(type);
    for (const TraceType &t : n.resultTypes)
      state.addTypes(typeOf(t));
    // Regions first: their nodes come before the op in the numbering.
    for (const TraceRegion &nodes : n.regions) {
      auto region = std::make_unique<Region>();
      Block *block = new Block();
      region->push_back(block);
      OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(block);
      importNodes(nodes, block);
      state.addRegion(std::move(region));
    }
    for (const TraceAttr &a : n.attrs) {
      Attribute attr;
      // arith's fast-math flags travel as an integer (fdiv); div_rn as a flag.
      if (a.name == "fastmath" && a.kind == TraceAttr::I64) {
        state.addAttribute(a.name, arith::FastMathFlagsAttr::get(&ctx_, arith::FastMathFlags(uint32_t(a.value))));
        continue;
      }
      if (a.name == divRn_.getValue()) {
        state.addAttribute(a.name, b_.getUnitAttr());
        continue;
      }
      switch (a.kind) {
      case TraceAttr::I32: attr = b_.getI32IntegerAttr(a.value); break;
      case TraceAttr::I64: attr = b_.getI64IntegerAttr(a.value); break;
      case TraceAttr::Bool: attr = b_.getBoolAttr(a.value != 0); break;
      case TraceAttr::I32Array:
        attr = b_.getDenseI32ArrayAttr(SmallVector<int32_t>(a.values.begin(), a.values.end()));
        break;
      case TraceAttr::String: attr = b_.getStringAttr(a.text); break;
      }
      state.addAttribute(a.name, attr);
    }
    Operation *op = b_.create(state);
    return op->getNumResults() ? op->getResult(0) : Value();
  }

  MLIRContext &ctx_;
  const Trace &trace_;
  Block *block_ = nullptr; // where nodes go now
  func::FuncOp func_;
  OpBuilder b_;
  StringAttr divRn_; // tessel.div_rn, which the trace spells out
  std::vector<Value> values_; // by value id
  std::vector<bool> defined_;
  size_t idLimit_ = 0;         // the number of nodes in the trace
  bool malformed_ = false; // an error was emitted as a diagnostic
};

} // namespace

OwningOpRef<ModuleOp> importTrace(MLIRContext &ctx, const Trace &trace,
                                  const Specialization &spec, const TargetFacts &target,
                                  unsigned numWarps) {
  return TraceImporter(ctx, trace).run(spec, target, numWarps);
}

} // namespace tessel
