// Buffer loads and stores on the emulator, written from AMD's ISA documents
// ("Buffer addressing" / "Range checking": CDNA3/CDNA4 ISA; RDNA3's
// OOB_SELECT), independently of the compiler's lowering. A raw buffer
// resource (stride 0) from llvm.amdgcn.make.buffer.rsrc(base, stride,
// num_records, flags); an access at byte offset `voffset` moves dwords (or
// one byte / short), each checked on its own ("range-check per component"):
//   gfx9 (gfx90a, gfx942, gfx950): out of range when its offset >= num_records;
//   gfx11 (OOB_SELECT = 3, raw):   out of range when offset + its size > num_records.
// An out-of-range component reads 0 and is not written. Offsets are unsigned
// 32-bit values. The sanitizer checks the in-range components like any access.
// A load to LDS (MUBUF with LDS = 1; gfx950 moves 12 or 16 bytes a lane, as
// well as 1, 2 or 4) writes no register: lane l's bytes go to LDS at
// M0 + inst_offset + l * size (tessel's offset is 0), where M0 holds the intrinsic's LDS pointer (a
// value the whole wave shares); an out-of-range dword writes 0 there.
#include "emulator_retarget.hpp"

#include "tessel/core/error.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

namespace tessel::emu {

namespace {

bool named(const llvm::CallInst &call, llvm::StringRef prefix) {
  const llvm::Function *callee = call.getCalledFunction();
  return callee && callee->getName().starts_with(prefix);
}

} // namespace

llvm::CallInst &rawBufferResource(llvm::CallInst &access) {
  const std::string name = access.getCalledFunction()->getName().str();
  // (rsrc, voffset, soffset, aux), (data, rsrc, voffset, soffset, aux) and
  // (rsrc, lds, size, voffset, soffset, offset, aux).
  const bool toLds = named(access, "llvm.amdgcn.raw.ptr.buffer.load.lds");
  const bool store = named(access, "llvm.amdgcn.raw.ptr.buffer.store");
  const unsigned rsrc = store ? 1 : 0, soffset = toLds ? 4 : store ? 3 : 2;
  auto *make = llvm::dyn_cast<llvm::CallInst>(access.getArgOperand(rsrc));
  if (!make || !named(*make, "llvm.amdgcn.make.buffer.rsrc"))
    throw Error("the emulator runs buffer accesses only on a resource made by llvm.amdgcn.make.buffer.rsrc in "
                "the same function (" + name + ")");
  auto *stride = llvm::dyn_cast<llvm::ConstantInt>(make->getArgOperand(1));
  if (!stride || !stride->isZero())
    throw Error("the emulator runs raw buffer accesses only (stride 0)");
  auto *c = llvm::dyn_cast<llvm::ConstantInt>(access.getArgOperand(soffset));
  if (!c || !c->isZero())
    throw Error("the emulator runs buffer accesses with soffset 0 only (" + name + ")");
  return *make;
}

std::pair<unsigned, unsigned> bufferComponents(const llvm::DataLayout &layout, llvm::Type *type) {
  const unsigned bytes = unsigned(layout.getTypeStoreSize(type));
  if (bytes >= 4) {
    if (bytes % 4)
      throw Error("the emulator's buffer accesses move whole dwords or one byte or short");
    return {bytes / 4, 4};
  }
  return {1, bytes};
}

llvm::Value *bufferComponentInRange(llvm::IRBuilderBase &b, const llvm::Function &fn, llvm::Value *at, unsigned size,
                                    llvm::Value *numRecords) {
  if (llvm::StringRef(kernelArch(fn)).starts_with("gfx11"))
    return b.CreateICmpULE(b.CreateAdd(at, llvm::ConstantInt::get(at->getType(), size)), numRecords);
  return b.CreateICmpULT(at, numRecords);
}

namespace {

struct Resource {
  llvm::Value *base;       // ptr
  llvm::Value *numRecords; // i64
};

Resource resourceOf(llvm::CallInst &access) {
  llvm::CallInst &make = rawBufferResource(access);
  llvm::IRBuilder<> b(&access);
  return {make.getArgOperand(0), b.CreateZExtOrTrunc(make.getArgOperand(2), b.getInt64Ty())};
}

// Byte offset of component k (of `size` bytes) of an access at `voffset`.
llvm::Value *componentAt(llvm::IRBuilder<> &b, llvm::Value *voffset, unsigned k, unsigned size) {
  return b.CreateAdd(b.CreateZExt(voffset, b.getInt64Ty()), b.getInt64(uint64_t(k) * size));
}

// Whether component k of an access at `voffset` is in range.
llvm::Value *inRange(llvm::IRBuilder<> &b, llvm::CallInst &access, llvm::Value *voffset, unsigned k, unsigned size,
                     llvm::Value *numRecords) {
  return bufferComponentInRange(b, *access.getFunction(), componentAt(b, voffset, k, size), size, numRecords);
}

} // namespace

// raw.ptr.buffer.load(rsrc, voffset, soffset, aux) -> T
void rewriteBufferLoad(llvm::CallInst &call, llvm::Module &module) {
  Resource r = resourceOf(call);
  auto [count, size] = bufferComponents(module.getDataLayout(), call.getType());
  llvm::IRBuilder<> b(&call);
  llvm::Type *component = b.getIntNTy(size * 8);
  llvm::Value *voffset = call.getArgOperand(1);
  llvm::Value *result = llvm::PoisonValue::get(llvm::FixedVectorType::get(component, count));
  for (unsigned k = 0; k < count; ++k) {
    llvm::Value *ok = inRange(b, call, voffset, k, size, r.numRecords);
    llvm::BasicBlock *before = b.GetInsertBlock();
    llvm::Instruction *then = llvm::SplitBlockAndInsertIfThen(ok, b.GetInsertPoint(), false);
    llvm::IRBuilder<> t(then);
    t.SetCurrentDebugLocation(call.getDebugLoc());
    llvm::Value *loaded =
        t.CreateAlignedLoad(component, t.CreateGEP(t.getInt8Ty(), r.base, componentAt(t, voffset, k, size)), llvm::Align(1));
    b.SetInsertPoint(&call);
    llvm::PHINode *value = b.CreatePHI(component, 2);
    value->addIncoming(loaded, then->getParent());
    value->addIncoming(llvm::ConstantInt::get(component, 0), before);
    result = b.CreateInsertElement(result, value, b.getInt32(k));
  }
  llvm::Value *bits = count == 1 ? b.CreateExtractElement(result, b.getInt32(0)) : result;
  call.replaceAllUsesWith(b.CreateBitCast(bits, call.getType()));
  call.eraseFromParent();
}

// raw.ptr.buffer.store(data, rsrc, voffset, soffset, aux)
void rewriteBufferStore(llvm::CallInst &call, llvm::Module &module) {
  Resource r = resourceOf(call);
  llvm::Value *data = call.getArgOperand(0);
  auto [count, size] = bufferComponents(module.getDataLayout(), data->getType());
  llvm::IRBuilder<> b(&call);
  llvm::Type *component = b.getIntNTy(size * 8);
  llvm::Value *parts = b.CreateBitCast(data, count == 1 ? component : llvm::FixedVectorType::get(component, count));
  llvm::Value *voffset = call.getArgOperand(2);
  for (unsigned k = 0; k < count; ++k) {
    llvm::Value *part = count == 1 ? parts : b.CreateExtractElement(parts, b.getInt32(k));
    llvm::Value *ok = inRange(b, call, voffset, k, size, r.numRecords);
    llvm::Instruction *then = llvm::SplitBlockAndInsertIfThen(ok, b.GetInsertPoint(), false);
    llvm::IRBuilder<> t(then);
    t.SetCurrentDebugLocation(call.getDebugLoc());
    t.CreateAlignedStore(part, t.CreateGEP(t.getInt8Ty(), r.base, componentAt(t, voffset, k, size)), llvm::Align(1));
    b.SetInsertPoint(&call);
  }
  call.eraseFromParent();
}

// raw.ptr.buffer.load.lds(rsrc, lds, size, voffset, soffset, offset, aux).
// The lane is workitem x mod the wave size (tessel's workgroups are 1-D).
void rewriteBufferLoadToLds(llvm::CallInst &call, llvm::Module &module) {
  Resource r = resourceOf(call);
  const bool gfx11 = llvm::StringRef(kernelArch(*call.getFunction())).starts_with("gfx11");
  auto *sizeArg = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(2));
  auto *immArg = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(5));
  const uint64_t size = sizeArg ? sizeArg->getZExtValue() : 0;
  // (The instruction offset would move the LDS address too; tessel puts
  // all of it in the LDS pointer and voffset, and the emulator asks the same.)
  if (!immArg || !immArg->isZero() || !(size == 1 || size == 2 || size == 4 || size == 12 || size == 16))
    throw Error("the emulator runs buffer loads to LDS of 1, 2, 4, 12 or 16 bytes with instruction offset 0 (" +
                call.getCalledFunction()->getName().str() + ")");
  const unsigned count = size >= 4 ? unsigned(size / 4) : 1, component = size >= 4 ? 4 : unsigned(size);
  llvm::IRBuilder<> b(&call);
  llvm::Type *type = b.getIntNTy(component * 8);
  // The runtime's own: the workitem intrinsics were rewritten before this.
  auto workitem = module.getOrInsertFunction("tessel_emu_workitem_id_x", b.getInt32Ty());
  llvm::Value *lane = b.CreateURem(b.CreateCall(workitem), b.getInt32(gfx11 ? 32 : 64));
  llvm::Value *lds = b.CreateGEP(b.getInt8Ty(), call.getArgOperand(1), b.CreateMul(lane, b.getInt32(uint32_t(size))));
  llvm::Value *voffset = call.getArgOperand(3);
  for (unsigned k = 0; k < count; ++k) {
    llvm::Value *ok = inRange(b, call, voffset, k, component, r.numRecords);
    llvm::BasicBlock *before = b.GetInsertBlock();
    llvm::Instruction *then = llvm::SplitBlockAndInsertIfThen(ok, b.GetInsertPoint(), false);
    llvm::IRBuilder<> t(then);
    t.SetCurrentDebugLocation(call.getDebugLoc());
    llvm::Value *loaded =
        t.CreateAlignedLoad(type, t.CreateGEP(t.getInt8Ty(), r.base, componentAt(t, voffset, k, component)), llvm::Align(1));
    b.SetInsertPoint(&call);
    llvm::PHINode *value = b.CreatePHI(type, 2);
    value->addIncoming(loaded, then->getParent());
    value->addIncoming(llvm::ConstantInt::get(type, 0), before);
    b.CreateAlignedStore(value, b.CreateConstGEP1_32(b.getInt8Ty(), lds, k * component), llvm::Align(1));
  }
  call.eraseFromParent();
}

// make.buffer.rsrc: its users were rewritten above; nothing else may use it.
void rewriteBufferResource(llvm::CallInst &call, llvm::Module &) {
  if (!call.use_empty())
    throw Error("the emulator runs a buffer resource only as the operand of buffer loads and stores");
  call.eraseFromParent();
}

} // namespace tessel::emu
