#include "Utility.h"

#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tessel;

Value mlir::tessel::i32Value(OpBuilder &b, Location loc, int64_t v) {
  return b.create<LLVM::ConstantOp>(loc, b.getI32Type(), b.getI32IntegerAttr(v));
}

Value mlir::tessel::constantValue(OpBuilder &b, Location loc, Type type, TypedAttr value) {
  // An 8-bit float (LLVM has none) is its bits in an i8 register.
  if (auto f = dyn_cast<FloatAttr>(value); f && isa<FloatType>(type) && type.getIntOrFloatBitWidth() == 8)
    return b.create<LLVM::ConstantOp>(loc, b.getI8Type(),
                                      b.getIntegerAttr(b.getI8Type(), f.getValue().bitcastToAPInt()));
  return b.create<LLVM::ConstantOp>(loc, type, value);
}

bool mlir::tessel::areConsecutive(ArrayRef<unsigned> bits) {
  for (size_t i = 1; i < bits.size(); ++i)
    if (bits[i] != bits[i - 1] + 1)
      return false;
  return true;
}

Value mlir::tessel::idBitsValue(OpBuilder &b, Location loc, Value id, ArrayRef<unsigned> bits,
                                unsigned idWidth) {
  if (bits.empty())
    return i32Value(b, loc, 0);
  // Each run of consecutive bits is one shift and mask.
  Value sum;
  for (size_t j = 0; j < bits.size();) {
    size_t n = 1;
    while (j + n < bits.size() && bits[j + n] == bits[j] + n)
      ++n;
    Value v = bits[j] ? Value(b.create<LLVM::LShrOp>(loc, id, i32Value(b, loc, bits[j]))) : id;
    if (bits[j] + n < idWidth) // the id's top bits need no mask
      v = b.create<LLVM::AndOp>(loc, v, i32Value(b, loc, (int64_t(1) << n) - 1));
    if (j)
      v = b.create<LLVM::ShlOp>(loc, v, i32Value(b, loc, j));
    sum = sum ? Value(b.create<LLVM::OrOp>(loc, sum, v)) : v;
    j += n;
  }
  return sum;
}

// What the id bits add to coordinate `dim`: runs of consecutive bits whose
// bases double become one shift, mask and multiply each.
static Value idContribution(OpBuilder &b, Location loc, ArrayRef<LinearLayout::Basis> bases,
                            Value id, unsigned idWidth, unsigned dim) {
  Value sum;
  for (unsigned i = 0; i < bases.size();) {
    int64_t base = bases[i][dim];
    if (!base) {
      ++i;
      continue;
    }
    unsigned n = 1;
    while (i + n < bases.size() && bases[i + n][dim] == base << n)
      ++n;
    SmallVector<unsigned> run;
    for (unsigned k = 0; k < n; ++k)
      run.push_back(i + k);
    Value term = idBitsValue(b, loc, id, run, idWidth);
    if (base != 1)
      term = b.create<LLVM::MulOp>(loc, term, i32Value(b, loc, base));
    sum = sum ? Value(b.create<LLVM::AddOp>(loc, sum, term)) : term;
    i += n;
  }
  return sum;
}

SmallVector<Value> mlir::tessel::emitCoordinates(OpBuilder &b, Location loc,
                                                 const TargetInfo &target, RankedTensorType type,
                                                 unsigned dim) {
  return emitCoordinates(b, loc, target, getLinearLayout(type), dim);
}

SmallVector<Value> mlir::tessel::emitCoordinates(OpBuilder &b, Location loc, const TargetInfo &target,
                                                 const LinearLayout &layout, unsigned dim) {
  Value lane, wave;
  if (!layout.laneBitsAlong(dim).empty())
    lane = idContribution(b, loc, layout.laneBases(), target.laneId(b, loc), target.laneIdBits(),
                          dim);
  if (!layout.waveBitsAlong(dim).empty())
    wave = idContribution(b, loc, layout.waveBases(), target.waveId(b, loc), target.waveIdBits(),
                          dim);
  Value dyn = lane && wave ? Value(b.create<LLVM::AddOp>(loc, lane, wave)) : lane ? lane : wave;
  // Registers share their static coordinate along `dim` in runs: emit each once.
  llvm::DenseMap<int64_t, Value> byStatic;
  SmallVector<Value> out;
  for (int64_t r = 0; r < layout.numRegisters(); ++r) {
    int64_t s = layout.registerCoords(r)[dim];
    Value &c = byStatic[s];
    if (!c)
      c = !dyn ? i32Value(b, loc, s)
          : s  ? Value(b.create<LLVM::AddOp>(loc, dyn, i32Value(b, loc, s)))
               : dyn;
    out.push_back(c);
  }
  return out;
}

SmallVector<SmallVector<Value>> mlir::tessel::emitRegisterCoords(OpBuilder &b, Location loc,
                                                                 const TargetInfo &target,
                                                                 Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  if (!type)
    return {SmallVector<Value>()};
  return emitRegisterCoords(b, loc, target, getLinearLayout(type));
}

SmallVector<SmallVector<Value>> mlir::tessel::emitRegisterCoords(OpBuilder &b, Location loc,
                                                                 const TargetInfo &target,
                                                                 const LinearLayout &layout) {
  SmallVector<SmallVector<Value>> perDim;
  for (unsigned d = 0; d < layout.rank(); ++d)
    perDim.push_back(emitCoordinates(b, loc, target, layout, d));
  int64_t n = layout.numRegisters();
  SmallVector<SmallVector<Value>> out(n);
  for (int64_t r = 0; r < n; ++r)
    for (unsigned d = 0; d < layout.rank(); ++d)
      out[r].push_back(perDim[d][r]);
  return out;
}

Value mlir::tessel::emitLinearIndex(OpBuilder &b, Location loc, ArrayRef<Value> coords,
                                    ArrayRef<int64_t> shape) {
  Value idx = i32Value(b, loc, 0);
  for (size_t d = 0; d < coords.size(); ++d) {
    idx = b.create<LLVM::MulOp>(loc, idx, i32Value(b, loc, shape[d]));
    idx = b.create<LLVM::AddOp>(loc, idx, coords[d]);
  }
  return idx;
}

Value mlir::tessel::emitOwnerPredicate(OpBuilder &b, Location loc, const TargetInfo &target,
                                       Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  if (!type) // a scalar: every thread holds it, thread 0 stores it
    return b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, target.threadId(b, loc),
                                  i32Value(b, loc, 0));
  LinearLayout layout = getLinearLayout(type);
  // Id bits the layout does not use replicate too.
  auto replicas = [](ArrayRef<LinearLayout::Basis> bases, uint64_t mask, uint64_t count) {
    uint64_t unused = (count - 1) & ~((uint64_t(1) << bases.size()) - 1);
    return (mask | unused) & (count - 1);
  };
  uint64_t laneMask = replicas(layout.laneBases(), layout.laneReplicaMask(), target.waveSize());
  uint64_t waveMask = replicas(layout.waveBases(), layout.waveReplicaMask(), target.numWarps());
  Value owner;
  auto require = [&](Value id, uint64_t mask) {
    Value bits = b.create<LLVM::AndOp>(loc, id, i32Value(b, loc, mask));
    Value zero = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, bits, i32Value(b, loc, 0));
    owner = owner ? Value(b.create<LLVM::AndOp>(loc, owner, zero)) : zero;
  };
  if (laneMask)
    require(target.laneId(b, loc), laneMask);
  if (waveMask)
    require(target.waveId(b, loc), waveMask);
  return owner;
}

void mlir::tessel::onlyOwners(OpBuilder &b, Location loc, const TargetInfo &target, Type t,
                              function_ref<void()> body) {
  Value owner = emitOwnerPredicate(b, loc, target, t);
  if (!owner) {
    body();
    return;
  }
  predicated(b, loc, owner, {}, [&]() -> Value {
    body();
    return {};
  });
}

Value mlir::tessel::predicated(OpBuilder &b, Location loc, Value pred, Value otherwise,
                               function_ref<Value()> body) {
  SmallVector<Type, 1> results;
  if (otherwise)
    results.push_back(otherwise.getType());
  auto ifOp = b.create<scf::IfOp>(loc, results, pred, /*withElseRegion=*/bool(otherwise));
  OpBuilder::InsertionGuard guard(b);
  auto blockOf = [&](Region &r) -> Block * {
    if (r.empty())
      b.createBlock(&r);
    return &r.front();
  };
  Block *then = blockOf(ifOp.getThenRegion());
  if (then->empty() || !then->back().hasTrait<OpTrait::IsTerminator>()) {
    b.setInsertionPointToEnd(then);
    Value v = body();
    b.create<scf::YieldOp>(loc, otherwise ? ValueRange{v} : ValueRange{});
  } else {
    b.setInsertionPoint(then->getTerminator());
    body();
  }
  if (otherwise) {
    b.setInsertionPointToEnd(blockOf(ifOp.getElseRegion()));
    b.create<scf::YieldOp>(loc, ValueRange{otherwise});
    return ifOp.getResult(0);
  }
  return {};
}

namespace {
// Byte offset of the element at `coords` in a tile of `shape` staged by
// `plan` (LdsStaging::offset, emitted).
Value stagedOffset(OpBuilder &b, Location loc, Value base, ArrayRef<Value> coords, const LdsStaging &plan,
                   ArrayRef<int64_t> shape, int64_t elemBytes) {
  SmallVector<int64_t> strides = plan.strides(shape);
  const unsigned fastest = plan.order.front();
  Value sum = base;
  auto add = [&](Value v, int64_t scale) {
    sum = b.create<LLVM::AddOp>(loc, sum, b.create<LLVM::MulOp>(loc, v, i32Value(b, loc, scale)));
  };
  for (size_t d = 0; d < coords.size(); ++d)
    if (d != fastest || !plan.swizzled())
      add(coords[d], strides[d] * elemBytes);
  if (plan.swizzled()) {
    // ((column / unit) ^ ((row / perPhase) % maxPhase)) * unit + column % unit,
    // all powers of two: the phase's bits XOR into the chunk index's.
    Value column = coords[fastest], row = coords[plan.order[1]];
    Value phase = b.create<LLVM::AndOp>(
        loc, b.create<LLVM::LShrOp>(loc, row, i32Value(b, loc, llvm::Log2_64(plan.perPhase))),
        i32Value(b, loc, plan.maxPhase - 1));
    Value moved = b.create<LLVM::XOrOp>(loc, column,
                                        b.create<LLVM::ShlOp>(loc, phase, i32Value(b, loc, llvm::Log2_64(plan.unit))));
    add(moved, elemBytes);
  }
  return sum;
}
} // namespace

namespace {
// The LDS addresses of a thread's registers in a tile staged by `plan`.
// Without padding, over extents that are powers of two, an element's offset
// is linear over GF(2) in its coordinates' bits (fields of disjoint bits, a
// swizzle an XOR of some of them), and a coordinate is its register's
// static part XOR its lane's and wave's: offset(r) = offset(lane, wave) XOR
// offset(static r). The lane's part is computed once; a register's constant
// adds (as an instruction's offset) where its bits are ones the lane's part
// never sets, and XORs into a register per distinct rest. Otherwise each
// register's offset is emitted from its coordinates.
class StagedAddresses {
public:
  // `layout`: the registers whose addresses these are, when not the tile's
  // own (a transposed read's loading layout).
  StagedAddresses(OpBuilder &b, Location loc, const TargetInfo &target, RankedTensorType type, Value base,
                  const LdsStaging &plan, std::optional<LinearLayout> layout = std::nullopt)
      : b_(b), loc_(loc), type_(type), base_(base), plan_(plan),
        layout_(layout ? std::move(*layout) : getLinearLayout(type)), elemBytes_(ldsElementBytes(type)) {
    coords_ = emitRegisterCoords(b, loc, target, layout_);
    linear_ = plan.pad == 0 || plan.order.size() < 2;
    for (int64_t e : type.getShape())
      linear_ &= llvm::isPowerOf2_64(uint64_t(e));
    if (!linear_)
      return;
    for (auto bases : {layout_.laneBases(), layout_.waveBases()})
      for (const LinearLayout::Basis &basis : bases)
        laneBits_ |= bytes(basis);
    threadPart_ = threadOffset(coords_[0]);
  }

  Value at(int64_t reg) {
    if (!linear_)
      return stagedOffset(b_, loc_, base_, coords_[reg], plan_, type_.getShape(), elemBytes_);
    const int64_t c = bytes(layout_.registerCoords(reg));
    const int64_t overlap = c & laneBits_, free = c & ~laneBits_;
    Value &part = xored_[overlap];
    if (!part)
      part = overlap ? Value(b_.create<LLVM::XOrOp>(loc_, threadPart_, i32Value(b_, loc_, overlap))) : threadPart_;
    Value address = b_.create<LLVM::AddOp>(loc_, base_, part);
    return free ? Value(b_.create<LLVM::AddOp>(loc_, address, i32Value(b_, loc_, free))) : address;
  }

  // The address register `reg`'s access goes through (registers with one
  // key differ by an instruction's offset only); 0 where each register's
  // address is its own.
  int64_t registerKey(int64_t reg) const {
    return linear_ ? (bytes(layout_.registerCoords(reg)) & laneBits_) : 0;
  }

private:
  int64_t bytes(ArrayRef<int64_t> coords) const { return plan_.offset(coords, type_.getShape()) * elemBytes_; }

  // The thread's part, swizzled: (the unswizzled offset) XOR (the row's
  // phase in the chunk index's bits). The dimensions' terms are disjoint
  // fields (no padding, powers of two; unit * maxPhase fits in a row), so
  // it equals stagedOffset's sum; but an XOR is not an add, so LLVM keeps it
  // one register: an address made of an add, whose users are all memory
  // accesses, CodeGenPrepare sinks into every block that accesses LDS (the
  // backend takes register + register as a legal LDS address), keeping
  // both addends live there (gfx1100 B^T matmul: the loop's LDS stores'
  // address as two spilled registers).
  Value threadOffset(ArrayRef<Value> coords) {
    ArrayRef<int64_t> shape = type_.getShape();
    if (!plan_.swizzled())
      return stagedOffset(b_, loc_, i32Value(b_, loc_, 0), coords, plan_, shape, elemBytes_);
    SmallVector<int64_t> strides = plan_.strides(shape);
    Value sum;
    for (size_t d = 0; d < coords.size(); ++d) {
      Value term = b_.create<LLVM::MulOp>(loc_, coords[d], i32Value(b_, loc_, strides[d] * elemBytes_));
      sum = sum ? Value(b_.create<LLVM::AddOp>(loc_, sum, term)) : term;
    }
    Value row = coords[plan_.order[1]];
    Value phase = b_.create<LLVM::AndOp>(
        loc_, b_.create<LLVM::LShrOp>(loc_, row, i32Value(b_, loc_, llvm::Log2_64(plan_.perPhase))),
        i32Value(b_, loc_, plan_.maxPhase - 1));
    Value moved =
        b_.create<LLVM::ShlOp>(loc_, phase, i32Value(b_, loc_, llvm::Log2_64(plan_.unit * elemBytes_)));
    return b_.create<LLVM::XOrOp>(loc_, sum, moved);
  }

  OpBuilder &b_;
  Location loc_;
  RankedTensorType type_;
  Value base_;
  const LdsStaging &plan_;
  LinearLayout layout_;
  int64_t elemBytes_;
  SmallVector<SmallVector<Value>> coords_;
  bool linear_ = false;
  int64_t laneBits_ = 0;
  Value threadPart_;
  llvm::DenseMap<int64_t, Value> xored_;
};
} // namespace

void mlir::tessel::emitLdsTileWrite(OpBuilder &b, Location loc, const TargetInfo &target, RankedTensorType type,
                                    ValueRange regs, Value base, const LdsStaging &plan, ArrayAttr noAliasScopes) {
  StagedAddresses addresses(b, loc, target, type, base, plan);
  // Stores through one address register next to each other, so the backend
  // can pair them (ds_write2 / ds_write2st64): a 16-byte global load staged
  // as two swizzled 8-byte halves otherwise alternates between the halves'
  // registers, and a pair cannot be formed across a store LLVM cannot prove
  // disjoint. A thread's stores of one tile go to distinct elements, or
  // store one value twice where its registers replicate an element, so
  // their order is free.
  auto runs = ldsRuns(type, plan.order.front(), plan.writeVec);
  SmallVector<std::pair<int64_t, size_t>> order;
  for (size_t i = 0; i < runs.size(); ++i)
    order.push_back({addresses.registerKey(runs[i].front()), i});
  llvm::stable_sort(order, [](auto x, auto y) { return x.first < y.first; });
  onlyOwners(b, loc, target, type, [&] {
    for (auto [key, i] : order) {
      ArrayRef<int64_t> run = runs[i];
      SmallVector<Value> elems;
      for (int64_t r : run)
        elems.push_back(regs[r]);
      target.ldsStore(b, loc, addresses.at(run.front()), vectorOf(b, loc, elems, elems[0].getType()));
      if (noAliasScopes)
        cast<LLVM::StoreOp>(*std::prev(b.getInsertionPoint())).setNoAliasScopes(noAliasScopes);
    }
  });
}

SmallVector<Value> mlir::tessel::emitLdsTileRead(OpBuilder &b, Location loc, const TargetInfo &target,
                                                 RankedTensorType type, Type elem, Value base,
                                                 const LdsStaging &plan) {
  SmallVector<Value> out(registersPerThread(type));
  if (plan.transposedRead) {
    // Each read's addresses are the loading layout's; its element e fills
    // this thread's register r with the moved bits spelling e.
    std::optional<LdsTransposedRead> read = ldsTransposedRead(type, plan);
    assert(read && "a plan reads transposed what ldsTransposedRead cannot");
    StagedAddresses addresses(b, loc, target, type, base, plan, read->loading);
    uint64_t moved = 0;
    for (unsigned bit : read->moved)
      moved |= uint64_t(1) << bit;
    for (int64_t r = 0; r < int64_t(out.size()); ++r) {
      if (uint64_t(r) & moved)
        continue;
      Value v = target.ldsTransposedLoad(b, loc, addresses.at(r), elem, read->elems);
      for (int64_t e = 0; e < read->elems; ++e) {
        int64_t reg = r;
        for (size_t i = 0; i < read->moved.size(); ++i)
          if (e >> i & 1)
            reg |= int64_t(1) << read->moved[i];
        out[reg] = b.create<LLVM::ExtractElementOp>(loc, v, i32Value(b, loc, e));
      }
    }
    return out;
  }
  StagedAddresses addresses(b, loc, target, type, base, plan);
  Type access = plan.readVec == 1 ? elem : Type(VectorType::get({plan.readVec}, elem));
  for (ArrayRef<int64_t> run : ldsRuns(type, plan.order.front(), plan.readVec)) {
    Value v = target.ldsLoad(b, loc, addresses.at(run.front()), access);
    for (size_t e = 0; e < run.size(); ++e)
      out[run[e]] = plan.readVec == 1 ? v : b.create<LLVM::ExtractElementOp>(loc, v, i32Value(b, loc, e)).getResult();
  }
  return out;
}

namespace {
// The two-element vector `lo` and `hi` were extracted from, as its elements
// 0 and 1 in that order (a packed op's results); else null.
Value pairSource(Value lo, Value hi) {
  auto element = [](Value v, int64_t position) -> Value {
    auto extract = registerSource(v).getDefiningOp<LLVM::ExtractElementOp>();
    APInt index;
    if (!extract || !matchPattern(extract.getPosition(), m_ConstantInt(&index)) || index != position)
      return {};
    auto type = dyn_cast<VectorType>(extract.getVector().getType());
    return type && type.getNumElements() == 2 ? extract.getVector() : Value();
  };
  Value v = element(lo, 0);
  return v && v == element(hi, 1) ? v : Value();
}
} // namespace

Value mlir::tessel::vectorOf(OpBuilder &b, Location loc, ArrayRef<Value> elems, Type elemType) {
  if (elems.size() == 1)
    return elems[0];
  // Packed ops' pairs, a power of two of them, in order: the pairs joined
  // (shufflevector), not their elements extracted and inserted again.
  if (llvm::isPowerOf2_64(elems.size())) {
    SmallVector<Value> parts;
    for (size_t i = 0; i < elems.size(); i += 2) {
      Value pair = pairSource(elems[i], elems[i + 1]);
      if (!pair || cast<VectorType>(pair.getType()).getElementType() != elemType)
        break;
      parts.push_back(pair);
    }
    if (parts.size() == elems.size() / 2) {
      for (int32_t width = 2; parts.size() > 1; width *= 2) {
        SmallVector<int32_t> both(2 * width);
        std::iota(both.begin(), both.end(), 0);
        SmallVector<Value> joined;
        for (size_t i = 0; i < parts.size(); i += 2)
          joined.push_back(b.create<LLVM::ShuffleVectorOp>(loc, parts[i], parts[i + 1], both));
        parts = std::move(joined);
      }
      return parts.front();
    }
  }
  auto vecType = VectorType::get({int64_t(elems.size())}, elemType);
  Value v = b.create<LLVM::UndefOp>(loc, vecType);
  for (size_t i = 0; i < elems.size(); ++i)
    v = b.create<LLVM::InsertElementOp>(loc, v, elems[i], i32Value(b, loc, i));
  return v;
}

Type mlir::tessel::memoryType(OpBuilder &b, Type elem) {
  return elem.isInteger(1) ? Type(b.getI8Type()) : elem;
}

void mlir::tessel::emitGlobalLoad(OpBuilder &b, Location loc, Value ptr, Type mem, Type elem, int64_t vec,
                                  Value mask, ArrayRef<Value> others, SmallVectorImpl<Value> &out) {
  const int64_t elemBytes = std::max(1u, mem.getIntOrFloatBitWidth() / 8);
  Type accessType = vec == 1 ? mem : Type(VectorType::get({vec}, mem));
  auto load = [&]() -> Value { return b.create<LLVM::LoadOp>(loc, accessType, ptr, /*alignment=*/vec * elemBytes); };
  Value value;
  if (mask) {
    SmallVector<Value> other;
    for (int64_t i = 0; i < vec; ++i)
      other.push_back(others.empty() ? constantValue(b, loc, mem, b.getZeroAttr(mem)) : toMemory(b, loc, others[i]));
    value = predicated(b, loc, mask, vectorOf(b, loc, other, mem), load);
  } else {
    value = load();
  }
  appendElements(b, loc, value, vec, elem, out);
}

Value mlir::tessel::memoryVector(OpBuilder &b, Location loc, ArrayRef<Value> regs, Type mem) {
  SmallVector<Value> group;
  for (Value v : regs)
    group.push_back(toMemory(b, loc, v));
  return vectorOf(b, loc, group, mem);
}

void mlir::tessel::emitGlobalStore(OpBuilder &b, Location loc, Value ptr, Value value, Value pred) {
  Type mem = getElementTypeOrSelf(value.getType());
  const int64_t vec = isa<VectorType>(value.getType()) ? cast<VectorType>(value.getType()).getNumElements() : 1;
  const int64_t elemBytes = std::max(1u, mem.getIntOrFloatBitWidth() / 8);
  auto store = [&]() -> Value {
    b.create<LLVM::StoreOp>(loc, value, ptr, /*alignment=*/vec * elemBytes);
    return {};
  };
  if (pred)
    predicated(b, loc, pred, {}, store);
  else
    store();
}

Value mlir::tessel::bothOf(OpBuilder &b, Location loc, Value a, Value c) {
  if (!a || !c)
    return a ? a : c;
  return b.create<LLVM::AndOp>(loc, a, c);
}

Value mlir::tessel::toMemory(OpBuilder &b, Location loc, Value v) {
  if (!v.getType().isInteger(1))
    return v;
  return b.create<LLVM::ZExtOp>(loc, b.getI8Type(), v);
}

Value mlir::tessel::fromMemory(OpBuilder &b, Location loc, Value v, Type elem) {
  if (!elem.isInteger(1))
    return v;
  return b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne, v,
                                constantValue(b, loc, b.getI8Type(), b.getI8IntegerAttr(0)));
}

// Integer division with every input defined, the same on both executors
// (LLVM's sdiv/udiv are undefined for /0 and MIN/-1, and the optimizer would
// otherwise delete a user's guard): x/0 = -1 (all ones), x%0 = x,
// MIN/-1 = MIN, MIN%-1 = 0.
static Value emitDefinedDivision(OpBuilder &b, Operation *op, ValueRange operands) {
  if (!isa<arith::DivSIOp, arith::RemSIOp, arith::DivUIOp, arith::RemUIOp>(op))
    return {};
  bool isSigned = isa<arith::DivSIOp, arith::RemSIOp>(op);
  bool isDiv = isa<arith::DivSIOp, arith::DivUIOp>(op);
  Location loc = op->getLoc();
  Value x = operands[0], d = operands[1];
  auto type = cast<IntegerType>(x.getType());
  auto c = [&](const APInt &v) { return constantValue(b, loc, type, b.getIntegerAttr(type, v)); };
  unsigned w = type.getWidth();
  Value zero = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, d, c(APInt(w, 0)));
  Value bad = zero;
  if (isSigned) {
    Value isMin = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, x, c(APInt::getSignedMinValue(w)));
    Value isMinusOne = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, d, c(APInt::getAllOnes(w)));
    bad = b.create<LLVM::OrOp>(loc, zero, b.create<LLVM::AndOp>(loc, isMin, isMinusOne));
  }
  // With a divisor of 1, MIN/-1 already gives MIN and MIN%-1 gives 0.
  Value safe = b.create<LLVM::SelectOp>(loc, bad, c(APInt(w, 1)), d);
  Value q;
  if (isa<arith::DivSIOp>(op))
    q = b.create<LLVM::SDivOp>(loc, x, safe);
  else if (isa<arith::RemSIOp>(op))
    q = b.create<LLVM::SRemOp>(loc, x, safe);
  else if (isa<arith::DivUIOp>(op))
    q = b.create<LLVM::UDivOp>(loc, x, safe);
  else
    q = b.create<LLVM::URemOp>(loc, x, safe);
  return b.create<LLVM::SelectOp>(loc, zero, isDiv ? c(APInt::getAllOnes(w)) : x, q);
}

// Math functions AMDGPU has no accurate instruction for come from ocml: sin,
// cos, fmod and Triton's tl.math functions always; exp and log (whose f32
// forms LLVM expands around v_exp_f32 / v_log_f32) for f64 only.
std::string mlir::tessel::deviceLibraryFunction(Operation *op) {
  if (op->getNumResults() != 1)
    return {};
  auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(op->getResult(0).getType()));
  if (!floatType || !(floatType.isF32() || floatType.isF64()))
    return {};
  StringRef base = llvm::TypeSwitch<Operation *, StringRef>(op)
                       .Case<math::SinOp>([](auto) { return "sin"; })
                       .Case<math::CosOp>([](auto) { return "cos"; })
                       .Case<arith::RemFOp>([](auto) { return "fmod"; })
                       .Case<math::ErfOp>([](auto) { return "erf"; })
                       .Case<math::TanhOp>([](auto) { return "tanh"; })
                       .Case<math::Log1pOp>([](auto) { return "log1p"; })
                       .Case<math::ExpM1Op>([](auto) { return "expm1"; })
                       .Case<math::SinhOp>([](auto) { return "sinh"; })
                       .Case<math::CoshOp>([](auto) { return "cosh"; })
                       .Case<math::AsinOp>([](auto) { return "asin"; })
                       .Case<math::AcosOp>([](auto) { return "acos"; })
                       .Case<math::AtanOp>([](auto) { return "atan"; })
                       .Case<math::CbrtOp>([](auto) { return "cbrt"; })
                       .Case<math::PowFOp>([](auto) { return "pow"; })
                       .Case<math::Atan2Op>([](auto) { return "atan2"; })
                       .Default([&](Operation *) -> StringRef {
                         if (!floatType.isF64())
                           return "";
                         return llvm::TypeSwitch<Operation *, StringRef>(op)
                             .Case<math::ExpOp>([](auto) { return "exp"; })
                             .Case<math::Exp2Op>([](auto) { return "exp2"; })
                             .Case<math::LogOp>([](auto) { return "log"; })
                             .Case<math::Log2Op>([](auto) { return "log2"; })
                             .Default([](auto) { return ""; });
                       });
  if (base.empty())
    return {};
  return ("__ocml_" + base + "_f" + Twine(floatType.getWidth())).str();
}

static Value emitDeviceLibraryCall(OpBuilder &b, Operation *op, ValueRange operands, Type type) {
  std::string name = deviceLibraryFunction(op);
  if (name.empty() || !isa<FloatType>(type))
    return {};
  auto module = op->getParentOfType<ModuleOp>();
  auto fnType = LLVM::LLVMFunctionType::get(type, SmallVector<Type>(operands.size(), type));
  if (!module.lookupSymbol<LLVM::LLVMFuncOp>(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    b.create<LLVM::LLVMFuncOp>(module.getLoc(), name, fnType);
  }
  return b.create<LLVM::CallOp>(op->getLoc(), fnType, name, operands).getResult();
}

bool mlir::tessel::isHardwareExp(Operation *op) {
  if (!isa<math::ExpOp, math::Exp2Op>(op) || !getElementTypeOrSelf(op->getResult(0).getType()).isF32())
    return false;
  auto flags = dyn_cast<arith::ArithFastMathInterface>(op);
  return flags && arith::bitEnumContainsAll(flags.getFastMathFlagsAttr().getValue(), arith::FastMathFlags::afn);
}

// fast_exp / fast_exp2 (f32 math.exp / math.exp2 marked afn): v_exp_f32
// itself. LLVM keeps its scaling for denormal results even under afn; the
// AMDGPU intrinsic is the bare instruction (results below 2^-126 are 0).
static Value emitHardwareExp(OpBuilder &b, Operation *op, ValueRange operands) {
  if (!isHardwareExp(op))
    return {};
  Location loc = op->getLoc();
  Type f32 = b.getF32Type();
  Value x = operands[0];
  if (isa<math::ExpOp>(op)) // e^x = 2^(x log2(e))
    x = b.create<LLVM::FMulOp>(loc, x, b.create<LLVM::ConstantOp>(loc, f32, b.getF32FloatAttr(1.44269504088896340736f)));
  return b.create<ROCDL::ROCDLExp2>(loc, f32, x);
}

bool mlir::tessel::isHardwareRsqrt(Operation *op) {
  return isa<math::RsqrtOp>(op) && getElementTypeOrSelf(op->getResult(0).getType()).isF32();
}

// rsqrt on f32: v_rsq_f32 (1 ulp; a denormal input counts as 0), as the
// user guide allows; 1.0f / sqrt(x) is the precise spelling.
static Value emitHardwareRsqrt(OpBuilder &b, Operation *op, ValueRange operands) {
  if (!isHardwareRsqrt(op))
    return {};
  Type f32 = b.getF32Type();
  return b.create<LLVM::CallIntrinsicOp>(op->getLoc(), f32, b.getStringAttr("llvm.amdgcn.rsq"), operands)
      .getResult(0);
}

Value mlir::tessel::emitScalarOp(OpBuilder &b, Operation *op, ValueRange operands,
                                 Type resultType) {
  if (Value e = emitHardwareExp(b, op, operands))
    return e;
  if (Value r = emitHardwareRsqrt(b, op, operands))
    return r;
  if (Value call = emitDeviceLibraryCall(b, op, operands, resultType))
    return call;
  if (Value q = emitDefinedDivision(b, op, operands))
    return q;
  OperationState state(op->getLoc(), op->getName().getStringRef(), operands,
                       TypeRange{resultType}, op->getAttrs());
  return b.create(state)->getResult(0);
}

bool mlir::tessel::isPackableF32(Operation *op) {
  return op->getNumResults() == 1 && getElementTypeOrSelf(op->getResult(0).getType()).isF32() &&
         isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, math::FmaOp>(op);
}

Value mlir::tessel::packPair(OpBuilder &b, Location loc, Value lo, Value hi, PackedPairs *pairs) {
  lo = registerSource(lo);
  hi = registerSource(hi);
  if (Value v = pairSource(lo, hi))
    return v;
  // Elements i and i + 1 of one vector: that vector and i.
  auto neighbours = [&]() -> std::pair<Value, int32_t> {
    auto first = lo.getDefiningOp<LLVM::ExtractElementOp>();
    auto second = hi.getDefiningOp<LLVM::ExtractElementOp>();
    APInt i, j;
    if (!first || !second || first.getVector() != second.getVector() ||
        !matchPattern(first.getPosition(), m_ConstantInt(&i)) ||
        !matchPattern(second.getPosition(), m_ConstantInt(&j)) || j != i + 1)
      return {};
    return {first.getVector(), int32_t(i.getZExtValue())};
  };
  auto [vector, i] = neighbours();
  const bool kept = pairs && (lo == hi || vector);
  if (kept)
    if (auto found = pairs->made.find({lo, hi}); found != pairs->made.end())
      return found->second;
  OpBuilder::InsertionGuard guard(b);
  Value pair;
  if (vector) {
    if (kept)
      b.setInsertionPointAfterValue(vector);
    pair = b.create<LLVM::ShuffleVectorOp>(loc, vector, vector, ArrayRef<int32_t>{i, i + 1});
  } else {
    if (kept)
      b.setInsertionPointAfterValue(lo);
    pair = b.create<LLVM::PoisonOp>(loc, VectorType::get({2}, lo.getType()));
    pair = b.create<LLVM::InsertElementOp>(loc, pair, lo, i32Value(b, loc, 0));
    pair = b.create<LLVM::InsertElementOp>(loc, pair, hi, i32Value(b, loc, 1));
  }
  if (kept)
    pairs->made[{lo, hi}] = pair;
  return pair;
}

std::pair<Value, Value> mlir::tessel::emitPackedOp(OpBuilder &b, Operation *op, ValueRange operands) {
  assert(isPackableF32(op) && "an f32 add, subtract, multiply or fma");
  Location loc = op->getLoc();
  Value result = emitScalarOp(b, op, operands, operands[0].getType()); // the op itself, on vectors
  return {b.create<LLVM::ExtractElementOp>(loc, result, i32Value(b, loc, 0)),
          b.create<LLVM::ExtractElementOp>(loc, result, i32Value(b, loc, 1))};
}

bool mlir::tessel::carriesPairs(Operation *op) {
  if (auto compare = dyn_cast<arith::CmpFOp>(op))
    return getElementTypeOrSelf(compare.getLhs().getType()).isF32();
  if (auto select = dyn_cast<arith::SelectOp>(op))
    return getElementTypeOrSelf(select.getType()).isF32();
  return false;
}

Value mlir::tessel::existingPair(OpBuilder &b, Location loc, Value lo, Value hi, PackedPairs &pairs) {
  lo = registerSource(lo);
  hi = registerSource(hi);
  if (Value v = pairSource(lo, hi))
    return v;
  return lo == hi && matchPattern(lo, m_Constant()) ? packPair(b, loc, lo, hi, &pairs) : Value();
}

SmallVector<Value> mlir::tessel::emitScalarResults(OpBuilder &b, Operation *op, ValueRange operands,
                                                   Type resultType) {
  if (op->getNumResults() == 1)
    return {emitScalarOp(b, op, operands, resultType)};
  OperationState state(op->getLoc(), op->getName().getStringRef(), operands,
                       SmallVector<Type>(op->getNumResults(), resultType), op->getAttrs());
  return SmallVector<Value>(b.create(state)->getResults());
}

void mlir::tessel::appendElements(OpBuilder &b, Location loc, Value value, int64_t vec, Type elem,
                                  SmallVectorImpl<Value> &out) {
  for (int64_t i = 0; i < vec; ++i) {
    Value v = vec == 1 ? value : Value(b.create<LLVM::ExtractElementOp>(loc, value, i32Value(b, loc, i)));
    out.push_back(fromMemory(b, loc, v, elem));
  }
}

void mlir::tessel::replaceWithRegisters(ConversionPatternRewriter &rewriter, Operation *op,
                                        SmallVector<SmallVector<Value>> registers) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  for (auto [result, regs] : llvm::zip_equal(op->getResults(), registers)) {
    // The driver compares nothing for a result without uses, or whose
    // registers have one position already.
    if (regs.size() < 2 || result.use_empty())
      continue;
    Operation *owner = regs.front().getDefiningOp();
    if (owner && llvm::all_of(regs, [&](Value r) { return r.getDefiningOp() == owner; }))
      continue;
    auto identity = rewriter.create<UnrealizedConversionCastOp>(op->getLoc(), ValueRange(regs).getTypes(), regs);
    regs.assign(identity.getResults().begin(), identity.getResults().end());
  }
  rewriter.replaceOpWithMultiple(op, std::move(registers));
}

Value mlir::tessel::registerSource(Value v) {
  auto identity = v.getDefiningOp<UnrealizedConversionCastOp>();
  if (!identity || identity.getInputs().getTypes() != identity.getResultTypes())
    return v;
  return identity.getInputs()[cast<OpResult>(v).getResultNumber()];
}

void mlir::tessel::foldIdentityCasts(Operation *root) {
  root->walk([](UnrealizedConversionCastOp cast) {
    if (cast.getInputs().getTypes() != cast.getResultTypes())
      return;
    cast.replaceAllUsesWith(cast.getInputs());
    cast.erase();
  });
}
