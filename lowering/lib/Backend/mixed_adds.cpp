// Adds of widened halves as V_FMA_MIX_F32 (addWidenedHalvesAsFmaMix in
// amdgpu_codegen.hpp).
#include "tessel/lowering/amdgpu_codegen.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SetVector.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

namespace tessel {

namespace {

// An f32 add or subtract (of vectors too: the SLP vectorizer pairs a
// loaded vector's halves, and code generation takes a <2 x float> fma apart
// into two mixes).
bool isF32Add(const llvm::User *user) {
  auto *op = llvm::dyn_cast<llvm::BinaryOperator>(user);
  return op && (op->getOpcode() == llvm::Instruction::FAdd || op->getOpcode() == llvm::Instruction::FSub) &&
         op->getType()->getScalarType()->isFloatTy();
}

// An fpext from half whose every use is an add in its block: with them
// all made mixes, nothing reads the converted value.
bool onlyFeedsAdds(const llvm::FPExtInst &ext) {
  if (!ext.getSrcTy()->getScalarType()->isHalfTy() || !ext.getType()->getScalarType()->isFloatTy() ||
      ext.use_empty())
    return false;
  return llvm::all_of(ext.users(), [&](const llvm::User *user) {
    return isF32Add(user) && llvm::cast<llvm::Instruction>(user)->getParent() == ext.getParent();
  });
}

} // namespace

unsigned addWidenedHalvesAsFmaMix(llvm::Module &module) {
  unsigned rewritten = 0;
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    llvm::SmallPtrSet<llvm::Instruction *, 16> widened; // the fpexts the mixes will read (kept: selection folds them)
    llvm::SmallSetVector<llvm::BinaryOperator *, 16> adds;
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &inst : block)
        if (auto *ext = llvm::dyn_cast<llvm::FPExtInst>(&inst); ext && onlyFeedsAdds(*ext)) {
          widened.insert(ext);
          for (llvm::User *user : ext->users())
            adds.insert(llvm::cast<llvm::BinaryOperator>(user));
        }
    if (adds.empty())
      continue;
    // The fenced 1.0, and a splat of it for each vector type, at the entry
    // (before its first instruction, which no rewrite erases: an add comes
    // after its fpext).
    llvm::IRBuilder<> entry(&*function.getEntryBlock().getFirstInsertionPt());
    llvm::Value *one = entry.CreateIntrinsic(llvm::Intrinsic::arithmetic_fence, {entry.getFloatTy()},
                                             {llvm::ConstantFP::get(entry.getFloatTy(), 1.0)});
    llvm::DenseMap<llvm::Type *, llvm::Value *> ones = {{one->getType(), one}};
    auto oneOf = [&](llvm::Type *type) {
      llvm::Value *&splat = ones[type];
      if (!splat)
        splat = entry.CreateVectorSplat(llvm::cast<llvm::FixedVectorType>(type)->getNumElements(), one);
      return splat;
    };
    for (llvm::BinaryOperator *add : adds) {
      llvm::IRBuilder<> b(add);
      b.setFastMathFlags(add->getFastMathFlags());
      llvm::Value *x = add->getOperand(0), *y = add->getOperand(1);
      auto isWidened = [&](llvm::Value *v) {
        auto *inst = llvm::dyn_cast<llvm::Instruction>(v);
        return inst && widened.contains(inst);
      };
      llvm::Value *product, *addend;
      if (add->getOpcode() == llvm::Instruction::FAdd) {
        // x + y: the widened one multiplied (either, when both are).
        product = isWidened(x) ? x : y;
        addend = isWidened(x) ? y : x;
      } else if (isWidened(y)) {
        product = b.CreateFNeg(y); // x - y = -y * 1.0 + x
        addend = x;
      } else {
        product = x; // x - y = x * 1.0 + -y
        addend = b.CreateFNeg(y);
      }
      llvm::Value *fma =
          b.CreateIntrinsic(llvm::Intrinsic::fma, {add->getType()}, {product, oneOf(add->getType()), addend});
      fma->takeName(add);
      add->replaceAllUsesWith(fma);
      add->eraseFromParent();
      ++rewritten;
    }
  }
  return rewritten;
}

} // namespace tessel
