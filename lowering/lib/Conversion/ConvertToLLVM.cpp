// Distribution (see Passes.td): from tile-level functions whose tiles carry
// layouts to per-thread LLVM dialect code. Each tile becomes the list of
// scalar values ("registers") one thread holds, in RegisterLayout order.
#include "tessel/Dialect/Layout.h"
#include "tessel/Dialect/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCONVERTTOLLVM
#include "tessel/Dialect/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

constexpr unsigned kGlobalAddressSpace = 1;
constexpr unsigned kConstantAddressSpace = 4;

Type scalarType(Type t) {
  Type e = elementTypeOf(t);
  if (isa<PtrType>(e))
    return LLVM::LLVMPointerType::get(t.getContext(), kGlobalAddressSpace);
  return e;
}

// Emits one kernel's per-thread code.
class Distributor {
public:
  Distributor(func::FuncOp func, LLVM::LLVMFuncOp kernel, unsigned numWarps, unsigned waveSize)
      : func_(func), kernel_(kernel), b_(func.getContext()), numWarps_(numWarps),
        waveSize_(waveSize) {}

  LogicalResult run() {
    Block *entry = kernel_.addEntryBlock(b_);
    entry_ = entry;
    b_.setInsertionPointToStart(entry);
    for (auto [arg, karg] : llvm::zip(func_.getArguments(), kernel_.getArguments()))
      regs_[arg] = {karg};
    Location loc = func_.getLoc();
    tid_ = b_.create<ROCDL::ThreadIdXOp>(loc, b_.getI32Type());
    lane_ = b_.create<LLVM::AndOp>(loc, tid_, i32(waveSize_ - 1));
    wave_ = b_.create<LLVM::LShrOp>(loc, tid_, i32(llvm::Log2_32(waveSize_)));
    for (Operation &op : func_.getBody().front())
      if (failed(emit(&op)))
        return failure();
    return success();
  }

private:
  Value i32(int64_t v) { return constant(b_.getI32Type(), b_.getI32IntegerAttr(v)); }

  // Constants live at the top of the entry block so they dominate every use.
  Value constant(Type type, TypedAttr value) {
    auto key = std::make_pair(type, Attribute(value));
    if (Value v = constants_.lookup(key))
      return v;
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(entry_);
    Value v = b_.create<LLVM::ConstantOp>(kernel_.getLoc(), type, value);
    constants_[key] = v;
    return v;
  }

  // Lane and wave coordinates of this thread along dim `d` of `root`.
  std::pair<Value, Value> threadCoords(BlockedLayoutAttr root, unsigned d, Location loc) {
    auto key = std::make_pair(Attribute(root), d);
    auto it = threadCoords_.find(key);
    if (it != threadCoords_.end())
      return it->second;
    auto decompose = [&](Value id, ArrayRef<unsigned> counts) {
      int64_t stride = 1;
      for (unsigned dim : root.getOrder()) {
        if (dim == d) {
          Value v = id;
          if (stride > 1)
            v = b_.create<LLVM::LShrOp>(loc, v, i32(llvm::Log2_64(stride)));
          return Value(b_.create<LLVM::AndOp>(loc, v, i32(counts[dim] - 1)));
        }
        stride *= counts[dim];
      }
      llvm_unreachable("dim not in order");
    };
    std::pair<Value, Value> coords = {decompose(lane_, root.getThreadsPerWave()),
                                      decompose(wave_, root.getWavesPerBlock())};
    threadCoords_[key] = coords;
    return coords;
  }

  // Coordinates (i32) of every register of a tile of `type` along `dim`.
  SmallVector<Value> coordinates(RankedTensorType type, unsigned dim, Location loc) {
    RegisterLayout layout = getRegisterLayout(type);
    const DimDistribution &dist = layout.dims[dim];
    Value dyn;
    if (dist.size != 1) {
      auto [laneC, waveC] = threadCoords(layout.root, dist.sourceDim, loc);
      dyn = b_.create<LLVM::AddOp>(loc, b_.create<LLVM::MulOp>(loc, laneC, i32(dist.laneScale)),
                                   b_.create<LLVM::MulOp>(loc, waveC, i32(dist.waveScale)));
    }
    SmallVector<Value> perIndex;
    for (int64_t s : dist.staticCoord) {
      if (!dyn) {
        perIndex.push_back(i32(0));
        continue;
      }
      Value c = s ? Value(b_.create<LLVM::AddOp>(loc, dyn, i32(s))) : dyn;
      if (dist.wraps)
        c = b_.create<LLVM::AndOp>(loc, c, i32(dist.size - 1));
      perIndex.push_back(c);
    }
    SmallVector<Value> out;
    for (int64_t r = 0; r < layout.numRegisters(); ++r)
      out.push_back(perIndex[layout.unflatten(r)[dim]]);
    return out;
  }

  static int64_t registerCount(Type t) {
    if (auto tensor = dyn_cast<RankedTensorType>(t))
      return getRegisterLayout(tensor).numRegisters();
    return 1;
  }

  // The registers of an already emitted value. Returned by value: emitting
  // more ops may grow the map and move its storage.
  SmallVector<Value> in(Value v) {
    auto it = regs_.find(v);
    if (it == regs_.end())
      llvm::report_fatal_error("tessel: value used before it was distributed (compiler bug)");
    return it->second;
  }

  LogicalResult emit(Operation *op) {
    Location loc = op->getLoc();
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case<func::ReturnOp>([&](auto) {
          b_.create<LLVM::ReturnOp>(loc, ValueRange{});
          return success();
        })
        .Case<ProgramIdOp>([&](ProgramIdOp p) {
          Type i32Type = b_.getI32Type();
          Value id;
          switch (p.getAxis()) {
          case 0: id = b_.create<ROCDL::BlockIdXOp>(loc, i32Type); break;
          case 1: id = b_.create<ROCDL::BlockIdYOp>(loc, i32Type); break;
          default: id = b_.create<ROCDL::BlockIdZOp>(loc, i32Type); break;
          }
          regs_[p] = {id};
          return success();
        })
        .Case<NumProgramsOp>([&](NumProgramsOp p) {
          // grid_size_{x,y,z} (work-items) sit at bytes 12/16/20 of the
          // dispatch packet; workgroups are blockSize x 1 x 1 threads.
          auto ptr4 = LLVM::LLVMPointerType::get(b_.getContext(), kConstantAddressSpace);
          Value packet = b_.create<LLVM::CallIntrinsicOp>(
                               loc, ptr4, b_.getStringAttr("llvm.amdgcn.dispatch.ptr"),
                               ValueRange{})
                             .getResult(0);
          Value field = b_.create<LLVM::GEPOp>(loc, ptr4, b_.getI8Type(), packet,
                                               ArrayRef<LLVM::GEPArg>{int32_t(12 + 4 * p.getAxis())});
          Value size = b_.create<LLVM::LoadOp>(loc, b_.getI32Type(), field, /*alignment=*/4);
          if (p.getAxis() == 0)
            size = b_.create<LLVM::UDivOp>(loc, size, i32(numWarps_ * waveSize_));
          regs_[p] = {size};
          return success();
        })
        .Case<arith::ConstantOp>([&](arith::ConstantOp c) -> LogicalResult {
          auto tile = dyn_cast<RankedTensorType>(c.getType());
          if (!tile) {
            regs_[c] = {constant(c.getType(), cast<TypedAttr>(c.getValue()))};
            return success();
          }
          auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
          if (!dense || !dense.isSplat())
            return c.emitError("only constant tiles with one value are supported");
          Value v = constant(tile.getElementType(), dense.getSplatValue<TypedAttr>());
          regs_[c] = SmallVector<Value>(registerCount(tile), v);
          return success();
        })
        .Case<MakeRangeOp>([&](MakeRangeOp r) {
          SmallVector<Value> coords = coordinates(r.getType(), 0, loc);
          for (Value &c : coords)
            if (r.getStart() != 0)
              c = b_.create<LLVM::AddOp>(loc, c, i32(r.getStart()));
          regs_[r] = coords;
          return success();
        })
        .Case<SplatOp>([&](SplatOp s) {
          regs_[s] = SmallVector<Value>(registerCount(s.getType()), in(s.getSrc())[0]);
          return success();
        })
        .Case<BroadcastOp>([&](BroadcastOp bc) {
          auto srcType = cast<RankedTensorType>(bc.getSrc().getType());
          RegisterLayout dst = getRegisterLayout(bc.getType());
          RegisterLayout src = getRegisterLayout(srcType);
          SmallVector<Value> out, srcRegs = in(bc.getSrc());
          for (int64_t r = 0; r < dst.numRegisters(); ++r) {
            SmallVector<int64_t> idx = dst.unflatten(r);
            for (unsigned d = 0; d < idx.size(); ++d)
              if (srcType.getDimSize(d) == 1)
                idx[d] = 0;
            out.push_back(srcRegs[src.flatten(idx)]);
          }
          regs_[bc] = out;
          return success();
        })
        .Case<ExpandDimsOp>([&](ExpandDimsOp e) {
          RegisterLayout dst = getRegisterLayout(e.getType());
          RegisterLayout src = getRegisterLayout(cast<RankedTensorType>(e.getSrc().getType()));
          SmallVector<Value> out, srcRegs = in(e.getSrc());
          for (int64_t r = 0; r < dst.numRegisters(); ++r) {
            SmallVector<int64_t> idx = dst.unflatten(r);
            idx.erase(idx.begin() + e.getAxis());
            out.push_back(srcRegs[src.flatten(idx)]);
          }
          regs_[e] = out;
          return success();
        })
        .Case<AddPtrOp>([&](AddPtrOp a) {
          Type elem = pointeeOf(a.getType());
          auto ptrType = LLVM::LLVMPointerType::get(b_.getContext(), kGlobalAddressSpace);
          SmallVector<Value> out;
          SmallVector<Value> ptrs = in(a.getPtr()), offs = in(a.getOffset());
          for (size_t i = 0; i < ptrs.size(); ++i)
            out.push_back(b_.create<LLVM::GEPOp>(loc, ptrType, elem, ptrs[i], ValueRange{offs[i]}));
          regs_[a] = out;
          return success();
        })
        .Case<LoadOp>([&](LoadOp l) { return emitLoad(l); })
        .Case<StoreOp>([&](StoreOp s) { return emitStore(s); })
        .Default([&](Operation *op) -> LogicalResult {
          if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
              op->getNumResults() != 1 || op->getNumRegions() != 0)
            return op->emitError("tessel cannot distribute '")
                   << op->getName() << "' over threads";
          return emitElementwise(op);
        });
  }

  // One scalar op per register, of the same kind as the tile op.
  LogicalResult emitElementwise(Operation *op) {
    Value result = op->getResult(0);
    Type resultScalar = scalarType(result.getType());
    int64_t n = registerCount(result.getType());
    SmallVector<Value> out;
    SmallVector<SmallVector<Value>> operandRegs;
    for (Value operand : op->getOperands())
      operandRegs.push_back(in(operand));
    for (int64_t r = 0; r < n; ++r) {
      SmallVector<Value> operands;
      for (auto [operand, regs] : llvm::zip(op->getOperands(), operandRegs))
        operands.push_back(regs[isa<RankedTensorType>(operand.getType()) ? r : 0]);
      if (Value call = emitDeviceLibraryCall(op, operands, resultScalar)) {
        out.push_back(call);
        continue;
      }
      OperationState state(op->getLoc(), op->getName().getStringRef(), operands,
                           TypeRange{resultScalar}, op->getAttrs());
      out.push_back(b_.create(state)->getResult(0));
    }
    regs_[result] = out;
    return success();
  }

  // Math functions AMDGPU has no accurate instruction for come from ocml.
  Value emitDeviceLibraryCall(Operation *op, ValueRange operands, Type type) {
    auto floatType = dyn_cast<FloatType>(type);
    if (!floatType)
      return {};
    StringRef base = llvm::TypeSwitch<Operation *, StringRef>(op)
                         .Case<math::SinOp>([](auto) { return "sin"; })
                         .Case<math::CosOp>([](auto) { return "cos"; })
                         .Case<math::ExpOp>([](auto) { return "exp"; })
                         .Case<math::Exp2Op>([](auto) { return "exp2"; })
                         .Case<math::LogOp>([](auto) { return "log"; })
                         .Case<math::Log2Op>([](auto) { return "log2"; })
                         .Case<arith::RemFOp>([](auto) { return "fmod"; })
                         .Default([](auto) { return ""; });
    bool needsLibrary = !base.empty() && (floatType.isF64() || base == "sin" ||
                                          base == "cos" || base == "fmod");
    if (!needsLibrary)
      return {};
    std::string name = ("__ocml_" + base + "_f" + Twine(floatType.getWidth())).str();
    auto module = kernel_->getParentOfType<ModuleOp>();
    auto fnType = LLVM::LLVMFunctionType::get(
        type, SmallVector<Type>(operands.size(), type));
    if (!module.lookupSymbol<LLVM::LLVMFuncOp>(name)) {
      OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(module.getBody());
      b_.create<LLVM::LLVMFuncOp>(module.getLoc(), name, fnType);
    }
    return b_.create<LLVM::CallOp>(op->getLoc(), fnType, name, operands).getResult();
  }

  Value vectorOf(ArrayRef<Value> elems, Type elemType, Location loc) {
    if (elems.size() == 1)
      return elems[0];
    auto vecType = VectorType::get({int64_t(elems.size())}, elemType);
    Value v = b_.create<LLVM::UndefOp>(loc, vecType);
    for (size_t i = 0; i < elems.size(); ++i)
      v = b_.create<LLVM::InsertElementOp>(loc, v, elems[i], i32(i));
    return v;
  }

  // Runs `body` only where `pred` holds; returns the merge block's argument
  // (body's value, or `otherwise`) when a value is produced.
  Value predicated(Value pred, Location loc, Value otherwise,
                   llvm::function_ref<Value()> body) {
    Block *current = b_.getInsertionBlock();
    Block *merge = current->splitBlock(b_.getInsertionPoint());
    Block *then = new Block();
    then->insertBefore(merge);
    Value result;
    if (otherwise)
      result = merge->addArgument(otherwise.getType(), loc);
    b_.setInsertionPointToEnd(current);
    if (otherwise)
      b_.create<LLVM::CondBrOp>(loc, pred, then, ValueRange{}, merge, ValueRange{otherwise});
    else
      b_.create<LLVM::CondBrOp>(loc, pred, then, merge);
    b_.setInsertionPointToEnd(then);
    Value v = body();
    b_.create<LLVM::BrOp>(loc, otherwise ? ValueRange{v} : ValueRange{}, merge);
    b_.setInsertionPointToStart(merge);
    return result;
  }

  LogicalResult emitLoad(LoadOp l) {
    Location loc = l.getLoc();
    Type elem = elementTypeOf(l.getType());
    int64_t vec = l.getVec();
    SmallVector<Value> ptrs = in(l.getPtr());
    SmallVector<Value> others = l.getOther() ? in(l.getOther()) : SmallVector<Value>();
    SmallVector<Value> masks = l.getMask() ? in(l.getMask()) : SmallVector<Value>();
    SmallVector<Value> out;
    unsigned elemBytes = std::max(1u, elem.getIntOrFloatBitWidth() / 8);
    Type accessType = vec == 1 ? elem : Type(VectorType::get({vec}, elem));
    for (size_t g = 0; g < ptrs.size(); g += vec) {
      Value ptr = ptrs[g];
      auto load = [&]() -> Value {
        return b_.create<LLVM::LoadOp>(loc, accessType, ptr, /*alignment=*/vec * elemBytes);
      };
      Value value;
      if (l.getMask()) {
        SmallVector<Value> other;
        for (int64_t i = 0; i < vec; ++i)
          other.push_back(l.getOther() ? others[g + i]
                                       : constant(elem, b_.getZeroAttr(elem)));
        value = predicated(masks[g], loc, vectorOf(other, elem, loc), load);
      } else {
        value = load();
      }
      for (int64_t i = 0; i < vec; ++i)
        out.push_back(vec == 1 ? value
                               : Value(b_.create<LLVM::ExtractElementOp>(loc, value, i32(i))));
    }
    regs_[l.getResult()] = out;
    return success();
  }

  LogicalResult emitStore(StoreOp s) {
    Location loc = s.getLoc();
    Type elem = pointeeOf(s.getPtr().getType());
    int64_t vec = s.getVec();
    SmallVector<Value> ptrs = in(s.getPtr()), values = in(s.getValue());
    SmallVector<Value> masks = s.getMask() ? in(s.getMask()) : SmallVector<Value>();
    unsigned elemBytes = std::max(1u, elem.getIntOrFloatBitWidth() / 8);
    for (size_t g = 0; g < ptrs.size(); g += vec) {
      Value ptr = ptrs[g];
      Value value = vectorOf(ArrayRef<Value>(values).slice(g, vec), elem, loc);
      auto store = [&]() -> Value {
        b_.create<LLVM::StoreOp>(loc, value, ptr, /*alignment=*/vec * elemBytes);
        return {};
      };
      if (s.getMask())
        predicated(masks[g], loc, {}, store);
      else
        store();
    }
    return success();
  }

  func::FuncOp func_;
  LLVM::LLVMFuncOp kernel_;
  OpBuilder b_;
  unsigned numWarps_, waveSize_;
  Block *entry_ = nullptr;
  Value tid_, lane_, wave_;
  llvm::DenseMap<Value, SmallVector<Value>> regs_;
  llvm::DenseMap<std::pair<Type, Attribute>, Value> constants_;
  llvm::DenseMap<std::pair<Attribute, unsigned>, std::pair<Value, Value>> threadCoords_;
};

struct ConvertToLLVMPass : mlir::tessel::impl::TesselConvertToLLVMBase<ConvertToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    auto warpsAttr = module->getAttrOfType<IntegerAttr>("tessel.num_warps");
    auto waveAttr = module->getAttrOfType<IntegerAttr>("tessel.wave_size");
    if (!warpsAttr || !waveAttr) {
      module.emitError("tessel-convert-to-llvm needs tessel.num_warps and tessel.wave_size");
      return signalPassFailure();
    }
    unsigned numWarps = warpsAttr.getInt(), waveSize = waveAttr.getInt();
    unsigned blockSize = numWarps * waveSize;

    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      SmallVector<Type> params;
      for (Type t : func.getArgumentTypes())
        params.push_back(scalarType(t));
      OpBuilder builder(func);
      auto kernel = builder.create<LLVM::LLVMFuncOp>(
          func.getLoc(), func.getName(),
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params));
      auto *rocdl = ctx->getLoadedDialect<ROCDL::ROCDLDialect>();
      kernel->setAttr(rocdl->getKernelAttrHelper().getName(), builder.getUnitAttr());
      std::string flat = std::to_string(blockSize) + "," + std::to_string(blockSize);
      kernel->setAttr(rocdl->getFlatWorkGroupSizeAttrHelper().getName(),
                      builder.getStringAttr(flat));
      kernel->setAttr(rocdl->getReqdWorkGroupSizeAttrHelper().getName(),
                      builder.getDenseI32ArrayAttr({int32_t(blockSize), 1, 1}));
      Distributor distributor(func, kernel, numWarps, waveSize);
      if (failed(distributor.run()))
        return signalPassFailure();
      func.erase();
    }

    // The per-register scalar arith and math ops become LLVM ops.
    LLVMTypeConverter converter(ctx);
    RewritePatternSet patterns(ctx);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    LLVMConversionTarget target(*ctx);
    target.addLegalDialect<ROCDL::ROCDLDialect>();
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
