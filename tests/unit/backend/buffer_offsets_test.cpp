// giveRegionsTheirOwnZeroOffset (amdgpu_codegen.hpp): in a block longer
// than kLongBlock, each scheduling region's raw buffer accesses take their
// soffset 0 from the region's own scalar register, so that no one
// `s_mov_b32 0` has tens of thousands of uses for SI Fold Operands to fold
// one by one (issue 34); shorter blocks keep the inline constant.
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/target.hpp"
#include "parse_ir.hpp"

#include <doctest/doctest.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <regex>
#include <vector>
#include <string>

using namespace tessel;

namespace {

// `elements` f32 elements, each loaded through a raw buffer (soffset 0),
// scaled and stored through another, each at its own offset: 5
// instructions an element (two offset adds, load, fmul, store), all in one
// block.
std::string bufferKernel(int elements) {
  std::string ir = "define amdgpu_kernel void @buffers(ptr addrspace(1) %a, ptr addrspace(1) %b) {\nentry:\n"
                   "  %tid = call i32 @llvm.amdgcn.workitem.id.x()\n"
                   "  %base = shl i32 %tid, 2\n"
                   "  %in = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %b, "
                   "i16 0, i64 2147483646, i32 159744)\n"
                   "  %out = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %a, "
                   "i16 0, i64 2147483646, i32 159744)\n";
  for (int i = 0; i < elements; ++i) {
    const std::string n = std::to_string(i);
    ir += "  %o" + n + " = add i32 %base, " + std::to_string(i * 1024 + 4096 * (i % 3)) + "\n";
    ir += "  %v" + n + " = call float @llvm.amdgcn.raw.ptr.buffer.load.f32(ptr addrspace(8) %in, i32 %o" + n +
          ", i32 0, i32 0)\n";
    ir += "  %w" + n + " = fmul float %v" + n + ", 3.0\n";
    ir += "  %p" + n + " = add i32 %base, " + std::to_string(i * 1024) + "\n";
    ir += "  call void @llvm.amdgcn.raw.ptr.buffer.store.f32(float %w" + n + ", ptr addrspace(8) %out, i32 %p" +
          n + ", i32 0, i32 0)\n";
  }
  return ir + "  ret void\n}\n"
              "declare i32 @llvm.amdgcn.workitem.id.x()\n"
              "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)\n"
              "declare float @llvm.amdgcn.raw.ptr.buffer.load.f32(ptr addrspace(8), i32, i32, i32)\n"
              "declare void @llvm.amdgcn.raw.ptr.buffer.store.f32(float, ptr addrspace(8), i32, i32, i32)\n";
}

bool isBufferAccess(const llvm::Instruction &inst) {
  auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  return call && (call->getIntrinsicID() == llvm::Intrinsic::amdgcn_raw_ptr_buffer_load ||
                  call->getIntrinsicID() == llvm::Intrinsic::amdgcn_raw_ptr_buffer_store);
}

bool isSchedBarrier(const llvm::Instruction &inst) {
  auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  return call && call->getIntrinsicID() == llvm::Intrinsic::amdgcn_sched_barrier;
}

} // namespace

TEST_CASE("each run of scheduling regions of a long block takes its buffer accesses' soffset 0 from its own register") {
  llvm::LLVMContext context;
  auto module = testing::parseIR(bufferKernel(600), context); // 3000+ instructions, 1200 accesses
  const unsigned boundaries = boundSchedulingRegions(*module);
  REQUIRE(boundaries >= 4);
  const unsigned zeros = giveRegionsTheirOwnZeroOffset(*module);
  REQUIRE(!llvm::verifyModule(*module, &llvm::errs()));
  // Regions of kSchedulingRegionAccesses accesses (160 instructions), the
  // last shorter; a run is the regions that give its zero kZeroOffsetUses
  // uses: three.
  static_assert(kZeroOffsetUses == 3 * kSchedulingRegionAccesses);
  CHECK(zeros == (boundaries + 1 + 2) / 3);
  // Every access reads the zero made last, none a constant; a zero is read
  // once more at its run's end, right before a boundary or the block's end,
  // by an assembly statement with side effects; every run but the last has
  // kZeroOffsetUses accesses or more, but less than a region more.
  const llvm::Value *current = nullptr;
  std::vector<unsigned> uses;
  unsigned accesses = 0, ends = 0;
  for (llvm::Instruction &inst : module->getFunction("buffers")->front()) {
    auto *call = llvm::dyn_cast<llvm::CallInst>(&inst);
    if (call && call->isInlineAsm()) {
      auto *text = llvm::cast<llvm::InlineAsm>(call->getCalledOperand());
      if (text->hasSideEffects()) {
        ++ends;
        CHECK(call->getArgOperand(0) == current);
        CHECK((isSchedBarrier(*inst.getNextNode()) || inst.getNextNode()->isTerminator()));
        current = nullptr;
      } else {
        CHECK(llvm::StringRef(text->getAsmString()).starts_with("s_mov_b32 $0, 0"));
        CHECK(current == nullptr);
        current = call;
        uses.push_back(0);
      }
      continue;
    }
    if (!isBufferAccess(inst))
      continue;
    ++accesses;
    REQUIRE(current);
    CHECK(call->getArgOperand(call->arg_size() - 2) == current);
    ++uses.back();
  }
  CHECK(accesses == 1200);
  CHECK(ends == zeros);
  REQUIRE(uses.size() == zeros);
  for (size_t i = 0; i + 1 < uses.size(); ++i) {
    CHECK(uses[i] >= kZeroOffsetUses);
    CHECK(uses[i] < kZeroOffsetUses + kSchedulingRegionAccesses);
  }
}

TEST_CASE("a block of kLongBlock instructions or fewer keeps its buffer accesses' inline soffset 0") {
  llvm::LLVMContext context;
  auto module = testing::parseIR(bufferKernel(300), context); // ~1500 instructions
  CHECK(giveRegionsTheirOwnZeroOffset(*module) == 0);
  for (llvm::Instruction &inst : module->getFunction("buffers")->front())
    if (isBufferAccess(inst)) {
      auto *call = llvm::cast<llvm::CallInst>(&inst);
      auto *soffset = llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(call->arg_size() - 2));
      CHECK((soffset && soffset->isZero()));
    }
}

TEST_CASE("a long block's buffer accesses take soffset from one scalar register a region, on every target") {
  const std::string text = bufferKernel(600);
  // buffer_load_dword v1, v0, s[0:3], s8 offen: the soffset operand is the
  // one before `offen`.
  const std::regex access(R"((buffer_load_(dword|b32)|buffer_store_(dword|b32)) [^\n]*?, (s\d+|0) offen)");
  for (const std::string &arch : supportedTargets()) {
    CAPTURE(arch);
    const TargetFacts &target = requireTarget(arch);
    llvm::LLVMContext context;
    auto module = testing::parseIR(text, context);
    configureModuleForTarget(*module, target);
    const std::string assembly = generateAmdgpuAssembly(*module, target);
    unsigned inRegister = 0, inline0 = 0;
    for (std::sregex_iterator it(assembly.begin(), assembly.end(), access), end; it != end; ++it)
      ((*it)[4] == "0" ? inline0 : inRegister) += 1;
    CHECK(inRegister == 1200);
    CHECK(inline0 == 0);
    // One `s_mov_b32 sN, 0 ; soffset K` a region (the optimized block of 600
    // elements has 5 or more), each read again by `; soffset sN ends`.
    const size_t zeros = testing::countOf(assembly, ", 0 ; soffset ");
    CHECK(zeros >= 5);
    CHECK(testing::countOf(assembly, " ends") == zeros);
  }
}
