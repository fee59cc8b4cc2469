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

#include <algorithm>
#include <vector>

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

  // term += scale, false when it would overflow int64.
  static bool accumulate(int64_t &term, int64_t scale) { return !__builtin_add_overflow(term, scale, &term); }
  // scale * factor as a scale, false when it would overflow int64.
  static bool times(int64_t scale, int64_t factor, int64_t &product) {
    return !__builtin_mul_overflow(scale, factor, &product);
  }

  // Adds scale * v to `into`; false when v is not of the form, or a scale
  // or sum would overflow int64 (an offset the lanes cannot be told apart by).
  bool add(const llvm::Value *v, int64_t scale, LaneAddress &into, unsigned depth = 0) {
    // Bounded depth and scales.
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
    if (isWorkitemIdX(v))
      return accumulate(into.laneStride, scale) && accumulate(into.uniform[v], scale);
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
      case llvm::Instruction::Mul: {
        int64_t product;
        if (auto c = constantOperand(1))
          return times(scale, *c, product) && add(op->getOperand(0), product, into, depth + 1);
        if (auto c = constantOperand(0))
          return times(scale, *c, product) && add(op->getOperand(1), product, into, depth + 1);
        break;
      }
      case llvm::Instruction::Shl: {
        int64_t product;
        if (auto c = constantOperand(1); c && *c >= 0 && *c < 32)
          return times(scale, int64_t(1) << *c, product) && add(op->getOperand(0), product, into, depth + 1);
        break;
      }
      case llvm::Instruction::ZExt:
      case llvm::Instruction::SExt:
        return addWidened(op->getOperand(0), scale, into, depth + 1);
      case llvm::Instruction::And:
        // id & (waveSize - 1): the lane.
        if (auto c = constantOperand(1); c && *c == int64_t(waveSize) - 1 && isWorkitemIdX(op->getOperand(0)))
          return accumulate(into.laneStride, scale);
        break;
      case llvm::Instruction::LShr:
        // id >> log2(waveSize) (or more): alike in the wave.
        if (auto c = constantOperand(1);
            c && *c >= int64_t(llvm::Log2_32(waveSize)) && *c < 32 && isWorkitemIdX(op->getOperand(0)))
          return accumulate(into.uniform[v], scale);
        break;
      default:
        break;
      }
    }
    if (uniformity.isUniform(v))
      return accumulate(into.uniform[v], scale);
    return false;
  }

  // Adds scale * v for v an integer of fewer than 64 bits made wider (an
  // extension, a GEP index, a buffer offset). v's own arithmetic wraps
  // modulo 2^bits, which its terms describe exactly; the wider value
  // follows them only while no two lanes' values straddle a wrap: the lane
  // part's spread over the wave must fit in bits - 1 bits (the uniform part
  // is taken not to wrap, as the kernel's own indexing does not). Else
  // (tid * 2^32 in i32 is 0 in every lane) there is no lane address.
  bool addWidened(const llvm::Value *v, int64_t scale, LaneAddress &into, unsigned depth = 0) {
    const unsigned bits = v->getType()->getScalarSizeInBits();
    if (bits >= 64)
      return add(v, scale, into, depth);
    LaneAddress inner;
    if (bits == 0 || !add(v, 1, inner, depth))
      return false;
    const __int128 spread = __int128(inner.laneStride) * (waveSize - 1);
    if (spread >= (__int128(1) << (bits - 1)) || -spread >= (__int128(1) << (bits - 1)))
      return false;
    int64_t term;
    if (!times(inner.laneStride, scale, term) || !accumulate(into.laneStride, term) ||
        !times(inner.constant, scale, term) || !accumulate(into.constant, term))
      return false;
    for (const auto &[u, coefficient] : inner.uniform)
      if (!times(coefficient, scale, term) || !accumulate(into.uniform[u], term))
        return false;
    return true;
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
      for (auto &[value, scale] : variable) // (an index narrower than 64 bits is sign-extended)
        if (!addWidened(value, scale.getSExtValue(), into, depth + 1))
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
    ok = d.addWidened(call->getArgOperand(first + 1), 1, address) &&
         d.addWidened(call->getArgOperand(first + 2), 1, address);
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
  // constants alone. Each access's lanes are W intervals (in 128 bits: a
  // stride times a lane below 2^16 plus a constant cannot overflow); swept
  // in order of their starts, an interval meets an earlier-starting one of
  // the other access iff that one ends past its start. Of the earlier ones
  // only the two that end last matter: one of them is of another lane
  // (each lane has one interval an access).
  struct Span {
    __int128 start, end;
    unsigned lane;
    bool ofB;
  };
  std::vector<Span> spans;
  spans.reserve(2 * size_t(waveSize));
  for (unsigned lane = 0; lane < waveSize; ++lane)
    for (const LaneAddress *x : {&a, &b}) {
      const __int128 start = __int128(x->laneStride) * lane + x->constant;
      spans.push_back({start, start + __int128(x->bytes), lane, x == &b});
    }
  std::sort(spans.begin(), spans.end(), [](const Span &p, const Span &q) { return p.start < q.start; });
  struct Latest {
    __int128 end;
    unsigned lane;
  };
  const Latest none{-(__int128(1) << 120), ~0u}; // below every start
  Latest first[2] = {none, none}, second[2] = {none, none}; // per access: the two largest ends so far
  for (const Span &s : spans) {
    const unsigned other = s.ofB ? 0 : 1;
    const __int128 reach = first[other].lane != s.lane ? first[other].end : second[other].end;
    if (reach > s.start)
      return true; // a lane's own accesses keep their order: only other lanes count
    Latest &top = first[s.ofB], &next = second[s.ofB];
    if (s.end > top.end) {
      next = top;
      top = {s.end, s.lane};
    } else if (s.end > next.end) {
      next = {s.end, s.lane};
    }
  }
  return false;
}

} // namespace tessel::emu
