// Launches tessel-compile's vector_add launchers through the fake HIP runtime
// (tests/fake_hip, linked in place of libamdhip64) and checks what reached
// hipModuleLaunchKernel: the kernel of the right arch and specialization, the
// grid, the block, the kernarg bytes and the stream. Built with a plain C++
// compiler against HIP's headers and the generated files only.
#include "vector_add.hpp"
#include "vector_add_gfx942.hpp"

#include "fake_hip.hpp"

#include <cstdio>
#include <cstring>
#include <string>

extern "C" const FakeHipLaunch *fakeHipLastLaunch();
extern "C" int fakeHipLiveModules();

namespace {

int failures = 0;

#define EXPECT(cond)                                                                  \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);       \
      ++failures;                                                                     \
    }                                                                                 \
  } while (0)

template <class T> T kernargAt(const FakeHipLaunch &l, size_t offset) {
  T v{};
  if (offset + sizeof v <= l.kernargBytes)
    std::memcpy(&v, l.kernarg + offset, sizeof v);
  return v;
}

// The last launch was `symbol` on `device` with a 1-D grid of `groups`, `block`
// threads, tessel's kernarg layout (x, y, out at 0, 8, 16; n at 24) and `stream`.
void expectLaunch(const char *symbol, int device, unsigned groups, unsigned block, const float *x, const float *y,
                  const float *out, int n, hipStream_t stream) {
  const FakeHipLaunch *l = fakeHipLastLaunch();
  EXPECT(l != nullptr);
  if (!l)
    return;
  EXPECT(std::string(l->kernel) == symbol);
  if (std::string(l->kernel) != symbol)
    std::fprintf(stderr, "  launched %s, expected %s\n", l->kernel, symbol);
  EXPECT(l->device == device);
  EXPECT(l->grid[0] == groups && l->grid[1] == 1 && l->grid[2] == 1);
  EXPECT(l->block[0] == block && l->block[1] == 1 && l->block[2] == 1);
  EXPECT(l->maxFlatWorkgroupSize == block);
  EXPECT(l->stream == static_cast<void *>(stream));
  EXPECT(!l->usedKernelParams);
  EXPECT(l->kernargBytes == 28);
  EXPECT(l->descriptorKernargSize == 28); // the code object agrees, without hidden arguments
  EXPECT(kernargAt<uint64_t>(*l, 0) == reinterpret_cast<uintptr_t>(x));
  EXPECT(kernargAt<uint64_t>(*l, 8) == reinterpret_cast<uintptr_t>(y));
  EXPECT(kernargAt<uint64_t>(*l, 16) == reinterpret_cast<uintptr_t>(out));
  EXPECT(kernargAt<int32_t>(*l, 24) == n);
}

} // namespace

int main() {
  const int modulesBefore = fakeHipLiveModules();
  float *x = nullptr, *y = nullptr, *out = nullptr;
  EXPECT(hipSetDevice(0) == hipSuccess);
  EXPECT(hipMalloc(reinterpret_cast<void **>(&x), 4096 * sizeof(float)) == hipSuccess);
  EXPECT(hipMalloc(reinterpret_cast<void **>(&y), 4096 * sizeof(float)) == hipSuccess);
  EXPECT(hipMalloc(reinterpret_cast<void **>(&out), 4096 * sizeof(float)) == hipSuccess);
  hipStream_t stream0 = nullptr, stream1 = nullptr;
  EXPECT(hipStreamCreate(&stream0) == hipSuccess);

  // Device 0 (gfx942, wave64): n % 16 == 0 and 16-byte aligned pointers take
  // the specialized variant; anything else the general one.
  EXPECT(tessel_aot::vector_add(dim3(1), stream0, x, y, out, 1008) == hipSuccess);
  expectLaunch("vector_add__16_16_16_16", 0, 1, 256, x, y, out, 1008, stream0);
  EXPECT(tessel_aot::vector_add(dim3(3), nullptr, x, y, out, 3001) == hipSuccess);
  expectLaunch("vector_add__x_x_x_x", 0, 3, 256, x, y, out, 3001, nullptr);
  EXPECT(tessel_aot::vector_add(dim3(1), stream0, x + 1, y, out, 1008) == hipSuccess);
  expectLaunch("vector_add__x_x_x_x", 0, 1, 256, x + 1, y, out, 1008, stream0);

  // Device 1 (gfx1100, wave32): its own code object, half the threads.
  EXPECT(hipSetDevice(1) == hipSuccess);
  EXPECT(hipStreamCreate(&stream1) == hipSuccess);
  EXPECT(tessel_aot::vector_add(dim3(4), stream1, x, y, out, 4096) == hipSuccess);
  expectLaunch("vector_add__16_16_16_16", 1, 4, 128, x, y, out, 4096, stream1);

  // A launcher compiled for gfx942 only, with one specialization.
  EXPECT(tessel_aot::vector_add_gfx942(dim3(1), stream1, x, y, out, 1008) == hipErrorNoBinaryForGpu);
  EXPECT(hipSetDevice(0) == hipSuccess);
  EXPECT(tessel_aot::vector_add_gfx942(dim3(1), stream0, x, y, out, 1001) == hipErrorInvalidValue);
  EXPECT(tessel_aot::vector_add_gfx942(dim3(2), stream0, x, y, out, 2048) == hipSuccess);
  expectLaunch("vector_add_gfx942__16_16_16_16", 0, 2, 256, x, y, out, 2048, stream0);
  // HIP's own error passes through: a stream of device 1 on device 0.
  EXPECT(tessel_aot::vector_add(dim3(1), stream1, x, y, out, 1008) != hipSuccess);

  // Modules: loaded once per (device, variant), all unloaded on request.
  EXPECT(fakeHipLiveModules() == modulesBefore + 4);
  if (fakeHipLiveModules() != modulesBefore + 4)
    std::fprintf(stderr, "  %d modules loaded\n", fakeHipLiveModules() - modulesBefore);
  EXPECT(tessel_aot::vector_add_unload() == hipSuccess);
  EXPECT(tessel_aot::vector_add_gfx942_unload() == hipSuccess);
  EXPECT(fakeHipLiveModules() == modulesBefore);
  EXPECT(tessel_aot::vector_add(dim3(1), stream0, x, y, out, 16) == hipSuccess); // loads again
  EXPECT(tessel_aot::vector_add_unload() == hipSuccess);

  EXPECT(hipStreamDestroy(stream0) == hipSuccess);
  EXPECT(hipStreamDestroy(stream1) == hipSuccess);
  EXPECT(hipFree(x) == hipSuccess);
  EXPECT(hipFree(y) == hipSuccess);
  EXPECT(hipFree(out) == hipSuccess);
  if (failures)
    std::fprintf(stderr, "%d expectations failed\n", failures);
  else
    std::printf("ahead-of-time vector_add: every launch as expected\n");
  return failures ? 1 : 0;
}
