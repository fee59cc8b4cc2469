// The HIP device against the fake HIP runtime (tests/fake_hip), loaded through
// TESSEL_HIP_LIBRARY: device choice, names, memory, code object checks, the
// code object version. Launches of compiled kernels: tests/unit/e2e/hip_fake_test.cpp.
#include "fake_hip.hpp"

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/disk_cache.hpp"

#include "../scoped_env.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <numeric>
#include <string>
#include <vector>

using namespace tessel;
using tessel::testing::ScopedEnv;

namespace {


// Points tessel at the fake for one scope and opens its test accessors.
struct FakeHip {
  ScopedEnv library{"TESSEL_HIP_LIBRARY", TESSEL_FAKE_HIP_LIBRARY};
  void *handle = dlopen(TESSEL_FAKE_HIP_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  template <class Fn> Fn get(const char *name) {
    REQUIRE_MESSAGE(handle != nullptr, dlerror());
    auto fn = reinterpret_cast<Fn>(dlsym(handle, name));
    REQUIRE_MESSAGE(bool(fn), name);
    return fn;
  }
  int liveAllocations() { return get<FakeHipLiveAllocationsFn>("fakeHipLiveAllocations")(); }
  int liveModules() { return get<FakeHipLiveModulesFn>("fakeHipLiveModules")(); }
  void setRuntimeVersion(int v) { get<FakeHipSetRuntimeVersionFn>("fakeHipSetRuntimeVersion")(v); }
  ~FakeHip() {
    if (handle)
      dlclose(handle);
  }
};

// A 64-byte ELF64 header with the given e_machine and nothing after it.
std::vector<uint8_t> elfHeader(uint16_t machine) {
  std::vector<uint8_t> h(64, 0);
  h[0] = 0x7f, h[1] = 'E', h[2] = 'L', h[3] = 'F', h[4] = 2, h[5] = 1, h[6] = 1;
  std::memcpy(&h[18], &machine, 2);
  return h;
}

} // namespace

TEST_CASE("hip (fake): TESSEL_DEVICE=hip opens the library TESSEL_HIP_LIBRARY names") {
  FakeHip fake;
  ScopedEnv device("TESSEL_DEVICE", "hip");
  Device dev = Device::open();
  CHECK_FALSE(dev.isEmulator());
  CHECK(dev.name() == "hip: AMD Instinct MI300X (fake)");
  CHECK(dev.arch() == "gfx942"); // from "gfx942:sramecc+:xnack-" in hipDeviceProp_t
}

TEST_CASE("hip (fake): TESSEL_DEVICE=auto prefers the HIP device when it is usable") {
  FakeHip fake;
  ScopedEnv device("TESSEL_DEVICE", "auto");
  CHECK_FALSE(Device::open().isEmulator());
}

TEST_CASE("hip (fake): a TESSEL_HIP_LIBRARY that does not load is named in the error") {
  ScopedEnv library("TESSEL_HIP_LIBRARY", "/nonexistent/libfakehip.so");
  CHECK_THROWS_WITH_AS(Device::hip(), doctest::Contains("TESSEL_HIP_LIBRARY='/nonexistent/libfakehip.so'"),
                       Error);
  ScopedEnv device("TESSEL_DEVICE", "auto");
  CHECK(Device::open().isEmulator()); // auto falls back
}

TEST_CASE("hip (fake): a device that does not exist is an error") {
  FakeHip fake;
  CHECK_THROWS_WITH_AS(Device::hip(2), doctest::Contains("HIP device 2 does not exist (2 present)"),
                       Error);
}

TEST_CASE("hip (fake): upload and download round-trip, and buffers are freed") {
  FakeHip fake;
  const int before = fake.liveAllocations();
  {
    Device dev = Device::hip();
    std::vector<float> host(4099);
    std::iota(host.begin(), host.end(), -7.5f);
    auto buffer = dev.upload(host);
    CHECK(fake.liveAllocations() == before + 1);
    CHECK(buffer.download() == host);
    std::vector<float> other(host.rbegin(), host.rend());
    buffer.copyFrom(other);
    CHECK(buffer.download() == other);
    auto empty = dev.alloc<int>(0);
    CHECK(empty.download().empty());
  }
  CHECK(fake.liveAllocations() == before);
}

TEST_CASE("hip (fake): only AMDGPU code objects load, with the reason in the error") {
  FakeHip fake;
  Device dev = Device::hip();
  CompiledKernel kernel;
  kernel.name = "k";
  SUBCASE("no code object") {
    CHECK_THROWS_WITH_AS(dev.impl().load(kernel), doctest::Contains("has no code object"), Error);
  }
  SUBCASE("not an ELF file") {
    kernel.hsaco.assign(128, 0x42);
    CHECK_THROWS_WITH_AS(dev.impl().load(kernel), doctest::Contains("hipErrorInvalidImage"), Error);
  }
  SUBCASE("an x86-64 ELF file") {
    kernel.hsaco = elfHeader(62);
    CHECK_THROWS_WITH_AS(dev.impl().load(kernel), doctest::Contains("hipErrorInvalidImage"), Error);
  }
  SUBCASE("an AMDGPU ELF header without sections or kernels") {
    kernel.hsaco = elfHeader(224);
    CHECK_THROWS_WITH_AS(dev.impl().load(kernel), doctest::Contains("hipErrorInvalidImage"), Error);
  }
  CHECK(fake.liveModules() == 0);
}

TEST_CASE("hip (fake): the code object version follows hipRuntimeGetVersion") {
  FakeHip fake;
  CHECK(Device::emulator().impl().codeObjectVersion() == 5);
  fake.setRuntimeVersion(60241134); // HIP 6.2: code object v5
  CHECK(Device::hip().impl().codeObjectVersion() == 5);
  fake.setRuntimeVersion(60000000); // HIP 6.0
  CHECK(Device::hip().impl().codeObjectVersion() == 5);
  fake.setRuntimeVersion(50731921); // HIP 5.7: v4
  CHECK(Device::hip().impl().codeObjectVersion() == 4);
  fake.setRuntimeVersion(60241134);
}

TEST_CASE("hip (fake): the code object version is part of the disk cache key") {
  CHECK(DiskCache::entryKey(1, {}, "gfx942", 4, "id", 4) != DiskCache::entryKey(1, {}, "gfx942", 4, "id", 5));
  CHECK(DiskCache::entryKey(1, {}, "gfx942", 4, "id") == DiskCache::entryKey(1, {}, "gfx942", 4, "id", 5));
}
