// The sanitizer's half of retargeting: before every load, store and atomic
// of global (addrspace 1) or LDS (addrspace 3) memory, a call that checks the
// access (emulator_sanitizer.cpp) and hands back the pointer to use. Each
// access gets a site: its C++ line, from the module's line tables (the
// compiler attaches the user's line to every op), and its kind.
#include "emulator_retarget.hpp"
#include "emulator_sanitizer.hpp"
#include "emulator_wave.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

namespace tessel::emu {
namespace {

constexpr unsigned kGlobalAddressSpace = 1;
constexpr unsigned kLdsAddressSpace = 3;

struct Access {
  llvm::Instruction *inst;
  unsigned pointerOperand;
  llvm::Type *type;
  AccessSite::Kind kind;
};

std::optional<Access> accessOf(llvm::Instruction &inst) {
  if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst))
    return Access{&inst, load->getPointerOperandIndex(), load->getType(), AccessSite::Load};
  if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst))
    return Access{&inst, store->getPointerOperandIndex(), store->getValueOperand()->getType(),
                  AccessSite::Store};
  if (auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst))
    return Access{&inst, rmw->getPointerOperandIndex(), rmw->getValOperand()->getType(), AccessSite::Atomic};
  if (auto *cas = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&inst))
    return Access{&inst, cas->getPointerOperandIndex(), cas->getNewValOperand()->getType(),
                  AccessSite::Atomic};
  return std::nullopt;
}

AccessSite siteOf(const llvm::Instruction &inst, AccessSite::Kind kind) {
  AccessSite site;
  site.kind = kind;
  llvm::AtomicOrdering ordering = llvm::AtomicOrdering::NotAtomic;
  if (auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst))
    ordering = rmw->getOrdering();
  else if (auto *cas = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&inst))
    ordering = cas->getSuccessOrdering();
  site.acquire = llvm::isAcquireOrStronger(ordering);
  site.release = llvm::isReleaseOrStronger(ordering);
  if (const llvm::DILocation *loc = inst.getDebugLoc().get()) {
    site.line = loc->getLine();
    std::string dir = loc->getDirectory().str(), file = loc->getFilename().str();
    site.file = dir.empty() || (!file.empty() && file[0] == '/') ? file : dir + "/" + file;
  }
  return site;
}

} // namespace

std::vector<AccessSite> instrumentMemoryAccesses(llvm::Module &module, SanitizeMode mode) {
  std::vector<AccessSite> sites;
  if (mode != SanitizeMode::Off) {
    std::vector<Access> accesses;
    for (llvm::Function &f : module)
      for (llvm::Instruction &inst : llvm::instructions(f))
        if (auto access = accessOf(inst); access && !inst.getMetadata(kLanesCheckedMetadata)) {
          unsigned space = inst.getOperand(access->pointerOperand)->getType()->getPointerAddressSpace();
          if (space == kGlobalAddressSpace || space == kLdsAddressSpace)
            accesses.push_back(*access);
        }
    const llvm::DataLayout &layout = module.getDataLayout();
    llvm::LLVMContext &ctx = module.getContext();
    auto checkFor = [&](unsigned space) {
      auto *ptr = llvm::PointerType::get(ctx, space);
      llvm::FunctionCallee callee = module.getOrInsertFunction(
          space == kLdsAddressSpace ? "tessel_emu_check_lds" : "tessel_emu_check_global", ptr, ptr,
          llvm::Type::getInt64Ty(ctx), llvm::Type::getInt32Ty(ctx));
      auto *fn = llvm::cast<llvm::Function>(callee.getCallee());
      fn->addFnAttr(llvm::Attribute::NoUnwind);
      // It reads and writes only the sanitizer's own state; it may not return.
      fn->setMemoryEffects(llvm::MemoryEffects::inaccessibleMemOnly());
      return callee;
    };
    llvm::FunctionCallee checkGlobal = checkFor(kGlobalAddressSpace), checkLds = checkFor(kLdsAddressSpace);
    for (const Access &a : accesses) {
      llvm::IRBuilder<> b(a.inst);
      llvm::Value *pointer = a.inst->getOperand(a.pointerOperand);
      const bool lds = pointer->getType()->getPointerAddressSpace() == kLdsAddressSpace;
      const uint64_t bytes = layout.getTypeStoreSize(a.type);
      llvm::Value *checked = b.CreateCall(lds ? checkLds : checkGlobal,
                                          {pointer, b.getInt64(bytes), b.getInt32(uint32_t(sites.size()))});
      a.inst->setOperand(a.pointerOperand, checked);
      sites.push_back(siteOf(*a.inst, a.kind));
    }
    // The wave form's checks (emulator_wave.hpp) carry their access's kind
    // where their site goes.
    if (llvm::Function *lanes = module.getFunction(kLaneCheckName))
      for (llvm::User *user : lanes->users())
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(user)) {
          const unsigned last = call->arg_size() - 1;
          const auto kind = AccessSite::Kind(llvm::cast<llvm::ConstantInt>(call->getArgOperand(last))->getZExtValue());
          call->setArgOperand(last, llvm::ConstantInt::get(call->getArgOperand(last)->getType(), sites.size()));
          sites.push_back(siteOf(*call, kind));
        }
  }
  // The host code needs no debug information; the sites hold the lines.
  llvm::StripDebugInfo(module);
  return sites;
}

} // namespace tessel::emu
