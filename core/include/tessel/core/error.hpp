// The one exception type tessel throws.
#pragma once

#include <exception>
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

} // namespace tessel
