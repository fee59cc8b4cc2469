// TESSEL_DUMP selects what a compile prints (tile, llvm-dialect, llvm, asm);
// TESSEL_DUMP_DIR writes it to files, one set per specialization.
#include "e2e_common.hpp"
#include "../scoped_env.hpp"
#include "tessel/lowering/compile.hpp"

#include <filesystem>
#include <fstream>
#include <set>

using namespace tessel;
using namespace e2e;

namespace {

void scale(Ptr<f32> x, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  store(out + offs, load(x + offs, offs < n) * 3.0f, offs < n);
}

// One compile of `scale` for n (its specialization) on gfx942; what it printed.
std::string compileScale(int n, const std::string &log) {
  testing::ScopedEnv always("TESSEL_ALWAYS_COMPILE", "1");
  auto x = emulator().alloc<float>(256), out = emulator().alloc<float>(256);
  auto kernel = jit<scale>();
  return stderrOf(std::string(TESSEL_BINARY_DIR) + "/" + log, [&] {
    kernel.launch(emulator(), {1}, {.num_warps = 1}, x, out, n, 256);
  });
}

std::string fileText(const std::filesystem::path &p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace

TEST_CASE("TESSEL_DUMP=tile,asm prints the tile IR and the assembly, nothing else") {
  testing::ScopedEnv dump("TESSEL_DUMP", "tile,asm");
  testing::ScopedEnv dir("TESSEL_DUMP_DIR", nullptr);
  const std::string printed = compileScale(200, "dump-1.txt");
  CHECK(contains(printed, "// ----- tessel: tile IR after layouts and the LDS plan -----"));
  CHECK(contains(printed, "tessel.blocked"));
  CHECK(contains(printed, "// ----- tessel: AMDGPU assembly (gfx942) -----"));
  CHECK(contains(printed, ".amdhsa_kernel scale"));
  CHECK_FALSE(contains(printed, "per-thread LLVM dialect"));
  CHECK_FALSE(contains(printed, "(LLVM IR)"));
  CHECK_FALSE(contains(printed, "define amdgpu_kernel"));
}

TEST_CASE("TESSEL_DUMP=llvm-dialect,llvm and TESSEL_DUMP=1") {
  testing::ScopedEnv dir("TESSEL_DUMP_DIR", nullptr);
  {
    testing::ScopedEnv dump("TESSEL_DUMP", "llvm-dialect, llvm");
    const std::string printed = compileScale(200, "dump-2.txt");
    CHECK(contains(printed, "// ----- tessel: per-thread LLVM dialect -----"));
    CHECK(contains(printed, "llvm.func @scale"));
    CHECK(contains(printed, "// ----- tessel: the kernel module (LLVM IR) -----"));
    CHECK(contains(printed, "define amdgpu_kernel void @scale"));
    CHECK_FALSE(contains(printed, "tile IR"));
    CHECK_FALSE(contains(printed, "AMDGPU assembly"));
  }
  testing::ScopedEnv dump("TESSEL_DUMP", "1");
  const std::string printed = compileScale(200, "dump-3.txt");
  for (const char *banner : {"tile IR after", "per-thread LLVM dialect", "(LLVM IR)", "AMDGPU assembly"})
    CHECK_MESSAGE(contains(printed, banner), banner);
}

TEST_CASE("TESSEL_DUMP names an item that does not exist: a warning, once") {
  testing::ScopedEnv dump("TESSEL_DUMP", "tile,assembly");
  testing::ScopedEnv dir("TESSEL_DUMP_DIR", nullptr);
  const std::string printed = compileScale(200, "dump-4.txt");
  CHECK(contains(printed, "tessel: warning: TESSEL_DUMP names 'assembly', which is not one of tile, llvm-dialect, "
                          "llvm, asm, all"));
  CHECK(contains(printed, "tile IR after"));
}

TEST_CASE("TESSEL_DUMP_DIR writes the dumps to files, one set per specialization") {
  const std::filesystem::path dir = std::filesystem::path(TESSEL_BINARY_DIR) / "dump-dir-test";
  std::filesystem::remove_all(dir);
  testing::ScopedEnv where("TESSEL_DUMP_DIR", dir.c_str());
  {
    testing::ScopedEnv dump("TESSEL_DUMP", "llvm");
    const std::string printed = compileScale(200, "dump-5.txt");
    CHECK_FALSE(contains(printed, "define amdgpu_kernel")); // to the file, not stderr
  }
  std::set<std::string> files;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    files.insert(e.path().filename().string());
  REQUIRE(files.size() == 1);
  const std::string ll = *files.begin();
  CHECK(ll.starts_with("scale.gfx942."));
  CHECK(ll.ends_with(".ll"));
  CHECK(contains(fileText(dir / ll), "define amdgpu_kernel void @scale"));

  // The directory alone takes everything; n = 1 is another specialization.
  testing::ScopedEnv dump("TESSEL_DUMP", nullptr);
  compileScale(1, "dump-6.txt");
  files.clear();
  for (const auto &e : std::filesystem::directory_iterator(dir))
    files.insert(e.path().filename().string());
  CHECK(files.size() == 5);
  const std::string stem = [&] {
    for (const std::string &f : files)
      if (f.ends_with(".tile.mlir")) return f.substr(0, f.size() - std::string("tile.mlir").size());
    return std::string();
  }();
  REQUIRE_FALSE(stem.empty());
  CHECK(stem + "ll" != ll); // another specialization, another name
  CHECK(contains(fileText(dir / (stem + "tile.mlir")), "tessel.equal_to_one"));
  CHECK(contains(fileText(dir / (stem + "llvm-dialect.mlir")), "llvm.func @scale"));
  CHECK(contains(fileText(dir / (stem + "ll")), "define amdgpu_kernel void @scale"));
  CHECK(contains(fileText(dir / (stem + "s")), ".amdhsa_kernel scale"));
}

TEST_CASE("TESSEL_DUMP_DIR: launch options that change the code (waves_per_eu, direct-to-LDS) get dumps of their own") {
  const std::filesystem::path dir = std::filesystem::path(TESSEL_BINARY_DIR) / "dump-options-test";
  std::filesystem::remove_all(dir);
  testing::ScopedEnv where("TESSEL_DUMP_DIR", dir.c_str());
  testing::ScopedEnv dump("TESSEL_DUMP", "llvm");
  testing::ScopedEnv always("TESSEL_ALWAYS_COMPILE", "1");
  auto x = emulator().alloc<float>(256), out = emulator().alloc<float>(256);
  auto kernel = jit<scale>();
  auto count = [&] {
    size_t n = 0;
    for ([[maybe_unused]] const auto &e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
  };
  kernel.launch(emulator(), {1}, {.num_warps = 1}, x, out, 200, 256);
  CHECK(count() == 1);
  kernel.launch(emulator(), {1}, {.num_warps = 1, .waves_per_eu = 4}, x, out, 200, 256);
  CHECK(count() == 2);
  // The launch's memory cache would keep the kernel above: compile directly.
  const detail::TraceRequest request = kernel.trace(x, out, 200, 256);
  compileTrace(request.trace, request.spec, {.arch = "gfx942", .numWarps = 1, .directToLds = true, .wavesPerEu = 4});
  CHECK(count() == 3);
}
