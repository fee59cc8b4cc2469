// A kernel that reads or writes outside its buffers kills the host process,
// as any segfault does; first the emulator says which kernel, workgroup and
// thread did it, or that a fiber's stack overflowed (emulator_faults.cpp).
#pragma once

#include <cstddef>

namespace tessel::emu {

// Installs the SIGSEGV / SIGBUS report once a process; `fiberStackBytes`:
// what a thread's fiber stack holds, named when one overflows.
void installMemoryFaultReport(size_t fiberStackBytes);

// Marks the host thread as running `kernel` (a workgroup of it) for the report.
struct RunningKernel {
  explicit RunningKernel(const char *kernel);
  ~RunningKernel();
  RunningKernel(const RunningKernel &) = delete;
  RunningKernel &operator=(const RunningKernel &) = delete;
};

} // namespace tessel::emu
