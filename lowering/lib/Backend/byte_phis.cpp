// Byte vectors across control flow carried as one integer (carryBytePairsAsWords
// in amdgpu_codegen.hpp).
#include "tessel/lowering/amdgpu_codegen.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <vector>

namespace tessel {

namespace {

// <2 x i8> and <3 x i8>: narrower than the 32-bit word the backend carries
// <4 x i8> in already.
bool isNarrowByteVector(llvm::Type *type) {
  auto *vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  return vector && vector->getElementType()->isIntegerTy(8) && vector->getNumElements() >= 2 &&
         vector->getNumElements() < kBytesPerCarriedWord;
}

} // namespace

unsigned carryBytePairsAsWords(llvm::Module &module) {
  std::vector<llvm::PHINode *> phis;
  for (llvm::Function &function : module)
    for (llvm::BasicBlock &block : function)
      for (llvm::PHINode &phi : block.phis())
        if (isNarrowByteVector(phi.getType()))
          phis.push_back(&phi);
  for (llvm::PHINode *phi : phis) {
    llvm::Type *vector = phi->getType();
    llvm::Type *word = llvm::IntegerType::get(module.getContext(), vector->getPrimitiveSizeInBits());
    auto *carried = llvm::PHINode::Create(word, phi->getNumIncomingValues(), phi->getName() + ".word", phi->getIterator());
    // One cast per edge's block: a block that branches here twice (both
    // edges of a conditional branch) must give the phi one value.
    llvm::DenseMap<llvm::BasicBlock *, llvm::Value *> castIn;
    for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
      llvm::Value *value = phi->getIncomingValue(i);
      llvm::BasicBlock *from = phi->getIncomingBlock(i);
      llvm::Value *incoming;
      if (llvm::isa<llvm::PoisonValue>(value))
        incoming = llvm::PoisonValue::get(word);
      else if (llvm::isa<llvm::UndefValue>(value))
        incoming = llvm::UndefValue::get(word);
      else if (llvm::Value *made = castIn.lookup(from))
        incoming = made;
      else
        // At the end of the edge's block, where every incoming value is
        // available (another such phi of this block included).
        incoming = castIn[from] = llvm::IRBuilder<>(from->getTerminator()).CreateBitCast(value, word);
      carried->addIncoming(incoming, from);
    }
    llvm::IRBuilder<> after(phi->getParent(), phi->getParent()->getFirstInsertionPt());
    llvm::Value *bytes = after.CreateBitCast(carried, vector);
    phi->replaceAllUsesWith(bytes);
    phi->eraseFromParent();
  }
  return unsigned(phis.size());
}

} // namespace tessel
