// The wave form's IR (emulator_wave.cpp, emulator_wave_ops.cpp), built from
// handwritten kernels and inspected: properties that no launch shows
// reliably, since what they rule out is undefined behaviour the host's
// optimizer may or may not exploit.
#include "emulator_wave.hpp"

#include "emulator_ir.hpp"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace tessel;

namespace {

// The wave form (64 lanes) of kernel @k in `body`.
std::unique_ptr<llvm::Module> waveForm(llvm::LLVMContext &context, const std::string &body,
                                       emu::SanitizeMode sanitize = emu::SanitizeMode::Off) {
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(
      std::string(testing::kAmdgpuModuleHeader) + "declare i32 @llvm.amdgcn.workitem.id.x()\n" + body, diagnostic,
      context);
  if (!module) {
    std::string text;
    llvm::raw_string_ostream os(text);
    diagnostic.print("kernel", os);
    FAIL(text);
  }
  // (Not verified here: its host allocas are valid once retargetForHost
  // gives the module the host's data layout, and the module is verified then.)
  emu::buildWaveKernel(*module->getFunction("k"), 64, sanitize);
  return module;
}

// Lanes below n copy x[lane] to y[lane]; the others' pointers are inbounds
// GEPs past the buffers' ends for all the IR knows (poison there).
const char *kMaskedCopy = R"(
define amdgpu_kernel void @k(ptr addrspace(1) %x, ptr addrspace(1) %y, i32 %n) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %in = icmp slt i32 %tid, %n
  br i1 %in, label %then, label %done
then:
  %i = sext i32 %tid to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %x, i64 %i
  %v = load float, ptr addrspace(1) %p, align 4
  %q = getelementptr inbounds float, ptr addrspace(1) %y, i64 %i
  store float %v, ptr addrspace(1) %q, align 4
  br label %done
done:
  ret void
}
)";

} // namespace

TEST_CASE("wave form: the run-time contiguity test of a masked access branches on a defined value") {
  llvm::LLVMContext context;
  auto module = waveForm(context, kMaskedCopy);
  int tests = 0;
  for (llvm::BasicBlock &bb : *module->getFunction("k"))
    if (auto *br = llvm::dyn_cast<llvm::BranchInst>(bb.getTerminator());
        br && br->isConditional() && br->getSuccessor(0)->getName().starts_with("lanes.dense")) {
      ++tests;
      // all(pointers == first + lane * size): a masked-off lane's poison
      // pointer makes its lane of the compare poison, and the reduction of
      // a vector with a poison element is poison (LLVM's analyses reason
      // about whole values only, so the test looks at the IR): the pointers
      // compared must be frozen.
      auto *all = llvm::dyn_cast<llvm::IntrinsicInst>(br->getCondition());
      REQUIRE(all);
      CHECK(all->getIntrinsicID() == llvm::Intrinsic::vector_reduce_and);
      auto *compare = llvm::dyn_cast<llvm::ICmpInst>(all->getArgOperand(0));
      REQUIRE(compare);
      for (llvm::Value *side : compare->operands()) {
        llvm::Value *v = side;
        if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(v)) // first + lane * size
          v = llvm::cast<llvm::ExtractElementInst>(gep->getPointerOperand())->getVectorOperand();
        CHECK(llvm::isa<llvm::FreezeInst>(v));
      }
    }
  CHECK(tests == 2); // the load's and the store's
}

// Every slot the wave form spills lane values to (the sanitizer's checks,
// calls run lane by lane) is an entry-block alloca; without lifetime
// markers each one keeps its own part of the frame for the whole kernel, so
// the frame grows with the number of accesses and calls.
TEST_CASE("wave form: the slots lane values pass through memory in are live only around their use") {
  llvm::LLVMContext context;
  auto module = waveForm(context, R"(
declare float @__ocml_sin_f32(float)
declare float @__ocml_cos_f32(float)
define amdgpu_kernel void @k(ptr addrspace(1) %x, ptr addrspace(1) %y) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %tid to i64
  %p = getelementptr float, ptr addrspace(1) %x, i64 %i
  %v = load float, ptr addrspace(1) %p, align 4
  %s = call float @__ocml_sin_f32(float %v)
  %c = call float @__ocml_cos_f32(float %v)
  %r = fadd float %s, %c
  %q = getelementptr float, ptr addrspace(1) %y, i64 %i
  store float %r, ptr addrspace(1) %q, align 4
  ret void
}
)",
                         emu::SanitizeMode::Memory);
  int slots = 0;
  for (llvm::Instruction &inst : llvm::instructions(*module->getFunction("k")))
    if (auto *slot = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
      ++slots;
      int starts = 0, ends = 0;
      for (llvm::User *user : slot->users())
        if (auto *marker = llvm::dyn_cast<llvm::IntrinsicInst>(user)) {
          starts += marker->getIntrinsicID() == llvm::Intrinsic::lifetime_start;
          ends += marker->getIntrinsicID() == llvm::Intrinsic::lifetime_end;
        }
      CHECK(starts == 1);
      CHECK(ends == 1);
    }
  CHECK(slots == 8); // pointers and active lanes of two checks; argument and result of two calls
}
