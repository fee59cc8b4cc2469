// Handwritten kernel modules for emulator tests: what the lowering emits
// (AMDGPU triple and gfx942 data layout), wrapped as a CompiledKernel.
#pragma once

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/runtime/device.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace tessel::testing {

inline const char *kAmdgpuModuleHeader =
    "target datalayout = \"e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-"
    "p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-"
    "v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9\"\n"
    "target triple = \"amdgcn-amd-amdhsa\"\n";

// `ir` is the module after the header: declarations and the kernel.
inline CompiledKernel kernelFromIR(std::string name, const std::string &ir,
                                   const std::vector<TraceArg> &args) {
  CompiledKernel k;
  k.name = std::move(name);
  k.llvmModule = std::string(kAmdgpuModuleHeader) + ir;
  k.kernargs = kernargLayout(args);
  k.waveSize = 64;
  return k;
}

// Runs kernel @matrix of `ir` on one wave of 64 lanes of `dev` (compiled
// for `arch`), its arguments the device pointers `pointers` in order.
inline void launchOnOneWave(Device &dev, const std::string &ir, const std::vector<void *> &pointers,
                            const char *arch = "gfx950") {
  CompiledKernel k = kernelFromIR("matrix", ir, std::vector<TraceArg>(pointers.size(), {TraceArg::Pointer, DType::I8}));
  k.arch = arch;
  auto loaded = dev.impl().load(k);
  std::vector<uint8_t> args(sizeof(void *) * pointers.size());
  std::memcpy(args.data(), pointers.data(), args.size());
  dev.impl().launch(*loaded, {1, 1, 1}, 64, args.data(), args.size());
}

// Kernel @matrix calling the scaled f8f6f4 MFMA `intrinsic` once a lane:
// each lane loads its A (`ta`), B (`tb`) and C (`acc`) registers and its two
// scale registers from arguments a, b, c, sa, sb (in that order, then d for
// the result), element l of each for lane l. The call takes the format codes
// `formatA`/`formatB`, the byte selects `opselA`/`opselB` and, as scale
// operands, `scaleA`/`scaleB`: "%vsa"/"%vsb" for the loaded registers, or a
// constant.
inline std::string scaledMfmaKernelIR(const std::string &intrinsic, const std::string &ta, const std::string &tb,
                                      const std::string &acc, int formatA, int formatB, unsigned opselA,
                                      const std::string &scaleA, unsigned opselB, const std::string &scaleB) {
  return "declare i32 @llvm.amdgcn.workitem.id.x()\n"
         "declare " + acc + " @" + intrinsic + "(" + ta + ", " + tb + ", " + acc +
         ", i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32)\n"
         "define amdgpu_kernel void @matrix(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, "
         "ptr addrspace(1) %d, ptr addrspace(1) %sa, ptr addrspace(1) %sb) {\n"
         "  %lane = call i32 @llvm.amdgcn.workitem.id.x()\n"
         "  %l = zext i32 %lane to i64\n"
         "  %pa = getelementptr " + ta + ", ptr addrspace(1) %a, i64 %l\n"
         "  %va = load " + ta + ", ptr addrspace(1) %pa\n"
         "  %pb = getelementptr " + tb + ", ptr addrspace(1) %b, i64 %l\n"
         "  %vb = load " + tb + ", ptr addrspace(1) %pb\n"
         "  %pc = getelementptr " + acc + ", ptr addrspace(1) %c, i64 %l\n"
         "  %vc = load " + acc + ", ptr addrspace(1) %pc\n"
         "  %psa = getelementptr i32, ptr addrspace(1) %sa, i64 %l\n"
         "  %vsa = load i32, ptr addrspace(1) %psa\n"
         "  %psb = getelementptr i32, ptr addrspace(1) %sb, i64 %l\n"
         "  %vsb = load i32, ptr addrspace(1) %psb\n"
         "  %vd = call " + acc + " @" + intrinsic + "(" + ta + " %va, " + tb + " %vb, " + acc + " %vc, i32 " +
         std::to_string(formatA) + ", i32 " + std::to_string(formatB) + ", i32 " + std::to_string(opselA) +
         ", i32 " + scaleA + ", i32 " + std::to_string(opselB) + ", i32 " + scaleB + ")\n"
         "  %pd = getelementptr " + acc + ", ptr addrspace(1) %d, i64 %l\n"
         "  store " + acc + " %vd, ptr addrspace(1) %pd\n"
         "  ret void\n}\n";
}

// Kernarg bytes laid out as kernargLayout() says.
class Kernarg {
public:
  explicit Kernarg(const KernargLayout &layout) : layout_(layout), bytes_(layout.totalBytes, 0) {}
  template <class T> Kernarg &set(size_t index, T value) {
    REQUIRE(layout_.sizes[index] == sizeof(T));
    std::memcpy(bytes_.data() + layout_.offsets[index], &value, sizeof(T));
    return *this;
  }
  const void *data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

private:
  KernargLayout layout_;
  std::vector<uint8_t> bytes_;
};

// Global thread index %i (i32) and %i64: workgroup.id.x * workgroup_size_x
// (from the dispatch packet) + workitem.id.x. Needs workitem.id.x,
// workgroup.id.x and dispatch.ptr declared.
inline const char *kGlobalIndex = R"(
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %dp = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %wsp = getelementptr i8, ptr addrspace(4) %dp, i64 4
  %ws16 = load i16, ptr addrspace(4) %wsp, align 4
  %ws = zext i16 %ws16 to i32
  %base = mul i32 %wg, %ws
  %i = add i32 %base, %tid
  %i64 = sext i32 %i to i64
)";

// Kernarg bytes of pointer arguments, 8 bytes each, in order.
inline std::vector<uint8_t> pointerKernarg(std::initializer_list<void *> pointers) {
  std::vector<uint8_t> bytes(pointers.size() * 8);
  size_t at = 0;
  for (void *p : pointers) {
    std::memcpy(bytes.data() + at, &p, 8);
    at += 8;
  }
  return bytes;
}

} // namespace tessel::testing
