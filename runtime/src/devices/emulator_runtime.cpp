// The emulator's runtime functions and the fibers of a workgroup.
#include "emulator_runtime.hpp"
#include "emulator_sanitizer.hpp"
#include "emulator_wave.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstring>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>

namespace tessel::emu {

namespace {
thread_local ThreadState tThread;
} // namespace

ThreadState &currentThread() { return tThread; }

// ---- fibers ----------------------------------------------------------------

FiberWorkgroup::FiberWorkgroup(uint32_t blockSize, uint32_t waveSize, size_t stackBytes, uint32_t threadsPerFiber)
    : fibers_(blockSize), exchange_(2 * size_t(blockSize), 0), waveSyncs_((blockSize + waveSize - 1) / waveSize, 0),
      arrivals_(waveSyncs_.size(), 0), completed_(waveSyncs_.size(), 0), waiting_(waveSyncs_.size(), 0),
      stackBytes_(stackBytes), guardBytes_(size_t(sysconf(_SC_PAGESIZE))),
      slotBytes_(stackBytes + guardBytes_ + kStackColorBytes),
      waveSize_(waveSize), waveShift_(uint32_t(std::countr_zero(waveSize))), threadsPerFiber_(threadsPerFiber) {
  if (!std::has_single_bit(waveSize))
    throw std::invalid_argument("the emulator's wave size must be a power of two");
  // Reserved lazily: only the pages a fiber touches cost memory. Below each
  // stack a page no access may touch: a stack that overflows faults (and the
  // fault report says so) instead of silently writing the next fiber's.
  void *mem = mmap(nullptr, slotBytes_ * blockSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  stacks_ = mem == MAP_FAILED ? nullptr : static_cast<char *>(mem);
  for (uint32_t i = 0; stacks_ && i < blockSize; ++i)
    if (mprotect(stacks_ + size_t(i) * slotBytes_, guardBytes_, PROT_NONE) != 0) {
      munmap(stacks_, slotBytes_ * blockSize);
      stacks_ = nullptr;
    }
}

FiberWorkgroup::~FiberWorkgroup() {
  if (stacks_)
    munmap(stacks_, slotBytes_ * fibers_.size());
}

bool FiberWorkgroup::inGuardPage(uintptr_t address) const {
  const auto base = reinterpret_cast<uintptr_t>(stacks_);
  if (!stacks_ || address < base || address >= base + slotBytes_ * fibers_.size())
    return false;
  return (address - base) % slotBytes_ < guardBytes_;
}

#if defined(__x86_64__)
// Switching fibers is saving the callee-saved registers on the current stack
// and moving to the other stack: no signal-mask system call, unlike
// swapcontext, which made barriers and cross-lane ops cost a syscall each.
extern "C" void tessel_emu_switch_stack(void **save, void *load);
asm(R"(
  .text
  .p2align 4
  .globl tessel_emu_switch_stack
  .type tessel_emu_switch_stack,@function
tessel_emu_switch_stack:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tessel_emu_switch_stack, .-tessel_emu_switch_stack
)");

void FiberWorkgroup::switchTo(Context &save, Context &load) {
  tessel_emu_switch_stack(&save.sp, load.sp);
}

void FiberWorkgroup::start(Fiber &f, char *stack) {
  // The new stack as tessel_emu_switch_stack leaves one: six registers, then
  // the address it returns to (fiberMain), then a zero return address for
  // fiberMain, which never returns. fiberMain starts with rsp % 16 == 8, as
  // after a call.
  // Each fiber's stack starts at its own offset within a page (the stacks
  // are page-aligned, so their tops would otherwise share the same few
  // cache sets, and a wave's lanes, switching in turn, evict each other's
  // frames); consecutive fibers lie 37 cache lines apart.
  const size_t color = (size_t(&f - fibers_.data()) * 37 % (kStackColorBytes / 64)) * 64;
  auto top = reinterpret_cast<uintptr_t>(stack + stackBytes_ + color) & ~uintptr_t(15);
  auto *slots = reinterpret_cast<void **>(top);
  slots[-1] = nullptr;
  slots[-2] = reinterpret_cast<void *>(&FiberWorkgroup::fiberMain);
  for (int i = 3; i <= 8; ++i)
    slots[-i] = nullptr;
  f.context.sp = &slots[-8];
}
#else
void FiberWorkgroup::switchTo(Context &save, Context &load) { swapcontext(&save.uc, &load.uc); }

void FiberWorkgroup::start(Fiber &f, char *stack) {
  getcontext(&f.context.uc);
  f.context.uc.uc_stack.ss_sp = stack;
  f.context.uc.uc_stack.ss_size = stackBytes_ + kStackColorBytes;
  f.context.uc.uc_link = nullptr;
  makecontext(&f.context.uc, &FiberWorkgroup::fiberMain, 0);
}
#endif

void FiberWorkgroup::fiberMain() {
  FiberWorkgroup *self = tThread.fibers;
  self->entry_(self->kernarg_);
  self->fibers_[self->current_].state = State::Done;
  ++self->done_;
  // Back to the scheduler for good: a finished fiber is never resumed.
  self->switchTo(self->fibers_[self->current_].context, self->scheduler_);
  __builtin_unreachable();
}

void FiberWorkgroup::suspend() { switchTo(fibers_[current_].context, scheduler_); }

// The last thread to reach a barrier releases the workgroup (every wave has
// met as well); the scheduler's next sweep runs it again from thread 0.
void FiberWorkgroup::barrier() {
  fibers_[current_].state = State::AtBarrier;
  if (++atBarrier_ == blockSize()) {
    atBarrier_ = 0;
    for (Fiber &f : fibers_)
      f.state = State::Ready;
    ++barriers_;
    for (uint32_t &w : waveSyncs_)
      ++w;
  }
  suspend();
}

// A lane that reaches a wave's meeting hands over to the next lane of its
// wave directly when that one is ready: the lane the scheduler's sweep would
// run next anyway, so the order of execution is the same, with one switch
// per lane instead of two. The wave's last lane to arrive releases the wave
// and goes back to the scheduler, whose sweep goes on with the next wave and
// comes back to this one from its first lane.
void FiberWorkgroup::waveSync() {
  const uint32_t lane = current_, next = lane + 1, wave = waveOf(lane);
  const uint32_t base = wave * waveSize_, end = std::min(blockSize(), base + waveSize_);
  fibers_[lane].state = State::AtWaveSync;
  if (++waiting_[wave] == end - base) {
    waiting_[wave] = 0;
    for (uint32_t i = base; i < end; ++i)
      fibers_[i].state = State::Ready;
    ++waveSyncs_[wave];
    return suspend();
  }
  if (next == end || fibers_[next].state != State::Ready)
    return suspend();
  current_ = next;
  tThread.workitem[0] = next;
  switchTo(fibers_[lane].context, fibers_[next].context);
}

void FiberWorkgroup::fail(std::string why) {
  error_ = std::move(why);
  // Never resumed: run() returns the error and the fibers are abandoned.
  switchTo(fibers_[current_].context, scheduler_);
  __builtin_unreachable();
}

std::string FiberWorkgroup::run(EntryFn entry, const void *kernarg) {
  if (!stacks_)
    return "could not reserve fiber stacks for " + std::to_string(fibers_.size()) + " threads";
  // A fault on a guard page is reported from a stack of the host thread's
  // own (the fault report's handler runs on it: SA_ONSTACK).
  thread_local bool altStack = [] {
    const size_t bytes = 64 * 1024;
    void *mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
      return false;
    stack_t ss = {};
    ss.ss_sp = mem;
    ss.ss_size = bytes;
    return sigaltstack(&ss, nullptr) == 0;
  }();
  (void)altStack;
  const uint32_t n = blockSize();
  entry_ = entry;
  kernarg_ = kernarg;
  error_.clear();
  std::fill(exchange_.begin(), exchange_.end(), 0);
  barriers_ = 0;
  std::fill(waveSyncs_.begin(), waveSyncs_.end(), 0);
  std::fill(arrivals_.begin(), arrivals_.end(), 0);
  std::fill(completed_.begin(), completed_.end(), 0);
  std::fill(waiting_.begin(), waiting_.end(), 0);
  atBarrier_ = done_ = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Fiber &f = fibers_[i];
    start(f, stacks_ + size_t(i) * slotBytes_ + guardBytes_);
    f.state = State::Ready;
  }
  ThreadState &ts = tThread;
  ts.fibers = this;
  for (;;) {
    // A sweep runs every ready thread in order; a thread that hands over
    // to the next lanes of its wave brings the sweep to where it stopped.
    bool ran = false;
    for (uint32_t i = 0; i < n; ++i) {
      if (fibers_[i].state != State::Ready)
        continue;
      ran = true;
      current_ = i;
      ts.workitem[0] = i * threadsPerFiber_;
      switchTo(scheduler_, fibers_[i].context);
      if (!error_.empty()) {
        ts.fibers = nullptr;
        return error_;
      }
      i = current_;
    }
    if (done_ == n)
      break;
    if (ran)
      continue;
    // Nothing can go on: threads wait for others that finished or wait elsewhere.
    uint32_t atWave = 0;
    for (uint32_t w : waiting_)
      atWave += w;
    const uint32_t atBarrier = atBarrier_, done = done_;
    ts.fibers = nullptr;
    if (atBarrier)
      return "s_barrier reached by only " + std::to_string(atBarrier) + " of " +
             std::to_string(n) + " threads of the workgroup (" + std::to_string(done) +
             " finished without reaching it, " + std::to_string(atWave) +
             " wait at a cross-lane operation)";
    return "a cross-lane operation was reached by only part of a wave (" +
           std::to_string(atWave) + " of " + std::to_string(n) + " threads wait, " +
           std::to_string(done) + " finished)";
  }
  ts.fibers = nullptr;
  return {};
}

// ---- runtime functions called by the retargeted module ---------------------

FiberWorkgroup &currentWorkgroup() { return *tThread.fibers; }

float hardwareExp2(float x) {
  // V_EXP_F32 (AMD CDNA3 ISA, VOP1): D = 2^S0 to 1 ULP. The instruction makes
  // no denormal results (LLVM scales the input around it for a precise
  // exp2): below 2^-126 the result is +0. -inf gives +0, +inf +inf, NaN NaN.
  // Computed in double, so the host's float flushing modes do not matter.
  double r = std::exp2(double(x));
  if (std::isnan(x))
    return std::numeric_limits<float>::quiet_NaN();
  if (r < double(std::numeric_limits<float>::min()))
    return 0.0f;
  return float(r);
}

float hardwareRsq(float x) {
  // V_RSQ_F32: D = 1 / sqrt(S0) to 1 ULP. Denormal inputs count as zero of
  // their sign (the instruction does not take denormals): +-0 -> +-inf;
  // negative -> NaN; +inf -> +0. In double, whatever the host's modes.
  if (std::isnan(x))
    return std::numeric_limits<float>::quiet_NaN();
  if (std::fpclassify(x) == FP_SUBNORMAL || x == 0.0f)
    return std::signbit(x) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  if (x < 0.0f)
    return std::numeric_limits<float>::quiet_NaN();
  return float(1.0 / std::sqrt(double(x)));
}

// The lane a DPP control reads from, or -1 when out of bounds (GFX9 rules);
// -2 for a control the emulator does not know.
int64_t dppSourceLane(uint32_t lane, uint32_t ctrl, uint32_t waveSize) {
  const int64_t l = lane, rowBase = lane & ~15u, inRow = lane & 15u, n = ctrl & 15u;
  if (ctrl <= 0xFF)
    return (l & ~3) + ((ctrl >> (2 * (lane & 3))) & 3);
  if (ctrl >= 0x101 && ctrl <= 0x10F)
    return inRow + n < 16 ? l + n : -1; // row_shl
  if (ctrl >= 0x111 && ctrl <= 0x11F)
    return inRow - n >= 0 ? l - n : -1; // row_shr
  if (ctrl >= 0x121 && ctrl <= 0x12F)
    return rowBase + ((inRow - n) & 15); // row_ror
  switch (ctrl) {
  case 0x130: return l + 1 < waveSize ? l + 1 : -1;        // wave_shl:1
  case 0x134: return (l + 1) % waveSize;                   // wave_rol:1
  case 0x138: return l >= 1 ? l - 1 : -1;                  // wave_shr:1
  case 0x13C: return (l + waveSize - 1) % waveSize;        // wave_ror:1
  case 0x140: return rowBase + 15 - inRow;                 // row_mirror
  case 0x141: return (l & ~7) + 7 - (l & 7);               // row_half_mirror
  case 0x142: return rowBase >= 16 ? rowBase - 1 : -1;     // row_bcast:15
  case 0x143: return l >= 32 ? 31 : -1;                    // row_bcast:31
  }
  return -2;
}

// V_PERMLANEX16_B32 (RDNA3 ISA, VOP3): a wave's lanes form rows of 16, two
// rows to each group of 32 lanes. Lane i of a row reads the other row of its
// group, at the lane named by the i-th 4-bit select of {S2, S1} (S1 holds
// selects 0-7 from its low bits up, S2 selects 8-15).
uint32_t permlaneX16SourceLane(uint32_t inWave, uint32_t sel1, uint32_t sel2) {
  const uint32_t inRow = inWave & 15u;
  const uint32_t select = ((inRow < 8 ? sel1 : sel2) >> (4 * (inRow & 7u))) & 15u;
  return (inWave & ~31u) + ((inWave & 16u) ^ 16u) + select;
}

namespace {

// The source lane of a DPP control the runtime knows; an unknown control stops the workgroup.
int64_t knownDppSourceLane(uint32_t lane, uint32_t ctrl, uint32_t waveSize) {
  const int64_t from = dppSourceLane(lane, ctrl, waveSize);
  if (from != -2)
    return from;
  currentWorkgroup().fail("unsupported DPP control 0x" + [&] {
    char buf[16];
    snprintf(buf, sizeof buf, "%x", ctrl);
    return std::string(buf);
  }());
}

// Each lane of the wave publishes `value` and meets the others (a wave
// meeting); then it can read what any lane published: `read`, a lane past
// the workgroup giving `missing`.
struct WaveMeeting {
  const uint64_t *slots; // this meeting's set (see exchangeSlots)
  uint32_t lane, waveBase, blockSize;
  uint64_t read(uint64_t workgroupLane, uint64_t missing) const {
    return workgroupLane < blockSize ? slots[workgroupLane] : missing;
  }
};
WaveMeeting meetWave(uint64_t value) {
  FiberWorkgroup &wg = currentWorkgroup();
  const uint32_t lane = wg.currentLane();
  uint64_t *slots = wg.exchangeSlots(lane);
  slots[lane] = value;
  wg.waveSync();
  return {slots, lane, lane & ~(wg.waveSize() - 1), wg.blockSize()};
}

// The pattern of every cross-lane read of one lane: the lane
// `source(lane within the wave)` names: an index within the wave, kNoLane
// for "none" (gives `none`), or a lane past the workgroup (gives `missing`).
constexpr int64_t kNoLane = -1;
template <typename Source>
uint64_t readAcrossWave(uint64_t value, Source &&source, uint64_t none, uint64_t missing) {
  const WaveMeeting m = meetWave(value);
  const int64_t from = source(m.lane - m.waveBase);
  return from == kNoLane ? none : m.read(m.waveBase + uint64_t(from), missing);
}

uint64_t updateDpp(uint64_t old, uint64_t src, uint32_t ctrl, uint32_t rowMask,
                   uint32_t bankMask, uint32_t boundCtrl) {
  const uint32_t waveSize = currentWorkgroup().waveSize();
  // A lane the masks disable keeps `old`; one whose source is out of bounds
  // gets 0 under bound_ctrl, else `old`.
  bool outOfBounds = false;
  uint64_t result = readAcrossWave(
      src,
      [&](uint32_t inWave) -> int64_t {
        bool enabled = ((rowMask >> (inWave / 16)) & 1) && ((bankMask >> ((inWave & 15) / 4)) & 1);
        if (!enabled)
          return kNoLane;
        int64_t from = knownDppSourceLane(inWave, ctrl, waveSize);
        outOfBounds = from < 0;
        return outOfBounds ? kNoLane : from;
      },
      old, boundCtrl ? 0 : old);
  return outOfBounds && boundCtrl ? 0 : result;
}

} // namespace
} // namespace tessel::emu

using tessel::emu::tThread;

extern "C" {
static uint32_t tessel_emu_workitem_id_x() { return tThread.workitem[0]; }
static uint32_t tessel_emu_workitem_id_y() { return tThread.workitem[1]; }
static uint32_t tessel_emu_workitem_id_z() { return tThread.workitem[2]; }
static uint32_t tessel_emu_workgroup_id_x() { return tThread.workgroup[0]; }
static uint32_t tessel_emu_workgroup_id_y() { return tThread.workgroup[1]; }
static uint32_t tessel_emu_workgroup_id_z() { return tThread.workgroup[2]; }
static const void *tessel_emu_dispatch_ptr() { return tThread.packet; }
static void *tessel_emu_lds_base() { return tThread.lds; }
static const void *tessel_emu_implicitarg_ptr() { return tThread.implicitArgs; }
// Without fibers (a wave-form workgroup of one wave) there is no one to wait for.
static void tessel_emu_barrier() {
  if (tThread.fibers)
    tThread.fibers->barrier();
}
static void tessel_emu_wave_barrier() {
  if (tThread.fibers)
    tThread.fibers->waveSync();
}

// llvm.trap (a failed device_assert, after it printed why): the workgroup
// stops here and the launch reports the thread's last stderr message.
[[noreturn]] static void tessel_emu_trap() {
  tessel::emu::ThreadState &t = tThread;
  std::string report = tessel::emu::lastStderrMessage();
  while (!report.empty() && report.back() == '\n')
    report.pop_back();
  if (report.empty())
    report = "executed a trap (llvm.trap)";
  t.trap = std::move(report);
  if (t.fibers)
    t.fibers->fail("trap");
  std::longjmp(*t.abortRun, 1);
}

using tessel::emu::readAcrossWave;

static int32_t tessel_emu_ds_bpermute(int32_t byteAddress, int32_t data) {
  const uint32_t waveSize = tessel::emu::currentWorkgroup().waveSize();
  return int32_t(readAcrossWave(
      uint32_t(data), [&](uint32_t) { return int64_t((uint32_t(byteAddress) >> 2) & (waveSize - 1)); }, 0, 0));
}

// DS_READ_B64_TR_B8 / DS_READ_B64_TR_B16 (CDNA4 ISA, section 11.4, "LDS
// transpose loads"; gfx950): `loaded` is the 8 bytes this lane read at its
// own address, as E = 8 / elemBytes elements. The wave's lanes form groups
// of 16 that do not mix; row j of a group's E x 16 tile is the reads of its
// lanes R * j .. R * j + R - 1 side by side (R = 16 / E), and lane l of the
// group receives column l: its element j is element l % E of the read of
// group lane R * j + l / E. (AMD's rocRoller TransposeLoadsTest expects this
// on gfx950, as do Triton's ds_read_tr layouts; tests/unit/devices checks
// rocjitsu's b16 reference vectors.)
static int64_t tessel_emu_ds_read_tr(int64_t loaded, int32_t elemBytes) {
  const tessel::emu::WaveMeeting m = tessel::emu::meetWave(uint64_t(loaded));
  const uint32_t group = m.lane & ~15u, inGroup = m.lane & 15u;
  const uint32_t elems = 8u / uint32_t(elemBytes), rows = 16u / elems, bits = 8u * uint32_t(elemBytes);
  const uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t result = 0;
  for (uint32_t j = 0; j < elems; ++j) {
    const uint64_t read = m.read(group + rows * j + inGroup / elems, 0); // past the workgroup: 0
    result |= ((read >> (bits * (inGroup % elems))) & mask) << (bits * j);
  }
  return int64_t(result);
}

// V_PERMLANEX16_B32 (permlaneX16SourceLane). Every lane
// is active here (waveSync requires all), so FI (fetch inactive) changes
// nothing; a source lane past the workgroup gives 0 under bound_ctrl, else `old`.
static int32_t tessel_emu_permlanex16(int32_t old, int32_t src, int32_t sel1, int32_t sel2,
                                      int32_t fetchInactive, int32_t boundCtrl) {
  (void)fetchInactive;
  auto source = [&](uint32_t inWave) { return int64_t(tessel::emu::permlaneX16SourceLane(inWave, uint32_t(sel1), uint32_t(sel2))); };
  return int32_t(readAcrossWave(uint32_t(src), source, 0, boundCtrl ? 0 : uint32_t(old)));
}

// V_READFIRSTLANE_B32: the value of the wave's first active lane. Every lane
// of the wave is active here (waveSync requires all of them), so that is the
// wave's lane 0.
static int32_t tessel_emu_readfirstlane(int32_t data) {
  return int32_t(readAcrossWave(uint32_t(data), [](uint32_t) { return int64_t(0); }, 0, 0));
}

// V_CMP into an SGPR pair (llvm.amdgcn.ballot.i64): bit l is lane l's
// value; lanes past the workgroup are 0.
static uint64_t tessel_emu_ballot(int32_t bit) {
  tessel::emu::FiberWorkgroup &wg = tessel::emu::currentWorkgroup();
  const uint32_t lane = wg.currentLane(), waveBase = lane & ~(wg.waveSize() - 1);
  uint64_t *slots = wg.exchangeSlots(lane); // this meeting's set (see exchangeSlots)
  slots[lane] = uint64_t(bit & 1);
  wg.waveSync();
  uint64_t result = 0;
  for (uint32_t l = 0; l < wg.waveSize() && waveBase + l < wg.blockSize(); ++l)
    result |= (slots[waveBase + l] & 1) << l;
  return result;
}

// V_READLANE_B32: the value of lane `lane` of the wave (the lane number
// taken modulo the wave size, as the hardware reads only its low bits).
static int32_t tessel_emu_readlane(int32_t data, int32_t lane) {
  const uint32_t waveSize = tessel::emu::currentWorkgroup().waveSize();
  return int32_t(
      readAcrossWave(uint32_t(data), [&](uint32_t) { return int64_t(uint32_t(lane) & (waveSize - 1)); }, 0, 0));
}

static float tessel_emu_exp2_f32(float x) { return tessel::emu::hardwareExp2(x); }
static float tessel_emu_rsq_f32(float x) { return tessel::emu::hardwareRsq(x); }

static uint32_t tessel_emu_update_dpp_b32(uint32_t old, uint32_t src, uint32_t ctrl,
                                          uint32_t rowMask, uint32_t bankMask, uint32_t bound) {
  return uint32_t(tessel::emu::updateDpp(old, src, ctrl, rowMask, bankMask, bound));
}
static uint64_t tessel_emu_update_dpp_b64(uint64_t old, uint64_t src, uint32_t ctrl,
                                          uint32_t rowMask, uint32_t bankMask, uint32_t bound) {
  return tessel::emu::updateDpp(old, src, ctrl, rowMask, bankMask, bound);
}
}

namespace tessel::emu {

// ---- narrowing float conversions ------------------------------------------
// Host code generation calls these compiler-rt functions for fptrunc to bf16
// and f16 on CPUs without the instruction (x86-64 before AVX512-BF16). The
// emulator supplies them, rounding to nearest even as the AMDGPU code does, so
// a result never depends on which host runs the kernel or on its libgcc.
namespace {
// `x` rounded to a float format with `mantissaBits` explicit bits, minimum
// normal exponent `minExp` and largest finite value `maxFinite`; returns the
// result as a double (exact) or +-inf.
double roundToFormat(double x, int mantissaBits, int minExp, double maxFinite) {
  double a = std::fabs(x);
  if (a == 0)
    return x;
  int e;
  std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1): the leading bit is 2^(e-1)
  double quantum = std::ldexp(1.0, std::max(e - 1, minExp) - mantissaBits);
  double r = std::nearbyint(a / quantum) * quantum; // exact scaling; ties to even
  if (r > maxFinite)
    r = INFINITY;
  return std::copysign(r, x);
}
uint16_t bf16Bits(double x) {
  if (std::isnan(x)) // a quiet NaN with the sign, as the hardware conversion gives
    return std::signbit(x) ? 0xFFC0 : 0x7FC0;
  float f = static_cast<float>(roundToFormat(x, 7, -126, 0x1.FEp127)); // exact
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}
// f32 -> bf16 as the AMDGPU code computes it (targets without a bf16
// conversion instruction): the bits rounded to nearest even, subnormals
// included; a NaN made quiet, keeping its sign and payload's top bits.
uint16_t bf16BitsOfFloat(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if (std::isnan(x))
    return static_cast<uint16_t>((bits | 0x400000u) >> 16);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
_Float16 toHalf(double x) {
  if (std::isnan(x)) { // quiet, with the sign and the payload's top bits (f32's)
    const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(x));
    return std::bit_cast<_Float16>(
        static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7E00u | ((bits & 0x7FFFFFu) >> 13)));
  }
  return static_cast<_Float16>(roundToFormat(x, 10, -14, 65504.0)); // exact
}
// f16 -> f32, exact; a signalling NaN comes back quiet (as v_cvt_f32_f16).
float fromHalf(_Float16 h) {
  const uint16_t bits = std::bit_cast<uint16_t>(h);
  const uint32_t sign = uint32_t(bits & 0x8000u) << 16, exp = (bits >> 10) & 0x1Fu, mant = bits & 0x3FFu;
  if (exp == 0x1F)
    return std::bit_cast<float>(mant ? sign | 0x7FC00000u | (mant << 13) : sign | 0x7F800000u);
  if (exp == 0)
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(std::ldexp(float(mant), -24)));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}
} // namespace

extern "C" __bf16 tessel_emu_truncsfbf2(float x) { return std::bit_cast<__bf16>(bf16BitsOfFloat(x)); }
extern "C" __bf16 tessel_emu_truncdfbf2(double x) { return std::bit_cast<__bf16>(bf16Bits(x)); }
extern "C" _Float16 tessel_emu_truncsfhf2(float x) { return toHalf(x); }
extern "C" _Float16 tessel_emu_truncdfhf2(double x) { return toHalf(x); }
extern "C" float tessel_emu_extendhfsf2(_Float16 x) { return fromHalf(x); }

std::vector<RuntimeSymbol> runtimeSymbols() {
#define TESSEL_EMU_SYMBOL(fn) RuntimeSymbol{#fn, reinterpret_cast<void *>(&fn)}
#define TESSEL_EMU_LIBCALL(name, fn) RuntimeSymbol{name, reinterpret_cast<void *>(&fn)}
  return {
      TESSEL_EMU_LIBCALL("__truncsfbf2", tessel_emu_truncsfbf2),
      TESSEL_EMU_LIBCALL("__truncdfbf2", tessel_emu_truncdfbf2),
      TESSEL_EMU_LIBCALL("__truncsfhf2", tessel_emu_truncsfhf2),
      TESSEL_EMU_LIBCALL("__truncdfhf2", tessel_emu_truncdfhf2),
      TESSEL_EMU_LIBCALL("__extendhfsf2", tessel_emu_extendhfsf2),
      TESSEL_EMU_SYMBOL(tessel_emu_workitem_id_x),  TESSEL_EMU_SYMBOL(tessel_emu_workitem_id_y),
      TESSEL_EMU_SYMBOL(tessel_emu_workitem_id_z),  TESSEL_EMU_SYMBOL(tessel_emu_workgroup_id_x),
      TESSEL_EMU_SYMBOL(tessel_emu_workgroup_id_y), TESSEL_EMU_SYMBOL(tessel_emu_workgroup_id_z),
      TESSEL_EMU_SYMBOL(tessel_emu_dispatch_ptr),   TESSEL_EMU_SYMBOL(tessel_emu_lds_base),
      TESSEL_EMU_SYMBOL(tessel_emu_barrier),        TESSEL_EMU_SYMBOL(tessel_emu_wave_barrier),
      TESSEL_EMU_SYMBOL(tessel_emu_ds_bpermute),    TESSEL_EMU_SYMBOL(tessel_emu_update_dpp_b32),
      TESSEL_EMU_SYMBOL(tessel_emu_ds_read_tr),
      TESSEL_EMU_SYMBOL(tessel_emu_permlanex16),    TESSEL_EMU_SYMBOL(tessel_emu_readlane),
      TESSEL_EMU_SYMBOL(tessel_emu_update_dpp_b64), TESSEL_EMU_SYMBOL(tessel_emu_implicitarg_ptr),
      TESSEL_EMU_SYMBOL(tessel_emu_matrix),         TESSEL_EMU_SYMBOL(tessel_emu_matrix_wave),         TESSEL_EMU_SYMBOL(tessel_emu_check_global),
      TESSEL_EMU_SYMBOL(tessel_emu_check_lds),      TESSEL_EMU_SYMBOL(tessel_emu_check_lanes),      TESSEL_EMU_SYMBOL(tessel_emu_exp2_f32),
      TESSEL_EMU_SYMBOL(tessel_emu_rsq_f32),        TESSEL_EMU_SYMBOL(tessel_emu_readfirstlane),
      TESSEL_EMU_SYMBOL(tessel_emu_cvt_pk_fp8_f32), TESSEL_EMU_SYMBOL(tessel_emu_cvt_f32_fp8),
      TESSEL_EMU_SYMBOL(tessel_emu_trap),
      TESSEL_EMU_SYMBOL(tessel_emu_ballot),
  };
#undef TESSEL_EMU_LIBCALL
#undef TESSEL_EMU_SYMBOL
}

// ---- ROCm device library functions, mapped to the host's libm --------------

namespace {
template <class T> T rsqrtOf(T x) { return T(1) / std::sqrt(x); }
template <class T> T recipOf(T x) { return T(1) / x; }
template <class T> T exp10Of(T x) { return std::pow(T(10), x); }

struct OcmlFunction {
  const char *name;
  void *address;
};

#define OCML_UNARY(fn, expr)                                                                     \
  OcmlFunction{"__ocml_" #fn "_f32", reinterpret_cast<void *>(+[](float x) -> float { return expr; })}, \
  OcmlFunction{"__ocml_" #fn "_f64", reinterpret_cast<void *>(+[](double x) -> double { return expr; })}
#define OCML_BINARY(fn, expr)                                                                    \
  OcmlFunction{"__ocml_" #fn "_f32",                                                             \
               reinterpret_cast<void *>(+[](float x, float y) -> float { return expr; })},       \
  OcmlFunction{"__ocml_" #fn "_f64",                                                             \
               reinterpret_cast<void *>(+[](double x, double y) -> double { return expr; })}

const OcmlFunction kOcmlFunctions[] = {
    OCML_UNARY(sin, std::sin(x)),       OCML_UNARY(cos, std::cos(x)),
    OCML_UNARY(tan, std::tan(x)),       OCML_UNARY(asin, std::asin(x)),
    OCML_UNARY(acos, std::acos(x)),     OCML_UNARY(atan, std::atan(x)),
    OCML_UNARY(sinh, std::sinh(x)),     OCML_UNARY(cosh, std::cosh(x)),
    OCML_UNARY(tanh, std::tanh(x)),     OCML_UNARY(asinh, std::asinh(x)),
    OCML_UNARY(acosh, std::acosh(x)),   OCML_UNARY(atanh, std::atanh(x)),
    OCML_UNARY(exp, std::exp(x)),       OCML_UNARY(exp2, std::exp2(x)),
    OCML_UNARY(exp10, exp10Of(x)),      OCML_UNARY(expm1, std::expm1(x)),
    OCML_UNARY(log, std::log(x)),       OCML_UNARY(log2, std::log2(x)),
    OCML_UNARY(log10, std::log10(x)),   OCML_UNARY(log1p, std::log1p(x)),
    OCML_UNARY(sqrt, std::sqrt(x)),     OCML_UNARY(rsqrt, rsqrtOf(x)),
    OCML_UNARY(cbrt, std::cbrt(x)),     OCML_UNARY(fabs, std::fabs(x)),
    OCML_UNARY(floor, std::floor(x)),   OCML_UNARY(ceil, std::ceil(x)),
    OCML_UNARY(trunc, std::trunc(x)),   OCML_UNARY(round, std::round(x)),
    OCML_UNARY(rint, std::rint(x)),     OCML_UNARY(erf, std::erf(x)),
    OCML_UNARY(erfc, std::erfc(x)),     OCML_UNARY(tgamma, std::tgamma(x)),
    OCML_UNARY(lgamma, std::lgamma(x)), OCML_UNARY(native_recip, recipOf(x)),
    OCML_UNARY(native_sin, std::sin(x)), OCML_UNARY(native_cos, std::cos(x)),
    OCML_UNARY(native_exp, std::exp(x)), OCML_UNARY(native_exp2, std::exp2(x)),
    OCML_UNARY(native_log, std::log(x)), OCML_UNARY(native_log2, std::log2(x)),
    OCML_UNARY(native_sqrt, std::sqrt(x)), OCML_UNARY(native_rsqrt, rsqrtOf(x)),
    OCML_BINARY(pow, std::pow(x, y)),   OCML_BINARY(atan2, std::atan2(x, y)),
    OCML_BINARY(fmod, std::fmod(x, y)), OCML_BINARY(fmin, std::fmin(x, y)),
    OCML_BINARY(fmax, std::fmax(x, y)), OCML_BINARY(hypot, std::hypot(x, y)),
    OCML_BINARY(copysign, std::copysign(x, y)), OCML_BINARY(fdim, std::fdim(x, y)),
    OCML_BINARY(remainder, std::remainder(x, y)),
    OcmlFunction{"__ocml_fma_f32", reinterpret_cast<void *>(
                                       +[](float a, float b, float c) { return std::fma(a, b, c); })},
    OcmlFunction{"__ocml_fma_f64", reinterpret_cast<void *>(+[](double a, double b, double c) {
                   return std::fma(a, b, c);
                 })},
};
#undef OCML_UNARY
#undef OCML_BINARY

// __ockl work-item queries (size_t f(uint dim)), from the dispatch packet.
uint64_t gridDim(uint32_t dim) {
  const DispatchPacket &p = *tThread.packet;
  return dim == 0 ? p.gridSizeX : dim == 1 ? p.gridSizeY : dim == 2 ? p.gridSizeZ : 1;
}
uint64_t localSize(uint32_t dim) {
  const DispatchPacket &p = *tThread.packet;
  return dim == 0 ? p.workgroupSizeX : dim == 1 ? p.workgroupSizeY : dim == 2 ? p.workgroupSizeZ : 1;
}
uint64_t groupId(uint32_t dim) { return dim < 3 ? tThread.workgroup[dim] : 0; }
uint64_t localId(uint32_t dim) { return dim < 3 ? tThread.workitem[dim] : 0; }

const OcmlFunction kOcklFunctions[] = {
    {"__ockl_get_local_size", reinterpret_cast<void *>(+[](uint32_t d) { return localSize(d); })},
    {"__ockl_get_local_id", reinterpret_cast<void *>(+[](uint32_t d) { return localId(d); })},
    {"__ockl_get_group_id", reinterpret_cast<void *>(+[](uint32_t d) { return groupId(d); })},
    {"__ockl_get_global_size", reinterpret_cast<void *>(+[](uint32_t d) { return gridDim(d); })},
    {"__ockl_get_num_groups", reinterpret_cast<void *>(+[](uint32_t d) {
       return (gridDim(d) + localSize(d) - 1) / localSize(d);
     })},
    {"__ockl_get_global_id", reinterpret_cast<void *>(+[](uint32_t d) {
       return groupId(d) * localSize(d) + localId(d);
     })},
    // printf (device_print, device_assert): emulator_printf.cpp.
    {"__ockl_printf_begin", reinterpret_cast<void *>(&tessel_emu_printf_begin)},
    {"__ockl_fprintf_stdout_begin", reinterpret_cast<void *>(&tessel_emu_fprintf_stdout_begin)},
    {"__ockl_fprintf_stderr_begin", reinterpret_cast<void *>(&tessel_emu_fprintf_stderr_begin)},
    {"__ockl_printf_append_string_n", reinterpret_cast<void *>(&tessel_emu_printf_append_string_n)},
    {"__ockl_fprintf_append_string_n", reinterpret_cast<void *>(&tessel_emu_printf_append_string_n)},
    {"__ockl_printf_append_args", reinterpret_cast<void *>(&tessel_emu_printf_append_args)},
    {"__ockl_fprintf_append_args", reinterpret_cast<void *>(&tessel_emu_printf_append_args)},
};
} // namespace

void *findDeviceLibraryFunction(std::string_view name) {
  for (const OcmlFunction &f : kOcmlFunctions)
    if (name == f.name)
      return f.address;
  for (const OcmlFunction &f : kOcklFunctions)
    if (name == f.name)
      return f.address;
  return nullptr;
}

} // namespace tessel::emu
