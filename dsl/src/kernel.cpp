// Non-template helpers of the kernel object: naming and argument errors.
#include "tessel/kernel.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace tessel::detail {

std::string kernelNameFromSignature(std::string_view sig) {
  // clang: "... [Fn = &ns::vector_add]"; gcc: "... [with auto Fn = ns::vector_add]".
  size_t start = sig.find("Fn = ");
  if (start == std::string_view::npos) return "kernel";
  start += 5;
  size_t end = start;
  int depth = 0;
  for (; end < sig.size(); ++end) {
    char c = sig[end];
    if (c == '<' || c == '(') ++depth;
    else if (c == '>' || c == ')') --depth;
    else if (depth == 0 && (c == ']' || c == ';')) break;
  }
  std::string_view full = sig.substr(start, end - start);
  while (!full.empty() && (full.front() == '&' || full.front() == ' ' || full.front() == '(')) full.remove_prefix(1);
  while (!full.empty() && (full.back() == ' ' || full.back() == ')')) full.remove_suffix(1);
  // Drop namespace qualifiers (outside template arguments).
  depth = 0;
  size_t nameStart = 0;
  for (size_t i = 0; i + 1 < full.size(); ++i) {
    if (full[i] == '<') ++depth;
    else if (full[i] == '>') --depth;
    else if (depth == 0 && full[i] == ':' && full[i + 1] == ':') nameStart = i + 2;
  }
  full = full.substr(nameStart);
  // Template arguments and the like become '_' so the name stays a symbol.
  std::string name;
  for (char c : full) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') name += c;
    else if (c != ' ' && (name.empty() || name.back() != '_')) name += '_';
  }
  while (!name.empty() && name.back() == '_' && full.back() != '_') name.pop_back();
  return name.empty() ? "kernel" : name;
}

void checkKernelName(const std::string &name, SourceLoc loc) {
  bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok)
    fail({"jit", loc}, "kernel name '" + name + "' is not a C identifier (letters, digits, _; not starting with a digit)");
  // The kernel's symbol shares a module with these; a clash gives cryptic
  // errors from the emulator's JIT or the linker.
  if (name.starts_with("__"))
    fail({"jit", loc}, "kernel name '" + name + "' is reserved: names starting with '__' belong to the compiler "
                       "and the device libraries; choose another name");
  if (name.starts_with("tessel_emu_"))
    fail({"jit", loc}, "kernel name '" + name + "' is reserved: names starting with 'tessel_emu_' belong to "
                       "tessel's emulator; choose another name");
}

void failArgument(const std::string &kernel, size_t index, DType dtype, const std::string &value,
                  const char *problem) {
  throw Error(kernel + ": argument " + std::to_string(index) + " (" + dtypeName(dtype) + ") = " + value + " " +
              problem + " for " + dtypeName(dtype));
}

void failConstRange(const std::string &kernel, size_t index, const char *type, const std::string &value) {
  throw Error(kernel + ": argument " + std::to_string(index) + " (Const<" + type + ">) = " + value +
              " is out of range for " + type);
}

void failConstNotInteger(const std::string &kernel, size_t index, const char *type, const std::string &value) {
  throw Error(kernel + ": argument " + std::to_string(index) + " (Const<" + type + ">) = " + value +
              " is not an integer, which Const<" + type + "> needs");
}

long long parseConstInteger(const std::string &text, const std::string &kernel, size_t index, const char *type) {
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw Error(kernel + ": argument " + std::to_string(index) + " (Const<" + type + ">) = '" + text +
                "' is not an integer" + (ec == std::errc::result_out_of_range ? " that fits in 64 bits" : ""));
  return v;
}

double parseConstNumber(const std::string &text, const std::string &kernel, size_t index, const char *type) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw Error(kernel + ": argument " + std::to_string(index) + " (Const<" + type + ">) = '" + text +
                "' is not a number");
  return v;
}

std::string numberText(double v) {
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e18)
    return std::to_string(static_cast<long long>(v));
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

void failNullPointer(const std::string &kernel, size_t index, DType pointee, const char *what) {
  throw Error(kernel + ": argument " + std::to_string(index) + " (Ptr<" + dtypeName(pointee) +
              ">) is a null pointer (" + what + ")");
}

void failForeignBuffer(const std::string &kernel, size_t index, DType pointee, const DeviceImpl &bufferDevice,
                       const DeviceImpl &launchDevice) {
  std::string on = bufferDevice.name(), launch = launchDevice.name();
  if (on == launch) // two devices of one name: still two devices
    on = "another " + on + " device";
  throw Error(kernel + ": argument " + std::to_string(index) + " (Ptr<" + dtypeName(pointee) + ">) is a Buffer on " +
              on + " but the launch is on " + launch + "; a kernel reads only buffers of its launch's device");
}

} // namespace tessel::detail

namespace tessel::detail {

std::string launchSite(const std::source_location &where, const std::string &kernel) {
  std::string file = where.file_name() ? where.file_name() : "";
  if (file.empty())
    return "launching " + kernel + ": ";
  return file + ":" + std::to_string(where.line()) + ": launching " + kernel + ": ";
}

} // namespace tessel::detail
