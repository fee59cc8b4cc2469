// EmulatorDevice: runs the AMDGPU kernel module on the host. The module is
// retargeted (emulator_retarget.cpp), optimized at O2 and JIT-compiled with
// ORC; workgroups run in parallel on a pool of host threads, the threads of
// a workgroup one after another, or as fibers when the kernel synchronizes.
#include "devices_internal.hpp"
#include "emulator_faults.hpp"
#include "emulator_retarget.hpp"
#include "emulator_runtime.hpp"
#include "emulator_sanitizer.hpp"
#include "emulator_wave.hpp"

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/target.hpp"

#include <llvm/ExecutionEngine/Orc/AbsoluteSymbols.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <signal.h>
#include <unistd.h>
#include <thread>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace tessel {
namespace {

using emu::DispatchPacket;
using emu::EntryFn;

constexpr size_t kMemoryAlignment = 256;
constexpr size_t kFiberStackBytes = 256 * 1024;
constexpr size_t kWaveFiberStackBytes = 4 * 1024 * 1024; // a wave's vectors spill W times a lane's

std::string llvmErrorText(llvm::Error error) { return llvm::toString(std::move(error)); }

// Runs `count` indices over the host threads; the calling thread helps.
class WorkerPool {
public:
  using Work = void (*)(void *context, uint64_t index, unsigned slot);

  explicit WorkerPool(unsigned threads) {
    for (unsigned slot = 0; slot + 1 < threads; ++slot)
      workers_.emplace_back([this, slot] { workerLoop(slot); });
  }
  ~WorkerPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread &t : workers_)
      t.join();
  }
  unsigned slots() const { return unsigned(workers_.size()) + 1; }

  void run(uint64_t count, Work work, void *context) {
    if (count <= 1 || workers_.empty()) { // waking workers costs more than it saves
      for (uint64_t i = 0; i < count; ++i)
        work(context, i, callerSlot());
      return;
    }
    {
      std::lock_guard lock(mutex_);
      work_ = work;
      context_ = context;
      count_ = count;
      next_.store(0);
      pending_ = unsigned(workers_.size());
      ++generation_;
    }
    wake_.notify_all();
    drain(callerSlot());
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return pending_ == 0; });
  }

private:
  unsigned callerSlot() const { return unsigned(workers_.size()); }
  void drain(unsigned slot) {
    for (uint64_t i; (i = next_.fetch_add(1)) < count_;)
      work_(context_, i, slot);
  }
  void workerLoop(unsigned slot) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_)
          return;
        seen = generation_;
      }
      drain(slot);
      std::lock_guard lock(mutex_);
      if (--pending_ == 0)
        finished_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  Work work_ = nullptr;
  void *context_ = nullptr;
  uint64_t count_ = 0;
  std::atomic<uint64_t> next_{0};
  unsigned pending_ = 0;
};

class EmulatorDevice;

// One compiled form of a kernel: a thread per entry call (fibers), or a
// wave per call (emulator_wave.hpp).
struct KernelForm {
  EntryFn entry = nullptr;
  uint32_t ldsBytes = 0;
  uint32_t kernargBytes = 0;
  bool needsFibers = false;
  std::vector<emu::AccessSite> sites; // of the sanitizer's checks
  llvm::orc::JITDylib *dylib = nullptr;
};

// A duration from the environment variable `name`, given in units of `unit`
// seconds; `fallback` seconds when it is unset or not a number >= 0.
double secondsFromEnvironment(const char *name, double unit, double fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  const double d = std::strtod(v, &end);
  return *end || !(d >= 0) ? fallback : d * unit;
}

// Launch time a kernel spends as fibers before it is compiled in wave form
// (TESSEL_EMULATOR_WAVE_AFTER_MS, default 100, read when the kernel is
// loaded): the wave form runs row kernels 5-9x faster but takes several
// times longer to compile (100-250 ms for softmax or layer norm, against
// 15-40 ms as fibers), which small launches (most tests) never earn back.
// A kernel launched again after launches that took a fifth of that each
// (20 ms) moves at once: at a 4x speed-up its compile is repaid within a few
// launches, and waiting for the total would spend the launches that repay it.
double waveAfterSeconds() { return secondsFromEnvironment("TESSEL_EMULATOR_WAVE_AFTER_MS", 0.001, 0.1); }
constexpr double kWaveAfterLaunchShare = 0.2;

// Which form a launch runs (TESSEL_EMULATOR_PATH, read at every launch):
// waves where the kernel allows (the default), always fibers, or waves or
// an error naming why not.
enum class LanePath { Auto, Fibers, Waves };
LanePath lanePathFromEnvironment() {
  const char *v = std::getenv("TESSEL_EMULATOR_PATH");
  if (!v || !*v || std::strcmp(v, "auto") == 0)
    return LanePath::Auto;
  if (std::strcmp(v, "fibers") == 0)
    return LanePath::Fibers;
  if (std::strcmp(v, "waves") == 0)
    return LanePath::Waves;
  throw Error(std::string("TESSEL_EMULATOR_PATH is '") + v + "'; it takes auto, fibers or waves");
}

class EmulatorKernel final : public LoadedKernel {
public:
  explicit EmulatorKernel(EmulatorDevice &device) : device_(device) {}
  ~EmulatorKernel() override;

  std::string name;
  std::string module; // the kernel module, to compile a form when first needed
  std::string arch;
  KernargLayout kernargs;
  uint32_t declaredLdsBytes = 0;
  emu::SanitizeMode sanitize = emu::SanitizeMode::Off;
  KernelForm lanes, waves;
  bool lanesBuilt = false, wavesTried = false;
  std::string wavesUnsupported; // why the wave form does not cover the kernel
  double fiberSeconds = 0;      // launch time spent in the fiber form so far
  uint64_t fiberLaunches = 0;   // ... in this many launches
  double waveAfterSeconds = 0;  // ... before the wave form is compiled (waveAfterSeconds())
  EmulatorDevice &device_;
};

// Per host thread: the workgroup's LDS and, for kernels that need them, fibers.
struct FreeDeleter {
  void operator()(uint8_t *p) const { std::free(p); }
};
struct WorkerScratch {
  std::unique_ptr<uint8_t, FreeDeleter> lds;
  size_t ldsCapacity = 0;
  std::unique_ptr<emu::FiberWorkgroup> fibers;
  std::unique_ptr<emu::FiberWorkgroup> waveFibers; // a fiber per wave
  emu::LdsShadow shadow;
};

struct LaunchJob {
  const EmulatorKernel *kernel;
  const KernelForm *form;
  uint32_t waveSize = 0; // the form runs waves of this many lanes; 0: threads
  const DispatchPacket *packet;
  const emu::ImplicitArgs *implicitArgs;
  const void *kernarg;
  Dim3 grid;
  uint32_t blockSize;
  std::vector<WorkerScratch> *scratch;
  emu::LaunchSanitizer *sanitizer = nullptr; // null: nothing checked
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::string error;
  // A trap's report (a failed device_assert) from the first workgroup, in
  // launch order, that trapped.
  std::string trap;
  // Its workgroup's linear index: workgroups start in index order and a trap
  // stops only later ones from starting, so the first one is reported.
  std::atomic<uint64_t> trapAfter{UINT64_MAX};
  // For the estimate of a long launch (see estimateOnce).
  uint64_t workgroups = 0;
  std::chrono::steady_clock::time_point start;
  std::atomic<uint64_t> finished{0};
  std::atomic<bool> estimated{false};

  bool stoppedBySanitizer() {
    std::lock_guard lock(sanitizer->mutex);
    return !sanitizer->report.empty();
  }
};

// ---- long launches --------------------------------------------------------------
// The emulator runs a GPU's work on a few host cores: a grid sized for a GPU
// can take hours. Once 1% of the workgroups (at least one) have finished,
// the launch's total time is estimated; above TESSEL_EMULATOR_WARN_SECONDS
// (default 60) it says so, once per launch, with the estimate.

double warnAfterSeconds() {
  static const double seconds = secondsFromEnvironment("TESSEL_EMULATOR_WARN_SECONDS", 1, 60);
  return seconds;
}

std::string duration(double seconds) {
  char buf[64];
  if (seconds < 120)
    std::snprintf(buf, sizeof buf, "%.0f seconds", seconds);
  else if (seconds < 7200)
    std::snprintf(buf, sizeof buf, "%.0f minutes", seconds / 60);
  else
    std::snprintf(buf, sizeof buf, "%.1f hours", seconds / 3600);
  return buf;
}

void estimateOnce(LaunchJob &job) {
  const uint64_t done = job.finished.fetch_add(1) + 1;
  if (done < std::max<uint64_t>(1, job.workgroups / 100) || job.estimated.exchange(true))
    return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - job.start).count();
  const double total = elapsed / double(done) * double(job.workgroups);
  if (total <= warnAfterSeconds())
    return;
  std::fprintf(stderr,
               "tessel: warning: kernel '%s' will take about %s on the emulator (%llu workgroups of %u threads, "
               "%llu done in %.2f s); the emulator runs GPU work on the host's cores. A smaller grid is faster; "
               "Ctrl-C ends the program\n",
               job.kernel->name.c_str(), duration(total).c_str(), static_cast<unsigned long long>(job.workgroups),
               job.blockSize, static_cast<unsigned long long>(done), elapsed);
}

// The GPU keeps f32/f64 subnormals (the kernel descriptor's FP_DENORM mode)
// and rounds to nearest even: while a workgroup runs, the host thread's float
// environment says the same, whatever the caller set (a -ffast-math program
// flushes subnormals).
class GpuFloatEnvironment {
public:
#if defined(__x86_64__)
  GpuFloatEnvironment() : saved_(_mm_getcsr()) {
    // Round to nearest (RC = 00), no flush to zero (FTZ, bit 15), no
    // denormals-are-zero (DAZ, bit 6); exceptions stay masked.
    _mm_setcsr((saved_ & ~(0x6000u | 0x8000u | 0x0040u)) | 0x1F80u);
  }
  ~GpuFloatEnvironment() { _mm_setcsr(saved_); }

private:
  unsigned saved_;
#endif
};

void runWorkgroup(void *context, uint64_t index, unsigned slot) {
  LaunchJob &job = *static_cast<LaunchJob *>(context);
  if (job.failed.load(std::memory_order_relaxed) || index > job.trapAfter.load(std::memory_order_relaxed) ||
      (job.sanitizer && index > job.sanitizer->stopAfter.load(std::memory_order_relaxed)))
    return;
  GpuFloatEnvironment floatEnvironment;
  WorkerScratch &scratch = (*job.scratch)[slot];
  emu::ThreadState &thread = emu::currentThread();
  thread.workgroup[0] = uint32_t(index % job.grid.x);
  thread.workgroup[1] = uint32_t(index / job.grid.x % job.grid.y);
  thread.workgroup[2] = uint32_t(index / (uint64_t(job.grid.x) * job.grid.y));
  thread.workgroupIndex = index;
  thread.workitem[0] = thread.workitem[1] = thread.workitem[2] = 0;
  thread.packet = job.packet;
  thread.implicitArgs = job.implicitArgs;
  thread.lds = scratch.lds.get();
  // Every workgroup starts with undefined LDS: poison it, so a read before
  // the matching write cannot pass on what the previous workgroup left.
  const KernelForm &form = *job.form;
  if (form.ldsBytes)
    std::memset(scratch.lds.get(), 0xAB, form.ldsBytes);
  if (thread.sanitizer != job.sanitizer) { // a new launch: forget the last one's buffers
    for (emu::BufferRange &r : thread.recentBuffers)
      r = {};
    thread.sanitizer = job.sanitizer;
  }
  thread.shadow = nullptr;
  if (job.sanitizer && form.ldsBytes) {
    scratch.shadow.reset(form.ldsBytes, job.sanitizer->mode);
    thread.shadow = &scratch.shadow;
  }
  thread.trap.clear();
  emu::forgetStderrMessage();
  // A trap stops the workgroup and, after the ones running now, the launch.
  auto recordTrap = [&] {
    std::lock_guard lock(job.errorMutex);
    if (index < job.trapAfter.load()) {
      job.trap = thread.trap;
      job.trapAfter.store(index);
    }
  };
  const EntryFn entry = form.entry;
  emu::RunningKernel running(job.kernel->name.c_str());
  // Without fibers: thread after thread, or (wave form) wave after wave,
  // each entry call starting at its first thread.
  const uint32_t step = job.waveSize ? job.waveSize : 1;
  if (!form.needsFibers || job.blockSize == job.waveSize) {
    // The sanitizer stops a thread that makes a bad access by jumping back here.
    std::jmp_buf abortRun;
    thread.abortRun = &abortRun;
    for (uint32_t t = 0; t < job.blockSize; t += step) {
      thread.workitem[0] = t;
      if (setjmp(abortRun))
        break;
      entry(job.kernarg);
    }
    thread.abortRun = nullptr;
    if (!thread.trap.empty())
      recordTrap();
    estimateOnce(job);
    return;
  }
  emu::FiberWorkgroup &fibers = job.waveSize ? *scratch.waveFibers : *scratch.fibers;
  std::string why = fibers.run(entry, job.kernarg);
  estimateOnce(job);
  if (!thread.trap.empty()) {
    recordTrap();
    return;
  }
  if (why.empty() || (job.sanitizer && job.stoppedBySanitizer()))
    return;
  std::lock_guard lock(job.errorMutex);
  if (!job.failed.exchange(true))
    job.error = "workgroup (" + std::to_string(thread.workgroup[0]) + "," +
                std::to_string(thread.workgroup[1]) + "," + std::to_string(thread.workgroup[2]) +
                "): " + why;
}

class EmulatorDevice final : public DeviceImpl {
public:
  explicit EmulatorDevice(const TargetFacts &target)
      : target_(target), pool_(std::max(1u, std::thread::hardware_concurrency())) {
    emu::installMemoryFaultReport(kFiberStackBytes);
    static std::once_flag initialized;
    std::call_once(initialized, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
    });
    auto machineBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!machineBuilder)
      throw Error("emulator: cannot describe the host: " + llvmErrorText(machineBuilder.takeError()));
    machineBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    // Results must not depend on the host CPU: instructions whose numerics
    // differ from the AMDGPU code's stay unused (AVX512-BF16's conversion
    // treats subnormal inputs as zero; native f16 arithmetic would round an
    // f16 fma once where the promoted form rounds twice). Their operations
    // go through the emulator's runtime functions or promoted f32 code.
    for (const char *feature : {"-avx512bf16", "-avxneconvert", "-amx-bf16", "-avx512fp16", "-avx10.1",
                                "-avx10.1-512", "-avx10.2", "-avx10.2-512"})
      machineBuilder->getFeatures().AddFeature(feature);
    auto machine = machineBuilder->createTargetMachine();
    if (!machine)
      throw Error("emulator: no host code generator: " + llvmErrorText(machine.takeError()));
    machine_ = std::move(*machine);
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*machineBuilder).create();
    if (!jit)
      throw Error("emulator: cannot create the JIT: " + llvmErrorText(jit.takeError()));
    jit_ = std::move(*jit);
    runtime_ = &jit_->getExecutionSession().createBareJITDylib("tessel_emu_runtime");
    llvm::orc::SymbolMap symbols;
    for (const emu::RuntimeSymbol &s : emu::runtimeSymbols())
      symbols[jit_->mangleAndIntern(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                                                llvm::JITSymbolFlags::Exported |
                                                    llvm::JITSymbolFlags::Callable};
    if (auto err = runtime_->define(llvm::orc::absoluteSymbols(std::move(symbols))))
      throw Error("emulator: " + llvmErrorText(std::move(err)));
    scratch_.resize(pool_.slots());
  }

  std::string name() const override { return std::string("emulator (") + target_.arch + ")"; }
  std::string arch() const override { return target_.arch; }
  bool isEmulator() const override { return true; }

  void *allocate(size_t bytes) override {
    if (bytes > std::numeric_limits<size_t>::max() - kMemoryAlignment)
      throw Error("emulator: cannot allocate " + std::to_string(bytes) + " bytes (too large)");
    size_t rounded = (std::max<size_t>(bytes, 1) + kMemoryAlignment - 1) / kMemoryAlignment * kMemoryAlignment;
    void *p = std::aligned_alloc(kMemoryAlignment, rounded);
    if (!p)
      throw Error("emulator: out of host memory allocating " + std::to_string(bytes) + " bytes");
    emu::registerAllocation(p, bytes);
    return p;
  }
  void release(void *devicePtr) override {
    emu::unregisterAllocation(devicePtr);
    std::free(devicePtr);
  }
  void copyToDevice(void *dst, const void *src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copyToHost(void *dst, const void *src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void synchronize() override {} // launches finish before they return

  std::unique_ptr<LoadedKernel> load(const CompiledKernel &kernel) override {
    std::lock_guard lock(jitMutex_);
    auto loaded = std::make_unique<EmulatorKernel>(*this);
    loaded->name = kernel.name;
    loaded->module = kernel.llvmModule;
    loaded->arch = kernel.arch.empty() ? std::string(target_.arch) : kernel.arch;
    loaded->kernargs = kernel.kernargs;
    loaded->declaredLdsBytes = kernel.ldsBytes;
    loaded->sanitize = emu::sanitizeModeFromEnvironment();
    loaded->waveAfterSeconds = waveAfterSeconds();
    // The form the launches will want first; the other is compiled when one
    // asks (see formFor).
    if (lanePathFromEnvironment() != LanePath::Waves || !tryWaves(*loaded))
      buildLanes(*loaded);
    return loaded;
  }

  // Runs to completion before returning, so every stream is in order.
  void launch(LoadedKernel &kernel, Dim3 grid, uint32_t blockSize, const void *kernarg,
              size_t kernargBytes, void * /*stream*/) override {
    auto *loaded = dynamic_cast<EmulatorKernel *>(&kernel);
    if (!loaded || &loaded->device_ != this)
      throw Error("emulator: the kernel was loaded on a different device");
    const std::string &name = loaded->name;
    if (blockSize == 0 || blockSize > target_.maxWorkgroupSize)
      throw Error("kernel '" + name + "': a workgroup of " + std::to_string(blockSize) +
                  " threads is outside 1.." + std::to_string(target_.maxWorkgroupSize) + " on " +
                  target_.arch);
    // One launch at a time owns the scratch and the kernel's form state.
    std::lock_guard lock(launchMutex_);
    bool waves = false;
    const KernelForm &form = formFor(*loaded, blockSize, waves);
    if (kernargBytes < form.kernargBytes)
      throw Error("kernel '" + name + "' reads " + std::to_string(form.kernargBytes) +
                  " bytes of arguments but the launch passed " + std::to_string(kernargBytes));
    if (form.ldsBytes > target_.ldsBytes)
      throw Error("kernel '" + name + "' needs " + std::to_string(form.ldsBytes) +
                  " bytes of LDS; " + target_.arch + " has " + std::to_string(target_.ldsBytes));
    const uint64_t workgroups = uint64_t(grid.x) * grid.y * grid.z;
    if (workgroups == 0)
      return;
    if (uint64_t(grid.x) * blockSize > UINT32_MAX)
      throw Error("kernel '" + name + "': the grid has more than 2^32 work-items along x");

    DispatchPacket packet;
    packet.setup = 3;
    packet.workgroupSizeX = uint16_t(blockSize);
    packet.gridSizeX = grid.x * blockSize;
    packet.gridSizeY = grid.y;
    packet.gridSizeZ = grid.z;
    packet.groupSegmentSize = form.ldsBytes;
    packet.kernargAddress = kernarg;

    emu::ImplicitArgs implicitArgs;
    implicitArgs.blockCount[0] = grid.x;
    implicitArgs.blockCount[1] = grid.y;
    implicitArgs.blockCount[2] = grid.z;
    implicitArgs.groupSize[0] = uint16_t(blockSize);
    implicitArgs.gridDims = 3;

    prepareScratch(form, waves, blockSize);
    LaunchJob job;
    job.kernel = loaded;
    job.form = &form;
    job.waveSize = waves ? target_.waveSize : 0;
    job.packet = &packet;
    job.implicitArgs = &implicitArgs;
    job.kernarg = kernarg;
    job.grid = grid;
    job.blockSize = blockSize;
    job.scratch = &scratch_;
    emu::LaunchSanitizer sanitizer;
    if (loaded->sanitize != emu::SanitizeMode::Off) {
      sanitizer.mode = loaded->sanitize;
      sanitizer.sites = &form.sites;
      sanitizer.ldsBytes = form.ldsBytes;
      sanitizer.waveSize = target_.waveSize;
      sanitizer.buffers = emu::liveBuffers();
      static std::atomic<uint64_t> launches{0};
      sanitizer.launch = ++launches;
      if (sanitizer.mode == emu::SanitizeMode::Races)
        sanitizer.global = std::make_unique<emu::GlobalShadow>();
      job.sanitizer = &sanitizer;
    }
    job.workgroups = workgroups;
    job.start = std::chrono::steady_clock::now();
    const auto started = std::chrono::steady_clock::now();
    pool_.run(workgroups, &runWorkgroup, &job);
    if (!waves) {
      loaded->fiberSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      ++loaded->fiberLaunches;
    }
    if (!sanitizer.report.empty())
      throw Error("the emulator's sanitizer stopped kernel '" + name + "': " + sanitizer.report);
    if (!job.trap.empty())
      throw Error(job.trap);
    if (job.failed.load())
      throw Error("kernel '" + name + "' failed in the emulator: " + job.error);
  }

  void unload(llvm::orc::JITDylib &dylib) {
    std::lock_guard lock(jitMutex_);
    if (auto err = jit_->getExecutionSession().removeJITDylib(dylib))
      llvm::consumeError(std::move(err)); // the code stays mapped; nothing to report to a user
  }

private:
  // The wave form, compiled the first time it is asked for; false when the
  // kernel is outside what it covers (kernel.wavesUnsupported says why).
  bool tryWaves(EmulatorKernel &kernel) {
    std::lock_guard lock(jitMutex_);
    if (!kernel.wavesTried) {
      kernel.wavesTried = true;
      const auto start = std::chrono::steady_clock::now();
      try {
        kernel.waves = compileForm(kernel, target_.waveSize);
      } catch (const emu::WaveUnsupported &why) {
        kernel.wavesUnsupported = why.what();
      } catch (const Error &e) {
        // A wave form that does not build (its IR does not verify) is the
        // wave form's gap, not the kernel's: fibers run it, and
        // TESSEL_EMULATOR_PATH=waves reports why.
        kernel.waves = {};
        kernel.wavesUnsupported = std::string("the wave form did not build (an emulator bug): ") + e.what();
      }
      if (const char *v = std::getenv("TESSEL_EMULATOR_REPORT"); v && *v && std::strcmp(v, "0") != 0)
        std::fprintf(stderr, "tessel emulator: kernel '%s' runs %s%s (%.0f ms)\n", kernel.name.c_str(),
                     kernel.waves.entry ? "as waves" : "as fibers: the wave form does not cover ",
                     kernel.waves.entry ? "" : kernel.wavesUnsupported.c_str(),
                     std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return kernel.waves.entry != nullptr;
  }
  void buildLanes(EmulatorKernel &kernel) {
    std::lock_guard lock(jitMutex_);
    if (!kernel.lanesBuilt) {
      const auto start = std::chrono::steady_clock::now();
      kernel.lanes = compileForm(kernel, 0);
      kernel.lanesBuilt = true;
      if (const char *v = std::getenv("TESSEL_EMULATOR_REPORT"); v && *v && std::strcmp(v, "0") != 0)
        std::fprintf(stderr, "tessel emulator: kernel '%s' compiled as fibers (%.0f ms)\n", kernel.name.c_str(),
                     std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
  }

  // Parses, retargets (waves of `waveForm` lanes, or threads), optimizes and
  // JIT-compiles the kernel in a dylib of its own.
  KernelForm compileForm(EmulatorKernel &kernel, unsigned waveForm) {
    auto context = std::make_unique<llvm::LLVMContext>();
    llvm::SMDiagnostic diagnostic;
    // Bitcode from a compile or the cache; text from tests and tools.
    auto buffer = llvm::MemoryBuffer::getMemBuffer(kernel.module, kernel.name, false);
    std::unique_ptr<llvm::Module> module = llvm::parseIR(*buffer, diagnostic, *context);
    if (!module)
      throw Error("emulator: cannot parse the LLVM IR of kernel '" + kernel.name + "': line " +
                  std::to_string(diagnostic.getLineNo()) + ": " + diagnostic.getMessage().str());
    // The target the module was compiled for: some instructions mean
    // different things per target (the 8-bit float conversions).
    module->addModuleFlag(llvm::Module::Warning, emu::kArchFlag, llvm::MDString::get(*context, kernel.arch));
    if (!deviceMachine_)
      deviceMachine_ = makeAmdgpuTargetMachine(target_);
    emu::RetargetedKernel retargeted =
        emu::retargetForHost(*module, kernel.name, kernel.kernargs, machine_->createDataLayout(),
                             machine_->getTargetTriple().str(), kernel.sanitize, *deviceMachine_, waveForm);
    optimize(*module);
    emu::moveHalvesAsBits(*module);

    auto dylib = jit_->createJITDylib("tessel_kernel_" + std::to_string(nextDylib_++));
    if (!dylib)
      throw Error("emulator: " + llvmErrorText(dylib.takeError()));
    KernelForm form;
    form.dylib = &*dylib;
    dylib->addToLinkOrder(*runtime_);
    // Device library calls resolve to their host versions, in this kernel's dylib.
    llvm::orc::SymbolMap ocml;
    for (llvm::Function &f : *module)
      if (f.isDeclaration() && (f.getName().starts_with("__ocml_") || f.getName().starts_with("__ockl_")))
        ocml[jit_->mangleAndIntern(f.getName())] = {
            llvm::orc::ExecutorAddr::fromPtr(emu::findDeviceLibraryFunction(f.getName().str())),
            llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    auto fail = [&](const std::string &what) {
      unload(*dylib);
      throw Error(what);
    };
    if (!ocml.empty())
      if (auto err = dylib->define(llvm::orc::absoluteSymbols(std::move(ocml))))
        fail("emulator: " + llvmErrorText(std::move(err)));
    if (auto err = jit_->addIRModule(*dylib, llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
      fail("emulator: cannot add kernel '" + kernel.name + "': " + llvmErrorText(std::move(err)));
    auto entry = jit_->lookup(*dylib, emu::kEntryName);
    if (!entry)
      fail("emulator: cannot compile kernel '" + kernel.name + "' for the host: " + llvmErrorText(entry.takeError()));
    form.entry = entry->toPtr<EntryFn>();
    form.ldsBytes = std::max(kernel.declaredLdsBytes, retargeted.ldsBytes);
    form.kernargBytes = retargeted.kernargBytes;
    form.needsFibers = retargeted.needsFibers;
    form.sites = std::move(retargeted.sites);
    return form;
  }

  // The form a launch of `blockSize` threads runs, compiling it if needed.
  // By default a kernel starts as fibers, which compile several times
  // faster; once its launches have spent kernel.waveAfterSeconds as fibers,
  // or a fifth of it each on average (see waveAfterSeconds), it is compiled
  // in wave form (when that covers it) and runs so from then on. The forms
  // give the same bytes, so the switch changes only the time.
  const KernelForm &formFor(EmulatorKernel &kernel, uint32_t blockSize, bool &waves) {
    const LanePath path = lanePathFromEnvironment();
    const bool spent = kernel.fiberSeconds >= kernel.waveAfterSeconds ||
                       (kernel.fiberLaunches > 0 && kernel.fiberSeconds >= kWaveAfterLaunchShare *
                                                                                 kernel.waveAfterSeconds *
                                                                                 double(kernel.fiberLaunches));
    const bool hot = path == LanePath::Waves || kernel.waves.entry || spent;
    waves = path != LanePath::Fibers && hot && blockSize % target_.waveSize == 0 && tryWaves(kernel);
    if (path == LanePath::Waves && !waves)
      throw Error("kernel '" + kernel.name + "' cannot run as waves on the emulator (TESSEL_EMULATOR_PATH=waves): " +
                  (blockSize % target_.waveSize ? "its workgroup of " + std::to_string(blockSize) +
                                                      " threads is not whole waves"
                                                : kernel.wavesUnsupported));
    if (waves)
      return kernel.waves;
    buildLanes(kernel);
    return kernel.lanes;
  }

  void prepareScratch(const KernelForm &kernel, bool waves, uint32_t blockSize) {
    for (WorkerScratch &s : scratch_) {
      if (s.ldsCapacity < kernel.ldsBytes) {
        size_t capacity = (kernel.ldsBytes + kMemoryAlignment - 1) / kMemoryAlignment * kMemoryAlignment;
        s.lds.reset(static_cast<uint8_t *>(std::aligned_alloc(kMemoryAlignment, capacity)));
        if (!s.lds)
          throw Error("emulator: out of host memory for LDS");
        s.ldsCapacity = capacity;
        std::memset(s.lds.get(), 0xAB, capacity); // LDS starts undefined: make misuse visible
      }
      if (kernel.needsFibers && !waves && (!s.fibers || s.fibers->blockSize() != blockSize))
        s.fibers = std::make_unique<emu::FiberWorkgroup>(blockSize, target_.waveSize, kFiberStackBytes);
      const uint32_t waveCount = blockSize / target_.waveSize;
      if (kernel.needsFibers && waves && (!s.waveFibers || s.waveFibers->blockSize() != waveCount))
        s.waveFibers = std::make_unique<emu::FiberWorkgroup>(waveCount, 1, kWaveFiberStackBytes, target_.waveSize);
    }
  }

  void optimize(llvm::Module &module) {
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager cgscc;
    llvm::ModuleAnalysisManager modules;
    llvm::PassBuilder builder(machine_.get());
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(cgscc);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, cgscc, modules);
    builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(module, modules);
  }

  const TargetFacts &target_;
  WorkerPool pool_;
  std::unique_ptr<llvm::TargetMachine> machine_;
  std::unique_ptr<llvm::TargetMachine> deviceMachine_; // the AMDGPU target's rules, for lockstep
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  llvm::orc::JITDylib *runtime_ = nullptr;
  std::recursive_mutex jitMutex_; // unload() runs inside load() when load fails
  std::mutex launchMutex_;
  uint64_t nextDylib_ = 0;
  std::vector<WorkerScratch> scratch_;
};

EmulatorKernel::~EmulatorKernel() {
  for (KernelForm *form : {&lanes, &waves})
    if (form->dylib)
      device_.unload(*form->dylib);
}

} // namespace

std::shared_ptr<DeviceImpl> makeEmulatorDevice(const TargetFacts &target) {
  return std::make_shared<EmulatorDevice>(target);
}

} // namespace tessel
