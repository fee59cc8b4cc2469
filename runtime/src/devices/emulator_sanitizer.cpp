// The emulator's access checks: live buffers, the LDS plan, LDS bytes read
// before anything wrote them, LDS races. See emulator_sanitizer.hpp.
#include "emulator_sanitizer.hpp"

#include "emulator_runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <iterator>
#include <map>

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

} // namespace
} // namespace tessel::emu

using namespace tessel::emu;

extern "C" void *tessel_emu_check_global(void *p, uint64_t bytes, uint32_t site) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  ThreadState &t = currentThread();
  LaunchSanitizer *s = t.sanitizer;
  if (!s) // not launched through a sanitizing launch: let it through
    return p;
  // Most accesses of a thread hit the few buffers it touched last.
  for (const BufferRange &hit : t.recentBuffers)
    if (a >= hit.begin && a + bytes <= hit.end && a + bytes >= a)
      return p;
  const std::vector<BufferRange> &buffers = s->buffers;
  auto next = bufferAfter(buffers, a);
  if (next != buffers.begin()) {
    const BufferRange &in = *std::prev(next);
    if (a + bytes <= in.end && a + bytes >= a) {
      t.recentBuffers[t.nextRecent++ % std::size(t.recentBuffers)] = in;
      return p;
    }
  }
  stop(*s, std::string("global ") + globalWhat(*s, site) + " out of bounds " + whoAndWhere(*s, site) + ": " +
               plural(bytes, "byte") + " at " + hex(a) + "; " + nearestBuffer(buffers, a, bytes));
}

extern "C" void *tessel_emu_check_lds(void *p, uint64_t bytes, uint32_t site) {
  ThreadState &t = currentThread();
  LaunchSanitizer *s = t.sanitizer;
  if (!s)
    return p;
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
    const LdsShadow::Access *other = nullptr;
    if (!ordered(b.write))
      other = &b.write;
    else if (writes && !ordered(b.read))
      other = &b.read;
    if (other) {
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

namespace tessel::emu {

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
