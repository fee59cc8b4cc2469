// addWidenedHalvesAsFmaMix (amdgpu_codegen.hpp): f32 adds and subtracts of
// widened halves become fmas by a fenced 1.0, which gfx1100's code
// generation selects as V_FMA_MIX_F32 reading the halves where they lie.
// The real kernel: triton-compare's gfx1100 layer norm.
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/target.hpp"
#include "parse_ir.hpp"

#include <doctest/doctest.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <string>

using namespace tessel;
using testing::countOf;

namespace {

// Two halves of a loaded pair added to, and subtracted from and by, an f32
// (the mean and the centred values of a layer norm over f16 input).
constexpr const char *kPairKernel = R"(
define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out, float %mean) {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr <2 x half>, ptr addrspace(1) %in, i32 %lane
  %pair = load <2 x half>, ptr addrspace(1) %p, align 4
  %lo = extractelement <2 x half> %pair, i64 0
  %hi = extractelement <2 x half> %pair, i64 1
  %xlo = fpext half %lo to float
  %xhi = fpext half %hi to float
  %sum = fadd float %xlo, %mean
  %d0 = fsub float %xhi, %mean
  %d1 = fsub float %sum, %xhi
  %r = fadd float %d0, %d1
  %q = getelementptr float, ptr addrspace(1) %out, i32 %lane
  store float %r, ptr addrspace(1) %q, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
)";

unsigned countOpcode(llvm::Function &function, unsigned opcode) {
  unsigned n = 0;
  for (llvm::BasicBlock &block : function)
    for (llvm::Instruction &inst : block)
      n += inst.getOpcode() == opcode;
  return n;
}

unsigned countIntrinsic(llvm::Function &function, llvm::Intrinsic::ID id) {
  unsigned n = 0;
  for (llvm::BasicBlock &block : function)
    for (llvm::Instruction &inst : block)
      if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst))
        n += call->getIntrinsicID() == id;
  return n;
}

// The operands of the fma named `name`, as "fma(a, fence, -b)": a value's
// name, "-" for an fneg of it, "fence" for the fenced 1.0 (or its splat).
std::string fmaOf(llvm::Function &function, const std::string &name) {
  auto describe = [](llvm::Value *v) -> std::string {
    std::string sign;
    if (auto *neg = llvm::dyn_cast<llvm::UnaryOperator>(v); neg && neg->getOpcode() == llvm::Instruction::FNeg) {
      sign = "-";
      v = neg->getOperand(0);
    }
    if (auto *shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(v)) // a splat
      if (auto *insert = llvm::dyn_cast<llvm::InsertElementInst>(shuffle->getOperand(0)))
        v = insert->getOperand(1);
    if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(v);
        call && call->getIntrinsicID() == llvm::Intrinsic::arithmetic_fence) {
      auto *one = llvm::dyn_cast<llvm::ConstantFP>(call->getArgOperand(0));
      return sign + (one && one->isExactlyValue(1.0) ? "fence" : "fence(?)");
    }
    return sign + v->getName().str();
  };
  for (llvm::BasicBlock &block : function)
    for (llvm::Instruction &inst : block)
      if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
          call && call->getIntrinsicID() == llvm::Intrinsic::fma && call->getName() == name)
        return "fma(" + describe(call->getArgOperand(0)) + ", " + describe(call->getArgOperand(1)) + ", " +
               describe(call->getArgOperand(2)) + ")";
  return "no fma named " + name;
}

} // namespace

TEST_CASE("adds and subtracts of widened halves become fmas by one fenced 1.0") {
  llvm::LLVMContext context;
  auto module = testing::parseIR(kPairKernel, context);
  llvm::Function &k = *module->getFunction("k");
  CHECK(addWidenedHalvesAsFmaMix(*module) == 3);
  REQUIRE_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  CHECK(countIntrinsic(k, llvm::Intrinsic::fma) == 3);
  CHECK(countIntrinsic(k, llvm::Intrinsic::arithmetic_fence) == 1);
  // The add of two f32s stays; each subtracted operand is negated: the
  // widened one's (x - widened) or the other's (widened - y).
  CHECK(countOpcode(k, llvm::Instruction::FAdd) == 1);
  CHECK(countOpcode(k, llvm::Instruction::FSub) == 0);
  CHECK(countOpcode(k, llvm::Instruction::FNeg) == 2);
  // Which operand is multiplied, which negated, which added: sum = xlo + mean,
  // d0 = xhi - mean = xhi * 1 + -mean, d1 = sum - xhi = -xhi * 1 + sum.
  CHECK(fmaOf(k, "sum") == "fma(xlo, fence, mean)");
  CHECK(fmaOf(k, "d0") == "fma(xhi, fence, -mean)");
  CHECK(fmaOf(k, "d1") == "fma(-xhi, fence, sum)");
  CHECK(addWidenedHalvesAsFmaMix(*module) == 0); // nothing left to rewrite
}

TEST_CASE("vector adds of widened half vectors become vector fmas by a splat of the fenced 1.0") {
  const std::string kernel = R"(
define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr <2 x half>, ptr addrspace(1) %in, i32 %lane
  %h = load <2 x half>, ptr addrspace(1) %p, align 4
  %q = getelementptr <2 x float>, ptr addrspace(1) %out, i32 %lane
  %acc = load <2 x float>, ptr addrspace(1) %q, align 8
  %x = fpext <2 x half> %h to <2 x float>
  %r = fsub <2 x float> %acc, %x
  store <2 x float> %r, ptr addrspace(1) %q, align 8
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
)";
  llvm::LLVMContext context;
  auto module = testing::parseIR(kernel, context);
  llvm::Function &k = *module->getFunction("k");
  CHECK(addWidenedHalvesAsFmaMix(*module) == 1);
  REQUIRE_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  CHECK(countIntrinsic(k, llvm::Intrinsic::fma) == 1);
  CHECK(countOpcode(k, llvm::Instruction::FSub) == 0);
  CHECK(fmaOf(k, "r") == "fma(-x, fence, acc)");
  const std::string assembly = generateAmdgpuAssembly(*testing::parseIR(kernel, context), requireTarget("gfx1100"));
  CAPTURE(assembly);
  CHECK(countOf(assembly, "v_fma_mix_f32") == 2);
  CHECK(countOf(assembly, "v_cvt_f32_f16") == 0);
}

TEST_CASE("adds of two widened halves, and of one with itself") {
  const std::string kernel = R"(
define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %pair = load <2 x half>, ptr addrspace(1) %in, align 4
  %lo = extractelement <2 x half> %pair, i64 0
  %hi = extractelement <2 x half> %pair, i64 1
  %a = fpext half %lo to float
  %b = fpext half %hi to float
  %s = fadd float %a, %b
  %d = fsub float %a, %b
  %t = fadd float %a, %a
  %r0 = fadd float %s, %d
  %r = fadd float %r0, %t
  store float %r, ptr addrspace(1) %out, align 4
  ret void
}
)";
  llvm::LLVMContext context;
  auto module = testing::parseIR(kernel, context);
  llvm::Function &k = *module->getFunction("k");
  CHECK(addWidenedHalvesAsFmaMix(*module) == 3);
  REQUIRE_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  CHECK(fmaOf(k, "s") == "fma(a, fence, b)");
  CHECK(fmaOf(k, "d") == "fma(-b, fence, a)");
  CHECK(fmaOf(k, "t") == "fma(a, fence, a)");
}

TEST_CASE("a widened half that something other than an add reads, or an add in another block, is left") {
  const std::string kernel = R"(
define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out, float %mean, i1 %c) {
entry:
  %h = load half, ptr addrspace(1) %in, align 2
  %b = load bfloat, ptr addrspace(1) %in, align 2
  %x = fpext half %h to float
  %xb = fpext bfloat %b to float
  %later = fpext half %h to float
  %sum = fadd float %x, %mean
  %prod = fmul float %x, %mean
  %sb = fadd float %xb, %mean
  br i1 %c, label %then, label %done
then:
  %s2 = fadd float %later, %mean
  store float %s2, ptr addrspace(1) %out, align 4
  br label %done
done:
  store float %sum, ptr addrspace(1) %out, align 4
  store float %prod, ptr addrspace(1) %out, align 4
  store float %sb, ptr addrspace(1) %out, align 4
  ret void
}
)";
  llvm::LLVMContext context;
  auto module = testing::parseIR(kernel, context);
  CHECK(addWidenedHalvesAsFmaMix(*module) == 0);
  CHECK(countIntrinsic(*module->getFunction("k"), llvm::Intrinsic::arithmetic_fence) == 0);
}

TEST_CASE("gfx1100 selects V_FMA_MIX_F32 for the adds, with no conversion; gfx942 keeps its conversions") {
  llvm::LLVMContext context;
  auto module = testing::parseIR(kPairKernel, context);
  const std::string gfx1100 = generateAmdgpuAssembly(*module, requireTarget("gfx1100"));
  CAPTURE(gfx1100);
  CHECK(countOf(gfx1100, "v_fma_mix_f32") == 3);
  CHECK(countOf(gfx1100, "v_cvt_f32_f16") == 0);
  const std::string gfx942 = generateAmdgpuAssembly(*module, requireTarget("gfx942"));
  CAPTURE(gfx942);
  CHECK(countOf(gfx942, "v_fma_mix_f32") == 0);
  CHECK(countOf(gfx942, "v_cvt_f32_f16") == 2);
}
