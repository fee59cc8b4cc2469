// The one exception type tessel throws.
#pragma once

#include <exception>
#include <source_location>
#include <string>
#include <utility>

namespace tessel {

// Thrown for every user-facing error (trace-time shape errors, compile errors,
// resource limits, runtime failures). `what()` names the C++ file:line.
class Error : public std::exception {
public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  const char *what() const noexcept override { return message_.c_str(); }

private:
  std::string message_;
};

// "file:line: " of a caller (host API errors name the line that called them).
inline std::string callerLine(const std::source_location &where) {
  const char *file = where.file_name();
  if (!file || !*file)
    return "";
  return std::string(file) + ":" + std::to_string(where.line()) + ": ";
}

} // namespace tessel
