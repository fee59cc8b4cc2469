// Scheduling regions of long blocks (boundSchedulingRegions in
// amdgpu_codegen.hpp): where the boundaries go, and that a block of
// thousands of memory accesses compiles on every target.
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
#include <vector>

using namespace tessel;

namespace {

std::unique_ptr<llvm::Module> parse(const char *text, llvm::LLVMContext &context) {
  return testing::parseIR(text, context);
}

// A kernel of one block of exactly `length` scheduled instructions: the
// thread id, length - 2 adds, a store. `boundaryAt` > 0 puts a
// sched.barrier(0) after that many.
std::string chainKernel(unsigned length, unsigned boundaryAt = 0) {
  std::vector<std::string> body = {"%x1 = call i32 @llvm.amdgcn.workitem.id.x()"};
  unsigned last = 1;
  while (body.size() < length - 1) {
    if (boundaryAt && body.size() == boundaryAt) {
      body.push_back("call void @llvm.amdgcn.sched.barrier(i32 0)");
    } else {
      ++last;
      body.push_back("%x" + std::to_string(last) + " = add i32 %x" + std::to_string(last - 1) + ", 3");
    }
  }
  body.push_back("store i32 %x" + std::to_string(last) + ", ptr addrspace(1) %out");
  std::string ir = "define amdgpu_kernel void @chain(ptr addrspace(1) %out) {\nentry:\n";
  for (const std::string &line : body)
    ir += "  " + line + "\n";
  return ir + "  ret void\n}\ndeclare i32 @llvm.amdgcn.workitem.id.x()\n"
              "declare void @llvm.amdgcn.sched.barrier(i32)\n";
}

// The lengths of the scheduling regions of `fn`'s first block, in
// scheduled instructions (a boundary ends its region and counts in it).
std::vector<unsigned> regionLengths(llvm::Function &fn) {
  std::vector<unsigned> lengths = {0};
  for (llvm::Instruction &inst : fn.front()) {
    if (llvm::isa<llvm::PHINode>(inst) || inst.isTerminator())
      continue;
    ++lengths.back();
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
      if (call->getCalledFunction() && call->getCalledFunction()->getName() == "llvm.amdgcn.sched.barrier")
        lengths.push_back(0);
  }
  return lengths;
}
} // namespace

TEST_CASE("a block longer than kLongBlock is cut into scheduling regions of kSchedulingRegion") {
  using Regions = std::vector<unsigned>;
  const unsigned R = kSchedulingRegion;
  auto regionsOf = [](unsigned length, unsigned boundaryAt = 0) {
    llvm::LLVMContext context;
    std::string text = chainKernel(length, boundaryAt);
    auto module = parse(text.c_str(), context);
    unsigned before = regionLengths(*module->getFunction("chain")).size();
    unsigned inserted = boundSchedulingRegions(*module);
    REQUIRE(!llvm::verifyModule(*module, &llvm::errs()));
    Regions regions = regionLengths(*module->getFunction("chain"));
    CHECK(regions.size() == before + inserted);
    return regions;
  };
  static_assert(kSchedulingRegion == 512 && kLongBlock == 2048, "the cases below are worked out for these");
  CHECK(regionsOf(kLongBlock) == Regions{kLongBlock}); // as long as allowed: untouched
  // Each boundary is an instruction of the region it ends.
  CHECK(regionsOf(10 * R + 100) == Regions{R + 1, R + 1, R + 1, R + 1, R + 1, R + 1, R + 1, R + 1, R + 1, R + 100});
  // No region at the end shorter than half of one.
  CHECK(regionsOf(5 * R + R / 2) == Regions{R + 1, R + 1, R + 1, R + 1, R + 1, R / 2});
  CHECK(regionsOf(5 * R + R / 2 - 1) == Regions{R + 1, R + 1, R + 1, R + 1, R + R / 2 - 1});
  // A boundary already in the block starts a new count (300 + 1, then R + 1 ...).
  CHECK(regionsOf(5 * R, 300) == Regions{301, R + 1, R + 1, R + 1, 5 * R - 301 - 3 * R});
}

namespace {
// A kernel of one block of `elements` copies, each 6 instructions and 2
// memory accesses: an offset add, a raw buffer load (a call), a multiply, a
// pointer, a store, and a wait (a call that touches no memory the program
// sees, so no access).
std::string copyKernel(unsigned elements) {
  std::string ir = "define amdgpu_kernel void @copies(ptr addrspace(1) %a, ptr addrspace(1) %b) {\nentry:\n"
                   "  %tid = call i32 @llvm.amdgcn.workitem.id.x()\n"
                   "  %in = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %b, "
                   "i16 0, i64 2147483646, i32 159744)\n";
  for (unsigned i = 0; i < elements; ++i) {
    const std::string n = std::to_string(i);
    ir += "  %o" + n + " = add i32 %tid, " + std::to_string(i * 256) + "\n";
    ir += "  %v" + n + " = call float @llvm.amdgcn.raw.ptr.buffer.load.f32(ptr addrspace(8) %in, i32 %o" + n +
          ", i32 0, i32 0)\n";
    ir += "  %w" + n + " = fmul float %v" + n + ", 3.0\n";
    ir += "  %d" + n + " = getelementptr float, ptr addrspace(1) %a, i32 %o" + n + "\n";
    ir += "  store float %w" + n + ", ptr addrspace(1) %d" + n + "\n";
    ir += "  call void @llvm.amdgcn.s.waitcnt(i32 0)\n";
  }
  return ir + "  ret void\n}\n"
              "declare i32 @llvm.amdgcn.workitem.id.x()\n"
              "declare void @llvm.amdgcn.s.waitcnt(i32)\n"
              "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)\n"
              "declare float @llvm.amdgcn.raw.ptr.buffer.load.f32(ptr addrspace(8), i32, i32, i32)\n";
}

// The memory accesses (loads, stores, buffer loads) of each scheduling
// region of `fn`'s first block.
std::vector<unsigned> regionAccesses(llvm::Function &fn) {
  std::vector<unsigned> accesses = {0};
  for (llvm::Instruction &inst : fn.front()) {
    auto *call = llvm::dyn_cast<llvm::CallInst>(&inst);
    const llvm::StringRef callee =
        call && call->getCalledFunction() ? call->getCalledFunction()->getName() : llvm::StringRef();
    if (llvm::isa<llvm::LoadInst, llvm::StoreInst>(inst) || callee.starts_with("llvm.amdgcn.raw.ptr.buffer.load"))
      ++accesses.back();
    if (callee == "llvm.amdgcn.sched.barrier")
      accesses.push_back(0);
  }
  return accesses;
}
} // namespace

TEST_CASE("a long block's scheduling region ends after kSchedulingRegionAccesses memory accesses") {
  using Accesses = std::vector<unsigned>;
  static_assert(kSchedulingRegionAccesses == 64 && kSchedulingRegion == 512,
                "the cases below are worked out for these");
  auto accessesOf = [](unsigned elements) {
    llvm::LLVMContext context;
    auto module = testing::parseIR(copyKernel(elements), context);
    const unsigned inserted = boundSchedulingRegions(*module);
    REQUIRE(!llvm::verifyModule(*module, &llvm::errs()));
    Accesses accesses = regionAccesses(*module->getFunction("copies"));
    CHECK(accesses.size() == inserted + 1);
    // Each boundary right after the access that fills its region: the
    // region's last instruction before it is a store.
    for (llvm::Instruction &inst : module->getFunction("copies")->front())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst);
          call && call->getCalledFunction()->getName() == "llvm.amdgcn.sched.barrier")
        CHECK(llvm::isa<llvm::StoreInst>(inst.getPrevNode()));
    return accesses;
  };
  // 1000 copies: 6002 instructions, 2000 accesses (the waits are none); a
  // region of 64 accesses is 192 instructions, so the accesses bound it.
  // After 30 regions 80 accesses are left, after 31 only 16 (fewer than
  // half a region's, and 48 instructions): 30 boundaries.
  Accesses expected(30, 64);
  expected.push_back(80);
  CHECK(accessesOf(1000) == expected);
  // 400 copies: 2402 instructions, 800 accesses; after 12 regions 32 are
  // left, exactly half a region's: a 13th region.
  expected.assign(12, 64);
  expected.push_back(32);
  CHECK(accessesOf(400) == expected);
  // A block of kLongBlock instructions or fewer (300 copies: 1802) is
  // untouched, however many accesses.
  CHECK(accessesOf(300) == Accesses{600});
}

TEST_CASE("a boundary never goes among a loop block's PHIs") {
  std::string ir = "define amdgpu_kernel void @loop(ptr addrspace(1) %out, i32 %n) {\nentry:\n  br label %body\n"
                   "body:\n  %i = phi i32 [ 0, %entry ], [ %next, %body ]\n  %x1 = phi i32 [ 7, %entry ], [ %x";
  const unsigned adds = kLongBlock + kSchedulingRegion;
  ir += std::to_string(adds) + ", %body ]\n";
  for (unsigned k = 2; k <= adds; ++k)
    ir += "  %x" + std::to_string(k) + " = mul i32 %x" + std::to_string(k - 1) + ", 3\n";
  ir += "  %next = add i32 %i, 1\n  %more = icmp slt i32 %next, %n\n  br i1 %more, label %body, label %done\n"
        "done:\n  store i32 %x" + std::to_string(adds) + ", ptr addrspace(1) %out\n  ret void\n}\n";
  llvm::LLVMContext context;
  auto module = parse(ir.c_str(), context);
  // adds + 1 scheduled (the muls, the add, the compare): a boundary after
  // each 512 but the last, which would leave a single instruction.
  CHECK(boundSchedulingRegions(*module) == 4);
  CHECK(!llvm::verifyModule(*module, &llvm::errs()));
}

namespace {
// A kernel whose one block scales `elements` floats, each loaded and stored
// on its own (5 instructions an element after O3: two geps, load, fmul, store).
std::string longBlockKernel(int elements) {
  std::string ir = "define amdgpu_kernel void @long_block(ptr addrspace(1) noalias %a, "
                   "ptr addrspace(1) noalias %b) {\nentry:\n"
                   "  %tid = call i32 @llvm.amdgcn.workitem.id.x()\n";
  for (int i = 0; i < elements; ++i) {
    std::string n = std::to_string(i);
    ir += "  %i" + n + " = add i32 %tid, " + std::to_string(i * 256) + "\n";
    ir += "  %s" + n + " = getelementptr float, ptr addrspace(1) %b, i32 %i" + n + "\n";
    ir += "  %v" + n + " = load float, ptr addrspace(1) %s" + n + "\n";
    ir += "  %w" + n + " = fmul float %v" + n + ", 3.0\n";
    ir += "  %d" + n + " = getelementptr float, ptr addrspace(1) %a, i32 %i" + n + "\n";
    ir += "  store float %w" + n + ", ptr addrspace(1) %d" + n + "\n";
  }
  return ir + "  ret void\n}\ndeclare i32 @llvm.amdgcn.workitem.id.x()\n";
}

} // namespace

TEST_CASE("a block of thousands of loads and stores compiles (in bounded scheduling regions) for every target") {
  // 800 elements: ~5600 instructions in one block after the optimizer.
  std::string text = longBlockKernel(800);
  for (const std::string &arch : supportedTargets()) {
    CAPTURE(arch);
    const TargetFacts &target = requireTarget(arch);
    llvm::LLVMContext context;
    auto module = parse(text.c_str(), context);
    configureModuleForTarget(*module, target);
    const std::string assembly = generateAmdgpuAssembly(*module, target);
    // gfx9 spells a 32-bit access dword, gfx11 b32.
    CHECK(testing::countOf(assembly, "global_store_dword ") + testing::countOf(assembly, "global_store_b32 ") == 800);
    CHECK(testing::countOf(assembly, "global_load_dword ") + testing::countOf(assembly, "global_load_b32 ") == 800);
  }
}
