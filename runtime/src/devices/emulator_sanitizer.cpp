// The emulator's access checks: live buffers, the LDS plan, LDS bytes read
// before anything wrote them, LDS and global races. See emulator_sanitizer.hpp.
#include "emulator_sanitizer.hpp"

#include "emulator_runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <iterator>
#include <map>
#include <optional>

namespace tessel::emu {

SanitizeMode sanitizeModeFromEnvironment() {
  const char *v = std::getenv("TESSEL_SANITIZE");
  std::string value = v ? v : "";
  if (value.empty() || value == "memory" || value == "1")
    return SanitizeMode::Memory;
  if (value == "off" || value == "0")
    return SanitizeMode::Off;
  if (value == "races")
    return SanitizeMode::Races;
  static std::once_flag warned;
  std::call_once(warned, [&] {
    std::fprintf(stderr, "tessel: warning: TESSEL_SANITIZE='%s' is not one of off, memory, races; using memory\n",
                 value.c_str());
  });
  return SanitizeMode::Memory;
}

const char *sanitizeModeName(SanitizeMode mode) {
  switch (mode) {
  case SanitizeMode::Off: return "off";
  case SanitizeMode::Memory: return "memory";
  case SanitizeMode::Races: return "races";
  }
  return "?";
}

// ---- live buffers -------------------------------------------------------------

namespace {

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, size_t> live; // base -> bytes
};
Registry &registry() {
  static Registry *r = new Registry; // outlives every device (static destruction order)
  return *r;
}

} // namespace

std::vector<BufferRange> liveBuffers() {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<BufferRange> out;
  out.reserve(r.live.size());
  for (auto [base, bytes] : r.live)
    out.push_back({base, base + bytes});
  return out;
}

void registerAllocation(const void *base, size_t bytes) {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  r.live[reinterpret_cast<uintptr_t>(base)] = bytes;
}

void unregisterAllocation(const void *base) {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  r.live.erase(reinterpret_cast<uintptr_t>(base));
}

namespace {

std::string hex(uintptr_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string plural(uint64_t n, const char *what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

const AccessSite *siteOf(const LaunchSanitizer &s, uint32_t site) {
  return s.sites && site < s.sites->size() ? &(*s.sites)[site] : nullptr;
}

std::string lineOf(const LaunchSanitizer &s, uint32_t site) {
  const AccessSite *a = siteOf(s, site);
  if (!a || a->file.empty())
    return "an unknown line";
  return a->file + ":" + std::to_string(a->line);
}

const char *globalWhat(const LaunchSanitizer &s, uint32_t site) {
  const AccessSite *a = siteOf(s, site);
  if (!a)
    return "access";
  return a->kind == AccessSite::Load ? "load" : a->kind == AccessSite::Store ? "store" : "atomic";
}

const char *ldsWhat(const LaunchSanitizer &s, uint32_t site) {
  const AccessSite *a = siteOf(s, site);
  if (!a)
    return "LDS access";
  return a->kind == AccessSite::Load ? "LDS read" : a->kind == AccessSite::Store ? "LDS write" : "LDS atomic";
}

// "at file:line (workgroup (x, y, z), thread t)"
std::string whoAndWhere(const LaunchSanitizer &s, uint32_t site) {
  const ThreadState &t = currentThread();
  return "at " + lineOf(s, site) + " (workgroup (" + std::to_string(t.workgroup[0]) + ", " +
         std::to_string(t.workgroup[1]) + ", " + std::to_string(t.workgroup[2]) + "), thread " +
         std::to_string(t.workitem[0]) + ")";
}

// Records the report of the launch's first workgroup (in launch order) that
// has one, and stops the calling workgroup: its fibers are abandoned, or the
// thread's run jumps back to its start.
[[noreturn]] void stop(LaunchSanitizer &s, std::string report) {
  ThreadState &t = currentThread();
  {
    std::lock_guard lock(s.mutex);
    if (s.report.empty() || t.workgroupIndex < s.stopAfter.load()) {
      s.report = std::move(report);
      s.stopAfter.store(t.workgroupIndex);
    }
  }
  if (t.fibers)
    t.fibers->fail("stopped by the sanitizer");
  std::longjmp(*t.abortRun, 1);
}

// Once a workgroup has been stopped with a report, the others stop at their
// next check: later ones (in launch order) at once, earlier ones, which may
// still find a problem of their own that comes first, after a grace of
// checks shared by them (they may be spinning on a lock the stopped
// workgroup held: without it the launch would never end).
void stopIfAnotherReported(LaunchSanitizer &s, ThreadState &t) {
  const uint64_t reported = s.stopAfter.load(std::memory_order_relaxed);
  if (reported == UINT64_MAX || t.workgroupIndex == reported)
    return;
  constexpr uint64_t kGraceChecks = uint64_t(1) << 22;
  if (t.workgroupIndex < reported && s.checksAfterReport.fetch_add(1, std::memory_order_relaxed) < kGraceChecks)
    return;
  if (t.fibers)
    t.fibers->fail("stopped by the sanitizer");
  std::longjmp(*t.abortRun, 1);
}

// The first buffer that starts after `p`.
std::vector<BufferRange>::const_iterator bufferAfter(const std::vector<BufferRange> &buffers, uintptr_t p) {
  return std::upper_bound(buffers.begin(), buffers.end(), p,
                          [](uintptr_t a, const BufferRange &b) { return a < b.begin; });
}

// Why [p, p + bytes) is in no live buffer: where the nearest one is.
std::string nearestBuffer(const std::vector<BufferRange> &buffers, uintptr_t p, uint64_t bytes) {
  if (buffers.empty())
    return "no buffer is allocated";
  auto next = bufferAfter(buffers, p);
  std::string best;
  uint64_t bestDistance = UINT64_MAX;
  if (next != buffers.begin()) {
    auto prev = std::prev(next);
    const uintptr_t begin = prev->begin, end = prev->end;
    const std::string buffer = "the buffer of " + plural(end - begin, "byte") + " at " + hex(begin);
    if (p < end) { // starts inside, runs past the end
      return "its last " + plural(p + bytes - end, "byte") + " are past the end of " + buffer;
    }
    bestDistance = p - end;
    best = p == end ? "it starts right after the end of " + buffer
                    : "it starts " + plural(p - end, "byte") + " past the end of " + buffer;
  }
  if (next != buffers.end() && next->begin - (p + bytes) < bestDistance) {
    const uintptr_t begin = next->begin;
    const std::string buffer = "the buffer of " + plural(next->end - begin, "byte") + " at " + hex(begin);
    if (p + bytes > begin)
      return "its first " + plural(begin - p, "byte") + " are before the start of " + buffer;
    bestDistance = begin - (p + bytes);
    best = bestDistance == 0 ? "it ends right before the start of " + buffer
                             : "it ends " + plural(bestDistance, "byte") + " before the start of " + buffer;
  }
  // Far from every buffer: a wild pointer, not an off-by-some.
  if (bestDistance > (uint64_t(1) << 20))
    return "it is in no buffer (the nearest is " + plural(bestDistance, "byte") + " away)";
  return best;
}

// The record of `b` (a byte's last write and read) that an access is not
// ordered after: the write, else, when the access writes, the read; null
// when both are ordered before it.
template <class Byte, class Ordered>
auto unorderedRecord(Byte &b, bool writes, const Ordered &ordered) -> decltype(&b.write) {
  if (!ordered(b.write))
    return &b.write;
  if (writes && !ordered(b.read))
    return &b.read;
  return nullptr;
}

// The workgroup this host thread runs: its releases so far and what its
// acquires have seen of other workgroups' (races mode, global memory).
struct WorkgroupClock {
  uint64_t launch = 0, workgroup = UINT64_MAX;
  uint32_t epoch = 0;
  GlobalShadow::Clock seen;
  // An acquire's address: what its releases published is taken at the
  // workgroup's next access. The check runs before the atomic, which may
  // then read a release made after the check.
  std::optional<uintptr_t> acquired;
};
thread_local WorkgroupClock tClock;

void join(GlobalShadow::Clock &into, const GlobalShadow::Clock &from) {
  for (auto [workgroup, epoch] : from) {
    uint32_t &mine = into[workgroup];
    mine = std::max(mine, epoch);
  }
}

std::string workgroupName(const ThreadState &t, uint32_t index) {
  const DispatchPacket *packet = t.packet;
  const uint64_t x = packet ? (packet->gridSizeX + packet->workgroupSizeX - 1) / packet->workgroupSizeX : 1;
  const uint64_t y = packet ? (packet->gridSizeY + packet->workgroupSizeY - 1) / packet->workgroupSizeY : 1;
  return "(" + std::to_string(index % x) + ", " + std::to_string(index / x % y) + ", " +
         std::to_string(index / (x * y)) + ")";
}

// Races on global memory: an earlier access of another thread is ordered
// before this one, in the same workgroup, as in LDS (barriers, the wave's
// meetings); between workgroups, only when both are atomics or a release of
// the earlier one's workgroup (after it) reached this one through an acquire.
void checkGlobalRace(LaunchSanitizer &s, uintptr_t a, uint64_t bytes, uint32_t site) {
  ThreadState &t = currentThread();
  GlobalShadow &g = *s.global;
  if (tClock.launch != s.launch || tClock.workgroup != t.workgroupIndex) {
    tClock.launch = s.launch;
    tClock.workgroup = t.workgroupIndex;
    tClock.epoch = 0;
    tClock.seen.clear();
    tClock.acquired.reset();
  }
  if (tClock.acquired) {
    std::lock_guard lock(g.clockMutex);
    if (auto it = g.released.find(*tClock.acquired); it != g.released.end())
      join(tClock.seen, it->second);
    tClock.acquired.reset();
  }
  const AccessSite *as = siteOf(s, site);
  const bool reads = !as || as->kind != AccessSite::Store;
  const bool writes = !as || as->kind != AccessSite::Load;
  const bool atomic = as && as->kind == AccessSite::Atomic;
  const uint32_t self = uint32_t(t.workgroupIndex);
  GlobalShadow::Access now;
  now.site = site + 1;
  now.workgroup = self;
  now.thread = t.workitem[0];
  now.epoch = tClock.epoch;
  now.atomic = atomic;
  now.writes = writes;
  if (t.fibers) {
    now.barriers = t.fibers->barriersPassed();
    now.waveSyncs = t.fibers->waveSyncsPassed(now.thread);
  }
  const uint32_t waveSize = s.waveSize;
  auto ordered = [&](const GlobalShadow::Access &before) {
    if (!before.site)
      return true;
    if (before.atomic && now.atomic)
      return true;
    if (before.workgroup != now.workgroup) {
      auto it = tClock.seen.find(before.workgroup);
      return it != tClock.seen.end() && it->second >= before.epoch;
    }
    if (before.thread == now.thread || now.barriers > before.barriers)
      return true;
    if (before.thread / waveSize != now.thread / waveSize)
      // A write after another wave's read is not reported: that read is
      // most often a replica's (a layout that repeats an element over
      // waves loads it in each; one of them stores), whose value nobody
      // uses. A read or write after another wave's write is.
      return !before.writes;
    return now.waveSyncs > before.waveSyncs || (before.site == now.site && writes);
  };
  auto buffer = std::prev(bufferAfter(s.buffers, a));
  std::mutex &first = g.stripe(a), &last = g.stripe(a + bytes - 1);
  std::unique_lock lockFirst(first, std::defer_lock);
  std::unique_lock<std::mutex> lockLast;
  if (&last != &first) { // an access across two stripes takes both without deadlock
    lockLast = std::unique_lock(last, std::defer_lock);
    std::lock(lockFirst, lockLast);
  } else {
    lockFirst.lock();
  }
  GlobalShadow::Byte *records = nullptr;
  for (uint64_t i = 0; i < bytes; ++i) {
    if (!records || (a + i) % GlobalShadow::kPageBytes == 0)
      records = g.page(a + i);
    GlobalShadow::Byte &b = records[(a + i) % GlobalShadow::kPageBytes];
    if (const GlobalShadow::Access *other = unorderedRecord(b, writes, ordered)) {
      const bool otherWrote = other == &b.write;
      const GlobalShadow::Access was = *other;
      lockFirst.unlock();
      if (lockLast.owns_lock())
        lockLast.unlock();
      const bool sameGroup = was.workgroup == self;
      stop(s, "global data race " + whoAndWhere(s, site) + ": thread " + std::to_string(now.thread) +
                  (writes ? " writes " : " reads ") + hex(a + i) + " (byte " +
                  std::to_string(a + i - buffer->begin) + " of the buffer of " +
                  plural(buffer->end - buffer->begin, "byte") + " at " + hex(buffer->begin) + "), which thread " +
                  std::to_string(was.thread) + (sameGroup ? "" : " of workgroup " + workgroupName(t, was.workgroup)) +
                  (otherWrote ? " wrote" : " read") + " at " + lineOf(s, was.site - 1) +
                  (sameGroup ? ", with no barrier between"
                             : ", with no atomic release and acquire ordering the two workgroups"));
    }
    if (writes)
      b.write = now;
    if (reads)
      b.read = now;
  }
  lockFirst.unlock();
  if (lockLast.owns_lock())
    lockLast.unlock();
  if (as && as->acquire)
    tClock.acquired = a;
  if (as && as->release) {
    std::lock_guard lock(g.clockMutex);
    GlobalShadow::Clock &published = g.released[a];
    join(published, tClock.seen);
    uint32_t &mine = published[self];
    mine = std::max(mine, tClock.epoch);
    ++tClock.epoch;
  }
}

// Whether [a, a + bytes) lies in one of the buffers the thread hit last
// (most of a thread's accesses do).
bool inRecentBuffer(const ThreadState &t, uintptr_t a, uint64_t bytes) {
  for (const BufferRange &hit : t.recentBuffers)
    if (a >= hit.begin && a + bytes <= hit.end && a + bytes >= a)
      return true;
  return false;
}

} // namespace
} // namespace tessel::emu

using namespace tessel::emu;

extern "C" void *tessel_emu_check_global(void *p, uint64_t bytes, uint32_t site) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  ThreadState &t = currentThread();
  LaunchSanitizer *s = t.sanitizer;
  if (!s) // not launched through a sanitizing launch: let it through
    return p;
  stopIfAnotherReported(*s, t);
  bool inside = inRecentBuffer(t, a, bytes);
  const std::vector<BufferRange> &buffers = s->buffers;
  if (!inside) {
    auto next = bufferAfter(buffers, a);
    if (next != buffers.begin()) {
      const BufferRange &in = *std::prev(next);
      if (a + bytes <= in.end && a + bytes >= a) {
        t.recentBuffers[t.nextRecent++ % std::size(t.recentBuffers)] = in;
        inside = true;
      }
    }
  }
  if (!inside)
    stop(*s, std::string("global ") + globalWhat(*s, site) + " out of bounds " + whoAndWhere(*s, site) + ": " +
                 plural(bytes, "byte") + " at " + hex(a) + "; " + nearestBuffer(buffers, a, bytes));
  if (s->global)
    checkGlobalRace(*s, a, bytes, site);
  return p;
}

extern "C" void *tessel_emu_check_lds(void *p, uint64_t bytes, uint32_t site) {
  ThreadState &t = currentThread();
  LaunchSanitizer *s = t.sanitizer;
  if (!s)
    return p;
  stopIfAnotherReported(*s, t);
  const intptr_t offset = reinterpret_cast<uint8_t *>(p) - t.lds;
  if (offset < 0 || uint64_t(offset) + bytes > s->ldsBytes)
    stop(*s, std::string(ldsWhat(*s, site)) + " out of bounds " + whoAndWhere(*s, site) + ": " +
                 plural(bytes, "byte") + " at LDS offset " + std::to_string(offset) +
                 "; the kernel's LDS plan has " + plural(s->ldsBytes, "byte"));
  LdsShadow *shadow = t.shadow;
  if (!shadow)
    return p;
  const AccessSite *a = siteOf(*s, site);
  const bool reads = !a || a->kind != AccessSite::Store;
  const bool writes = !a || a->kind != AccessSite::Load;
  const bool atomic = a && a->kind == AccessSite::Atomic;
  const size_t first = size_t(offset), last = first + bytes;
  if (reads && !shadow->written.empty())
    for (size_t i = first; i < last; ++i)
      if (!shadow->written[i]) {
        size_t end = i;
        while (end < last && !shadow->written[end])
          ++end;
        stop(*s, std::string(ldsWhat(*s, site)) + " of bytes nothing wrote " + whoAndWhere(*s, site) +
                     ": LDS offsets " + std::to_string(i) + ".." + std::to_string(end - 1) +
                     " were not written since the workgroup began (LDS starts undefined)");
      }
  if (writes && !shadow->written.empty())
    std::memset(shadow->written.data() + first, 1, bytes);
  if (shadow->bytes.empty())
    return p;
  // Races: an earlier access by another thread is ordered before this one
  // only through a workgroup barrier, or, in the same wave, a wave sync.
  LdsShadow::Access now;
  now.site = site + 1;
  now.thread = t.workitem[0];
  now.atomic = atomic;
  if (t.fibers) {
    now.barriers = t.fibers->barriersPassed();
    now.waveSyncs = t.fibers->waveSyncsPassed(now.thread);
  }
  const uint32_t waveSize = s->waveSize;
  auto ordered = [&](const LdsShadow::Access &before) {
    if (!before.site || before.thread == now.thread || now.barriers > before.barriers)
      return true;
    if (before.atomic && now.atomic)
      return true;
    if (before.thread / waveSize != now.thread / waveSize)
      return false;
    // In one wave: ordered by a sync of the wave, or the same instruction
    // (lanes writing one address together: one of them wins, as on the GPU).
    return now.waveSyncs > before.waveSyncs || (before.site == now.site && writes);
  };
  for (size_t i = first; i < last; ++i) {
    LdsShadow::Byte &b = shadow->bytes[i];
    if (const LdsShadow::Access *other = unorderedRecord(b, writes, ordered)) {
      const bool otherWrote = other == &b.write;
      stop(*s, "LDS data race " + whoAndWhere(*s, site) + ": thread " + std::to_string(now.thread) +
                   (writes ? " writes" : " reads") + " LDS offset " + std::to_string(i) + ", which thread " +
                   std::to_string(other->thread) + (otherWrote ? " wrote" : " read") + " at " +
                   lineOf(*s, other->site - 1) + ", with no barrier between");
    }
    if (writes)
      b.write = now;
    if (reads)
      b.read = now;
  }
  return p;
}

// A wave-form access (emulator_wave.hpp): each active lane's access checked
// as the fibers check it, in lane order, with the lane as the thread a report
// names. A global address in a buffer the thread hit last passes without
// the full check.
extern "C" void tessel_emu_check_lanes(uint32_t space, void *const *pointers, const uint8_t *active, uint32_t count,
                                       uint32_t perLane, uint64_t bytes, uint32_t site) {
  ThreadState &t = currentThread();
  LaunchSanitizer *s = t.sanitizer;
  if (!s)
    return;
  stopIfAnotherReported(*s, t);
  const uint32_t first = t.workitem[0];
  for (uint32_t i = 0; i < count; ++i) {
    if (!active[i])
      continue;
    // (With the global race shadow every access is recorded: no shortcut.)
    if (space != 3 && !s->global && inRecentBuffer(t, reinterpret_cast<uintptr_t>(pointers[i]), bytes))
      continue;
    t.workitem[0] = first + i / perLane;
    if (space == 3)
      tessel_emu_check_lds(pointers[i], bytes, site);
    else
      tessel_emu_check_global(pointers[i], bytes, site);
  }
  t.workitem[0] = first;
}

namespace tessel::emu {

GlobalShadow::Byte *GlobalShadow::page(uintptr_t address) {
  const uintptr_t key = address / kPageBytes;
  {
    std::shared_lock lock(pagesMutex_);
    if (auto it = pages_.find(key); it != pages_.end())
      return it->second.get();
  }
  std::unique_lock lock(pagesMutex_);
  std::unique_ptr<Byte[]> &made = pages_[key];
  if (!made)
    made = std::make_unique<Byte[]>(kPageBytes);
  return made.get();
}

void LdsShadow::reset(uint32_t ldsBytes, SanitizeMode mode) {
  if (mode == SanitizeMode::Off) {
    written.clear();
    bytes.clear();
    return;
  }
  written.assign(ldsBytes, 0);
  if (mode == SanitizeMode::Races)
    bytes.assign(ldsBytes, Byte{});
  else
    bytes.clear();
}

} // namespace tessel::emu
