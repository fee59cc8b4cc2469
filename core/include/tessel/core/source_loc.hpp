// A place in the user's C++ source, carried from tracing to diagnostics.
#pragma once

#include <cstdint>

namespace tessel {

// Where in the user's C++ an op was traced (from std::source_location).
struct SourceLoc {
  const char *file = "";
  uint32_t line = 0;
  uint32_t column = 0;
};

} // namespace tessel
