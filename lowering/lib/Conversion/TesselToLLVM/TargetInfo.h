// The hardware primitives the conversion patterns use, in one place: thread,
// lane and wave ids, program ids, barriers, moving values between lanes (DPP
// within a row of 16 lanes, v_permlanex16 between rows where the target has
// it, ds_bpermute across the wave) and LDS access. A
// pattern asks for an operation, never which chip it is on.
#pragma once

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace tessel {
struct TargetFacts;
} // namespace tessel

namespace mlir::tessel {

class TargetInfo {
public:
  // `arch` names an entry of the target table, or none ("": lit tests of
  // generic lowering, no target-specific instructions).
  TargetInfo(StringRef arch, unsigned waveSize, unsigned numWarps);

  StringRef arch() const { return arch_; }
  unsigned waveSize() const { return waveSize_; }
  unsigned numWarps() const { return numWarps_; }
  // Bits of a lane id and of a wave id.
  unsigned laneIdBits() const { return llvm::Log2_32(waveSize_); }
  unsigned waveIdBits() const { return llvm::Log2_32(numWarps_); }

  Value threadId(OpBuilder &b, Location loc) const;
  Value laneId(OpBuilder &b, Location loc) const;
  Value waveId(OpBuilder &b, Location loc) const;
  Value programId(OpBuilder &b, Location loc, unsigned axis) const;
  // Workgroups along `axis` (from the dispatch packet's grid size).
  Value numPrograms(OpBuilder &b, Location loc, unsigned axis) const;

  // Every thread of the workgroup arrives before any continues; memory
  // writes before it (LDS and global) are visible to reads after it. The
  // user's tessel.barrier.
  void barrier(OpBuilder &b, Location loc) const;
  // The same for LDS only: the fences carry the MMRA tag that limits them to
  // the local address space, so no global cache maintenance comes with them
  // (buffer_gl0_inv / vmcnt waits on gfx11). The barriers of LDS scratch.
  void ldsBarrier(OpBuilder &b, Location loc) const;
  // After `op`'s last read of its LDS scratch: the barrier that lets a later
  // op write those bytes, unless the LDS plan reuses none of them before
  // another barrier (tessel.lds_no_reuse on `op`).
  void endLdsScratch(OpBuilder &b, Location loc, Operation *op) const;

  // `v` as held by lane `srcLane` of this wave (every lane must take part).
  Value shuffle(OpBuilder &b, Location loc, Value v, Value srcLane) const;
  // The partner's value in the step of a butterfly over lane bit `distance`
  // (a power of two). `lowerBitsReduced`: lanes that differ only in lower
  // bits hold the same value, so a mirror within a row pairs like an xor.
  Value butterflyPartner(OpBuilder &b, Location loc, Value v, int64_t distance,
                         bool lowerBitsReduced) const;
  // Whether lanes can swap rows of 16 in one VALU instruction
  // (v_permlanex16, gfx10 on): swapRows below.
  bool hasSwapRows() const;
  // `v` as held by the same lane of the other row of 16 (lane l ^ 16).
  Value swapRows(OpBuilder &b, Location loc, Value v) const;
  // Whether the target has DPP row broadcasts (wave64 gfx9): a combine over
  // every lane of a wave can end in lane 63 after the steps within rows.
  bool hasRowBroadcast() const;
  // Whether f32 add, multiply and fma come packed two to an instruction.
  bool hasPackedF32() const;
  // Whether the target's conversion instructions (v_cvt_pk_fp8_f32 & co.)
  // take the 8-bit float type `elem` (gfx942: the FNUZ formats; gfx950: OCP).
  bool convertsFp8(Type elem) const;
  // DPP row_bcast:15 (`lastLane` 15: each row gets the last lane of the row
  // before it) or row_bcast:31 (`lastLane` 31: rows 2 and 3 get lane 31);
  // rows with no such lane get 0.
  Value rowBroadcast(OpBuilder &b, Location loc, Value v, int lastLane) const;
  // `v` as held by lane `lane` of this wave, the same in every lane
  // (v_readlane_b32 into an SGPR).
  Value readLane(OpBuilder &b, Location loc, Value v, int lane) const;

  // Accesses `byteOffset` bytes into the LDS scratch the plan gave `op`.
  void ldsStore(OpBuilder &b, Location loc, Operation *op, Value byteOffset, Value v) const;
  Value ldsLoad(OpBuilder &b, Location loc, Operation *op, Value byteOffset, Type t) const;
  // Atomically adds `v` (i32) to the LDS word `byteOffset` bytes into the
  // op's scratch (workgroup scope, relaxed: ds_add_u32).
  void ldsAtomicAdd(OpBuilder &b, Location loc, Operation *op, Value byteOffset, Value v) const;
  // Accesses at `address`: bytes from the start of the module's LDS.
  void ldsStore(OpBuilder &b, Location loc, Value address, Value v) const;
  Value ldsLoad(OpBuilder &b, Location loc, Value address, Type t) const;
  // Whether the target has LDS transpose reads (TargetFacts::ldsTransposeReads),
  // and one: 8 bytes at `address` as `elems` elements of `elem` (i8 or a
  // 16-bit type), exchanged in each group of 16 lanes (ldsTransposedRead).
  bool hasLdsTransposeReads() const;
  // Whether llvm.maximum / llvm.minimum are one instruction (TargetFacts::minimumMaximum).
  bool hasMinimumMaximum() const;
  Value ldsTransposedLoad(OpBuilder &b, Location loc, Value address, Type elem, int64_t elems) const;

  // The LDS pointer `address` bytes from the start of the module's LDS.
  Value ldsAddress(OpBuilder &b, Location loc, Value address) const;
  // Waits until this thread's vector memory operations are done, loads to
  // LDS included: s_waitcnt vmcnt(0) (gfx9's encoding: the targets with
  // loads to LDS).
  void waitVectorMemory(OpBuilder &b, Location loc) const;
  // The alias scope of the loads to LDS (on them) and what the reads of their
  // buffers say they do not alias (noalias): a read is of a slot whose loads
  // were waited for, never of one still being loaded, and without it the
  // backend waits for every load to LDS in flight (vmcnt(0)) before it.
  static ArrayAttr asyncCopyScopes(MLIRContext *ctx);

  // The module's LDS, one array the LDS plan divides.
  static constexpr const char *kLdsSymbol = "tessel_lds";

private:
  // Moves `v` between lanes 32 bits at a time with `move32`, which takes an
  // i32, or with `anyWord` any 32-bit type (update.dpp is overloaded: an f32
  // moves without two bitcasts, which were a seventh of a long reduction
  // chain's LLVM IR; the backend selects the same v_mov_b32_dpp).
  Value moveAcrossLanes(OpBuilder &b, Location loc, Value v, const std::function<Value(Value)> &move32,
                        bool anyWord = false) const;

  // Thread, lane and wave ids, made once at the top of each kernel: every
  // op of the kernel uses the same values (no CSE needed to merge copies).
  struct Ids {
    Value thread, lane, wave;
  };
  Ids &idsAt(OpBuilder &b, Location loc) const;
  mutable llvm::DenseMap<Operation *, Ids> ids_;

  std::string arch_;
  const ::tessel::TargetFacts *facts_; // nullptr when arch_ is none of the table's
  unsigned waveSize_, numWarps_;
};

} // namespace mlir::tessel
