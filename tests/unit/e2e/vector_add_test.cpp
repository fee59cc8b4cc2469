// Vector add end to end: trace, specialize, lower, cache, run on the emulator.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace tessel;
using namespace e2e;

namespace {

void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

constexpr int kBlock = 1024;

// Runs vector_add over n elements with a fresh kernel object; returns it.
auto runVectorAdd(Device &dev, size_t n, unsigned numWarps = 4) {
  auto hx = randomFloats(n), hy = randomFloats(n);
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = poisoned<float>(n);
  auto add = jit<vector_add>();
  add.launch(dev, {cdiv(n, kBlock)}, {.num_warps = numWarps}, x, y, out, int(n), kBlock);
  std::vector<float> got = out.download();
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i)
    wrong += got[i] != float(double(hx[i]) + double(hy[i]));
  CHECK_MESSAGE(wrong == 0, "n = " << n << ": " << wrong << " wrong elements");
  return add;
}

const CompiledKernel &lastKernel(const auto &kernel) {
  REQUIRE(kernel.runtime() != nullptr);
  REQUIRE(kernel.runtime()->lastKernel() != nullptr);
  return *kernel.runtime()->lastKernel();
}

} // namespace

TEST_CASE("vector add matches the host at sizes that are and are not multiples of the block") {
  for (size_t n : {size_t(1), size_t(17), size_t(1000), size_t(1024), size_t(1025), size_t(98432),
                   size_t(100003)})
    runVectorAdd(emulator(), n);
}

TEST_CASE("vector add with n % 16 == 0 on gfx942: 16-byte global accesses at a scalar base, under one branch") {
  auto add = runVectorAdd(emulator(), 98432);
  const CompiledKernel &k = lastKernel(add);
  const std::string &s = k.assembly();
  // One 16-byte group per thread: the mask is one exec branch around all
  // three accesses, each the saddr form (the kernel argument in SGPRs plus a
  // 32-bit byte offset per lane), as hand-written HIP compiles to; no 64-bit
  // address arithmetic per lane and no buffer resource.
  const std::regex load(R"(global_load_dwordx4 v\[\d+:\d+\], v\d+, s\[\d+:\d+\])");
  const std::regex store(R"(global_store_dwordx4 v\d+, v\[\d+:\d+\], s\[\d+:\d+\])");
  CHECK(matchCount(s, load) == 2);
  CHECK(matchCount(s, store) == 1);
  CHECK(occurrences(s, "s_cbranch_execz") == 1);
  CHECK_FALSE(contains(s, "buffer_load"));
  CHECK_FALSE(contains(s, "v_lshl_add_u64"));
  CHECK_FALSE(contains(s, "v_add_co"));
  CHECK(contains(k.tileIR, "tessel.buffer_load"));
  CHECK(contains(k.tileIR, "tessel.divisibility = 16"));
  CHECK(contains(k.tileIR, "vec = 4"));
}

TEST_CASE("vector add with an odd n is specialized differently and still correct") {
  auto add = runVectorAdd(emulator(), 98433);
  const CompiledKernel &k = lastKernel(add);
  CHECK_FALSE(contains(k.assembly(), "buffer_load_dwordx4"));
  CHECK_FALSE(contains(k.assembly(), "global_load_dwordx4"));
  CHECK_FALSE(contains(k.tileIR, "vec = 4"));
}

TEST_CASE("masked vector add on every target: the host's sums at odd sizes, no branch where the mask is a range") {
  // With n % 16 != 0 each thread has 4 groups of 1 (gfx9: 256 threads) or
  // 8 (gfx11: 128 threads): buffer instructions whose range check is the
  // mask, no branch. With n % 16 == 0 gfx9 has one 16-byte group per thread
  // (one branch, as hand-written HIP), gfx11 two: buffer instructions again.
  struct Target {
    const char *arch, *load128;
    bool bufferWhenDivisible;
  };
  const Target targets[] = {{"gfx90a", "global_load_dwordx4", false},
                            {"gfx942", "global_load_dwordx4", false},
                            {"gfx950", "global_load_dwordx4", false},
                            {"gfx1100", "buffer_load_b128", true}};
  for (auto [arch, load128, bufferWhenDivisible] : targets) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    for (size_t n : {size_t(1), size_t(1000), size_t(3000), size_t(4103), size_t(4096), size_t(3008)}) {
      CAPTURE(n);
      auto hx = randomFloats(n), hy = randomFloats(n);
      auto x = dev.upload(hx), y = dev.upload(hy);
      auto out = dev.upload(std::vector<float>(n + 37, std::nanf("")));
      auto add = jit<vector_add>();
      add.launch(dev, {cdiv(n, kBlock)}, {.num_warps = 4}, x, y, out, int(n), kBlock);
      std::vector<float> got = out.download();
      size_t wrong = 0;
      for (size_t i = 0; i < n; ++i)
        wrong += got[i] != float(double(hx[i]) + double(hy[i]));
      CHECK(wrong == 0);
      for (size_t i = n; i < n + 37; ++i) // the masked-off tail wrote nothing
        CHECK(std::isnan(got[i]));
      const CompiledKernel &k = lastKernel(add);
      if (n % 16 == 0) {
        CHECK(contains(k.assembly(), load128));
        CHECK(occurrences(k.assembly(), "s_cbranch_execz") == (bufferWhenDivisible ? 0 : 1));
      } else if (n > 1) {
        CHECK(contains(k.assembly(), "buffer_load"));
        CHECK_FALSE(contains(k.assembly(), "s_cbranch_execz"));
      }
    }
  }
}

namespace {
// Rows with runtime strides: the offsets `rows * stride` have no bound the
// compiler can prove.
void scale_rows(Ptr<f32> in, Ptr<f32> out, i32 M, i32 N, i32 in_stride, i32 out_stride, Const<int> ROWS,
                Const<int> BLOCK) {
  auto rows = program_id(0) * ROWS + arange(0, ROWS);
  auto cols = arange(0, BLOCK);
  auto mask = expand_dims(rows < M, 1) & expand_dims(cols < N, 0);
  auto r = expand_dims(rows, 1);
  auto c = expand_dims(cols, 0);
  auto x = load(in + r * in_stride + c, mask, 0.0f);
  store(out + r * out_stride + c, x * 2.0f + 1.0f, mask);
}
} // namespace

TEST_CASE("strided rows: buffer instructions through a Buffer under 2 GiB, global ones through a raw address") {
  const int M = 37, N = 201, inStride = 203, outStride = 211, kRows = 4, kCols = 256;
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    auto hx = randomFloats(size_t(M) * inStride);
    auto in = dev.upload(hx);
    for (bool raw : {false, true}) {
      CAPTURE(raw);
      auto out = dev.upload(std::vector<float>(size_t(M) * outStride, std::nanf("")));
      auto kernel = jit<scale_rows>();
      if (raw)
        kernel.launch(dev, {cdiv(M, kRows)}, {.num_warps = 4}, in.devicePtr(), out.devicePtr(), M, N, inStride,
                      outStride, kRows, kCols);
      else
        kernel.launch(dev, {cdiv(M, kRows)}, {.num_warps = 4}, in, out, M, N, inStride, outStride, kRows, kCols);
      std::vector<float> got = out.download();
      size_t wrong = 0, touched = 0;
      for (int r = 0; r < M; ++r)
        for (int c = 0; c < outStride; ++c) {
          float v = got[size_t(r) * outStride + c];
          if (c < N)
            wrong += v != float(double(hx[size_t(r) * inStride + c]) * 2.0 + 1.0);
          else
            touched += !std::isnan(v); // padding between rows: never written
        }
      CHECK(wrong == 0);
      CHECK(touched == 0);
      const CompiledKernel &k = lastKernel(kernel);
      if (!raw) {
        CHECK(contains(k.tileIR, "tessel.pointer_range = 31"));
        CHECK(contains(k.tileIR, "tessel.buffer_load"));
        CHECK(contains(k.tileIR, "tessel.buffer_store"));
        CHECK_FALSE(contains(k.assembly(), "s_cbranch_execz"));
      } else { // nothing bounds a raw address's accesses: masked global instructions
        CHECK_FALSE(contains(k.tileIR, "tessel.pointer_range"));
        CHECK_FALSE(contains(k.tileIR, "tessel.buffer_load"));
        CHECK(contains(k.assembly(), "global_load"));
      }
    }
  }
}

TEST_CASE("n == 1 is specialized to a constant") {
  auto add = runVectorAdd(emulator(), 1);
  CHECK(contains(lastKernel(add).tileIR, "tessel.equal_to_one"));
}

TEST_CASE("every target compiles, links a code object with a kernel descriptor, and runs") {
  for (const char *arch : {"gfx90a", "gfx942", "gfx950", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    for (unsigned warps : {1u, 4u, 8u}) {
      auto add = runVectorAdd(dev, 5000 + warps, warps);
      const CompiledKernel &k = lastKernel(add);
      REQUIRE(k.hsaco.size() > 4);
      CHECK(std::string(k.hsaco.begin(), k.hsaco.begin() + 4) == "\x7f" "ELF");
      CHECK(contains(std::string(k.hsaco.begin(), k.hsaco.end()), "vector_add.kd"));
      CHECK(k.waveSize == (std::string(arch) == "gfx1100" ? 32u : 64u));
      CHECK(k.blockSize == warps * k.waveSize);
    }
  }
}

TEST_CASE("the second launch hits the memory cache, a new kernel object the disk cache") {
  Device &dev = emulator();
  size_t n = 4099;
  auto add = runVectorAdd(dev, n);
  auto hx = randomFloats(n), hy = randomFloats(n);
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = poisoned<float>(n);
  add.launch(dev, {cdiv(n, kBlock)}, {.num_warps = 4}, x, y, out, int(n), kBlock);
  CHECK(add.runtime()->stats().memoryHits == 1);
  CHECK(add.runtime()->stats().launches == 2);

  auto again = runVectorAdd(dev, n);
  CHECK(again.runtime()->stats().compiles == 0);
  CHECK(again.runtime()->stats().diskHits == 1);
}

TEST_CASE("a damaged disk cache entry is rebuilt") {
  const char *dir = std::getenv("TESSEL_CACHE_DIR");
  REQUIRE(dir != nullptr);
  size_t n = 3001; // a specialization no other test uses
  auto first = runVectorAdd(emulator(), n, 2);
  // Damage every file of every entry.
  int damaged = 0;
  for (auto &entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file())
      continue;
    std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.put('#');
    ++damaged;
  }
  REQUIRE(damaged > 0);
  auto second = runVectorAdd(emulator(), n, 2);
  CHECK(second.runtime()->stats().compiles == 1);
  CHECK(second.runtime()->stats().diskHits == 0);
}

TEST_CASE("a const kernel launches, on a device handle made in the call") {
  static const auto add = jit<vector_add>();
  size_t n = 333;
  auto hx = randomFloats(n), hy = randomFloats(n);
  auto x = emulator().upload(hx), y = emulator().upload(hy);
  auto out = poisoned<float>(n);
  add.launch(Device(emulator().shared()), {cdiv(n, kBlock)}, {}, x, y, out, int(n), kBlock);
  auto got = out.download();
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i)
    wrong += got[i] != hx[i] + hy[i];
  CHECK(wrong == 0);
}

TEST_CASE("stats() and lastCompiled() on the kernel object") {
  auto add = jit<vector_add>();
  CHECK(add.stats().launches == 0);
  CHECK(add.lastCompiled() == nullptr);
  size_t n = 100;
  auto x = emulator().upload(randomFloats(n)), y = emulator().upload(randomFloats(n));
  auto out = poisoned<float>(n);
  add.launch(emulator(), {1}, {}, x, y, out, int(n), kBlock);
  add.launch(emulator(), {1}, {}, x, y, out, int(n), kBlock);
  LaunchStats s = add.stats();
  CHECK(s.launches == 2);
  CHECK(s.memoryHits == 1);
  CHECK(s.compiles + s.diskHits == 1);
  REQUIRE(add.lastCompiled() != nullptr);
  CHECK(add.lastCompiled()->name == "vector_add");
}
