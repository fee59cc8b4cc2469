// The wave form of a kernel (emulator_wave.hpp): what runs once per wave,
// what runs per lane as a vector lane, and how each instruction becomes
// vector code. The results equal the fibers' bit for bit: the same host
// operations lane by lane, memory in the same lane order (the lockstep pass
// already put a meeting wherever another order could show), cross-lane reads
// from the same source-lane rules.
#include "emulator_retarget.hpp"
#include "emulator_wave.hpp"
#include "emulator_wave_builder.hpp"

#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GetElementPtrTypeIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/FileSystem.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <llvm/Support/raw_ostream.h>

namespace tessel::emu {

using llvm::BasicBlock;
using llvm::CallInst;
using llvm::Instruction;
using llvm::Value;

namespace {

// The widest lane value (all lanes of a wave) the wave form makes.
constexpr uint64_t kMaxWaveValueBits = 8192;
// The most lane elements (values times their elements a wave) it makes.
constexpr uint64_t kMaxWaveElements = 131072;

// llvm.* intrinsics that act lane by lane and whose vector form the host
// computes element by element with the scalar form's operation (no libm).
bool elementwiseIntrinsic(llvm::Intrinsic::ID id) {
  switch (id) {
  case llvm::Intrinsic::fma: case llvm::Intrinsic::fmuladd: case llvm::Intrinsic::maxnum:
  case llvm::Intrinsic::minnum: case llvm::Intrinsic::maximum: case llvm::Intrinsic::minimum:
  case llvm::Intrinsic::maximumnum: case llvm::Intrinsic::minimumnum:
  case llvm::Intrinsic::fabs: case llvm::Intrinsic::copysign: case llvm::Intrinsic::floor:
  case llvm::Intrinsic::ceil: case llvm::Intrinsic::trunc: case llvm::Intrinsic::rint:
  case llvm::Intrinsic::nearbyint: case llvm::Intrinsic::round: case llvm::Intrinsic::roundeven:
  case llvm::Intrinsic::sqrt: case llvm::Intrinsic::smax: case llvm::Intrinsic::smin:
  case llvm::Intrinsic::umax: case llvm::Intrinsic::umin: case llvm::Intrinsic::ctpop:
  case llvm::Intrinsic::bswap: case llvm::Intrinsic::bitreverse: case llvm::Intrinsic::fshl:
  case llvm::Intrinsic::fshr: case llvm::Intrinsic::uadd_sat: case llvm::Intrinsic::usub_sat:
  case llvm::Intrinsic::sadd_sat: case llvm::Intrinsic::ssub_sat:
  case llvm::Intrinsic::abs: case llvm::Intrinsic::ctlz: case llvm::Intrinsic::cttz:
  case llvm::Intrinsic::fptosi_sat: case llvm::Intrinsic::fptoui_sat:
    return true;
  default:
    return false;
  }
}

bool waveMatrixEnabled() {
  const char *v = std::getenv("TESSEL_EMULATOR_WAVE_MATRIX");
  return v && *v && std::strcmp(v, "0") != 0;
}

} // namespace

WaveBuilder::WaveBuilder(llvm::Function &f, unsigned waveSize, SanitizeMode sanitize)
    : f_(f), m_(*f.getParent()), ctx_(f.getContext()), layout_(m_.getDataLayout()), w_(waveSize),
      sanitize_(sanitize) {}

const char *WaveBuilder::amdgcnName(const CallInst &call) {
  const llvm::Function *callee = call.getCalledFunction();
  if (!callee || !callee->getName().starts_with("llvm.amdgcn."))
    return nullptr;
  return callee->getName().data() + std::strlen("llvm.amdgcn.");
}

bool WaveBuilder::named(const CallInst &call, llvm::StringRef prefix) {
  const char *name = amdgcnName(call);
  if (!name)
    return false;
  llvm::StringRef n(name);
  return n == prefix || (n.starts_with(prefix) && n.size() > prefix.size() && n[prefix.size()] == '.');
}

// ---- which values differ between lanes ------------------------------------

void WaveBuilder::checkSupported() {
  if (sanitize_ == SanitizeMode::Races)
    throw WaveUnsupported("the races sanitizer tracks each lane's accesses between meetings");
  for (BasicBlock &bb : f_)
    for (Instruction &inst : bb) {
      if (llvm::isa<llvm::AllocaInst>(inst))
        throw WaveUnsupported("private memory (alloca)");
      if (llvm::isa<llvm::AtomicCmpXchgInst>(inst))
        throw WaveUnsupported("compare-and-swap");
      if (auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst); rmw && rmw->getType()->isVectorTy())
        throw WaveUnsupported("an atomic on a vector");
      if (llvm::isa<llvm::InvokeInst, llvm::CallBrInst, llvm::IndirectBrInst>(inst))
        throw WaveUnsupported("an " + std::string(inst.getOpcodeName()));
      if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst); load && !load->isSimple())
        throw WaveUnsupported("a volatile or atomic load");
      if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst); store && !store->isSimple())
        throw WaveUnsupported("a volatile or atomic store");
      if (llvm::isa<llvm::ExtractValueInst, llvm::InsertValueInst>(inst))
        throw WaveUnsupported("aggregate values");
      auto *call = llvm::dyn_cast<CallInst>(&inst);
      if (!call)
        continue;
      llvm::Function *callee = call->getCalledFunction();
      if (!callee)
        throw WaveUnsupported("an indirect call");
      if (amdgcnName(*call)) {
        static const char *const known[] = {
            "workitem.id.x", "workitem.id.y", "workitem.id.z", "workgroup.id.x", "workgroup.id.y",
            "workgroup.id.z", "dispatch.ptr", "implicitarg.ptr", "s.barrier", "wave.barrier",
            "readfirstlane", "readlane", "ballot", "exp2", "rsq", "update.dpp", "mov.dpp",
            "permlanex16", "ds.bpermute", "raw.ptr.buffer.load", "raw.ptr.buffer.store",
            "s.waitcnt", "make.buffer.rsrc", "mfma", "wmma", "cvt.pk.fp8.f32", "cvt.pk.bf8.f32", "cvt.f32.fp8", "cvt.f32.bf8"};
        bool ok = false;
        for (const char *k : known)
          ok |= named(*call, k);
        // raw.ptr.buffer.load.lds starts like a buffer load: a load to LDS per lane slot.
        if (!ok || llvm::StringRef(amdgcnName(*call)).starts_with("raw.ptr.buffer.load.lds"))
          throw WaveUnsupported("the intrinsic " + callee->getName().str());
        // Matrix kernels' wave form took 2-60x the fibers' host compile time
        // (100-2900 ms against ~50 ms a kernel in the e2e dot tests) for
        // little run time: off unless asked for.
        if ((named(*call, "mfma") || named(*call, "wmma")) && !waveMatrixEnabled())
          throw WaveUnsupported("a matrix instruction (TESSEL_EMULATOR_WAVE_MATRIX=1 allows it)");
        continue;
      }
      if (callee->isIntrinsic()) {
        if (call->getIntrinsicID() == llvm::Intrinsic::assume || call->doesNotAccessMemory())
          continue;
        throw WaveUnsupported("the intrinsic " + callee->getName().str());
      }
      if (callee->getName().starts_with("__ocml_"))
        continue; // pure math: per lane
      throw WaveUnsupported("a call of " + callee->getName().str());
    }
}

bool WaveBuilder::isVarying(const Value *v) const {
  return llvm::isa<Instruction>(v) && varying_.count(v);
}

// value = (value in lane 0) + lane * stride, with lane 0's value a multiple
// of the wave size when `aligned`. What makes `tid >> 6` (the wave's index
// in wave64) uniform.
std::optional<WaveBuilder::LaneAffine> WaveBuilder::affineOf(const Value *v) const {
  auto it = affine_.find(v);
  return it == affine_.end() ? std::nullopt : std::optional(it->second);
}

bool WaveBuilder::computeVarying(Instruction &inst) {
  auto anyVarying = [&] {
    for (const Value *op : inst.operands())
      if (isVarying(op))
        return true;
    return false;
  };
  const bool masked = maskOf_.count(inst.getParent()) != 0;
  if (auto *phi = llvm::dyn_cast<llvm::PHINode>(&inst))
    return anyVarying() || joins_.count(phi->getParent());
  if (llvm::isa<llvm::LoadInst>(inst))
    return anyVarying() || masked;
  if (llvm::isa<llvm::AtomicRMWInst>(inst))
    return true; // every lane's own, in lane order
  if (auto *call = llvm::dyn_cast<CallInst>(&inst)) {
    if (named(*call, "workitem.id.x")) {
      affine_[&inst] = LaneAffine{1, true};
      return true;
    }
    if (named(*call, "readfirstlane") || named(*call, "readlane") || named(*call, "ballot"))
      return false;
    if (named(*call, "update.dpp") || named(*call, "mov.dpp") || named(*call, "permlanex16") ||
        named(*call, "ds.bpermute"))
      return true;
    if (named(*call, "raw.ptr.buffer.load"))
      return anyVarying() || masked;
    return anyVarying();
  }
  if (!anyVarying())
    return false;
  // Lane-affine integers (see affineOf).
  auto *bin = llvm::dyn_cast<llvm::BinaryOperator>(&inst);
  if (!bin)
    return true;
  auto lhs = affineOf(bin->getOperand(0)), rhs = affineOf(bin->getOperand(1));
  auto *c = llvm::dyn_cast<llvm::ConstantInt>(bin->getOperand(1));
  const bool rhsUniform = !isVarying(bin->getOperand(1));
  if (!lhs && rhs && bin->isCommutative() && !isVarying(bin->getOperand(0))) {
    lhs = rhs;
    c = llvm::dyn_cast<llvm::ConstantInt>(bin->getOperand(0));
  } else if (!rhsUniform) {
    return true;
  }
  if (!lhs)
    return true;
  const uint64_t cv = c && c->getBitWidth() <= 64 ? c->getZExtValue() : 0;
  switch (bin->getOpcode()) {
  case Instruction::Add:
    affine_[&inst] = LaneAffine{lhs->stride, lhs->aligned && c && cv % w_ == 0};
    return true;
  case Instruction::Sub:
    if (bin->getOperand(0) != inst.getOperand(0) || !rhsUniform)
      return true;
    affine_[&inst] = LaneAffine{lhs->stride, lhs->aligned && c && cv % w_ == 0};
    return true;
  case Instruction::Mul:
    if (c)
      affine_[&inst] = LaneAffine{lhs->stride * int64_t(cv), lhs->aligned};
    return true;
  case Instruction::And:
    // (base + lane) & (2^k - 1), 2^k >= W: the base keeps its alignment.
    if (c && lhs->stride == 1 && lhs->aligned && llvm::isPowerOf2_64(cv + 1) && cv + 1 >= w_)
      affine_[&inst] = LaneAffine{1, true};
    return true;
  case Instruction::LShr:
  case Instruction::UDiv: {
    // (base + lane) >> k with 2^k >= W: a wave never straddles a multiple of 2^k.
    const uint64_t divisor = !c ? 0 : bin->getOpcode() == Instruction::LShr ? (cv < 63 ? uint64_t(1) << cv : 0) : cv;
    if (c && lhs->stride == 1 && lhs->aligned && divisor >= w_ && llvm::isPowerOf2_64(divisor) &&
        bin->getOperand(0) == inst.getOperand(0))
      return false;
    return true;
  }
  default:
    return true;
  }
}

// An `if` on a lane value: `head` ends in `br c, then, join` (or the
// reverse), `then` is a block of its own that falls into `join`, and `join`
// has no other predecessor; or an if-else: two such blocks, both falling
// into `join`. Their instructions run masked, one block after the other.
void WaveBuilder::addMaskedRegion(llvm::BranchInst &br) {
  BasicBlock *head = br.getParent();
  auto ownBlockInto = [&](BasicBlock *block) -> BasicBlock * { // its join, or null
    if (block->getSinglePredecessor() != head || maskOf_.count(block))
      return nullptr;
    auto *term = llvm::dyn_cast<llvm::BranchInst>(block->getTerminator());
    return term && !term->isConditional() ? term->getSuccessor(0) : nullptr;
  };
  auto predecessorsAre = [](BasicBlock *join, BasicBlock *a, BasicBlock *b) {
    unsigned preds = 0;
    for (BasicBlock *pred : llvm::predecessors(join)) {
      ++preds;
      if (pred != a && pred != b)
        return false;
    }
    return preds == 2;
  };
  auto noMeetings = [&](BasicBlock *block) {
    for (Instruction &inst : *block)
      if (auto *call = llvm::dyn_cast<CallInst>(&inst);
          call && (call->isConvergent() || named(*call, "s.barrier") || named(*call, "wave.barrier")))
        throw WaveUnsupported("a cross-lane operation under a branch on a lane value");
  };
  BasicBlock *s0 = br.getSuccessor(0), *s1 = br.getSuccessor(1);
  if (maskOf_.count(head) == 0 && s0 != s1) {
    BasicBlock *j0 = ownBlockInto(s0), *j1 = ownBlockInto(s1);
    if (j0 && j1 && j0 == j1 && predecessorsAre(j0, s0, s1)) { // if-else
      noMeetings(s0);
      noMeetings(s1);
      maskOf_[s0] = MaskedRegion{br.getCondition(), false, head, s1};
      maskOf_[s1] = MaskedRegion{br.getCondition(), true, head, nullptr};
      joins_[j0] = s0;
      return;
    }
    for (unsigned thenIndex : {0u, 1u}) {
      BasicBlock *then = br.getSuccessor(thenIndex), *join = br.getSuccessor(1 - thenIndex);
      if (ownBlockInto(then) != join || !predecessorsAre(join, head, then))
        continue;
      noMeetings(then);
      maskOf_[then] = MaskedRegion{br.getCondition(), thenIndex == 1, head, nullptr};
      joins_[join] = then;
      return;
    }
  }
  throw WaveUnsupported("a branch on a lane value (other than an `if` or if-else with one block each)");
}

void WaveBuilder::analyze() {
  llvm::ReversePostOrderTraversal<llvm::Function *> rpo(&f_);
  for (bool changed = true; changed;) {
    changed = false;
    for (BasicBlock *bb : rpo) {
      for (Instruction &inst : *bb) {
        if (inst.getType()->isVoidTy() || varying_.count(&inst))
          continue;
        if (computeVarying(inst)) {
          varying_.insert(&inst);
          changed = true;
        }
      }
      Instruction *term = bb->getTerminator();
      if (auto *br = llvm::dyn_cast<llvm::BranchInst>(term); br && br->isConditional() &&
                                                             isVarying(br->getCondition()) &&
                                                             !handledBranches_.count(br)) {
        addMaskedRegion(*br);
        handledBranches_.insert(br);
        changed = true;
      } else if (auto *sw = llvm::dyn_cast<llvm::SwitchInst>(term); sw && isVarying(sw->getCondition())) {
        throw WaveUnsupported("a switch on a lane value");
      }
    }
  }
  // Host code generation slows down sharply past a few KiB a vector (a
  // matmul's 16 accumulators a lane are 4 KiB a wave: 10x the fibers'
  // compile time and slower code): such kernels run as fibers.
  uint64_t elements = 0, shuffled = 0;
  for (const llvm::Value *v : varying_) {
    elements += uint64_t(w_) * perLane(v->getType());
    if (llvm::isa<llvm::ExtractElementInst, llvm::InsertElementInst, llvm::ShuffleVectorInst>(v))
      shuffled += uint64_t(w_) * perLane(v->getType());
    if (auto bits = layout_.getTypeSizeInBits(v->getType()).getFixedValue() * w_; bits > kMaxWaveValueBits)
      throw WaveUnsupported("a lane value of " + std::to_string(bits / 8) + " bytes a wave (more than " +
                            std::to_string(kMaxWaveValueBits / 8) + ")");
  }
  // Host code generation time grows with the vector elements the kernel
  // makes (e2e dot tests: 7616 elements 0.1 s, 15872 1.2 s, against ~0.05 s
  // for the fiber form); past kMaxWaveElements the kernel stays on fibers.
  if (std::getenv("TESSEL_DEBUG_WAVE_ELEMENTS"))
    std::fprintf(stderr, "tessel emulator: wave form of '%s': %llu lane elements, %llu shuffled\n",
                 f_.getName().str().c_str(), static_cast<unsigned long long>(elements),
                 static_cast<unsigned long long>(shuffled));
  if (elements > kMaxWaveElements)
    throw WaveUnsupported(std::to_string(elements) + " lane elements (more than " +
                          std::to_string(kMaxWaveElements) + ": slower to compile than the fibers save)");
  // A masked block's values reach the rest only through the join's phis.
  for (auto &[then, region] : maskOf_)
    for (Instruction &inst : *then)
      for (const llvm::User *user : inst.users())
        if (auto *ui = llvm::dyn_cast<Instruction>(user);
            ui && ui->getParent() != then && !(llvm::isa<llvm::PHINode>(ui) && joins_.count(ui->getParent())))
          throw WaveUnsupported("a value of a masked block used past its join");
}

// ---- the rewrite ----------------------------------------------------------

void WaveBuilder::build() {
  checkSupported();
  analyze();
  std::vector<BasicBlock *> oldBlocks;
  for (BasicBlock &bb : f_)
    oldBlocks.push_back(&bb);
  for (BasicBlock *bb : oldBlocks)
    blocks_[bb] = BasicBlock::Create(ctx_, bb->getName(), &f_);
  BasicBlock *entry = blocks_[&f_.getEntryBlock()];
  allocas_ = std::make_unique<llvm::IRBuilder<>>(entry);
  llvm::ReversePostOrderTraversal<llvm::Function *> rpo(&f_);
  std::vector<BasicBlock *> order(rpo.begin(), rpo.end());
  for (BasicBlock *bb : order) {
    if (blocks_.count(bb) == 0)
      continue;
    llvm::IRBuilder<> b(blocks_[bb]);
    for (Instruction &inst : *bb) {
      b.SetCurrentDebugLocation(inst.getDebugLoc());
      emit(b, inst);
    }
    blockEnd_[bb] = b.GetInsertBlock();
  }
  // Phis: their incoming values exist now.
  for (auto &[old, phi] : pendingPhis_) {
    for (unsigned i = 0; i < old->getNumIncomingValues(); ++i) {
      BasicBlock *pred = old->getIncomingBlock(i);
      if (!blockEnd_.count(pred))
        continue; // unreachable predecessor
      BasicBlock *end = blockEnd_[pred];
      llvm::IRBuilder<> b(end->getTerminator());
      Value *in = isVarying(old) ? vec(b, old->getIncomingValue(i)) : scalar(old->getIncomingValue(i));
      phi->addIncoming(in, end);
    }
  }
  // The old body goes; the new entry block first.
  entry->moveBefore(&f_.getEntryBlock());
  for (BasicBlock *bb : oldBlocks)
    bb->dropAllReferences();
  for (BasicBlock *bb : oldBlocks)
    bb->eraseFromParent();
}

// Half and bfloat lane values travel as their bits (i16): the host
// legalizes vectors of those types through f32, which quiets signalling
// NaNs even where the scalar code only moves the bits (a bf16 load,
// extension and store). Moves (loads, stores, selects, phis, shuffles,
// bitcasts) move the i16s; an operation on their values runs lane by lane
// in the scalar code the fibers run (emitPerLane).
// (isHalfLike: emulator_retarget.hpp.)
llvm::Type *WaveBuilder::carried(llvm::Type *t) const {
  return isHalfLike(t) ? shaped(llvm::Type::getInt16Ty(ctx_), t) : t;
}

// Whether `inst` computes with half or bfloat values (not only moves them).
bool WaveBuilder::computesOnHalves(const Instruction &inst) {
  if (llvm::isa<llvm::SelectInst, llvm::PHINode, llvm::ExtractElementInst, llvm::InsertElementInst,
                llvm::ShuffleVectorInst, llvm::FreezeInst, llvm::BitCastInst, llvm::LoadInst, llvm::StoreInst>(inst))
    return false;
  if (isHalfLike(inst.getType()))
    return true;
  for (const Value *op : inst.operands())
    if (isHalfLike(op->getType()))
      return true;
  return false;
}

llvm::Type *WaveBuilder::wide(llvm::Type *t) const {
  if (auto *v = llvm::dyn_cast<llvm::FixedVectorType>(t))
    return llvm::FixedVectorType::get(carried(v->getElementType()), w_ * v->getNumElements());
  if (t->isVectorTy() || t->isAggregateType() || t->isVoidTy() || t->isLabelTy())
    throw WaveUnsupported("a lane value of an unsupported type");
  return llvm::FixedVectorType::get(carried(t), w_);
}

unsigned WaveBuilder::perLane(llvm::Type *t) {
  auto *v = llvm::dyn_cast<llvm::FixedVectorType>(t);
  return v ? v->getNumElements() : 1;
}

Value *WaveBuilder::scalar(Value *v) const {
  if (!llvm::isa<Instruction>(v))
    return v; // arguments (the same function) and constants
  auto it = scalars_.find(v);
  if (it == scalars_.end())
  {
    std::string text;
    llvm::raw_string_ostream os(text);
    v->print(os);
    throw WaveUnsupported("internal: a uniform value used before its definition: " + text);
  }
  return it->second;
}

// Lane l's copy of each element: <n x T> -> <W*n x T> (half and bfloat
// as their bits).
Value *WaveBuilder::splat(llvm::IRBuilder<> &b, Value *s) const {
  if (isHalfLike(s->getType()))
    s = b.CreateBitCast(s, carried(s->getType()));
  if (auto *v = llvm::dyn_cast<llvm::FixedVectorType>(s->getType())) {
    const unsigned n = v->getNumElements();
    llvm::SmallVector<int> mask;
    for (unsigned i = 0; i < w_ * n; ++i)
      mask.push_back(int(i % n));
    return b.CreateShuffleVector(s, mask);
  }
  return b.CreateVectorSplat(w_, s);
}

Value *WaveBuilder::vec(llvm::IRBuilder<> &b, Value *v) {
  if (isVarying(v)) {
    auto it = vectors_.find(v);
    if (it == vectors_.end())
      throw WaveUnsupported("internal: a lane value used before its definition");
    return it->second;
  }
  return splat(b, scalar(v));
}

// Each lane's one value repeated for its n elements: <W x T> -> <W*n x T>.
Value *WaveBuilder::repeatLanes(llvm::IRBuilder<> &b, Value *v, unsigned n) const {
  if (n == 1)
    return v;
  llvm::SmallVector<int> mask;
  for (unsigned i = 0; i < w_ * n; ++i)
    mask.push_back(int(i / n));
  return b.CreateShuffleVector(v, mask);
}

Value *WaveBuilder::laneIndices(llvm::IRBuilder<> &b, unsigned bits) const {
  std::vector<llvm::Constant *> lanes;
  for (unsigned l = 0; l < w_; ++l)
    lanes.push_back(llvm::ConstantInt::get(b.getIntNTy(bits), l));
  return llvm::ConstantVector::get(lanes);
}

void WaveBuilder::emit(llvm::IRBuilder<> &b, Instruction &inst) {
  BasicBlock *bb = inst.getParent();
  if (auto *phi = llvm::dyn_cast<llvm::PHINode>(&inst)) {
    if (auto join = joins_.find(bb); join != joins_.end()) {
      // The join of a masked `if`: lanes that ran the block take its value.
      // (If-else: the lanes that ran the else block take its value.)
      BasicBlock *then = join->second;
      const MaskedRegion &region = maskOf_[then];
      Value *fromThen = vec(b, phi->getIncomingValueForBlock(then));
      Value *fromHead = vec(b, phi->getIncomingValueForBlock(region.next ? region.next : region.head));
      Value *mask = repeatLanes(b, maskValue(b, then), perLane(phi->getType()));
      vectors_[phi] = b.CreateSelect(mask, fromThen, fromHead);
      return;
    }
    llvm::PHINode *made = b.CreatePHI(isVarying(phi) ? wide(phi->getType()) : phi->getType(),
                                      phi->getNumIncomingValues(), phi->getName());
    pendingPhis_.push_back({phi, made});
    (isVarying(phi) ? vectors_ : scalars_)[phi] = made;
    return;
  }
  if (inst.isTerminator())
    return emitTerminator(b, inst);
  if (auto *call = llvm::dyn_cast<CallInst>(&inst)) {
    if (emitCall(b, *call))
      return;
  } else if (llvm::isa<llvm::LoadInst, llvm::StoreInst>(inst)) {
    if (emitMemory(b, inst))
      return;
  } else if (auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst)) {
    vectors_[rmw] = emitAtomic(b, *rmw);
    return;
  }
  if (!isVarying(&inst)) {
    // Uniform: once per wave, as it was.
    // An operand that differs between lanes (`tid >> 6`'s tid): the result
    // is the same in every lane, so lane 0's computes it.
    Instruction *copy = inst.clone();
    for (llvm::Use &op : copy->operands())
      op.set(isVarying(op.get()) ? laneZero(b, op.get()) : scalar(op.get()));
    b.Insert(copy, inst.getName());
    if (!inst.getType()->isVoidTy())
      scalars_[&inst] = copy;
    return;
  }
  vectors_[&inst] = emitLaneOp(b, inst);
}


void WaveBuilder::emitTerminator(llvm::IRBuilder<> &b, Instruction &inst) {
  if (auto *br = llvm::dyn_cast<llvm::BranchInst>(&inst)) {
    if (auto region = maskOf_.find(inst.getParent()); region != maskOf_.end() && region->second.next) {
      b.CreateBr(blocks_.at(region->second.next)); // an if-else's first block: on to the second
      return;
    }
    if (br->isConditional() && isVarying(br->getCondition())) {
      // The masked block runs for every wave; its accesses carry the mask.
      // (getSuccessor's order: successors() lists a branch's false target first.)
      for (unsigned i : {0u, 1u})
        if (maskOf_.count(br->getSuccessor(i))) {
          b.CreateBr(blocks_.at(br->getSuccessor(i)));
          return;
        }
    }
  }
  if (llvm::isa<llvm::SwitchInst>(inst) || llvm::isa<llvm::BranchInst>(inst) || llvm::isa<llvm::ReturnInst>(inst) ||
      llvm::isa<llvm::UnreachableInst>(inst)) {
    Instruction *copy = inst.clone();
    for (llvm::Use &op : copy->operands()) {
      if (auto *target = llvm::dyn_cast<BasicBlock>(op.get()))
        op.set(blocks_.at(target));
      else
        op.set(scalar(op.get()));
    }
    b.Insert(copy);
    return;
  }
  throw WaveUnsupported(std::string("the terminator ") + inst.getOpcodeName());
}

// Lane 0's value of a lane value of a scalar type.
Value *WaveBuilder::laneZero(llvm::IRBuilder<> &b, Value *v) {
  Value *first = b.CreateExtractElement(vec(b, v), uint64_t(0));
  return isHalfLike(v->getType()) ? b.CreateBitCast(first, v->getType()) : first;
}

Value *WaveBuilder::maskValue(llvm::IRBuilder<> &b, BasicBlock *then) {
  const MaskedRegion &region = maskOf_.at(then);
  Value *c = vec(b, region.condition);
  return region.negated ? b.CreateNot(c) : c;
}

// A lane operation without side effects, on vectors.
Value *WaveBuilder::emitLaneOp(llvm::IRBuilder<> &b, Instruction &inst) {
  if (computesOnHalves(inst))
    return emitPerLane(b, inst);
  if (auto *bin = llvm::dyn_cast<llvm::BinaryOperator>(&inst)) {
    Value *r = b.CreateBinOp(bin->getOpcode(), vec(b, bin->getOperand(0)), vec(b, bin->getOperand(1)), inst.getName());
    if (auto *ri = llvm::dyn_cast<Instruction>(r))
      ri->copyIRFlags(&inst);
    return r;
  }
  if (auto *un = llvm::dyn_cast<llvm::UnaryOperator>(&inst)) {
    Value *r = b.CreateUnOp(un->getOpcode(), vec(b, un->getOperand(0)), inst.getName());
    if (auto *ri = llvm::dyn_cast<Instruction>(r))
      ri->copyIRFlags(&inst);
    return r;
  }
  if (auto *cmp = llvm::dyn_cast<llvm::CmpInst>(&inst)) {
    Value *r = b.CreateCmp(cmp->getPredicate(), vec(b, cmp->getOperand(0)), vec(b, cmp->getOperand(1)), inst.getName());
    if (auto *ri = llvm::dyn_cast<Instruction>(r))
      ri->copyIRFlags(&inst);
    return r;
  }
  if (auto *cast = llvm::dyn_cast<llvm::CastInst>(&inst))
    return b.CreateCast(cast->getOpcode(), vec(b, cast->getOperand(0)), wide(cast->getDestTy()), inst.getName());
  if (auto *fr = llvm::dyn_cast<llvm::FreezeInst>(&inst))
    return b.CreateFreeze(vec(b, fr->getOperand(0)), inst.getName());
  if (auto *sel = llvm::dyn_cast<llvm::SelectInst>(&inst)) {
    Value *c = sel->getCondition();
    Value *cv;
    if (!isVarying(c) && !c->getType()->isVectorTy())
      cv = scalar(c); // one choice for the wave
    else if (c->getType()->isVectorTy()) // a choice per element: per element of each lane
      cv = vec(b, c);
    else
      cv = repeatLanes(b, vec(b, c), perLane(sel->getType()));
    Value *r = b.CreateSelect(cv, vec(b, sel->getTrueValue()), vec(b, sel->getFalseValue()), inst.getName());
    if (auto *ri = llvm::dyn_cast<Instruction>(r); ri && llvm::isa<llvm::FPMathOperator>(ri))
      ri->copyFastMathFlags(&inst);
    return r;
  }
  if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(&inst)) {
    llvm::SmallVector<Value *> indices;
    for (auto it = llvm::gep_type_begin(gep); it != llvm::gep_type_end(gep); ++it) {
      if (it.isStruct()) {
        indices.push_back(it.getOperand()); // a constant field number
        continue;
      }
      if (it.getOperand()->getType()->isVectorTy())
        throw WaveUnsupported("a vector getelementptr");
      indices.push_back(vec(b, it.getOperand()));
    }
    return b.CreateGEP(gep->getSourceElementType(), vec(b, gep->getPointerOperand()), indices, inst.getName(),
                       gep->getNoWrapFlags());
  }
  if (auto *ex = llvm::dyn_cast<llvm::ExtractElementInst>(&inst)) {
    auto *index = llvm::dyn_cast<llvm::ConstantInt>(ex->getIndexOperand());
    const unsigned n = perLane(ex->getVectorOperandType());
    if (!index || index->getZExtValue() >= n)
      throw WaveUnsupported("an extractelement at a variable index");
    llvm::SmallVector<int> mask;
    for (unsigned l = 0; l < w_; ++l)
      mask.push_back(int(l * n + index->getZExtValue()));
    return b.CreateShuffleVector(vec(b, ex->getVectorOperand()), mask, inst.getName());
  }
  if (auto *ins = llvm::dyn_cast<llvm::InsertElementInst>(&inst)) {
    auto *index = llvm::dyn_cast<llvm::ConstantInt>(ins->getOperand(2));
    const unsigned n = perLane(ins->getType());
    if (!index || index->getZExtValue() >= n)
      throw WaveUnsupported("an insertelement at a variable index");
    Value *element = repeatLanes(b, vec(b, ins->getOperand(1)), n);
    llvm::SmallVector<int> mask;
    for (unsigned i = 0; i < w_ * n; ++i)
      mask.push_back(i % n == index->getZExtValue() ? int(w_ * n + i) : int(i));
    return b.CreateShuffleVector(vec(b, ins->getOperand(0)), element, mask, inst.getName());
  }
  if (auto *sh = llvm::dyn_cast<llvm::ShuffleVectorInst>(&inst)) {
    const unsigned n = perLane(sh->getOperand(0)->getType()), m = perLane(sh->getType());
    llvm::SmallVector<int> mask;
    for (unsigned l = 0; l < w_; ++l)
      for (unsigned j = 0; j < m; ++j) {
        const int e = sh->getMaskValue(j);
        mask.push_back(e < 0 ? llvm::PoisonMaskElem
                             : e < int(n) ? int(l * n + unsigned(e)) : int(w_ * n + l * n + unsigned(e) - n));
      }
    return b.CreateShuffleVector(vec(b, sh->getOperand(0)), vec(b, sh->getOperand(1)), mask, inst.getName());
  }
  throw WaveUnsupported(std::string("the instruction ") + inst.getOpcodeName() + " on lane values");
}

bool WaveBuilder::emitCall(llvm::IRBuilder<> &b, CallInst &call) {
  const llvm::Intrinsic::ID id = call.getIntrinsicID();
  if (id == llvm::Intrinsic::assume)
    return true; // facts about lanes; the host does not need them
  if (amdgcnName(call))
    return emitAmdgcn(b, call);
  if (!isVarying(&call))
    return false; // uniform: cloned
  if (id != llvm::Intrinsic::not_intrinsic && elementwiseIntrinsic(id) && !computesOnHalves(call)) {
    llvm::SmallVector<Value *> args;
    for (Value *arg : call.args())
      args.push_back(arg->getType()->isIntegerTy(1) && !isVarying(arg) && id != llvm::Intrinsic::fshl
                         ? scalar(arg) // abs/ctlz/cttz's flag
                         : vec(b, arg));
    Value *r = b.CreateIntrinsic(wide(call.getType()), id, args, nullptr, call.getName());
    if (auto *ri = llvm::dyn_cast<Instruction>(r); ri && llvm::isa<llvm::FPMathOperator>(ri))
      ri->copyFastMathFlags(&call);
    vectors_[&call] = r;
    return true;
  }
  vectors_[&call] = emitPerLane(b, call);
  return true;
}

void buildWaveKernel(llvm::Function &kernel, unsigned waveSize, SanitizeMode sanitize) {
  WaveBuilder builder(kernel, waveSize, sanitize);
  builder.build();
  if (const char *dump = std::getenv("TESSEL_DEBUG_WAVE_DUMP")) {
    std::error_code ec;
    static int counter = 0;
    llvm::raw_fd_ostream os(std::string(dump) + std::to_string(counter++), ec);
    kernel.print(os);
  }
}

} // namespace tessel::emu
