#include "Dump.h"

#include "tessel/core/environment.hpp"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace tessel {

namespace {

struct ItemInfo {
  const char *name;      // in TESSEL_DUMP
  const char *banner;    // on stderr
  const char *extension; // in TESSEL_DUMP_DIR
};
constexpr ItemInfo kItems[] = {
    {"tile", "tile IR after layouts and the LDS plan", "tile.mlir"},
    {"llvm-dialect", "per-thread LLVM dialect", "llvm-dialect.mlir"},
    {"llvm", "the kernel module (LLVM IR)", "ll"},
    {"asm", "AMDGPU assembly", "s"},
};

// Says once per process (compiles run on several threads) when a word of
// TESSEL_DUMP names nothing.
void warnUnknownItems() {
  static std::atomic<bool> warned = false;
  if (warned.load())
    return;
  for (const std::string &word : environmentWords("TESSEL_DUMP")) {
    bool known = word.empty() || word == "1" || word == "all" || word == "0";
    for (const ItemInfo &item : kItems) known |= word == item.name;
    if (!known && !warned.exchange(true))
      std::fprintf(stderr, "tessel: warning: TESSEL_DUMP names '%s', which is not one of tile, llvm-dialect, "
                           "llvm, asm, all\n", word.c_str());
  }
}

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

} // namespace

CompileDumps::CompileDumps(const Trace &trace, const Specialization &spec, const CompileOptions &options)
    : dir_(environmentValue("TESSEL_DUMP_DIR")), arch_(options.arch) {
  const std::string value = environmentValue("TESSEL_DUMP");
  if (value == "0") // off, even with a directory
    return;
  if (value.empty()) {
    for (bool &s : selected_) s = !dir_.empty(); // the directory alone takes everything
  } else {
    warnUnknownItems();
    for (int i = 0; i < 4; ++i) selected_[i] = environmentLists("TESSEL_DUMP", kItems[i].name);
  }
  if (dir_.empty())
    return;
  // Two specializations of one kernel get two sets of files.
  uint64_t h = mix(0xcbf29ce484222325ull, trace.fingerprint());
  for (const ArgSpecialization &a : spec.args)
    h = mix(h, a.equalsOne | a.divisibleBy16 << 1 | a.aligned16 << 2 | a.within2GiB << 3);
  h = mix(mix(mix(mix(h, options.numWarps), options.numStages), options.fastMath), options.codeObjectVersion);
  if (options.fpFusion)
    h = mix(h, 0xf05e);
  if (options.debug)
    h = mix(h, 0xdeb9);
  if (options.wavesPerEu)
    h = mix(mix(h, 0x3a7e), options.wavesPerEu);
  if (options.directToLds)
    h = mix(h, 0xd1d5);
  else if (options.noDirectToLds)
    h = mix(h, 0x0d15);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  stem_ = trace.kernelName + "." + options.arch + "." + hex;
}

void CompileDumps::write(DumpItem item, const std::string &text) const {
  const ItemInfo &info = kItems[int(item)];
  if (dir_.empty()) {
    if (item == DumpItem::Asm)
      std::fprintf(stderr, "// ----- tessel: %s (%s) -----\n%s\n", info.banner, arch_.c_str(), text.c_str());
    else
      std::fprintf(stderr, "// ----- tessel: %s -----\n%s\n", info.banner, text.c_str());
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  const std::filesystem::path path = std::filesystem::path(dir_) / (stem_ + "." + info.extension);
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out)
    std::fprintf(stderr, "tessel: warning: TESSEL_DUMP_DIR: could not write %s\n", path.string().c_str());
}

} // namespace tessel
