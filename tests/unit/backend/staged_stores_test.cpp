// boundStagedStores (amdgpu_codegen.hpp): a scheduling boundary after the
// first quarter of a pipelined loop block's MFMAs when a workgroup barrier
// and LDS stores follow them, with the later MFMAs' operand loads moved
// below it. What it does to the code is checked on the real kernel in
// triton_matmul_test ("the staged stores pair and follow a quarter").
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "parse_ir.hpp"

#include <doctest/doctest.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace tessel;

namespace {

struct LoopShape {
  int mfmas = 8;
  bool packedOperands = false; // fp8: i64 operands, mfma.f32.32x32x16.fp8.fp8
  bool wmma = false;           // gfx1100's matrix instruction instead
  bool storesAfterBarrier = true;
};

// A K loop as the pipeliner leaves it: this iteration's next tile loaded
// from global memory, the current tile's operands read from LDS (one load
// per operand, A then B of each product), the products on two
// accumulators, a workgroup barrier, the next tile stored to LDS.
std::string loopKernel(const LoopShape &shape) {
  const std::string operand = shape.packedOperands ? "i64" : "<4 x half>";
  const std::string acc = shape.wmma ? "<8 x float>" : "<16 x float>";
  std::string callee = shape.wmma            ? "@llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16"
                       : shape.packedOperands ? "@llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8"
                                              : "@llvm.amdgcn.mfma.f32.32x32x8f16";
  const std::string wmmaOperand = "<16 x half>";
  const std::string op = shape.wmma ? wmmaOperand : operand;
  std::string ir = "define amdgpu_kernel void @k(ptr addrspace(3) %lds, ptr addrspace(1) %g, "
                   "ptr addrspace(1) %out, i32 %n) {\nentry:\n  br label %loop\nloop:\n"
                   "  %i = phi i32 [ 0, %entry ], [ %next, %loop ]\n";
  const int last = shape.mfmas - 1;
  for (int a = 0; a < 2; ++a) {
    const int lastOfChain = last - (last - a) % 2;
    ir += "  %acc" + std::to_string(a) + " = phi " + acc + " [ zeroinitializer, %entry ], [ %m" +
          std::to_string(lastOfChain) + ", %loop ]\n";
  }
  for (int t = 0; t < 4; ++t) {
    std::string s = std::to_string(t);
    ir += "  %gi" + s + " = add i32 %i, " + std::to_string(t * 64) + "\n";
    ir += "  %gp" + s + " = getelementptr " + op + ", ptr addrspace(1) %g, i32 %gi" + s + "\n";
    ir += "  %gv" + s + " = load " + op + ", ptr addrspace(1) %gp" + s + "\n";
  }
  for (int k = 0; k < shape.mfmas; ++k)
    for (const char *ab : {"a", "b"}) {
      std::string name = std::string(ab) + std::to_string(k);
      ir += "  %p" + name + " = getelementptr " + op + ", ptr addrspace(3) %lds, i32 " +
            std::to_string(2 * k + (ab[0] == 'b')) + "\n";
      ir += "  %" + name + " = load " + op + ", ptr addrspace(3) %p" + name + "\n";
    }
  for (int k = 0; k < shape.mfmas; ++k) {
    std::string in = k < 2 ? "%acc" + std::to_string(k) : "%m" + std::to_string(k - 2);
    std::string s = std::to_string(k);
    if (shape.wmma)
      ir += "  %m" + s + " = call " + acc + " " + callee + "(" + op + " %a" + s + ", " + op + " %b" + s + ", " +
            acc + " " + in + ")\n";
    else
      ir += "  %m" + s + " = call " + acc + " " + callee + "(" + op + " %a" + s + ", " + op + " %b" + s + ", " +
            acc + " " + in + ", i32 0, i32 0, i32 0)\n";
  }
  ir += "  call void @llvm.amdgcn.s.barrier()\n";
  if (shape.storesAfterBarrier)
    for (int t = 0; t < 4; ++t) {
      std::string s = std::to_string(t);
      ir += "  %sp" + s + " = getelementptr " + op + ", ptr addrspace(3) %lds, i32 " + std::to_string(64 + t) + "\n";
      ir += "  store " + op + " %gv" + s + ", ptr addrspace(3) %sp" + s + "\n";
    }
  ir += "  call void @llvm.amdgcn.s.barrier()\n";
  ir += "  %next = add i32 %i, 1\n  %more = icmp slt i32 %next, %n\n  br i1 %more, label %loop, label %done\n"
        "done:\n  store " + acc + " %m" + std::to_string(last) + ", ptr addrspace(1) %out\n  ret void\n}\n";
  ir += "declare void @llvm.amdgcn.s.barrier()\n";
  if (shape.wmma)
    ir += "declare " + acc + " " + callee + "(" + op + ", " + op + ", " + acc + ")\n";
  else
    ir += "declare " + acc + " " + callee + "(" + op + ", " + op + ", " + acc + ", i32, i32, i32)\n";
  return ir;
}

std::unique_ptr<llvm::Module> parse(const std::string &text, llvm::LLVMContext &context) {
  return testing::parseIR(text, context);
}

bool calls(const llvm::Instruction &inst, llvm::StringRef prefix) {
  auto *call = llvm::dyn_cast<llvm::CallInst>(&inst);
  return call && call->getCalledFunction() && call->getCalledFunction()->getName().starts_with(prefix);
}

// The loop block's instructions named by what they are: "M" an MFMA, "|" the
// boundary, "a3"/"b3" the LDS load of that operand, "gv0" a global load of
// the next tile, other instructions left out.
std::vector<std::string> loopOrder(llvm::Module &module) {
  std::vector<std::string> order;
  for (llvm::BasicBlock &block : *module.getFunction("k")) {
    if (block.getName() != "loop")
      continue;
    for (llvm::Instruction &inst : block) {
      if (calls(inst, "llvm.amdgcn.mfma.") || calls(inst, "llvm.amdgcn.wmma."))
        order.push_back("M");
      else if (calls(inst, "llvm.amdgcn.sched.barrier"))
        order.push_back("|");
      else if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst))
        order.push_back(load->getName().str());
    }
  }
  return order;
}

} // namespace

TEST_CASE("a pipelined loop's MFMAs are cut after the first quarter; the rest's operand loads move below") {
  llvm::LLVMContext context;
  auto module = parse(loopKernel({}), context);
  CHECK(boundStagedStores(*module) == 1);
  REQUIRE_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  // 8 MFMAs: two before the boundary with their four loads; the other six
  // products' twelve loads after it, in their order. The next tile's global
  // loads (used only by the stores after the barrier) stay where they were.
  std::vector<std::string> expected = {"gv0", "gv1", "gv2", "gv3", "a0", "b0", "a1", "b1"};
  for (const char *x : {"M", "M", "|"})
    expected.push_back(x);
  for (int k = 2; k < 8; ++k)
    for (const char *ab : {"a", "b"})
      expected.push_back(ab + std::to_string(k));
  for (int k = 2; k < 8; ++k)
    expected.push_back("M");
  CHECK(loopOrder(*module) == expected);

  // 16 MFMAs: the boundary after four.
  llvm::LLVMContext context16;
  auto module16 = parse(loopKernel({.mfmas = 16}), context16);
  CHECK(boundStagedStores(*module16) == 1);
  REQUIRE_FALSE(llvm::verifyModule(*module16, &llvm::errs()));
  std::vector<std::string> order = loopOrder(*module16);
  auto boundary = std::find(order.begin(), order.end(), "|");
  REQUIRE(boundary != order.end());
  CHECK(std::count(order.begin(), boundary, "M") == 4);
  CHECK(std::count(order.begin(), boundary, std::string("a4")) == 0);
  CHECK(std::count(boundary, order.end(), std::string("a4")) == 1);
}

TEST_CASE("blocks that are not a staged K loop, fp8 operands and WMMA get no boundary") {
  for (LoopShape shape : {LoopShape{.mfmas = 4}, LoopShape{.packedOperands = true}, LoopShape{.wmma = true},
                          LoopShape{.storesAfterBarrier = false}}) {
    CAPTURE(shape.mfmas);
    CAPTURE(shape.packedOperands);
    CAPTURE(shape.wmma);
    CAPTURE(shape.storesAfterBarrier);
    llvm::LLVMContext context;
    auto module = parse(loopKernel(shape), context);
    CHECK(boundStagedStores(*module) == 0);
    std::vector<std::string> order = loopOrder(*module);
    CHECK(std::count(order.begin(), order.end(), "|") == 0);
  }
}

TEST_CASE("a load does not move below a store, a fence or a barrier it followed") {
  // Between the operand loads and the boundary: an LDS store, a fence, or a
  // workgroup barrier alone (LLVM marks it as touching no memory): the
  // loads stay.
  for (const char *between : {"  store <4 x half> %a0, ptr addrspace(3) %lds\n",
                              "  fence syncscope(\"workgroup\") release\n",
                              "  call void @llvm.amdgcn.s.barrier()\n"}) {
    CAPTURE(between);
    llvm::LLVMContext context;
    std::string ir = loopKernel({});
    ir.insert(ir.find("  %m0 = call"), between);
    auto module = parse(ir, context);
    CHECK(boundStagedStores(*module) == 1);
    REQUIRE_FALSE(llvm::verifyModule(*module, &llvm::errs()));
    std::vector<std::string> order = loopOrder(*module);
    auto boundary = std::find(order.begin(), order.end(), "|");
    REQUIRE(boundary != order.end());
    for (int k = 2; k < 8; ++k)
      CHECK(std::count(order.begin(), boundary, "a" + std::to_string(k)) == 1);
  }
}

TEST_CASE("a value the loop's next trip uses (a PHI) does not move; address arithmetic does") {
  // a5 also feeds the loop's next trip; %later, an add only the stores after
  // the barrier use, moves below the boundary with the later operand loads.
  llvm::LLVMContext context;
  std::string ir = loopKernel({});
  ir.insert(ir.find("  %i = phi i32"), "  %keep = phi <4 x half> [ zeroinitializer, %entry ], [ %a5, %loop ]\n");
  ir.insert(ir.find("  %m0 = call"), "  %later = add i32 %i, 7\n");
  ir.insert(ir.find("  %next = add"), "  store i32 %later, ptr addrspace(3) %lds\n");
  auto module = parse(ir, context);
  CHECK(boundStagedStores(*module) == 1);
  REQUIRE_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  std::vector<std::string> order = loopOrder(*module);
  auto boundary = std::find(order.begin(), order.end(), "|");
  REQUIRE(boundary != order.end());
  CHECK(std::count(order.begin(), boundary, std::string("a5")) == 1);
  CHECK(std::count(boundary, order.end(), std::string("b5")) == 1);
  CHECK(std::count(boundary, order.end(), std::string("a6")) == 1);
  bool laterMoved = false;
  for (llvm::BasicBlock &block : *module->getFunction("k"))
    for (llvm::Instruction &inst : block)
      if (inst.getName() == "later")
        for (llvm::Instruction *i = inst.getPrevNode(); i; i = i->getPrevNode())
          laterMoved |= calls(*i, "llvm.amdgcn.sched.barrier");
  CHECK(laterMoved);
}
