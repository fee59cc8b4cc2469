// What a call's arguments let the compiler assume (DESIGN: specialization).
#pragma once

#include <cstdint>
#include <vector>

namespace tessel {

// One entry per Trace::args entry; all false is always correct.
struct ArgSpecialization {
  bool equalsOne = false;     // Int: the value is exactly 1 (becomes a constant)
  bool divisibleBy16 = false; // Int: value % 16 == 0
  bool aligned16 = false;     // Pointer: address % 16 == 0
  // Pointer: a Buffer of at most kMaxBufferBytes bytes (the kernel's valid
  // accesses through it are within 32-bit byte offsets of it, which AMD
  // buffer instructions take; a raw device address never has it).
  bool within2GiB = false;
  bool operator==(const ArgSpecialization &) const = default;
};

// The largest Buffer that gets `within2GiB`: 2^31 - 2 bytes, the
// num_records of the buffer resources the compiler builds.
inline constexpr uint64_t kMaxBufferBytes = (uint64_t(1) << 31) - 2;

struct Specialization {
  std::vector<ArgSpecialization> args;
  bool operator==(const Specialization &) const = default;
};

} // namespace tessel
