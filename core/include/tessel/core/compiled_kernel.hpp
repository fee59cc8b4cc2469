// Every artifact of one compiled kernel: what the compiler produces, the disk
// cache stores and the devices load. Plain data, no MLIR or LLVM types.
#pragma once

#include "tessel/core/kernarg.hpp"

#include <chrono>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessel {

struct CompiledKernel;

// Milliseconds each stage of one compile took, in pipeline order. All zero
// for a kernel that came from the disk cache (they are not stored there).
struct CompileTimes {
  double trace = 0;     // running the kernel body on the host (the runtime measures it)
  double context = 0;   // the MLIR context the compile works in
  double import = 0;    // trace -> tile IR
  double passes = 0;    // tile IR -> per-thread LLVM dialect (buildTesselPipeline)
  double translate = 0; // LLVM dialect -> LLVM IR, line tables, the kernel module's bitcode
  double optimize = 0;  // LLVM O3 (with the device library linked when called)
  double codegen = 0;   // AMDGPU code generation to the object (no assembly text: see assembly())
  double link = 0;      // lld: object -> .hsaco, and its symbol check
  // The passes stage's slowest passes, slowest first (a pass that runs twice,
  // as canonicalize and cse do, is named once with its runs' sum).
  struct PassTime {
    std::string pass; // its argument: "tessel-convert-to-llvm"
    double ms = 0;
  };
  std::vector<PassTime> slowestPasses;
  static constexpr size_t kSlowestPasses = 5;
  double total() const { return trace + context + import + passes + translate + optimize + codegen + link; }
};

// Milliseconds between laps, for filling CompileTimes.
class StageClock {
public:
  double lap() {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return ms;
  }

private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// "trace 0.21, context 1.90, ..., link 0.62 ms": every stage, in order.
std::string describeStages(const CompileTimes &times);
// "tessel-convert-to-llvm 12.31, canonicalize 4.02, ... ms": the slowest passes.
std::string describeSlowestPasses(const CompileTimes &times);

// A performance remark: something in the kernel that costs speed, at the
// user's line, with what to change (TESSEL_REMARKS=1 prints them).
enum class RemarkKind : uint8_t {
  NarrowAccess, // a global load/store moves less than 16 bytes per thread at once
  LdsInLoop,    // a layout conversion goes through LDS every loop iteration
  NotPipelined, // a load feeding a dot in a loop is not fetched ahead (num_stages >= 2)
  Spill,        // registers spilled to scratch memory
  Occupancy,    // waves per SIMD, and what limits them
};
// "narrow-access", "lds-in-loop", "not-pipelined", "spill", "occupancy".
const char *remarkKindName(RemarkKind kind);

struct Remark {
  RemarkKind kind;
  std::string file; // the user's C++ file ("" when no line is known)
  unsigned line = 0;
  std::string message;
  bool operator==(const Remark &) const = default;
};

// "file:line: tessel: remark: [kind] message", one line per remark, after a
// line naming the kernel and target.
std::string describeRemarks(const CompiledKernel &kernel);

struct CompiledKernel {
  std::string name;           // kernel symbol in the module and the code object
  std::string arch;           // the target it was compiled for ("gfx942")
  std::string tileIR;         // tessel dialect after specialization (text)
  // The kernel module both executors start from, as LLVM bitcode: what a
  // compile writes and the disk cache keeps (kernel.bc; a quarter of the
  // text's size and a third of its time to write). LLVM IR text here is
  // read as well (tests and tools set hand-written modules).
  std::string llvmModule;
  std::vector<uint8_t> hsaco; // linked code object
  uint32_t ldsBytes = 0;      // planned workgroup memory
  uint32_t blockSize = 0;     // threads per workgroup (numWarps * waveSize)
  uint32_t waveSize = 0;
  KernargLayout kernargs;
  CompileTimes times;         // how long this compile took, by stage (not cached)
  // Performance remarks, in source order (the disk cache keeps them).
  std::vector<Remark> remarks;

  // Two texts made on first use and then kept (thread-safe; copies share
  // them; tessel::Error when one cannot be made):
  // - llvmIR(): llvmModule as LLVM IR text.
  // - assembly(): the AMDGPU assembly of the code object. A compile emits
  //   the object alone; the text is a second code generation of llvmModule,
  //   which gives the same instructions.
  const std::string &llvmIR() const;
  const std::string &assembly() const;
  bool hasLlvmIR() const;             // made already (no work to ask)
  bool hasAssembly() const;
  void setLlvmIR(std::string text);   // the text, when it is at hand (a dump made it)
  void setAssembly(std::string text);
  // How to make each text when asked (set by the compiler and the disk cache).
  using TextSource = std::function<std::string(const CompiledKernel &)>;
  void setLlvmIRSource(TextSource source);
  void setAssemblySource(TextSource source);

private:
  struct LazyText {
    std::once_flag once;
    std::string text;
    TextSource source;
    std::atomic<bool> made = false;
  };
  static const std::string &made(const std::shared_ptr<LazyText> &lazy, const CompiledKernel &kernel,
                                 const char *what);
  std::shared_ptr<LazyText> llvmIR_, assembly_;
};

} // namespace tessel
