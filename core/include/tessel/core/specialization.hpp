// What a call's arguments let the compiler assume (DESIGN: specialization).
#pragma once

#include <vector>

namespace tessel {

// One entry per Trace::args entry; all false is always correct.
struct ArgSpecialization {
  bool equalsOne = false;     // Int: the value is exactly 1 (becomes a constant)
  bool divisibleBy16 = false; // Int: value % 16 == 0
  bool aligned16 = false;     // Pointer: address % 16 == 0
  bool operator==(const ArgSpecialization &) const = default;
};

struct Specialization {
  std::vector<ArgSpecialization> args;
  bool operator==(const Specialization &) const = default;
};

} // namespace tessel
