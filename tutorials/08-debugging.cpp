// Tutorial 08: debugging a kernel.
//
// A kernel that scales each element of x by a factor reads one element past
// the end of x: its mask is off by one. This lesson finds the bug with
// tessel's four debugging tools (Triton's tl.static_print, tl.static_assert,
// tl.device_assert, tl.device_print):
//   1. static_print and static_check, which run while the kernel is traced:
//      the shapes and constants the trace sees, and a check on a Const;
//   2. device_assert, compiled in with LaunchOptions::debug (or
//      TESSEL_DEBUG=1): the launch stops with a tessel::Error naming the
//      assert's line, the program and the element that broke it;
//   3. device_print, which shows the values a program holds: here the mask
//      of the program the assert named;
//   4. the fixed kernel, checked the same way, and its result;
//   5. TESSEL_DEBUG=1, which compiles the checks into every launch without
//      touching the code (run this program with it set).
//
// Build and run: scripts/tutorial.sh 08-debugging

#include <tessel/tessel.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace tessel;

// --- 1. The buggy kernel -------------------------------------------------------
//
// `offs <= n` should be `offs < n`: the element at offset n is past the end.
// On a GPU the read returns whatever lies there (or faults); the emulator's
// sanitizer would stop it too, but without the kernel's own words for it.
void scale(Ptr<f32> x, Ptr<f32> out, i32 n, f32 factor, Const<int> BLOCK) {
  // Trace time: what the trace sees, printed once per specialization.
  static_check(BLOCK % 16 == 0, "BLOCK must be a multiple of 16");
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  static_print("scale: BLOCK =", BLOCK, "offs:", offs);
  auto mask = offs <= n; // the bug
  // Run time, with debug on: every element the mask lets through is inside x.
  device_assert(!mask | (offs < n), "a masked-in offset is past n");
  store(out + offs, load(x + offs, mask) * factor, mask);
}

// --- 3. Looking at the mask -----------------------------------------------------
//
// The mask as the program holds it, one line per element:
//   pid (1, 0, 0) idx ( 4) in bounds: 1
void show_mask(i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  device_print("in bounds", offs <= n);
}

// --- 4. The fixed kernel ----------------------------------------------------------
void scale_fixed(Ptr<f32> x, Ptr<f32> out, i32 n, f32 factor, Const<int> BLOCK) {
  static_check(BLOCK % 16 == 0, "BLOCK must be a multiple of 16");
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  device_assert(!mask | (offs < n), "a masked-in offset is past n");
  store(out + offs, load(x + offs, mask) * factor, mask);
}

int main() {
  Device dev = Device::open();
  const int n = 20, BLOCK = 16;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i)
    host[size_t(i)] = 0.5f * float(i);
  auto x = dev.upload(host);
  auto out = dev.alloc<float>(n);
  int failures = 0;

  // 1. static_check stops a trace whose constants break it, with its line.
  auto buggy = jit<scale>();
  try {
    buggy.launch(dev, {2}, {.num_warps = 1}, x, out, n, 2.0f, 24);
    std::printf("BLOCK = 24 was accepted?\n");
    ++failures;
  } catch (const Error &e) {
    std::printf("1. %s\n", e.what());
  }

  // 2. With debug, the assert names the line, program and element.
  try {
    buggy.launch(dev, {cdiv(n, BLOCK)}, {.num_warps = 1, .debug = true}, x, out, n, 2.0f, BLOCK);
    std::printf("the buggy kernel passed its assert?\n");
    ++failures;
  } catch (const Error &e) {
    std::printf("2. %s\n", e.what());
  }

  // 3. The mask of program 1 (offsets 16 to 31): 1 for 16..20, one too many.
  std::printf("3. the mask, as each program holds it:\n");
  std::fflush(stdout);
  auto mask = jit<show_mask>();
  mask.launch(dev, {cdiv(n, BLOCK)}, {.num_warps = 1}, n, BLOCK);
  dev.synchronize();

  // 4. The fixed kernel passes its assert and scales every element.
  auto fixed = jit<scale_fixed>();
  fixed.launch(dev, {cdiv(n, BLOCK)}, {.num_warps = 1, .debug = true}, x, out, n, 2.0f, BLOCK);
  std::vector<float> result = out.download();
  for (int i = 0; i < n; ++i)
    if (result[size_t(i)] != 2.0f * host[size_t(i)]) {
      std::printf("out[%d] = %g, expected %g\n", i, result[size_t(i)], 2.0 * host[size_t(i)]);
      ++failures;
    }
  std::printf("4. the fixed kernel: %s\n", failures ? "wrong" : "every element scaled, no assert failed");

  // 5. With TESSEL_DEBUG=1 in the environment, a launch without .debug is
  // checked too (it is another specialization: another code object).
  if (const char *debug = std::getenv("TESSEL_DEBUG"); debug && std::strcmp(debug, "0") != 0) {
    try {
      buggy.launch(dev, {cdiv(n, BLOCK)}, {.num_warps = 1}, x, out, n, 2.0f, BLOCK);
      std::printf("TESSEL_DEBUG=1 did not check the launch\n");
      ++failures;
    } catch (const Error &e) {
      std::printf("5. with TESSEL_DEBUG=1: %s\n", e.what());
    }
  }

  const LaunchStats s1 = buggy.stats(), s2 = mask.stats(), s3 = fixed.stats();
  std::printf("kernels compiled: %llu, loaded from the disk cache: %llu\n",
              static_cast<unsigned long long>(s1.compiles + s2.compiles + s3.compiles),
              static_cast<unsigned long long>(s1.diskHits + s2.diskHits + s3.diskHits));
  return failures ? 1 : 0;
}
