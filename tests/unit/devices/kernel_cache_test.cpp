// The launch path (KernelCache, which KernelRuntime wraps) with a stand-in
// compiler that returns a handwritten kernel module.
#include "tessel/runtime/kernel_cache.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tessel;
using namespace tessel::detail;
namespace fs = std::filesystem;

namespace {

const char *kScaleIR = R"(
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @scale(ptr addrspace(1) %x, i32 %n, float %factor) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %wg, 64
  %i = add i32 %base, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %exit
body:
  %i64 = sext i32 %i to i64
  %p = getelementptr float, ptr addrspace(1) %x, i64 %i64
  %v = load float, ptr addrspace(1) %p, align 4
  %s = fmul float %v, %factor
  store float %s, ptr addrspace(1) %p, align 4
  br label %exit
exit:
  ret void
}
)";

const std::vector<TraceArg> kScaleArgs = {{TraceArg::Pointer, DType::F32},
                                          {TraceArg::Int, DType::I32},
                                          {TraceArg::Float, DType::F32}};

int gCompiles = 0, gTraces = 0;
bool gCompileBrokenIR = false;
uint32_t gCompileBlockSize = 64; // what the stand-in compiler reports

CompiledKernel fakeCompile(const Trace &trace, const Specialization &spec, const CompileOptions &options) {
  ++gCompiles;
  CompiledKernel k;
  k.name = "scale";
  k.llvmModule = gCompileBrokenIR ? "this is not IR" : kScaleIR;
  k.tileIR = "// tile IR of " + trace.kernelName;
  k.setAssembly("; asm for " + options.arch);
  k.hsaco = {1, 2, 3};
  k.waveSize = 64;
  k.blockSize = gCompileBlockSize;
  k.kernargs = kernargLayout(trace.args);
  return k;
}

TraceRequest fakeTrace(const void *context) {
  ++gTraces;
  TraceRequest r;
  r.trace.kernelName = *static_cast<const std::string *>(context);
  r.trace.args = kScaleArgs;
  r.spec.args.resize(kScaleArgs.size());
  return r;
}

struct ScaleArgs {
  std::vector<uint8_t> bytes;
  ScaleArgs(float *x, int32_t n, float factor) {
    KernargLayout l = kernargLayout(kScaleArgs);
    bytes.resize(l.totalBytes);
    std::memcpy(&bytes[l.offsets[0]], &x, 8);
    std::memcpy(&bytes[l.offsets[1]], &n, 4);
    std::memcpy(&bytes[l.offsets[2]], &factor, 4);
  }
};

fs::path freshDirectory(const std::string &name) {
  fs::path dir = fs::path(TESSEL_BINARY_DIR) / "test-scratch" / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

KernelKey keyOf(std::initializer_list<uint64_t> words) {
  KernelKey k;
  for (uint64_t w : words)
    k.push(w);
  return k;
}

} // namespace

TEST_CASE("launch path: compile once, then memory hits; a new runtime hits the disk") {
  gCompiles = gTraces = 0;
  gCompileBrokenIR = false;
  fs::path dir = freshDirectory("launch");
  DiskCache disk(dir.string());
  Device dev = Device::emulator("gfx942");
  const std::string traceName = "scale";
  const int n = 100;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i)
    host[i] = float(i);
  auto x = dev.upload(host);
  ScaleArgs args(x.devicePtr(), n, 2.0f);
  const Dim3 grid{2, 1, 1};

  KernelCache cache("scale", &fakeCompile, "identity-1", &disk);
  cache.launch(dev, grid, {.num_warps = 1}, keyOf({1, 2}), args.bytes.data(), args.bytes.size(),
               &fakeTrace, &traceName);
  CHECK(cache.stats().compiles == 1);
  CHECK(cache.stats().memoryHits == 0);
  CHECK(cache.stats().diskHits == 0);
  cache.launch(dev, grid, {.num_warps = 1}, keyOf({1, 2}), args.bytes.data(), args.bytes.size(),
               &fakeTrace, &traceName);
  CHECK(cache.stats().launches == 2);
  CHECK(cache.stats().memoryHits == 1);
  CHECK(gTraces == 1); // a hit does not trace
  CHECK(gCompiles == 1);
  std::vector<float> got = x.download();
  for (int i = 0; i < n; ++i)
    REQUIRE(got[i] == float(i) * 4.0f);
  REQUIRE(cache.lastKernel() != nullptr);
  CHECK(cache.lastKernel()->name == "scale");

  SUBCASE("a second runtime (another process) finds the kernel on disk") {
    KernelCache second("scale", &fakeCompile, "identity-1", &disk);
    second.launch(dev, grid, {.num_warps = 1}, keyOf({1, 2}), args.bytes.data(),
                  args.bytes.size(), &fakeTrace, &traceName);
    CHECK(second.stats().diskHits == 1);
    CHECK(second.stats().compiles == 0);
    CHECK(gCompiles == 1);
    CHECK(x.download()[3] == 3.0f * 8.0f);
  }
  SUBCASE("another compiler identity does not reuse the entry") {
    KernelCache other("scale", &fakeCompile, "identity-2", &disk);
    other.launch(dev, grid, {.num_warps = 1}, keyOf({1, 2}), args.bytes.data(), args.bytes.size(),
                 &fakeTrace, &traceName);
    CHECK(other.stats().compiles == 1);
  }
  SUBCASE("a damaged disk entry is recompiled") {
    for (const auto &entry : fs::directory_iterator(dir))
      fs::resize_file(entry.path() / "kernel.bc", 10);
    KernelCache second("scale", &fakeCompile, "identity-1", &disk);
    second.launch(dev, grid, {.num_warps = 1}, keyOf({1, 2}), args.bytes.data(),
                  args.bytes.size(), &fakeTrace, &traceName);
    CHECK(second.stats().compiles == 1);
    CHECK(second.stats().diskHits == 0);
  }
  SUBCASE("another key or another device is another kernel") {
    cache.launch(dev, grid, {.num_warps = 1}, keyOf({1, 3}), args.bytes.data(), args.bytes.size(),
                 &fakeTrace, &traceName);
    CHECK(cache.stats().diskHits == 1); // same trace and specialization: same disk entry
    Device other = Device::emulator("gfx90a"); // Device::emulator("gfx942") is `dev` itself
    REQUIRE(other.shared() != dev.shared());
    cache.launch(other, grid, {.num_warps = 1}, keyOf({1, 2}), args.bytes.data(),
                 args.bytes.size(), &fakeTrace, &traceName);
    CHECK(cache.stats().compiles == 2); // another target: another disk entry
    CHECK(cache.stats().memoryHits == 1);
  }
  SUBCASE("kernarg bytes that do not match the layout are an error") {
    CHECK_THROWS_WITH_AS(cache.launch(dev, grid, {.num_warps = 1}, keyOf({1, 2}),
                                      args.bytes.data(), 8, &fakeTrace, &traceName),
                         doctest::Contains("kernel 'scale': the launch passed 8 bytes of arguments "
                                           "but the kernel's layout has 16"),
                         Error);
  }
}

TEST_CASE("launch path: a kernel that does not load names itself") {
  gCompileBrokenIR = true;
  fs::path dir = freshDirectory("broken");
  DiskCache disk(dir.string());
  Device dev = Device::emulator();
  const std::string traceName = "broken";
  KernelCache cache("scale", &fakeCompile, "identity-1", &disk);
  uint8_t bytes[16] = {};
  CHECK_THROWS_WITH_AS(cache.launch(dev, {1, 1, 1}, {}, keyOf({7}), bytes, 16, &fakeTrace, &traceName),
                       doctest::Contains("loading kernel 'scale' on emulator (gfx942): "), Error);
  gCompileBrokenIR = false;
}

TEST_CASE("launch path: a kernel compiled with a bad workgroup size is an error and never cached") {
  gCompiles = 0;
  fs::path dir = freshDirectory("blocksize");
  DiskCache disk(dir.string());
  Device dev = Device::emulator("gfx942");
  const std::string traceName = "scale";
  auto x = dev.upload(std::vector<float>(64, 1.0f));
  ScaleArgs args(x.devicePtr(), 64, 3.0f);
  for (uint32_t bad : {0u, 2048u}) {
    gCompileBlockSize = bad;
    KernelCache cache("scale", &fakeCompile, "identity-1", &disk);
    const std::string size = std::to_string(bad);
    CHECK_THROWS_WITH_AS(cache.launch(dev, {1, 1, 1}, {.num_warps = 1}, keyOf({9}), args.bytes.data(),
                                      args.bytes.size(), &fakeTrace, &traceName),
                         doctest::Contains(("kernel 'scale' was compiled for num_warps = 1 with a workgroup of " +
                                            size + " threads").c_str()),
                         Error);
    CHECK(fs::is_empty(dir)); // nothing stored
  }
  CHECK(gCompiles == 2);
  // A good compile afterwards is a compile (nothing bad was cached), then works.
  gCompileBlockSize = 64;
  KernelCache cache("scale", &fakeCompile, "identity-1", &disk);
  cache.launch(dev, {1, 1, 1}, {.num_warps = 1}, keyOf({9}), args.bytes.data(), args.bytes.size(), &fakeTrace,
               &traceName);
  CHECK(cache.stats().compiles == 1);
  CHECK(x.download()[0] == 3.0f);
}

TEST_CASE("launch path: a key past its capacity is an error") {
  KernelKey key;
  for (size_t i = 0; i < KernelKey::kCapacity; ++i)
    key.push(i);
  CHECK_THROWS_WITH_AS(key.push(1), doctest::Contains("more than 48 words"), Error);
  KernelKey a = keyOf({1, 2}), b = keyOf({1, 2}), c = keyOf({1, 2, 0});
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  CHECK_FALSE(a == c);
}

TEST_CASE("launch path: dry launches measure the host cost of a cached launch") {
  fs::path dir = freshDirectory("dry");
  DiskCache disk(dir.string());
  Device dev = Device::emulator();
  const std::string traceName = "scale";
  auto x = dev.upload(std::vector<float>(64, 1.0f));
  ScaleArgs args(x.devicePtr(), 64, 3.0f);
  KernelCache cache("scale", &fakeCompile, "identity-1", &disk);
  const KernelKey key = keyOf({5, 6, 7});
  cache.launch(dev, {1, 1, 1}, {}, key, args.bytes.data(), args.bytes.size(), &fakeTrace, &traceName);
  CHECK(x.download()[0] == 3.0f);
  setDryLaunches(true);
  const int iterations = 200000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i)
    cache.launch(dev, {1, 1, 1}, {}, key, args.bytes.data(), args.bytes.size(), &fakeTrace, &traceName);
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  setDryLaunches(false);
  MESSAGE("host cost of a cached launch: " << ns / iterations << " ns");
  CHECK(x.download()[0] == 3.0f); // dry launches did not run the kernel
  CHECK(cache.stats().memoryHits == uint64_t(iterations));
  CHECK(ns / iterations < 5000);
}
