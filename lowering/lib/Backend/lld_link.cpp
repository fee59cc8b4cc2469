// The .hsaco of an AMDGPU object, linked by lld in process and in memory.
//
// lld's ELF driver reads its inputs and writes its output by path. Both
// paths here name descriptors of this process (/proc/self/fd/N), so a link
// creates no file and needs no directory ($TMPDIR may be missing or
// unwritable), and a file-size limit (RLIMIT_FSIZE) cannot stop it:
//  - the object is in a memfd, a file in memory that lld reads like any
//    other. memfds obey RLIMIT_FSIZE: when the limit refuses the object it
//    goes through a pipe instead, which the pump thread fills as lld reads;
//  - the code object goes to a pipe. For a path that is not a regular file
//    lld keeps the output in memory and writes it there whole at the end
//    (no temporary file beside it, no rename), as for -o /dev/stdout. A
//    memfd would not do: for a regular file lld first creates
//    "<path>.tmpXXXXXXX" beside it, which /proc/self/fd refuses. A pipe
//    holds 64 KiB, so the pump thread drains it while lld writes.
// Each link has descriptors of its own: links on several threads (lld's
// part runs one at a time) and in forked children never share anything.
#include "lld_link.hpp"

#include "tessel/core/error.hpp"
#include "tessel/core/file_size_signal.hpp"

#include <lld/Common/Driver.h>
#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

LLD_HAS_DRIVER(elf)

namespace tessel {
namespace {

// An open file descriptor, closed with its owner.
class Descriptor {
public:
  Descriptor() = default;
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(Descriptor &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Descriptor &operator=(Descriptor &&other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Descriptor() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
  }
  // The name lld opens it by.
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
  int fd_ = -1;
};

std::string lastError() { return std::strerror(errno); }

// A descriptor or thread for a link could not be made (errno says why).
[[noreturn]] void cannotLink(const char *what) {
  throw Error(std::string("cannot link the AMDGPU code object: no ") + what + " for lld's files: " + lastError());
}

// Both ends non-blocking and closed on exec. lld opens the pipe afresh by
// its path, blocking: the flags of these ends are not its.
std::pair<Descriptor, Descriptor> makePipe() {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0)
    cannotLink("pipe");
  return {Descriptor(ends[0]), Descriptor(ends[1])};
}

// The object in a memfd; none when there are no memfds or the file-size
// limit refuses the bytes (EFBIG, its SIGXFSZ consumed).
Descriptor objectInMemfd(std::string_view object) {
  Descriptor file(::memfd_create("tessel-object", MFD_CLOEXEC));
  if (!file)
    return file;
  NoFileSizeSignal noSignal;
  for (size_t done = 0; done < object.size();) {
    ssize_t n = ::write(file.get(), object.data() + done, object.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return Descriptor();
    done += size_t(n);
  }
  return file;
}

// Moves bytes while lld runs on the linking thread: the object into the
// input pipe (when the input is one; the end is closed once all is in, so
// lld reads to its end) and the code object out of the output pipe. Every
// signal is blocked on it: the program's handlers run on threads of its own.
class Pump {
public:
  Pump(Descriptor input, std::string_view object, int output)
      : input_(std::move(input)), object_(object), output_(output), stop_(::eventfd(0, EFD_CLOEXEC)) {
    if (!stop_)
      cannotLink("eventfd");
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); // the new thread starts with this mask
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error &error) {
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
      errno = error.code().value();
      cannotLink("thread");
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  ~Pump() { stop(); }
  Pump(const Pump &) = delete;
  Pump &operator=(const Pump &) = delete;

  // After lld returned (all it wrote is in the pipe): the code object.
  std::vector<uint8_t> finish() {
    stop();
    if (!error_.empty())
      throw Error("reading lld's output failed: " + error_);
    return std::move(received_);
  }

private:
  void stop() {
    if (!thread_.joinable())
      return;
    const uint64_t one = 1;
    while (::write(stop_.get(), &one, sizeof one) < 0 && errno == EINTR) {
    }
    thread_.join();
  }

  void run() {
    size_t sent = 0;
    for (;;) {
      pollfd waits[3] = {{stop_.get(), POLLIN, 0}, {output_, POLLIN, 0}, {input_.get(), POLLOUT, 0}};
      if (::poll(waits, input_ ? 3 : 2, -1) < 0) {
        if (errno == EINTR || errno == EAGAIN)
          continue;
        error_ = "poll: " + lastError();
        return;
      }
      if (waits[1].revents && !drain())
        return;
      if (input_ && waits[2].revents) {
        ssize_t n = ::write(input_.get(), object_.data() + sent, object_.size() - sent);
        if (n > 0)
          sent += size_t(n);
        else if (n < 0 && errno != EAGAIN && errno != EINTR)
          sent = object_.size(); // lld reads a short object and says so
        if (sent == object_.size())
          input_.reset();
      }
      if (waits[0].revents) { // lld is done: take what is left
        drain();
        return;
      }
    }
  }

  // Reads what the output pipe holds; false on an error.
  bool drain() {
    char buffer[65536];
    for (;;) {
      ssize_t n = ::read(output_, buffer, sizeof buffer);
      if (n > 0)
        received_.insert(received_.end(), buffer, buffer + n);
      else if (n < 0 && errno == EINTR)
        continue;
      else if (n < 0 && errno != EAGAIN) {
        error_ = "read: " + lastError();
        return false;
      } else
        return true; // empty for now (or no writer: the linking thread holds one)
    }
  }

  Descriptor input_;
  std::string_view object_;
  int output_;
  Descriptor stop_;
  std::vector<uint8_t> received_;
  std::string error_;
  std::thread thread_;
};

} // namespace

std::vector<uint8_t> linkHsaco(std::string_view object) {
  // Declared before the pump: open until it has stopped.
  Descriptor input = objectInMemfd(object), inputWriter;
  if (!input)
    std::tie(input, inputWriter) = makePipe();
  auto [output, outputWriter] = makePipe(); // the writer held: lld's own may come and go
  const std::string inputPath = input.path(), outputPath = outputWriter.path();
  Pump pump(std::move(inputWriter), object, output.get());
  // One thread: a link this small gains nothing from lld's thread pool.
  const char *arguments[] = {"ld.lld", "-shared", "--threads=1", inputPath.c_str(), "-o", outputPath.c_str()};
  std::string messages;
  llvm::raw_string_ostream out(messages);
  lld::Result result;
  {
    // lld keeps global state: one link at a time in this process.
    static std::mutex lldMutex;
    std::lock_guard lock(lldMutex);
    // After lld crashed its global state is unusable for the rest of the process.
    static bool lldUsable = true;
    if (!lldUsable)
      throw Error("lld crashed earlier in this process and cannot link again; restart it");
    result = lld::lldMain(arguments, out, out, {{lld::Gnu, &lld::elf::link}});
    lldUsable = result.canRunAgain;
  }
  std::vector<uint8_t> hsaco = pump.finish();
  if (result.retCode != 0) {
    std::string why;
    if (::access(outputPath.c_str(), F_OK) != 0) // lld's message names a path only
      why = "tessel hands lld its files as /proc/self/fd/N, which this process cannot open (" + lastError() +
            "; is /proc mounted?): ";
    throw Error("lld failed to link the AMDGPU code object: " + why + messages);
  }
  if (hsaco.empty())
    throw Error("lld linked the AMDGPU code object but wrote none of it (a tessel bug)");
  return hsaco;
}

} // namespace tessel
