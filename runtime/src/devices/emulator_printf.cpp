// Device printf on the emulator: the ROCm device library's printf functions
// (`__ockl_printf_begin`, `__ockl_fprintf_stderr_begin`,
// `__ockl_printf_append_string_n`, `__ockl_printf_append_args`), which the
// kernel module calls for device_print and device_assert, implemented on the
// host. On a GPU they send the pieces to the HIP runtime through the hostcall
// buffer and the runtime formats the message; here the calling thread
// gathers the pieces and formats the message itself when the last one
// arrives, as the runtime does: the format's conversions read the 64-bit
// arguments in order, a string argument being one appended string.
#include "emulator_runtime.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace tessel::emu {
namespace {

struct PrintfArgument {
  uint64_t bits = 0;
  std::string text; // a string argument
  bool isString = false;
};

// The message being gathered on this host thread. A printf's calls run
// without a switch between fibers, so one per host thread is enough.
struct PendingMessage {
  bool toStderr = false;
  bool haveFormat = false;
  std::string format;
  std::vector<PrintfArgument> args;
};
thread_local PendingMessage tPending;
thread_local std::string tLastStderr;

std::mutex gOutputMutex; // one message is one uninterrupted write

// One conversion `spec` ("%-8.3lf") of `arg`, formatted by the host's printf
// with the argument's type the conversion names.
std::string formatOne(const std::string &spec, const PrintfArgument &arg) {
  const char conversion = spec.back();
  const bool isLongLong = spec.find("ll") != std::string::npos;
  const bool isLong = !isLongLong && spec.find('l') != std::string::npos;
  char buffer[512];
  int n = 0;
  switch (conversion) {
  case 'd': case 'i':
    n = isLongLong || isLong ? std::snprintf(buffer, sizeof buffer, spec.c_str(), static_cast<long long>(arg.bits))
                             : std::snprintf(buffer, sizeof buffer, spec.c_str(), static_cast<int>(uint32_t(arg.bits)));
    break;
  case 'u': case 'x': case 'X': case 'o':
    n = isLongLong || isLong
            ? std::snprintf(buffer, sizeof buffer, spec.c_str(), static_cast<unsigned long long>(arg.bits))
            : std::snprintf(buffer, sizeof buffer, spec.c_str(), static_cast<unsigned>(uint32_t(arg.bits)));
    break;
  case 'c':
    n = std::snprintf(buffer, sizeof buffer, spec.c_str(), static_cast<int>(uint32_t(arg.bits)));
    break;
  case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A': {
    std::string plain = spec;
    if (auto l = plain.find('l'); l != std::string::npos) // %lf is %f
      plain.erase(l, 1);
    n = std::snprintf(buffer, sizeof buffer, plain.c_str(), std::bit_cast<double>(arg.bits));
    break;
  }
  case 'p':
    n = std::snprintf(buffer, sizeof buffer, "%p", reinterpret_cast<void *>(uintptr_t(arg.bits)));
    break;
  case 's':
    return arg.isString ? arg.text : "(null)";
  default:
    return spec;
  }
  if (n < 0)
    return spec;
  return std::string(buffer, std::min<size_t>(size_t(n), sizeof buffer - 1));
}

std::string formatMessage(const std::string &format, const std::vector<PrintfArgument> &args) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    // %[flags][width][.precision][length]conversion
    size_t end = i + 1;
    while (end < format.size() && std::strchr("-+ #0123456789.hlLjzt", format[end]))
      ++end;
    if (end >= format.size()) {
      out += format.substr(i);
      break;
    }
    const std::string spec = format.substr(i, end - i + 1);
    static const PrintfArgument missing;
    out += formatOne(spec, next < args.size() ? args[next] : missing);
    ++next;
    i = end;
  }
  return out;
}

void finish() {
  PendingMessage &m = tPending;
  const std::string text = formatMessage(m.format, m.args);
  if (m.toStderr)
    tLastStderr = text;
  {
    std::lock_guard lock(gOutputMutex);
    std::FILE *stream = m.toStderr ? stderr : stdout;
    std::fwrite(text.data(), 1, text.size(), stream);
    std::fflush(stream);
  }
  m = PendingMessage{};
}

uint64_t begin(bool toStderr) {
  tPending = PendingMessage{};
  tPending.toStderr = toStderr;
  return 1;
}

} // namespace

std::string lastStderrMessage() { return tLastStderr; }
void forgetStderrMessage() { tLastStderr.clear(); }

} // namespace tessel::emu

using namespace tessel::emu;

extern "C" {

uint64_t tessel_emu_printf_begin(uint64_t /*version*/) { return begin(false); }
uint64_t tessel_emu_fprintf_stdout_begin() { return begin(false); }
uint64_t tessel_emu_fprintf_stderr_begin() { return begin(true); }

uint64_t tessel_emu_printf_append_string_n(uint64_t desc, const char *text, uint64_t length, uint32_t last) {
  // The length counts the terminating NUL, as clang's printf lowering passes it.
  std::string s = text ? std::string(text, length) : std::string();
  if (auto nul = s.find('\0'); nul != std::string::npos)
    s.resize(nul);
  if (!tPending.haveFormat) {
    tPending.format = std::move(s);
    tPending.haveFormat = true;
  } else {
    PrintfArgument arg;
    arg.isString = text != nullptr;
    arg.text = std::move(s);
    tPending.args.push_back(std::move(arg));
  }
  if (last)
    finish();
  return desc;
}

uint64_t tessel_emu_printf_append_args(uint64_t desc, uint32_t count, uint64_t a0, uint64_t a1, uint64_t a2,
                                       uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint32_t last) {
  const uint64_t values[] = {a0, a1, a2, a3, a4, a5, a6};
  for (uint32_t i = 0; i < count && i < 7; ++i)
    tPending.args.push_back(PrintfArgument{values[i], {}, false});
  if (last)
    finish();
  return desc;
}

} // extern "C"
