// Scheduling boundaries in long basic blocks (boundSchedulingRegions in
// amdgpu_codegen.hpp).
#include "tessel/lowering/amdgpu_codegen.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

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

} // namespace

unsigned boundSchedulingRegions(llvm::Module &module) {
  unsigned inserted = 0;
  for (llvm::Function &function : module) {
    for (llvm::BasicBlock &block : function) {
      unsigned length = 0;
      for (llvm::Instruction &inst : block)
        length += isScheduled(inst);
      if (length <= kLongBlock)
        continue;
      std::vector<llvm::Instruction *> after;
      unsigned seen = 0, sinceBoundary = 0;
      for (llvm::Instruction &inst : block) {
        if (!isScheduled(inst))
          continue;
        ++seen;
        if (isBoundary(inst)) {
          sinceBoundary = 0;
          continue;
        }
        if (++sinceBoundary == kSchedulingRegion && length - seen >= kSchedulingRegion / 2) {
          after.push_back(&inst);
          sinceBoundary = 0;
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

} // namespace tessel
