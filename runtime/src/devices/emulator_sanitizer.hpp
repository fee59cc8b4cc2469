// The emulator as a sanitizer. Every global and LDS access of a kernel goes
// through a check (emulator_instrument.cpp inserts the calls) that knows
// every live buffer and the LDS plan's bytes; an access outside them is
// reported with the kernel, workgroup, thread, the op's C++ line, the address
// and the nearest buffer, and the access does not happen: the workgroup stops
// and the launch throws tessel::Error. In the `races` mode each LDS byte and
// each global byte the kernel touches also remembers who last wrote and read
// it, to report two threads touching it without a barrier (or, between
// workgroups, atomics) ordering them. Internal to tessel_devices.
#pragma once

#include "emulator_runtime.hpp"

#include <atomic>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessel::emu {

// TESSEL_SANITIZE=off|memory|races, read when a kernel is loaded:
//  memory (default): global accesses inside a live buffer, LDS accesses
//    inside the kernel's LDS plan, no LDS read of bytes nothing wrote since
//    the workgroup began;
//  races: also two threads touching the same LDS or global byte, one of them
//    writing, with no barrier between (or, within a wave, no meeting of the
//    wave), and for global memory two workgroups touching it with no atomic
//    release and acquire that order them;
//  off: no checks (a wild access may kill the process; it is reported first).
enum class SanitizeMode : uint8_t { Off, Memory, Races };
SanitizeMode sanitizeModeFromEnvironment();
const char *sanitizeModeName(SanitizeMode mode);

// Where an instrumented access came from: the user's C++ line (from the
// kernel module's line tables) and what it is.
struct AccessSite {
  std::string file; // empty when the module has no line for it
  unsigned line = 0;
  enum Kind : uint8_t { Load, Store, Atomic } kind = Load;
  // An atomic's ordering: what it publishes to (release) and takes from
  // (acquire) other workgroups, for the global race checks.
  bool acquire = false, release = false;
};

// The buffers global accesses may touch: every live emulator allocation.
void registerAllocation(const void *base, size_t bytes);
void unregisterAllocation(const void *base);
// The live buffers now, sorted (a launch checks against this snapshot).
std::vector<BufferRange> liveBuffers();

// Races mode: what the checks remember about global memory, shared by the
// host threads that run the launch's workgroups. Per byte of each live
// buffer the kernel touches, its last write and read; ordering between
// workgroups comes only from atomics (an acquire sees what the workgroups
// whose releases it reads had done: vector clocks over workgroups).
class GlobalShadow {
public:
  struct Access {
    uint32_t site = 0; // site index + 1; 0: none
    uint32_t workgroup = 0; // linear index
    uint32_t thread = 0;
    uint32_t barriers = 0, waveSyncs = 0; // as LdsShadow's, within the workgroup
    uint32_t epoch = 0; // the workgroup's releases before it
    bool atomic = false;
    bool writes = false;
  };
  struct Byte {
    Access write, read;
  };
  using Clock = std::unordered_map<uint32_t, uint32_t>; // workgroup -> releases seen

  // The records of the page of bytes holding `address` (kPageBytes from a
  // multiple of it), made when the kernel first touches the page (56 bytes
  // of records per byte touched: races mode is for tests at small sizes).
  static constexpr uintptr_t kPageBytes = 4096;
  Byte *page(uintptr_t address);
  std::mutex &stripe(uintptr_t address) { return stripes_[(address >> 6) % std::size(stripes_)]; }
  std::mutex clockMutex;
  std::unordered_map<uintptr_t, Clock> released; // per atomic address: what its releases published

private:
  std::shared_mutex pagesMutex_;
  std::unordered_map<uintptr_t, std::unique_ptr<Byte[]>> pages_;
  std::mutex stripes_[64];
};

// One launch's checking state, shared by the host threads that run it.
struct LaunchSanitizer {
  SanitizeMode mode = SanitizeMode::Off;
  const std::vector<AccessSite> *sites = nullptr;
  uint32_t ldsBytes = 0;           // the kernel's LDS plan
  uint32_t waveSize = 64;
  std::vector<BufferRange> buffers; // the live buffers when the launch began
  std::mutex mutex;
  std::string report; // the problem of the first workgroup that had one; empty when none
  // The linear index of the workgroup `report` is from. Workgroups start in
  // index order and a report stops only later ones from starting, so the
  // first workgroup with a problem is the one reported, however the host
  // threads interleave.
  std::atomic<uint64_t> stopAfter{UINT64_MAX};
  std::atomic<uint64_t> checksAfterReport{0}; // by earlier workgroups, still running

  uint64_t launch = 0;                 // distinct per launch: workgroups' clocks start afresh
  std::unique_ptr<GlobalShadow> global; // races mode
};

// What the checks of one workgroup remember about its LDS (per host thread,
// reused from workgroup to workgroup).
class LdsShadow {
public:
  // Forgets everything: the workgroup starts with nothing written.
  void reset(uint32_t ldsBytes, SanitizeMode mode);
  struct Access {
    uint32_t site = 0;    // site index + 1; 0: none
    uint32_t thread = 0;
    uint32_t barriers = 0; // workgroup barriers the thread had passed
    uint32_t waveSyncs = 0; // syncs of its wave it had passed
    bool atomic = false;
  };
  struct Byte {
    Access write, read;
  };
  std::vector<uint8_t> written; // memory mode: one flag per LDS byte
  std::vector<Byte> bytes;      // races mode: the last write and read of each byte
};

} // namespace tessel::emu

// The checks the instrumented kernel calls before each access. Each returns
// `p` when the access is valid; otherwise it reports and never returns (the
// workgroup stops before the access happens).
extern "C" void *tessel_emu_check_global(void *p, uint64_t bytes, uint32_t site);
extern "C" void *tessel_emu_check_lds(void *p, uint64_t bytes, uint32_t site);
// The checks of one wave-form access: `count` pointers, `perLane` of them a
// lane, those with a nonzero `active` byte checked (emulator_wave.hpp).
extern "C" void tessel_emu_check_lanes(uint32_t space, void *const *pointers, const uint8_t *active, uint32_t count,
                                       uint32_t perLane, uint64_t bytes, uint32_t site);
