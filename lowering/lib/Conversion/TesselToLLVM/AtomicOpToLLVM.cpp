// Atomics on global memory: one LLVM atomicrmw / cmpxchg per element, run by
// the element's owner where its mask holds, with the op's ordering and
// AMDGPU sync scope, and barriers that extend a release or an acquire to the
// whole program; the AMDGPU backend picks the instruction
// (global_atomic_add_f32, a cmpswap loop where the target has none). Old
// values reach the element's other holders (a replicated layout, a scalar
// every thread holds) through the op's LDS scratch.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

LLVM::AtomicOrdering orderingOf(MemSem sem) {
  switch (sem) {
  case MemSem::relaxed: return LLVM::AtomicOrdering::monotonic;
  case MemSem::acquire: return LLVM::AtomicOrdering::acquire;
  case MemSem::release: return LLVM::AtomicOrdering::release;
  case MemSem::acq_rel: return LLVM::AtomicOrdering::acq_rel;
  }
  llvm_unreachable("MemSem");
}

// A failed compare-and-swap only reads: no release half.
LLVM::AtomicOrdering failureOrderingOf(MemSem sem) {
  switch (sem) {
  case MemSem::relaxed:
  case MemSem::release: return LLVM::AtomicOrdering::monotonic;
  case MemSem::acquire:
  case MemSem::acq_rel: return LLVM::AtomicOrdering::acquire;
  }
  llvm_unreachable("MemSem");
}

// AMDGPU's sync scope names (the system scope is LLVM's default, "").
StringRef syncScopeOf(MemScope scope) {
  switch (scope) {
  case MemScope::wavefront: return "wavefront";
  case MemScope::workgroup: return "workgroup";
  case MemScope::agent: return "agent";
  case MemScope::system: return "";
  }
  llvm_unreachable("MemScope");
}

LLVM::AtomicBinOp binOpOf(AtomicKind kind, Type elem) {
  bool isFloat = isa<FloatType>(elem);
  switch (kind) {
  case AtomicKind::add: return isFloat ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
  case AtomicKind::max: return isFloat ? LLVM::AtomicBinOp::fmax : LLVM::AtomicBinOp::max;
  case AtomicKind::min: return isFloat ? LLVM::AtomicBinOp::fmin : LLVM::AtomicBinOp::min;
  case AtomicKind::umax: return LLVM::AtomicBinOp::umax;
  case AtomicKind::umin: return LLVM::AtomicBinOp::umin;
  case AtomicKind::and_: return LLVM::AtomicBinOp::_and;
  case AtomicKind::or_: return LLVM::AtomicBinOp::_or;
  case AtomicKind::xor_: return LLVM::AtomicBinOp::_xor;
  case AtomicKind::xchg: return LLVM::AtomicBinOp::xchg;
  }
  llvm_unreachable("AtomicKind");
}

// Runs `atomic(first register)` per group of `vec` registers where the
// element's owner holds a set mask (any of the group's), and replaces `op`
// with the old values (the atomic's result, a vector for vec > 1), shared
// with the other holders through LDS when the op planned bytes for it.
template <class Op>
void lowerAtomic(Op op, ValueRange masks, ConversionPatternRewriter &rewriter, const TargetInfo &target,
                 const TesselToLLVMTypeConverter &converter, size_t registers, int64_t vec,
                 function_ref<Value(size_t)> atomic) {
  Location loc = op.getLoc();
  Type type = op.getType();
  Type elem = converter.scalarType(type);
  // The order is the program's, not only the owner thread's: a release
  // orders every thread's earlier accesses before the atomic (a barrier
  // first), an acquire every thread's later accesses after it (a barrier
  // after), as a lock taken and released by the whole program needs.
  const MemSem sem = op.getSem();
  const bool releases = sem == MemSem::release || sem == MemSem::acq_rel;
  const bool acquires = sem == MemSem::acquire || sem == MemSem::acq_rel;
  if (releases)
    target.barrier(rewriter, loc);
  Value owner = emitOwnerPredicate(rewriter, loc, target, type);
  Type access = vec == 1 ? elem : Type(VectorType::get({vec}, elem));
  Value zero = constantValue(rewriter, loc, access, rewriter.getZeroAttr(access));
  SmallVector<Value> old;
  for (size_t r = 0; r < registers; r += vec) {
    Value pred;
    for (int64_t i = 0; i < vec && !masks.empty(); ++i)
      pred = pred ? Value(rewriter.create<LLVM::OrOp>(loc, pred, masks[r + i])) : masks[r + i];
    pred = bothOf(rewriter, loc, pred, owner);
    Value got = pred ? predicated(rewriter, loc, pred, zero, [&] { return atomic(r); }) : atomic(r);
    for (int64_t i = 0; i < vec; ++i)
      old.push_back(vec == 1 ? got
                             : Value(rewriter.create<LLVM::ExtractElementOp>(loc, got, i32Value(rewriter, loc, i))));
  }
  if (op.getLdsScratchBytes() > 0) {
    // Owners write what they read, every holder reads it back.
    int64_t bytes = ldsElementBytes(type);
    ArrayRef<int64_t> shape;
    if (auto tile = dyn_cast<RankedTensorType>(type))
      shape = tile.getShape();
    SmallVector<SmallVector<Value>> coords = emitRegisterCoords(rewriter, loc, target, type);
    auto slot = [&](ArrayRef<Value> c) {
      Value index = emitLinearIndex(rewriter, loc, c, shape);
      Value padded = rewriter.create<LLVM::AddOp>(
          loc, index, rewriter.create<LLVM::LShrOp>(loc, index, i32Value(rewriter, loc, 5)));
      return rewriter.create<LLVM::MulOp>(loc, padded, i32Value(rewriter, loc, bytes)).getResult();
    };
    onlyOwners(rewriter, loc, target, type, [&] {
      for (size_t r = 0; r < registers; ++r)
        target.ldsStore(rewriter, loc, op, slot(coords[r]), old[r]);
    });
    // An acquire's barrier is this one, fencing all memory, not only LDS.
    if (acquires)
      target.barrier(rewriter, loc);
    else
      target.ldsBarrier(rewriter, loc);
    for (size_t r = 0; r < registers; ++r)
      old[r] = target.ldsLoad(rewriter, loc, op, slot(coords[r]), elem);
    target.endLdsScratch(rewriter, loc, op);
  } else if (acquires) {
    target.barrier(rewriter, loc);
  }
  replaceWithRegisters(rewriter, op, {old});
}

struct AtomicRMWOpConversion : TesselOpToLLVMPattern<AtomicRMWOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(AtomicRMWOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> ptrs = registersOf(adaptor.getPtr()), vals = registersOf(adaptor.getVal());
    SmallVector<Value> masks = op.getMask() ? registersOf(adaptor.getMask()) : SmallVector<Value>();
    Location loc = op.getLoc();
    Type elem = converter.scalarType(op.getType());
    LLVM::AtomicBinOp bin = binOpOf(op.getKind(), elem);
    int64_t vec = op.getVec();
    unsigned align = ldsElementBytes(op.getType()) * vec;
    // A packed add: a masked-off half adds -0.0, which leaves every value
    // (-0.0 included) as it was.
    Value negZero = vec > 1 ? constantValue(rewriter, loc, elem, rewriter.getFloatAttr(elem, -0.0)) : Value();
    lowerAtomic(op, masks, rewriter, target, converter, ptrs.size(), vec, [&](size_t r) -> Value {
      Value val = vals[r];
      if (vec > 1) {
        SmallVector<Value> parts;
        for (int64_t i = 0; i < vec; ++i)
          parts.push_back(masks.empty() ? vals[r + i]
                                        : Value(rewriter.create<LLVM::SelectOp>(loc, masks[r + i], vals[r + i], negZero)));
        val = vectorOf(rewriter, loc, parts, elem);
      }
      return rewriter.create<LLVM::AtomicRMWOp>(loc, bin, ptrs[r], val, orderingOf(op.getSem()),
                                                syncScopeOf(op.getScope()), align);
    });
    return success();
  }
};

struct AtomicCASOpConversion : TesselOpToLLVMPattern<AtomicCASOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(AtomicCASOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> ptrs = registersOf(adaptor.getPtr()), cmps = registersOf(adaptor.getCmp()),
                       vals = registersOf(adaptor.getVal());
    SmallVector<Value> masks = op.getMask() ? registersOf(adaptor.getMask()) : SmallVector<Value>();
    Type elem = converter.scalarType(op.getType());
    // cmpxchg compares integers: floats go as their bits.
    Type bits = rewriter.getIntegerType(elem.getIntOrFloatBitWidth());
    auto asBits = [&](Value v) { return isa<FloatType>(elem) ? Value(rewriter.create<LLVM::BitcastOp>(loc, bits, v)) : v; };
    unsigned align = ldsElementBytes(op.getType());
    lowerAtomic(op, masks, rewriter, target, converter, ptrs.size(), 1, [&](size_t r) -> Value {
      auto cas = rewriter.create<LLVM::AtomicCmpXchgOp>(loc, ptrs[r], asBits(cmps[r]), asBits(vals[r]),
                                                        orderingOf(op.getSem()), failureOrderingOf(op.getSem()),
                                                        syncScopeOf(op.getScope()), align);
      Value old = rewriter.create<LLVM::ExtractValueOp>(loc, cas, 0);
      return isa<FloatType>(elem) ? Value(rewriter.create<LLVM::BitcastOp>(loc, elem, old)) : old;
    });
    return success();
  }
};

// Bins in LDS: zeroed (each thread a share), a barrier, every owned value
// in range adds 1 to its bin, a barrier, each thread reads the counts its
// result registers hold, a barrier before the bytes are reused.
struct HistogramOpConversion : TesselOpToLLVMPattern<HistogramOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(HistogramOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const int64_t bins = op.getType().getNumElements();
    const int64_t threads = int64_t(target.waveSize()) * target.numWarps();
    Value tid = target.threadId(rewriter, loc);
    Value zero32 = i32Value(rewriter, loc, 0);
    for (int64_t first = 0; first < bins; first += threads) {
      Value bin = rewriter.create<LLVM::AddOp>(loc, tid, i32Value(rewriter, loc, first));
      auto clear = [&]() -> Value {
        target.ldsStore(rewriter, loc, op, rewriter.create<LLVM::MulOp>(loc, bin, i32Value(rewriter, loc, 4)), zero32);
        return {};
      };
      if (first + threads > bins)
        predicated(rewriter, loc,
                   rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::slt, bin, i32Value(rewriter, loc, bins)), {},
                   clear);
      else
        clear();
    }
    target.ldsBarrier(rewriter, loc);
    SmallVector<Value> values = registersOf(adaptor.getSrc());
    SmallVector<Value> masks = op.getMask() ? registersOf(adaptor.getMask()) : SmallVector<Value>();
    Value owner = emitOwnerPredicate(rewriter, loc, target, op.getSrc().getType());
    for (size_t r = 0; r < values.size(); ++r) {
      Value v = values[r];
      Type t = v.getType();
      Value inRange = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ult, v,
                                                    constantValue(rewriter, loc, t, rewriter.getIntegerAttr(t, bins)));
      if (!masks.empty())
        inRange = rewriter.create<LLVM::AndOp>(loc, inRange, masks[r]);
      if (owner)
        inRange = rewriter.create<LLVM::AndOp>(loc, inRange, owner);
      predicated(rewriter, loc, inRange, {}, [&]() -> Value {
        Value bin = t.isInteger(32) ? v : Value(rewriter.create<LLVM::TruncOp>(loc, rewriter.getI32Type(), v));
        target.ldsAtomicAdd(rewriter, loc, op, rewriter.create<LLVM::MulOp>(loc, bin, i32Value(rewriter, loc, 4)),
                            i32Value(rewriter, loc, 1));
        return {};
      });
    }
    target.ldsBarrier(rewriter, loc);
    SmallVector<Value> counts;
    for (SmallVector<Value> &c : emitRegisterCoords(rewriter, loc, target, op.getType()))
      counts.push_back(target.ldsLoad(rewriter, loc, op, rewriter.create<LLVM::MulOp>(loc, c[0], i32Value(rewriter, loc, 4)),
                                      rewriter.getI32Type()));
    target.endLdsScratch(rewriter, loc, op);
    replaceWithRegisters(rewriter, op, {counts});
    return success();
  }
};

} // namespace

void mlir::tessel::populateAtomicOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                  const TargetInfo &target, RewritePatternSet &patterns) {
  patterns.add<AtomicRMWOpConversion, AtomicCASOpConversion, HistogramOpConversion>(converter, target);
}
