// What the MFMA and WMMA dot patterns share: walking the wave's instruction
// tiles and K steps, and packing registers into an intrinsic's operand.
#pragma once

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tessel {

// `regs` as one value of `type`: the register itself for one, else a vector
// of them, bitcast to `type` when that is another type of the same size.
inline Value packRegisters(OpBuilder &b, Location loc, ArrayRef<Value> regs, Type type) {
  if (regs.size() == 1)
    return regs[0];
  auto vecType = VectorType::get({int64_t(regs.size())}, regs[0].getType());
  Type i32 = b.getI32Type();
  Value v = b.create<LLVM::PoisonOp>(loc, vecType);
  for (size_t e = 0; e < regs.size(); ++e)
    v = b.create<LLVM::InsertElementOp>(loc, v, regs[e],
                                        b.create<LLVM::ConstantOp>(loc, i32, b.getI32IntegerAttr(int32_t(e))));
  return vecType == type ? v : b.create<LLVM::BitcastOp>(loc, type, v).getResult();
}

// The accumulator registers a tile keeps of one instruction's `instrRegs`:
// all of them, or fewer when the block has fewer rows than the instruction
// (Layouts.cpp leaves the registers of rows past M out).
inline int64_t tileRegsPerInstruction(int64_t accRegs, int64_t batch, int64_t repsM, int64_t repsN) {
  return accRegs / (batch * repsM * repsN);
}

// Whether `accRegs` accumulator registers are `batch` x `repsM` x `repsN`
// instruction tiles of at most `instrRegs` registers each.
inline bool fitsMatrixInstruction(int64_t accRegs, int64_t batch, int64_t repsM, int64_t repsN, int64_t instrRegs) {
  const int64_t tiles = batch * repsM * repsN, tileRegs = tileRegsPerInstruction(accRegs, batch, repsM, repsN);
  return accRegs % tiles == 0 && tileRegs >= 1 && tileRegs <= instrRegs;
}

// For each batch z and instruction tile (rm, rn) of the wave: the
// accumulator's registers as one vector, `instruction(d, a, b)` for each K
// step with that step's A and B registers, and the result back into `acc`.
// Register orders are the layouts' (Layouts.cpp): the accumulator's tile
// (rm, rn) at tileRegs * (rm + repsM * rn), A's (rm, rk) at
// kWidth * (rk + repsK * rm), B's (rn, rk) at kWidthB * (rk + repsK * rn)
// (kWidthB: B's registers an instruction, A's kWidth unless given: an
// e2m1 operand's bytes beside an 8-bit one),
// each batch's registers after the previous batch's. A tile that keeps
// fewer registers than the instruction's D has (tileRegs < instrRegs: rows
// past M) pads D: its register r holds a row the tile keeps in register
// r % tileRegs (the dropped register bits are the highest), and the
// operands' lanes past M repeat rows below M, so the padding rows compute
// copies of kept rows; they are not read back.
// Which instruction of the wave a call is: batch z, tile (rm, rn), K step rk.
struct MatrixStep {
  int64_t z, rm, rn, rk;
};
inline void forEachMatrixInstruction(
    OpBuilder &b, Location loc, SmallVectorImpl<Value> &acc, ArrayRef<Value> a, ArrayRef<Value> bRegs, int64_t batch,
    int64_t repsM, int64_t repsN, int64_t repsK, int64_t kWidth, int64_t instrRegs,
    function_ref<Value(Value, ArrayRef<Value>, ArrayRef<Value>, const MatrixStep &)> instruction,
    int64_t kWidthB = 0) {
  if (!kWidthB)
    kWidthB = kWidth;
  Type i32 = b.getI32Type();
  auto index = [&](int64_t i) { return b.create<LLVM::ConstantOp>(loc, i32, b.getI32IntegerAttr(int32_t(i))); };
  auto accType = VectorType::get({instrRegs}, acc[0].getType());
  const int64_t tileRegs = tileRegsPerInstruction(int64_t(acc.size()), batch, repsM, repsN);
  const int64_t accPerBatch = tileRegs * repsM * repsN, aPerBatch = kWidth * repsK * repsM,
                bPerBatch = kWidthB * repsK * repsN;
  for (int64_t z = 0; z < batch; ++z)
  for (int64_t rn = 0; rn < repsN; ++rn)
    for (int64_t rm = 0; rm < repsM; ++rm) {
      const int64_t base = z * accPerBatch + tileRegs * (rm + repsM * rn);
      Value d = b.create<LLVM::PoisonOp>(loc, accType);
      for (int64_t r = 0; r < instrRegs; ++r)
        d = b.create<LLVM::InsertElementOp>(loc, d, acc[base + r % tileRegs], index(r));
      for (int64_t rk = 0; rk < repsK; ++rk)
        d = instruction(d, a.slice(z * aPerBatch + kWidth * (rk + repsK * rm), kWidth),
                        bRegs.slice(z * bPerBatch + kWidthB * (rk + repsK * rn), kWidthB), MatrixStep{z, rm, rn, rk});
      for (int64_t r = 0; r < tileRegs; ++r)
        acc[base + r] = b.create<LLVM::ExtractElementOp>(loc, d, index(r));
    }
}

} // namespace mlir::tessel
