// Writing files without dying of SIGXFSZ.
#pragma once

#include <signal.h>

namespace tessel {

// While alive, a write on this thread past the process's file-size limit
// (RLIMIT_FSIZE, `ulimit -f`; memfds count too) fails with EFBIG instead of
// killing the process with SIGXFSZ: the signal is blocked on this thread
// alone, and one the writes raised is consumed before the old mask returns.
// No signal disposition changes; nested guards leave the consuming to the
// outermost.
class NoFileSizeSignal {
public:
  NoFileSizeSignal();
  ~NoFileSizeSignal();
  NoFileSizeSignal(const NoFileSizeSignal &) = delete;
  NoFileSizeSignal &operator=(const NoFileSizeSignal &) = delete;

private:
  sigset_t set_;
  sigset_t old_;
};

} // namespace tessel
