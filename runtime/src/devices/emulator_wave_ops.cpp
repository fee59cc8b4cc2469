// The wave form's memory accesses, AMDGPU intrinsics and per-lane calls
// (emulator_wave.hpp). Memory moves in lane order: a load of every lane, then
// the next instruction (the GPU's order; the lockstep pass put a meeting
// wherever the fibers' lane-after-lane order could differ from it, so both
// give the same bytes). A scatter writes lanes from the lowest up (LLVM's
// masked.scatter orders overlapping writes so), as the fibers' last lane
// wins.
#include "emulator_retarget.hpp"
#include "emulator_runtime.hpp"

#include "tessel/core/error.hpp"
#include "emulator_wave_builder.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

namespace tessel::emu {

using llvm::CallInst;
using llvm::Value;

// A slot for lane values in the entry block, live from here (b's point) to
// the release() after its last use: the host's stack colouring then lets the
// slots of different accesses share the frame (a kernel makes one an access).
llvm::AllocaInst *WaveBuilder::newSlot(llvm::IRBuilder<> &b, llvm::Type *t) {
  llvm::BasicBlock *entry = allocas_->GetInsertBlock();
  allocas_->SetInsertPoint(entry, entry->begin());
  llvm::AllocaInst *slot = allocas_->Insert(new llvm::AllocaInst(t, 0, nullptr, layout_.getPrefTypeAlign(t), "lanes"));
  b.CreateLifetimeStart(slot);
  return slot;
}

void WaveBuilder::release(llvm::IRBuilder<> &b, std::initializer_list<llvm::AllocaInst *> slots) {
  for (llvm::AllocaInst *slot : slots)
    if (slot)
      b.CreateLifetimeEnd(slot);
}

// Lane l's element k at its pointer + k * elementBytes, lane by lane: <W x ptr> -> <W*n x ptr>.
Value *WaveBuilder::elementPointers(llvm::IRBuilder<> &b, Value *pointers, unsigned n, unsigned elementBytes) {
  if (n == 1)
    return pointers;
  std::vector<llvm::Constant *> offsets;
  for (unsigned i = 0; i < w_ * n; ++i)
    offsets.push_back(b.getInt64(uint64_t(i % n) * elementBytes));
  return b.CreateGEP(b.getInt8Ty(), repeatLanes(b, pointers, n), llvm::ConstantVector::get(offsets));
}

Value *WaveBuilder::accessMask(llvm::IRBuilder<> &b, llvm::BasicBlock *bb, unsigned n) {
  if (!maskOf_.count(bb))
    return nullptr;
  return repeatLanes(b, maskValue(b, bb), n);
}

// The sanitizer's checks of every active lane's access, in lane order
// (tessel_emu_check_lanes). The pointers go through memory the check may
// touch, so the accesses cannot move above it.
void WaveBuilder::checkLanes(llvm::IRBuilder<> &b, llvm::Instruction &access, Value *&pointers, Value *mask,
                             unsigned perLaneCount, uint64_t bytes, int kind) {
  const unsigned space = pointers->getType()->getScalarType()->getPointerAddressSpace();
  if (sanitize_ == SanitizeMode::Off || (space != 1 && space != 3))
    return;
  auto *type = llvm::cast<llvm::FixedVectorType>(pointers->getType());
  const unsigned count = type->getNumElements();
  llvm::AllocaInst *slots = newSlot(b, type);
  llvm::AllocaInst *active = newSlot(b, llvm::FixedVectorType::get(b.getInt8Ty(), count));
  b.CreateStore(pointers, slots);
  b.CreateStore(mask ? b.CreateZExt(mask, active->getAllocatedType())
                     : llvm::ConstantInt::get(active->getAllocatedType(), 1),
                active);
  auto *i32 = b.getInt32Ty();
  llvm::FunctionCallee check = m_.getOrInsertFunction(kLaneCheckName, b.getVoidTy(), i32, b.getPtrTy(),
                                                      b.getPtrTy(), i32, i32, b.getInt64Ty(), i32);
  auto *fn = llvm::cast<llvm::Function>(check.getCallee());
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->setMemoryEffects(llvm::MemoryEffects::inaccessibleOrArgMemOnly());
  llvm::CallInst *call = b.CreateCall(check, {b.getInt32(space), slots, active, b.getInt32(count),
                                              b.getInt32(perLaneCount), b.getInt64(bytes), b.getInt32(uint32_t(kind))});
  call->setDebugLoc(access.getDebugLoc());
  pointers = b.CreateLoad(type, slots);
  release(b, {slots, active});
}

void WaveBuilder::markLanesChecked(Value *access) {
  if (auto *inst = llvm::dyn_cast<llvm::Instruction>(access))
    inst->setMetadata(kLanesCheckedMetadata, llvm::MDNode::get(ctx_, {}));
}

// Whether every pointer is the first + its index * elementBytes. A masked-off
// lane's pointer may be poison (an inbounds GEP past its object): the test
// compares the pointers frozen, so the branch on it is defined, and
// `pointers` becomes the frozen vector, which the active lanes' pointers
// are unchanged in (they are not poison: the GPU accesses them).
Value *WaveBuilder::contiguous(llvm::IRBuilder<> &b, Value *&pointers, unsigned elementBytes) {
  const unsigned count = llvm::cast<llvm::FixedVectorType>(pointers->getType())->getNumElements();
  std::vector<llvm::Constant *> offsets;
  for (unsigned i = 0; i < count; ++i)
    offsets.push_back(b.getInt64(uint64_t(i) * elementBytes));
  pointers = b.CreateFreeze(pointers, "lanes.at");
  Value *first = b.CreateExtractElement(pointers, uint64_t(0));
  Value *expected = b.CreateGEP(b.getInt8Ty(), first, llvm::ConstantVector::get(offsets));
  return b.CreateAndReduce(b.CreateICmpEQ(pointers, expected));
}

Value *WaveBuilder::loadLanes(llvm::IRBuilder<> &b, llvm::Type *element, Value *pointers, Value *mask,
                              llvm::Align align) {
  const unsigned count = llvm::cast<llvm::FixedVectorType>(pointers->getType())->getNumElements();
  auto *type = llvm::FixedVectorType::get(element, count);
  const unsigned bytes = unsigned(layout_.getTypeStoreSize(element));
  llvm::BasicBlock *dense = llvm::BasicBlock::Create(ctx_, "lanes.dense", &f_);
  llvm::BasicBlock *gather = llvm::BasicBlock::Create(ctx_, "lanes.gather", &f_);
  llvm::BasicBlock *join = llvm::BasicBlock::Create(ctx_, "lanes.loaded", &f_);
  b.CreateCondBr(contiguous(b, pointers, bytes), dense, gather);
  b.SetInsertPoint(dense);
  Value *first = b.CreateExtractElement(pointers, uint64_t(0));
  Value *zero = llvm::Constant::getNullValue(type);
  Value *denseValue = mask ? static_cast<Value *>(b.CreateMaskedLoad(type, first, align, mask, zero))
                           : b.CreateAlignedLoad(type, first, align);
  markLanesChecked(denseValue);
  b.CreateBr(join);
  b.SetInsertPoint(gather);
  Value *all = mask ? mask : llvm::ConstantInt::getTrue(llvm::FixedVectorType::get(b.getInt1Ty(), count));
  Value *gathered = b.CreateMaskedGather(type, pointers, llvm::commonAlignment(align, bytes), all, zero);
  b.CreateBr(join);
  b.SetInsertPoint(join);
  llvm::PHINode *value = b.CreatePHI(type, 2);
  value->addIncoming(denseValue, dense);
  value->addIncoming(gathered, gather);
  return value;
}

void WaveBuilder::storeLanes(llvm::IRBuilder<> &b, Value *values, Value *pointers, Value *mask, llvm::Align align) {
  auto *type = llvm::cast<llvm::FixedVectorType>(values->getType());
  const unsigned bytes = unsigned(layout_.getTypeStoreSize(type->getElementType()));
  llvm::BasicBlock *dense = llvm::BasicBlock::Create(ctx_, "lanes.dense", &f_);
  llvm::BasicBlock *scatter = llvm::BasicBlock::Create(ctx_, "lanes.scatter", &f_);
  llvm::BasicBlock *join = llvm::BasicBlock::Create(ctx_, "lanes.stored", &f_);
  b.CreateCondBr(contiguous(b, pointers, bytes), dense, scatter);
  b.SetInsertPoint(dense);
  Value *first = b.CreateExtractElement(pointers, uint64_t(0));
  markLanesChecked(mask ? static_cast<Value *>(b.CreateMaskedStore(values, first, align, mask))
                        : b.CreateAlignedStore(values, first, align));
  b.CreateBr(join);
  b.SetInsertPoint(scatter);
  Value *all = mask ? mask : llvm::ConstantInt::getTrue(llvm::FixedVectorType::get(b.getInt1Ty(), type->getNumElements()));
  b.CreateMaskedScatter(values, pointers, llvm::commonAlignment(align, bytes), all);
  b.CreateBr(join);
  b.SetInsertPoint(join);
}

namespace {
// The element a lane access moves (half and bfloat as their bits).
llvm::Type *checkedElement(llvm::Type *t, const llvm::DataLayout &layout) {
  llvm::Type *e = t->getScalarType();
  if (e->isIntegerTy(1) || layout.getTypeStoreSizeInBits(e) != layout.getTypeSizeInBits(e))
    throw WaveUnsupported("a memory access of a type that is not whole bytes");
  return e->isHalfTy() || e->isBFloatTy() ? llvm::Type::getInt16Ty(e->getContext()) : e;
}
} // namespace

bool WaveBuilder::emitMemory(llvm::IRBuilder<> &b, llvm::Instruction &inst) {
  llvm::BasicBlock *bb = inst.getParent();
  const bool masked = maskOf_.count(bb) != 0;
  if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
    if (!isVarying(load))
      return false;
    llvm::Type *type = load->getType(), *element = checkedElement(type, layout_);
    const unsigned n = perLane(type), elementBytes = unsigned(layout_.getTypeStoreSize(element));
    Value *pointers = vec(b, load->getPointerOperand());
    Value *laneMask = accessMask(b, bb, 1);
    checkLanes(b, inst, pointers, laneMask, 1, layout_.getTypeStoreSize(type), int(AccessSite::Load));
    Value *loaded = loadLanes(b, element, elementPointers(b, pointers, n, elementBytes), accessMask(b, bb, n),
                              n == 1 ? load->getAlign() : llvm::commonAlignment(load->getAlign(), elementBytes));
    vectors_[load] = loaded;
    return true;
  }
  auto *store = llvm::cast<llvm::StoreInst>(&inst);
  if (!masked && !isVarying(store->getPointerOperand()) && !isVarying(store->getValueOperand()))
    return false;
  llvm::Type *type = store->getValueOperand()->getType(), *element = checkedElement(type, layout_);
  const unsigned n = perLane(type), elementBytes = unsigned(layout_.getTypeStoreSize(element));
  Value *pointers = vec(b, store->getPointerOperand());
  checkLanes(b, inst, pointers, accessMask(b, bb, 1), 1, layout_.getTypeStoreSize(type), int(AccessSite::Store));
  storeLanes(b, vec(b, store->getValueOperand()), elementPointers(b, pointers, n, elementBytes),
             accessMask(b, bb, n), n == 1 ? store->getAlign() : llvm::commonAlignment(store->getAlign(), elementBytes));
  return true;
}

bool WaveBuilder::emitAmdgcn(llvm::IRBuilder<> &b, CallInst &call) {
  llvm::BasicBlock *bb = call.getParent();
  const bool masked = maskOf_.count(bb) != 0;
  // The lanes execute together: a wave meeting orders nothing among them.
  // It stays as the point where the fibers would let the workgroup's other
  // waves run (a fiber per wave yields there), so the waves interleave as
  // the fibers' do and even a race between waves gives the same bytes.
  if (named(call, "wave.barrier"))
    return false;
  auto meet = [&] {
    if (!meeting_)
      meeting_ = llvm::Intrinsic::getOrInsertDeclaration(&m_, llvm::Intrinsic::amdgcn_wave_barrier);
    b.CreateCall(meeting_);
  };
  if (named(call, "workitem.id.x")) {
    // The wave's first thread (the runtime's work-item x) plus the lane.
    llvm::Instruction *first = call.clone();
    b.Insert(first);
    vectors_[&call] = b.CreateAdd(b.CreateVectorSplat(w_, first), laneIndices(b, 32), call.getName());
    return true;
  }
  if (named(call, "readfirstlane") || named(call, "readlane")) {
    Value *data = call.getArgOperand(0);
    if (!isVarying(data)) {
      scalars_[&call] = scalar(data);
      return true;
    }
    if (perLane(data->getType()) != 1)
      throw WaveUnsupported("a cross-lane read of a vector");
    meet();
    Value *lane = b.getInt32(0);
    if (named(call, "readlane")) {
      if (isVarying(call.getArgOperand(1)))
        throw WaveUnsupported("readlane of a lane number that differs between lanes");
      lane = b.CreateAnd(b.CreateZExtOrTrunc(scalar(call.getArgOperand(1)), b.getInt32Ty()), b.getInt32(w_ - 1));
    }
    Value *read = b.CreateExtractElement(vec(b, data), lane, call.getName());
    scalars_[&call] = isHalfLike(data->getType()) ? b.CreateBitCast(read, data->getType()) : read;
    return true;
  }
  if (named(call, "ballot")) {
    // Bit l is lane l's value (every lane of the wave is present).
    Value *bit = call.getArgOperand(0), *bits;
    meet();
    if (isVarying(bit))
      bits = b.CreateBitCast(vec(b, bit), b.getIntNTy(w_));
    else
      bits = b.CreateSelect(scalar(bit), llvm::ConstantInt::getAllOnesValue(b.getIntNTy(w_)), b.getIntN(w_, 0));
    scalars_[&call] = b.CreateZExtOrTrunc(bits, call.getType(), call.getName());
    return true;
  }
  if (named(call, "update.dpp") || named(call, "mov.dpp") || named(call, "permlanex16") || named(call, "ds.bpermute")) {
    meet();
    vectors_[&call] = crossLane(b, call);
    return true;
  }
  if (named(call, "mfma") || named(call, "wmma")) {
    meet();
    vectors_[&call] = emitMatrix(b, call);
    return true;
  }
  const bool load = named(call, "raw.ptr.buffer.load"), store = named(call, "raw.ptr.buffer.store");
  if (!load && !store) {
    if (!isVarying(&call))
      return false; // ids, barriers, resources, uniform math: once per wave
    vectors_[&call] = emitPerLane(b, call);
    return true;
  }
  bool anyVarying = masked;
  for (Value *arg : call.args())
    anyVarying |= isVarying(arg);
  if (!anyVarying)
    return false;
  // A raw buffer access as the ISA defines it (emulator_buffer.cpp): each
  // dword, or the one byte or short, checked on its own against num_records.
  llvm::CallInst *make;
  llvm::Type *type = load ? call.getType() : call.getArgOperand(0)->getType();
  unsigned count, size;
  try {
    make = &rawBufferResource(call);
    std::tie(count, size) = bufferComponents(layout_, type);
  } catch (const Error &e) {
    throw WaveUnsupported(e.what());
  }
  if (isVarying(make))
    throw WaveUnsupported("a buffer access on a resource that differs between lanes");
  Value *base = scalar(make->getArgOperand(0));
  Value *records = b.CreateVectorSplat(w_ * count, b.CreateZExtOrTrunc(scalar(make->getArgOperand(2)), b.getInt64Ty()));
  Value *offsets = repeatLanes(b, b.CreateZExt(vec(b, call.getArgOperand(load ? 1 : 2)), llvm::FixedVectorType::get(b.getInt64Ty(), w_)), count);
  std::vector<llvm::Constant *> parts;
  for (unsigned i = 0; i < w_ * count; ++i)
    parts.push_back(b.getInt64(uint64_t(i % count) * size));
  Value *at = b.CreateAdd(offsets, llvm::ConstantVector::get(parts));
  Value *inRange = bufferComponentInRange(b, f_, at, size, records);
  if (Value *m = accessMask(b, bb, count))
    inRange = b.CreateAnd(inRange, m);
  Value *pointers = b.CreateGEP(b.getInt8Ty(), base, at);
  llvm::Type *component = b.getIntNTy(size * 8);
  checkLanes(b, call, pointers, inRange, count, size, load ? int(AccessSite::Load) : int(AccessSite::Store));
  if (load) {
    Value *loaded = loadLanes(b, component, pointers, inRange, llvm::Align(1));
    vectors_[&call] = b.CreateBitCast(loaded, wide(type));
  } else {
    Value *data = b.CreateBitCast(vec(b, call.getArgOperand(0)), llvm::FixedVectorType::get(component, w_ * count));
    storeLanes(b, data, pointers, inRange, llvm::Align(1));
  }
  return true;
}

// DPP, permlanex16, ds_bpermute: every lane reads another lane's value, by
// the same source-lane rules the fibers' runtime uses.
Value *WaveBuilder::crossLane(llvm::IRBuilder<> &b, CallInst &call) {
  auto constant = [&](unsigned i) {
    auto *c = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(i));
    if (!c)
      throw WaveUnsupported("a cross-lane operation with a variable control");
    return uint32_t(c->getZExtValue());
  };
  if (named(call, "ds.bpermute")) {
    // Lane l reads lane (address / 4) mod W: through memory, as a gather.
    llvm::AllocaInst *slots = newSlot(b, wide(call.getType()));
    b.CreateStore(vec(b, call.getArgOperand(1)), slots);
    Value *lanes = b.CreateAnd(b.CreateLShr(vec(b, call.getArgOperand(0)), 2),
                               b.CreateVectorSplat(w_, b.getInt32(w_ - 1)));
    Value *from = b.CreateGEP(call.getType(), slots, lanes);
    Value *read = b.CreateMaskedGather(wide(call.getType()), from, llvm::Align(4),
                                       llvm::ConstantInt::getTrue(llvm::FixedVectorType::get(b.getInt1Ty(), w_)));
    release(b, {slots});
    return read;
  }
  const unsigned n = perLane(call.getType()), total = w_ * n;
  llvm::SmallVector<int> mask(total);
  std::vector<llvm::Constant *> zero(total, b.getFalse());
  Value *src, *old;
  if (named(call, "permlanex16")) {
    if (n != 1)
      throw WaveUnsupported("permlanex16 of a vector");
    const uint32_t sel1 = constant(2), sel2 = constant(3);
    old = vec(b, call.getArgOperand(0));
    src = vec(b, call.getArgOperand(1));
    for (unsigned l = 0; l < w_; ++l)
      mask[l] = int(permlaneX16SourceLane(l, sel1, sel2));
  } else {
    const bool update = call.arg_size() == 6;
    const unsigned first = update ? 1 : 0;
    const uint32_t ctrl = constant(first + 1), rowMask = constant(first + 2), bankMask = constant(first + 3),
                   bound = constant(first + 4);
    src = vec(b, call.getArgOperand(first));
    old = update ? vec(b, call.getArgOperand(0)) : src;
    for (unsigned l = 0; l < w_; ++l) {
      const bool enabled = ((rowMask >> (l / 16)) & 1) && ((bankMask >> ((l & 15) / 4)) & 1);
      const int64_t from = enabled ? dppSourceLane(l, ctrl, w_) : -1;
      if (from == -2)
        throw WaveUnsupported("an unknown DPP control");
      for (unsigned k = 0; k < n; ++k) {
        // A disabled lane keeps `old`; an out-of-bounds source gives 0 under bound_ctrl, else `old`.
        mask[l * n + k] = from >= 0 ? int(unsigned(from) * n + k) : int(total + l * n + k);
        if (enabled && from < 0 && bound)
          zero[l * n + k] = b.getTrue();
      }
    }
  }
  Value *r = b.CreateShuffleVector(src, old, mask, call.getName());
  return b.CreateSelect(llvm::ConstantVector::get(zero), llvm::Constant::getNullValue(r->getType()), r);
}

// An MFMA or WMMA: every lane's A, B and C registers side by side in memory
// (a lane-major vector is that already), one runtime call for the wave
// (emulator_matrix.cpp).
Value *WaveBuilder::emitMatrix(llvm::IRBuilder<> &b, CallInst &call) {
  MatrixOperands m;
  try {
    m = matrixOperands(call);
  } catch (const Error &e) {
    throw WaveUnsupported(e.what());
  }
  const auto [id, flags, a, bv, c, scaleA, scaleB] = m;
  if (matrixWaveSize(id) != w_)
    throw WaveUnsupported("a matrix instruction of another wave size");
  auto spill = [&](Value *v) {
    llvm::AllocaInst *slot = newSlot(b, wide(v->getType()));
    b.CreateStore(vec(b, v), slot);
    return slot;
  };
  auto bytes = [&](llvm::Type *t) { return b.getInt32(uint32_t(layout_.getTypeStoreSize(t->getScalarType()) * perLane(t))); };
  llvm::AllocaInst *pa = spill(a), *pb = spill(bv), *pc = spill(c), *pd = newSlot(b, wide(call.getType()));
  auto *i32 = b.getInt32Ty();
  // The scale registers (f8f6f4 with scales): every lane's, side by side.
  Value *none = llvm::ConstantPointerNull::get(b.getPtrTy());
  Value *psa = scaleA ? static_cast<Value *>(spill(scaleA)) : none, *psb = scaleB ? static_cast<Value *>(spill(scaleB)) : none;
  llvm::FunctionCallee fn =
      m_.getOrInsertFunction("tessel_emu_matrix_wave", b.getVoidTy(), i32, i32, b.getPtrTy(), b.getPtrTy(),
                             b.getPtrTy(), b.getPtrTy(), i32, i32, i32, i32, i32, b.getPtrTy(), b.getPtrTy());
  b.CreateCall(fn, {b.getInt32(uint32_t(id)), b.getInt32(flags), pa, pb, pc, pd, bytes(a->getType()),
                    bytes(bv->getType()), bytes(c->getType()), bytes(call.getType()), b.getInt32(w_), psa, psb});
  Value *d = b.CreateLoad(wide(call.getType()), pd);
  release(b, {pa, pb, pc, pd});
  for (Value *scale : {psa, psb})
    if (auto *slot = llvm::dyn_cast<llvm::AllocaInst>(scale))
      release(b, {slot});
  return d;
}

// An atomic read-modify-write: each active lane's in lane order, as the
// fibers' lanes do them.
Value *WaveBuilder::emitAtomic(llvm::IRBuilder<> &b, llvm::AtomicRMWInst &rmw) {
  llvm::Type *type = rmw.getType();
  Value *pointers = vec(b, rmw.getPointerOperand());
  Value *mask = accessMask(b, rmw.getParent(), 1);
  checkLanes(b, rmw, pointers, mask, 1, layout_.getTypeStoreSize(type), int(AccessSite::Atomic));
  llvm::AllocaInst *ptrSlots = newSlot(b, pointers->getType()), *valueSlots = newSlot(b, wide(type)),
                   *out = newSlot(b, wide(type));
  b.CreateStore(pointers, ptrSlots);
  b.CreateStore(vec(b, rmw.getValOperand()), valueSlots);
  b.CreateStore(llvm::Constant::getNullValue(wide(type)), out);
  llvm::AllocaInst *active = nullptr;
  if (mask) {
    active = newSlot(b, llvm::FixedVectorType::get(b.getInt8Ty(), w_));
    b.CreateStore(b.CreateZExt(mask, active->getAllocatedType()), active);
  }
  llvm::BasicBlock *before = b.GetInsertBlock();
  llvm::BasicBlock *head = llvm::BasicBlock::Create(ctx_, "lanes.atomic", &f_);
  llvm::BasicBlock *body = llvm::BasicBlock::Create(ctx_, "lanes.atomic.do", &f_);
  llvm::BasicBlock *latch = llvm::BasicBlock::Create(ctx_, "lanes.atomic.next", &f_);
  llvm::BasicBlock *after = llvm::BasicBlock::Create(ctx_, "lanes.atomic.done", &f_);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  llvm::PHINode *lane = b.CreatePHI(b.getInt32Ty(), 2);
  lane->addIncoming(b.getInt32(0), before);
  if (active)
    b.CreateCondBr(b.CreateICmpNE(b.CreateLoad(b.getInt8Ty(), b.CreateGEP(b.getInt8Ty(), active, lane)), b.getInt8(0)),
                   body, latch);
  else
    b.CreateBr(body);
  b.SetInsertPoint(body);
  llvm::Type *ptrType = pointers->getType()->getScalarType();
  Value *p = b.CreateLoad(ptrType, b.CreateGEP(ptrType, ptrSlots, lane));
  Value *v = b.CreateLoad(type, b.CreateGEP(type, valueSlots, lane));
  llvm::AtomicRMWInst *one = b.CreateAtomicRMW(rmw.getOperation(), p, v, rmw.getAlign(), rmw.getOrdering(),
                                               rmw.getSyncScopeID());
  one->setVolatile(rmw.isVolatile());
  b.CreateStore(one, b.CreateGEP(type, out, lane));
  b.CreateBr(latch);
  b.SetInsertPoint(latch);
  Value *next = b.CreateAdd(lane, b.getInt32(1));
  lane->addIncoming(next, latch);
  b.CreateCondBr(b.CreateICmpULT(next, b.getInt32(w_)), head, after);
  b.SetInsertPoint(after);
  Value *old = b.CreateLoad(wide(type), out);
  release(b, {ptrSlots, valueSlots, out, active});
  return old;
}

// An instruction with no vector form the host computes as it computes the
// scalar one (a call of libm, exp2, rsq, ...), once per lane in a loop: its
// lane values through memory.
Value *WaveBuilder::emitPerLane(llvm::IRBuilder<> &b, llvm::Instruction &inst) {
  // Booleans go through memory as bytes (a vector of i1 is stored as bits).
  auto inMemory = [&](llvm::Type *t) {
    llvm::Type *e = t->getScalarType();
    return e->isIntegerTy(1) ? llvm::Type::getInt8Ty(ctx_) : e;
  };
  auto memoryType = [&](llvm::Type *t) {
    llvm::Type *e = inMemory(t);
    return t->isVectorTy() ? static_cast<llvm::Type *>(llvm::FixedVectorType::get(e, perLane(t))) : e;
  };
  auto toMemory = [&](Value *v, llvm::Type *memory) { return v->getType()->isIntOrIntVectorTy(1) ? b.CreateZExt(v, memory) : v; };
  auto fromMemory = [&](Value *v, llvm::Type *type) { return type->isIntOrIntVectorTy(1) ? b.CreateTrunc(v, type) : v; };
  std::vector<llvm::AllocaInst *> slots(inst.getNumOperands(), nullptr);
  for (unsigned i = 0; i < inst.getNumOperands(); ++i)
    if (isVarying(inst.getOperand(i))) {
      llvm::Type *memory = wide(memoryType(inst.getOperand(i)->getType()));
      slots[i] = newSlot(b, memory);
      b.CreateStore(toMemory(vec(b, inst.getOperand(i)), memory), slots[i]);
    }
  llvm::Type *result = inst.getType();
  llvm::AllocaInst *out = result->isVoidTy() ? nullptr : newSlot(b, wide(memoryType(result)));
  llvm::BasicBlock *before = b.GetInsertBlock();
  llvm::BasicBlock *body = llvm::BasicBlock::Create(ctx_, "lanes.each", &f_);
  llvm::BasicBlock *after = llvm::BasicBlock::Create(ctx_, "lanes.done", &f_);
  b.CreateBr(body);
  b.SetInsertPoint(body);
  llvm::PHINode *lane = b.CreatePHI(b.getInt32Ty(), 2);
  lane->addIncoming(b.getInt32(0), before);
  auto laneSlot = [&](llvm::AllocaInst *slot, llvm::Type *type) {
    return b.CreateGEP(inMemory(type), slot, b.CreateMul(lane, b.getInt32(perLane(type))));
  };
  llvm::Instruction *one = inst.clone();
  for (unsigned i = 0; i < inst.getNumOperands(); ++i) {
    llvm::Type *type = inst.getOperand(i)->getType(), *memory = memoryType(type);
    one->setOperand(i, slots[i] ? fromMemory(b.CreateAlignedLoad(memory, laneSlot(slots[i], type),
                                                                 layout_.getABITypeAlign(inMemory(type))),
                                             type)
                                : scalar(inst.getOperand(i)));
  }
  b.Insert(one);
  if (out)
    b.CreateAlignedStore(toMemory(one, memoryType(result)), laneSlot(out, result),
                         layout_.getABITypeAlign(inMemory(result)));
  Value *next = b.CreateAdd(lane, b.getInt32(1));
  lane->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst *back = b.CreateCondBr(b.CreateICmpULT(next, b.getInt32(w_)), body, after);
  // The point is the scalar form: the host's optimizer must not vectorize
  // (or unroll and then vectorize) the loop back.
  llvm::Metadata *noVectors[] = {
      nullptr,
      llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.width"),
                               llvm::ConstantAsMetadata::get(b.getInt32(1))}),
      llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.interleave.count"),
                               llvm::ConstantAsMetadata::get(b.getInt32(1))}),
      llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")})};
  llvm::MDNode *loop = llvm::MDNode::getDistinct(ctx_, noVectors);
  loop->replaceOperandWith(0, loop);
  back->setMetadata(llvm::LLVMContext::MD_loop, loop);
  b.SetInsertPoint(after);
  Value *values = out ? fromMemory(b.CreateLoad(wide(memoryType(result)), out), wide(result)) : nullptr;
  for (llvm::AllocaInst *slot : slots)
    release(b, {slot});
  release(b, {out});
  return values;
}

} // namespace tessel::emu
