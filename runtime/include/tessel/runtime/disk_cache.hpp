// The on-disk kernel cache. An entry is a folder named by the hex key holding
// tile.mlir, remarks (the performance remarks), kernel.bc (the kernel module's bitcode), kernel.hsaco,
// kernel.s (when the assembly had been made: see CompiledKernel::assembly)
// and `meta` (the kernel's facts and a checksum of every file). Entries
// appear atomically (built under a
// temporary name, then renamed); `meta` names the entry's key, so an entry
// in another's folder is a miss; a damaged entry is removed and reads as a
// miss; a read-only cache directory is read, and new kernels (as when a
// write fails: a full disk, a file-size limit) are kept in memory with one
// warning. Temporary folders of writers that died are cleaned up.
#pragma once

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/specialization.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace tessel {

class DiskCache {
public:
  // $TESSEL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else $HOME/.cache/tessel,
  // else $TMPDIR/tessel-cache, else /tmp/tessel-cache. Never throws.
  static std::string defaultDirectory();
  // The process-wide cache in defaultDirectory() (read once, at first use).
  static DiskCache &process();

  explicit DiskCache(std::string directory);

  // The entry name: 32 hex digits hashing everything that decides the code.
  // `compilerIdentity` is tessel::compilerIdentity() (tessel_lowering).
  static std::string entryKey(uint64_t traceFingerprint, const Specialization &spec,
                              std::string_view arch, unsigned numWarps,
                              std::string_view compilerIdentity,
                              unsigned codeObjectVersion = 5, unsigned numStages = 1,
                              bool fastMath = false, bool fpFusion = false, bool debug = false,
                              bool directToLds = false, unsigned wavesPerEu = 0,
                              bool noDirectToLds = false);

  // The kernel stored under `key` (named `expectedName` when given), or
  // nullopt. Never throws for I/O problems.
  std::optional<CompiledKernel> load(const std::string &key, std::string_view expectedName = {});
  // Stores `kernel` under `key`; another writer of the same key may win.
  void store(const std::string &key, const CompiledKernel &kernel);

  const std::string &directory() const { return directory_; }
  // New kernels stay in memory (the directory is read-only or a write failed).
  bool memoryOnly() const;
  // Entries on disk are read (the directory exists and is readable).
  bool readsDisk() const;

private:
  void fallBackToMemory(const std::string &why);
  void removeEntry(const std::string &key);

  std::string directory_;
  mutable std::mutex mutex_;
  bool memoryOnly_ = false;
  bool readable_ = false;
  std::map<std::string, CompiledKernel> memory_; // entries that could not be written
};

} // namespace tessel
