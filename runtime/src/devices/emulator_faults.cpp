// The emulator's report of a wild memory access (emulator_faults.hpp).
#include "emulator_faults.hpp"
#include "emulator_runtime.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <signal.h>
#include <unistd.h>

namespace tessel::emu {
namespace {

thread_local const char *tRunningKernel = nullptr; // set while a workgroup runs
struct sigaction gPreviousSegv, gPreviousBus;
size_t gFiberStackBytes = 0; // what a fiber's stack holds, for the overflow report

void writeText(const char *text) {
  size_t n = 0;
  while (text[n])
    ++n;
  while (n > 0) {
    ssize_t written = ::write(2, text, n);
    if (written <= 0)
      return;
    text += written;
    n -= size_t(written);
  }
}

void writeNumber(uint64_t v, unsigned base) {
  char digits[24];
  int i = sizeof digits - 1;
  digits[i] = 0;
  do {
    digits[--i] = "0123456789abcdef"[v % base];
    v /= base;
  } while (v && i > 0);
  writeText(digits + i);
}

std::atomic_flag gFaultReported = ATOMIC_FLAG_INIT;

void onMemoryFault(int sig, siginfo_t *info, void *) {
  // Workgroups run on several host threads: the first to fault reports and
  // ends the process; any other waits here, so the reports never interleave.
  if (gFaultReported.test_and_set())
    for (;;)
      ::pause();
  if (const char *kernel = tRunningKernel) {
    const emu::ThreadState &t = emu::currentThread();
    writeText("tessel emulator: kernel '");
    writeText(kernel);
    writeText("', workgroup (");
    writeNumber(t.workgroup[0], 10);
    writeText(", ");
    writeNumber(t.workgroup[1], 10);
    writeText(", ");
    writeNumber(t.workgroup[2], 10);
    writeText("), thread ");
    writeNumber(t.workitem[0], 10);
    const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
    if (t.fibers && t.fibers->inGuardPage(address)) {
      writeText(": its stack overflowed (the emulator gives each thread ");
      writeNumber(gFiberStackBytes / 1024, 10);
      writeText(" KiB; the kernel's tiles need more per thread than that)\n");
    } else {
      writeText(": invalid memory access at address 0x");
      writeNumber(address, 16);
      writeText(" (on a GPU, a memory fault); check the kernel's offsets and masks\n");
    }
  }
  // The access runs again and ends the process as it would have without us.
  sigaction(sig, sig == SIGSEGV ? &gPreviousSegv : &gPreviousBus, nullptr);
}

} // namespace

void installMemoryFaultReport(size_t fiberStackBytes) {
  static std::once_flag installed;
  std::call_once(installed, [&] {
    gFiberStackBytes = fiberStackBytes;
    struct sigaction action = {};
    action.sa_sigaction = &onMemoryFault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK; // a fiber's overflowed stack cannot run it
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &gPreviousSegv);
    sigaction(SIGBUS, &action, &gPreviousBus);
  });
}

RunningKernel::RunningKernel(const char *kernel) { tRunningKernel = kernel; }
RunningKernel::~RunningKernel() { tRunningKernel = nullptr; }

} // namespace tessel::emu
