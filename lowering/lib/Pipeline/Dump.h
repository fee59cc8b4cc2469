// TESSEL_DUMP / TESSEL_DUMP_DIR: what a compile shows of itself. TESSEL_DUMP
// selects (comma-separated: tile, llvm-dialect, llvm, asm; 1 or all for
// every one); TESSEL_DUMP_DIR sends them to files there instead of stderr
// (and alone selects every one). Only a compile dumps: a cache hit compiles
// nothing (TESSEL_ALWAYS_COMPILE=1 makes it).
#pragma once

#include "tessel/core/specialization.hpp"
#include "tessel/core/trace.hpp"
#include "tessel/lowering/compile.hpp"

#include <string>

namespace tessel {

enum class DumpItem { Tile, LlvmDialect, Llvm, Asm };

class CompileDumps {
public:
  // Reads the environment once per compile.
  CompileDumps(const Trace &trace, const Specialization &spec, const CompileOptions &options);
  bool wants(DumpItem item) const { return selected_[int(item)]; }
  // To stderr under a banner, or to <dir>/<kernel>.<arch>.<key>.<extension>.
  void write(DumpItem item, const std::string &text) const;

private:
  bool selected_[4] = {};
  std::string dir_;
  std::string stem_; // <kernel>.<arch>.<16 hex digits of the trace, specialization and options>
  std::string arch_;
};

} // namespace tessel
