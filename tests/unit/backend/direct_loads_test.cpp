// boundDirectLoads (amdgpu_codegen.hpp): in a block where a workgroup
// barrier is followed by loads to LDS, what the loads compute after the
// barrier moves above its wait, and scheduling boundaries keep it there and
// keep the loads before the rest. What it does to the code is checked on
// the real kernel in direct_lds_test ("loaded straight into LDS by default").
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "parse_ir.hpp"

#include <doctest/doctest.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

using namespace tessel;

namespace {

// A K loop as tessel-pipeline-loops leaves a direct one: the wait for this
// iteration's slot, the barrier between its fences, then per load the LDS
// pointer (readfirstlane), the masked offset and the load to LDS, then an
// LDS read and a product. `between` goes right after the barrier's acquire
// fence.
std::string loopKernel(const std::string &between = "") {
  std::string ir =
      "define amdgpu_kernel void @k(ptr addrspace(8) %rsrc, ptr addrspace(3) %lds, ptr addrspace(1) %out, i32 %n, "
      "i32 %lane) {\nentry:\n  br label %loop\nloop:\n"
      "  %i = phi i32 [ 0, %entry ], [ %next, %loop ]\n"
      "  %acc = phi <16 x float> [ zeroinitializer, %entry ], [ %m, %loop ]\n"
      "  call void @llvm.amdgcn.s.waitcnt(i32 3952)\n"
      "  fence syncscope(\"workgroup\") release\n"
      "  call void @llvm.amdgcn.s.barrier()\n"
      "  fence syncscope(\"workgroup\") acquire\n" +
      between;
  for (int t = 0; t < 2; ++t) {
    std::string s = std::to_string(t);
    ir += "  %slot" + s + " = mul i32 %i, " + std::to_string(8192 + t) + "\n";
    ir += "  %m0_" + s + " = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %slot" + s + ")\n";
    ir += "  %lp" + s + " = getelementptr i8, ptr addrspace(3) %lds, i32 %m0_" + s + "\n";
    ir += "  %in" + s + " = icmp slt i32 %lane, %n\n";
    ir += "  %off" + s + " = select i1 %in" + s + ", i32 %i, i32 -2147483648\n";
    ir += "  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) %lp" + s +
          ", i32 16, i32 %off" + s + ", i32 0, i32 0, i32 0)\n";
  }
  ir += "  %rp = getelementptr <4 x half>, ptr addrspace(3) %lds, i32 %lane\n"
        "  %a = load <4 x half>, ptr addrspace(3) %rp\n"
        "  %m = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %a, <4 x half> %a, <16 x float> %acc, "
        "i32 0, i32 0, i32 0)\n"
        "  %next = add i32 %i, 1\n  %more = icmp slt i32 %next, %n\n  br i1 %more, label %loop, label %done\n"
        "done:\n  store <16 x float> %m, ptr addrspace(1) %out\n  ret void\n}\n"
        "declare void @llvm.amdgcn.s.barrier()\n"
        "declare void @llvm.amdgcn.s.waitcnt(i32)\n"
        "declare i32 @llvm.amdgcn.readfirstlane.i32(i32)\n"
        "declare void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32, i32, i32, i32, "
        "i32)\n"
        "declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half>, <4 x half>, <16 x float>, i32, i32, "
        "i32)\n";
  return ir;
}

// The loop block's instructions by kind: "|" a boundary, "W" the wait, "B"
// the barrier, "L" a load to LDS, "R" an LDS read, "M" the MFMA, "p" the
// loads' own computations (readfirstlane, select), other instructions left
// out.
std::string loopOrder(llvm::Module &module) {
  std::string order;
  for (llvm::BasicBlock &block : *module.getFunction("k")) {
    if (block.getName() != "loop")
      continue;
    for (llvm::Instruction &inst : block) {
      auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
      const llvm::Intrinsic::ID id = call ? call->getIntrinsicID() : llvm::Intrinsic::not_intrinsic;
      if (id == llvm::Intrinsic::amdgcn_sched_barrier)
        order += "|";
      else if (id == llvm::Intrinsic::amdgcn_s_waitcnt)
        order += "W";
      else if (id == llvm::Intrinsic::amdgcn_s_barrier)
        order += "B";
      else if (id == llvm::Intrinsic::amdgcn_raw_ptr_buffer_load_lds)
        order += "L";
      else if (id == llvm::Intrinsic::amdgcn_readfirstlane || llvm::isa<llvm::SelectInst>(inst))
        order += "p";
      else if (llvm::isa<llvm::LoadInst>(inst))
        order += "R";
      else if (call && call->getCalledFunction()->getName().starts_with("llvm.amdgcn.mfma."))
        order += "M";
    }
  }
  return order;
}

} // namespace

TEST_CASE("loads to LDS after a barrier: their computations move above the wait, boundaries around the wait and "
          "after the loads") {
  llvm::LLVMContext context;
  auto module = testing::parseIR(loopKernel(), context);
  CHECK(loopOrder(*module) == "WBppLppLRM");
  CHECK(boundDirectLoads(*module) == 1);
  REQUIRE_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  CHECK(loopOrder(*module) == "pppp|WBLL|RM");
}

TEST_CASE("loads to LDS are left alone without a barrier before them, or with a memory access between") {
  {
    // An LDS store between the barrier and the loads: they may not pass it.
    llvm::LLVMContext context;
    auto module = testing::parseIR(loopKernel("  store i32 %i, ptr addrspace(3) %lds\n"), context);
    CHECK(boundDirectLoads(*module) == 0);
    CHECK(loopOrder(*module) == "WBppLppLRM");
  }
  {
    // No barrier: the prologue's loads (behind the loop's branch).
    llvm::LLVMContext context;
    std::string ir = loopKernel();
    ir.erase(ir.find("  call void @llvm.amdgcn.s.barrier()\n"), std::string("  call void @llvm.amdgcn.s.barrier()\n").size());
    auto module = testing::parseIR(ir, context);
    CHECK(boundDirectLoads(*module) == 0);
    CHECK(loopOrder(*module) == "WppLppLRM");
  }
}
