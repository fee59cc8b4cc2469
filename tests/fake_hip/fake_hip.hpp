// What the fake HIP runtime (libtessel_fake_hip.so) records, shared by the
// fake and the tests that read it through dlsym. No HIP headers.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// The fake's devices: 0 is a gfx942, 1 a gfx1100.

// The last hipModuleLaunchKernel that succeeded. Pointers stay valid until the
// next launch or fakeHipReset().
struct FakeHipLaunch {
  const char *kernel;         // the function's symbol name
  unsigned grid[3];           // gridDim as passed: workgroups per dimension
  unsigned block[3];          // blockDim: threads per workgroup
  unsigned sharedMemBytes;    // dynamic LDS
  void *stream;
  bool usedKernelParams;      // kernelParams (not `extra`) carried the arguments
  const uint8_t *kernarg;     // a copy of the HIP_LAUNCH_PARAM_BUFFER_POINTER bytes
  size_t kernargBytes;        // *HIP_LAUNCH_PARAM_BUFFER_SIZE
  uint32_t descriptorKernargSize; // kernarg_size of the kernel descriptor (<name>.kd)
  uint32_t descriptorGroupSegmentSize; // group_segment_fixed_size (static LDS)
  uint32_t maxFlatWorkgroupSize;  // .max_flat_workgroup_size of the metadata note; 0 if not found
  int device;                 // the device the kernel's module was loaded on
  bool hostcallBuffer;        // the metadata note lists a hidden_hostcall_buffer argument (printf)
};

// Function types of the accessors, for dlsym.
using FakeHipLastLaunchFn = const FakeHipLaunch *(*)();   // "fakeHipLastLaunch"; null before any
using FakeHipLaunchCountFn = int (*)();                   // "fakeHipLaunchCount"
using FakeHipSetRuntimeVersionFn = void (*)(int);         // "fakeHipSetRuntimeVersion" (HIP_VERSION)
using FakeHipLiveAllocationsFn = int (*)();               // "fakeHipLiveAllocations"
using FakeHipLiveModulesFn = int (*)();                   // "fakeHipLiveModules"
using FakeHipResetFn = void (*)();                        // "fakeHipReset": forget launches
}
