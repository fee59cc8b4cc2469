// Choosing a device: Device::open(), Device::emulator(), Device::hip().
#include "devices_internal.hpp"

#include "tessel/lowering/target.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace tessel {

namespace {
std::string environment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}
} // namespace

Device Device::emulator(std::string arch) {
  if (arch.empty())
    arch = environment("TESSEL_ARCH");
  if (arch.empty())
    arch = "gfx942";
  return Device(makeEmulatorDevice(requireTarget(arch)));
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
