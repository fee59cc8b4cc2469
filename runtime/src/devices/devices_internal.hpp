// Constructors of the concrete devices, for Device::open() & co.
// Internal to tessel_devices.
#pragma once

#include "tessel/runtime/device.hpp"

#include <memory>
#include <string>

namespace tessel {
struct TargetFacts;

std::shared_ptr<DeviceImpl> makeEmulatorDevice(const TargetFacts &target);
// Throws tessel::Error saying why no HIP GPU is usable.
std::shared_ptr<DeviceImpl> makeHipDevice(int ordinal);

} // namespace tessel
