// A wave's lanes in lockstep, as far as memory can tell (issue 35).
//
// On the GPU every lane of a wave executes an instruction before any lane
// executes the next one: a load in all lanes happens before a store in any.
// The emulator runs a wave's lanes one after another (fibers), so without help
// lane 0 could store before lane 1 loads the same address. Order between
// lanes is only visible through memory, and only where an access follows a
// store, or a store follows a load, since the wave last synchronized: there
// the lanes must meet first. This pass puts an llvm.amdgcn.wave.barrier (the
// emulator's wave synchronization) at exactly those points, before the module
// is retargeted; everything else runs as it did.
//
// A meeting point must be reached by every lane of the wave, so it can only
// sit where control flow is uniform. LLVM's uniformity analysis, with the
// AMDGPU target's own rules for what diverges (work-item ids, loads from
// divergent addresses, ...), says which branches diverge. The blocks a
// divergent branch controls (from its successors up to its immediate
// post-dominator: a masked access's `if`) run lane by lane; their accesses
// count as happening at that branch, whose block dominates them, and a sync
// they need goes before that branch. Inside such a region the lanes still run
// one after another: two dependent accesses within one masked region are not
// ordered as on the GPU (tessel's lowering puts one access in each).
//
// Before placing meetings, the pass drops the cross-lane reads that need none:
// a readfirstlane or readlane of a value the analysis finds uniform.
#include "emulator_lane_address.hpp"
#include "emulator_retarget.hpp"

#include "tessel/lowering/target.hpp"

#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/Analysis/UniformityAnalysis.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

namespace tessel::emu {
namespace {

// Memory the lanes of a wave share, as bits: what an address space may reach.
enum : unsigned { kGlobal = 1, kLds = 2 };

unsigned memoryOf(unsigned addressSpace) {
  switch (addressSpace) {
  case 0: return kGlobal | kLds; // flat
  case 1: case 7: case 8: return kGlobal; // global, buffer pointers
  case 3: return kLds;
  default: return 0; // constant (read-only), private (one lane's own)
  }
}

// What an instruction reads and writes of shared memory since the last
// meeting of the wave.
struct Effects {
  unsigned reads = 0, writes = 0;
  bool empty() const { return !reads && !writes; }
  bool operator==(const Effects &o) const { return reads == o.reads && writes == o.writes; }
  Effects &operator|=(const Effects &o) {
    reads |= o.reads;
    writes |= o.writes;
    return *this;
  }
  // Whether `next` after these, without a meeting between, could see lanes
  // out of the GPU's order: it reads what was written, or writes what was
  // read or written.
  bool conflictsWith(const Effects &next) const {
    return (next.reads & writes) || (next.writes & (reads | writes));
  }
};

Effects effectsOf(llvm::Instruction &inst) {
  auto space = [](llvm::Value *pointer) { return memoryOf(pointer->getType()->getPointerAddressSpace()); };
  if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst))
    return {space(load->getPointerOperand()), 0};
  if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst))
    return {0, space(store->getPointerOperand())};
  if (auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst)) {
    unsigned m = space(rmw->getPointerOperand());
    return {m, m};
  }
  if (auto *cas = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&inst)) {
    unsigned m = space(cas->getPointerOperand());
    return {m, m};
  }
  auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
  if (!call || !call->mayReadOrWriteMemory())
    return {};
  llvm::Function *callee = call->getCalledFunction();
  llvm::StringRef name = callee ? callee->getName() : "";
  // gfx950's LDS transpose reads: each lane's read, then the wave's exchange.
  if (name.starts_with("llvm.amdgcn.ds.read.tr"))
    return {kLds, 0};
  // A buffer load into LDS reads global memory and writes LDS.
  if (name.starts_with("llvm.amdgcn.raw.ptr.buffer.load.lds") || name.starts_with("llvm.amdgcn.raw.buffer.load.lds"))
    return {kGlobal, kLds};
  if (name.starts_with("llvm.amdgcn.raw.ptr.buffer.load") || name.starts_with("llvm.amdgcn.raw.buffer.load"))
    return {kGlobal, 0};
  if (name.starts_with("llvm.amdgcn.raw.ptr.buffer.store") || name.starts_with("llvm.amdgcn.raw.buffer.store"))
    return {0, kGlobal};
  if (auto *transfer = llvm::dyn_cast<llvm::MemTransferInst>(&inst))
    return {space(transfer->getRawSource()), space(transfer->getRawDest())};
  if (auto *set = llvm::dyn_cast<llvm::MemSetInst>(&inst))
    return {0, space(set->getRawDest())};
  // Intrinsics that only mark (lifetimes, assumptions, fences' compiler
  // side) order nothing between lanes; device library math touches no
  // shared memory, nor does its printf (device_print, device_assert: the
  // hostcall buffer is the runtime's, not the kernel's).
  if ((callee && callee->isIntrinsic() && !name.starts_with("llvm.amdgcn.")) || name.starts_with("__ocml_") ||
      (name.starts_with("__ockl_") && name.contains("printf")))
    return {};
  // Anything else that may touch memory (an unknown call, an atomic
  // intrinsic): all of it, both ways.
  return {call->mayReadFromMemory() ? kGlobal | kLds : 0u, call->mayWriteToMemory() ? kGlobal | kLds : 0u};
}

// Whether `inst` is a point where the whole wave has met: a workgroup barrier
// or a cross-lane operation (both wait for every lane in the emulator).
bool meetsWave(llvm::Instruction &inst) {
  auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
  llvm::Function *callee = call ? call->getCalledFunction() : nullptr;
  return callee && synchronizesWave(callee->getName());
}

struct Lockstep {
  llvm::Function &kernel;
  llvm::UniformityInfo &uniformity;
  llvm::DominatorTree &dominators;
  llvm::PostDominatorTree &postDominators;
  const llvm::CycleInfo &cycles;
  unsigned waveSize; // 0: unknown (no access's lane address is used)
  std::map<llvm::Instruction *, std::optional<LaneAddress>> addresses;

  const std::optional<LaneAddress> &addressOf(llvm::Instruction &inst) {
    auto [at, inserted] = addresses.try_emplace(&inst);
    if (inserted && waveSize)
      at->second = laneAddressOf(inst, kernel.getDataLayout(), uniformity, cycles, waveSize);
    return at->second;
  }

  std::set<llvm::BasicBlock *> laneByLane; // inside a divergent branch's region
  std::map<llvm::BasicBlock *, Effects> atBranch; // the regions' accesses, at the branch
  std::map<llvm::BasicBlock *, Effects> in, out;
  std::vector<llvm::Instruction *> meetings; // where a wave barrier goes

  void findRegions() {
    for (llvm::BasicBlock &block : kernel) {
      if (!uniformity.hasDivergentTerminator(block))
        continue;
      llvm::DomTreeNodeBase<llvm::BasicBlock> *node = postDominators.getNode(&block);
      llvm::BasicBlock *join = node && node->getIDom() ? node->getIDom()->getBlock() : nullptr;
      std::vector<llvm::BasicBlock *> work(succ_begin(&block), succ_end(&block));
      while (!work.empty()) {
        llvm::BasicBlock *b = work.back();
        work.pop_back();
        if (b == join || !laneByLane.insert(b).second)
          continue;
        work.insert(work.end(), succ_begin(b), succ_end(b));
      }
    }
    // A region's accesses happen, for the wave, at the nearest block above
    // them that the whole wave runs.
    for (llvm::BasicBlock *b : laneByLane) {
      llvm::DomTreeNode *anchor = dominators.getNode(b);
      while (anchor && laneByLane.count(anchor->getBlock()))
        anchor = anchor->getIDom();
      if (!anchor)
        continue; // unreachable from the entry
      Effects &effects = atBranch[anchor->getBlock()];
      for (llvm::Instruction &inst : *b)
        effects |= effectsOf(inst);
    }
  }

  // Runs `block` from the state `state`; returns the state at its end.
  // With `place`, records where meetings go. Within the block, an access
  // whose lane address is known (`known`, since the last meeting) conflicts
  // with a later one only if some other lane's bytes may overlap it: the two
  // addresses' uniform values are the same run-time values within one pass
  // through the block (not across a loop's back edge), so at its end they
  // count as accesses anywhere.
  Effects transfer(llvm::BasicBlock &block, Effects state, bool place) {
    const bool uniform = !laneByLane.count(&block);
    std::vector<llvm::Instruction *> known;
    for (llvm::Instruction &inst : block) {
      if (uniform && meetsWave(inst)) {
        // A cross-lane op that also reads memory (an LDS transpose read) reads
        // before its own meeting: what was written since the last one must
        // meet first.
        Effects before = state;
        for (llvm::Instruction *k : known)
          before |= effectsOf(*k);
        if (place && before.conflictsWith(effectsOf(inst)))
          meetings.push_back(&inst);
        state = {};
        known.clear();
        continue;
      }
      Effects effects = effectsOf(inst);
      const bool regionToo = inst.isTerminator() && atBranch.count(&block);
      if (regionToo)
        effects |= atBranch[&block];
      if (effects.empty())
        continue;
      const std::optional<LaneAddress> *address = uniform && !regionToo ? &addressOf(inst) : nullptr;
      if (address && !address->has_value())
        address = nullptr;
      bool conflict = state.conflictsWith(effects);
      for (size_t i = 0; i < known.size() && !conflict; ++i) {
        const std::optional<LaneAddress> &earlier = addressOf(*known[i]);
        conflict = effectsOf(*known[i]).conflictsWith(effects) &&
                   (!address || mayOverlapAcrossLanes(*earlier, **address, waveSize));
      }
      if (uniform && conflict) {
        if (place)
          meetings.push_back(&inst);
        state = {};
        known.clear();
      }
      if (address)
        known.push_back(&inst);
      else
        state |= effects;
    }
    for (llvm::Instruction *inst : known)
      state |= effectsOf(*inst);
    return state;
  }

  void run() {
    findRegions();
    llvm::ReversePostOrderTraversal<llvm::Function *> order(&kernel);
    for (bool changed = true; changed;) {
      changed = false;
      for (llvm::BasicBlock *block : order) {
        Effects entry;
        for (llvm::BasicBlock *pred : llvm::predecessors(block))
          entry |= out[pred];
        in[block] = entry;
        Effects exit = transfer(*block, entry, false);
        if (!(exit == out[block])) {
          out[block] = exit;
          changed = true;
        }
      }
    }
    for (llvm::BasicBlock *block : order)
      transfer(*block, in[block], true);
  }
};

// A readfirstlane or readlane of a value every lane of the wave holds alike
// (by the same uniformity analysis) is that value, on the GPU as here: the
// call goes, and with it a meeting of the wave (the compiler puts one
// before each buffer access, to make its size a scalar).
void dropUniformLaneReads(llvm::Function &kernel, llvm::UniformityInfo &uniformity, const llvm::CycleInfo &cycles) {
  std::vector<llvm::IntrinsicInst *> reads;
  for (llvm::BasicBlock &block : kernel)
    for (llvm::Instruction &inst : block)
      if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
          call &&
          (call->getIntrinsicID() == llvm::Intrinsic::amdgcn_readfirstlane ||
           call->getIntrinsicID() == llvm::Intrinsic::amdgcn_readlane) &&
          call->getArgOperand(0)->getType() == call->getType() && uniformity.isUniform(call->getArgOperand(0)) &&
          !leavesCycle(call->getArgOperand(0), call->getParent(), cycles))
        reads.push_back(call);
  for (llvm::IntrinsicInst *call : reads) {
    call->replaceAllUsesWith(call->getArgOperand(0));
    call->eraseFromParent();
  }
}

} // namespace

unsigned insertLockstepMeetings(llvm::Module &module, const std::string &kernelName,
                                llvm::TargetMachine &device) {
  llvm::Function *kernel = module.getFunction(kernelName);
  if (!kernel || kernel->isDeclaration())
    return 0;
  llvm::FunctionAnalysisManager functions;
  llvm::PassBuilder builder(&device);
  builder.registerFunctionAnalyses(functions);
  // Replacing a uniform value's read by the value changes no block and no
  // value's uniformity: the analyses stay valid for the pass below.
  dropUniformLaneReads(*kernel, functions.getResult<llvm::UniformityInfoAnalysis>(*kernel),
                       functions.getResult<llvm::CycleAnalysis>(*kernel));
  const TargetFacts *target = lookupTarget(device.getTargetCPU().str());
  Lockstep lockstep{*kernel,
                    functions.getResult<llvm::UniformityInfoAnalysis>(*kernel),
                    functions.getResult<llvm::DominatorTreeAnalysis>(*kernel),
                    functions.getResult<llvm::PostDominatorTreeAnalysis>(*kernel),
                    functions.getResult<llvm::CycleAnalysis>(*kernel),
                    target ? target->waveSize : 0u,
                    {}, {}, {}, {}, {}, {}};
  lockstep.run();
  if (lockstep.meetings.empty())
    return 0;
  llvm::Function *barrier = llvm::Intrinsic::getOrInsertDeclaration(&module, llvm::Intrinsic::amdgcn_wave_barrier);
  for (llvm::Instruction *at : lockstep.meetings)
    llvm::CallInst::Create(barrier, {}, "", at->getIterator());
  return unsigned(lockstep.meetings.size());
}

} // namespace tessel::emu
