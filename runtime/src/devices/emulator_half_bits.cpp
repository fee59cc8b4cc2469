// 16-bit floats a kernel only moves keep their bits. The GPU's loads, stores,
// selects and register moves of half and bfloat values move bits; the host
// legalizes vectors of those types (a thread's <8 x bfloat>: its extracts,
// inserts and store) through f32, which quiets a signalling NaN (bf16 0x7f81
// was stored as 0x7fc1). After the host's O2 (which would fold a bitcast
// load back into a load of the float type), every store of a half or bfloat
// value stores instead the i16 bits of the chain of moves that made it:
// loads, extracts, inserts, shuffles, selects and phis, rebuilt on i16. A value
// the kernel computed (an fptrunc, an fmul) is converted as before: a
// computation gives quiet NaNs on both.
#include "emulator_retarget.hpp"

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Local.h>

#include <string>
#include <vector>

namespace tessel::emu {

using llvm::Type;
using llvm::Value;

bool isHalfLike(Type *t) { return t->getScalarType()->isHalfTy() || t->getScalarType()->isBFloatTy(); }

Type *shaped(Type *scalar, Type *like) {
  if (auto *v = llvm::dyn_cast<llvm::VectorType>(like))
    return llvm::VectorType::get(scalar, v->getElementCount());
  return scalar;
}

namespace {

Type *bitsType(Type *t) { return shaped(Type::getInt16Ty(t->getContext()), t); }

class BitMover {
public:
  // The i16 bits of `v` (a half-like value), made before `at` where made anew.
  Value *bitsOf(Value *v, unsigned depth = 0) {
    if (auto it = made_.find(v); it != made_.end())
      return it->second;
    Value *bits = build(v, depth);
    made_[v] = bits;
    return bits;
  }

private:
  Value *build(Value *v, unsigned depth) {
    Type *type = bitsType(v->getType());
    if (auto *c = llvm::dyn_cast<llvm::Constant>(v))
      return llvm::ConstantExpr::getBitCast(c, type);
    auto *inst = llvm::dyn_cast<llvm::Instruction>(v);
    if (!inst || depth > 64)
      return cast(v, type);
    llvm::IRBuilder<> b(inst);
    if (auto *load = llvm::dyn_cast<llvm::LoadInst>(inst); load && load->isSimple()) {
      llvm::LoadInst *bits = b.CreateAlignedLoad(type, load->getPointerOperand(), load->getAlign());
      bits->copyMetadata(*load);
      return bits;
    }
    if (auto *ex = llvm::dyn_cast<llvm::ExtractElementInst>(inst))
      return b.CreateExtractElement(bitsOf(ex->getVectorOperand(), depth + 1), ex->getIndexOperand());
    if (auto *ins = llvm::dyn_cast<llvm::InsertElementInst>(inst))
      return b.CreateInsertElement(bitsOf(ins->getOperand(0), depth + 1), bitsOf(ins->getOperand(1), depth + 1),
                                   ins->getOperand(2));
    if (auto *sh = llvm::dyn_cast<llvm::ShuffleVectorInst>(inst))
      return b.CreateShuffleVector(bitsOf(sh->getOperand(0), depth + 1), bitsOf(sh->getOperand(1), depth + 1),
                                   sh->getShuffleMask());
    if (auto *sel = llvm::dyn_cast<llvm::SelectInst>(inst))
      return b.CreateSelect(sel->getCondition(), bitsOf(sel->getTrueValue(), depth + 1),
                            bitsOf(sel->getFalseValue(), depth + 1));
    if (auto *bc = llvm::dyn_cast<llvm::BitCastInst>(inst); bc && bc->getSrcTy() == type)
      return bc->getOperand(0);
    if (auto *fr = llvm::dyn_cast<llvm::FreezeInst>(inst))
      return b.CreateFreeze(bitsOf(fr->getOperand(0), depth + 1));
    if (auto *phi = llvm::dyn_cast<llvm::PHINode>(inst)) {
      // A loop-carried value reaches itself: the i16 phi is recorded before
      // its incoming values are built (each next to its own definition).
      llvm::PHINode *bits = b.CreatePHI(type, phi->getNumIncomingValues());
      made_[v] = bits;
      replacedPhis.push_back(phi);
      for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i)
        bits->addIncoming(bitsOf(phi->getIncomingValue(i), depth + 1), phi->getIncomingBlock(i));
      return bits;
    }
    return cast(v, type); // computed: its conversion, as before
  }

  Value *cast(Value *v, Type *type) {
    llvm::Instruction *after = nullptr;
    if (auto *inst = llvm::dyn_cast<llvm::Instruction>(v))
      after = llvm::isa<llvm::PHINode>(inst) ? &*inst->getParent()->getFirstInsertionPt() : inst->getNextNode();
    else if (auto *arg = llvm::dyn_cast<llvm::Argument>(v))
      after = &*arg->getParent()->getEntryBlock().getFirstInsertionPt();
    llvm::IRBuilder<> b(after);
    return b.CreateBitCast(v, type);
  }

  llvm::DenseMap<Value *, Value *> made_;

public:
  std::vector<llvm::WeakTrackingVH> replacedPhis; // dead once their stores moved, if only moved
};

} // namespace

void moveHalvesAsBits(llvm::Module &module) {
  bool changed = false;
  for (llvm::Function &f : module) {
    std::vector<llvm::StoreInst *> stores;
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst);
          store && store->isSimple() && isHalfLike(store->getValueOperand()->getType()))
        stores.push_back(store);
    if (stores.empty())
      continue;
    changed = true;
    BitMover mover;
    std::vector<llvm::WeakTrackingVH> old;
    for (llvm::StoreInst *store : stores) {
      old.push_back(store->getValueOperand());
      store->setOperand(0, mover.bitsOf(store->getValueOperand()));
    }
    for (llvm::WeakTrackingVH &v : old)
      if (v) // (null once deleted as part of another's chain)
        llvm::RecursivelyDeleteTriviallyDeadInstructions(v);
    // A loop's old phi feeds itself through its moves: not trivially dead.
    for (llvm::WeakTrackingVH &v : mover.replacedPhis)
      if (auto *phi = llvm::dyn_cast_or_null<llvm::PHINode>(v))
        llvm::RecursivelyDeleteDeadPHINode(phi);
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (changed && llvm::verifyModule(module, &os))
    throw Error("emulator: moving 16-bit floats as bits made invalid IR (an emulator bug): " + problems);
}

} // namespace tessel::emu
