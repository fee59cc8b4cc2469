// Choosing a device. This machine has libamdhip64 but no GPU.
#include "tessel/runtime/device.hpp"

#include "../scoped_env.hpp"

#include <doctest/doctest.h>

#include <cstdint>
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

TEST_CASE("devices: Buffer<bool> uploads from and downloads to std::vector<bool>, one byte per element") {
  Device dev = Device::emulator();
  const std::vector<bool> host = {true, false, false, true, true, false, true};
  auto b = dev.upload(host);
  CHECK(b.size() == host.size());
  CHECK(b.bytes() == host.size());
  std::vector<uint8_t> bytes(host.size());
  dev.impl().copyToHost(bytes.data(), b.devicePtr(), bytes.size());
  CHECK(bytes == std::vector<uint8_t>{1, 0, 0, 1, 1, 0, 1});
  CHECK(b.download() == host);
  const std::vector<bool> flipped = {false, true, true, false, false, true, false};
  b.copyFrom(flipped);
  CHECK(b.download() == flipped);
  // Any byte other than 0 reads as true, as a kernel reads it.
  const uint8_t odd[] = {0, 2, 0xA5, 0, 1, 0x80, 0};
  dev.impl().copyToDevice(b.devicePtr(), odd, sizeof odd);
  CHECK(b.download() == std::vector<bool>{false, true, true, false, true, true, false});
  auto line = [](int n) { return std::string(__FILE__) + ":" + std::to_string(n) + ": "; };
  auto errorOf = [](auto &&f) -> std::string {
    try {
      f();
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  };
  int at = __LINE__ + 1;
  std::string msg = errorOf([&] { b.copyFrom(std::vector<bool>(3)); });
  CHECK(msg == line(at) + "Buffer::copyFrom: 3 elements given for a buffer of 7");
  Buffer<bool> none;
  at = __LINE__ + 1;
  msg = errorOf([&] { (void)none.download(); });
  CHECK(msg == line(at) + "Buffer::download: the buffer holds no memory (default-constructed or moved from)");
  CHECK(dev.upload(std::vector<bool>{}).size() == 0);
}

TEST_CASE("devices: a buffer whose byte size overflows is an Error naming the count") {
  Device dev = Device::emulator("gfx942");
  const size_t huge = SIZE_MAX / 4 + 65; // * sizeof(float) wraps to 260 bytes
  const std::string hugeText = std::to_string(huge), almostText = std::to_string(SIZE_MAX - 1);
  CHECK_THROWS_WITH_AS(dev.alloc<float>(huge), doctest::Contains(hugeText.c_str()), Error);
  CHECK_THROWS_WITH_AS(dev.alloc<float>(huge), doctest::Contains("too large"), Error);
  CHECK_THROWS_WITH_AS(dev.alloc<float>(-1), doctest::Contains("negative element count -1"), Error);
  CHECK_THROWS_WITH_AS(dev.alloc<int64_t>(int64_t(-5)), doctest::Contains("-5"), Error);
  // One byte short of SIZE_MAX: the emulator's rounding to 256 bytes must not wrap.
  CHECK_THROWS_WITH_AS(dev.alloc<char>(SIZE_MAX - 1), doctest::Contains(almostText.c_str()), Error);
  CHECK_THROWS_AS(dev.impl().allocate(SIZE_MAX - 10), Error);
  // Ordinary sizes still work, from any integer type.
  CHECK(dev.alloc<float>(short(3)).size() == 3);
  CHECK(dev.alloc<float>(0).size() == 0);
}

TEST_CASE("devices: host API errors name the caller's line; an empty buffer is an Error, not a crash") {
  Device dev = Device::emulator("gfx942");
  auto line = [](int n) { return std::string(__FILE__) + ":" + std::to_string(n) + ": "; };
  int at;
  std::string msg;
  auto errorOf = [](auto &&f) -> std::string {
    try {
      f();
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  };
  Buffer<float> moved = dev.upload(std::vector<float>{1, 2, 3});
  Buffer<float> owner = std::move(moved);
  CHECK(!moved);
  CHECK(bool(owner));
  at = __LINE__ + 1;
  msg = errorOf([&] { (void)moved.download(); });
  CHECK(msg == line(at) + "Buffer::download: the buffer holds no memory (default-constructed or moved from)");
  at = __LINE__ + 1;
  msg = errorOf([&] { moved.copyFrom(std::vector<float>{}); });
  CHECK(msg == line(at) + "Buffer::copyFrom: the buffer holds no memory (default-constructed or moved from)");
  Buffer<int> never;
  at = __LINE__ + 1;
  msg = errorOf([&] { (void)never.download(); });
  CHECK(msg == line(at) + "Buffer::download: the buffer holds no memory (default-constructed or moved from)");
  at = __LINE__ + 1;
  msg = errorOf([&] { owner.copyFrom(std::vector<float>(2)); });
  CHECK(msg == line(at) + "Buffer::copyFrom: 2 elements given for a buffer of 3");
  at = __LINE__ + 1;
  msg = errorOf([&] { (void)dev.alloc<float>(-1); });
  CHECK(msg == line(at) + "Device::alloc: a negative element count -1");
  CHECK(errorOf([&] { (void)dev.alloc<char>(SIZE_MAX - 1); }).starts_with(line(__LINE__) + "emulator: cannot allocate"));
  CHECK(errorOf([&] { (void)Device::emulator("gfx123"); }).starts_with(line(__LINE__) + "Device::emulator: "));
  CHECK(owner.download() == std::vector<float>{1, 2, 3});
}

TEST_CASE("devices: one emulator per target in the process, however often it is asked for") {
  ScopedEnv arch("TESSEL_ARCH", nullptr);
  Device a = Device::emulator("gfx942");
  CHECK(Device::emulator("gfx942").shared() == a.shared());
  CHECK(Device::emulator().shared() == a.shared()); // the default target is the same device
  {
    ScopedEnv device("TESSEL_DEVICE", "emulator");
    CHECK(Device::open().shared() == a.shared());
  }
  Device b = Device::emulator("gfx1100");
  CHECK(b.shared() != a.shared());
  CHECK(Device::emulator("gfx1100").shared() == b.shared());
  // Asking again and again makes no new devices (each would own a thread pool and a JIT).
  std::shared_ptr<DeviceImpl> keep = Device::emulator("gfx950").shared();
  for (int i = 0; i < 100; ++i)
    CHECK(&Device::emulator("gfx950").impl() == keep.get());
}

TEST_CASE("devices: an unsupported TESSEL_ARCH is named as coming from TESSEL_ARCH") {
  {
    ScopedEnv arch("TESSEL_ARCH", "gfx9999");
    CHECK_THROWS_WITH_AS(Device::emulator(), doctest::Contains("TESSEL_ARCH='gfx9999'"), Error);
    CHECK_THROWS_WITH_AS(Device::emulator(), doctest::Contains("unsupported AMDGPU target 'gfx9999'"), Error);
    ScopedEnv device("TESSEL_DEVICE", "emulator");
    CHECK_THROWS_WITH_AS(Device::open(), doctest::Contains("TESSEL_ARCH='gfx9999'"), Error);
  }
  // An arch passed in code is not blamed on the environment.
  try {
    Device::emulator("gfx9999");
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(std::string(e.what()).find("TESSEL_ARCH") == std::string::npos);
  }
}
