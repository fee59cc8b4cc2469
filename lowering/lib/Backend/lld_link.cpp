// The .hsaco of an AMDGPU object, linked by lld in process and in memory.
//
// lld's ELF driver reads its inputs and writes its output by path. Both
// paths here name descriptors of this process (/proc/self/fd/N), so a link
// creates no file and needs no directory ($TMPDIR may be missing or
// unwritable), and a file-size limit (RLIMIT_FSIZE) cannot stop it:
//  - the object is in a memfd, a file in memory that lld reads like any
//    other. memfds obey RLIMIT_FSIZE: when the limit refuses the object it
//    goes through a pipe instead, written whole before lld starts;
//  - the code object goes to a pipe. For a path that is not a regular file
//    lld keeps the output in memory and writes it there whole at the end
//    (no temporary file beside it, no rename), as for -o /dev/stdout. A
//    memfd would not do: for a regular file lld first creates
//    "<path>.tmpXXXXXXX" beside it, which /proc/self/fd refuses.
// The pipes are made to hold all they will carry (largestOutput bounds the
// code object), so the linking thread fills and empties them alone: a
// second thread, woken on a busy machine, made a link up to ten times
// slower. Where a pipe cannot be made that large (pipe-max-size, 1 MiB for
// users without CAP_SYS_RESOURCE) a pump thread moves the bytes while lld
// runs. Each link has descriptors of its own: links on several threads
// (lld's part runs one at a time) and in forked children share nothing.
#include "lld_link.hpp"

#include "tessel/core/error.hpp"
#include "tessel/core/file_size_signal.hpp"

#include <lld/Common/Driver.h>
#include <llvm/Object/ELF.h>
#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
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

// Whether the pipe of `end` holds `bytes` at once, enlarging it when it
// does not; false when it cannot be made that large.
bool pipeHolds(int end, size_t bytes) {
  int capacity = ::fcntl(end, F_GETPIPE_SZ);
  if (capacity >= 0 && size_t(capacity) >= bytes)
    return true;
  if (bytes > size_t(INT_MAX))
    return false;
  capacity = ::fcntl(end, F_SETPIPE_SZ, int(bytes));
  return capacity >= 0 && size_t(capacity) >= bytes;
}

// The most lld can write for `object` (a bound, not an estimate): the
// object's sections and what each one's alignment can add; dynamic symbol,
// string and hash tables, GOT and dynamic relocations, each no larger than
// the object's own symbols, strings and relocations; headers and small
// sections (.dynamic, .comment: a few hundred bytes). Four times the object,
// its alignments and 16 KiB hold all of it (the copy kernel: 3.9 KiB in,
// 5 KiB out). No bound for what is no 64-bit ELF object: lld says why.
size_t largestOutput(std::string_view object) {
  auto file = llvm::object::ELF64LEFile::create(llvm::StringRef(object.data(), object.size()));
  if (!file) {
    llvm::consumeError(file.takeError());
    return SIZE_MAX;
  }
  auto sections = file->sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return SIZE_MAX;
  }
  uint64_t alignments = 0;
  for (const auto &section : *sections) {
    if (section.sh_addralign > (uint64_t(1) << 32))
      return SIZE_MAX;
    alignments += section.sh_addralign;
  }
  return 4 * object.size() + alignments + (16 << 10);
}

// Writes what the non-blocking `end` takes now; the bytes written (all of
// them after an error: the reader gets a short object and says so).
size_t writeAvailable(int end, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(end, bytes.data() + done, bytes.size() - done);
    if (n > 0)
      done += size_t(n);
    else if (n < 0 && errno == EAGAIN)
      break;
    else if (n < 0 && errno != EINTR)
      return bytes.size();
  }
  return done;
}

// Appends what the non-blocking `end` holds now to `out`; false, with
// `error` set, when reading fails.
bool readAvailable(int end, std::vector<uint8_t> &out, std::string &error) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(end, buffer, sizeof buffer);
    if (n > 0)
      out.insert(out.end(), buffer, buffer + n);
    else if (n < 0 && errno == EINTR)
      continue;
    else if (n < 0 && errno != EAGAIN) {
      error = "reading lld's output failed: " + lastError();
      return false;
    } else
      return true; // empty for now (or no writer: the linking thread holds one)
  }
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

// For pipes that cannot hold all they carry: moves bytes while lld runs on
// the linking thread, the rest of the object into the input pipe (its end
// closed once all is in, so lld reads to the end) and the code object out
// of the output pipe. Every signal is blocked on it: the program's handlers
// run on threads of its own.
class Pump {
public:
  Pump(Descriptor input, std::string_view unsent, int output)
      : input_(std::move(input)), unsent_(unsent), output_(output), stop_(::eventfd(0, EFD_CLOEXEC)) {
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
      throw Error(error_);
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
    for (;;) {
      pollfd waits[3] = {{stop_.get(), POLLIN, 0}, {output_, POLLIN, 0}, {input_.get(), POLLOUT, 0}};
      if (::poll(waits, input_ ? 3 : 2, -1) < 0) {
        if (errno == EINTR || errno == EAGAIN)
          continue;
        error_ = "waiting for lld's pipes failed: " + lastError();
        return;
      }
      if (waits[1].revents && !readAvailable(output_, received_, error_))
        return;
      if (input_ && waits[2].revents) {
        unsent_.remove_prefix(writeAvailable(input_.get(), unsent_));
        if (unsent_.empty())
          input_.reset();
      }
      if (waits[0].revents) { // lld is done: take what is left
        readAvailable(output_, received_, error_);
        return;
      }
    }
  }

  Descriptor input_;
  std::string_view unsent_;
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
  std::string_view unsent;
  if (!input) {
    std::tie(input, inputWriter) = makePipe();
    unsent = object;
    if (pipeHolds(inputWriter.get(), object.size()))
      unsent.remove_prefix(writeAvailable(inputWriter.get(), object));
    // All in: lld reads to the end. (A child another thread forks before
    // this holds the end too, and lld waits for it to exec or exit: the
    // memfd, which has no end to wait for, is why pipes are the fallback.)
    if (unsent.empty())
      inputWriter.reset();
  }
  auto [output, outputWriter] = makePipe(); // the writer held: no end of file before lld writes
  std::optional<Pump> pump;
  if (inputWriter || !pipeHolds(outputWriter.get(), largestOutput(object)))
    pump.emplace(std::move(inputWriter), unsent, output.get());
  const std::string inputPath = input.path(), outputPath = outputWriter.path();
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
  std::vector<uint8_t> hsaco;
  if (pump) {
    hsaco = pump->finish();
  } else if (std::string error; !readAvailable(output.get(), hsaco, error)) {
    throw Error(error);
  }
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
