// The emulator's runtime: what the retargeted kernel module calls instead of
// the AMDGPU intrinsics (work-item ids, the dispatch packet, barriers,
// cross-lane ops, LDS), and the fibers that run a workgroup's threads.
// Internal to tessel_devices.
#pragma once

#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <ucontext.h>
#include <vector>

namespace tessel::emu {

// hsa_kernel_dispatch_packet_t, the layout llvm.amdgcn.dispatch.ptr points to.
struct DispatchPacket {
  uint16_t header = 0;
  uint16_t setup = 0; // dimensions
  uint16_t workgroupSizeX = 1, workgroupSizeY = 1, workgroupSizeZ = 1;
  uint16_t reserved0 = 0;
  uint32_t gridSizeX = 1, gridSizeY = 1, gridSizeZ = 1; // in work-items
  uint32_t privateSegmentSize = 0;
  uint32_t groupSegmentSize = 0;
  uint64_t kernelObject = 0;
  const void *kernargAddress = nullptr;
  uint64_t reserved2 = 0;
  uint64_t completionSignal = 0;
};
static_assert(sizeof(DispatchPacket) == 64);
static_assert(offsetof(DispatchPacket, workgroupSizeX) == 4);
static_assert(offsetof(DispatchPacket, gridSizeX) == 12);
static_assert(offsetof(DispatchPacket, kernargAddress) == 40);

// Code object v5 implicit kernel arguments (llvm.amdgcn.implicitarg.ptr):
// the fields that hold the launch's shape.
struct ImplicitArgs {
  uint32_t blockCount[3] = {1, 1, 1}; // workgroups per dimension
  uint16_t groupSize[3] = {1, 1, 1};  // work-items per workgroup
  uint16_t remainder[3] = {0, 0, 0};  // size of the partial last workgroup
  uint8_t reserved[40] = {};
  uint16_t gridDims = 1;
  uint8_t rest[190] = {};
};
static_assert(offsetof(ImplicitArgs, groupSize) == 12);
static_assert(offsetof(ImplicitArgs, gridDims) == 64);
static_assert(sizeof(ImplicitArgs) == 256);

// The JIT'd entry: reads the parameters from the kernarg buffer, runs one thread.
using EntryFn = void (*)(const void *kernarg);

// A workgroup whose threads run as fibers that switch at barriers and
// cross-lane ops (used when the kernel has any).
class FiberWorkgroup {
public:
  // A fiber per thread; or, for kernels in wave form (emulator_wave.hpp),
  // a fiber per wave: `threadsPerFiber` = the wave size, `waveSize` 1, and
  // the work-item x a fiber sees is its wave's first thread.
  FiberWorkgroup(uint32_t blockSize, uint32_t waveSize, size_t stackBytes, uint32_t threadsPerFiber = 1);
  ~FiberWorkgroup();
  FiberWorkgroup(const FiberWorkgroup &) = delete;
  FiberWorkgroup &operator=(const FiberWorkgroup &) = delete;

  // Runs every thread to completion. Returns an empty string, or why the
  // workgroup could not finish (a barrier only part of it reached, ...).
  std::string run(EntryFn entry, const void *kernarg);

  // Called by the runtime functions on the current fiber.
  void barrier();
  void waveSync();
  uint32_t currentLane() const { return current_; }
  // Workgroup barriers every thread has passed; syncs the wave of `lane` has
  // passed (barriers included): what orders LDS accesses between threads.
  uint32_t barriersPassed() const { return barriers_; }
  uint32_t waveSyncsPassed(uint32_t lane) const { return waveSyncs_[waveOf(lane)]; }
  uint32_t waveSize() const { return waveSize_; }
  // The wave of `lane` (wave sizes are powers of two: a shift, not a division).
  uint32_t waveOf(uint32_t lane) const { return lane >> waveShift_; }
  uint32_t blockSize() const { return static_cast<uint32_t>(fibers_.size()); }
  // The exchange slots (one per thread of the workgroup) of the meeting
  // `lane`'s wave goes to next. Two sets alternate with the wave's meetings:
  // a lane writes its slot, meets, reads another lane's slot; a lane that
  // runs on to the next cross-lane op writes the other set, and the wave
  // cannot meet again (and reuse this set) before every lane has read. So a
  // cross-lane op costs one meeting.
  uint64_t *exchangeSlots(uint32_t lane) {
    return exchange_.data() + size_t(waveSyncs_[waveOf(lane)] & 1u) * fibers_.size();
  }
  // Counts `lane`'s arrival at a wave-wide step (a matrix instruction):
  // true for the last of the wave's lanes to arrive, which then does the
  // step for the whole wave before the meeting that follows.
  bool lastToArrive(uint32_t lane) {
    const uint32_t wave = waveOf(lane), base = wave * waveSize_;
    if (++arrivals_[wave] < std::min(waveSize_, blockSize() - base))
      return false;
    arrivals_[wave] = 0;
    completed_[wave] = waveSyncs_[wave] + 1;
    return true;
  }
  // After the meeting that followed `lane`'s arrival at a wave-wide step,
  // with `meeting` = waveSyncsPassed(lane) read before it: whether the wave's
  // last lane did the step (else part of the wave met elsewhere).
  bool stepCompleted(uint32_t lane, uint32_t meeting) const { return completed_[waveOf(lane)] == meeting + 1; }
  [[noreturn]] void fail(std::string why);
  // Whether `address` is in the guard page below a fiber's stack (a stack
  // that overflowed faults there instead of writing its neighbour's).
  bool inGuardPage(uintptr_t address) const;

private:
  enum class State : uint8_t { Ready, AtBarrier, AtWaveSync, Done };
  // A suspended fiber is its saved stack pointer (x86-64: the callee-saved
  // registers are on its stack); elsewhere a ucontext.
  struct Context {
#if defined(__x86_64__)
    void *sp = nullptr;
#else
    ucontext_t uc;
#endif
  };
  struct Fiber {
    Context context;
    State state = State::Ready;
  };
  static void fiberMain();
  void suspend(); // back to the scheduler
  void start(Fiber &f, char *stack);
  static void switchTo(Context &save, Context &load);

  std::vector<Fiber> fibers_;
  std::vector<uint64_t> exchange_; // two slots per lane for cross-lane ops
  uint32_t barriers_ = 0;
  std::vector<uint32_t> waveSyncs_; // per wave
  std::vector<uint32_t> arrivals_;  // per wave: lanes at a wave-wide step
  std::vector<uint32_t> completed_; // per wave: 1 + the meeting its last step was done at
  std::vector<uint32_t> waiting_;   // per wave: lanes waiting at its meeting
  uint32_t atBarrier_ = 0, done_ = 0; // threads at the barrier, finished
  char *stacks_ = nullptr; // per fiber: a guard page, then its stack
  static constexpr size_t kStackColorBytes = 4096; // room to start each stack at its own offset
  size_t stackBytes_, guardBytes_, slotBytes_;
  uint32_t waveSize_, waveShift_, threadsPerFiber_;
  uint32_t current_ = 0;
  Context scheduler_;
  EntryFn entry_ = nullptr;
  const void *kernarg_ = nullptr;
  std::string error_;
};

struct LaunchSanitizer;
class LdsShadow;

// A buffer's bytes [begin, end).
struct BufferRange {
  uintptr_t begin = 0, end = 0;
};

// What the runtime functions read: the work-item running on this host thread.
struct ThreadState {
  uint32_t workitem[3] = {0, 0, 0};
  uint32_t workgroup[3] = {0, 0, 0};
  uint64_t workgroupIndex = 0; // linear, x fastest: the order workgroups start in
  const DispatchPacket *packet = nullptr;
  const ImplicitArgs *implicitArgs = nullptr;
  uint8_t *lds = nullptr;
  FiberWorkgroup *fibers = nullptr; // null when threads run one after another
  // The sanitizer (emulator_sanitizer.hpp): null when the launch checks nothing.
  LaunchSanitizer *sanitizer = nullptr;
  LdsShadow *shadow = nullptr; // null when LDS is not tracked
  std::jmp_buf *abortRun = nullptr; // where a thread run without fibers stops
  BufferRange recentBuffers[4];      // the buffers this host thread's checks hit last
  uint32_t nextRecent = 0;
  // Set by a trap (llvm.trap: a failed device_assert) before it stops the
  // workgroup: what the launch reports. Cleared when a workgroup starts.
  std::string trap;
};
ThreadState &currentThread();

// The workgroup of the fiber running on this host thread.
FiberWorkgroup &currentWorkgroup();

// llvm.amdgcn.exp2.f32, as V_EXP_F32 computes it (no denormal results).
float hardwareExp2(float x);
// llvm.amdgcn.rsq.f32, as V_RSQ_F32 computes it (denormal inputs count as 0).
float hardwareRsq(float x);

// The 8-bit float encodings of the conversion instructions
// (emulator_fp8.cpp): FP8 (E4M3) and BF8 (E5M2) as gfx942 (FNUZ) and gfx950
// (OCP) define them. The retargeting passes one to the runtime functions.
enum class Fp8Encoding : uint32_t { E4M3Fnuz, E5M2Fnuz, E4M3Ocp, E5M2Ocp };
// f32 -> 8 bits as V_CVT_PK_FP8_F32 / V_CVT_PK_BF8_F32 do it (no clamp).
uint8_t convertToFp8(float x, Fp8Encoding encoding);
// 8 bits -> f32 as V_CVT_F32_FP8 / V_CVT_F32_BF8 do it (exact).
float convertFromFp8(uint8_t bits, Fp8Encoding encoding);

// Matrix-core instructions (emulator_matrix.cpp): the id of the MFMA or WMMA
// intrinsic `name` (WMMA's with its type suffixes), or -1 when the emulator
// has no semantics for it; and the wave size it needs.
int matrixInstructionId(std::string_view name);
unsigned matrixWaveSize(int id);
// Whether instruction `id` takes its operands' formats as operands (gfx950's
// f8f6f4 MFMAs: cbsz and blgp, in tessel_emu_matrix's flags).
bool matrixFormatOperands(int id);

// Runtime functions the retargeted module may call, by name.
struct RuntimeSymbol {
  const char *name;
  void *address;
};
std::vector<RuntimeSymbol> runtimeSymbols();

// Device printf (emulator_printf.cpp): the last message this host thread
// printed to stderr (a failed device_assert's, just before its trap), and
// forgetting it (a workgroup starts).
std::string lastStderrMessage();
void forgetStderrMessage();

// Host implementation of a ROCm device library function (`__ocml_sin_f32`,
// `__ockl_get_local_size`), or nullptr when the emulator has none.
void *findDeviceLibraryFunction(std::string_view name);

} // namespace tessel::emu

// llvm.amdgcn.cvt.pk.{fp8,bf8}.f32 and llvm.amdgcn.cvt.f32.{fp8,bf8} with
// the target's encoding (an Fp8Encoding) as a last argument (emulator_fp8.cpp).
extern "C" uint32_t tessel_emu_cvt_pk_fp8_f32(float a, float b, uint32_t old, uint32_t wordSel, uint32_t encoding);
extern "C" float tessel_emu_cvt_f32_fp8(uint32_t src, uint32_t byteSel, uint32_t encoding);

// The ROCm device library's printf functions (emulator_printf.cpp).
extern "C" {
uint64_t tessel_emu_printf_begin(uint64_t version);
uint64_t tessel_emu_fprintf_stdout_begin();
uint64_t tessel_emu_fprintf_stderr_begin();
uint64_t tessel_emu_printf_append_string_n(uint64_t desc, const char *text, uint64_t length, uint32_t last);
uint64_t tessel_emu_printf_append_args(uint64_t desc, uint32_t count, uint64_t a0, uint64_t a1, uint64_t a2,
                                       uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint32_t last);
}

// D = A * B + C for one matrix instruction `id` of the calling lane's wave
// (emulator_matrix.cpp); a, b, c and d point at the lane's registers,
// scaleA and scaleB are its scale registers (f8f6f4 with scales, flags bit 9).
extern "C" void tessel_emu_matrix(int32_t id, uint32_t flags, const void *a, const void *b, const void *c, void *d,
                                  uint32_t scaleA, uint32_t scaleB);
// The same for a wave in wave form: lane l's registers at a + l * aBytes, ...,
// its scale registers at scaleA[l] and scaleB[l] (null without scales).
extern "C" void tessel_emu_matrix_wave(int32_t id, uint32_t flags, const void *a, const void *b, const void *c,
                                       void *d, uint32_t aBytes, uint32_t bBytes, uint32_t cBytes, uint32_t dBytes,
                                       uint32_t wave, const uint32_t *scaleA, const uint32_t *scaleB);
