// Lane addresses of memory accesses (see emulator_lane_address.hpp): an
// access's offset from a base every lane holds alike, split into the lane's
// part (a multiple of the lane within the wave), values alike in every lane
// of the wave, and a constant.
#include "emulator_lane_address.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Operator.h>
#include <llvm/Support/MathExtras.h>

namespace tessel::emu {
namespace {

bool isWorkitemIdX(const llvm::Value *v) {
  auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(v);
  return call && call->getIntrinsicID() == llvm::Intrinsic::amdgcn_workitem_id_x;
}

struct Decomposer {
  const llvm::DataLayout &layout;
  const llvm::UniformityInfo &uniformity;
  const llvm::CycleInfo &cycles;
  const llvm::BasicBlock *at; // the access's block
  unsigned waveSize;

  // Adds scale * v to `into`; false when v is not of the form.
  bool add(const llvm::Value *v, int64_t scale, LaneAddress &into, unsigned depth = 0) {
    // Bounded depth and scales: no term's arithmetic can overflow.
    if (depth > 16 || scale > (int64_t(1) << 32) || scale < -(int64_t(1) << 32) || leavesCycle(v, at, cycles))
      return false;
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
      int64_t term;
      if (c->getBitWidth() > 64 || __builtin_mul_overflow(scale, c->getSExtValue(), &term) ||
          __builtin_add_overflow(into.constant, term, &into.constant))
        return false;
      return true;
    }
    // The work-item id x is the lane plus the wave's first work-item (alike
    // in the wave: the id itself stands for it).
    if (isWorkitemIdX(v)) {
      into.laneStride += scale;
      into.uniform[v] += scale;
      return true;
    }
    if (auto *op = llvm::dyn_cast<llvm::Instruction>(v)) {
      auto constantOperand = [&](unsigned i) -> std::optional<int64_t> {
        auto *c = llvm::dyn_cast<llvm::ConstantInt>(op->getOperand(i));
        if (!c || c->getBitWidth() > 64)
          return std::nullopt;
        return c->getSExtValue();
      };
      switch (op->getOpcode()) {
      case llvm::Instruction::Add:
        return add(op->getOperand(0), scale, into, depth + 1) && add(op->getOperand(1), scale, into, depth + 1);
      case llvm::Instruction::Or:
        if (llvm::cast<llvm::PossiblyDisjointInst>(op)->isDisjoint())
          return add(op->getOperand(0), scale, into, depth + 1) && add(op->getOperand(1), scale, into, depth + 1);
        break;
      case llvm::Instruction::Sub:
        return add(op->getOperand(0), scale, into, depth + 1) && add(op->getOperand(1), -scale, into, depth + 1);
      case llvm::Instruction::Mul:
        if (auto c = constantOperand(1))
          return add(op->getOperand(0), scale * *c, into, depth + 1);
        if (auto c = constantOperand(0))
          return add(op->getOperand(1), scale * *c, into, depth + 1);
        break;
      case llvm::Instruction::Shl:
        if (auto c = constantOperand(1); c && *c >= 0 && *c < 32)
          return add(op->getOperand(0), scale * (int64_t(1) << *c), into, depth + 1);
        break;
      case llvm::Instruction::ZExt:
      case llvm::Instruction::SExt:
        return add(op->getOperand(0), scale, into, depth + 1);
      case llvm::Instruction::And:
        // id & (waveSize - 1): the lane.
        if (auto c = constantOperand(1); c && *c == int64_t(waveSize) - 1 && isWorkitemIdX(op->getOperand(0))) {
          into.laneStride += scale;
          return true;
        }
        break;
      case llvm::Instruction::LShr:
        // id >> log2(waveSize) (or more): alike in the wave.
        if (auto c = constantOperand(1);
            c && *c >= int64_t(llvm::Log2_32(waveSize)) && *c < 32 && isWorkitemIdX(op->getOperand(0))) {
          into.uniform[v] += scale;
          return true;
        }
        break;
      default:
        break;
      }
    }
    if (uniformity.isUniform(v)) {
      into.uniform[v] += scale;
      return true;
    }
    return false;
  }

  // The base and offset of a pointer.
  bool pointer(const llvm::Value *p, LaneAddress &into, unsigned depth = 0) {
    if (depth > 16 || leavesCycle(p, at, cycles))
      return false;
    if (auto *gep = llvm::dyn_cast<llvm::GEPOperator>(p)) {
      const unsigned bits = layout.getIndexTypeSizeInBits(gep->getType());
      llvm::SmallMapVector<llvm::Value *, llvm::APInt, 4> variable;
      llvm::APInt constant(bits, 0);
      if (bits > 64 || !gep->collectOffset(layout, bits, variable, constant))
        return false;
      if (__builtin_add_overflow(into.constant, constant.getSExtValue(), &into.constant))
        return false;
      for (auto &[value, scale] : variable)
        if (!add(value, scale.getSExtValue(), into, depth + 1))
          return false;
      return pointer(gep->getPointerOperand(), into, depth + 1);
    }
    if (!uniformity.isUniform(p))
      return false;
    into.base = p;
    return true;
  }
};

} // namespace

bool leavesCycle(const llvm::Value *v, const llvm::BasicBlock *at, const llvm::CycleInfo &cycles) {
  auto *inst = llvm::dyn_cast<llvm::Instruction>(v);
  if (!inst)
    return false;
  const llvm::Cycle *cycle = cycles.getCycle(inst->getParent());
  return cycle && !cycle->contains(at);
}

std::optional<LaneAddress> laneAddressOf(llvm::Instruction &access, const llvm::DataLayout &layout,
                                         const llvm::UniformityInfo &uniformity, const llvm::CycleInfo &cycles,
                                         unsigned waveSize) {
  if (waveSize == 0 || !llvm::isPowerOf2_32(waveSize))
    return std::nullopt;
  Decomposer d{layout, uniformity, cycles, access.getParent(), waveSize};
  LaneAddress address;
  llvm::Type *type = nullptr;
  bool ok = false;
  if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&access)) {
    type = load->getType();
    ok = d.pointer(load->getPointerOperand(), address);
  } else if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&access)) {
    type = store->getValueOperand()->getType();
    ok = d.pointer(store->getPointerOperand(), address);
  } else if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&access)) {
    // raw.ptr.buffer.load(rsrc, voffset, soffset, aux) and
    // raw.ptr.buffer.store(data, rsrc, voffset, soffset, aux): the bytes at
    // the resource's base + voffset + soffset.
    unsigned first;
    switch (call->getIntrinsicID()) {
    case llvm::Intrinsic::amdgcn_raw_ptr_buffer_load:
      first = 0;
      type = call->getType();
      break;
    case llvm::Intrinsic::amdgcn_raw_ptr_buffer_store:
      first = 1;
      type = call->getArgOperand(0)->getType();
      break;
    default:
      return std::nullopt;
    }
    const llvm::Value *resource = call->getArgOperand(first);
    if (!uniformity.isUniform(resource) || leavesCycle(resource, access.getParent(), cycles))
      return std::nullopt;
    address.base = resource;
    ok = d.add(call->getArgOperand(first + 1), 1, address) && d.add(call->getArgOperand(first + 2), 1, address);
  }
  if (!ok || !type || !type->isSized())
    return std::nullopt;
  address.bytes = layout.getTypeStoreSize(type).getKnownMinValue();
  if (address.bytes == 0 || layout.getTypeStoreSize(type).isScalable())
    return std::nullopt;
  std::erase_if(address.uniform, [](const auto &term) { return term.second == 0; });
  return address;
}

bool mayOverlapAcrossLanes(const LaneAddress &a, const LaneAddress &b, unsigned waveSize) {
  if (a.base != b.base || a.uniform != b.uniform)
    return true; // nothing known of the difference of the two offsets
  // The same uniform part: the offsets differ by the lanes' parts and the
  // constants alone. Every pair of distinct lanes, checked (waveSize <= 64).
  for (int64_t l1 = 0; l1 < int64_t(waveSize); ++l1)
    for (int64_t l2 = 0; l2 < int64_t(waveSize); ++l2) {
      if (l1 == l2)
        continue; // a lane's own accesses keep their order
      const __int128 startA = __int128(a.laneStride) * l1 + a.constant, startB = __int128(b.laneStride) * l2 + b.constant;
      if (startA < startB + __int128(b.bytes) && startB < startA + __int128(a.bytes))
        return true;
    }
  return false;
}

} // namespace tessel::emu
