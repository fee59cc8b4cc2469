#include "tessel/core/file_size_signal.hpp"

#include <ctime>

#include <pthread.h>

namespace tessel {

NoFileSizeSignal::NoFileSizeSignal() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &set_, &old_);
}

NoFileSizeSignal::~NoFileSizeSignal() {
  if (!sigismember(&old_, SIGXFSZ)) { // blocked here: drop what the writes raised
    const struct timespec now = {0, 0};
    while (sigtimedwait(&set_, nullptr, &now) == SIGXFSZ) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

} // namespace tessel
