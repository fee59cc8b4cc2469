// The message of the tessel::Error a call throws, for tests of errors.
#pragma once

#include "tessel/core/error.hpp"

#include <string>

namespace testutil {

// The message of the tessel::Error `f` throws, or "<no error>".
template <class F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const tessel::Error &e) {
    return e.what();
  }
  return "<no error>";
}

} // namespace testutil
