// Constructors of the concrete devices, for Device::open() & co.
// Internal to tessel_devices.
#pragma once

#include "tessel/runtime/device.hpp"

#include <memory>
#include <string>

namespace tessel {
struct TargetInfo;

std::shared_ptr<DeviceImpl> makeEmulatorDevice(const TargetInfo &target);
// Throws tessel::Error saying why no HIP GPU is usable.
std::shared_ptr<DeviceImpl> makeHipDevice(int ordinal);

} // namespace tessel
