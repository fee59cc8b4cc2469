// The builder behind buildWaveKernel (emulator_wave.hpp), shared by
// emulator_wave.cpp (analysis, lane operations) and emulator_wave_ops.cpp
// (memory, cross-lane operations, calls per lane).
#pragma once

#include "emulator_wave.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <vector>

namespace tessel::emu {

class WaveBuilder {
public:
  WaveBuilder(llvm::Function &f, unsigned waveSize, SanitizeMode sanitize);
  void build();

private:
  struct LaneAffine {
    int64_t stride;
    bool aligned;
  };
  struct MaskedRegion {
    llvm::Value *condition; // the lanes that run the block: condition, or its negation
    bool negated;
    llvm::BasicBlock *head;
    llvm::BasicBlock *next; // an if-else's first block: the else block, which runs after it
  };

  static const char *amdgcnName(const llvm::CallInst &call);
  static bool named(const llvm::CallInst &call, llvm::StringRef prefix);
  static unsigned perLane(llvm::Type *t);

  // Analysis (emulator_wave.cpp).
  void checkSupported();
  void analyze();
  bool computeVarying(llvm::Instruction &inst);
  void addMaskedRegion(llvm::BranchInst &br);
  bool isVarying(const llvm::Value *v) const;
  std::optional<LaneAffine> affineOf(const llvm::Value *v) const;

  // Values.
  static bool computesOnHalves(const llvm::Instruction &inst);
  llvm::Type *carried(llvm::Type *t) const;
  llvm::Type *wide(llvm::Type *t) const;
  llvm::Value *laneZero(llvm::IRBuilder<> &b, llvm::Value *v);
  llvm::Value *scalar(llvm::Value *v) const;
  llvm::Value *vec(llvm::IRBuilder<> &b, llvm::Value *v);
  llvm::Value *splat(llvm::IRBuilder<> &b, llvm::Value *s) const;
  llvm::Value *repeatLanes(llvm::IRBuilder<> &b, llvm::Value *v, unsigned n) const;
  llvm::Value *laneIndices(llvm::IRBuilder<> &b, unsigned bits) const;
  llvm::Value *maskValue(llvm::IRBuilder<> &b, llvm::BasicBlock *then);

  // Rewriting.
  void emit(llvm::IRBuilder<> &b, llvm::Instruction &inst);
  void emitTerminator(llvm::IRBuilder<> &b, llvm::Instruction &inst);
  llvm::Value *emitLaneOp(llvm::IRBuilder<> &b, llvm::Instruction &inst);
  bool emitCall(llvm::IRBuilder<> &b, llvm::CallInst &call);

  // emulator_wave_ops.cpp.
  bool emitAmdgcn(llvm::IRBuilder<> &b, llvm::CallInst &call);
  bool emitMemory(llvm::IRBuilder<> &b, llvm::Instruction &inst);
  llvm::Value *emitPerLane(llvm::IRBuilder<> &b, llvm::Instruction &inst);
  llvm::Value *crossLane(llvm::IRBuilder<> &b, llvm::CallInst &call);
  llvm::Value *emitMatrix(llvm::IRBuilder<> &b, llvm::CallInst &call);
  llvm::Value *emitAtomic(llvm::IRBuilder<> &b, llvm::AtomicRMWInst &rmw);
  llvm::Value *accessMask(llvm::IRBuilder<> &b, llvm::BasicBlock *bb, unsigned n);
  llvm::Value *elementPointers(llvm::IRBuilder<> &b, llvm::Value *pointers, unsigned n, unsigned elementBytes);
  void checkLanes(llvm::IRBuilder<> &b, llvm::Instruction &access, llvm::Value *&pointers, llvm::Value *mask,
                  unsigned perLane, uint64_t bytes, int kind);
  llvm::Value *loadLanes(llvm::IRBuilder<> &b, llvm::Type *element, llvm::Value *pointers, llvm::Value *mask,
                         llvm::Align align);
  void storeLanes(llvm::IRBuilder<> &b, llvm::Value *values, llvm::Value *pointers, llvm::Value *mask,
                  llvm::Align align);
  void markLanesChecked(llvm::Value *access);
  llvm::Value *contiguous(llvm::IRBuilder<> &b, llvm::Value *&pointers, unsigned elementBytes);
  llvm::AllocaInst *newSlot(llvm::IRBuilder<> &b, llvm::Type *t);
  void release(llvm::IRBuilder<> &b, std::initializer_list<llvm::AllocaInst *> slots);

  llvm::Function &f_;
  llvm::Module &m_;
  llvm::LLVMContext &ctx_;
  const llvm::DataLayout &layout_;
  unsigned w_;
  SanitizeMode sanitize_;
  llvm::DenseSet<const llvm::Value *> varying_;
  llvm::DenseMap<const llvm::Value *, LaneAffine> affine_;
  llvm::DenseMap<llvm::BasicBlock *, MaskedRegion> maskOf_;     // masked block -> its `if`
  llvm::DenseMap<llvm::BasicBlock *, llvm::BasicBlock *> joins_; // join -> masked block
  llvm::DenseSet<const llvm::BranchInst *> handledBranches_;
  llvm::DenseMap<llvm::Value *, llvm::Value *> scalars_, vectors_;
  llvm::DenseMap<llvm::BasicBlock *, llvm::BasicBlock *> blocks_, blockEnd_;
  std::vector<std::pair<llvm::PHINode *, llvm::PHINode *>> pendingPhis_;
  std::unique_ptr<llvm::IRBuilder<>> allocas_;
  llvm::Function *meeting_ = nullptr; // llvm.amdgcn.wave.barrier
};

} // namespace tessel::emu
