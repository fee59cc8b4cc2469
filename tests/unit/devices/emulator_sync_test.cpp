// Barriers, LDS and cross-lane operations: the threads of a workgroup run as
// fibers that switch at s_barrier and at wave-level ops.
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

#include "emulator_ir.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace tessel;

namespace {

const char *kDeclarations = "declare i32 @llvm.amdgcn.workitem.id.x()\n"
                            "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
                            "declare void @llvm.amdgcn.s.barrier()\n";

CompiledKernel kernelFromIR(std::string name, const std::string &body, size_t pointerArgs) {
  return testing::kernelFromIR(std::move(name), std::string(kDeclarations) + body,
                               std::vector<TraceArg>(pointerArgs, {TraceArg::Pointer, DType::I32}));
}

using testing::pointerKernarg;

// Each workgroup of 256 threads reverses its block through LDS.
const char *kReverse = R"(
@stage = internal addrspace(3) global [256 x i32] poison, align 16
@other = internal addrspace(3) global [3 x i32] poison, align 4

define amdgpu_kernel void @reverse(ptr addrspace(1) %in, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %wg, 256
  %g = add i32 %base, %tid
  %g64 = zext i32 %g to i64
  %pin = getelementptr i32, ptr addrspace(1) %in, i64 %g64
  %v = load i32, ptr addrspace(1) %pin, align 4
  %slot = getelementptr [256 x i32], ptr addrspace(3) @stage, i32 0, i32 %tid
  store i32 %v, ptr addrspace(3) %slot, align 4
  store i32 %tid, ptr addrspace(3) getelementptr ([3 x i32], ptr addrspace(3) @other, i32 0, i32 1), align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r = sub i32 255, %tid
  %rslot = getelementptr [256 x i32], ptr addrspace(3) @stage, i32 0, i32 %r
  %w = load i32, ptr addrspace(3) %rslot, align 4
  %pout = getelementptr i32, ptr addrspace(1) %out, i64 %g64
  store i32 %w, ptr addrspace(1) %pout, align 4
  ret void
}
)";

} // namespace

TEST_CASE("emulator: a block reversed through LDS with a barrier") {
  Device dev = Device::emulator("gfx942");
  CompiledKernel k = kernelFromIR("reverse", kReverse, 2);
  auto loaded = dev.impl().load(k);
  const int groups = 7, n = groups * 256;
  std::vector<int32_t> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = i * 3 + 1;
  auto bin = dev.upload(in);
  auto out = dev.upload(std::vector<int32_t>(n, int32_t(0xABABABAB)));
  auto args = pointerKernarg({bin.devicePtr(), out.devicePtr()});
  dev.impl().launch(*loaded, {groups, 1, 1}, 256, args.data(), args.size());
  std::vector<int32_t> got = out.download();
  for (int g = 0; g < groups; ++g)
    for (int t = 0; t < 256; ++t)
      REQUIRE(got[g * 256 + t] == in[g * 256 + 255 - t]);
}

TEST_CASE("emulator: a barrier reached by part of a workgroup is an error, not a hang") {
  Device dev = Device::emulator();
  CompiledKernel k = kernelFromIR("partial", R"(
define amdgpu_kernel void @partial(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %few = icmp ult i32 %tid, 2
  br i1 %few, label %wait, label %exit
wait:
  call void @llvm.amdgcn.s.barrier()
  br label %exit
exit:
  ret void
}
)", 1);
  auto loaded = dev.impl().load(k);
  auto out = dev.alloc<int32_t>(1);
  auto args = pointerKernarg({out.devicePtr()});
  CHECK_THROWS_WITH_AS(dev.impl().launch(*loaded, {3, 1, 1}, 8, args.data(), args.size()),
                       doctest::Contains("s_barrier reached by only 2 of 8 threads of the workgroup"),
                       Error);
  // The device stays usable after the failure.
  CompiledKernel ok = kernelFromIR("reverse", kReverse, 2);
  auto good = dev.impl().load(ok);
  std::vector<int32_t> in(256);
  for (int i = 0; i < 256; ++i)
    in[i] = i;
  auto bin = dev.upload(in);
  auto bout = dev.alloc<int32_t>(256);
  auto args2 = pointerKernarg({bin.devicePtr(), bout.devicePtr()});
  dev.impl().launch(*good, {1, 1, 1}, 256, args2.data(), args2.size());
  CHECK(bout.download()[0] == 255);
}

TEST_CASE("emulator: a barrier in a loop whose trip count differs between threads is an error") {
  // Thread t runs t % 3 + 1 iterations, each ending at a barrier: every
  // thread meets the first, only some the second.
  Device dev = Device::emulator();
  CompiledKernel k = kernelFromIR("uneven", R"(
define amdgpu_kernel void @uneven(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %r = urem i32 %tid, 3
  %trips = add i32 %r, 1
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  call void @llvm.amdgcn.s.barrier()
  %next = add i32 %i, 1
  %more = icmp ult i32 %next, %trips
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
)", 1);
  auto loaded = dev.impl().load(k);
  auto out = dev.alloc<int32_t>(1);
  auto args = pointerKernarg({out.devicePtr()});
  CHECK_THROWS_WITH_AS(dev.impl().launch(*loaded, {1, 1, 1}, 8, args.data(), args.size()),
                       doctest::Contains("s_barrier reached by only 5 of 8 threads of the workgroup"), Error);
}

TEST_CASE("emulator: ds_bpermute and DPP row_shr exchange values within a wave") {
  Device dev = Device::emulator("gfx942"); // wave64
  CompiledKernel k = kernelFromIR("lanes", R"(
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
declare float @llvm.amdgcn.mov.dpp.f32(float, i32, i32, i32, i1)
define amdgpu_kernel void @lanes(ptr addrspace(1) %perm, ptr addrspace(1) %shr, ptr addrspace(1) %mirror) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %tid to i64
  %partner = xor i32 %tid, 1
  %addr = shl i32 %partner, 2
  %v = mul i32 %tid, 10
  %p = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %v)
  %pp = getelementptr i32, ptr addrspace(1) %perm, i64 %t64
  store i32 %p, ptr addrspace(1) %pp, align 4
  %s = call i32 @llvm.amdgcn.update.dpp.i32(i32 -1, i32 %tid, i32 273, i32 15, i32 15, i1 false)
  %ps = getelementptr i32, ptr addrspace(1) %shr, i64 %t64
  store i32 %s, ptr addrspace(1) %ps, align 4
  %f = uitofp i32 %tid to float
  %m = call float @llvm.amdgcn.mov.dpp.f32(float %f, i32 320, i32 15, i32 15, i1 true)
  %pm = getelementptr float, ptr addrspace(1) %mirror, i64 %t64
  store float %m, ptr addrspace(1) %pm, align 4
  ret void
}
)", 3);
  auto loaded = dev.impl().load(k);
  auto perm = dev.alloc<int32_t>(128), shr = dev.alloc<int32_t>(128);
  auto mirror = dev.alloc<float>(128);
  auto args = pointerKernarg({perm.devicePtr(), shr.devicePtr(), mirror.devicePtr()});
  dev.impl().launch(*loaded, {1, 1, 1}, 128, args.data(), args.size());
  auto gotPerm = perm.download(), gotShr = shr.download();
  auto gotMirror = mirror.download();
  for (int t = 0; t < 128; ++t) {
    CAPTURE(t);
    CHECK(gotPerm[t] == (t ^ 1) * 10);
    CHECK(gotShr[t] == (t % 16 == 0 ? -1 : t - 1)); // row_shr:1; row starts keep `old`
    CHECK(gotMirror[t] == float((t & ~15) + 15 - (t & 15))); // row_mirror
  }
}

// V_PERMLANEX16_B32 from the RDNA3 ISA: lane i of a row of 16 reads the
// other row of its 32 lanes, at the i-th 4-bit select of {S2, S1}.
TEST_CASE("emulator: permlanex16 reads the other row of 16 at each lane's select") {
  Device dev = Device::emulator("gfx1100"); // wave32
  CompiledKernel k = kernelFromIR("rows", R"(
declare i32 @llvm.amdgcn.permlanex16.i32(i32, i32, i32, i32, i1, i1)
declare float @llvm.amdgcn.permlanex16.f32(float, float, i32, i32, i1, i1)
define amdgpu_kernel void @rows(ptr addrspace(1) %same, ptr addrspace(1) %reversed) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %tid to i64
  %v = mul i32 %tid, 10
  %s = call i32 @llvm.amdgcn.permlanex16.i32(i32 -1, i32 %v, i32 1985229328, i32 -19088744, i1 false, i1 false)
  %ps = getelementptr i32, ptr addrspace(1) %same, i64 %t64
  store i32 %s, ptr addrspace(1) %ps, align 4
  %f = uitofp i32 %tid to float
  %r = call float @llvm.amdgcn.permlanex16.f32(float 0.0, float %f, i32 -1985229329, i32 19088743, i1 true, i1 false)
  %pr = getelementptr float, ptr addrspace(1) %reversed, i64 %t64
  store float %r, ptr addrspace(1) %pr, align 4
  ret void
}
)", 2);
  k.waveSize = 32;
  auto loaded = dev.impl().load(k);
  auto same = dev.alloc<int32_t>(96);
  auto reversed = dev.alloc<float>(96);
  auto args = pointerKernarg({same.devicePtr(), reversed.devicePtr()});
  dev.impl().launch(*loaded, {1, 1, 1}, 96, args.data(), args.size());
  auto gotSame = same.download();
  auto gotReversed = reversed.download();
  for (int t = 0; t < 96; ++t) {
    CAPTURE(t);
    // selects 0x76543210, 0xfedcba98: lane i of the other row, i.e. t ^ 16.
    CHECK(gotSame[t] == (t ^ 16) * 10);
    // selects 0x89abcdef, 0x01234567: lane 15 - i of the other row.
    const int otherRowStart = (t & ~31) + ((t & 16) ^ 16);
    CHECK(gotReversed[t] == float(otherRowStart + 15 - (t & 15)));
  }
}

// GFX9 DPP row_bcast:15 (ctrl 0x142): each row reads the last lane of the row
// before it; row_bcast:31 (0x143): lanes 32-63 read lane 31. A row that the
// row mask disables keeps `old`. V_READLANE_B32: lane n's value, everywhere.
TEST_CASE("emulator: DPP row broadcasts under a row mask, and readlane") {
  Device dev = Device::emulator("gfx942"); // wave64
  CompiledKernel k = kernelFromIR("bcast", R"(
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
declare float @llvm.amdgcn.readlane.f32(float, i32)
define amdgpu_kernel void @bcast(ptr addrspace(1) %b15, ptr addrspace(1) %b31, ptr addrspace(1) %lane, ptr addrspace(1) %full) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %tid to i64
  %v = add i32 %tid, 1000
  %old = sub i32 0, %tid
  %x = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %v, i32 322, i32 10, i32 15, i1 false)
  %px = getelementptr i32, ptr addrspace(1) %b15, i64 %t64
  store i32 %x, ptr addrspace(1) %px, align 4
  %y = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %v, i32 323, i32 12, i32 15, i1 false)
  %py = getelementptr i32, ptr addrspace(1) %b31, i64 %t64
  store i32 %y, ptr addrspace(1) %py, align 4
  %f = uitofp i32 %v to float
  %r = call float @llvm.amdgcn.readlane.f32(float %f, i32 45)
  %r2 = call float @llvm.amdgcn.readlane.f32(float %f, i32 109)
  %rs = fadd float %r, %r2
  %pr = getelementptr float, ptr addrspace(1) %lane, i64 %t64
  store float %rs, ptr addrspace(1) %pr, align 4
  ; every row, bound_ctrl: a row with no source reads 0 (the reduction's form)
  %x2 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %v, i32 322, i32 15, i32 15, i1 true)
  %y2 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %v, i32 323, i32 15, i32 15, i1 true)
  %both = mul i32 %x2, 65536
  %z = add i32 %both, %y2
  %pz = getelementptr i32, ptr addrspace(1) %full, i64 %t64
  store i32 %z, ptr addrspace(1) %pz, align 4
  ret void
}
)", 4);
  auto loaded = dev.impl().load(k);
  auto b15 = dev.alloc<int32_t>(128), b31 = dev.alloc<int32_t>(128), full = dev.alloc<int32_t>(128);
  auto lane = dev.alloc<float>(128);
  auto args = pointerKernarg({b15.devicePtr(), b31.devicePtr(), lane.devicePtr(), full.devicePtr()});
  dev.impl().launch(*loaded, {1, 1, 1}, 128, args.data(), args.size());
  auto got15 = b15.download(), got31 = b31.download(), gotFull = full.download();
  auto gotLane = lane.download();
  for (int t = 0; t < 128; ++t) {
    CAPTURE(t);
    const int inWave = t % 64, waveBase = t - inWave, row = inWave / 16;
    // row mask 0xA: rows 1 and 3 read lane 15 of rows 0 and 2.
    CHECK(got15[t] == (row % 2 == 1 ? waveBase + row * 16 - 1 + 1000 : -t));
    // row mask 0xC: rows 2 and 3 read lane 31.
    CHECK(got31[t] == (row >= 2 ? waveBase + 31 + 1000 : -t));
    // readlane 45, and 109 = lane 45 again (the lane number's low 6 bits).
    CHECK(gotLane[t] == float(2 * (waveBase + 45 + 1000)));
    // Full masks: row_bcast:15 gives row 0 nothing (0), row_bcast:31 rows 0-1.
    const int all15 = row == 0 ? 0 : waveBase + row * 16 - 1 + 1000;
    const int all31 = row < 2 ? 0 : waveBase + 31 + 1000;
    CHECK(gotFull[t] == all15 * 65536 + all31);
  }
}

TEST_CASE("emulator: readfirstlane returns the wave's first lane's value") {
  for (auto [arch, wave] : {std::pair("gfx942", 64), std::pair("gfx1100", 32)}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    CompiledKernel k = kernelFromIR("first", R"(
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
define amdgpu_kernel void @first(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %tid to i64
  %v = mul i32 %tid, 7
  %v1 = add i32 %v, 3
  %f = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %v1)
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %t64
  store i32 %f, ptr addrspace(1) %p, align 4
  ret void
}
)", 1);
    k.waveSize = wave;
    auto loaded = dev.impl().load(k);
    auto out = dev.alloc<int32_t>(128);
    auto args = pointerKernarg({out.devicePtr()});
    dev.impl().launch(*loaded, {1, 1, 1}, 128, args.data(), args.size());
    auto got = out.download();
    for (int t = 0; t < 128; ++t) {
      CAPTURE(t);
      CHECK(got[t] == (t - t % wave) * 7 + 3); // lane 0 of t's wave
    }
  }
}

TEST_CASE("emulator: ballot gathers a wave's compare bits, lane l in bit l") {
  // 100 threads: a full wave of 64, then 36 (lanes past the workgroup are 0).
  // Thread t's bit: t % 3 == 0 or t == 70. Each writes the low and high words.
  Device dev = Device::emulator("gfx950");
  CompiledKernel k = kernelFromIR("vote", R"(
declare i64 @llvm.amdgcn.ballot.i64(i1)
define amdgpu_kernel void @vote(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %r = urem i32 %tid, 3
  %a = icmp eq i32 %r, 0
  %b = icmp eq i32 %tid, 70
  %bit = or i1 %a, %b
  %mask = call i64 @llvm.amdgcn.ballot.i64(i1 %bit)
  %t2 = mul i32 %tid, 2
  %t64 = zext i32 %t2 to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %t64
  store i64 %mask, ptr addrspace(1) %p, align 4
  ret void
}
)", 1);
  k.waveSize = 64;
  auto loaded = dev.impl().load(k);
  auto out = dev.alloc<int32_t>(200);
  auto args = pointerKernarg({out.devicePtr()});
  dev.impl().launch(*loaded, {1, 1, 1}, 100, args.data(), args.size());
  auto got = out.download();
  for (int t = 0; t < 100; ++t) {
    const int wave = t / 64;
    uint64_t want = 0;
    for (int l = 0; l < 64 && wave * 64 + l < 100; ++l) {
      const int u = wave * 64 + l;
      if (u % 3 == 0 || u == 70)
        want |= uint64_t(1) << l;
    }
    CAPTURE(t);
    CHECK(uint32_t(got[2 * t]) == uint32_t(want));
    CHECK(uint32_t(got[2 * t + 1]) == uint32_t(want >> 32));
  }
}

// DS_READ_B64_TR_B8 / _B16 (gfx950; CDNA4 ISA section 11.4): every lane reads
// 8 bytes at its own LDS address; in each group of 16 lanes, lane l receives
// column l of the E x 16 tile whose row j is the reads of lanes R*j ..
// R*j + R - 1 (E elements a lane, R = 16 / E). Checked against reference
// vectors from AMD's own sources, and against that rule with addresses the
// lanes gather in any order (a workgroup of two waves).
TEST_CASE("emulator: ds_read_b64_tr_b8 and _b16 transpose a group of 16 lanes' reads") {
  Device dev = Device::emulator("gfx950"); // wave64
  CompiledKernel k = kernelFromIR("tr", R"(
@lds = internal addrspace(3) global [2048 x i8] poison, align 16
declare <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3))
declare <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3))
define amdgpu_kernel void @tr(ptr addrspace(1) %bytes, ptr addrspace(1) %addrs, ptr addrspace(1) %out8, ptr addrspace(1) %out16) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t64 = zext i32 %tid to i64
  %ps = getelementptr <4 x i32>, ptr addrspace(1) %bytes, i64 %t64
  %v = load <4 x i32>, ptr addrspace(1) %ps, align 16
  %pl = getelementptr <4 x i32>, ptr addrspace(3) @lds, i32 %tid
  store <4 x i32> %v, ptr addrspace(3) %pl, align 16
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %pa = getelementptr i32, ptr addrspace(1) %addrs, i64 %t64
  %a = load i32, ptr addrspace(1) %pa, align 4
  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %a
  %r8 = call <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3) %p)
  %r16 = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %p)
  %p8 = getelementptr <2 x i32>, ptr addrspace(1) %out8, i64 %t64
  store <2 x i32> %r8, ptr addrspace(1) %p8, align 8
  %p16 = getelementptr <4 x i16>, ptr addrspace(1) %out16, i64 %t64
  store <4 x i16> %r16, ptr addrspace(1) %p16, align 8
  ret void
}
)", 4);
  auto loaded = dev.impl().load(k);
  constexpr int kThreads = 128, kLdsBytes = 2048;
  auto bytes = dev.alloc<uint8_t>(kLdsBytes);
  auto addrs = dev.alloc<int32_t>(kThreads);
  auto out8 = dev.alloc<uint8_t>(kThreads * 8);
  auto out16 = dev.alloc<uint16_t>(kThreads * 4);
  auto run = [&](const std::vector<uint8_t> &lds, const std::vector<int32_t> &addr) {
    bytes.copyFrom(lds);
    addrs.copyFrom(addr);
    auto args = pointerKernarg({bytes.devicePtr(), addrs.devicePtr(), out8.devicePtr(), out16.devicePtr()});
    dev.impl().launch(*loaded, {1, 1, 1}, kThreads, args.data(), args.size());
  };
  std::vector<uint8_t> lds(kLdsBytes);
  std::vector<int32_t> addr(kThreads);

  SUBCASE("b16: rocjitsu's reference (halfword h at 8t + 2h holds 0x1200 + 0x11t + h)") {
    for (int t = 0; t < 64; ++t)
      for (int h = 0; h < 4; ++h) {
        const uint16_t v = uint16_t(0x1200 + 0x11 * t + h);
        std::memcpy(&lds[size_t(8 * t + 2 * h)], &v, 2);
      }
    for (int t = 0; t < kThreads; ++t)
      addr[size_t(t)] = 8 * (t % 64);
    run(lds, addr);
    auto got = out16.download();
    auto dwords = [&](int lane) {
      return std::pair<uint32_t, uint32_t>{uint32_t(got[size_t(4 * lane)]) | uint32_t(got[size_t(4 * lane + 1)]) << 16,
                                           uint32_t(got[size_t(4 * lane + 2)]) | uint32_t(got[size_t(4 * lane + 3)]) << 16};
    };
    for (int wave : {0, 64}) {
      CHECK(dwords(wave + 0) == std::pair<uint32_t, uint32_t>{0x12441200u, 0x12cc1288u});
      CHECK(dwords(wave + 5) == std::pair<uint32_t, uint32_t>{0x12561212u, 0x12de129au});
      CHECK(dwords(wave + 16) == std::pair<uint32_t, uint32_t>{0x13541310u, 0x13dc1398u});
      CHECK(dwords(wave + 63) == std::pair<uint32_t, uint32_t>{0x15aa1566u, 0x163215eeu});
    }
  }
  SUBCASE("b8: lanes pointing at 8 * (l % 16) read byte j = LDS[16 j + l % 16]") {
    for (int i = 0; i < kLdsBytes; ++i)
      lds[size_t(i)] = uint8_t(i * 7 + 3);
    for (int t = 0; t < kThreads; ++t)
      addr[size_t(t)] = 8 * (t % 16);
    run(lds, addr);
    auto got = out8.download();
    for (int t = 0; t < kThreads; ++t)
      for (int j = 0; j < 8; ++j) {
        CAPTURE(t);
        CAPTURE(j);
        CHECK(got[size_t(8 * t + j)] == lds[size_t(16 * j + t % 16)]);
      }
  }
  SUBCASE("any addresses: each group's reads, transposed") {
    uint32_t seed = 12345;
    auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
    for (uint8_t &b : lds)
      b = uint8_t(next() >> 24);
    for (int t = 0; t < kThreads; ++t)
      addr[size_t(t)] = int32_t(8 * (next() % (kLdsBytes / 8)));
    run(lds, addr);
    auto got8 = out8.download();
    auto got16 = out16.download();
    for (int t = 0; t < kThreads; ++t) {
      CAPTURE(t);
      const int group = t & ~15, l = t & 15;
      for (int j = 0; j < 8; ++j) // E = 8, R = 2
        CHECK(got8[size_t(8 * t + j)] == lds[size_t(addr[size_t(group + 2 * j + l / 8)] + l % 8)]);
      for (int j = 0; j < 4; ++j) { // E = 4, R = 4
        uint16_t want;
        std::memcpy(&want, &lds[size_t(addr[size_t(group + 4 * j + l / 4)] + 2 * (l % 4))], 2);
        CHECK(got16[size_t(4 * t + j)] == want);
      }
    }
  }
}
