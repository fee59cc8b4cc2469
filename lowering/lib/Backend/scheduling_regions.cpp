// Scheduling boundaries in long basic blocks (boundSchedulingRegions in
// amdgpu_codegen.hpp).
#include "tessel/lowering/amdgpu_codegen.hpp"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

#include <string>
#include <vector>

namespace tessel {

namespace {

// A boundary already: sched.barrier(0) lets nothing cross it.
bool isBoundary(const llvm::Instruction &inst) {
  auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  if (!call || call->getIntrinsicID() != llvm::Intrinsic::amdgcn_sched_barrier)
    return false;
  auto *mask = llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(0));
  return mask && mask->isZero();
}

// PHIs and the terminator are not scheduled with the block's body.
bool isScheduled(const llvm::Instruction &inst) { return !llvm::isa<llvm::PHINode>(inst) && !inst.isTerminator(); }

// The block's scheduled instructions, when there are more than kLongBlock; else 0.
unsigned longBlockLength(const llvm::BasicBlock &block) {
  unsigned length = 0;
  for (const llvm::Instruction &inst : block)
    length += isScheduled(inst);
  return length > kLongBlock ? length : 0;
}

// An access to memory through a pointer (global, buffer, LDS, scratch):
// what the machine scheduler orders against other accesses one pair at a
// time. A load, store or atomic, or a call that may read or write memory and
// takes a pointer (raw buffer loads and stores take their resource). The
// intrinsics that take none but may touch memory by their declaration (waits,
// barriers, sched.barrier) order everything around them at once, and inline
// assembly does not count.
bool accessesMemory(const llvm::Instruction &inst) {
  if (llvm::isa<llvm::LoadInst, llvm::StoreInst, llvm::AtomicRMWInst, llvm::AtomicCmpXchgInst>(inst))
    return true;
  auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
  return call && !call->isInlineAsm() && call->mayReadOrWriteMemory() &&
         llvm::any_of(call->args(), [](const llvm::Use &arg) { return arg->getType()->isPointerTy(); });
}

} // namespace

unsigned boundSchedulingRegions(llvm::Module &module) {
  unsigned inserted = 0;
  for (llvm::Function &function : module) {
    for (llvm::BasicBlock &block : function) {
      const unsigned length = longBlockLength(block);
      if (!length)
        continue;
      unsigned accesses = 0;
      for (const llvm::Instruction &inst : block)
        accesses += accessesMemory(inst);
      std::vector<llvm::Instruction *> after;
      unsigned seen = 0, accessesSeen = 0, sinceBoundary = 0, accessesSinceBoundary = 0;
      for (llvm::Instruction &inst : block) {
        if (!isScheduled(inst))
          continue;
        ++seen;
        if (isBoundary(inst)) {
          sinceBoundary = accessesSinceBoundary = 0;
          continue;
        }
        const bool access = accessesMemory(inst);
        accessesSeen += access;
        accessesSinceBoundary += access;
        const bool full = ++sinceBoundary == kSchedulingRegion ||
                          (access && accessesSinceBoundary == kSchedulingRegionAccesses);
        // What is left makes at least half a region, by either measure.
        const bool restIsRegion = length - seen >= kSchedulingRegion / 2 ||
                                  accesses - accessesSeen >= kSchedulingRegionAccesses / 2;
        if (full && restIsRegion) {
          after.push_back(&inst);
          sinceBoundary = accessesSinceBoundary = 0;
        }
      }
      for (llvm::Instruction *inst : after) {
        llvm::IRBuilder<> builder(inst->getNextNode());
        builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_sched_barrier, {}, {builder.getInt32(0)});
      }
      inserted += after.size();
    }
  }
  return inserted;
}

namespace {

// The soffset operand of a raw buffer load or store when it is the constant 0
// (load: rsrc, voffset, soffset, aux; store: vdata, rsrc, voffset, soffset, aux).
llvm::Use *zeroBufferOffset(llvm::Instruction &inst) {
  auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  if (!call || (call->getIntrinsicID() != llvm::Intrinsic::amdgcn_raw_ptr_buffer_load &&
                call->getIntrinsicID() != llvm::Intrinsic::amdgcn_raw_ptr_buffer_store))
    return nullptr;
  llvm::Use &soffset = call->getArgOperandUse(call->arg_size() - 2);
  auto *constant = llvm::dyn_cast<llvm::ConstantInt>(soffset.get());
  return constant && constant->isZero() ? &soffset : nullptr;
}

} // namespace

unsigned giveRegionsTheirOwnZeroOffset(llvm::Module &module) {
  unsigned made = 0;
  for (llvm::Function &function : module) {
    for (llvm::BasicBlock &block : function) {
      if (!longBlockLength(block))
        continue;
      llvm::Value *zero = nullptr; // the current run of regions'
      unsigned uses = 0;
      // A run's zero lives to the run's end, where an empty
      // assembly statement reads it: its last use in a clause of loads would
      // make SI Form Memory Clauses recompute the live ranges of every
      // register the clause reads, the buffer resource's (all the kernel's
      // accesses) too, once per run.
      auto endRun = [&](llvm::Instruction &end) {
        if (!zero)
          return;
        llvm::IRBuilder<> builder(&end);
        auto *type = llvm::FunctionType::get(builder.getVoidTy(), {builder.getInt32Ty()}, false);
        builder.CreateCall(type, llvm::InlineAsm::get(type, "; soffset $0 ends", "s", /*hasSideEffects=*/true),
                           {zero});
        zero = nullptr;
      };
      for (llvm::Instruction &inst : llvm::make_early_inc_range(block)) {
        if ((isBoundary(inst) && uses >= kZeroOffsetUses) || inst.isTerminator()) {
          endRun(inst);
          continue;
        }
        llvm::Use *soffset = zeroBufferOffset(inst);
        if (!soffset)
          continue;
        if (!zero) {
          // Each its own text (a comment), so that no CSE of LLVM's code
          // generation merges them back into one.
          llvm::IRBuilder<> builder(&inst);
          auto *type = llvm::FunctionType::get(builder.getInt32Ty(), false);
          auto *asm_ = llvm::InlineAsm::get(type, "s_mov_b32 $0, 0 ; soffset " + std::to_string(made), "=s",
                                            /*hasSideEffects=*/false);
          auto *call = builder.CreateCall(type, asm_);
          call->setDoesNotAccessMemory();
          call->setDoesNotThrow();
          zero = call;
          uses = 0;
          ++made;
        }
        soffset->set(zero);
        ++uses;
      }
    }
  }
  return made;
}

namespace {

bool isMfma(const llvm::Instruction &inst) {
  auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
  llvm::Function *callee = call ? call->getCalledFunction() : nullptr;
  return callee && callee->getName().starts_with("llvm.amdgcn.mfma.");
}

// Operands of 8-bit (or narrower) elements come packed in i32 or i64 words.
bool packsNarrowOperands(const llvm::Instruction &matrix) {
  llvm::Type *t = llvm::cast<llvm::CallBase>(matrix).getArgOperand(0)->getType()->getScalarType();
  return t->isIntegerTy() && t->getIntegerBitWidth() > 16;
}

bool isWorkgroupBarrier(const llvm::Instruction &inst) {
  auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  return call && call->getIntrinsicID() == llvm::Intrinsic::amdgcn_s_barrier;
}

bool isLdsStore(const llvm::Instruction &inst) {
  auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst);
  return store && store->getPointerAddressSpace() == 3;
}

// Values in the first part that only instructions after `boundary` use go
// after it, in their order, so the boundary does not hold them live across
// the first part: the later MFMAs' LDS operand loads and the shuffles
// packing them, and address arithmetic of what follows. Loads from other
// than LDS stay (the next tile's global loads are issued early on
// purpose), calls never move, and an LDS load passes no instruction that
// may write memory: a store, a fence or a call other than an MFMA.
void sinkPastBoundary(llvm::BasicBlock &block, llvm::Instruction *boundary) {
  llvm::SmallPtrSet<const llvm::Instruction *, 32> after;
  std::vector<llvm::Instruction *> before;
  for (llvm::Instruction &inst : block) {
    if (&inst == boundary) {
      after.insert(&inst);
      continue;
    }
    if (after.empty())
      before.push_back(&inst);
    else
      after.insert(&inst);
  }
  llvm::Instruction *insertAt = boundary->getNextNode();
  bool writeBetween = false;
  for (auto it = before.rbegin(); it != before.rend(); ++it) {
    llvm::Instruction *inst = *it;
    if (llvm::isa<llvm::CallBase>(inst) || inst->mayHaveSideEffects()) {
      writeBetween |= !isMfma(*inst) && !inst->isDebugOrPseudoInst();
      continue;
    }
    auto *load = llvm::dyn_cast<llvm::LoadInst>(inst);
    if ((load && (load->getPointerAddressSpace() != 3 || writeBetween)) || llvm::isa<llvm::PHINode>(inst) ||
        (inst->mayReadFromMemory() && !load) ||
        !llvm::all_of(inst->users(), [&](const llvm::User *user) {
          return after.contains(llvm::dyn_cast<llvm::Instruction>(user));
        }))
      continue;
    inst->moveBefore(insertAt->getIterator());
    after.insert(inst);
    insertAt = inst;
  }
}

} // namespace

unsigned boundStagedStores(llvm::Module &module) {
  unsigned inserted = 0;
  for (llvm::Function &function : module) {
    for (llvm::BasicBlock &block : function) {
      std::vector<llvm::Instruction *> matrix;
      llvm::Instruction *barrier = nullptr;
      bool stores = false;
      for (llvm::Instruction &inst : block) {
        if (isMfma(inst)) {
          if (barrier)
            break;
          matrix.push_back(&inst);
        } else if (isWorkgroupBarrier(inst)) {
          if (barrier)
            break;
          if (!matrix.empty())
            barrier = &inst;
        } else if (barrier && isLdsStore(inst)) {
          stores = true;
        }
      }
      if (!barrier || !stores || matrix.size() < kStagedStoresMinMatrix || llvm::any_of(matrix, [](llvm::Instruction *m) { return packsNarrowOperands(*m); }))
        continue;
      llvm::IRBuilder<> builder(matrix[matrix.size() / 4 - 1]->getNextNode());
      llvm::Instruction *boundary =
          builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_sched_barrier, {}, {builder.getInt32(0)});
      sinkPastBoundary(block, boundary);
      ++inserted;
    }
  }
  return inserted;
}

namespace {

bool isLoadToLds(const llvm::Instruction &inst) {
  auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  return call && (call->getIntrinsicID() == llvm::Intrinsic::amdgcn_raw_ptr_buffer_load_lds ||
                  call->getIntrinsicID() == llvm::Intrinsic::amdgcn_raw_buffer_load_lds);
}

bool isWait(const llvm::Instruction &inst) {
  auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  return call && call->getIntrinsicID() == llvm::Intrinsic::amdgcn_s_waitcnt;
}

} // namespace

unsigned boundDirectLoads(llvm::Module &module) {
  unsigned bounded = 0;
  for (llvm::Function &function : module) {
    for (llvm::BasicBlock &block : function) {
      // The first workgroup barrier with loads to LDS right after it (only
      // pure instructions between), and those loads.
      llvm::Instruction *barrier = nullptr;
      std::vector<llvm::Instruction *> loads;
      for (llvm::Instruction &inst : block) {
        if (!barrier) {
          if (isWorkgroupBarrier(inst))
            barrier = &inst;
          continue;
        }
        // (The barrier's acquire fence.)
        if (loads.empty() && llvm::isa<llvm::FenceInst>(inst) && inst.getPrevNode() == barrier) {
          barrier = &inst;
          continue;
        }
        if (isLoadToLds(inst))
          loads.push_back(&inst);
        else if (inst.mayHaveSideEffects() || inst.mayReadOrWriteMemory() || inst.isTerminator())
          break;
      }
      if (!barrier || loads.empty())
        continue;
      // What the loads compute between the barrier and them moves above
      // the barrier (and the wait for the slot's loads before it), in order.
      llvm::SmallPtrSet<llvm::Instruction *, 32> needed;
      std::vector<llvm::Instruction *> work;
      for (llvm::Instruction *load : loads)
        work.push_back(load);
      while (!work.empty()) {
        llvm::Instruction *inst = work.back();
        work.pop_back();
        for (llvm::Value *operand : inst->operands()) {
          auto *def = llvm::dyn_cast<llvm::Instruction>(operand);
          if (def && def->getParent() == &block && barrier->comesBefore(def) && !isLoadToLds(*def) &&
              needed.insert(def).second)
            work.push_back(def);
        }
      }
      // Above the barrier's release fence and the wait before it.
      llvm::Instruction *top = barrier;
      while (llvm::Instruction *previous = top->getPrevNode()) {
        if (!isWorkgroupBarrier(*previous) && !llvm::isa<llvm::FenceInst>(*previous) && !isWait(*previous))
          break;
        top = previous;
      }
      std::vector<llvm::Instruction *> moving;
      for (llvm::Instruction *inst = barrier->getNextNode(); inst != loads.back(); inst = inst->getNextNode())
        if (needed.contains(inst))
          moving.push_back(inst);
      for (llvm::Instruction *inst : moving)
        inst->moveBefore(top->getIterator());
      // Boundaries: before the wait (the prep stays above the barrier) and
      // after the last load (nothing after it issues before the loads).
      llvm::IRBuilder<> before(top);
      before.CreateIntrinsic(llvm::Intrinsic::amdgcn_sched_barrier, {}, {before.getInt32(0)});
      llvm::IRBuilder<> after(loads.back()->getNextNode());
      after.CreateIntrinsic(llvm::Intrinsic::amdgcn_sched_barrier, {}, {after.getInt32(0)});
      ++bounded;
    }
  }
  return bounded;
}

} // namespace tessel
