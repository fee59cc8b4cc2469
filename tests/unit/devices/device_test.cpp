// Choosing a device. This machine has libamdhip64 but no GPU.
#include "tessel/runtime/device.hpp"

#include "../scoped_env.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

using namespace tessel;
using tessel::testing::ScopedEnv;

namespace {
} // namespace

TEST_CASE("devices: Device::hip() without a GPU throws an Error with the reason") {
  CHECK_THROWS_WITH_AS(Device::hip(), doctest::Contains("HIP"), Error);
  try {
    Device::hip();
  } catch (const Error &e) {
    MESSAGE("Device::hip(): " << e.what());
    CHECK(std::string(e.what()).size() > 10);
  }
}

TEST_CASE("devices: Device::open() chooses by TESSEL_DEVICE") {
  ScopedEnv arch("TESSEL_ARCH", nullptr);
  SUBCASE("auto falls back to the emulator") {
    ScopedEnv device("TESSEL_DEVICE", "auto");
    Device dev = Device::open();
    CHECK(dev.isEmulator());
    CHECK(dev.name() == "emulator (gfx942)");
  }
  SUBCASE("unset means auto") {
    ScopedEnv device("TESSEL_DEVICE", nullptr);
    CHECK(Device::open().isEmulator());
  }
  SUBCASE("emulator, with TESSEL_ARCH") {
    ScopedEnv device("TESSEL_DEVICE", "emulator");
    ScopedEnv gfx("TESSEL_ARCH", "gfx1100");
    Device dev = Device::open();
    CHECK(dev.isEmulator());
    CHECK(dev.arch() == "gfx1100");
  }
  SUBCASE("hip fails without a GPU") {
    ScopedEnv device("TESSEL_DEVICE", "hip");
    CHECK_THROWS_AS(Device::open(), Error);
  }
  SUBCASE("anything else is an error") {
    ScopedEnv device("TESSEL_DEVICE", "tpu");
    CHECK_THROWS_WITH_AS(Device::open(),
                         doctest::Contains("TESSEL_DEVICE='tpu' is not one of emulator, hip, auto"),
                         Error);
  }
  SUBCASE("an unknown TESSEL_ARCH is an error") {
    ScopedEnv device("TESSEL_DEVICE", "emulator");
    ScopedEnv gfx("TESSEL_ARCH", "gfx123");
    CHECK_THROWS_WITH_AS(Device::open(), doctest::Contains("gfx123"), Error);
  }
}

TEST_CASE("devices: emulator buffers round trip and are 256-byte aligned") {
  Device dev = Device::emulator();
  std::vector<double> host = {1.5, -2.25, 3.0};
  auto b = dev.upload(host);
  CHECK(reinterpret_cast<uintptr_t>(b.devicePtr()) % 256 == 0);
  CHECK(b.download() == host);
  auto empty = dev.alloc<float>(0);
  CHECK(empty.size() == 0);
  CHECK_THROWS_WITH_AS(b.copyFrom(std::vector<double>(2)),
                       doctest::Contains("2 elements given for a buffer of 3"), Error);
}
