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
#include "mlir/IR/IRMapping.h"
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
constexpr const char *kLdsSymbol = "tessel_lds";

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
    if (auto lds = kernel_->getParentOfType<ModuleOp>().lookupSymbol<LLVM::GlobalOp>(kLdsSymbol))
      ldsBase_ = b_.create<LLVM::AddressOfOp>(loc, lds);
    for (Operation &op : func_.getBody().front())
      if (failed(emit(&op)))
        return failure();
    return failure(failed_);
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
    if (it != regs_.end())
      return it->second;
    // A compiler bug: report it as an error (the pass fails), keep going
    // with placeholders rather than crash.
    if (!failed_)
      emitError(v.getLoc(), "tessel compiler bug: a value is used before it was distributed");
    failed_ = true;
    Value poison = b_.create<LLVM::PoisonOp>(v.getLoc(), scalarType(v.getType()));
    return SmallVector<Value>(registerCount(v.getType()), poison);
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
        .Case<ReduceOp>([&](ReduceOp r) { return emitReduce(r); })
        .Case<ScanOp>([&](ScanOp s) { return emitScan(s); })
        .Case<ConvertLayoutOp, ReshapeOp, PermuteOp, JoinOp, SplitOp>(
            [&](Operation *op) { return emitThroughLds(op); })
        .Case<MultipleOfOp, MaxContiguousOp>([&](Operation *op) {
          regs_[op->getResult(0)] = in(op->getOperand(0));
          return success();
        })
        .Case<AssumeOp>([&](AssumeOp a) {
          b_.create<LLVM::AssumeOp>(loc, in(a.getCond())[0]);
          return success();
        })
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
      if (Value q = emitDefinedDivision(op, operands)) {
        out.push_back(q);
        continue;
      }
      OperationState state(op->getLoc(), op->getName().getStringRef(), operands,
                           TypeRange{resultScalar}, op->getAttrs());
      out.push_back(b_.create(state)->getResult(0));
    }
    regs_[result] = out;
    return success();
  }

  // Integer division with every input defined, the same on both executors
  // (LLVM's sdiv/udiv are undefined for /0 and MIN/-1, and the optimizer
  // would otherwise delete a user's guard): x/0 = -1 (all ones), x%0 = x,
  // MIN/-1 = MIN, MIN%-1 = 0.
  Value emitDefinedDivision(Operation *op, ValueRange operands) {
    bool isSigned = isa<arith::DivSIOp, arith::RemSIOp>(op);
    bool isDiv = isa<arith::DivSIOp, arith::DivUIOp>(op);
    if (!isa<arith::DivSIOp, arith::RemSIOp, arith::DivUIOp, arith::RemUIOp>(op))
      return {};
    Location loc = op->getLoc();
    Value x = operands[0], d = operands[1];
    auto type = cast<IntegerType>(x.getType());
    auto c = [&](const APInt &v) {
      return constant(type, b_.getIntegerAttr(type, v));
    };
    unsigned w = type.getWidth();
    Value zero = b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, d, c(APInt(w, 0)));
    Value bad = zero;
    if (isSigned) {
      Value isMin = b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, x, c(APInt::getSignedMinValue(w)));
      Value isMinusOne = b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, d, c(APInt::getAllOnes(w)));
      bad = b_.create<LLVM::OrOp>(loc, zero, b_.create<LLVM::AndOp>(loc, isMin, isMinusOne));
    }
    // With a divisor of 1, MIN/-1 already gives MIN and MIN%-1 gives 0.
    Value safe = b_.create<LLVM::SelectOp>(loc, bad, c(APInt(w, 1)), d);
    Value q;
    if (isa<arith::DivSIOp>(op))
      q = b_.create<LLVM::SDivOp>(loc, x, safe);
    else if (isa<arith::RemSIOp>(op))
      q = b_.create<LLVM::SRemOp>(loc, x, safe);
    else if (isa<arith::DivUIOp>(op))
      q = b_.create<LLVM::UDivOp>(loc, x, safe);
    else
      q = b_.create<LLVM::URemOp>(loc, x, safe);
    return b_.create<LLVM::SelectOp>(loc, zero, isDiv ? c(APInt::getAllOnes(w)) : x, q);
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


  // ---- cross-thread helpers ----------------------------------------------

  void barrier(Location loc) {
    b_.create<LLVM::FenceOp>(loc, LLVM::AtomicOrdering::release, "workgroup");
    b_.create<ROCDL::SBarrierOp>(loc);
    b_.create<LLVM::FenceOp>(loc, LLVM::AtomicOrdering::acquire, "workgroup");
  }

  // Moves `v` between lanes 32 bits at a time with `move32`.
  Value moveAcrossLanes(Value v, Location loc, llvm::function_ref<Value(Value)> move32) {
    Type t = v.getType();
    Type i32t = b_.getI32Type();
    unsigned bits = t.getIntOrFloatBitWidth();
    if (bits == 64) {
      auto pair = VectorType::get({2}, i32t);
      Value asPair = b_.create<LLVM::BitcastOp>(loc, pair, v);
      Value out = b_.create<LLVM::UndefOp>(loc, pair);
      for (int h = 0; h < 2; ++h) {
        Value part = b_.create<LLVM::ExtractElementOp>(loc, asPair, i32(h));
        out = b_.create<LLVM::InsertElementOp>(loc, out, move32(part), i32(h));
      }
      return b_.create<LLVM::BitcastOp>(loc, t, out);
    }
    Type intT = b_.getIntegerType(bits);
    Value asInt = isa<FloatType>(t) ? Value(b_.create<LLVM::BitcastOp>(loc, intT, v)) : v;
    Value wide = bits == 32 ? asInt : Value(b_.create<LLVM::ZExtOp>(loc, i32t, asInt));
    Value moved = move32(wide);
    Value narrow = bits == 32 ? moved : Value(b_.create<LLVM::TruncOp>(loc, intT, moved));
    return isa<FloatType>(t) ? Value(b_.create<LLVM::BitcastOp>(loc, t, narrow)) : narrow;
  }

  // `v` as held by lane `srcLane` of this wave (ds_bpermute).
  Value shuffle(Value v, Value srcLane, Location loc) {
    Value addr = b_.create<LLVM::ShlOp>(
        loc, b_.create<LLVM::AndOp>(loc, srcLane, i32(waveSize_ - 1)), i32(2));
    return moveAcrossLanes(v, loc, [&](Value x) -> Value {
      return b_.create<ROCDL::DsBpermuteOp>(loc, b_.getI32Type(), addr, x);
    });
  }

  // DPP row controls (GFX9 and GFX11 alike).
  static constexpr int32_t kDppQuadXor1 = 0xB1;   // quad_perm [1, 0, 3, 2]
  static constexpr int32_t kDppQuadXor2 = 0x4E;   // quad_perm [2, 3, 0, 1]
  static constexpr int32_t kDppHalfMirror = 0x141; // lane i <-> 7 - i within 8
  static constexpr int32_t kDppMirror = 0x140;     // lane i <-> 15 - i within 16

  // The partner's value in step `distance` of a butterfly over lanes whose
  // lower lane bits are already reduced (so a mirror pairs like an xor).
  // Within a row of 16 lanes DPP does it without touching LDS hardware;
  // beyond, ds_bpermute.
  Value butterflyPartner(Value v, int64_t distance, bool lowerBitsReduced, Location loc) {
    int32_t ctrl = distance == 1   ? kDppQuadXor1
                   : distance == 2 ? kDppQuadXor2
                   : distance == 4 && lowerBitsReduced ? kDppHalfMirror
                   : distance == 8 && lowerBitsReduced ? kDppMirror
                                                       : 0;
    if (!ctrl)
      return shuffle(v, b_.create<LLVM::XOrOp>(loc, lane_, i32(distance)), loc);
    return moveAcrossLanes(v, loc, [&](Value x) -> Value {
      return b_.create<ROCDL::DPPUpdateOp>(loc, x.getType(), x, x, ctrl, /*rowMask=*/0xF,
                                           /*bankMask=*/0xF, /*boundCtrl=*/true);
    });
  }

  // The combine region applied to (lhs..., rhs...).
  SmallVector<Value> combine(Region &region, ValueRange lhs, ValueRange rhs) {
    Block &body = region.front();
    IRMapping map;
    for (size_t i = 0; i < lhs.size(); ++i) {
      map.map(body.getArgument(i), lhs[i]);
      map.map(body.getArgument(lhs.size() + i), rhs[i]);
    }
    for (Operation &op : body.without_terminator()) {
      if (op.getNumResults() != 1) {
        op.emitError("a combine function can only compute values");
        failed_ = true;
        continue;
      }
      SmallVector<Value> operands;
      for (Value v : op.getOperands())
        operands.push_back(map.lookupOrDefault(v));
      if (Value call = emitDeviceLibraryCall(&op, operands, op.getResult(0).getType())) {
        map.map(op.getResult(0), call);
        continue;
      }
      if (Value q = emitDefinedDivision(&op, operands)) {
        map.map(op.getResult(0), q);
        continue;
      }
      Operation *copy = b_.clone(op, map);
      for (auto [from, to] : llvm::zip(op.getResults(), copy->getResults()))
        map.map(from, to);
    }
    SmallVector<Value> out;
    for (Value v : body.getTerminator()->getOperands())
      out.push_back(map.lookupOrDefault(v));
    return out;
  }

  SmallVector<Value> select(Value cond, ValueRange a, ValueRange b, Location loc) {
    SmallVector<Value> out;
    for (auto [x, y] : llvm::zip(a, b))
      out.push_back(b_.create<LLVM::SelectOp>(loc, cond, x, y));
    return out;
  }

  // A pointer `byteOffset` bytes into this op's LDS scratch.
  Value ldsAt(Operation *op, Value byteOffset, Location loc) {
    auto offsetAttr = op->getAttrOfType<IntegerAttr>("tessel.lds_offset");
    Value offset = b_.create<LLVM::AddOp>(loc, byteOffset, i32(offsetAttr ? offsetAttr.getInt() : 0));
    auto ptr3 = LLVM::LLVMPointerType::get(b_.getContext(), 3);
    return b_.create<LLVM::GEPOp>(loc, ptr3, b_.getI8Type(), ldsBase_, ValueRange{offset});
  }
  void ldsStore(Operation *op, Value byteOffset, Value v, Location loc) {
    if (v.getType().isInteger(1))
      v = b_.create<LLVM::ZExtOp>(loc, b_.getI8Type(), v);
    b_.create<LLVM::StoreOp>(loc, v, ldsAt(op, byteOffset, loc));
  }
  Value ldsLoad(Operation *op, Value byteOffset, Type t, Location loc) {
    Type stored = t.isInteger(1) ? b_.getI8Type() : t;
    Value v = b_.create<LLVM::LoadOp>(loc, stored, ldsAt(op, byteOffset, loc));
    return t.isInteger(1) ? Value(b_.create<LLVM::TruncOp>(loc, t, v)) : v;
  }

  // Row-major linear index of coordinates (i32 values) in `shape`.
  Value linearIndex(ArrayRef<Value> coords, ArrayRef<int64_t> shape, Location loc) {
    Value idx = i32(0);
    for (size_t d = 0; d < coords.size(); ++d) {
      idx = b_.create<LLVM::MulOp>(loc, idx, i32(shape[d]));
      idx = b_.create<LLVM::AddOp>(loc, idx, coords[d]);
    }
    return idx;
  }

  // Per register, its coordinates in every dim of `type`; a scalar is one
  // register with no coordinates.
  SmallVector<SmallVector<Value>> registerCoords(Type t, Location loc) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type)
      return {SmallVector<Value>()};
    SmallVector<SmallVector<Value>> perDim;
    for (unsigned d = 0; d < type.getRank(); ++d)
      perDim.push_back(coordinates(type, d, loc));
    int64_t n = getRegisterLayout(type).numRegisters();
    SmallVector<SmallVector<Value>> out(n);
    for (int64_t r = 0; r < n; ++r)
      for (unsigned d = 0; d < type.getRank(); ++d)
        out[r].push_back(perDim[d][r]);
    return out;
  }

  // Registers of a tile grouped into lines along `axis`: each line lists
  // the register indices that differ only in their `axis` coordinate, in
  // increasing coordinate order. Lines come in the order of the registers of
  // the tile without `axis`.
  SmallVector<SmallVector<int64_t>> linesAlong(RankedTensorType type, unsigned axis) {
    RegisterLayout layout = getRegisterLayout(type);
    RegisterLayout lineLayout = layout;
    lineLayout.dims.erase(lineLayout.dims.begin() + axis);
    lineLayout.order.clear();
    for (unsigned d : layout.order)
      if (d != axis)
        lineLayout.order.push_back(d > axis ? d - 1 : d);
    SmallVector<SmallVector<int64_t>> lines(std::max<int64_t>(1, lineLayout.numRegisters()));
    for (int64_t r = 0; r < layout.numRegisters(); ++r) {
      SmallVector<int64_t> idx = layout.unflatten(r);
      idx.erase(idx.begin() + axis);
      lines[lineLayout.dims.empty() ? 0 : lineLayout.flatten(idx)].push_back(r);
    }
    return lines;
  }

  // Byte offsets of each operand's section in a reduce/scan scratch buffer
  // of `waves` x `lines` values per operand (see ldsScratchBytes).
  SmallVector<int64_t> sectionOffsets(ValueRange srcs, int64_t waves, int64_t lines) {
    SmallVector<int64_t> out;
    int64_t bytes = 0;
    for (Value s : srcs) {
      bytes = (bytes + 7) / 8 * 8;
      out.push_back(bytes);
      bytes += waves * lines * ldsElementBytes(s.getType());
    }
    return out;
  }

  // The line number (row-major over the dims other than `axis`) of register `reg`.
  Value lineNumber(ArrayRef<Value> coords, RankedTensorType type, unsigned axis, Location loc) {
    SmallVector<Value> rest;
    SmallVector<int64_t> shape;
    for (unsigned d = 0; d < type.getRank(); ++d)
      if (d != axis) {
        rest.push_back(coords[d]);
        shape.push_back(type.getDimSize(d));
      }
    return linearIndex(rest, shape, loc);
  }

  // Where a reduce or scan puts one value per (wave, line) for each operand
  // when its axis spans several waves.
  struct WaveExchange {
    Operation *op;
    SmallVector<int64_t> sections; // byte offset of each operand's section
    int64_t lineCount;
    SmallVector<Value> lineIdx; // per line (of `lines`), its line number
    Value waveC;                // this thread's wave coordinate along the axis
  };
  WaveExchange waveExchange(Operation *op, ValueRange srcs, unsigned axis, int64_t waves,
                            ArrayRef<SmallVector<int64_t>> lines, Location loc) {
    auto type = cast<RankedTensorType>(srcs[0].getType());
    RegisterLayout layout = getRegisterLayout(type);
    WaveExchange x{op, {}, type.getNumElements() / type.getDimSize(axis), {}, {}};
    x.sections = sectionOffsets(srcs, waves, x.lineCount);
    x.waveC = b_.create<LLVM::AndOp>(
        loc, threadCoords(layout.root, layout.dims[axis].sourceDim, loc).second, i32(waves - 1));
    SmallVector<SmallVector<Value>> coords = registerCoords(type, loc);
    for (auto &line : lines)
      x.lineIdx.push_back(lineNumber(coords[line[0]], type, axis, loc));
    return x;
  }
  void exchangeStore(WaveExchange &x, size_t operand, Value wave, size_t line, Value v, Location loc) {
    ldsStore(x.op, exchangeSlot(x, operand, wave, line, v.getType(), loc), v, loc);
  }
  Value exchangeLoad(WaveExchange &x, size_t operand, int64_t wave, size_t line, Type t, Location loc) {
    return ldsLoad(x.op, exchangeSlot(x, operand, i32(wave), line, t, loc), t, loc);
  }
  Value exchangeSlot(WaveExchange &x, size_t operand, Value wave, size_t line, Type t, Location loc) {
    Value index = b_.create<LLVM::AddOp>(loc, b_.create<LLVM::MulOp>(loc, wave, i32(x.lineCount)),
                                         x.lineIdx[line]);
    return b_.create<LLVM::AddOp>(loc, b_.create<LLVM::MulOp>(loc, index, i32(ldsElementBytes(t))),
                                  i32(x.sections[operand]));
  }

  // Each operand's registers.
  SmallVector<SmallVector<Value>> operandRegisters(ValueRange srcs) {
    SmallVector<SmallVector<Value>> out;
    for (Value s : srcs)
      out.push_back(in(s));
    return out;
  }

  LogicalResult emitReduce(ReduceOp op) {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getSrcs()[0].getType());
    unsigned axis = op.getAxis();
    size_t n = op.getSrcs().size();
    RegisterLayout layout = getRegisterLayout(type);
    SmallVector<SmallVector<Value>> srcRegs = operandRegisters(op.getSrcs());
    SmallVector<SmallVector<int64_t>> lines = linesAlong(type, axis);

    // 1. Within each thread.
    SmallVector<SmallVector<Value>> acc;
    for (auto &line : lines) {
      SmallVector<Value> a;
      for (size_t i = 0; i < n; ++i)
        a.push_back(srcRegs[i][line[0]]);
      for (size_t j = 1; j < line.size(); ++j) {
        SmallVector<Value> next;
        for (size_t i = 0; i < n; ++i)
          next.push_back(srcRegs[i][line[j]]);
        a = combine(op.getCombine(), a, next);
      }
      acc.push_back(a);
    }
    // 2. Across the lanes of a wave: butterfly, keeping operand order.
    int64_t stride = laneStride(layout, axis);
    for (int64_t k = 1; k < distinctLanes(layout, axis); k <<= 1) {
      Value bit = i32(stride * k);
      Value upper = b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne,
                                            b_.create<LLVM::AndOp>(loc, lane_, bit), i32(0));
      for (auto &a : acc) {
        SmallVector<Value> other;
        for (Value v : a)
          other.push_back(butterflyPartner(v, stride * k, /*lowerBitsReduced=*/stride == 1, loc));
        a = combine(op.getCombine(), select(upper, other, a, loc), select(upper, a, other, loc));
      }
    }
    // 3. Across waves, through LDS.
    int64_t waves = distinctWaves(layout, axis);
    if (waves > 1) {
      WaveExchange x = waveExchange(op, op.getSrcs(), axis, waves, lines, loc);
      onlyOwners(op.getSrcs()[0].getType(), loc, [&] {
        for (size_t l = 0; l < lines.size(); ++l)
          for (size_t i = 0; i < n; ++i)
            exchangeStore(x, i, x.waveC, l, acc[l][i], loc);
      });
      barrier(loc);
      for (size_t l = 0; l < lines.size(); ++l) {
        auto loadWave = [&](int64_t w) {
          SmallVector<Value> v;
          for (size_t i = 0; i < n; ++i)
            v.push_back(exchangeLoad(x, i, w, l, acc[l][i].getType(), loc));
          return v;
        };
        SmallVector<Value> a = loadWave(0);
        for (int64_t w = 1; w < waves; ++w)
          a = combine(op.getCombine(), a, loadWave(w));
        acc[l] = a;
      }
      barrier(loc);
    }
    for (size_t i = 0; i < n; ++i) {
      SmallVector<Value> out;
      for (auto &a : acc)
        out.push_back(a[i]);
      regs_[op.getResult(i)] = out;
    }
    return success();
  }

  LogicalResult emitScan(ScanOp op) {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getSrcs()[0].getType());
    unsigned axis = op.getAxis();
    bool reverse = op.getReverse();
    size_t n = op.getSrcs().size();
    RegisterLayout layout = getRegisterLayout(type);
    SmallVector<SmallVector<Value>> vals = operandRegisters(op.getSrcs());
    SmallVector<SmallVector<int64_t>> lines = linesAlong(type, axis);
    for (auto &line : lines)
      if (reverse)
        std::reverse(line.begin(), line.end());
    auto at = [&](int64_t reg) {
      SmallVector<Value> v;
      for (size_t i = 0; i < n; ++i)
        v.push_back(vals[i][reg]);
      return v;
    };
    auto put = [&](int64_t reg, ArrayRef<Value> v) {
      for (size_t i = 0; i < n; ++i)
        vals[i][reg] = v[i];
    };
    // 1. Within each thread, in scan order.
    for (auto &line : lines)
      for (size_t j = 1; j < line.size(); ++j)
        put(line[j], combine(op.getCombine(), at(line[j - 1]), at(line[j])));

    // 2. Across lanes: inclusive scan of the thread totals (Hillis-Steele).
    int64_t lanes = distinctLanes(layout, axis), stride = laneStride(layout, axis);
    Value laneC = b_.create<LLVM::AndOp>(
        loc, threadCoords(layout.root, layout.dims[axis].sourceDim, loc).first, i32(lanes - 1));
    Value eff = reverse ? Value(b_.create<LLVM::SubOp>(loc, i32(lanes - 1), laneC)) : laneC;
    int64_t towardsPrevious = reverse ? stride : -stride;
    SmallVector<SmallVector<Value>> prefix(lines.size());
    Value prefixValid;
    {
      SmallVector<SmallVector<Value>> incl;
      for (auto &line : lines)
        incl.push_back(at(line.back()));
      for (int64_t k = 1; k < lanes; k <<= 1) {
        Value from = b_.create<LLVM::AddOp>(loc, lane_, i32(towardsPrevious * k));
        Value take = b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::sge, eff, i32(k));
        for (auto &s : incl) {
          SmallVector<Value> other;
          for (Value v : s)
            other.push_back(shuffle(v, from, loc));
          s = select(take, combine(op.getCombine(), other, s), s, loc);
        }
      }
      Value from = b_.create<LLVM::AddOp>(loc, lane_, i32(towardsPrevious));
      for (size_t l = 0; l < lines.size(); ++l)
        for (Value v : incl[l])
          prefix[l].push_back(shuffle(v, from, loc));
      prefixValid = b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::sgt, eff, i32(0));

      // 3. Across waves: each wave's total through LDS.
      int64_t waves = distinctWaves(layout, axis);
      if (waves > 1) {
        WaveExchange x = waveExchange(op, op.getSrcs(), axis, waves, lines, loc);
        Value waveC = x.waveC;
        Value weff = reverse ? Value(b_.create<LLVM::SubOp>(loc, i32(waves - 1), waveC)) : waveC;
        // The lane holding the wave's last element in scan order.
        Value lastLane = b_.create<LLVM::AddOp>(
            loc, b_.create<LLVM::SubOp>(loc, lane_, b_.create<LLVM::MulOp>(loc, laneC, i32(stride))),
            i32((reverse ? 0 : lanes - 1) * stride));
        // Every lane takes part in the shuffles; only owners store.
        SmallVector<SmallVector<Value>> totals(lines.size());
        for (size_t l = 0; l < lines.size(); ++l)
          for (size_t i = 0; i < n; ++i)
            totals[l].push_back(shuffle(incl[l][i], lastLane, loc));
        onlyOwners(op.getSrcs()[0].getType(), loc, [&] {
          for (size_t l = 0; l < lines.size(); ++l)
            for (size_t i = 0; i < n; ++i)
              exchangeStore(x, i, waveC, l, totals[l][i], loc);
        });
        barrier(loc);
        Value waveValid = b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::sgt, weff, i32(0));
        for (size_t l = 0; l < lines.size(); ++l) {
          auto loadWave = [&](int64_t j) {
            int64_t w = reverse ? waves - 1 - j : j;
            SmallVector<Value> v;
            for (size_t i = 0; i < n; ++i)
              v.push_back(exchangeLoad(x, i, w, l, incl[l][i].getType(), loc));
            return v;
          };
          SmallVector<Value> wacc = loadWave(0);
          for (int64_t j = 1; j < waves; ++j) {
            Value inPrefix = b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::slt, i32(j), weff);
            wacc = select(inPrefix, combine(op.getCombine(), wacc, loadWave(j)), wacc, loc);
          }
          SmallVector<Value> both = combine(op.getCombine(), wacc, prefix[l]);
          prefix[l] = select(prefixValid, select(waveValid, both, prefix[l], loc), wacc, loc);
        }
        prefixValid = b_.create<LLVM::OrOp>(loc, prefixValid, waveValid);
        barrier(loc);
      }
    }
    // 4. Every element takes the prefix of the threads before it.
    for (size_t l = 0; l < lines.size(); ++l)
      for (int64_t reg : lines[l])
        put(reg, select(prefixValid, combine(op.getCombine(), prefix[l], at(reg)), at(reg), loc));
    for (size_t i = 0; i < n; ++i)
      regs_[op.getResult(i)] = vals[i];
    return success();
  }

  // Layout conversions and shape changes: every thread writes what it holds
  // to LDS at the element's index, then reads what it needs.
  LogicalResult emitThroughLds(Operation *op) {
    Location loc = op->getLoc();
    if (auto convert = dyn_cast<ConvertLayoutOp>(op); convert && isRegisterRenaming(convert)) {
      regs_[convert.getResult()] = in(convert.getSrc()); // one register each, or equal layouts
      return success();
    }
    Type dstType = op->getResult(0).getType();
    Type elem = scalarType(dstType);
    int64_t bytes = ldsElementBytes(dstType);
    ArrayRef<int64_t> dstShape;
    if (auto t = dyn_cast<RankedTensorType>(dstType))
      dstShape = t.getShape();
    // Element index -> byte offset, with the padding ldsPaddedSlots counts.
    auto slotBytes = [&](Value index) {
      Value padded = b_.create<LLVM::AddOp>(loc, index, b_.create<LLVM::LShrOp>(loc, index, i32(5)));
      return Value(b_.create<LLVM::MulOp>(loc, padded, i32(bytes)));
    };
    auto writeTile = [&](Value src, llvm::function_ref<Value(ArrayRef<Value>)> index) {
      SmallVector<Value> regs = in(src);
      SmallVector<SmallVector<Value>> coords = registerCoords(src.getType(), loc);
      onlyOwners(src.getType(), loc, [&] {
        for (size_t r = 0; r < regs.size(); ++r)
          ldsStore(op, slotBytes(index(coords[r])), regs[r], loc);
      });
    };
    auto srcShape = [&](Value v) -> ArrayRef<int64_t> {
      if (auto t = dyn_cast<RankedTensorType>(v.getType()))
        return t.getShape();
      return {};
    };
    if (auto p = dyn_cast<PermuteOp>(op)) {
      ArrayRef<int32_t> order = p.getOrder();
      writeTile(p.getSrc(), [&](ArrayRef<Value> c) {
        SmallVector<Value> moved;
        for (int32_t d : order)
          moved.push_back(c[d]);
        return linearIndex(moved, dstShape, loc);
      });
    } else if (auto j = dyn_cast<JoinOp>(op)) {
      for (int half = 0; half < 2; ++half)
        writeTile(half ? j.getRhs() : j.getLhs(), [&](ArrayRef<Value> c) {
          Value lin = linearIndex(c, srcShape(j.getLhs()), loc);
          return Value(b_.create<LLVM::AddOp>(loc, b_.create<LLVM::MulOp>(loc, lin, i32(2)), i32(half)));
        });
    } else {
      Value src = op->getOperand(0);
      writeTile(src, [&](ArrayRef<Value> c) { return linearIndex(c, srcShape(src), loc); });
    }
    barrier(loc);
    SmallVector<SmallVector<Value>> coords = registerCoords(dstType, loc);
    SmallVector<Value> out;
    int64_t half = -1;
    if (auto split = dyn_cast<SplitOp>(op))
      half = split.getHalf();
    for (auto &c : coords) {
      Value lin = linearIndex(c, dstShape, loc);
      if (half >= 0)
        lin = b_.create<LLVM::AddOp>(loc, b_.create<LLVM::MulOp>(loc, lin, i32(2)), i32(half));
      out.push_back(ldsLoad(op, slotBytes(lin), elem, loc));
    }
    barrier(loc);
    regs_[op->getResult(0)] = out;
    return success();
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

  // Bools are bytes in memory (as in C++), i1 in registers.
  Type memoryType(Type elem) { return elem.isInteger(1) ? Type(b_.getI8Type()) : elem; }
  Value toMemory(Value v, Location loc) {
    if (!v.getType().isInteger(1))
      return v;
    return b_.create<LLVM::ZExtOp>(loc, b_.getI8Type(), v);
  }
  Value fromMemory(Value v, Type elem, Location loc) {
    if (!elem.isInteger(1))
      return v;
    return b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne, v,
                                   constant(b_.getI8Type(), b_.getI8IntegerAttr(0)));
  }

  // True in the one thread that stores each element of a tile of type `t`.
  // Other threads hold replicas (a tile smaller than the threads covering
  // it, or a slice along a dimension other threads spread over) and must not
  // store: on a GPU their stores would race with the owner's. Null when every
  // thread owns what it holds.
  Value ownerPredicate(Type t, Location loc) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type) // a scalar: every thread holds it, thread 0 stores it
      return b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, tid_, i32(0));
    RegisterLayout layout = getRegisterLayout(type);
    BlockedLayoutAttr root = layout.root;
    unsigned rootRank = root.getOrder().size();
    SmallVector<int64_t> lanesNeeded(rootRank, 1), wavesNeeded(rootRank, 1);
    for (unsigned d = 0; d < layout.dims.size(); ++d) {
      unsigned r = layout.dims[d].sourceDim;
      lanesNeeded[r] = distinctLanes(layout, d);
      wavesNeeded[r] = distinctWaves(layout, d);
    }
    Value owner;
    auto require = [&](Value coord, int64_t below) {
      Value c = b_.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ult, coord, i32(below));
      owner = owner ? Value(b_.create<LLVM::AndOp>(loc, owner, c)) : c;
    };
    for (unsigned r = 0; r < rootRank; ++r) {
      auto [laneC, waveC] = threadCoords(root, r, loc);
      if (lanesNeeded[r] < root.getThreadsPerWave()[r])
        require(laneC, lanesNeeded[r]);
      if (wavesNeeded[r] < root.getWavesPerBlock()[r])
        require(waveC, wavesNeeded[r]);
    }
    return owner;
  }

  // Runs `body` (stores to LDS) only in the threads that own the elements
  // of a tile of type `t`. Replicas may hold a different copy (one loaded
  // after an owner stored a new value over it); only owners publish theirs.
  // Whatever `body` reads must be computed before (it runs in a branch).
  void onlyOwners(Type t, Location loc, llvm::function_ref<void()> body) {
    Value owner = ownerPredicate(t, loc);
    if (!owner) {
      body();
      return;
    }
    predicated(owner, loc, {}, [&]() -> Value {
      body();
      return {};
    });
  }

  LogicalResult emitLoad(LoadOp l) {
    Location loc = l.getLoc();
    Type elem = elementTypeOf(l.getType());
    Type mem = memoryType(elem);
    int64_t vec = l.getVec();
    SmallVector<Value> ptrs = in(l.getPtr());
    SmallVector<Value> others = l.getOther() ? in(l.getOther()) : SmallVector<Value>();
    SmallVector<Value> masks = l.getMask() ? in(l.getMask()) : SmallVector<Value>();
    SmallVector<Value> out;
    unsigned elemBytes = std::max(1u, mem.getIntOrFloatBitWidth() / 8);
    Type accessType = vec == 1 ? mem : Type(VectorType::get({vec}, mem));
    for (size_t g = 0; g < ptrs.size(); g += vec) {
      Value ptr = ptrs[g];
      auto load = [&]() -> Value {
        return b_.create<LLVM::LoadOp>(loc, accessType, ptr, /*alignment=*/vec * elemBytes);
      };
      Value value;
      if (l.getMask()) {
        SmallVector<Value> other;
        for (int64_t i = 0; i < vec; ++i)
          other.push_back(l.getOther() ? toMemory(others[g + i], loc)
                                       : constant(mem, b_.getZeroAttr(mem)));
        value = predicated(masks[g], loc, vectorOf(other, mem, loc), load);
      } else {
        value = load();
      }
      for (int64_t i = 0; i < vec; ++i) {
        Value v = vec == 1 ? value : Value(b_.create<LLVM::ExtractElementOp>(loc, value, i32(i)));
        out.push_back(fromMemory(v, elem, loc));
      }
    }
    regs_[l.getResult()] = out;
    return success();
  }

  LogicalResult emitStore(StoreOp s) {
    Location loc = s.getLoc();
    Type mem = memoryType(pointeeOf(s.getPtr().getType()));
    int64_t vec = s.getVec();
    SmallVector<Value> ptrs = in(s.getPtr()), values = in(s.getValue());
    SmallVector<Value> masks = s.getMask() ? in(s.getMask()) : SmallVector<Value>();
    Value owner = ownerPredicate(s.getPtr().getType(), loc);
    unsigned elemBytes = std::max(1u, mem.getIntOrFloatBitWidth() / 8);
    for (size_t g = 0; g < ptrs.size(); g += vec) {
      Value ptr = ptrs[g];
      SmallVector<Value> group;
      for (Value v : ArrayRef<Value>(values).slice(g, vec))
        group.push_back(toMemory(v, loc));
      Value value = vectorOf(group, mem, loc);
      auto store = [&]() -> Value {
        b_.create<LLVM::StoreOp>(loc, value, ptr, /*alignment=*/vec * elemBytes);
        return {};
      };
      Value pred = s.getMask() ? masks[g] : Value();
      if (owner)
        pred = pred ? Value(b_.create<LLVM::AndOp>(loc, pred, owner)) : owner;
      if (pred)
        predicated(pred, loc, {}, store);
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
  bool failed_ = false;
  Value tid_, lane_, wave_, ldsBase_;
  llvm::DenseMap<Value, SmallVector<Value>> regs_;
  llvm::DenseMap<std::pair<Type, Attribute>, Value> constants_;
  llvm::DenseMap<std::pair<Attribute, unsigned>, std::pair<Value, Value>> threadCoords_;
};

struct ConvertToLLVMPass : mlir::tessel::impl::TesselConvertToLLVMBase<ConvertToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    if (failed(verifyEveryTileHasLayout(module)))
      return signalPassFailure();
    auto warpsAttr = module->getAttrOfType<IntegerAttr>("tessel.num_warps");
    auto waveAttr = module->getAttrOfType<IntegerAttr>("tessel.wave_size");
    if (!warpsAttr || !waveAttr) {
      module.emitError("tessel-convert-to-llvm needs tessel.num_warps and tessel.wave_size");
      return signalPassFailure();
    }
    unsigned numWarps = warpsAttr.getInt(), waveSize = waveAttr.getInt();
    unsigned blockSize = numWarps * waveSize;

    if (auto lds = module->getAttrOfType<IntegerAttr>("tessel.lds_bytes"); lds && lds.getInt() > 0) {
      OpBuilder b(module.getBodyRegion());
      auto type = LLVM::LLVMArrayType::get(b.getI8Type(), lds.getInt());
      b.create<LLVM::GlobalOp>(module.getLoc(), type, /*isConstant=*/false, LLVM::Linkage::Internal,
                               kLdsSymbol, Attribute(), /*alignment=*/16, /*addrSpace=*/3);
    }
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      for (Type t : func.getArgumentTypes())
        if (isa<RankedTensorType>(t)) {
          func.emitError("kernel arguments must be scalars or pointers, not tiles");
          return signalPassFailure();
        }
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
