// Choosing a device: Device::open(), Device::emulator(), Device::hip().
#include "devices_internal.hpp"

#include "tessel/lowering/target.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

namespace tessel {

namespace {
std::string environment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}
} // namespace

unsigned Device::waveSize() const { return requireTarget(arch()).waveSize; }

// One emulator per target in the process: each owns a thread pool and a JIT,
// and the kernel caches keep the devices they loaded kernels on alive, so a
// new device per call (`k.launch(Device::emulator(), ...)` in a loop) would
// pile them up. Weak: a device nobody holds is freed.
Device Device::emulator(std::string arch, std::source_location where) {
  const bool fromEnvironment = arch.empty() && !environment("TESSEL_ARCH").empty();
  if (arch.empty())
    arch = environment("TESSEL_ARCH");
  if (arch.empty())
    arch = "gfx942";
  const TargetFacts *found;
  try {
    found = &requireTarget(arch);
  } catch (const Error &e) {
    if (!fromEnvironment)
      throw Error(callerLine(where) + "Device::emulator: " + e.what());
    throw Error(callerLine(where) + "TESSEL_ARCH='" + arch + "' (the emulator's target, from the environment): " +
                e.what());
  }
  const TargetFacts &target = *found;
  static std::mutex mutex;
  static std::map<const TargetFacts *, std::weak_ptr<DeviceImpl>> devices;
  std::lock_guard lock(mutex);
  std::weak_ptr<DeviceImpl> &slot = devices[&target];
  std::shared_ptr<DeviceImpl> device = slot.lock();
  if (!device)
    slot = device = makeEmulatorDevice(target);
  return Device(std::move(device));
}

Device Device::hip(int ordinal) { return Device(makeHipDevice(ordinal)); }

Device Device::open() {
  const std::string choice = environment("TESSEL_DEVICE");
  if (choice == "emulator")
    return emulator();
  if (choice == "hip")
    return hip();
  if (!choice.empty() && choice != "auto")
    throw Error("TESSEL_DEVICE='" + choice + "' is not one of emulator, hip, auto");
  try {
    return hip();
  } catch (const Error &why) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      std::fprintf(stderr, "tessel: no HIP GPU (%s); using the emulator\n", why.what());
    return emulator();
  }
}

} // namespace tessel
