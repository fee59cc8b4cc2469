// Tutorial 01: vector add.
//
// The first tessel program: add two vectors of 98432 floats. It shows the
// three things every tessel program has:
//   1. a *block program*: a C++ function over tiles that one program
//      instance (one GPU workgroup) runs;
//   2. a *kernel object* made from it with jit<>, traced and compiled the
//      first time it is launched with a new specialization, cached after;
//   3. a *device*: a HIP GPU when one is usable, else tessel's emulator,
//      which runs the very same compiled kernel module on the CPU.
//
// Build and run: scripts/tutorial.sh 01-vector-add

#include <tessel/tessel.hpp>

#include <cstdio>
#include <random>
#include <vector>

using namespace tessel;

// --- 1. The block program ----------------------------------------------------
//
// Parameters are typed: Ptr<f32> is a pointer to f32 in device memory, i32 a
// 32-bit integer passed at launch, and Const<int> a *trace-time constant*: its
// value is known while tracing, so it can size tiles. Changing it compiles a
// new kernel; changing n does not (except that tessel specializes on n % 16,
// see below).
void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  // Program instance p handles elements [p * BLOCK, (p + 1) * BLOCK).
  // arange(0, BLOCK) is a tile of BLOCK consecutive i32 (BLOCK must be a power
  // of two); adding a scalar broadcasts it, as in numpy or Triton.
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  // The last program may run past n: a mask keeps it inside.
  auto mask = offs < n;
  // Pointer + tile of offsets = tile of pointers. Masked-off lanes neither
  // load nor store.
  auto sum = load(x + offs, mask) + load(y + offs, mask);
  store(out + offs, sum, mask);
}
// Element types are checked by the C++ compiler: adding a Tile<float> to a
// Tile<int32_t> does not compile (cast<float>(...) says what you mean), and
// shapes are checked when tracing, with an error naming this file and line.

int main() {
  const int n = 98432;
  const int BLOCK = 1024;

  // --- 3. The device ---------------------------------------------------------
  // TESSEL_DEVICE=emulator|hip|auto chooses; auto (the default) falls back to
  // the emulator, saying why, when no GPU is usable.
  Device dev = Device::open();
  std::printf("device: %s\n", dev.name().c_str());

  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) {
    hx[i] = dist(gen);
    hy[i] = dist(gen);
  }
  Buffer<float> x = dev.upload(hx), y = dev.upload(hy);
  Buffer<float> out = dev.alloc<float>(n);

  // --- 2. The kernel object --------------------------------------------------
  // jit<vector_add>() names the kernel after the function. Nothing is traced
  // yet: launch() computes the specialization key from the arguments (here:
  // n % 16 == 0 and 16-byte aligned buffers, which let each thread move four
  // floats with one 128-bit access), finds the compiled kernel in memory or in
  // the disk cache ($TESSEL_CACHE_DIR, default ~/.cache/tessel), or traces,
  // compiles and caches it.
  auto add = jit<vector_add>();
  add.launch(dev, {cdiv(n, BLOCK)}, {.num_warps = 4}, x, y, out, n, BLOCK);

  // Check against the same computation on the host: the result is exact.
  std::vector<float> got = out.download();
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += got[i] != hx[i] + hy[i];
  const LaunchStats stats = add.stats();
  std::printf("vector_add over %d floats: %s (%d wrong)\n", n, wrong ? "MISMATCH" : "matches the host",
              wrong);
  std::printf("kernels compiled: %llu, loaded from the disk cache: %llu\n",
              (unsigned long long)stats.compiles, (unsigned long long)stats.diskHits);
  // Run it again in a new process: the kernel comes from the disk cache and
  // nothing is compiled. TESSEL_DUMP=1 prints the IR after every stage; the
  // cache entry's folder holds the tile IR, LLVM IR, AMDGPU assembly and
  // the .hsaco.
  return wrong ? 1 : 0;
}
