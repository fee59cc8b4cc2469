// Compiled kernels launched through the HIP device on the fake HIP runtime
// (tests/fake_hip): the code object passes the fake's ELF checks, and the
// recorded hipModuleLaunchKernel has the grid (in workgroups), the block and
// the kernarg bytes tessel means. The fake executes nothing.
#include "e2e_common.hpp"
#include "fake_hip.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>

using namespace tessel;
using namespace e2e;

namespace {

void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

// A kernel that reads the grid size (num_programs) from the dispatch packet.
void fill_grid_size(Ptr<i32> out) { store(out + program_id(0), num_programs(0)); }

// A sum over a whole tile: partial sums cross waves through LDS.
void tile_sum(Ptr<f32> x, Ptr<f32> out, Const<int> BLOCK) {
  store(out + program_id(0), sum(load(x + program_id(0) * BLOCK + arange(0, BLOCK)), 0));
}

// device_print and device_assert: printf through the hostcall buffer.
void print_values(Ptr<f32> x, i32 n) {
  auto offs = arange(0, 64);
  auto v = load(x + offs, offs < n, 0.0f);
  device_assert(v >= 0.0f, "non-negative");
  device_print("v", v);
}

// The HIP device on the fake. TESSEL_HIP_LIBRARY is read when a device is made;
// it is left set for this process (the e2e suite otherwise uses the emulator explicitly).
Device fakeHipDevice() {
  setenv("TESSEL_HIP_LIBRARY", TESSEL_FAKE_HIP_LIBRARY, 1);
  return Device::hip();
}

template <class Fn> Fn fakeSymbol(const char *name) {
  static void *handle = dlopen(TESSEL_FAKE_HIP_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(handle != nullptr, dlerror());
  auto fn = reinterpret_cast<Fn>(dlsym(handle, name));
  REQUIRE_MESSAGE(bool(fn), name);
  return fn;
}
const FakeHipLaunch &lastLaunch() {
  const FakeHipLaunch *launch = fakeSymbol<FakeHipLastLaunchFn>("fakeHipLastLaunch")();
  REQUIRE(launch != nullptr);
  return *launch;
}
int launchCount() { return fakeSymbol<FakeHipLaunchCountFn>("fakeHipLaunchCount")(); }

const CompiledKernel &lastKernel(const auto &kernel) {
  REQUIRE(kernel.runtime() != nullptr);
  REQUIRE(kernel.runtime()->lastKernel() != nullptr);
  return *kernel.runtime()->lastKernel();
}

// The value of `.directive N` in AMDGPU assembly; -1 when absent.
long directive(const std::string &assembly, const std::string &name) {
  size_t at = assembly.find(name + " ");
  return at == std::string::npos ? -1 : std::strtol(assembly.c_str() + at + name.size(), nullptr, 10);
}

template <class T> T kernargAt(const FakeHipLaunch &launch, uint32_t offset) {
  REQUIRE(offset + sizeof(T) <= launch.kernargBytes);
  T value;
  std::memcpy(&value, launch.kernarg + offset, sizeof value);
  return value;
}

} // namespace

TEST_CASE("hip (fake): vector add loads and launches with the grid, block and kernargs tessel means") {
  Device dev = fakeHipDevice();
  REQUIRE(dev.arch() == "gfx942");
  const size_t n = 5000;
  auto x = dev.upload(randomFloats(n)), y = dev.upload(randomFloats(n));
  auto out = dev.alloc<float>(n);
  for (unsigned warps : {1u, 4u, 8u}) {
    CAPTURE(warps);
    auto add = jit<vector_add>();
    const int before = launchCount();
    add.launch(dev, {cdiv(n, 1024)}, {.num_warps = warps}, x, y, out, int(n), 1024);
    REQUIRE(launchCount() == before + 1);
    const CompiledKernel &k = lastKernel(add);
    const FakeHipLaunch &launch = lastLaunch();
    CHECK(std::string(launch.kernel) == k.name);
    // hipModuleLaunchKernel takes gridDim in workgroups (it multiplies by blockDim).
    CHECK(launch.grid[0] == 5);
    CHECK(launch.grid[1] == 1);
    CHECK(launch.grid[2] == 1);
    CHECK(launch.block[0] == warps * 64);
    CHECK(launch.maxFlatWorkgroupSize == warps * 64); // HIP rejects a larger block
    CHECK(launch.block[1] == 1);
    CHECK(launch.block[2] == 1);
    CHECK(launch.sharedMemBytes == 0); // LDS is static, in the descriptor
    CHECK(launch.stream == nullptr);
    CHECK_FALSE(launch.usedKernelParams);
    // The arguments at kernargLayout() offsets.
    REQUIRE(k.kernargs.offsets.size() == 4);
    CHECK(launch.kernargBytes == k.kernargs.totalBytes);
    CHECK(kernargAt<uint64_t>(launch, k.kernargs.offsets[0]) == reinterpret_cast<uintptr_t>(x.devicePtr()));
    CHECK(kernargAt<uint64_t>(launch, k.kernargs.offsets[1]) == reinterpret_cast<uintptr_t>(y.devicePtr()));
    CHECK(kernargAt<uint64_t>(launch, k.kernargs.offsets[2]) == reinterpret_cast<uintptr_t>(out.devicePtr()));
    CHECK(kernargAt<int32_t>(launch, k.kernargs.offsets[3]) == int32_t(n));
    // The descriptor the fake found is the one the assembly describes, and the
    // kernel has no hidden arguments: its kernarg segment is exactly ours.
    CHECK(long(launch.descriptorKernargSize) == directive(k.assembly(), ".amdhsa_kernarg_size"));
    CHECK(launch.descriptorKernargSize == k.kernargs.totalBytes);
    CHECK(directive(k.assembly(), ".amdhsa_code_object_version") == 5);
  }
}

TEST_CASE("hip (fake): a multi-dimensional grid is passed through as workgroups") {
  Device dev = fakeHipDevice();
  auto x = dev.alloc<float>(64), y = dev.alloc<float>(64), out = dev.alloc<float>(64);
  auto add = jit<vector_add>();
  add.launch(dev, {3, 2, 7}, {.num_warps = 2}, x, y, out, 64, 64);
  const FakeHipLaunch &launch = lastLaunch();
  CHECK(launch.grid[0] == 3);
  CHECK(launch.grid[1] == 2);
  CHECK(launch.grid[2] == 7);
  CHECK(launch.block[0] == 128);
}

TEST_CASE("hip (fake): num_programs reads the dispatch packet, so no hidden kernel arguments") {
  Device dev = fakeHipDevice();
  auto out = dev.alloc<int32_t>(16);
  auto fill = jit<fill_grid_size>();
  fill.launch(dev, {16}, {.num_warps = 1}, out);
  const CompiledKernel &k = lastKernel(fill);
  const FakeHipLaunch &launch = lastLaunch();
  CHECK(launch.kernargBytes == 8);
  CHECK(launch.descriptorKernargSize == 8);
  CHECK(!contains(k.assembly(), "hidden_"));
  CHECK(contains(k.assembly(), ".amdhsa_user_sgpr_dispatch_ptr 1"));
}

TEST_CASE("hip (fake): a ROCm 5 runtime gets code object v4 kernels, which load") {
  Device v5 = fakeHipDevice();
  fakeSymbol<FakeHipSetRuntimeVersionFn>("fakeHipSetRuntimeVersion")(50731921); // HIP 5.7
  Device v4 = Device::hip();
  fakeSymbol<FakeHipSetRuntimeVersionFn>("fakeHipSetRuntimeVersion")(60241134);
  REQUIRE(v4.impl().codeObjectVersion() == 4);
  REQUIRE(v5.impl().codeObjectVersion() == 5);
  auto x = v4.alloc<float>(100), y = v4.alloc<float>(100), out = v4.alloc<float>(100);
  auto add = jit<vector_add>();
  add.launch(v4, {1}, {.num_warps = 4}, x, y, out, 100, 128);
  const CompiledKernel &k = lastKernel(add);
  CHECK(directive(k.assembly(), ".amdhsa_code_object_version") == 4);
  CHECK(contains(k.llvmIR(), "amdhsa_code_object_version\", i32 400"));
  CHECK(lastLaunch().kernargBytes == k.kernargs.totalBytes);
}

TEST_CASE("the emulator's kernels are code object v5, the default") {
  auto add = jit<vector_add>();
  auto x = emulator().alloc<float>(10), y = emulator().alloc<float>(10), out = emulator().alloc<float>(10);
  add.launch(emulator(), {1}, {.num_warps = 1}, x, y, out, 10, 64);
  CHECK(directive(lastKernel(add).assembly(), ".amdhsa_code_object_version") == 5); // the default
}

TEST_CASE("hip (fake): a workgroup larger than the kernel was compiled for is refused, as by HIP") {
  Device dev = fakeHipDevice();
  auto x = dev.alloc<float>(64), y = dev.alloc<float>(64), out = dev.alloc<float>(64);
  auto add = jit<vector_add>();
  add.launch(dev, {1}, {.num_warps = 4}, x, y, out, 64, 64);
  const CompiledKernel &k = lastKernel(add);
  std::unique_ptr<LoadedKernel> loaded = dev.impl().load(k);
  std::vector<uint8_t> kernarg(k.kernargs.totalBytes, 0);
  CHECK_THROWS_WITH_AS(dev.impl().launch(*loaded, {1}, 512, kernarg.data(), kernarg.size()),
                       doctest::Contains("hipErrorLaunchFailure"), Error);
  CHECK_NOTHROW(dev.impl().launch(*loaded, {1}, 256, kernarg.data(), kernarg.size()));
}

TEST_CASE("hip (fake): a kernel's LDS is static, in its descriptor, not passed at launch") {
  Device dev = fakeHipDevice();
  auto x = dev.alloc<float>(4096), out = dev.alloc<float>(4);
  auto s = jit<tile_sum>();
  s.launch(dev, {4}, {.num_warps = 4}, x, out, 1024);
  const CompiledKernel &k = lastKernel(s);
  const FakeHipLaunch &launch = lastLaunch();
  REQUIRE(k.ldsBytes > 0);
  CHECK(launch.sharedMemBytes == 0);
  CHECK(launch.descriptorGroupSegmentSize >= k.ldsBytes);
  CHECK(long(launch.descriptorGroupSegmentSize) == directive(k.assembly(), ".amdhsa_group_segment_fixed_size"));
}

// ---- HIP interop: the caller's streams, device ids and hipMalloc memory ----

namespace {
using HipStatus = int;
// The fake's entry points a HIP program would call itself.
HipStatus hipCall(const char *name, auto... args) {
  return fakeSymbol<HipStatus (*)(decltype(args)...)>(name)(args...);
}
int currentHipDevice() {
  int device = -1;
  REQUIRE(hipCall("hipGetDevice", &device) == 0);
  return device;
}
} // namespace

TEST_CASE("hip (fake): a launch goes to the caller's stream, with the caller's hipMalloc pointers") {
  Device dev = fakeHipDevice();
  REQUIRE(hipCall("hipSetDevice", 0) == 0);
  void *stream = nullptr, *x = nullptr, *y = nullptr, *out = nullptr;
  REQUIRE(hipCall("hipStreamCreate", &stream) == 0);
  for (void **p : {&x, &y, &out})
    REQUIRE(hipCall("hipMalloc", p, size_t(300 * sizeof(float))) == 0);
  auto add = jit<vector_add>();
  add.launch(dev, {1}, {.num_warps = 4, .stream = stream}, static_cast<const float *>(x),
             static_cast<const float *>(y), static_cast<float *>(out), 300, 512);
  const CompiledKernel &k = lastKernel(add);
  CHECK(lastLaunch().stream == stream);
  CHECK(kernargAt<uint64_t>(lastLaunch(), k.kernargs.offsets[0]) == reinterpret_cast<uintptr_t>(x));
  CHECK(kernargAt<uint64_t>(lastLaunch(), k.kernargs.offsets[2]) == reinterpret_cast<uintptr_t>(out));
  // The stream is not part of the specialization: the next launch hits the
  // cache and goes to the null stream.
  add.launch(dev, {1}, {.num_warps = 4}, static_cast<const float *>(x), static_cast<const float *>(y),
             static_cast<float *>(out), 300, 512);
  CHECK(lastLaunch().stream == nullptr);
  CHECK(add.stats().launches == 2);
  CHECK(add.stats().memoryHits == 1);
  REQUIRE(hipCall("hipStreamDestroy", stream) == 0);
  for (void *p : {x, y, out})
    REQUIRE(hipCall("hipFree", p) == 0);
}

TEST_CASE("hip (fake): Device::hip(id) targets that device's arch and leaves the caller's current device") {
  fakeHipDevice();
  REQUIRE(hipCall("hipSetDevice", 0) == 0);
  Device rdna = Device::hip(1);
  CHECK(currentHipDevice() == 0); // making the device left the caller's
  CHECK(rdna.arch() == "gfx1100");
  CHECK(rdna.waveSize() == 32);
  CHECK(contains(rdna.name(), "7900"));
  // The caller works on device 0 and made a stream on device 1 for tessel.
  REQUIRE(hipCall("hipSetDevice", 1) == 0);
  void *stream = nullptr;
  REQUIRE(hipCall("hipStreamCreate", &stream) == 0);
  REQUIRE(hipCall("hipSetDevice", 0) == 0);
  auto x = rdna.alloc<float>(100), y = rdna.alloc<float>(100), out = rdna.alloc<float>(100);
  CHECK(currentHipDevice() == 0);
  auto add = jit<vector_add>();
  add.launch(rdna, {1}, {.num_warps = 2, .stream = stream}, x, y, out, 100, 128);
  const FakeHipLaunch &launch = lastLaunch();
  CHECK(launch.device == 1); // the module was loaded on device 1 (the fake refuses a gfx942 object there)
  CHECK(launch.stream == stream);
  CHECK(launch.block[0] == 64); // 2 waves of 32
  CHECK(directive(lastKernel(add).assembly(), ".amdhsa_wavefront_size32") == 1);
  CHECK(currentHipDevice() == 0); // as the caller left it
  out.download();
  CHECK(currentHipDevice() == 0);

  // A stream of another device than the kernel's is HIP's error, named at the launch.
  void *stream0 = nullptr;
  REQUIRE(hipCall("hipStreamCreate", &stream0) == 0); // on device 0
  CHECK_THROWS_WITH_AS(add.launch(rdna, {1}, {.num_warps = 2, .stream = stream0}, x, y, out, 100, 128),
                       doctest::Contains("HIP could not launch kernel 'vector_add': hipErrorInvalidHandle"), Error);
  CHECK(currentHipDevice() == 0);
  REQUIRE(hipCall("hipStreamDestroy", stream) == 0);
  REQUIRE(hipCall("hipStreamDestroy", stream0) == 0);
}

TEST_CASE("hip (fake): device_print's code object calls the device library's printf and lists the hostcall "
          "buffer its runtime fills (code object v5 and v4)") {
  Device v5 = fakeHipDevice();
  fakeSymbol<FakeHipSetRuntimeVersionFn>("fakeHipSetRuntimeVersion")(50731921); // HIP 5.7
  Device v4 = Device::hip();
  fakeSymbol<FakeHipSetRuntimeVersionFn>("fakeHipSetRuntimeVersion")(60241134);
  for (Device *dev : {&v5, &v4}) {
    CAPTURE(dev->impl().codeObjectVersion());
    auto x = dev->alloc<float>(64);
    auto kernel = jit<print_values>();
    kernel.launch(*dev, {1}, {.num_warps = 1, .debug = true}, x, 50);
    const CompiledKernel &k = lastKernel(kernel);
    CHECK(lastLaunch().hostcallBuffer);
    // The printf calls reach the hostcall (ockl's one out-of-line function).
    CHECK(contains(k.assembly(), "__ockl_hostcall_internal"));
    CHECK(contains(k.assembly(), ".value_kind:     hidden_hostcall_buffer"));
    CHECK(contains(k.llvmIR(), "@__ockl_printf_begin"));
    CHECK(contains(k.llvmIR(), "@__ockl_fprintf_stderr_begin"));
    CHECK(contains(k.llvmIR(), "@llvm.trap"));
    // The launch passes the explicit arguments; the runtime adds the hidden ones.
    CHECK(lastLaunch().kernargBytes == k.kernargs.totalBytes);
  }
  // A kernel that prints nothing has no hostcall buffer.
  auto x = v5.alloc<float>(100), y = v5.alloc<float>(100), out = v5.alloc<float>(100);
  auto add = jit<vector_add>();
  add.launch(v5, {1}, {.num_warps = 4}, x, y, out, 100, 128);
  CHECK(!lastLaunch().hostcallBuffer);
}
