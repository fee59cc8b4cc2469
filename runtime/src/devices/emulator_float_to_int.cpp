// Float-to-integer conversions as the AMDGPU code computes them. LLVM's
// fptosi / fptoui give poison for NaN and for values outside the result's
// range, and x86 (cvttss2si & co.) gives 0x80000000 there; the GPU's
// conversion instructions saturate instead (V_CVT_I32_F32, V_CVT_U32_F32,
// V_CVT_I32_F64, V_CVT_U32_F64, V_CVT_I16_F16, V_CVT_U16_F16: "out-of-range
// floating point values (including infinity) saturate. NAN is converted to
// 0", AMD's CDNA3 and RDNA3 ISA references; the 16-bit ones' text says only
// that they saturate, and NaN is taken to give 0 there too). Which
// instruction a conversion becomes, and what comes around it, is the AMDGPU
// backend's lowering (LLVM 22, the same on gfx90a, gfx942, gfx950, gfx1100):
//   to i8 / i16 / i32   the 32-bit conversion (signed for i8 even when
//                       unsigned), truncated: f32 -> i8 of 300 is 44; from
//                       f16 to i8 / i16 the 16-bit one (again signed for i8).
//                       gfx11 converts two f32 -> i16 at once where it can
//                       (V_CVT_PK_I16_F32, saturating to 16 bits), as the
//                       DAG pairs them: not modelled; tessel's casts to i8
//                       and i16 convert to i32 and truncate, never reaching it
//   f16 to i64          the 32-bit conversion, sign- or zero-extended
//   f32 / bf16 to i64   trunc, then hi = cvt_u32(floor(|t| * 2^-32)),
//                       lo = cvt_u32(fma(hi, -2^32, |t|)); signed: the sign
//                       of t applied by (v ^ s) - s (so -inf gives 2^32)
//   f64 to i64          trunc, hi = cvt_{i,u}32(floor(t * 2^-32)),
//                       lo = cvt_u32(fma(hi, -2^32, t))
// bf16 sources go through f32 (exactly: a shift), as the backend does.
// Each instruction's saturation is llvm.fpto{s,u}i.sat, defined on the host.
#include "emulator_retarget.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <vector>

namespace tessel::emu {
namespace {

using llvm::IRBuilder;
using llvm::Type;
using llvm::Value;

// One conversion instruction: saturating, NaN -> 0, to `bits` bits.
Value *convert(IRBuilder<> &b, Value *x, unsigned bits, bool isSigned) {
  Type *to = shaped(b.getIntNTy(bits), x->getType());
  return b.CreateIntrinsic(isSigned ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat, {to, x->getType()},
                           {x});
}

Value *toI64(IRBuilder<> &b, Value *x, bool isSigned) {
  Type *src = x->getType()->getScalarType();
  Type *i64 = shaped(b.getInt64Ty(), x->getType());
  auto constant = [&](double v) { return llvm::ConstantFP::get(x->getType(), v); };
  if (src->isHalfTy()) {
    Value *r = convert(b, b.CreateFPExt(x, shaped(b.getFloatTy(), x->getType())), 32, isSigned);
    return isSigned ? b.CreateSExt(r, i64) : b.CreateZExt(r, i64);
  }
  if (src->isBFloatTy())
    x = b.CreateFPExt(x, shaped(b.getFloatTy(), x->getType()));
  Value *t = b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, x);
  const bool f64 = x->getType()->getScalarType()->isDoubleTy();
  const bool magnitude = isSigned && !f64; // f32: |t|, the sign applied at the end
  Value *a = magnitude ? b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, t) : t;
  Value *hiF = b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b.CreateFMul(a, constant(0x1p-32)));
  Value *loF = b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {hiF, constant(-0x1p32), a});
  Value *hi = b.CreateZExt(convert(b, hiF, 32, isSigned && f64), i64);
  Value *lo = b.CreateZExt(convert(b, loF, 32, false), i64);
  Value *v = b.CreateOr(b.CreateShl(hi, 32), lo);
  if (!magnitude)
    return v;
  Value *sign = b.CreateSExt(b.CreateAShr(b.CreateBitCast(t, shaped(b.getInt32Ty(), x->getType())), 31), i64);
  return b.CreateSub(b.CreateXor(v, sign), sign);
}

Value *gpuFloatToInt(IRBuilder<> &b, Value *x, unsigned bits, bool isSigned) {
  Type *src = x->getType()->getScalarType();
  if (bits == 64)
    return toI64(b, x, isSigned);
  if (bits > 32) // no such lowering to follow: at least defined
    return convert(b, x, bits, isSigned);
  const bool signedInstruction = isSigned || bits <= 8;
  if (src->isHalfTy() && bits <= 16)
    return b.CreateTrunc(convert(b, x, 16, signedInstruction), shaped(b.getIntNTy(bits), x->getType()));
  if (src->isHalfTy() || src->isBFloatTy())
    x = b.CreateFPExt(x, shaped(b.getFloatTy(), x->getType()));
  return b.CreateTrunc(convert(b, x, 32, signedInstruction), shaped(b.getIntNTy(bits), x->getType()));
}

} // namespace

void rewriteFloatToInt(llvm::Module &module) {
  std::vector<llvm::CastInst *> casts;
  for (llvm::Function &f : module)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (llvm::isa<llvm::FPToSIInst, llvm::FPToUIInst>(inst))
        casts.push_back(llvm::cast<llvm::CastInst>(&inst));
  for (llvm::CastInst *cast : casts) {
    IRBuilder<> b(cast);
    Value *r = gpuFloatToInt(b, cast->getOperand(0), cast->getType()->getScalarSizeInBits(),
                             llvm::isa<llvm::FPToSIInst>(cast));
    r->takeName(cast);
    cast->replaceAllUsesWith(r);
    cast->eraseFromParent();
  }
}

} // namespace tessel::emu
