// Tutorial 04: low-memory dropout.
//
// Dropout (Srivastava et al., 2014) zeroes each element of x with
// probability p while training and scales the survivors by 1 / (1 - p), so
// the expected output is x. The usual implementation draws a mask of n
// random bits, keeps it in memory, and reads it again in the backward pass.
// This lesson shows:
//   1. that naive dropout: a kernel that takes the mask as an input;
//   2. seeded dropout: the kernel *generates* its mask from a seed and each
//      element's offset with rand(seed, offsets), so nothing is stored;
//   3. why that works: tessel's random numbers are counter-based (Philox),
//      a pure function of (seed, offset), so the same seed gives the same
//      mask in every launch, and the backward pass regenerates it;
//   4. a different seed gives a different, independent mask.
// As in Triton's tutorial of the same name (tl.rand).
//
// Build and run: scripts/tutorial.sh 04-low-memory-dropout

#include <tessel/tessel.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

using namespace tessel;

// --- 1. Naive dropout: the mask is an input ----------------------------------
//
// x_keep[i] != 0 keeps element i. The mask costs n bytes of memory for as
// long as the backward pass needs it, and a read of those bytes here.
void dropout(Ptr<f32> x, Ptr<i8> x_keep, Ptr<f32> out, i32 n, f32 p, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask);
  auto keep = load(x_keep + offs, mask) != 0;
  store(out + offs, where(keep, v / (1.0f - p), 0.0f), mask);
}

// --- 2. Seeded dropout: the mask is regenerated ------------------------------
//
// rand(seed, offs) gives each element a float uniform in [0, 1): the top 24
// bits of Philox4x32-10 of the counter (offs, 0, 0, 0) under the key made of
// the seed's two 32-bit halves, times 2^-24. It depends on nothing but the
// seed and the offset: not on the block size, the number of warps, the
// program that computes it or the device. Element i is kept when its number
// is above p, which happens with probability 1 - p.
void seeded_dropout(Ptr<f32> x, Ptr<f32> out, i32 n, f32 p, i64 seed, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask);
  auto random = rand(seed, offs);
  auto keep = random > p;
  store(out + offs, where(keep, v / (1.0f - p), 0.0f), mask);
}

// The mask alone, as another kernel (another block size, too) would
// regenerate it: the backward pass multiplies the incoming gradient by this
// same mask, scaled, with no mask stored between the passes.
void dropout_mask(Ptr<i8> keep, i32 n, f32 p, i64 seed, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(keep + offs, cast<int8_t>(rand(seed, offs) > p), mask);
}

void printRow(const char *label, const std::vector<float> &v) {
  std::printf("%-18s", label);
  for (int i = 0; i < 8; ++i)
    std::printf(" %7.3f", v[i]);
  std::printf("\n");
}

int main() {
  const int n = 98432, BLOCK = 1024;
  const float p = 0.5f;
  Device dev = Device::open();
  std::printf("device: %s\n", dev.name().c_str());
  int failures = 0;

  std::mt19937 gen(4);
  std::uniform_real_distribution<float> dist(0.25f, 2.0f); // never 0: a zero output means dropped
  std::vector<float> hx(n);
  for (float &v : hx)
    v = dist(gen);
  Buffer<float> x = dev.upload(hx);

  // --- 1. Naive dropout with a mask made on the host --------------------------
  std::bernoulli_distribution keepDist(1.0 - p);
  std::vector<int8_t> hkeep(n);
  for (int8_t &k : hkeep)
    k = keepDist(gen);
  auto naive = jit<dropout>();
  Buffer<float> out = dev.alloc<float>(n);
  naive.launch(dev, {cdiv(n, BLOCK)}, {}, x, dev.upload(hkeep), out, n, p, BLOCK);
  std::vector<float> naiveOut = out.download();
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += naiveOut[i] != (hkeep[i] ? hx[i] / (1.0f - p) : 0.0f);
  printRow("input", hx);
  printRow("naive dropout", naiveOut);
  std::printf("naive dropout: %s (%d wrong); its mask took %d bytes\n\n", wrong ? "MISMATCH" : "matches the host",
              wrong, n);
  failures += wrong != 0;

  // --- 2-4. Seeded dropout ------------------------------------------------------
  // A new seed per training step does not mean a new kernel: the seed is a
  // runtime argument. Like every integer argument it is specialized on being
  // 1 or a multiple of 16, so seeds 123 and 512 use two compiled kernels, and
  // every other seed one of at most three.
  auto seeded = jit<seeded_dropout>();
  auto run = [&](int64_t seed) {
    Buffer<float> o = dev.alloc<float>(n);
    seeded.launch(dev, {cdiv(n, BLOCK)}, {}, x, o, n, p, seed, BLOCK);
    return o.download();
  };
  std::vector<float> a = run(123), again = run(123), other = run(512);
  printRow("seed 123", a);
  printRow("seed 123 again", again);
  printRow("seed 512", other);

  // Every element is either dropped (0) or kept and scaled, exactly as the
  // host computes x / (1 - p) in f32.
  int kept = 0, badValues = 0, differ = 0;
  for (int i = 0; i < n; ++i) {
    kept += a[i] != 0;
    badValues += a[i] != 0 && a[i] != hx[i] / (1.0f - p);
    differ += (a[i] != 0) != (other[i] != 0);
  }
  // The kept count is binomial(n, 1 - p): allow 5 standard deviations.
  const double sigma = std::sqrt(n * p * (1.0 - p));
  const bool fractionOk = std::abs(kept - n * (1.0 - p)) < 5 * sigma;
  std::printf("seed 123 kept %d of %d (%.4f; expected %.2f): %s\n", kept, n, double(kept) / n, 1.0 - p,
              fractionOk ? "within 5 sigma" : "MISMATCH");
  std::printf("kept values scaled by 1 / (1 - p): %s (%d wrong)\n", badValues ? "MISMATCH" : "exactly", badValues);
  std::printf("seed 123 twice: %s\n", a == again ? "the same mask" : "MISMATCH");
  // Independent masks disagree on 2 p (1 - p) of the elements.
  const bool independent = std::abs(differ - 2.0 * n * p * (1 - p)) < 5 * std::sqrt(n * 0.5 * 0.5);
  std::printf("seed 512: %d elements differ from seed 123 (%s)\n", differ,
              independent ? "an independent mask" : "MISMATCH");
  failures += !fractionOk + (badValues != 0) + (a != again) + !independent;

  // The backward pass regenerates the mask: another kernel, another block.
  auto maskOf = jit<dropout_mask>();
  Buffer<int8_t> keep = dev.alloc<int8_t>(n);
  maskOf.launch(dev, {cdiv(n, 256)}, {.num_warps = 2}, keep, n, p, int64_t(123), 256);
  std::vector<int8_t> regenerated = keep.download();
  int maskWrong = 0;
  for (int i = 0; i < n; ++i)
    maskWrong += (regenerated[i] != 0) != (a[i] != 0);
  std::printf("mask regenerated from seed 123 by another kernel: %s (%d wrong)\n",
              maskWrong ? "MISMATCH" : "the forward pass's", maskWrong);
  failures += maskWrong != 0;

  const LaunchStats s1 = naive.stats(), s2 = seeded.stats(), s3 = maskOf.stats();
  std::printf("kernels compiled: %llu, loaded from the disk cache: %llu\n",
              (unsigned long long)(s1.compiles + s2.compiles + s3.compiles),
              (unsigned long long)(s1.diskHits + s2.diskHits + s3.diskHits));
  // Exercises (as Triton's): extend the kernel to matrices with a seed per
  // row (rand(seed + row, cols)); implement the backward pass; use randn for
  // Gaussian noise. randint4x gives four 32-bit words per offset when one
  // element needs several random numbers.
  return failures ? 1 : 0;
}
