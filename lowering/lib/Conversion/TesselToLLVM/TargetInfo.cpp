#include "TargetInfo.h"
#include "tessel/lowering/target.hpp"
#include "TypeConverter.h"
#include "Utility.h"

#include "tessel/Dialect/Tessel/IR/Layouts.h"

#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

using namespace mlir;
using namespace mlir::tessel;

TargetInfo::TargetInfo(StringRef arch, unsigned waveSize, unsigned numWarps)
    : arch_(arch.str()), facts_(::tessel::lookupTarget(arch_)), waveSize_(waveSize),
      numWarps_(numWarps) {}

TargetInfo::Ids &TargetInfo::idsAt(OpBuilder &b, Location loc) const {
  Operation *kernel = b.getInsertionBlock()->getParentOp();
  while (kernel && !isa<LLVM::LLVMFuncOp>(kernel))
    kernel = kernel->getParentOp();
  Ids &ids = ids_[kernel];
  if (!ids.thread) {
    OpBuilder::InsertionGuard guard(b);
    if (kernel)
      b.setInsertionPointToStart(&cast<LLVM::LLVMFuncOp>(kernel).getBody().front());
    // The workgroup is exactly numWarps x waveSize threads: the id's range
    // lets LLVM fold index compares that hold for every thread (the first
    // slots of a row under assume(N > BLOCK / 2)) and drop overflow checks.
    auto range = LLVM::ConstantRangeAttr::get(b.getContext(), 32, 0, int64_t(numWarps_) * waveSize_);
    ids.thread = b.create<ROCDL::ThreadIdXOp>(loc, b.getI32Type(), range);
    ids.lane = b.create<LLVM::AndOp>(loc, ids.thread, i32Value(b, loc, waveSize_ - 1));
    ids.wave = b.create<LLVM::LShrOp>(loc, ids.thread, i32Value(b, loc, llvm::Log2_32(waveSize_)));
  }
  return ids;
}

Value TargetInfo::threadId(OpBuilder &b, Location loc) const { return idsAt(b, loc).thread; }
Value TargetInfo::laneId(OpBuilder &b, Location loc) const { return idsAt(b, loc).lane; }
Value TargetInfo::waveId(OpBuilder &b, Location loc) const { return idsAt(b, loc).wave; }

Value TargetInfo::programId(OpBuilder &b, Location loc, unsigned axis) const {
  Type i32 = b.getI32Type();
  switch (axis) {
  case 0: return b.create<ROCDL::BlockIdXOp>(loc, i32);
  case 1: return b.create<ROCDL::BlockIdYOp>(loc, i32);
  default: return b.create<ROCDL::BlockIdZOp>(loc, i32);
  }
}

Value TargetInfo::numPrograms(OpBuilder &b, Location loc, unsigned axis) const {
  // grid_size_{x,y,z} (work-items) sit at bytes 12/16/20 of the dispatch
  // packet; workgroups are blockSize x 1 x 1 threads.
  auto ptr4 = LLVM::LLVMPointerType::get(b.getContext(), kConstantAddressSpace);
  Value packet = b.create<LLVM::CallIntrinsicOp>(loc, ptr4, b.getStringAttr("llvm.amdgcn.dispatch.ptr"),
                                                 ValueRange{})
                     .getResult(0);
  Value field = b.create<LLVM::GEPOp>(loc, ptr4, b.getI8Type(), packet,
                                      ArrayRef<LLVM::GEPArg>{int32_t(12 + 4 * axis)});
  Value size = b.create<LLVM::LoadOp>(loc, b.getI32Type(), field, /*alignment=*/4);
  if (axis == 0)
    size = b.create<LLVM::UDivOp>(loc, size, i32Value(b, loc, numWarps_ * waveSize_));
  return size;
}

void TargetInfo::barrier(OpBuilder &b, Location loc) const {
  b.create<LLVM::FenceOp>(loc, LLVM::AtomicOrdering::release, "workgroup");
  b.create<ROCDL::SBarrierOp>(loc);
  b.create<LLVM::FenceOp>(loc, LLVM::AtomicOrdering::acquire, "workgroup");
}

void TargetInfo::ldsBarrier(OpBuilder &b, Location loc) const {
  // "amdgpu-synchronize-as":"local" (LLVM's memory model relaxation
  // annotations): the fence orders LDS accesses only.
  auto localOnly = LLVM::MMRATagAttr::get(b.getContext(), "amdgpu-synchronize-as", "local");
  StringRef mmra = LLVM::LLVMDialect::getMmraAttrName();
  b.create<LLVM::FenceOp>(loc, LLVM::AtomicOrdering::release, "workgroup")->setAttr(mmra, localOnly);
  b.create<ROCDL::SBarrierOp>(loc);
  b.create<LLVM::FenceOp>(loc, LLVM::AtomicOrdering::acquire, "workgroup")->setAttr(mmra, localOnly);
}

void TargetInfo::endLdsScratch(OpBuilder &b, Location loc, Operation *op) const {
  if (!tesselDialect(op->getContext()).getLdsNoReuseAttrHelper().isAttrPresent(op))
    ldsBarrier(b, loc);
}

Value TargetInfo::moveAcrossLanes(OpBuilder &b, Location loc, Value v, const std::function<Value(Value)> &move32,
                                  bool anyWord) const {
  Type t = v.getType();
  Type i32 = b.getI32Type();
  unsigned bits = t.getIntOrFloatBitWidth();
  if (anyWord && bits == 32)
    return move32(v);
  if (bits == 64) {
    auto pair = VectorType::get({2}, i32);
    Value asPair = b.create<LLVM::BitcastOp>(loc, pair, v);
    Value out = b.create<LLVM::UndefOp>(loc, pair);
    for (int h = 0; h < 2; ++h) {
      Value part = b.create<LLVM::ExtractElementOp>(loc, asPair, i32Value(b, loc, h));
      out = b.create<LLVM::InsertElementOp>(loc, out, move32(part), i32Value(b, loc, h));
    }
    return b.create<LLVM::BitcastOp>(loc, t, out);
  }
  Type intT = b.getIntegerType(bits);
  Value asInt = isa<FloatType>(t) ? Value(b.create<LLVM::BitcastOp>(loc, intT, v)) : v;
  Value wide = bits == 32 ? asInt : Value(b.create<LLVM::ZExtOp>(loc, i32, asInt));
  Value moved = move32(wide);
  Value narrow = bits == 32 ? moved : Value(b.create<LLVM::TruncOp>(loc, intT, moved));
  return isa<FloatType>(t) ? Value(b.create<LLVM::BitcastOp>(loc, t, narrow)) : narrow;
}

Value TargetInfo::shuffle(OpBuilder &b, Location loc, Value v, Value srcLane) const {
  Value addr = b.create<LLVM::ShlOp>(
      loc, b.create<LLVM::AndOp>(loc, srcLane, i32Value(b, loc, waveSize_ - 1)), i32Value(b, loc, 2));
  return moveAcrossLanes(b, loc, v, [&](Value x) -> Value {
    return b.create<ROCDL::DsBpermuteOp>(loc, b.getI32Type(), addr, x);
  });
}

namespace {
// DPP row controls (GFX9 and GFX11 alike).
constexpr int32_t kDppQuadXor1 = 0xB1;   // quad_perm [1, 0, 3, 2]
constexpr int32_t kDppQuadXor2 = 0x4E;   // quad_perm [2, 3, 0, 1]
constexpr int32_t kDppHalfMirror = 0x141; // lane i <-> 7 - i within 8
constexpr int32_t kDppMirror = 0x140;     // lane i <-> 15 - i within 16
constexpr int32_t kDppRowBcast15 = 0x142; // the last lane of the row before (gfx9)
constexpr int32_t kDppRowBcast31 = 0x143; // lane 31, to rows 2 and 3 (gfx9)
} // namespace

Value TargetInfo::butterflyPartner(OpBuilder &b, Location loc, Value v, int64_t distance,
                                   bool lowerBitsReduced) const {
  // Within a row of 16 lanes DPP moves the value without the LDS hardware.
  int32_t ctrl = distance == 1   ? kDppQuadXor1
                 : distance == 2 ? kDppQuadXor2
                 : distance == 4 && lowerBitsReduced ? kDppHalfMirror
                 : distance == 8 && lowerBitsReduced ? kDppMirror
                                                     : 0;
  // Across the two rows of 16 (gfx10 on): each lane reads the same lane of
  // the other row (selects 0-15 in order), one VALU instruction. Every lane
  // has a source, so the old value (vdst, tied) is never read: poison lets
  // the register allocator write the result anywhere, where `x` as old
  // cost a v_mov to keep x for the combine.
  if (!ctrl && distance == 16 && hasSwapRows())
    return swapRows(b, loc, v);
  if (!ctrl)
    return shuffle(b, loc, v,
                   b.create<LLVM::XOrOp>(loc, laneId(b, loc), i32Value(b, loc, distance)));
  return moveAcrossLanes(
      b, loc, v,
      [&](Value x) -> Value {
        return b.create<ROCDL::DPPUpdateOp>(loc, x.getType(), x, x, ctrl, /*rowMask=*/0xF,
                                            /*bankMask=*/0xF, /*boundCtrl=*/true);
      },
      /*anyWord=*/true);
}

bool TargetInfo::hasSwapRows() const { return facts_ && facts_->permlaneX16; }

Value TargetInfo::swapRows(OpBuilder &b, Location loc, Value v) const {
  return moveAcrossLanes(b, loc, v, [&](Value x) -> Value {
    Value unused = b.create<LLVM::PoisonOp>(loc, x.getType());
    return b.create<ROCDL::PermlaneX16Op>(loc, x.getType(), unused, x, i32Value(b, loc, 0x76543210),
                                          i32Value(b, loc, int32_t(0xfedcba98)), /*fi=*/false,
                                          /*boundControl=*/true);
  });
}

bool TargetInfo::hasRowBroadcast() const {
  return facts_ && facts_->dppRowBroadcast && waveSize_ == 64;
}

bool TargetInfo::hasPackedF32() const { return facts_ && facts_->packedF32; }

bool TargetInfo::convertsFp8(Type elem) const {
  std::optional<::tessel::DType> t = dtypeOf(elem);
  return facts_ && t && facts_->convertsFp8(*t);
}

Value TargetInfo::rowBroadcast(OpBuilder &b, Location loc, Value v, int lastLane) const {
  // Every row takes part (rows without a source, row 0 for row_bcast:15 and
  // rows 0-1 for row_bcast:31, read 0): with full masks and bound_ctrl LLVM
  // folds the move into the combine (v_max_f32_dpp ... row_bcast:15).
  assert((lastLane == 15 || lastLane == 31) && "row_bcast:15 or row_bcast:31");
  const int32_t ctrl = lastLane == 15 ? kDppRowBcast15 : kDppRowBcast31;
  return moveAcrossLanes(
      b, loc, v,
      [&](Value x) -> Value {
        Value unused = b.create<LLVM::PoisonOp>(loc, x.getType());
        return b.create<ROCDL::DPPUpdateOp>(loc, x.getType(), unused, x, ctrl, /*rowMask=*/0xF,
                                            /*bankMask=*/0xF, /*boundCtrl=*/true);
      },
      /*anyWord=*/true);
}

Value TargetInfo::readLane(OpBuilder &b, Location loc, Value v, int lane) const {
  return moveAcrossLanes(b, loc, v, [&](Value x) -> Value {
    return b.create<ROCDL::ReadlaneOp>(loc, x.getType(), x, i32Value(b, loc, lane));
  });
}

namespace {
Value ldsPointer(OpBuilder &b, Location loc, Value address) {
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), kLdsAddressSpace);
  Value base = b.create<LLVM::AddressOfOp>(loc, ptr3, TargetInfo::kLdsSymbol);
  return b.create<LLVM::GEPOp>(loc, ptr3, b.getI8Type(), base, ValueRange{address});
}
Value planned(OpBuilder &b, Location loc, Operation *op, Value byteOffset) {
  return b.create<LLVM::AddOp>(loc, byteOffset, i32Value(b, loc, ldsOffset(op)));
}
} // namespace

Value TargetInfo::ldsAddress(OpBuilder &b, Location loc, Value address) const { return ldsPointer(b, loc, address); }

ArrayAttr TargetInfo::asyncCopyScopes(MLIRContext *ctx) {
  auto domain = LLVM::AliasScopeDomainAttr::get(ctx, StringAttr::get(ctx, "tessel.lds"), StringAttr());
  auto scope = LLVM::AliasScopeAttr::get(ctx, StringAttr::get(ctx, "tessel.lds.async_copies"), domain, StringAttr());
  return ArrayAttr::get(ctx, {scope});
}

void TargetInfo::waitVectorMemory(OpBuilder &b, Location loc) const {
  // vmcnt 0 (bits 3:0 and 15:14), expcnt 7 (6:4) and lgkmcnt 15 (11:8): no wait on those.
  constexpr int32_t kVmcntZero = 0x0F70;
  b.create<ROCDL::SWaitcntOp>(loc, kVmcntZero);
}

void TargetInfo::ldsStore(OpBuilder &b, Location loc, Value address, Value v) const {
  if (v.getType().isInteger(1))
    v = b.create<LLVM::ZExtOp>(loc, b.getI8Type(), v);
  b.create<LLVM::StoreOp>(loc, v, ldsPointer(b, loc, address));
}

Value TargetInfo::ldsLoad(OpBuilder &b, Location loc, Value address, Type t) const {
  Type stored = t.isInteger(1) ? b.getI8Type() : t;
  Value v = b.create<LLVM::LoadOp>(loc, stored, ldsPointer(b, loc, address));
  return t.isInteger(1) ? Value(b.create<LLVM::TruncOp>(loc, t, v)) : v;
}

bool TargetInfo::hasLdsTransposeReads() const { return facts_ && facts_->ldsTransposeReads; }

bool TargetInfo::hasMinimumMaximum() const { return facts_ && facts_->minimumMaximum; }

Value TargetInfo::ldsTransposedLoad(OpBuilder &b, Location loc, Value address, Type elem, int64_t elems) const {
  // ds_read_b64_tr_b8 returns two dwords (LLVM's <2 x i32>); _b16 four
  // 16-bit elements of the type asked for.
  // (ROCDL's ops, not an llvm.call_intrinsic: they take alias scopes, which
  // a read of a slot loads to LDS filled needs: asyncCopyScopes.)
  const bool bytes = elem.getIntOrFloatBitWidth() == 8;
  Value pointer = ldsPointer(b, loc, address);
  if (!bytes)
    return b.create<ROCDL::ds_read_tr16_b64>(loc, VectorType::get({elems}, elem), pointer, ArrayAttr(), ArrayAttr(),
                                             ArrayAttr());
  Value v = b.create<ROCDL::ds_read_tr8_b64>(loc, VectorType::get({2}, b.getI32Type()), pointer, ArrayAttr(),
                                             ArrayAttr(), ArrayAttr());
  return b.create<LLVM::BitcastOp>(loc, VectorType::get({elems}, elem), v);
}

void TargetInfo::ldsStore(OpBuilder &b, Location loc, Operation *op, Value byteOffset, Value v) const {
  ldsStore(b, loc, planned(b, loc, op, byteOffset), v);
}

Value TargetInfo::ldsLoad(OpBuilder &b, Location loc, Operation *op, Value byteOffset, Type t) const {
  return ldsLoad(b, loc, planned(b, loc, op, byteOffset), t);
}

void TargetInfo::ldsAtomicAdd(OpBuilder &b, Location loc, Operation *op, Value byteOffset, Value v) const {
  b.create<LLVM::AtomicRMWOp>(loc, LLVM::AtomicBinOp::add, ldsPointer(b, loc, planned(b, loc, op, byteOffset)), v,
                              LLVM::AtomicOrdering::monotonic, "workgroup", /*alignment=*/4);
}
