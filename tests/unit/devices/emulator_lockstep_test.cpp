// A wave's lanes access memory in the GPU's order: every lane executes an
// instruction before any lane executes the next (emulator_lockstep.cpp). Each
// kernel here exchanges values between lanes of one wave through memory with
// no barrier; run lane after lane, each would give a different answer.
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

#include "emulator_ir.hpp"
#include "../scoped_env.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace tessel;

namespace {

const char *kDeclarations = "declare i32 @llvm.amdgcn.workitem.id.x()\n"
                            "declare i32 @llvm.amdgcn.workgroup.id.x()\n";

CompiledKernel kernelFromIR(std::string name, const std::string &body, size_t pointerArgs) {
  return testing::kernelFromIR(std::move(name), std::string(kDeclarations) + body,
                               std::vector<TraceArg>(pointerArgs, {TraceArg::Pointer, DType::I32}));
}

using testing::pointerKernarg;

std::vector<int32_t> run(const char *arch, const CompiledKernel &k, std::vector<int32_t> data,
                         uint32_t groups, uint32_t blockSize) {
  Device dev = Device::emulator(arch);
  auto loaded = dev.impl().load(k);
  auto buffer = dev.upload(data);
  auto args = pointerKernarg({buffer.devicePtr()});
  dev.impl().launch(*loaded, {groups, 1, 1}, blockSize, args.data(), args.size());
  return buffer.download();
}

// x[t] = x[t ^ 1] + 100 in place: each lane reads its neighbour's element,
// then every lane stores. On the GPU all loads happen first.
const char *kSwapPairs = R"(
define amdgpu_kernel void @swap_pairs(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %wg, 64
  %g = add i32 %base, %tid
  %other = xor i32 %g, 1
  %po = getelementptr i32, ptr addrspace(1) %x, i32 %other
  %v = load i32, ptr addrspace(1) %po, align 4
  %w = add i32 %v, 100
  %pg = getelementptr i32, ptr addrspace(1) %x, i32 %g
  store i32 %w, ptr addrspace(1) %pg, align 4
  ret void
}
)";

} // namespace

TEST_CASE("emulator lockstep: a load in every lane of a wave happens before a store in any") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    const uint32_t groups = 5, n = groups * 64;
    std::vector<int32_t> x(n);
    for (uint32_t i = 0; i < n; ++i)
      x[i] = int32_t(i * 7 + 3);
    std::vector<int32_t> got = run(arch, kernelFromIR("swap_pairs", kSwapPairs, 1), x, groups, 64);
    for (uint32_t i = 0; i < n; ++i)
      REQUIRE(got[i] == x[i ^ 1] + 100);
  }
}

TEST_CASE("emulator lockstep: the issue's example, every lane reading its group's first element") {
  // load(x + (i / 8) * 8), then store(x + i, first + 100): x[4] is 100 + x[0]
  // as it was, not x[0] after lane 0 stored it.
  const char *ir = R"(
define amdgpu_kernel void @first_of_eight(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %group = and i32 %tid, -8
  %pf = getelementptr float, ptr addrspace(1) %x, i32 %group
  %first = load float, ptr addrspace(1) %pf, align 4
  %sum = fadd float %first, 100.0
  %pi = getelementptr float, ptr addrspace(1) %x, i32 %tid
  store float %sum, ptr addrspace(1) %pi, align 4
  ret void
}
)";
  Device dev = Device::emulator("gfx942");
  auto loaded = dev.impl().load(kernelFromIR("first_of_eight", ir, 1));
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = float(i);
  auto buffer = dev.upload(x);
  auto args = pointerKernarg({buffer.devicePtr()});
  dev.impl().launch(*loaded, {1, 1, 1}, 64, args.data(), args.size());
  std::vector<float> got = buffer.download();
  for (int i = 0; i < 64; ++i)
    REQUIRE(got[i] == float(i / 8 * 8) + 100.0f);
}

TEST_CASE("emulator lockstep: masked accesses (divergent branches) meet before the branch") {
  // Lanes with t % 3 != 0 load x[t ^ 1] and store x[t]; the others do
  // nothing. Each access sits in its own `if`, as the lowering emits masks.
  const char *ir = R"(
define amdgpu_kernel void @masked_swap(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %r = urem i32 %tid, 3
  %on = icmp ne i32 %r, 0
  %other = xor i32 %tid, 1
  br i1 %on, label %load, label %loaded
load:
  %po = getelementptr i32, ptr addrspace(1) %x, i32 %other
  %lv = load i32, ptr addrspace(1) %po, align 4
  br label %loaded
loaded:
  %v = phi i32 [ %lv, %load ], [ 0, %entry ]
  %w = add i32 %v, 100
  br i1 %on, label %store, label %done
store:
  %pg = getelementptr i32, ptr addrspace(1) %x, i32 %tid
  store i32 %w, ptr addrspace(1) %pg, align 4
  br label %done
done:
  ret void
}
)";
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    std::vector<int32_t> x(128);
    for (int i = 0; i < 128; ++i)
      x[i] = i * 5 - 11;
    std::vector<int32_t> got = run(arch, kernelFromIR("masked_swap", ir, 1), x, 1, 128);
    for (int t = 0; t < 128; ++t)
      REQUIRE(got[t] == (t % 3 ? x[t ^ 1] + 100 : x[t]));
  }
}

TEST_CASE("emulator lockstep: LDS written by every lane is read by its neighbours without a barrier") {
  // Within one wave no s_barrier is needed: the store instruction completes
  // in every lane before the load executes in any.
  const char *ir = R"(
@stage = internal addrspace(3) global [64 x i32] poison, align 16

define amdgpu_kernel void @rotate(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pg = getelementptr i32, ptr addrspace(1) %x, i32 %tid
  %v = load i32, ptr addrspace(1) %pg, align 4
  %slot = getelementptr [64 x i32], ptr addrspace(3) @stage, i32 0, i32 %tid
  store i32 %v, ptr addrspace(3) %slot, align 4
  %next = add i32 %tid, 1
  %wrapped = and i32 %next, 63
  %nslot = getelementptr [64 x i32], ptr addrspace(3) @stage, i32 0, i32 %wrapped
  %w = load i32, ptr addrspace(3) %nslot, align 4
  store i32 %w, ptr addrspace(1) %pg, align 4
  ret void
}
)";
  std::vector<int32_t> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = 1000 + i * i;
  std::vector<int32_t> got = run("gfx942", kernelFromIR("rotate", ir, 1), x, 1, 64);
  for (int t = 0; t < 64; ++t)
    REQUIRE(got[t] == x[(t + 1) % 64]);
}

TEST_CASE("emulator lockstep: a later store instruction wins over an earlier one in every lane") {
  // Lane t stores 1 to x[t], then 2 to x[(t + 1) % 64]: every element ends
  // 2 on the GPU. Lane after lane, lane t + 1's first store would overwrite
  // lane t's second.
  const char *ir = R"(
define amdgpu_kernel void @two_stores(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %x, i32 %tid
  store i32 1, ptr addrspace(1) %p, align 4
  %next = add i32 %tid, 1
  %wrapped = and i32 %next, 63
  %q = getelementptr i32, ptr addrspace(1) %x, i32 %wrapped
  store i32 2, ptr addrspace(1) %q, align 4
  ret void
}
)";
  std::vector<int32_t> got = run("gfx942", kernelFromIR("two_stores", ir, 1), std::vector<int32_t>(64, -1), 1, 64);
  for (int t = 0; t < 64; ++t)
    REQUIRE(got[t] == 2);
}

TEST_CASE("emulator lockstep: a uniform loop meets once per trip where it turns from loads to stores") {
  // for k in 0..4: x[t] = x[(t + 1) % 64] + 1, in place: each trip reads the
  // values the previous trip stored, all of them before any is replaced.
  const char *ir = R"(
define amdgpu_kernel void @shift_loop(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %next = add i32 %tid, 1
  %wrapped = and i32 %next, 63
  %pn = getelementptr i32, ptr addrspace(1) %x, i32 %wrapped
  %p = getelementptr i32, ptr addrspace(1) %x, i32 %tid
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %v = load i32, ptr addrspace(1) %pn, align 4
  %w = add i32 %v, 1
  store i32 %w, ptr addrspace(1) %p, align 4
  %k1 = add i32 %k, 1
  %more = icmp ult i32 %k1, 4
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
)";
  std::vector<int32_t> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = i * 10;
  std::vector<int32_t> got = run("gfx942", kernelFromIR("shift_loop", ir, 1), x, 1, 64);
  for (int t = 0; t < 64; ++t)
    REQUIRE(got[t] == x[(t + 4) % 64] + 4);
}

TEST_CASE("emulator lockstep: stores one element apart in consecutive lanes still meet") {
  // Lane t stores 1 to x[t], then 2 to x[t + 1]: lane t + 1's first store
  // hits lane t's second one's element, so the wave meets between them (only
  // stores that no two lanes can overlap, e.g. x[t] and x[t + 64], need none).
  const char *ir = R"(
define amdgpu_kernel void @overlapping_stores(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %x, i32 %tid
  store i32 1, ptr addrspace(1) %p, align 4
  %q = getelementptr i32, ptr addrspace(1) %p, i32 1
  store i32 2, ptr addrspace(1) %q, align 4
  %far = getelementptr i32, ptr addrspace(1) %p, i32 66
  store i32 3, ptr addrspace(1) %far, align 4
  ret void
}
)";
  std::vector<int32_t> got = run("gfx942", kernelFromIR("overlapping_stores", ir, 1), std::vector<int32_t>(130, -1), 1, 64);
  CHECK(got[0] == 1);
  for (int t = 1; t <= 64; ++t)
    REQUIRE(got[t] == 2);
  for (int t = 66; t < 130; ++t)
    REQUIRE(got[t] == 3);
}

TEST_CASE("emulator lockstep: a loop's trips meet where one trip's accesses overlap the next one's") {
  // for k in 0..4: x[k + t] = 3 x[k + t] + t. Within a trip each lane reads and writes
  // its own element (no meeting needed); the next trip reads the element the
  // neighbouring lane wrote, so the wave meets between trips.
  const char *ir = R"(
define amdgpu_kernel void @sliding(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %i = add i32 %k, %tid
  %p = getelementptr i32, ptr addrspace(1) %x, i32 %i
  %v = load i32, ptr addrspace(1) %p, align 4
  %v3 = mul i32 %v, 3
  %w = add i32 %v3, %tid
  store i32 %w, ptr addrspace(1) %p, align 4
  %k1 = add i32 %k, 1
  %more = icmp ult i32 %k1, 4
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
)";
  std::vector<int32_t> x(68);
  for (int i = 0; i < 68; ++i)
    x[i] = i + 1;
  std::vector<int32_t> want = x;
  for (int k = 0; k < 4; ++k)
    for (int t = 0; t < 64; ++t)
      want[k + t] = want[k + t] * 3 + t; // in trip order, not lane after lane
  std::vector<int32_t> got = run("gfx942", kernelFromIR("sliding", ir, 1), x, 1, 64);
  for (int i = 0; i < 68; ++i)
    REQUIRE(got[i] == want[i]);
}

TEST_CASE("emulator lockstep: a value alike in the wave inside a loop is not alike after a divergent exit") {
  // Odd lanes leave the loop at k1 = 5, even ones at k1 = 1; then each lane
  // reads and writes x[4 t + k1]: lanes 1 and 2 share x[9]. Inside the loop
  // k1 is alike in every lane, so an address analysis that took it as alike
  // after the loop too would see no two lanes share a byte and let lane 2
  // read lane 1's store.
  const char *ir = R"(
define amdgpu_kernel void @exit_apart(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %odd = and i32 %tid, 1
  %isodd = icmp ne i32 %odd, 0
  %limit = select i1 %isodd, i32 5, i32 1
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %k1 = add i32 %k, 1
  %more = icmp ult i32 %k1, %limit
  br i1 %more, label %loop, label %exit
exit:
  %t4 = mul i32 %tid, 4
  %i = add i32 %t4, %k1
  %p = getelementptr i32, ptr addrspace(1) %x, i32 %i
  %v = load i32, ptr addrspace(1) %p, align 4
  %t1 = add i32 %tid, 1
  %w = add i32 %v, %t1
  store i32 %w, ptr addrspace(1) %p, align 4
  ret void
}
)";
  std::vector<int32_t> x(4 * 64 + 8);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = int32_t(100 * i);
  std::vector<int32_t> want = x;
  std::vector<int32_t> loaded(64);
  for (int t = 0; t < 64; ++t) // every lane loads, then every lane stores (the last lane wins)
    loaded[t] = x[4 * t + (t & 1 ? 5 : 1)];
  for (int t = 0; t < 64; ++t)
    want[4 * t + (t & 1 ? 5 : 1)] = loaded[t] + t + 1;
  std::vector<int32_t> got = run("gfx942", kernelFromIR("exit_apart", ir, 1), x, 1, 64);
  for (size_t i = 0; i < x.size(); ++i)
    REQUIRE(got[i] == want[i]);
}

TEST_CASE("emulator lockstep: an i32 lane offset that wraps is not taken for lanes far apart") {
  // Every lane reads the bytes of x at z = tid * (2^31 - 1) * 2 + tid * 2 =
  // tid * 2^32, which is 0 in i32 arithmetic, then stores that + 100 at
  // z + 4 * lane (x[lane]). Taken as 64-bit integers, the load's lanes
  // would be 2^32 bytes apart and the store's 2^32 + 4, never meeting; on
  // the GPU every lane reads x[0] before lane 0 stores it.
  const char *ir = R"(
define amdgpu_kernel void @wrapped(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %a = mul i32 %tid, 2147483647
  %b = mul i32 %tid, 2147483647
  %c = shl i32 %tid, 1
  %ab = add i32 %a, %b
  %zero = add i32 %ab, %c
  %pf = getelementptr i8, ptr addrspace(1) %x, i32 %zero
  %first = load i32, ptr addrspace(1) %pf, align 4
  %sum = add i32 %first, 100
  %lane = and i32 %tid, 63
  %four = mul i32 %lane, 4
  %at = add i32 %zero, %four
  %pi = getelementptr i8, ptr addrspace(1) %x, i32 %at
  store i32 %sum, ptr addrspace(1) %pi, align 4
  ret void
}
)";
  testing::ScopedEnv fibers("TESSEL_EMULATOR_PATH", "fibers");
  std::vector<int32_t> got = run("gfx942", kernelFromIR("wrapped", ir, 1), std::vector<int32_t>(64, 0), 1, 64);
  for (int i = 0; i < 64; ++i)
    REQUIRE(got[size_t(i)] == 100);
}

TEST_CASE("emulator lockstep: an LDS transpose read after LDS stores sees every lane's store (gfx950)") {
  // Each lane stores 8 bytes at 8 * tid, then ds_read_b64_tr_b8 reads its
  // neighbour's 8 bytes (tid ^ 1), with no barrier between: on the GPU every
  // lane's store comes first. The read happens before the wave's exchange,
  // so the lanes must meet before it (lane 0 would read lane 1's bytes before
  // lane 1 stored them).
  const char *ir = R"(
@lds = internal addrspace(3) global [512 x i8] poison, align 16
declare <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3))
define amdgpu_kernel void @store_then_tr(ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %tid to i64
  %v = mul i64 %t64, 72340172838076673
  %mine = getelementptr i64, ptr addrspace(3) @lds, i32 %tid
  store i64 %v, ptr addrspace(3) %mine, align 8
  %other = xor i32 %tid, 1
  %theirs = getelementptr i64, ptr addrspace(3) @lds, i32 %other
  %r = call <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3) %theirs)
  %lo = extractelement <2 x i32> %r, i32 0
  %hi = extractelement <2 x i32> %r, i32 1
  %sum = add i32 %lo, %hi
  %p = getelementptr i32, ptr addrspace(1) %x, i32 %tid
  store i32 %sum, ptr addrspace(1) %p, align 4
  ret void
}
)";
  // Lane s's store holds byte s eight times (s * 0x0101010101010101); the
  // read of lane s is lane s ^ 1's bytes. Lane l of a group of 16 receives
  // byte l % 8 of the reads of group lanes 2 j + l / 8, j = 0..7: the value
  // (group lane 2 j + l / 8) ^ 1 + group base, so its sum of the two dwords
  // is the sum of those bytes placed at bits 8 (j % 4).
  std::vector<int32_t> got = run("gfx950", kernelFromIR("store_then_tr", ir, 1), std::vector<int32_t>(64, -1), 1, 64);
  for (uint32_t t = 0; t < 64; ++t) {
    CAPTURE(t);
    const uint32_t group = t & ~15u, l = t & 15u;
    uint32_t dword[2] = {0, 0};
    for (uint32_t j = 0; j < 8; ++j) {
      const uint32_t reader = group + 2 * j + l / 8, value = reader ^ 1u;
      dword[j / 4] |= value << (8 * (j % 4));
    }
    CHECK(uint32_t(got[t]) == dword[0] + dword[1]);
  }
}
