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

// Milliseconds each stage of one compile took, in pipeline order. All zero
// for a kernel that came from the disk cache (they are not stored there).
struct CompileTimes {
  double trace = 0;     // running the kernel body on the host (the runtime measures it)
  double context = 0;   // the MLIR context the compile works in
  double import = 0;    // trace -> tile IR
  double passes = 0;    // tile IR -> per-thread LLVM dialect (buildTesselPipeline)
  double translate = 0; // LLVM dialect -> LLVM IR, line tables, the kernel module's text
  double optimize = 0;  // LLVM O3 (with the device library linked when called)
  double codegen = 0;   // AMDGPU code generation to the object (no assembly text: see assembly())
  double link = 0;      // lld: object -> .hsaco, and its symbol check
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

struct CompiledKernel {
  std::string name;           // kernel symbol in the module and the code object
  std::string arch;           // the target it was compiled for ("gfx942")
  std::string tileIR;         // tessel dialect after specialization (text)
  std::string llvmIR;         // the kernel module both executors start from
  std::vector<uint8_t> hsaco; // linked code object
  uint32_t ldsBytes = 0;      // planned workgroup memory
  uint32_t blockSize = 0;     // threads per workgroup (numWarps * waveSize)
  uint32_t waveSize = 0;
  KernargLayout kernargs;
  CompileTimes times;         // how long this compile took, by stage (not cached)

  // AMDGPU assembly of the code object. A compile emits the object alone;
  // the text is made on first use (a second code generation of llvmIR,
  // which gives the same instructions) and then kept. Thread-safe; copies
  // share it. Throws tessel::Error when it cannot be made.
  const std::string &assembly() const;
  bool hasAssembly() const;                 // made already (no work to ask)
  void setAssembly(std::string text);       // the text, when it is at hand
  // How to make the text when asked (set by the compiler and the disk cache).
  using AssemblySource = std::function<std::string(const CompiledKernel &)>;
  void setAssemblySource(AssemblySource source);

private:
  struct LazyAssembly {
    std::once_flag once;
    std::string text;
    AssemblySource source;
    std::atomic<bool> made = false;
  };
  std::shared_ptr<LazyAssembly> assembly_;
};

} // namespace tessel
