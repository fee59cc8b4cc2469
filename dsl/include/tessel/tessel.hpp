// tessel: a Triton-style tile language embedded in C++ for AMD GPUs.
// Include this one header: tiles and ops, the kernel object, devices.
#pragma once

#include "tessel/core/compiled_kernel.hpp" // what Kernel::lastCompiled() shows
#include "tessel/control.hpp"
#include "tessel/debug.hpp"
#include "tessel/dot.hpp"
#include "tessel/dot_scaled.hpp"
#include "tessel/core/error.hpp"           // what every failure throws
#include "tessel/kernel.hpp"
#include "tessel/ops.hpp"
#include "tessel/random.hpp"
#include "tessel/reduce.hpp"
#include "tessel/sort.hpp"
#include "tessel/runtime/autotune.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/kernel_runtime.hpp"
#include "tessel/runtime/usage.hpp"          // what a compiled kernel uses (registers, occupancy)
#include "tessel/tile.hpp"
#include "tessel/types.hpp"
