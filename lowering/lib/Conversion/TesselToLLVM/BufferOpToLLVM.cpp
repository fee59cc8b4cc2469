// Loads and stores at a scalar base plus 32-bit offsets (tessel.buffer_load /
// buffer_store, formed by tessel-use-buffer-ops; buffer_load_to_local and its
// async_wait, formed by tessel-pipeline-loops), each thread's `vec`-element
// groups at their byte offsets, through one of two instruction forms:
// - a raw buffer resource over the base: a masked-off group's offset is
//   kMaskedOffset, past the resource's range, so the hardware reads 0 and
//   writes nothing there (no branch, no exec mask); an op's `bound` is the
//   resource's range itself (bound elements): groups at or past it need no
//   instruction at all;
// - a global instruction at base + zext(byte offset) (the scalar-base
//   `saddr` form: no 64-bit address per lane), for ops without `bound` whose
//   groups are all unpredicated, or that hold one group per thread: its
//   predicate is one exec-mask branch, which the backend merges with the
//   neighbouring accesses under the same mask, cheaper than a resource.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

#include "tessel/Dialect/Tessel/IR/DirectLds.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <functional>
#include <memory>
#include <tuple>

using namespace mlir;
using namespace mlir::tessel;

namespace {

// The resource's range in bytes, and the offset of a masked-off access:
// out of range under gfx9's rule (offset >= num_records) and gfx11's
// (offset + size > num_records). tessel-use-buffer-ops only forms buffer
// ops whose in-range accesses end at or below kNumRecords.
constexpr int64_t kNumRecords = (int64_t(1) << 31) - 2;
constexpr int64_t kMaskedOffset = int64_t(1) << 31;

// The resource over `base`: kNumRecords bytes, or with `bound` (elements,
// non-negative) that many elements of `elemBytes`, at most kNumRecords bytes
// (so the range never wraps 32 bits and a masked-off offset stays outside).
Value makeResource(OpBuilder &b, Location loc, Value base, StringRef arch, Value bound, int64_t elemBytes) {
  const ::tessel::TargetFacts &facts = ::tessel::requireTarget(arch.str());
  auto rsrcType = LLVM::LLVMPointerType::get(b.getContext(), 8);
  Value stride = b.create<LLVM::ConstantOp>(loc, b.getI16Type(), b.getI16IntegerAttr(0));
  Value records = b.create<LLVM::ConstantOp>(loc, b.getI64Type(), b.getI64IntegerAttr(kNumRecords));
  if (bound) {
    // min(bound, limit) * elemBytes, on the scalar unit: readfirstlane of the
    // (uniform) bound, or the backend fuses the pass's max(n, 0) with the min
    // into v_med3, a vector instruction, and then builds the resource in a
    // loop over the lanes' values.
    bound = b.create<ROCDL::ReadfirstlaneOp>(loc, bound.getType(), bound);
    const int64_t limit = kNumRecords / elemBytes;
    Value elements = b.create<LLVM::UMinOp>(loc, bound, i32Value(b, loc, int32_t(limit)));
    Value bytes = b.create<LLVM::MulOp>(loc, elements, i32Value(b, loc, int32_t(elemBytes)));
    records = b.create<LLVM::ZExtOp>(loc, b.getI64Type(), bytes);
  }
  Value flags = b.create<LLVM::ConstantOp>(loc, b.getI32Type(), b.getI32IntegerAttr(int32_t(facts.bufferResourceFlags)));
  return b.create<ROCDL::MakeBufferRsrcOp>(loc, rsrcType, base, stride, records, flags);
}

// What one conversion's buffer accesses share, made once and reused: the
// resource over a base and bound (its readfirstlane is convergent, so no
// CSE merges two), and an offset register times the element's bytes.
// Thousands of accesses of an unrolled trace to one argument built these
// per access, a third of the LLVM dialect module, which LLVM's first CSE
// then removed: the code object is the same either way.
class SharedBufferValues {
public:
  // Each is made where an access first needs it and reused by the later
  // accesses of the insertion block (where it comes before the insertion
  // point: the conversion goes through a block's ops in order and builds
  // at each), so the module is what LLVM's CSE made of the copies before,
  // in the same order.
  Value resource(OpBuilder &b, Location loc, Value base, StringRef arch, Value bound, int64_t elemBytes) {
    Value &made = resources_[{base, bound, elemBytes}];
    if (!made || made.getParentBlock() != b.getInsertionBlock())
      made = makeResource(b, loc, base, arch, bound, elemBytes);
    return made;
  }
  // x * elemBytes.
  Value scaled(OpBuilder &b, Location loc, Value x, int64_t elemBytes) {
    Value &made = scaled_[{x, elemBytes}];
    if (!made || made.getParentBlock() != b.getInsertionBlock())
      made = b.create<LLVM::MulOp>(loc, x, i32Value(b, loc, elemBytes));
    return made;
  }
  // The byte offset of element offset x without a predicate, made by
  // `make` once (a store of a loaded tile's offsets takes the load's).
  template <class Make>
  Value unpredicated(OpBuilder &b, Value x, int64_t elemBytes, Make make) {
    Value &made = unpredicated_[{x, elemBytes}];
    if (!made || made.getParentBlock() != b.getInsertionBlock())
      made = make();
    return made;
  }

private:
  DenseMap<std::tuple<Value, Value, int64_t>, Value> resources_;
  DenseMap<std::pair<Value, int64_t>, Value> scaled_, unpredicated_;
};

// How `access` (`bytes` of it) moves: f32 and up to four of them as they
// are (the intrinsics take them, and selection is the same: no bitcast each
// way per access, a seventh of a long load/store chain's LLVM IR), other
// dwords as i32 or a vector of them, or one i16 / i8.
Type transferType(OpBuilder &b, Type access, int64_t bytes) {
  if (getElementTypeOrSelf(access).isF32() && bytes <= 16)
    return access;
  if (bytes >= 4)
    return bytes == 4 ? Type(b.getI32Type()) : Type(VectorType::get({bytes / 4}, b.getI32Type()));
  return b.getIntegerType(unsigned(bytes * 8));
}

// Byte offset of a group, or kMaskedOffset where `pred` is false. Without
// `pred`, an offset x + C is x * elemBytes + C * elemBytes: the backend folds
// that constant into the instruction's immediate offset, and the groups of
// one thread share x's register.
Value byteOffset(OpBuilder &b, Location loc, Value elementOffset, int64_t elemBytes, Value pred,
                 SharedBufferValues &shared) {
  elementOffset = registerSource(elementOffset);
  if (!pred) {
    return shared.unpredicated(b, elementOffset, elemBytes, [&]() -> Value {
      if (auto add = elementOffset.getDefiningOp<LLVM::AddOp>()) {
        for (auto [x, c] : {std::pair(add.getLhs(), add.getRhs()), std::pair(add.getRhs(), add.getLhs())}) {
          APInt constant;
          if (!matchPattern(c, m_ConstantInt(&constant)))
            continue;
          Value bytes = shared.scaled(b, loc, x, elemBytes);
          return b.create<LLVM::AddOp>(loc, bytes, i32Value(b, loc, int32_t(constant.getSExtValue() * elemBytes)));
        }
      }
      return shared.scaled(b, loc, elementOffset, elemBytes);
    });
  }
  Value bytes = shared.scaled(b, loc, elementOffset, elemBytes);
  return b.create<LLVM::SelectOp>(loc, pred, bytes, i32Value(b, loc, int32_t(kMaskedOffset)));
}

// Whether `v` is a constant whose bits are all zero (+0.0, 0, null): what an
// out-of-range buffer read returns anyway.
bool isZeroBits(Value v) {
  Operation *def = registerSource(v).getDefiningOp();
  if (isa_and_nonnull<LLVM::ZeroOp>(def))
    return true;
  auto constant = dyn_cast_or_null<LLVM::ConstantOp>(def);
  if (!constant)
    return false;
  if (auto f = dyn_cast<FloatAttr>(constant.getValue()))
    return f.getValue().isPosZero();
  if (auto i = dyn_cast<IntegerAttr>(constant.getValue()))
    return i.getValue().isZero();
  return false;
}

// Whether an op takes global instructions rather than a buffer resource:
// without `bound` (which only a resource's range applies), when its groups
// need no predicate or a thread holds one group (one branch).
bool useGlobal(Value bound, bool predicated, size_t groupsPerThread) {
  return !bound && (!predicated || groupsPerThread == 1);
}

// An i32 value as a sum of non-constant terms (ordered by identity) and a
// constant, through llvm.add.
struct Sum {
  SmallVector<Value> terms;
  int64_t constant = 0;
};

void collectSum(Value v, Sum &sum) {
  v = registerSource(v);
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant))) {
    sum.constant += constant.getSExtValue();
    return;
  }
  if (auto add = v.getDefiningOp<LLVM::AddOp>()) {
    collectSum(add.getLhs(), sum);
    collectSum(add.getRhs(), sum);
    return;
  }
  sum.terms.push_back(v);
}

Sum sumOf(Value v) {
  Sum sum;
  collectSum(v, sum);
  llvm::sort(sum.terms, [](Value a, Value b) { return a.getAsOpaquePointer() < b.getAsOpaquePointer(); });
  return sum;
}

// Global addresses of an op's groups at base + offset * elemBytes, as
// base + zext(bytes): the op's offsets are below 2^31 / elemBytes wherever it
// accesses. With every group accessed (`allAccessed`), a group whose offset
// is the first group's plus a constant C (the same terms) is at the first
// group's address + C * elemBytes, which the backend folds into the
// instruction's immediate offset: both offsets are in range, so they differ
// by exactly C.
class GlobalAddresses {
public:
  GlobalAddresses(OpBuilder &b, Location loc, Value base, ArrayRef<Value> offsets, int64_t elemBytes,
                  bool allAccessed)
      : b_(b), loc_(loc), base_(base), elemBytes_(elemBytes) {
    if (allAccessed && !offsets.empty()) {
      first_ = sumOf(offsets.front());
      firstAddress_ = at(offsets.front());
    }
  }

  Value operator()(Value offset) {
    if (firstAddress_) {
      Sum sum = sumOf(offset);
      if (sum.terms == first_.terms) {
        const int64_t delta = (sum.constant - first_.constant) * elemBytes_;
        if (delta == 0)
          return firstAddress_;
        if (delta > 0 && delta <= kMaxImmediateOffset)
          return gep(firstAddress_, b_.create<LLVM::ConstantOp>(loc_, b_.getI64Type(), delta));
        // Past the immediate: one 32-bit add to the first group's bytes.
        return fromBytes(b_.create<LLVM::AddOp>(loc_, firstBytes_, i32Value(b_, loc_, delta)));
      }
    }
    return at(offset);
  }

private:
  // The largest immediate byte offset every target's global instructions
  // take (13-bit signed on gfx9 and gfx11).
  static constexpr int64_t kMaxImmediateOffset = 4095;

  Value at(Value offset) {
    Value bytes = b_.create<LLVM::MulOp>(loc_, offset, i32Value(b_, loc_, elemBytes_));
    if (!firstBytes_)
      firstBytes_ = bytes;
    return fromBytes(bytes);
  }
  Value fromBytes(Value bytes) { return gep(base_, b_.create<LLVM::ZExtOp>(loc_, b_.getI64Type(), bytes)); }
  Value gep(Value ptr, Value bytes) {
    return b_.create<LLVM::GEPOp>(loc_, ptr.getType(), b_.getI8Type(), ptr, ValueRange{bytes});
  }

  OpBuilder &b_;
  Location loc_;
  Value base_;
  int64_t elemBytes_;
  Sum first_;
  Value firstBytes_, firstAddress_;
};

struct BufferLoadOpConversion : TesselOpToLLVMPattern<BufferLoadOp> {
  BufferLoadOpConversion(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                         std::shared_ptr<SharedBufferValues> shared)
      : TesselOpToLLVMPattern(converter, target), shared(*shared), keep(std::move(shared)) {}
  SharedBufferValues &shared;
  std::shared_ptr<SharedBufferValues> keep; // alive while the patterns are
  LogicalResult matchAndRewrite(BufferLoadOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elem = converter.scalarType(op.getType());
    Type mem = memoryType(rewriter, elem);
    const int64_t vec = op.getVec();
    const int64_t elemBytes = std::max(1u, mem.getIntOrFloatBitWidth() / 8);
    Type accessType = vec == 1 ? mem : Type(VectorType::get({vec}, mem));
    Type transfer = transferType(rewriter, accessType, vec * elemBytes);
    SmallVector<Value> offsets = registersOf(adaptor.getOffsets());
    SmallVector<Value> masks = op.getMask() ? registersOf(adaptor.getMask()) : SmallVector<Value>();
    SmallVector<Value> others = op.getOther() ? registersOf(adaptor.getOther()) : SmallVector<Value>();
    Value bound = op.getBound() ? registersOf(adaptor.getBound()).front() : Value();
    Value base = registersOf(adaptor.getBase()).front();
    SmallVector<Value> out;
    if (useGlobal(bound, !masks.empty(), offsets.size() / vec)) {
      GlobalAddresses address(rewriter, loc, base, offsets, elemBytes, /*allAccessed=*/masks.empty());
      for (size_t g = 0; g < offsets.size(); g += vec)
        emitGlobalLoad(rewriter, loc, address(offsets[g]), mem, elem, vec, masks.empty() ? Value() : masks[g],
                       others.empty() ? ArrayRef<Value>() : ArrayRef<Value>(others).slice(g, vec), out);
      replaceWithRegisters(rewriter, op, {out});
      return success();
    }
    Value rsrc = shared.resource(rewriter, loc, base, target.arch(), bound, elemBytes);
    Value zero = i32Value(rewriter, loc, 0);
    for (size_t g = 0; g < offsets.size(); g += vec) {
      Value pred = masks.empty() ? Value() : masks[g];
      Value at = byteOffset(rewriter, loc, offsets[g], elemBytes, pred, shared);
      Value raw = rewriter.create<ROCDL::RawPtrBufferLoadOp>(loc, transfer, rsrc, at, zero, zero, ArrayAttr(),
                                                                ArrayAttr(), ArrayAttr());
      Value value = transfer == accessType ? raw : rewriter.create<LLVM::BitcastOp>(loc, accessType, raw);
      // Out of range reads 0: `other` needs a select only when given and
      // not +0 / 0 itself.
      bool otherIsZero = !others.empty() && llvm::all_of(ArrayRef<Value>(others).slice(g, vec), isZeroBits);
      if (pred && !others.empty() && !otherIsZero) {
        SmallVector<Value> other;
        for (int64_t i = 0; i < vec; ++i)
          other.push_back(toMemory(rewriter, loc, others[g + i]));
        value = rewriter.create<LLVM::SelectOp>(loc, pred, value, vectorOf(rewriter, loc, other, mem));
      }
      appendElements(rewriter, loc, value, vec, elem, out);
    }
    replaceWithRegisters(rewriter, op, {out});
    return success();
  }
};

struct BufferStoreOpConversion : TesselOpToLLVMPattern<BufferStoreOp> {
  BufferStoreOpConversion(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                          std::shared_ptr<SharedBufferValues> shared)
      : TesselOpToLLVMPattern(converter, target), shared(*shared), keep(std::move(shared)) {}
  SharedBufferValues &shared;
  std::shared_ptr<SharedBufferValues> keep; // alive while the patterns are
  LogicalResult matchAndRewrite(BufferStoreOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type mem = memoryType(rewriter, converter.scalarType(op.getValue().getType()));
    const int64_t vec = op.getVec();
    const int64_t elemBytes = std::max(1u, mem.getIntOrFloatBitWidth() / 8);
    Type transfer = transferType(rewriter, vec == 1 ? mem : Type(VectorType::get({vec}, mem)), vec * elemBytes);
    SmallVector<Value> offsets = registersOf(adaptor.getOffsets()), values = registersOf(adaptor.getValue());
    SmallVector<Value> masks = op.getMask() ? registersOf(adaptor.getMask()) : SmallVector<Value>();
    // An element several threads hold is written by its owner only.
    Value owner = emitOwnerPredicate(rewriter, loc, target, op.getValue().getType());
    Value bound = op.getBound() ? registersOf(adaptor.getBound()).front() : Value();
    Value base = registersOf(adaptor.getBase()).front();
    auto predicateOf = [&](size_t g) { return bothOf(rewriter, loc, masks.empty() ? Value() : masks[g], owner); };
    if (useGlobal(bound, !masks.empty() || owner, offsets.size() / vec)) {
      GlobalAddresses address(rewriter, loc, base, offsets, elemBytes,
                              /*allAccessed=*/masks.empty() && !owner);
      for (size_t g = 0; g < offsets.size(); g += vec)
        emitGlobalStore(rewriter, loc, address(offsets[g]),
                        memoryVector(rewriter, loc, ArrayRef<Value>(values).slice(g, vec), mem), predicateOf(g));
      rewriter.eraseOp(op);
      return success();
    }
    Value rsrc = shared.resource(rewriter, loc, base, target.arch(), bound, elemBytes);
    Value zero = i32Value(rewriter, loc, 0);
    for (size_t g = 0; g < offsets.size(); g += vec) {
      Value data = memoryVector(rewriter, loc, ArrayRef<Value>(values).slice(g, vec), mem);
      if (data.getType() != transfer)
        data = rewriter.create<LLVM::BitcastOp>(loc, transfer, data);
      Value pred = predicateOf(g);
      Value at = byteOffset(rewriter, loc, offsets[g], elemBytes, pred, shared);
      rewriter.create<ROCDL::RawPtrBufferStoreOp>(loc, data, rsrc, at, zero, zero, ArrayAttr(), ArrayAttr(),
                                                  ArrayAttr());
    }
    rewriter.eraseOp(op);
    return success();
  }
};

// `table`'s entries for the bits set in `id`, combined by XOR or by sum.
Value ofBits(OpBuilder &b, Location loc, Value id, ArrayRef<int64_t> table, bool xorThem) {
  Value acc = i32Value(b, loc, 0);
  for (auto [i, entry] : llvm::enumerate(table)) {
    if (!entry)
      continue;
    Value bit = b.create<LLVM::AndOp>(loc, b.create<LLVM::LShrOp>(loc, id, i32Value(b, loc, int64_t(i))),
                                      i32Value(b, loc, 1));
    Value term = b.create<LLVM::MulOp>(loc, bit, i32Value(b, loc, entry));
    acc = xorThem ? Value(b.create<LLVM::XOrOp>(loc, acc, term)) : Value(b.create<LLVM::AddOp>(loc, acc, term));
  }
  return acc;
}

// A register as another lane of the same wave computes it: its ops cloned
// with the thread id replaced, where it is a function of the thread id and
// of values every lane of a wave shares (constants, kernel arguments,
// workgroup ids, readfirstlane, a loop's induction variable) through pure
// integer ops only; anything else (loads, carried registers, shuffles) is
// not known to be the same in the other lane, so no clone. (A loop's
// induction variable is uniform: tile-level loops have scalar bounds, the
// program's, and the ops lowered inside them are not in loops of their own
// over lane values.)
class OtherLane {
public:
  // The register `v` of the lane whose thread id is `thread`, built at `b`;
  // null where `v` is not such a function.
  Value at(OpBuilder &b, Value v, Value thread) {
    if (kindOf(v) == Kind::Unknown)
      return {};
    if (thread != thread_) {
      clones_.clear();
      thread_ = thread;
    }
    return clone(b, v);
  }
  // Whether `at` can build `v`.
  bool known(Value v) { return kindOf(v) != Kind::Unknown; }

private:
  enum class Kind { Uniform, Thread, Unknown };

  static bool isPure(Operation *op) {
    return isa<LLVM::AddOp, LLVM::SubOp, LLVM::MulOp, LLVM::AndOp, LLVM::OrOp, LLVM::XOrOp, LLVM::ShlOp,
               LLVM::LShrOp, LLVM::AShrOp, LLVM::ICmpOp, LLVM::SelectOp, LLVM::ZExtOp, LLVM::SExtOp, LLVM::TruncOp,
               LLVM::UDivOp, LLVM::SDivOp, LLVM::URemOp, LLVM::SRemOp, LLVM::UMinOp, LLVM::UMaxOp, LLVM::SMinOp,
               LLVM::SMaxOp>(op);
  }

  Kind kindOf(Value v, int depth = 0) {
    v = registerSource(v);
    auto found = kinds_.find(v);
    if (found != kinds_.end())
      return found->second;
    Kind kind = Kind::Unknown;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *parent = arg.getOwner()->getParentOp();
      // A kernel's arguments (the same in every lane; not a device
      // function's, which a lane may call with its own).
      auto kernel = dyn_cast<LLVM::LLVMFuncOp>(parent);
      if ((kernel && arg.getOwner()->isEntryBlock() && kernel->hasAttr("rocdl.kernel")) ||
          (isa<scf::ForOp>(parent) && arg == cast<scf::ForOp>(parent).getInductionVar()))
        kind = Kind::Uniform;
    } else if (Operation *def = v.getDefiningOp()) {
      if (isa<ROCDL::ThreadIdXOp>(def))
        kind = Kind::Thread;
      else if (isa<LLVM::ConstantOp, ROCDL::ReadfirstlaneOp, ROCDL::BlockIdXOp, ROCDL::BlockIdYOp,
                   ROCDL::BlockIdZOp>(def))
        kind = Kind::Uniform;
      else if (isPure(def) && depth < 64) {
        kind = Kind::Uniform;
        for (Value operand : def->getOperands()) {
          Kind k = kindOf(operand, depth + 1);
          if (k == Kind::Unknown) {
            kind = Kind::Unknown;
            break;
          }
          if (k == Kind::Thread)
            kind = Kind::Thread;
        }
      }
    }
    kinds_[v] = kind;
    return kind;
  }

  Value clone(OpBuilder &b, Value v) {
    v = registerSource(v);
    if (kinds_.lookup(v) == Kind::Uniform)
      return v;
    if (Value made = clones_.lookup(v))
      return made;
    Operation *def = v.getDefiningOp();
    Value made;
    if (isa<ROCDL::ThreadIdXOp>(def)) {
      made = thread_;
    } else {
      IRMapping map;
      for (Value operand : def->getOperands())
        map.map(operand, clone(b, operand));
      made = b.clone(*def, map)->getResult(cast<OpResult>(v).getResultNumber());
    }
    clones_[v] = made;
    return made;
  }

  DenseMap<Value, Kind> kinds_;
  DenseMap<Value, Value> clones_;
  Value thread_;
};

// One load to LDS per group of `vec` registers: the wave's LDS pointer for
// the group, and the offset (and mask) of the element the slot's swizzle
// puts at the lane's chunk, taken from the lane that holds it (planDirectLds):
// offsets by ds_bpermute, masks made again as that lane makes them
// (OtherLane) or else from the wave's ballot. This assumes a wave of 64 (the
// targets with loads to LDS).
// Out of range (masked off, or past `bound`) writes 0, as a buffer load reads.
struct BufferLoadToLocalOpConversion : TesselOpToLLVMPattern<BufferLoadToLocalOp> {
  BufferLoadToLocalOpConversion(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                                std::shared_ptr<SharedBufferValues> shared)
      : TesselOpToLLVMPattern(converter, target), shared(*shared), keep(std::move(shared)) {}
  SharedBufferValues &shared;
  std::shared_ptr<SharedBufferValues> keep; // alive while the patterns are
  LogicalResult matchAndRewrite(BufferLoadToLocalOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LdsType lds = op.getBuffer().getType();
    const int64_t vec = op.getVec();
    std::optional<DirectLdsPlan> plan = planDirectLds(op.getOffsets().getType(), lds, vec);
    if (!plan)
      return rewriter.notifyMatchFailure(op, "the offsets' layout does not fill consecutive chunks of the slot");
    Type mem = memoryType(rewriter, converter.scalarType(lds.getElementType()));
    const int64_t elemBytes = std::max(1u, mem.getIntOrFloatBitWidth() / 8);
    SmallVector<Value> offsets = registersOf(adaptor.getOffsets());
    SmallVector<Value> masks = op.getMask() ? registersOf(adaptor.getMask()) : SmallVector<Value>();
    Value shift = op.getShift() ? registersOf(adaptor.getShift()).front() : Value();
    Value bound = op.getBound() ? registersOf(adaptor.getBound()).front() : Value();
    Value base = registersOf(adaptor.getBase()).front();
    Value rsrc = shared.resource(rewriter, loc, base, target.arch(), bound, elemBytes);
    Value slotBase = rewriter.create<LLVM::AddOp>(
        loc, adaptor.getBuffer().front(),
        rewriter.create<LLVM::MulOp>(loc, adaptor.getSlot().front(), i32Value(rewriter, loc, lds.slotBytes())));
    Value lane = target.laneId(rewriter, loc), wave = target.waveId(rewriter, loc);
    // The wave's LDS pointer (M0) on the scalar unit: the same for every lane,
    // which the backend does not know of the wave id (a VALU computation and
    // a readfirstlane per load otherwise); each group adds a constant. The
    // wave's part is read once, where the wave id is made (LLVM does not
    // hoist the convergent readfirstlane), and the slot's added on the
    // scalar unit: made in the loop from the carried slot, the pointer cost
    // a v_or and a v_readfirstlane a tile an iteration, and their hazards
    // an s_nop each (gfx950 library fp8 at 4 waves: 101.4 -> 98.4 mca cycles).
    Value waveBytes;
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointAfterValue(wave);
      Value waveStart = ofBits(rewriter, loc, wave, plan->waveStep, /*xorThem=*/false);
      waveBytes = rewriter.create<ROCDL::ReadfirstlaneOp>(
          loc, rewriter.getI32Type(),
          rewriter.create<LLVM::MulOp>(loc, waveStart, i32Value(rewriter, loc, elemBytes)));
    }
    Value waveBase = rewriter.create<LLVM::AddOp>(loc, slotBase, waveBytes);
    // The lane whose registers group g takes, from `lane` and `wave`.
    auto sourceLane = [&](OpBuilder &b, Value lane, Value wave, size_t g) -> Value {
      Value lanes = b.create<LLVM::XOrOp>(loc, ofBits(b, loc, lane, plan->laneXor, true),
                                          ofBits(b, loc, wave, plan->waveLaneXor, true));
      return b.create<LLVM::XOrOp>(loc, lanes, i32Value(b, loc, plan->groupLane[g]));
    };
    // An offset register from its source lane, moved where the register is
    // made (LLVM does not hoist a convergent shuffle out of the loop), with
    // ids of its own there (LLVM merges them with the kernel's).
    auto shuffled = [&](Value reg, size_t g) -> Value {
      OpBuilder::InsertionGuard guard(rewriter);
      reg = registerSource(reg);
      if (Operation *def = reg.getDefiningOp())
        rewriter.setInsertionPointAfter(def);
      else
        rewriter.setInsertionPointToStart(cast<BlockArgument>(reg).getOwner());
      auto range = LLVM::ConstantRangeAttr::get(rewriter.getContext(), 32, 0,
                                                int64_t(target.numWarps()) * target.waveSize());
      Value thread = rewriter.create<ROCDL::ThreadIdXOp>(loc, rewriter.getI32Type(), range);
      Value here = rewriter.create<LLVM::AndOp>(loc, thread, i32Value(rewriter, loc, target.waveSize() - 1));
      Value waveHere =
          rewriter.create<LLVM::LShrOp>(loc, thread, i32Value(rewriter, loc, llvm::Log2_32(target.waveSize())));
      return target.shuffle(rewriter, loc, reg, sourceLane(rewriter, here, waveHere, g));
    };
    Value zero = i32Value(rewriter, loc, 0);
    // A mask bit from the source lane: the wave's ballot (its compare's
    // scalar mask) shifted, no LDS round trip.
    Type i64 = rewriter.getI64Type();
    // The ballot of a conjunction is the AND of its conjuncts' ballots (the
    // same active lanes): each a compare's own lane mask, or made where its
    // bit is made (a loop-invariant row mask's before the loop: LLVM does not
    // hoist the convergent ballot), instead of one ballot of the AND, which
    // the backend builds as a select of 0 or 1 per lane and a compare.
    std::function<Value(Value)> ballotOf = [&](Value pred) -> Value {
      pred = registerSource(pred);
      if (auto both = pred.getDefiningOp<LLVM::AndOp>(); both && both.getType().isInteger(1))
        return rewriter.create<LLVM::AndOp>(loc, ballotOf(both.getLhs()), ballotOf(both.getRhs()));
      OpBuilder::InsertionGuard guard(rewriter);
      if (Operation *def = pred.getDefiningOp())
        rewriter.setInsertionPointAfter(def);
      else
        rewriter.setInsertionPointToStart(cast<BlockArgument>(pred).getOwner());
      return rewriter.create<ROCDL::BallotOp>(loc, i64, pred);
    };
    // The source lane's bit of a mask: recomputed as that lane computes it
    // where the mask is a function of the thread id (OtherLane: each lane
    // its own compare, as an unpermuted load; its loop-invariant part
    // hoisted by LLVM), conjunct by conjunct, else from the wave's ballot.
    OtherLane other;
    std::function<bool(Value)> recomputable = [&](Value pred) {
      if (other.known(pred))
        return true;
      auto both = registerSource(pred).getDefiningOp<LLVM::AndOp>();
      return both && both.getType().isInteger(1) && (recomputable(both.getLhs()) || recomputable(both.getRhs()));
    };
    std::function<Value(Value, size_t, Value)> bitOf = [&](Value pred, size_t g, Value thread) -> Value {
      if (Value own = other.at(rewriter, pred, thread))
        return own;
      if (auto both = registerSource(pred).getDefiningOp<LLVM::AndOp>();
          both && both.getType().isInteger(1) && recomputable(pred))
        return rewriter.create<LLVM::AndOp>(loc, bitOf(both.getLhs(), g, thread), bitOf(both.getRhs(), g, thread));
      Value ballot = ballotOf(pred);
      Value from = rewriter.create<LLVM::ZExtOp>(loc, i64, sourceLane(rewriter, lane, wave, g));
      Value bit = rewriter.create<LLVM::AndOp>(loc, rewriter.create<LLVM::LShrOp>(loc, ballot, from),
                                               rewriter.create<LLVM::ConstantOp>(loc, i64, 1));
      return rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne, bit,
                                           rewriter.create<LLVM::ConstantOp>(loc, i64, 0));
    };
    for (size_t g = 0; g < plan->groupStart.size(); ++g) {
      Value offset = offsets[g * vec];
      Value pred = masks.empty() ? Value() : masks[g * vec];
      if (plan->permutes) {
        offset = shuffled(offset, g);
        if (pred) {
          // The source lane's thread id: the same wave.
          Value thread = rewriter.create<LLVM::OrOp>(
              loc,
              rewriter.create<LLVM::AndOp>(loc, target.threadId(rewriter, loc),
                                           i32Value(rewriter, loc, ~int64_t(target.waveSize() - 1))),
              sourceLane(rewriter, lane, wave, g));
          pred = bitOf(pred, g, thread);
        }
      }
      if (shift)
        offset = rewriter.create<LLVM::AddOp>(loc, offset, shift);
      Value at = byteOffset(rewriter, loc, offset, elemBytes, pred, shared);
      Value ldsAt =
          rewriter.create<LLVM::AddOp>(loc, waveBase, i32Value(rewriter, loc, plan->groupStart[g] * elemBytes));
      rewriter.create<ROCDL::RawPtrBufferLoadLdsOp>(loc, rsrc, target.ldsAddress(rewriter, loc, ldsAt),
                                                    i32Value(rewriter, loc, vec * elemBytes), at, zero, zero, zero,
                                                    TargetInfo::asyncCopyScopes(rewriter.getContext()), ArrayAttr(),
                                                    ArrayAttr());
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct AsyncWaitOpConversion : TesselOpToLLVMPattern<AsyncWaitOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(AsyncWaitOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    target.waitVectorMemory(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tessel::populateBufferOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                  const TargetInfo &target, RewritePatternSet &patterns) {
  auto shared = std::make_shared<SharedBufferValues>(); // one conversion's (the patterns live as long)
  patterns.add<BufferLoadOpConversion, BufferStoreOpConversion, BufferLoadToLocalOpConversion>(converter, target,
                                                                                              shared);
  patterns.add<AsyncWaitOpConversion>(converter, target);
}
