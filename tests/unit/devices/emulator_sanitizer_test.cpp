// Planted bugs for the emulator's sanitizer, as kernel modules the compiler
// would never emit: LDS accesses past the plan, LDS read before anything
// wrote it, LDS races across threads, across waves, and write-after-read;
// global races between workgroups (a lock with and without release) and
// between waves; and the same kernels with their barriers, reported clean.
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

namespace {

// Runs a kernel (one i32 pointer argument, 256 ints, zeroed) in `groups`
// workgroups of `threads`; returns the launch's error, empty when none.
std::string runGrid(const std::string &name, const std::string &body, uint32_t groups, uint32_t threads) {
  Device dev = Device::emulator("gfx942");
  CompiledKernel k = testing::kernelFromIR(
      name, std::string(kDeclarations) + "declare i32 @llvm.amdgcn.workgroup.id.x()\n" + body,
      {{TraceArg::Pointer, DType::I32}});
  auto loaded = dev.impl().load(k);
  auto out = dev.upload(std::vector<int32_t>(256, 0));
  void *p = out.devicePtr();
  std::vector<uint8_t> args(8);
  std::memcpy(args.data(), &p, 8);
  try {
    dev.impl().launch(*loaded, {groups, 1, 1}, threads, args.data(), args.size());
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

// Thread 0 of every workgroup stores its workgroup's number to out[SLOT]
// (SLOT = the workgroup's own element, or 0 for all).
std::string storeFromEachGroup(const std::string &name, bool shared) {
  return R"(
define amdgpu_kernel void @)" + name + R"((ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %store, label %done
store:
  %slot = )" + (shared ? "add i32 0, 0" : "add i32 %wg, 0") + R"(
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %slot
  store i32 %wg, ptr addrspace(1) %p, align 4
  br label %done
done:
  ret void
}
)";
}

// Thread 0 of every workgroup takes a lock (out[0], compare-and-swap 0 -> 1
// with ACQUIRE), adds one to out[1] with plain loads and stores, and gives
// the lock back (exchange with RELEASE).
std::string lockedIncrement(const std::string &name, const std::string &acquire, const std::string &release) {
  return R"(
define amdgpu_kernel void @)" + name + R"((ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %spin, label %done
spin:
  %got = cmpxchg ptr addrspace(1) %out, i32 0, i32 1 syncscope("agent") )" + acquire + " " +
         (acquire == "acq_rel" ? "acquire" : acquire) + R"(, align 4
  %ok = extractvalue { i32, i1 } %got, 1
  br i1 %ok, label %critical, label %spin
critical:
  %pd = getelementptr i32, ptr addrspace(1) %out, i32 1
  %v = load i32, ptr addrspace(1) %pd, align 4
  %w = add i32 %v, 1
  store i32 %w, ptr addrspace(1) %pd, align 4
  %old = atomicrmw xchg ptr addrspace(1) %out, i32 0 syncscope("agent") )" + release + R"(, align 4
  br label %done
done:
  ret void
}
)";
}

// Thread 0 stores out[5]; thread 64 (the next wave) loads it, with SYNC
// between.
std::string acrossWavesGlobal(const std::string &name, const std::string &sync) {
  return R"(
define amdgpu_kernel void @)" + name + R"((ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %out, i32 5
  %writer = icmp eq i32 %tid, 0
  br i1 %writer, label %write, label %wrote
write:
  store i32 7, ptr addrspace(1) %p, align 4
  br label %wrote
wrote:
  )" + sync + R"(
  %reader = icmp eq i32 %tid, 64
  br i1 %reader, label %read, label %done
read:
  %v = load i32, ptr addrspace(1) %p, align 4
  %q = getelementptr i32, ptr addrspace(1) %out, i32 100
  store i32 %v, ptr addrspace(1) %q, align 4
  br label %done
done:
  ret void
}
)";
}

} // namespace

TEST_CASE("sanitizer (races): global memory touched by two workgroups without atomics is reported") {
  SanitizeMode mode("races");
  std::string msg = runGrid("shared_store", storeFromEachGroup("shared_store", true), 4, 64);
  CAPTURE(msg);
  CHECK(msg.find("the emulator's sanitizer stopped kernel 'shared_store': global data race at an unknown "
                 "line (workgroup (") != std::string::npos);
  CHECK(msg.find("thread 0 writes 0x") != std::string::npos);
  CHECK(msg.find("(byte 0 of the buffer of 1024 bytes at 0x") != std::string::npos);
  CHECK(msg.find("which thread 0 of workgroup (") != std::string::npos);
  CHECK(msg.find(") wrote at an unknown line, with no atomic release and acquire ordering the two workgroups") !=
        std::string::npos);
  // Each workgroup its own element: no race.
  CHECK(runGrid("own_store", storeFromEachGroup("own_store", false), 4, 64).empty());
  // The memory mode does not look for races.
  SanitizeMode memory("memory");
  CHECK(runGrid("shared_store_memory", storeFromEachGroup("shared_store_memory", true), 4, 64).empty());
}

TEST_CASE("sanitizer (races): a lock's acquire and release order the workgroups' plain accesses") {
  SanitizeMode mode("races");
  CHECK(runGrid("locked", lockedIncrement("locked", "acquire", "release"), 6, 64).empty());
  std::string accRel = runGrid("locked_acq_rel", lockedIncrement("locked_acq_rel", "acq_rel", "acq_rel"), 6, 64);
  CAPTURE(accRel);
  CHECK(accRel.empty());
  // Without release on the unlock nothing orders the next holder's load
  // after the last one's store.
  std::string msg = runGrid("unordered", lockedIncrement("unordered", "acquire", "monotonic"), 6, 64);
  CAPTURE(msg);
  CHECK(msg.find("global data race") != std::string::npos);
  CHECK(msg.find("with no atomic release and acquire ordering the two workgroups") != std::string::npos);
}

TEST_CASE("sanitizer (races): global memory between waves of one workgroup needs a barrier") {
  SanitizeMode mode("races");
  CHECK(runGrid("waves_barrier", acrossWavesGlobal("waves_barrier", "call void @llvm.amdgcn.s.barrier()"), 1, 128)
            .empty());
  std::string msg = runGrid("waves_racy", acrossWavesGlobal("waves_racy", ""), 1, 128);
  CAPTURE(msg);
  CHECK(msg.find("global data race at an unknown line (workgroup (0, 0, 0), thread 64): thread 64 reads 0x") !=
        std::string::npos);
  CHECK(msg.find("(byte 20 of the buffer of 1024 bytes at 0x") != std::string::npos);
  CHECK(msg.find("which thread 0 wrote at an unknown line, with no barrier between") != std::string::npos);
}
