// The on-disk kernel cache (see disk_cache.hpp for the format's contract).
#include "tessel/runtime/disk_cache.hpp"

#include "tessel/core/file_size_signal.hpp"
#include "tessel/lowering/amdgpu_codegen.hpp"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/xxhash.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace tessel {
namespace {

// Version 2: meta names the entry's key (an entry moved to another folder is
// a miss). Version 4: the kernel module is bitcode, kernel.bc (kernel.ll
// before). Version 5: remarks, the kernel's performance remarks. Older
// entries read as damaged and are rebuilt.
constexpr const char *kMetaHeader = "tessel-kernel-cache 5";

// Temporary and trash folders of a writer that died are removed once they
// are this old and their process is gone.
constexpr auto kStaleAfter = std::chrono::minutes(5);

uint64_t checksumOf(std::string_view bytes) {
  return llvm::xxh3_64bits(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The largest file an entry may hold. Real entries are a few MB at most (the
// tile IR text of a big kernel); 64 MiB is ten times more than any seen, yet
// bounds what a damaged or hostile cache folder can make a launch read.
constexpr size_t kMaxEntryFileBytes = size_t(64) << 20;

// Reads a regular file that tessel wrote, whole; false for anything else: a
// symlink (tessel writes none; one to /dev/zero would never end), a FIFO
// (opening it would block), a device, a folder, or a file over the cap.
bool readFile(const fs::path &path, std::string &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return false;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
      uint64_t(st.st_size) > kMaxEntryFileBytes)
    return false;
  out.resize(size_t(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false; // an error, or the file shrank while read: a damaged entry
    done += size_t(n);
  }
  char extra;
  return ::read(fd, &extra, 1) == 0; // nor may it have grown
}

// Writes a new file whole; false on any error (a full disk, a file-size
// limit: the caller's SIGXFSZ is held off by NoFileSizeSignal).
bool writeFile(const fs::path &path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return false;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    done += size_t(n);
  }
  return ::close(fd) == 0;
}

// The files of an entry, in the order meta lists them. kernel.s is there
// when the kernel's assembly had been made when it was stored (a compile
// makes it only when asked: TESSEL_DUMP, CompiledKernel::assembly()).
enum class EntryKind { Tile, Remarks, Llvm, Assembly, CodeObject };
struct EntryFile {
  const char *name;
  EntryKind kind;
};
const EntryFile kEntryFiles[] = {
    {"tile.mlir", EntryKind::Tile},
    {"remarks", EntryKind::Remarks},
    {"kernel.bc", EntryKind::Llvm},
    {"kernel.s", EntryKind::Assembly},
    {"kernel.hsaco", EntryKind::CodeObject},
};

// Remarks, one a line: "<kind> <line> <file bytes> <file><message>" (the
// file's length first: a path may hold spaces).
std::string remarksText(const std::vector<Remark> &remarks) {
  std::string out;
  for (const Remark &r : remarks)
    out += std::to_string(int(r.kind)) + " " + std::to_string(r.line) + " " + std::to_string(r.file.size()) + " " +
           r.file + r.message + "\n";
  return out;
}

std::optional<std::vector<Remark>> parseRemarks(const std::string &text) {
  std::vector<Remark> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    int kind = -1;
    size_t fileBytes = 0;
    Remark r{};
    if (!(fields >> kind >> r.line >> fileBytes) || kind < 0 || kind > int(RemarkKind::Occupancy) ||
        fields.get() != ' ')
      return std::nullopt;
    const size_t at = size_t(fields.tellg());
    if (fields.fail() || at + fileBytes > line.size())
      return std::nullopt;
    r.kind = RemarkKind(kind);
    r.file = line.substr(at, fileBytes);
    r.message = line.substr(at + fileBytes);
    out.push_back(std::move(r));
  }
  return out;
}

// The file's bytes; nullopt for an assembly not made.
std::optional<std::string_view> fileBytes(const CompiledKernel &k, const std::string &remarks, const EntryFile &f) {
  switch (f.kind) {
  case EntryKind::Tile: return k.tileIR;
  case EntryKind::Remarks: return remarks;
  case EntryKind::Llvm: return k.llvmModule;
  case EntryKind::Assembly:
    if (!k.hasAssembly())
      return std::nullopt;
    return k.assembly();
  case EntryKind::CodeObject: break;
  }
  return std::string_view(reinterpret_cast<const char *>(k.hsaco.data()), k.hsaco.size());
}

std::string metaText(const std::string &key, const CompiledKernel &k, const std::string &remarks) {
  std::ostringstream meta;
  meta << kMetaHeader << "\n"
       << "key " << key << "\n"
       << "name " << k.name << "\n"
       << "arch " << k.arch << "\n"
       << "ldsBytes " << k.ldsBytes << "\n"
       << "blockSize " << k.blockSize << "\n"
       << "waveSize " << k.waveSize << "\n"
       << "kernargs " << k.kernargs.totalBytes << " " << k.kernargs.offsets.size();
  for (size_t i = 0; i < k.kernargs.offsets.size(); ++i)
    meta << " " << k.kernargs.offsets[i] << " " << k.kernargs.sizes[i];
  meta << "\n";
  for (const EntryFile &f : kEntryFiles)
    if (std::optional<std::string_view> bytes = fileBytes(k, remarks, f))
      meta << "file " << f.name << " " << bytes->size() << " " << hex64(checksumOf(*bytes)) << "\n";
  std::string body = meta.str();
  return body + "checksum " + hex64(checksumOf(body)) + "\n";
}

// Reads and verifies the entry for `key`; nullopt when anything is missing
// or damaged, or the entry is another key's (a folder renamed or copied).
std::optional<CompiledKernel> readEntry(const fs::path &folder, const std::string &key,
                                        std::string_view expectedName) {
  std::string meta;
  if (!readFile(folder / "meta", meta))
    return std::nullopt;
  const size_t checksumAt = meta.rfind("checksum ");
  if (checksumAt == std::string::npos ||
      meta.substr(checksumAt) != "checksum " + hex64(checksumOf(meta.substr(0, checksumAt))) + "\n")
    return std::nullopt;
  std::istringstream in(meta.substr(0, checksumAt));
  std::string line, word;
  CompiledKernel k;
  if (!std::getline(in, line) || line != kMetaHeader)
    return std::nullopt;
  if (!std::getline(in, line) || line != "key " + key)
    return std::nullopt;
  if (!std::getline(in, line) || line.rfind("name ", 0) != 0)
    return std::nullopt;
  k.name = line.substr(5);
  if (!expectedName.empty() && k.name != expectedName)
    return std::nullopt;
  if (!std::getline(in, line) || line.rfind("arch ", 0) != 0)
    return std::nullopt;
  k.arch = line.substr(5);
  size_t count = 0;
  if (!(in >> word) || word != "ldsBytes" || !(in >> k.ldsBytes) || !(in >> word) ||
      word != "blockSize" || !(in >> k.blockSize) || !(in >> word) || word != "waveSize" ||
      !(in >> k.waveSize) || !(in >> word) || word != "kernargs" ||
      !(in >> k.kernargs.totalBytes >> count) || count > 4096)
    return std::nullopt;
  if (k.blockSize == 0) // no kernel launches without a workgroup (older tessels stored such entries)
    return std::nullopt;
  k.kernargs.offsets.resize(count);
  k.kernargs.sizes.resize(count);
  for (size_t i = 0; i < count; ++i)
    if (!(in >> k.kernargs.offsets[i] >> k.kernargs.sizes[i]))
      return std::nullopt;
  std::string name, checksum;
  size_t size = 0;
  bool listed = bool(in >> word >> name >> size >> checksum) && word == "file";
  for (const EntryFile &f : kEntryFiles) {
    if (!listed || name != f.name) {
      if (f.kind == EntryKind::Assembly) // not stored: made from kernel.bc when asked
        continue;
      return std::nullopt;
    }
    std::string bytes;
    if (!readFile(folder / f.name, bytes) || bytes.size() != size || hex64(checksumOf(bytes)) != checksum)
      return std::nullopt;
    switch (f.kind) {
    case EntryKind::Tile: k.tileIR = std::move(bytes); break;
    case EntryKind::Remarks:
      if (std::optional<std::vector<Remark>> remarks = parseRemarks(bytes))
        k.remarks = std::move(*remarks);
      else
        return std::nullopt;
      break;
    case EntryKind::Llvm: k.llvmModule = std::move(bytes); break;
    case EntryKind::Assembly: k.setAssembly(std::move(bytes)); break;
    case EntryKind::CodeObject: k.hsaco.assign(bytes.begin(), bytes.end()); break;
    }
    listed = bool(in >> word >> name >> size >> checksum) && word == "file";
  }
  if (listed) // a file no entry has
    return std::nullopt;
  makeTextsOnDemand(k);
  return k;
}

// A name no other process or thread uses: "<pid>-<counter>".
std::string uniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
}

// Removes ".tmp-<key>-<pid>-<n>" and ".trash-<key>-<pid>-<n>" folders left
// by writers that died mid-write: older than kStaleAfter and their process
// gone (a live writer's folder, or one whose pid we cannot judge, stays).
void removeStaleTemporaries(const fs::path &directory) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(".tmp-", 0) != 0 && name.rfind(".trash-", 0) != 0)
      continue;
    const size_t counterDash = name.rfind('-');
    const size_t pidDash = counterDash == std::string::npos || counterDash == 0 ? std::string::npos
                                                                                  : name.rfind('-', counterDash - 1);
    if (pidDash == std::string::npos)
      continue;
    const long pid = std::strtol(name.c_str() + pidDash + 1, nullptr, 10);
    std::error_code timeError;
    const auto written = fs::last_write_time(it->path(), timeError);
    if (timeError || now - written < kStaleAfter || pid <= 0)
      continue;
    if (pid == ::getpid() || ::kill(pid_t(pid), 0) == 0 || errno != ESRCH)
      continue;
    std::error_code removeError;
    fs::remove_all(it->path(), removeError);
  }
}

} // namespace

std::string DiskCache::defaultDirectory() {
  if (const char *dir = std::getenv("TESSEL_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "tessel").string();
  if (const char *home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "tessel").string();
  // $TMPDIR as it is (fs::temp_directory_path throws when it is no
  // directory): a cache there that cannot be made falls back to memory.
  const char *tmp = std::getenv("TMPDIR");
  return (fs::path(tmp && *tmp ? tmp : "/tmp") / "tessel-cache").string();
}

DiskCache &DiskCache::process() {
  static DiskCache cache(defaultDirectory());
  return cache;
}

DiskCache::DiskCache(std::string directory) : directory_(std::move(directory)) {
  std::error_code ec;
  fs::create_directories(directory_, ec);
  const bool isDirectory = fs::is_directory(directory_);
  readable_ = isDirectory && ::access(directory_.c_str(), R_OK | X_OK) == 0;
  if (isDirectory && ::access(directory_.c_str(), W_OK | X_OK) == 0) {
    removeStaleTemporaries(directory_);
    return;
  }
  // A read-only cache (shared, or pre-populated in a container) is still read.
  fallBackToMemory(!isDirectory ? (ec ? ec.message() : "not a directory")
                   : readable_  ? "it is read-only; its kernels are still used"
                                : std::string(std::strerror(errno)));
}

bool DiskCache::memoryOnly() const {
  std::lock_guard lock(mutex_);
  return memoryOnly_;
}

bool DiskCache::readsDisk() const { return readable_; }

void DiskCache::fallBackToMemory(const std::string &why) {
  std::lock_guard lock(mutex_);
  if (memoryOnly_)
    return;
  memoryOnly_ = true;
  std::fprintf(stderr, "tessel: warning: cannot write the kernel cache in %s (%s); keeping new kernels in memory\n",
               directory_.c_str(), why.c_str());
}

std::string DiskCache::entryKey(uint64_t traceFingerprint, const Specialization &spec,
                                std::string_view arch, unsigned numWarps,
                                std::string_view compilerIdentity, unsigned codeObjectVersion,
                                unsigned numStages, bool fastMath, bool fpFusion, bool debug,
                                bool directToLds, unsigned wavesPerEu, bool noDirectToLds) {
  std::string bytes;
  auto put = [&](uint64_t v) { bytes.append(reinterpret_cast<const char *>(&v), sizeof v); };
  put(traceFingerprint);
  put(spec.args.size());
  for (const ArgSpecialization &a : spec.args)
    put(uint64_t(a.equalsOne) | uint64_t(a.divisibleBy16) << 1 | uint64_t(a.aligned16) << 2 |
        uint64_t(a.within2GiB) << 3);
  put(arch.size());
  bytes.append(arch);
  put(numWarps);
  put(compilerIdentity.size());
  bytes.append(compilerIdentity);
  put(codeObjectVersion);
  if (numStages != 1) // entries of unpipelined kernels keep their names
    put(numStages);
  if (fastMath) // and so do those without fast math
    bytes.append("fast_math");
  if (fpFusion) // or fp fusion
    bytes.append("fp_fusion");
  if (debug) // or device_assert checks
    bytes.append("debug");
  if (directToLds) // or TESSEL_DIRECT_TO_LDS=1
    bytes.append("direct_to_lds");
  if (noDirectToLds) // or TESSEL_DIRECT_TO_LDS=0
    bytes.append("no_direct_to_lds");
  if (wavesPerEu) { // or an occupancy request
    bytes.append("waves_per_eu");
    put(wavesPerEu);
  }
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  return hex64(h.high64) + hex64(h.low64);
}

std::optional<CompiledKernel> DiskCache::load(const std::string &key, std::string_view expectedName) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = memory_.find(key); it != memory_.end())
      return it->second;
  }
  if (!readable_)
    return std::nullopt;
  const fs::path folder = fs::path(directory_) / key;
  std::error_code ec;
  if (!fs::exists(folder, ec))
    return std::nullopt;
  std::optional<CompiledKernel> kernel = readEntry(folder, key, expectedName);
  if (!kernel && !memoryOnly())
    removeEntry(key); // damaged, partial or another's: the caller recompiles and stores it again
  return kernel;
}

void DiskCache::removeEntry(const std::string &key) {
  // Renamed away first, so no reader ever sees a half-deleted entry.
  const fs::path trash = fs::path(directory_) / (".trash-" + key + "-" + uniqueSuffix());
  std::error_code ec;
  fs::rename(fs::path(directory_) / key, trash, ec);
  if (!ec)
    fs::remove_all(trash, ec);
}

void DiskCache::store(const std::string &key, const CompiledKernel &kernel) {
  if (memoryOnly()) {
    std::lock_guard lock(mutex_);
    memory_[key] = kernel;
    return;
  }
  const fs::path temporary = fs::path(directory_) / (".tmp-" + key + "-" + uniqueSuffix());
  std::error_code ec;
  NoFileSizeSignal noSignal;
  bool written = fs::create_directory(temporary, ec) && !ec;
  const std::string remarks = remarksText(kernel.remarks);
  for (const EntryFile &f : kEntryFiles)
    if (std::optional<std::string_view> bytes = fileBytes(kernel, remarks, f))
      written = written && writeFile(temporary / f.name, *bytes);
  written = written && writeFile(temporary / "meta", metaText(key, kernel, remarks)); // last: meta vouches for the rest
  if (!written) {
    fs::remove_all(temporary, ec);
    fallBackToMemory("writing an entry failed");
    std::lock_guard lock(mutex_);
    memory_[key] = kernel;
    return;
  }
  if (::rename(temporary.c_str(), (fs::path(directory_) / key).c_str()) != 0)
    fs::remove_all(temporary, ec); // another writer won the race: its entry is as good
}

} // namespace tessel
