// Planted bugs for the emulator's sanitizer, as kernel modules the compiler
// would never emit: LDS accesses past the plan, LDS read before anything
// wrote it, LDS races across threads, across waves, and write-after-read;
// and the same kernels with their barriers, reported clean.
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

#include "emulator_ir.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace tessel;

namespace {

const char *kDeclarations = "declare i32 @llvm.amdgcn.workitem.id.x()\n"
                            "declare void @llvm.amdgcn.s.barrier()\n"
                            "declare void @llvm.amdgcn.wave.barrier()\n";

// TESSEL_SANITIZE for the kernels loaded in a scope.
class SanitizeMode {
public:
  explicit SanitizeMode(const char *mode) {
    if (const char *old = std::getenv("TESSEL_SANITIZE"))
      old_ = old;
    setenv("TESSEL_SANITIZE", mode, 1);
  }
  ~SanitizeMode() {
    if (old_.empty())
      unsetenv("TESSEL_SANITIZE");
    else
      setenv("TESSEL_SANITIZE", old_.c_str(), 1);
  }

private:
  std::string old_;
};

// Runs a kernel (one i32 pointer argument, 256 ints) in one workgroup of
// `threads`; returns the launch's error, empty when none.
std::string run(const std::string &name, const std::string &body, uint32_t threads) {
  Device dev = Device::emulator("gfx942");
  CompiledKernel k = testing::kernelFromIR(name, std::string(kDeclarations) + body,
                                           {{TraceArg::Pointer, DType::I32}});
  auto loaded = dev.impl().load(k);
  auto out = dev.alloc<int32_t>(256);
  void *p = out.devicePtr();
  std::vector<uint8_t> args(8);
  std::memcpy(args.data(), &p, 8);
  try {
    dev.impl().launch(*loaded, {1, 1, 1}, threads, args.data(), args.size());
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

// Each thread writes slot[tid] of a 64-slot buffer.
const char *kPastPlan = R"(
@slots = internal addrspace(3) global [64 x i32] poison, align 16
define amdgpu_kernel void @past_plan(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = getelementptr [64 x i32], ptr addrspace(3) @slots, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %slot, align 4
  ret void
}
)";

// Writes slot[tid], waits, reads slot[tid + 1]: the last thread reads a slot
// nobody wrote.
const char *kUnwritten = R"(
@slots = internal addrspace(3) global [65 x i32] poison, align 16
define amdgpu_kernel void @unwritten(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = getelementptr [65 x i32], ptr addrspace(3) @slots, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %slot, align 4
  call void @llvm.amdgcn.s.barrier()
  %next = add i32 %tid, 1
  %nslot = getelementptr [65 x i32], ptr addrspace(3) @slots, i32 0, i32 %next
  %v = load i32, ptr addrspace(3) %nslot, align 4
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %o, align 4
  ret void
}
)";

// Writes slot[tid], then SYNC, then reads slot[tid ^ MASK] (a neighbour in
// the wave for MASK 1, in the other wave for MASK 64).
std::string exchange(const std::string &name, const std::string &sync, int mask) {
  return R"(
@slots = internal addrspace(3) global [128 x i32] poison, align 16
define amdgpu_kernel void @)" + name + R"((ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = getelementptr [128 x i32], ptr addrspace(3) @slots, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %slot, align 4
  )" + sync + R"(
  %other = xor i32 %tid, )" + std::to_string(mask) + R"(
  %oslot = getelementptr [128 x i32], ptr addrspace(3) @slots, i32 0, i32 %other
  %v = load i32, ptr addrspace(3) %oslot, align 4
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %o, align 4
  ret void
}
)";
}

// Reads slot[(tid + distance) % threads] after a barrier, then overwrites
// slot[tid] with no barrier between. Within a wave (distance 1, except at
// the wave's edge) the lanes execute the load before any executes the store;
// across waves (distance 64) the other wave may not have read it yet.
std::string writeAfterRead(const std::string &name, int distance, int threads) {
  return R"(
@slots = internal addrspace(3) global [128 x i32] poison, align 16
define amdgpu_kernel void @)" + name + R"((ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = getelementptr [128 x i32], ptr addrspace(3) @slots, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %slot, align 4
  call void @llvm.amdgcn.s.barrier()
  %next = add i32 %tid, )" + std::to_string(distance) + R"(
  %other = and i32 %next, )" + std::to_string(threads - 1) + R"(
  %oslot = getelementptr [128 x i32], ptr addrspace(3) @slots, i32 0, i32 %other
  %v = load i32, ptr addrspace(3) %oslot, align 4
  store i32 %v, ptr addrspace(3) %slot, align 4
  ret void
}
)";
}

} // namespace

TEST_CASE("sanitizer: an LDS access past the kernel's LDS plan is reported") {
  SanitizeMode mode("memory");
  std::string msg = run("past_plan", kPastPlan, 128);
  CAPTURE(msg);
  CHECK(msg == "the emulator's sanitizer stopped kernel 'past_plan': LDS write out of bounds at an unknown "
               "line (workgroup (0, 0, 0), thread 64): 4 bytes at LDS offset 256; the kernel's LDS plan "
               "has 256 bytes");
  CHECK(run("past_plan", kPastPlan, 64).empty());
}

TEST_CASE("sanitizer: an LDS read of bytes nothing wrote is reported") {
  SanitizeMode mode("memory");
  std::string msg = run("unwritten", kUnwritten, 64);
  CAPTURE(msg);
  CHECK(msg == "the emulator's sanitizer stopped kernel 'unwritten': LDS read of bytes nothing wrote at an "
               "unknown line (workgroup (0, 0, 0), thread 63): LDS offsets 256..259 were not written since "
               "the workgroup began (LDS starts undefined)");
}

TEST_CASE("sanitizer (races): LDS exchanges without a barrier are reported; with one, clean") {
  SanitizeMode mode("races");
  // Within a wave, a wave barrier orders the lanes; across waves it does not.
  const std::string wave = "call void @llvm.amdgcn.wave.barrier()";
  const std::string barrier = "call void @llvm.amdgcn.s.barrier()";
  CHECK(run("in_wave", exchange("in_wave", wave, 1), 128).empty());
  CHECK(run("across", exchange("across", barrier, 64), 128).empty());
  std::string msg = run("across_waves", exchange("across_waves", wave, 64), 128);
  CAPTURE(msg);
  // Wave 0 passes its wave barrier first: thread 0 reads slot 64.
  CHECK(msg == "the emulator's sanitizer stopped kernel 'across_waves': LDS data race at an unknown line "
               "(workgroup (0, 0, 0), thread 0): thread 0 reads LDS offset 256, which thread 64 wrote at an "
               "unknown line, with no barrier between");
  // One wave of 64: its lanes run in lockstep, so every read precedes
  // every write (emulator_lockstep.cpp).
  CHECK(run("write_after_read_in_wave", writeAfterRead("write_after_read_in_wave", 1, 64), 64).empty());
  msg = run("write_after_read", writeAfterRead("write_after_read", 64, 128), 128);
  CAPTURE(msg);
  CHECK(msg == "the emulator's sanitizer stopped kernel 'write_after_read': LDS data race at an unknown "
               "line (workgroup (0, 0, 0), thread 0): thread 0 writes LDS offset 0, which thread 64 read at "
               "an unknown line, with no barrier between");
  // The memory mode does not look for races.
  SanitizeMode memory("memory");
  CHECK(run("across_waves_memory", exchange("across_waves_memory", wave, 64), 128).empty());
}
