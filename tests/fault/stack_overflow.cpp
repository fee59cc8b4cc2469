// A kernel whose threads need more stack than the emulator gives a fiber
// (a 512 KiB private array; each fiber has 256 KiB): the thread meets the
// guard page below its stack, and the process dies as with any segfault,
// after the emulator says the stack overflowed (checked by the ctest that
// runs this program). Without the guard page the array would silently
// overwrite the stacks of the workgroup's other threads.
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/runtime/device.hpp"

// The emulator tests' module header; this program is no test suite.
#define DOCTEST_CONFIG_DISABLE
#include "../unit/devices/emulator_ir.hpp"

#include <cstring>
#include <vector>

using namespace tessel;

int main() {
  CompiledKernel k = testing::kernelFromIR("deep_stack", R"(
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()

define amdgpu_kernel void @deep_stack(ptr addrspace(1) %out) {
entry:
  %big = alloca [131072 x i32], align 4, addrspace(5)
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %first = getelementptr [131072 x i32], ptr addrspace(5) %big, i32 0, i32 %tid
  store volatile i32 %tid, ptr addrspace(5) %first, align 4
  call void @llvm.amdgcn.s.barrier()
  %v = load volatile i32, ptr addrspace(5) %first, align 4
  %t64 = zext i32 %tid to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %t64
  store i32 %v, ptr addrspace(1) %p, align 4
  ret void
}
)",
                                           {{TraceArg::Pointer, DType::I32}});
  Device dev = Device::emulator("gfx942");
  auto loaded = dev.impl().load(k);
  auto out = dev.alloc<int32_t>(64);
  void *ptr = out.devicePtr();
  std::vector<uint8_t> args(8);
  std::memcpy(args.data(), &ptr, 8);
  dev.impl().launch(*loaded, {1, 1, 1}, 64, args.data(), args.size());
  return 0; // not reached
}
