// The disk cache: round trip, damage detection, concurrent writers, and an
// unwritable directory.
#include "tessel/runtime/disk_cache.hpp"
#include "tessel/core/error.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tessel;
namespace fs = std::filesystem;

namespace {

fs::path freshDirectory(const std::string &name) {
  fs::path dir = fs::path(TESSEL_BINARY_DIR) / "test-scratch" / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

CompiledKernel sampleKernel(int variant = 0) {
  CompiledKernel k;
  k.name = "vector_add_" + std::to_string(variant);
  k.arch = "gfx942";
  k.tileIR = "tessel.func @vector_add() { }  // " + std::to_string(variant);
  k.llvmModule = "define amdgpu_kernel void @vector_add() { ret void }\n";
  k.setAssembly(std::string(5000 + variant, 's'));
  for (int i = 0; i < 3000; ++i)
    k.hsaco.push_back(uint8_t(i * 7 + variant));
  k.ldsBytes = 4096;
  k.blockSize = 256;
  k.waveSize = 64;
  // A file name with spaces, a message with a colon and digits.
  k.remarks = {{RemarkKind::NarrowAccess, "/src/my kernels/add.cpp", unsigned(12 + variant),
                "load of 64x64 moves 16 bits per thread at a time, not 128: why 2"},
               {RemarkKind::Occupancy, "", 0, "8 waves per SIMD (of 8)"}};
  k.kernargs = kernargLayout({{TraceArg::Pointer, DType::F32}, {TraceArg::Int, DType::I32},
                              {TraceArg::Pointer, DType::F16}});
  return k;
}

void checkSame(const CompiledKernel &a, const CompiledKernel &b) {
  CHECK(a.name == b.name);
  CHECK(a.arch == b.arch);
  CHECK(a.tileIR == b.tileIR);
  CHECK(a.llvmModule == b.llvmModule);
  CHECK(a.assembly() == b.assembly());
  CHECK(a.hsaco == b.hsaco);
  CHECK(a.ldsBytes == b.ldsBytes);
  CHECK(a.blockSize == b.blockSize);
  CHECK(a.waveSize == b.waveSize);
  CHECK(a.remarks == b.remarks);
  CHECK(a.kernargs.offsets == b.kernargs.offsets);
  CHECK(a.kernargs.sizes == b.kernargs.sizes);
  CHECK(a.kernargs.totalBytes == b.kernargs.totalBytes);
}

const std::string kKey = DiskCache::entryKey(0x1234, {}, "gfx942", 4, "tessel-test");

} // namespace

TEST_CASE("cache: keys depend on every input") {
  Specialization spec{{ArgSpecialization{}, ArgSpecialization{true, false, false}}};
  std::string key = DiskCache::entryKey(1, spec, "gfx942", 4, "id");
  CHECK(key.size() == 32);
  CHECK(key.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(key == DiskCache::entryKey(1, spec, "gfx942", 4, "id"));
  CHECK(key != DiskCache::entryKey(2, spec, "gfx942", 4, "id"));
  Specialization other = spec;
  other.args[1].divisibleBy16 = true;
  CHECK(key != DiskCache::entryKey(1, other, "gfx942", 4, "id"));
  Specialization small = spec;
  small.args[0].within2GiB = true;
  CHECK(key != DiskCache::entryKey(1, small, "gfx942", 4, "id"));
  CHECK(key != DiskCache::entryKey(1, spec, "gfx90a", 4, "id"));
  CHECK(key != DiskCache::entryKey(1, spec, "gfx942", 8, "id"));
  CHECK(key != DiskCache::entryKey(1, spec, "gfx942", 4, "id2"));
  CHECK(key != DiskCache::entryKey(1, spec, "gfx942", 4, "id", 5, 1, false, false, false, /*directToLds=*/true));
  // TESSEL_DIRECT_TO_LDS=0 (never) is a key of its own too, unlike the default.
  const std::string never =
      DiskCache::entryKey(1, spec, "gfx942", 4, "id", 5, 1, false, false, false, false, 0, /*noDirectToLds=*/true);
  CHECK(key != never);
  CHECK(never != DiskCache::entryKey(1, spec, "gfx942", 4, "id", 5, 1, false, false, false, /*directToLds=*/true));
}

TEST_CASE("cache: default directory follows TESSEL_CACHE_DIR, XDG_CACHE_HOME, HOME, TMPDIR") {
  std::string saved[4];
  const char *names[4] = {"TESSEL_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "TMPDIR"};
  bool had[4];
  for (int i = 0; i < 4; ++i)
    if ((had[i] = std::getenv(names[i])))
      saved[i] = std::getenv(names[i]);
  setenv("TESSEL_CACHE_DIR", "/a/b", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  CHECK(DiskCache::defaultDirectory() == "/a/b");
  unsetenv("TESSEL_CACHE_DIR");
  CHECK(DiskCache::defaultDirectory() == "/x/tessel");
  unsetenv("XDG_CACHE_HOME");
  CHECK(DiskCache::defaultDirectory() == "/h/.cache/tessel");
  unsetenv("HOME");
  // A TMPDIR that is no directory is taken as it is (std::filesystem's
  // temp_directory_path threw): the cache cannot be made there and new
  // kernels stay in memory.
  const std::string underFile = std::string(TESSEL_BINARY_DIR) + "/CMakeCache.txt/tmp";
  setenv("TMPDIR", underFile.c_str(), 1);
  CHECK(DiskCache::defaultDirectory() == underFile + "/tessel-cache");
  CHECK(DiskCache(DiskCache::defaultDirectory()).memoryOnly());
  unsetenv("TMPDIR");
  CHECK(DiskCache::defaultDirectory() == "/tmp/tessel-cache");
  for (int i = 0; i < 4; ++i)
    had[i] ? (void)setenv(names[i], saved[i].c_str(), 1) : (void)unsetenv(names[i]);
}

TEST_CASE("cache: round trip") {
  fs::path dir = freshDirectory("roundtrip");
  DiskCache cache(dir.string());
  CHECK_FALSE(cache.memoryOnly());
  CHECK_FALSE(cache.load(kKey).has_value());
  CompiledKernel k = sampleKernel();
  cache.store(kKey, k);
  for (const char *file : {"tile.mlir", "remarks", "kernel.bc", "kernel.s", "kernel.hsaco", "meta"})
    CHECK(fs::exists(dir / kKey / file));
  // A second cache object (another process, say) reads the same entry.
  DiskCache again(dir.string());
  auto loaded = again.load(kKey);
  REQUIRE(loaded.has_value());
  checkSame(*loaded, k);
  // Nothing temporary stays behind.
  for (const auto &entry : fs::directory_iterator(dir))
    CHECK(entry.path().filename().string()[0] != '.');
}

// A compile makes no assembly text; an entry stored before anyone asked for
// it has no kernel.s, and the loaded kernel makes it from kernel.bc.
TEST_CASE("cache: an entry without kernel.s makes the assembly from kernel.bc when asked") {
  fs::path dir = freshDirectory("noassembly");
  DiskCache cache(dir.string());
  CompiledKernel k;
  k.name = "vector_add";
  k.arch = "gfx1100";
  k.llvmModule = "define amdgpu_kernel void @vector_add() { ret void }\n";
  k.hsaco = {1, 2, 3};
  k.blockSize = 64;
  k.waveSize = 32;
  cache.store(kKey, k);
  CHECK(fs::exists(dir / kKey / "kernel.hsaco"));
  CHECK_FALSE(fs::exists(dir / kKey / "kernel.s"));
  auto loaded = DiskCache(dir.string()).load(kKey);
  REQUIRE(loaded.has_value());
  CHECK(loaded->arch == "gfx1100");
  CHECK_FALSE(loaded->hasAssembly());
  const std::string &text = loaded->assembly();
  CHECK(text.find("vector_add:") != std::string::npos);
  CHECK(text.find("s_endpgm") != std::string::npos);
  CHECK(text.find(".amdhsa_wavefront_size32 1") != std::string::npos); // made for its target
  CHECK(loaded->hasAssembly());
  // The module's text (here the module is text already) comes the same way.
  CHECK_FALSE(loaded->hasLlvmIR());
  CHECK(loaded->llvmIR() == k.llvmModule);
  // A kernel with no text and no way to make it says so.
  CHECK_THROWS_WITH_AS(k.assembly(), "kernel 'vector_add' has no assembly and no way to make it", tessel::Error);
  CHECK_THROWS_WITH_AS(k.llvmIR(), "kernel 'vector_add' has no LLVM IR text and no way to make it",
                       tessel::Error);
}

TEST_CASE("cache: a damaged entry is removed and reads as a miss") {
  fs::path dir = freshDirectory("damaged");
  DiskCache cache(dir.string());
  CompiledKernel k = sampleKernel();
  auto damage = [&](const char *file, bool truncate) {
    cache.store(kKey, k);
    REQUIRE(cache.load(kKey).has_value());
    fs::path path = dir / kKey / file;
    if (truncate) {
      fs::resize_file(path, fs::file_size(path) / 2);
    } else {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(17);
      char c = 0;
      f.read(&c, 1);
      c ^= 0x20;
      f.seekp(17);
      f.write(&c, 1);
    }
    CHECK_FALSE(cache.load(kKey).has_value());
    CHECK_FALSE(fs::exists(dir / kKey)); // removed, so the next store can replace it
  };
  for (const char *file : {"tile.mlir", "remarks", "kernel.bc", "kernel.s", "kernel.hsaco", "meta"}) {
    CAPTURE(file);
    damage(file, true);
    damage(file, false);
  }
  SUBCASE("an entry without a workgroup size (written by an older tessel) is a miss") {
    CompiledKernel bad = k;
    bad.blockSize = 0;
    cache.store(kKey, bad);
    CHECK_FALSE(cache.load(kKey).has_value());
    CHECK_FALSE(fs::exists(dir / kKey));
  }
  SUBCASE("a missing file") {
    cache.store(kKey, k);
    fs::remove(dir / kKey / "kernel.hsaco");
    CHECK_FALSE(cache.load(kKey).has_value());
  }
  // After damage, a store makes a good entry again.
  cache.store(kKey, k);
  auto loaded = cache.load(kKey);
  REQUIRE(loaded.has_value());
  checkSame(*loaded, k);
}

TEST_CASE("cache: an entry's files that are not regular files, or are huge, read as a miss without hanging") {
  fs::path dir = freshDirectory("hostile");
  DiskCache cache(dir.string());
  CompiledKernel k = sampleKernel();
  auto replace = [&](const char *file, auto &&make) {
    cache.store(kKey, k);
    REQUIRE(cache.load(kKey).has_value());
    fs::remove(dir / kKey / file);
    make(dir / kKey / file);
    auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(cache.load(kKey).has_value());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    CHECK_FALSE(fs::exists(dir / kKey)); // removed like any damaged entry
  };
  for (const char *file : {"meta", "kernel.hsaco"}) {
    CAPTURE(file);
    replace(file, [](const fs::path &p) { REQUIRE(::mkfifo(p.c_str(), 0600) == 0); });      // would block
    replace(file, [](const fs::path &p) { fs::create_symlink("/dev/zero", p); });         // endless
    replace(file, [](const fs::path &p) { fs::create_directory(p); });
    replace(file, [](const fs::path &p) {                                                  // 4 GiB, sparse
      std::ofstream(p).put('x');
      fs::resize_file(p, uint64_t(4) << 30);
    });
  }
  // A symlink to a good copy of the file is not tessel's either.
  cache.store(kKey, k);
  fs::rename(dir / kKey / "kernel.s", dir / "elsewhere.s");
  fs::create_symlink(dir / "elsewhere.s", dir / kKey / "kernel.s");
  CHECK_FALSE(cache.load(kKey).has_value());
  // And a good entry still round-trips.
  cache.store(kKey, k);
  auto loaded = cache.load(kKey);
  REQUIRE(loaded.has_value());
  checkSame(*loaded, k);
}

TEST_CASE("cache: concurrent writers never leave a corrupt entry") {
  fs::path dir = freshDirectory("concurrent");
  const int kWriters = 4, kRounds = 30, kKeys = 3;
  auto key = [](int i) { return DiskCache::entryKey(uint64_t(i), {}, "gfx942", 4, "race"); };
  auto writer = [&](int id) {
    DiskCache cache(dir.string());
    int bad = 0;
    for (int round = 0; round < kRounds; ++round) {
      int which = (round + id) % kKeys;
      if (auto got = cache.load(key(which))) {
        bad += got->hsaco != sampleKernel(which).hsaco || got->name != sampleKernel(which).name;
      } else {
        cache.store(key(which), sampleKernel(which));
      }
    }
    return bad;
  };
  SUBCASE("processes") {
    std::vector<pid_t> children;
    for (int id = 0; id < kWriters; ++id) {
      pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0)
        _exit(writer(id) == 0 ? 0 : 1);
      children.push_back(pid);
    }
    for (pid_t pid : children) {
      int status = 0;
      waitpid(pid, &status, 0);
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
  }
  SUBCASE("threads") {
    std::vector<std::thread> threads;
    std::vector<int> bad(kWriters, 0);
    for (int id = 0; id < kWriters; ++id)
      threads.emplace_back([&, id] { bad[id] = writer(id); });
    for (auto &t : threads)
      t.join();
    for (int b : bad)
      CHECK(b == 0);
  }
  DiskCache cache(dir.string());
  for (int i = 0; i < kKeys; ++i) {
    auto got = cache.load(key(i));
    REQUIRE(got.has_value());
    checkSame(*got, sampleKernel(i));
  }
  for (const auto &entry : fs::directory_iterator(dir))
    CHECK(entry.path().filename().string()[0] != '.');
}

TEST_CASE("cache: an unwritable directory falls back to memory") {
  // A path below a regular file: unwritable even for root, who writes anywhere.
  fs::path dir = freshDirectory("unwritable");
  std::ofstream(dir / "a-file") << "not a directory";
  DiskCache cache((dir / "a-file" / "cache").string());
  CHECK(cache.memoryOnly());
  CompiledKernel k = sampleKernel();
  cache.store(kKey, k);
  auto loaded = cache.load(kKey);
  REQUIRE(loaded.has_value());
  checkSame(*loaded, k);
}

namespace {
// Runs `body` in a child process (for process-wide settings: a file-size
// limit, another user); returns its exit status, or 128 + the signal that
// ended it.
template <class F> int inChild(F &&body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int status = 1;
    try {
      status = body();
    } catch (...) {
    }
    ::_exit(status);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool same(const CompiledKernel &a, const CompiledKernel &b) {
  return a.name == b.name && a.llvmModule == b.llvmModule && a.hsaco == b.hsaco && a.assembly() == b.assembly() &&
         a.blockSize == b.blockSize;
}
} // namespace

TEST_CASE("cache: entries swapped between folders are misses and are rebuilt") {
  fs::path dir = freshDirectory("swapped");
  DiskCache cache(dir.string());
  const std::string other = DiskCache::entryKey(0x5678, {}, "gfx942", 4, "tessel-test");
  CompiledKernel a = sampleKernel(1), b = sampleKernel(2);
  a.kernargs = b.kernargs; // same kernarg size: nothing else tells them apart
  cache.store(kKey, a);
  cache.store(other, b);
  fs::rename(dir / kKey, dir / "swap");
  fs::rename(dir / other, dir / kKey);
  fs::rename(dir / "swap", dir / other);
  CHECK_FALSE(cache.load(kKey).has_value());
  CHECK_FALSE(cache.load(other).has_value());
  CHECK_FALSE(fs::exists(dir / kKey)); // removed, so the next store rebuilds it
  cache.store(kKey, a);
  auto again = cache.load(kKey);
  REQUIRE(again.has_value());
  checkSame(*again, a);
  // An entry under its own key but for another kernel name is a miss too.
  CHECK(cache.load(kKey, a.name).has_value());
  CHECK_FALSE(cache.load(kKey, "some_other_kernel").has_value());
}

TEST_CASE("cache: a read-only cache directory is read (0 compiles); new kernels stay in memory") {
  fs::path dir = freshDirectory("readonly");
  const std::string other = DiskCache::entryKey(0x9abc, {}, "gfx942", 4, "tessel-test");
  {
    DiskCache warm(dir.string());
    warm.store(kKey, sampleKernel(3));
  }
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                           fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  // Root writes anywhere: the check runs as an unprivileged user then.
  int status = inChild([&] {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0))
      return 10;
    if (::access(dir.c_str(), W_OK) == 0)
      return 11; // still writable: the test would prove nothing
    DiskCache cache(dir.string());
    if (!cache.readsDisk() || !cache.memoryOnly())
      return 12;
    auto hit = cache.load(kKey);
    if (!hit || !same(*hit, sampleKernel(3)))
      return 13;
    cache.store(other, sampleKernel(4));
    auto fromMemory = cache.load(other);
    if (!fromMemory || !same(*fromMemory, sampleKernel(4)))
      return 14;
    return fs::exists(dir / other) ? 15 : 0;
  });
  fs::permissions(dir, fs::perms::owner_all);
  CHECK(status == 0);
}

TEST_CASE("cache: a write past the file-size limit keeps the kernel in memory, without SIGXFSZ") {
  fs::path dir = freshDirectory("fsize");
  int status = inChild([&] {
    struct rlimit limit = {1000, 1000}; // the sample's files are larger
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0)
      return 20;
    DiskCache cache(dir.string());
    if (cache.memoryOnly())
      return 21;
    cache.store(kKey, sampleKernel(5));
    if (!cache.memoryOnly())
      return 22;
    auto k = cache.load(kKey);
    if (!k || !same(*k, sampleKernel(5)))
      return 23;
    // Nothing half-written stays behind.
    for (const auto &entry : fs::directory_iterator(dir))
      if (entry.path().filename().string()[0] == '.')
        return 24;
    return 0;
  });
  CHECK(status == 0); // 128 + SIGXFSZ (153) if the signal killed it
}

TEST_CASE("cache: temporary folders of writers that died are removed; a live writer's stay") {
  fs::path dir = freshDirectory("stale");
  pid_t dead = ::fork();
  if (dead == 0)
    ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const auto old = fs::file_time_type::clock::now() - std::chrono::minutes(30);
  auto make = [&](const std::string &name, bool isOld) {
    fs::create_directories(dir / name);
    std::ofstream(dir / name / "kernel.bc") << "partial";
    if (isOld)
      fs::last_write_time(dir / name, old);
  };
  const std::string deadTmp = ".tmp-" + kKey + "-" + std::to_string(dead) + "-0";
  const std::string deadTrash = ".trash-" + kKey + "-" + std::to_string(dead) + "-3";
  const std::string youngTmp = ".tmp-" + kKey + "-" + std::to_string(dead) + "-1";
  const std::string liveTmp = ".tmp-" + kKey + "-" + std::to_string(::getppid()) + "-0";
  make(deadTmp, true);
  make(deadTrash, true);
  make(youngTmp, false);
  make(liveTmp, true);
  DiskCache cache(dir.string());
  CHECK_FALSE(fs::exists(dir / deadTmp));
  CHECK_FALSE(fs::exists(dir / deadTrash));
  CHECK(fs::exists(dir / youngTmp)); // may still be being written
  CHECK(fs::exists(dir / liveTmp));  // its writer is alive
}
