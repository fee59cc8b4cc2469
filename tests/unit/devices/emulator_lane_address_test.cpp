// Lane addresses (emulator_lane_address.cpp), which decide where the
// lockstep pass may leave a wave's lanes unordered: whether two accesses'
// lanes can touch a common byte, against every pair of lanes counted here,
// and offsets whose terms overflow 64 bits.
#include "emulator_lane_address.hpp"

#include "emulator_ir.hpp"

#include "tessel/lowering/target.hpp"
#include "tessel/lowering/amdgpu_codegen.hpp"

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Target/TargetMachine.h>

#include <doctest/doctest.h>

#include <limits>
#include <optional>
#include <random>

using namespace tessel;
using emu::LaneAddress;

namespace {

// Every pair of distinct lanes, in 128-bit arithmetic.
bool overlapByPairs(const LaneAddress &a, const LaneAddress &b, unsigned waveSize) {
  if (a.base != b.base || a.uniform != b.uniform)
    return true;
  for (int64_t l1 = 0; l1 < int64_t(waveSize); ++l1)
    for (int64_t l2 = 0; l2 < int64_t(waveSize); ++l2) {
      const __int128 sa = __int128(a.laneStride) * l1 + a.constant, sb = __int128(b.laneStride) * l2 + b.constant;
      if (l1 != l2 && sa < sb + __int128(b.bytes) && sb < sa + __int128(a.bytes))
        return true;
    }
  return false;
}

// The lane address of the first load in kernel @k (gfx942: waves of 64).
std::optional<LaneAddress> firstLoadAddress(const std::string &body) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  auto module = llvm::parseAssemblyString(
      std::string(testing::kAmdgpuModuleHeader) + "declare i32 @llvm.amdgcn.workitem.id.x()\n" + body, diagnostic,
      context);
  REQUIRE(module);
  auto machine = makeAmdgpuTargetMachine(requireTarget("gfx942"));
  llvm::Function &kernel = *module->getFunction("k");
  llvm::FunctionAnalysisManager functions;
  llvm::PassBuilder builder(machine.get());
  builder.registerFunctionAnalyses(functions);
  auto &uniformity = functions.getResult<llvm::UniformityInfoAnalysis>(kernel);
  auto &cycles = functions.getResult<llvm::CycleAnalysis>(kernel);
  for (llvm::Instruction &inst : llvm::instructions(kernel))
    if (llvm::isa<llvm::LoadInst>(inst))
      return emu::laneAddressOf(inst, module->getDataLayout(), uniformity, cycles, 64);
  FAIL("no load");
  return std::nullopt;
}

} // namespace

TEST_CASE("lane addresses: two accesses' lanes overlap exactly when some pair of distinct lanes' bytes does") {
  std::mt19937_64 rng(35);
  int overlapping = 0, apart = 0;
  for (unsigned waveSize : {32u, 64u})
    for (int trial = 0; trial < 4000; ++trial) {
      auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
      LaneAddress a, b;
      a.laneStride = pick(-3, 3) * (int64_t(1) << pick(0, 4));
      b.laneStride = trial % 3 ? a.laneStride : pick(-3, 3) * (int64_t(1) << pick(0, 4));
      a.constant = pick(-64, 64);
      b.constant = pick(-64, 64) + (trial % 5 == 0 ? int64_t(waveSize) * 16 : 0);
      a.bytes = uint64_t(pick(1, 16));
      b.bytes = uint64_t(pick(1, 16));
      const bool want = overlapByPairs(a, b, waveSize);
      (want ? overlapping : apart) += 1;
      INFO("W " << waveSize << ": strides " << a.laneStride << ", " << b.laneStride << "; constants " << a.constant
                << ", " << b.constant << "; bytes " << a.bytes << ", " << b.bytes);
      REQUIRE(emu::mayOverlapAcrossLanes(a, b, waveSize) == want);
    }
  CHECK(overlapping > 1000); // both answers well represented
  CHECK(apart > 1000);
}

TEST_CASE("lane addresses: extreme strides and constants are compared without overflow") {
  LaneAddress a, b;
  a.laneStride = b.laneStride = std::numeric_limits<int64_t>::max(); // lanes 2^63 - 1 bytes apart
  a.constant = std::numeric_limits<int64_t>::min();
  b.constant = std::numeric_limits<int64_t>::min() + 4;
  a.bytes = b.bytes = 4;
  CHECK_FALSE(emu::mayOverlapAcrossLanes(a, b, 64));
  CHECK(emu::mayOverlapAcrossLanes(a, b, 64) == overlapByPairs(a, b, 64));
  b.constant = 1; // b's lane 0 at 1, a's lane 1 at -1: bytes 1 and 2 in common
  CHECK(emu::mayOverlapAcrossLanes(a, b, 64));
  CHECK(overlapByPairs(a, b, 64));
}

// x + 4 * (lane * (2^62 + 1)): 4 * (2^62 + 1) does not fit in 64 bits. The
// address cannot be decomposed (its lanes' offsets are only known modulo
// 2^64), so it is not: no lane address, and the lockstep pass orders it.
TEST_CASE("lane addresses: an offset whose lane scale overflows 64 bits has no lane address") {
  CHECK_FALSE(firstLoadAddress(R"(
define amdgpu_kernel void @k(ptr addrspace(1) %x, ptr addrspace(1) %y) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t = zext i32 %tid to i64
  %m = mul i64 %t, 4611686018427387905
  %p = getelementptr i32, ptr addrspace(1) %x, i64 %m
  %v = load i32, ptr addrspace(1) %p, align 4
  store i32 %v, ptr addrspace(1) %y, align 4
  ret void
}
)"));
  // Its scale in range: decomposed.
  auto fine = firstLoadAddress(R"(
define amdgpu_kernel void @k(ptr addrspace(1) %x, ptr addrspace(1) %y) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t = zext i32 %tid to i64
  %m = mul i64 %t, 3
  %p = getelementptr i32, ptr addrspace(1) %x, i64 %m
  %v = load i32, ptr addrspace(1) %p, align 4
  store i32 %v, ptr addrspace(1) %y, align 4
  ret void
}
)");
  REQUIRE(fine);
  CHECK(fine->laneStride == 12);
}
