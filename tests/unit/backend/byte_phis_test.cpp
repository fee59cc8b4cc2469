// carryBytePairsAsWords (amdgpu_codegen.hpp): a <2 x i8> phi becomes an i16
// phi after the optimizer, so the backend keeps the pair in one register
// from its load to its LDS store. The real kernel: dot_scaled_test ("the
// comparison bench's kernel on gfx950 carries its scale pairs whole").
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/target.hpp"
#include "parse_ir.hpp"

#include <doctest/doctest.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <string>

using namespace tessel;

namespace {

// A pipelined loop's shape: the next pair is loaded behind a branch (the
// last iteration loads nothing: poison), and owner lanes store its two
// bytes to LDS after the join.
std::string pairKernel(const std::string &pair = "<2 x i8>", const std::string &element = "i8") {
  return "define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(3) %lds, i32 %n) {\n"
         "entry:\n  %lane = call i32 @llvm.amdgcn.workitem.id.x()\n  br label %loop\n"
         "loop:\n  %i = phi i32 [ 0, %entry ], [ %next, %latch ]\n  %next = add i32 %i, 1\n"
         "  %more = icmp slt i32 %next, %n\n  br i1 %more, label %load, label %join\n"
         "load:\n  %off = add i32 %lane, %i\n"
         "  %p = getelementptr " + pair + ", ptr addrspace(1) %in, i32 %off\n"
         "  %v = load " + pair + ", ptr addrspace(1) %p, align 4\n  br label %join\n"
         "join:\n  %pair = phi " + pair + " [ %v, %load ], [ poison, %loop ]\n"
         "  %owner = icmp ult i32 %lane, 128\n  br i1 %owner, label %store, label %latch\n"
         "store:\n  %b0 = extractelement " + pair + " %pair, i64 0\n"
         "  %b1 = extractelement " + pair + " %pair, i64 1\n"
         "  %q = getelementptr " + pair + ", ptr addrspace(3) %lds, i32 %lane\n"
         "  %q1 = getelementptr " + element + ", ptr addrspace(3) %q, i32 1\n"
         "  store " + element + " %b0, ptr addrspace(3) %q, align 4\n"
         "  store " + element + " %b1, ptr addrspace(3) %q1\n  br label %latch\n"
         "latch:\n  call void @llvm.amdgcn.s.barrier()\n  %go = icmp slt i32 %next, %n\n"
         "  br i1 %go, label %loop, label %done\n"
         "done:\n  ret void\n}\n"
         "declare i32 @llvm.amdgcn.workitem.id.x()\ndeclare void @llvm.amdgcn.s.barrier()\n";
}

std::string phiType(llvm::Module &module) {
  for (llvm::BasicBlock &block : *module.getFunction("k"))
    if (block.getName() == "join") {
      std::string text;
      llvm::raw_string_ostream out(text);
      block.phis().begin()->getType()->print(out);
      return text;
    }
  return "";
}

} // namespace

TEST_CASE("a <2 x i8> phi becomes an i16 phi, bitcast on its edges and back after it") {
  llvm::LLVMContext context;
  auto module = testing::parseIR(pairKernel(), context);
  CHECK(carryBytePairsAsWords(*module) == 1);
  REQUIRE_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  CHECK(phiType(*module) == "i16");
  CHECK(carryBytePairsAsWords(*module) == 0);
  llvm::LLVMContext other;
  auto triple = testing::parseIR(pairKernel("<3 x i8>"), other);
  CHECK(carryBytePairsAsWords(*triple) == 1);
  REQUIRE_FALSE(llvm::verifyModule(*triple, &llvm::errs()));
  CHECK(phiType(*triple) == "i24");
}

TEST_CASE("wider byte vectors and pairs of wider integers keep their phis") {
  for (auto [pair, element] : {std::pair{"<4 x i8>", "i8"}, std::pair{"<2 x i16>", "i16"}}) {
    CAPTURE(pair);
    llvm::LLVMContext context;
    auto module = testing::parseIR(pairKernel(pair, element), context);
    CHECK(carryBytePairsAsWords(*module) == 0);
    CHECK(phiType(*module) == pair);
  }
}

// The backend split the pair into a register a byte: the high byte shifted
// out right after the load (a wait for it at once), shifted back and merged
// before the 16-bit store.
TEST_CASE("a byte pair loaded behind a branch reaches its LDS store in the register it was loaded into") {
  llvm::LLVMContext context;
  auto module = testing::parseIR(pairKernel(), context);
  const std::string assembly = generateAmdgpuAssembly(*module, requireTarget("gfx950"));
  CHECK(testing::countOf(assembly, "global_load_ushort") == 1);
  CHECK(testing::countOf(assembly, "ds_write_b16") == 1);
  CHECK(testing::countOf(assembly, "v_lshrrev_b16") == 0);
  CHECK(testing::countOf(assembly, "v_lshlrev_b16") == 0);
  CHECK(testing::countOf(assembly, "v_bitop3_b16") == 0);
}

TEST_CASE("a block that reaches the phi by both edges of its branch gives the word phi one value") {
  // %pair's entries from %load name it twice: LLVM requires one value per
  // block, so the two edges share one cast.
  const std::string text =
      "define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(3) %lds, i1 %c) {\n"
      "entry:\n  %lane = call i32 @llvm.amdgcn.workitem.id.x()\n"
      "  %p = getelementptr <2 x i8>, ptr addrspace(1) %in, i32 %lane\n"
      "  %v = load <2 x i8>, ptr addrspace(1) %p, align 4\n  br i1 %c, label %join, label %join\n"
      "join:\n  %pair = phi <2 x i8> [ %v, %entry ], [ %v, %entry ]\n"
      "  %q = getelementptr <2 x i8>, ptr addrspace(3) %lds, i32 %lane\n"
      "  store <2 x i8> %pair, ptr addrspace(3) %q, align 2\n  ret void\n}\n"
      "declare i32 @llvm.amdgcn.workitem.id.x()\n";
  llvm::LLVMContext context;
  auto module = testing::parseIR(text, context);
  CHECK(carryBytePairsAsWords(*module) == 1);
  CHECK_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  CHECK(phiType(*module) == "i16");
}
