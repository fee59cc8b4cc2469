// Buffer loads and stores on the emulator against the ISA's range rule,
// computed here on the host (CDNA3/CDNA4 ISA "Range checking", RDNA3's
// OOB_SELECT = 3), independently of the emulator's code: a raw resource of
// num_records bytes; each dword of an access is checked on its own; gfx9
// takes a dword when its offset < num_records, gfx11 when offset + 4 <=
// num_records; a rejected dword reads 0 and is not written.
#include "tessel/core/compiled_kernel.hpp"

#include "emulator_ir.hpp"
#include "tessel/runtime/device.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace tessel;

namespace {

const TraceArg kI32Ptr{TraceArg::Pointer, DType::I32};
const TraceArg kI32{TraceArg::Int, DType::I32};

// Thread t: a 16-byte buffer load from `src` at byte offset 4t (thread 7:
// 2^31, what the compiler gives a masked-off lane) into out[4t..4t+3]; a
// 2-byte load at 2t into half[t]; an 8-byte buffer store of {t, t + 1000}
// into `dst` at byte offset 4t. Both resources hold `records` bytes. With
// `cpu`, the kernel names its target ("target-cpu"); without, as the
// compiler's modules, the device it is loaded on says.
std::string bufferKernel(const char *arch, bool cpu) {
  return std::string(R"(
declare i32 @llvm.amdgcn.workitem.id.x()
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare <4 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v4i32(ptr addrspace(8), i32, i32, i32)
declare i16 @llvm.amdgcn.raw.ptr.buffer.load.i16(ptr addrspace(8), i32, i32, i32)
declare void @llvm.amdgcn.raw.ptr.buffer.store.v2i32(<2 x i32>, ptr addrspace(8), i32, i32, i32)
define amdgpu_kernel void @buffers(ptr addrspace(1) %src, ptr addrspace(1) %dst, ptr addrspace(1) %out,
                                   ptr addrspace(1) %half, i32 %records) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %n = zext i32 %records to i64
  %in = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %src, i16 0, i64 %n, i32 0)
  %outr = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %dst, i16 0, i64 %n, i32 0)
  %off4 = mul i32 %t, 4
  %last = icmp eq i32 %t, 7
  %at = select i1 %last, i32 2147483648, i32 %off4
  %v = call <4 x i32> @llvm.amdgcn.raw.ptr.buffer.load.v4i32(ptr addrspace(8) %in, i32 %at, i32 0, i32 0)
  %slot = mul i32 %t, 4
  %slot64 = zext i32 %slot to i64
  %o = getelementptr i32, ptr addrspace(1) %out, i64 %slot64
  store <4 x i32> %v, ptr addrspace(1) %o, align 4
  %off2 = mul i32 %t, 2
  %h = call i16 @llvm.amdgcn.raw.ptr.buffer.load.i16(ptr addrspace(8) %in, i32 %off2, i32 0, i32 0)
  %hx = zext i32 %t to i64
  %ho = getelementptr i16, ptr addrspace(1) %half, i64 %hx
  store i16 %h, ptr addrspace(1) %ho, align 2
  %a = insertelement <2 x i32> poison, i32 %t, i32 0
  %t1000 = add i32 %t, 1000
  %ab = insertelement <2 x i32> %a, i32 %t1000, i32 1
  call void @llvm.amdgcn.raw.ptr.buffer.store.v2i32(<2 x i32> %ab, ptr addrspace(8) %outr, i32 %at, i32 0, i32 0)
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="1,1024" )") + (cpu ? std::string("\"target-cpu\"=\"") + arch + "\"" : "") + R"( }
)";
}

} // namespace

TEST_CASE("emulator: buffer loads and stores check each dword against num_records, as gfx9 and gfx11 define it") {
  for (const char *arch : {"gfx942", "gfx1100"})
   for (bool cpu : {true, false})
    for (uint32_t records : {22u, 24u, 0u, 64u}) {
      const bool gfx11 = std::string(arch) == "gfx1100";
      CAPTURE(std::string(arch));
      CAPTURE(cpu);
      CAPTURE(records);
      Device dev = Device::emulator(arch);
      CompiledKernel k =
          testing::kernelFromIR("buffers", bufferKernel(arch, cpu), {kI32Ptr, kI32Ptr, kI32Ptr, kI32Ptr, kI32});
      k.waveSize = gfx11 ? 32 : 64;
      auto loaded = dev.impl().load(k);
      std::vector<int32_t> src(16);
      for (int i = 0; i < 16; ++i)
        src[size_t(i)] = 0x01010101 * (i + 1);
      const int32_t poison = int32_t(0xABABABAB);
      auto bsrc = dev.upload(src);
      auto bdst = dev.upload(std::vector<int32_t>(16, poison));
      auto bout = dev.upload(std::vector<int32_t>(32, poison));
      auto bhalf = dev.upload(std::vector<int16_t>(8, int16_t(0x5A5A)));
      testing::Kernarg args(k.kernargs);
      args.set(0, bsrc.devicePtr()).set(1, bdst.devicePtr()).set(2, bout.devicePtr()).set(3, bhalf.devicePtr())
          .set(4, int32_t(records));
      dev.impl().launch(*loaded, {1, 1, 1}, 8, args.data(), args.size());

      // The ISA's rule for one component of `size` bytes at byte offset `at`.
      auto taken = [&](uint64_t at, uint64_t size) { return gfx11 ? at + size <= records : at < records; };
      std::vector<uint8_t> srcBytes(src.size() * 4);
      std::memcpy(srcBytes.data(), src.data(), srcBytes.size());
      std::vector<int32_t> out = bout.download(), dst = bdst.download();
      std::vector<int16_t> half = bhalf.download();
      std::vector<int32_t> wantDst(16, poison);
      for (uint32_t t = 0; t < 8; ++t) {
        CAPTURE(t);
        const uint64_t at = t == 7 ? (uint64_t(1) << 31) : 4 * t;
        for (uint32_t c = 0; c < 4; ++c) {
          const uint64_t o = at + 4 * c;
          int32_t want = 0;
          if (taken(o, 4))
            std::memcpy(&want, &srcBytes[o], 4);
          CHECK(out[4 * t + c] == want);
        }
        int16_t wantHalf = 0;
        if (taken(2 * t, 2))
          std::memcpy(&wantHalf, &srcBytes[2 * t], 2);
        CHECK(half[t] == wantHalf);
        for (uint32_t c = 0; c < 2; ++c)
          if (taken(at + 4 * c, 4))
            wantDst[(at + 4 * c) / 4] = int32_t(c == 0 ? t : t + 1000);
      }
      // Threads write overlapping dwords ({t, t + 1000} at 4t): the later
      // thread's first dword lands over the earlier one's second, unless
      // only one of them is in range. Compare dwords no two threads share.
      for (uint32_t d = 0; d < 16; ++d) {
        CAPTURE(d);
        const bool shared = d >= 1 && d <= 6 && taken(4 * d, 4);
        if (!shared)
          CHECK(dst[d] == wantDst[d]);
        else
          CHECK((dst[d] == int32_t(d) || dst[d] == int32_t(d - 1 + 1000)));
      }
    }
}

TEST_CASE("emulator: a buffer access with a non-zero soffset is refused with a message") {
  Device dev = Device::emulator("gfx942");
  std::string ir = bufferKernel("gfx942", true);
  const std::string from = "@llvm.amdgcn.raw.ptr.buffer.load.i16(ptr addrspace(8) %in, i32 %off2, i32 0";
  ir.replace(ir.find(from), from.size(), "@llvm.amdgcn.raw.ptr.buffer.load.i16(ptr addrspace(8) %in, i32 %off2, i32 4");
  CompiledKernel k = testing::kernelFromIR("buffers", ir, {kI32Ptr, kI32Ptr, kI32Ptr, kI32Ptr, kI32});
  try {
    dev.impl().load(k);
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(std::string(e.what()).find("the emulator runs buffer accesses with soffset 0 only") != std::string::npos);
  }
}

namespace {

// Two waves of 64. Lane l of wave w loads 16 bytes into LDS from `src` at
// byte offset 16 * ((7 * l + w) % 64) (a permutation of the chunks), or at
// 2^31 when l % 5 == 4 in wave 1 (a masked-off lane); the LDS pointer is
// the wave's own, @lds + 16 + 1024 * w. After the wait and a barrier,
// thread t copies the 16 LDS bytes at 16 + 16 * ((t + 64) % 128) (the
// other wave's) to out[4t..4t+3].
const char *kLoadToLdsKernel = R"(
@lds = addrspace(3) global [2064 x i8] undef, align 16
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
declare void @llvm.amdgcn.s.waitcnt(i32)
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32, i32, i32, i32, i32)
define amdgpu_kernel void @to_lds(ptr addrspace(1) %src, ptr addrspace(1) %out, i32 %records) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %n = zext i32 %records to i64
  %in = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %src, i16 0, i64 %n, i32 0)
  %w = lshr i32 %t, 6
  %l = and i32 %t, 63
  %l7 = mul i32 %l, 7
  %c0 = add i32 %l7, %w
  %c = and i32 %c0, 63
  %off = mul i32 %c, 16
  %r5 = urem i32 %l, 5
  %is4 = icmp eq i32 %r5, 4
  %w1 = icmp eq i32 %w, 1
  %off4 = and i1 %is4, %w1
  %at = select i1 %off4, i32 2147483648, i32 %off
  %wb = mul i32 %w, 1024
  %base = add i32 %wb, 16
  %ldsw = getelementptr i8, ptr addrspace(3) @lds, i32 %base
  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %in, ptr addrspace(3) %ldsw, i32 16, i32 %at, i32 0, i32 0, i32 0)
  call void @llvm.amdgcn.s.waitcnt(i32 3952)
  call void @llvm.amdgcn.s.barrier()
  %t64 = add i32 %t, 64
  %o = and i32 %t64, 127
  %o16 = mul i32 %o, 16
  %rd = add i32 %o16, 16
  %p = getelementptr i8, ptr addrspace(3) @lds, i32 %rd
  %v = load <4 x i32>, ptr addrspace(3) %p, align 16
  %t4 = mul i32 %t, 4
  %t4x = zext i32 %t4 to i64
  %q = getelementptr i32, ptr addrspace(1) %out, i64 %t4x
  store <4 x i32> %v, ptr addrspace(1) %q, align 4
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="1,1024" "target-cpu"="gfx950" }
)";

} // namespace

TEST_CASE("emulator: a buffer load to LDS puts lane l's 16 bytes at the LDS pointer + 16 l, zeros out of range") {
  Device dev = Device::emulator("gfx950");
  for (uint32_t records : {1024u, 1000u, 517u}) {
    CAPTURE(records);
    CompiledKernel k = testing::kernelFromIR("to_lds", kLoadToLdsKernel, {kI32Ptr, kI32Ptr, kI32});
    k.waveSize = 64;
    auto loaded = dev.impl().load(k);
    std::vector<int32_t> src(256);
    for (int i = 0; i < 256; ++i)
      src[size_t(i)] = 0x01000000 + i * 3;
    auto bsrc = dev.upload(src);
    auto bout = dev.upload(std::vector<int32_t>(512, int32_t(0xABABABAB)));
    testing::Kernarg args(k.kernargs);
    args.set(0, bsrc.devicePtr()).set(1, bout.devicePtr()).set(2, int32_t(records));
    dev.impl().launch(*loaded, {1, 1, 1}, 128, args.data(), args.size());
    std::vector<int32_t> out = bout.download();
    for (uint32_t t = 0; t < 128; ++t) {
      // The LDS chunk thread t reads was written by thread (t + 64) % 128.
      const uint32_t writer = (t + 64) % 128, w = writer / 64, l = writer % 64;
      const bool masked = w == 1 && l % 5 == 4;
      const uint64_t at = masked ? (uint64_t(1) << 31) : 16 * ((7 * l + w) % 64);
      for (uint32_t d = 0; d < 4; ++d) {
        CAPTURE(t);
        CAPTURE(d);
        const uint64_t byte = at + 4 * d;
        CHECK(out[4 * t + d] == (byte < records ? src[byte / 4] : 0));
      }
    }
  }
}
