// Counter-based random numbers (random.hpp) and umulhi on the emulator for
// gfx942 (wave64) and gfx1100 (wave32): the words equal a host Philox4x32
// written here from the paper (checked first against Random123's published
// answers) bit for bit, rand exactly, randn within the f32 rounding of its
// transcendental functions; seeded dropout keeps 1 - p of the elements.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <array>
#include <cmath>

using namespace tessel;
using namespace e2e;

namespace {

// ---- the host reference ----------------------------------------------------

using Words = std::array<uint32_t, 4>;

// Philox4x32 with `rounds` rounds (Salmon et al., SC'11): round r uses the key
// plus r times the Weyl increments; each round multiplies counter words 0 and
// 2 by the round constants (64-bit products), swaps the halves around and
// mixes in the key.
Words hostPhilox(Words ctr, std::array<uint32_t, 2> key, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    const uint32_t k0 = key[0] + uint32_t(r) * 0x9E3779B9u, k1 = key[1] + uint32_t(r) * 0xBB67AE85u;
    const uint64_t p0 = uint64_t(0xD2511F53u) * ctr[0];
    const uint64_t p1 = uint64_t(0xCD9E8D57u) * ctr[2];
    ctr = Words{uint32_t(p1 >> 32) ^ ctr[1] ^ k0, uint32_t(p1), uint32_t(p0 >> 32) ^ ctr[3] ^ k1, uint32_t(p0)};
  }
  return ctr;
}

// What random.hpp promises for a seed's value and an offset.
Words hostWords(int64_t seed, int64_t offset, bool wideOffset, int rounds) {
  const uint64_t s = uint64_t(seed), o = uint64_t(offset);
  return hostPhilox({uint32_t(o), wideOffset ? uint32_t(o >> 32) : 0u, 0u, 0u}, {uint32_t(s), uint32_t(s >> 32)},
                    rounds);
}

float hostUniform(uint32_t w) { return float(double(w >> 8) / 16777216.0); } // exact
// Box-Muller in float64 from the words the device used: the device's only
// differences are f32 roundings of log, sqrt, cos, sin and 2 pi v.
std::array<double, 2> hostNormals(uint32_t w0, uint32_t w1) {
  double u = double((w0 >> 8) + 1) / 16777216.0, v = double(w1 >> 8) / 16777216.0;
  double r = std::sqrt(-2.0 * std::log(u)), t = double(6.28318530717958647692f) * v;
  return {r * std::cos(t), r * std::sin(t)};
}

// Random123's known-answer vectors (D. E. Shaw Research, Random123 1.x,
// tests/kat_vectors, the rows "philox4x32 7" and "philox4x32 10": counter,
// key, expected output, hexadecimal words).
struct Kat {
  int rounds;
  Words ctr;
  std::array<uint32_t, 2> key;
  Words out;
};
const Kat kKats[] = {
    {7, {0, 0, 0, 0}, {0, 0}, {0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48}},
    {7, {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662}},
    {7, {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a}},
    {10, {0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {10, {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {10, {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

// ---- kernels -----------------------------------------------------------------

// Every generator of random.hpp at offsets loaded from `offsets`. Seed is i64,
// i32 or Const<int64_t> (a literal in the trace).
template <class Seed, class Off>
void all_random(Seed seed, Ptr<Off> offsets, Ptr<i32> words, Ptr<i32> word0, Ptr<f32> uniforms, Ptr<f32> uniform0,
                Ptr<f32> normals, Ptr<f32> normal0, i32 n, Const<int> ROUNDS, Const<int> BLOCK) {
  auto i = program_id(0) * BLOCK + arange(0, BLOCK);
  auto m = i < n;
  auto o = load(offsets + i, m);
  auto w = randint4x(seed, o, ROUNDS);
  auto u = rand4x(seed, o, ROUNDS);
  auto z = randn4x(seed, o, ROUNDS);
  for (int k = 0; k < 4; ++k) {
    store(words + i * 4 + k, w[k], m);
    store(uniforms + i * 4 + k, u[k], m);
    store(normals + i * 4 + k, z[k], m);
  }
  store(word0 + i, randint(seed, o, ROUNDS), m);
  store(uniform0 + i, rand(seed, o, ROUNDS), m);
  store(normal0 + i, randn(seed, o, ROUNDS), m);
}

template <class E> void mul_high(Ptr<E> a, Ptr<E> b, Ptr<E> hi, Ptr<E> hiLiteral, i32 n, Const<int> BLOCK) {
  auto i = program_id(0) * BLOCK + arange(0, BLOCK);
  auto m = i < n;
  auto x = load(a + i, m), y = load(b + i, m);
  store(hi + i, umulhi(x, y), m);
  if constexpr (std::is_same_v<E, int32_t>)
    store(hiLiteral + i, umulhi(0xD2511F53u, x), m); // an unsigned literal: its bits
  else
    store(hiLiteral + i, umulhi(x, 0xD2511F53CD9E8D57ull), m);
}

// A product of small values as a reduction whose combine is umulhi:
// (a 2^16) (b 2^16) = a b 2^32, so the high word is a b while it fits 16 bits.
void product_by_umulhi(Ptr<i32> x, Ptr<i32> out, Const<int> BLOCK) {
  auto v = load(x + arange(0, BLOCK));
  store(out, reduce(v, 0, [](i32 a, i32 b) { return umulhi(a << 16, b << 16); }));
}

void seeded_dropout(Ptr<f32> x, Ptr<f32> out, i32 n, f32 p, i64 seed, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto m = offs < n;
  auto v = load(x + offs, m);
  auto keep = rand(seed, offs) > p;
  store(out + offs, where(keep, v / (1.0f - p), 0.0f), m);
}

// ---- helpers -----------------------------------------------------------------

template <class T> Buffer<T> poisonedOn(Device &dev, size_t n) {
  std::vector<T> junk(n);
  std::memset(static_cast<void *>(junk.data()), 0xA5, n * sizeof(T));
  return dev.upload(junk);
}

struct Outputs {
  std::vector<int32_t> words, word0;
  std::vector<float> uniforms, uniform0, normals, normal0;
};

template <class K, class SeedArg, class Off>
Outputs runAll(K &kernel, Device &dev, SeedArg seed, const std::vector<Off> &offs, int rounds, int block) {
  const int n = int(offs.size());
  auto o = dev.upload(offs);
  auto words = poisonedOn<int32_t>(dev, size_t(n) * 4), word0 = poisonedOn<int32_t>(dev, n);
  auto uniforms = poisonedOn<float>(dev, size_t(n) * 4), uniform0 = poisonedOn<float>(dev, n);
  auto normals = poisonedOn<float>(dev, size_t(n) * 4), normal0 = poisonedOn<float>(dev, n);
  kernel.launch(dev, {cdiv(n, block)}, {.num_warps = 4}, seed, o, words, word0, uniforms, uniform0, normals, normal0,
                n, rounds, block);
  return {words.download(), word0.download(), uniforms.download(), uniform0.download(), normals.download(),
          normal0.download()};
}

// Checks one run against the host; returns the largest |randn - float64|
// relative to 1 + r (the radius, which scales every rounding error).
double checkAgainstHost(const Outputs &got, int64_t seed, const std::vector<int64_t> &offs, bool wideOffset,
                        int rounds) {
  size_t wrongWords = 0, wrongWord0 = 0, wrongUniforms = 0, wrongUniform0 = 0, wrongNormal0 = 0;
  double worst = 0;
  for (size_t i = 0; i < offs.size(); ++i) {
    Words w = hostWords(seed, offs[i], wideOffset, rounds);
    for (int k = 0; k < 4; ++k) {
      wrongWords += uint32_t(got.words[i * 4 + k]) != w[k];
      wrongUniforms += got.uniforms[i * 4 + k] != hostUniform(w[k]);
    }
    wrongWord0 += uint32_t(got.word0[i]) != w[0];
    wrongUniform0 += got.uniform0[i] != hostUniform(w[0]);
    for (int pair = 0; pair < 2; ++pair) {
      std::array<double, 2> z = hostNormals(w[2 * pair], w[2 * pair + 1]);
      double r = std::hypot(z[0], z[1]);
      for (int k = 0; k < 2; ++k)
        worst = std::max(worst, std::abs(got.normals[i * 4 + 2 * pair + k] - z[k]) / (1 + r));
    }
    wrongNormal0 += got.normal0[i] != got.normals[i * 4]; // randn is randn4x's first, computed alike
  }
  CHECK(wrongWords == 0);
  CHECK(wrongWord0 == 0);
  CHECK(wrongUniforms == 0);
  CHECK(wrongUniform0 == 0);
  CHECK(wrongNormal0 == 0);
  return worst;
}

// f32 log, sqrt, cos, sin and the rounding of 2 pi v are each within a few
// 2^-24 relative; with |t| < 6.3 and r < 5.8 the sum stays below 1e-6 (1 + r).
constexpr double kNormalTolerance = 1e-6;

std::vector<int64_t> widen(const auto &v) { return std::vector<int64_t>(v.begin(), v.end()); }

} // namespace

TEST_CASE("the host Philox4x32 reproduces Random123's known answers") {
  for (const Kat &k : kKats) {
    CAPTURE(k.rounds);
    CHECK(hostPhilox(k.ctr, k.key, k.rounds) == k.out);
  }
}

TEST_CASE("randint4x, randint, rand4x, rand, randn4x and randn equal the host Philox on gfx942 and gfx1100") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    double worst = 0;
    // An i64 seed (high words set and not), int32_t offsets anywhere in range.
    {
      auto kernel = jit(all_random<i64, int32_t>, "all_random_i64_i32");
      std::vector<int32_t> offs = randomInts<int32_t>(1000, INT32_MIN, INT32_MAX);
      offs[17] = 0;
      for (int64_t seed : {int64_t(0), int64_t(42), int64_t(0x123456789abcdef0), int64_t(-3), INT64_MIN}) {
        CAPTURE(seed);
        worst = std::max(worst, checkAgainstHost(runAll(kernel, dev, seed, offs, 10, 256), seed, widen(offs), false, 10));
      }
      // 7 rounds, 777 offsets, a block that is not the tile size of the first.
      std::vector<int32_t> odd = randomInts<int32_t>(777, INT32_MIN, INT32_MAX);
      worst = std::max(worst, checkAgainstHost(runAll(kernel, dev, int64_t(0x7fffffff00000001), odd, 7, 128),
                                               0x7fffffff00000001, widen(odd), false, 7));
    }
    // int64_t offsets: the high word is the second counter word.
    {
      auto kernel = jit(all_random<i64, int64_t>, "all_random_i64_i64");
      std::vector<int64_t> offs = randomInts<int64_t>(777, INT64_MIN, INT64_MAX);
      offs[3] = 0;
      offs[4] = -1;
      offs[5] = int64_t(1) << 32;
      for (int64_t seed : {int64_t(7), int64_t(-0x0123456789abcdef)}) {
        CAPTURE(seed);
        worst = std::max(worst, checkAgainstHost(runAll(kernel, dev, seed, offs, 10, 256), seed, offs, true, 10));
      }
    }
    // An i32 seed is its value: a negative one has the high key word all ones.
    {
      auto kernel = jit(all_random<i32, int32_t>, "all_random_i32_i32");
      std::vector<int32_t> offs = randomInts<int32_t>(1000, -5000, 5000);
      for (int32_t seed : {int32_t(1234567), int32_t(-2)}) {
        CAPTURE(seed);
        worst = std::max(worst, checkAgainstHost(runAll(kernel, dev, seed, offs, 10, 256), seed, widen(offs), false, 10));
      }
    }
    // A literal seed (Const<int64_t>): the key is folded into the trace.
    {
      auto kernel = jit(all_random<Const<int64_t>, int32_t>, "all_random_literal_i32");
      std::vector<int32_t> offs = randomInts<int32_t>(1000, 0, 1 << 20);
      const int64_t seed = int64_t(0xfedcba9876543210ull);
      worst = std::max(worst, checkAgainstHost(runAll(kernel, dev, seed, offs, 10, 256), seed, widen(offs), false, 10));
      // Only per-element work is left: with the key known and the counter's
      // high words 0, round 1 multiplies once (c2 = 0), round 2 once (c0 is
      // the key), rounds 3-10 twice: 18 products for all six generators,
      // which share one Philox after CSE.
      const std::string &ir = kernel.runtime()->lastKernel()->tileIR;
      size_t products = 0;
      for (size_t at = ir.find("arith.mului_extended"); at != std::string::npos;
           at = ir.find("arith.mului_extended", at + 1))
        ++products;
      CHECK(products == 18);
    }
    MESSAGE(std::string(arch) << ": randn's largest difference from float64 is " << worst << " (1 + r)");
    CHECK(worst < kNormalTolerance);
    CHECK(worst > 0); // the comparison is live: f32 results differ from float64 somewhere
  }
}

TEST_CASE("Random123's all-zero known answer comes out of the device for seed 0 at offset 0") {
  Device dev = Device::emulator("gfx942");
  for (int rounds : {7, 10}) {
    CAPTURE(rounds);
    auto kernel = jit(all_random<i64, int64_t>, "all_random_i64_i64");
    Outputs got = runAll(kernel, dev, int64_t(0), std::vector<int64_t>{0, 0, 0}, rounds, 128);
    const Words want = rounds == 7 ? kKats[0].out : kKats[3].out;
    for (int k = 0; k < 4; ++k)
      CHECK(uint32_t(got.words[4 + k]) == want[k]);
  }
}

TEST_CASE("rand is uniform on [0, 1) and randn standard normal (moments over 100k offsets)") {
  Device dev = Device::emulator("gfx942");
  auto kernel = jit(all_random<i64, int32_t>, "all_random_i64_i32");
  const int n = 100003;
  std::vector<int32_t> offs(n);
  for (int i = 0; i < n; ++i)
    offs[i] = i;
  Outputs got = runAll(kernel, dev, int64_t(0x5eed), offs, 10, 1024);
  double sumU = 0, sumZ = 0, sumZ2 = 0, minU = 1, maxU = 0;
  for (float u : got.uniforms) {
    sumU += u;
    minU = std::min<double>(minU, u);
    maxU = std::max<double>(maxU, u);
  }
  for (float z : got.normals) {
    sumZ += z;
    sumZ2 += double(z) * z;
  }
  const double count = 4.0 * n;
  // 5 standard errors: uniform sd 1/sqrt(12); normal mean sd 1, variance sd sqrt(2).
  CHECK(std::abs(sumU / count - 0.5) < 5 * std::sqrt(1.0 / 12 / count));
  CHECK(minU >= 0);
  CHECK(maxU < 1);
  CHECK(maxU > 0.9999);
  CHECK(std::abs(sumZ / count) < 5 / std::sqrt(count));
  CHECK(std::abs(sumZ2 / count - 1) < 5 * std::sqrt(2 / count));
}

TEST_CASE("umulhi is the high half of the unsigned product (int32_t, int64_t) and is v_mul_hi_u32") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    const int n = 999;
    {
      std::vector<int32_t> ha = randomInts<int32_t>(n, INT32_MIN, INT32_MAX), hb = randomInts<int32_t>(n, INT32_MIN, INT32_MAX);
      ha[0] = -1, hb[0] = -1; // 0xffffffff^2: high word 0xfffffffe
      auto a = dev.upload(ha), b = dev.upload(hb);
      auto hi = poisonedOn<int32_t>(dev, n), hiLit = poisonedOn<int32_t>(dev, n);
      auto kernel = jit(mul_high<int32_t>, "mul_high_i32");
      kernel.launch(dev, {cdiv(n, 256)}, {}, a, b, hi, hiLit, n, 256);
      std::vector<int32_t> got = hi.download(), gotLit = hiLit.download();
      size_t wrong = 0;
      for (int i = 0; i < n; ++i) {
        wrong += uint32_t(got[i]) != uint32_t((uint64_t(uint32_t(ha[i])) * uint32_t(hb[i])) >> 32);
        wrong += uint32_t(gotLit[i]) != uint32_t((uint64_t(0xD2511F53u) * uint32_t(ha[i])) >> 32);
      }
      CHECK(wrong == 0);
      CHECK(got[0] == int32_t(0xfffffffe));
      const CompiledKernel &k = *kernel.runtime()->lastKernel();
      CHECK(contains(k.tileIR, "arith.mului_extended"));
      CHECK(contains(k.assembly(), "v_mul_hi_u32"));
    }
    {
      std::vector<int64_t> ha = randomInts<int64_t>(n, INT64_MIN, INT64_MAX), hb = randomInts<int64_t>(n, INT64_MIN, INT64_MAX);
      ha[0] = -1, hb[0] = -1;
      auto a = dev.upload(ha), b = dev.upload(hb);
      auto hi = poisonedOn<int64_t>(dev, n), hiLit = poisonedOn<int64_t>(dev, n);
      auto kernel = jit(mul_high<int64_t>, "mul_high_i64");
      kernel.launch(dev, {cdiv(n, 128)}, {}, a, b, hi, hiLit, n, 128);
      std::vector<int64_t> got = hi.download(), gotLit = hiLit.download();
      size_t wrong = 0;
      for (int i = 0; i < n; ++i) {
        using u128 = unsigned __int128;
        wrong += uint64_t(got[i]) != uint64_t((u128(uint64_t(ha[i])) * uint64_t(hb[i])) >> 64);
        wrong += uint64_t(gotLit[i]) != uint64_t((u128(0xD2511F53CD9E8D57ull) * uint64_t(ha[i])) >> 64);
      }
      CHECK(wrong == 0);
      CHECK(got[0] == int64_t(0xfffffffffffffffeull));
    }
  }
}

TEST_CASE("umulhi in a reduction's combine function") {
  // 64 values of 1 or 2 with 13 twos: the product 2^13 fits 16 bits throughout.
  std::vector<int32_t> hx(64, 1);
  for (int i = 0; i < 13; ++i)
    hx[size_t(randomInts<int>(1, 0, 63)[0])] = 2;
  int64_t want = 1;
  for (int32_t v : hx)
    want *= v;
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    auto x = dev.upload(hx);
    auto out = poisonedOn<int32_t>(dev, 1);
    jit<product_by_umulhi>().launch(dev, {1}, {.num_warps = 1}, x, out, 64);
    CHECK(out.download()[0] == want);
  }
}

TEST_CASE("seeded dropout keeps 1 - p of the elements (5 sigma), scales them by 1 / (1 - p), zeroes the rest") {
  const int n = 100003;
  const float p = 0.3f;
  std::vector<float> hx = randomFloats(n, 0.5f, 4.0f); // never 0, so a kept element is never 0
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    auto x = dev.upload(hx);
    auto kernel = jit<seeded_dropout>();
    auto run = [&](int64_t seed) {
      auto out = poisonedOn<float>(dev, n);
      kernel.launch(dev, {cdiv(n, 1024)}, {}, x, out, n, p, seed, 1024);
      return out.download();
    };
    const int64_t seed = 0x1234567890;
    std::vector<float> got = run(seed);
    size_t kept = 0, wrong = 0;
    for (int i = 0; i < n; ++i) {
      const bool keep = hostUniform(hostWords(seed, i, false, 10)[0]) > p;
      kept += keep;
      wrong += got[i] != (keep ? hx[i] / (1.0f - p) : 0.0f); // f32 division, correctly rounded
      wrong += keep && std::abs(double(got[i]) - hx[i] / (1.0 - double(p))) > 1.2e-7 * got[i];
    }
    CHECK(wrong == 0);
    const double mean = n * (1.0 - p), sigma = std::sqrt(n * p * (1.0 - p));
    CAPTURE(kept);
    CHECK(std::abs(double(kept) - mean) < 5 * sigma);
    // The same seed gives the same mask; another seed another one.
    CHECK(run(seed) == got);
    std::vector<float> other = run(seed + 1);
    size_t differ = 0;
    for (int i = 0; i < n; ++i)
      differ += (other[i] == 0) != (got[i] == 0);
    // Independent masks differ in 2 p (1 - p) of the elements.
    CHECK(std::abs(double(differ) - 2 * n * p * (1 - p)) < 5 * std::sqrt(n * 0.42 * 0.58));
  }
}

TEST_CASE("random errors found while tracing name the user's line") {
  Device dev = Device::emulator("gfx942");
  auto x = dev.upload(std::vector<float>(16, 1.0f));
  try {
    jit(+[](Ptr<f32> p, Const<int> ROUNDS) { store(p + arange(0, 16), rand(1, arange(0, 16), ROUNDS)); }, "bad_rounds")
        .launch(dev, {1}, {}, x, 0);
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(contains(e.what(), "random_test.cpp:"));
    CHECK(contains(e.what(), "rand: n_rounds = 0 is out of range: Philox4x32 takes 1 to 16 rounds (10 is the standard)"));
  }
}
