// The emulator's two forms of a kernel (issue 35): a wave per call with its
// lanes as host vectors, and a fiber per thread. Library and DSL kernels at
// odd sizes on wave64 (gfx942) and wave32 (gfx1100) run both ways
// (TESSEL_EMULATOR_PATH=waves, which fails unless the wave form runs, and
// =fibers): every output byte the same, the values against float64.
#include "e2e_common.hpp"

#include "../scoped_env.hpp"

#include <tessel/kernels/layer_norm.hpp>
#include <tessel/kernels/softmax.hpp>

#include <chrono>
#include <functional>

using namespace tessel;
using namespace e2e;
using tessel::testing::ScopedEnv;

namespace {

// Runs `launch` as waves, then as fibers, and returns the outputs each
// left (`outputs` downloads them as bytes).
using Bytes = std::vector<uint8_t>;
template <class T> Bytes bytesOf(const Buffer<T> &b) {
  std::vector<T> v = b.download();
  Bytes r(v.size() * sizeof(T));
  std::memcpy(r.data(), v.data(), r.size());
  return r;
}

std::pair<Bytes, Bytes> bothForms(const std::function<void()> &launch, const std::function<Bytes()> &outputs) {
  Bytes waves, fibers;
  {
    ScopedEnv path("TESSEL_EMULATOR_PATH", "waves");
    launch();
    waves = outputs();
  }
  {
    ScopedEnv path("TESSEL_EMULATOR_PATH", "fibers");
    launch();
    fibers = outputs();
  }
  return {waves, fibers};
}

// A reduction or scan of an R x C tile masked to M x N, along `AXIS`.
void reduce_tile(Ptr<f32> x, Ptr<f32> out, Ptr<i32> idx, i32 M, i32 N, Const<int> R, Const<int> C, Const<int> AXIS,
                 Const<int> KIND) {
  auto rows = arange(0, R), cols = arange(0, C);
  auto offs = expand_dims(rows, 1) * C + expand_dims(cols, 0);
  auto mask = expand_dims(rows < M, 1) & expand_dims(cols < N, 0);
  auto v = load(x + offs, mask, 0.0f);
  auto line = AXIS == 0 ? cols : rows;
  if (KIND == 0)
    store(out + line, sum(v, AXIS));
  else if (KIND == 1)
    store(out + line, max(v, AXIS));
  else if (KIND == 2)
    store(idx + line, argmax(v, AXIS));
  else
    store(out + offs, cumsum(v, AXIS), mask);
}

// The lockstep example: every lane reads x[8 * (i / 8)], then
// stores x[i]; on the GPU (one wave) all loads come first.
void read_then_store(Ptr<f32> x, Const<int> B) {
  auto i = arange(0, B);
  auto first = load(x + (i / 8) * 8);
  store(x + i, first + 100.0f);
}

// Compare-and-swap: outside the wave form.
void swap_zeros(Ptr<i32> words, Const<int> B) {
  auto offs = arange(0, B);
  atomic_cas(words + offs, full<int32_t>({B}, 0), full<int32_t>({B}, 1), offs < B);
}

// A 16 x 16 dot of two tiles (one wave): 16x16x32 fp8 MFMAs, whose operands
// and accumulator fit the wave form's limits.
template <class E> void small_dot(Ptr<E> a, Ptr<E> b, Ptr<f32> c, Const<int> K) {
  auto r = arange(0, 16), k = arange(0, K);
  auto ta = load(a + expand_dims(r, 1) * K + expand_dims(k, 0));
  auto tb = load(b + expand_dims(k, 1) * 16 + expand_dims(r, 0));
  store(c + expand_dims(r, 1) * 16 + expand_dims(r, 0), dot(ta, tb));
}

// y = x (bits moved), z = float(x), w = x * 2 (computed) for 16-bit floats.
// A tile carried through a loop and only moved: each turn takes the next
// block's element where (i + k) % 3 == 0 and keeps its own elsewhere.
template <class E> void carried_halves(Ptr<E> x, Ptr<E> y, i32 turns, Const<int> B) {
  auto offs = arange(0, B);
  auto v = load(x + offs);
  for_range(0, turns, [&](i32 k) { v = where((offs + k) % 3 == 0, load(x + (k + 1) * B + offs), v); });
  store(y + offs, v);
}
template <class E> void halves(Ptr<E> x, Ptr<E> y, Ptr<f32> z, Ptr<E> w, Const<int> B) {
  auto i = arange(0, B);
  auto v = load(x + i);
  store(y + i, v);
  store(z + i, cast<float>(v));
  store(w + i, v * 2.0);
}

// y = x * 3 - 1 over n elements, BLOCK a program: wave-form material.
void affine_rows(Ptr<f32> x, Ptr<f32> y, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  store(y + offs, load(x + offs, offs < n) * 3.0f - 1.0f, offs < n);
}
void affine_rows_primer(Ptr<f32> x, Ptr<f32> y, i32 n, Const<int> BLOCK) { affine_rows(x, y, n, BLOCK); }
void affine_rows_again(Ptr<f32> x, Ptr<f32> y, i32 n, Const<int> BLOCK) { affine_rows(x, y, n, BLOCK); }

} // namespace

TEST_CASE("emulator forms: softmax is the same bytes as waves and as fibers, wave64 and wave32") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    Device dev = Device::emulator(arch);
    for (auto [M, N] : {std::pair{37, 781}, std::pair{5, 100}, std::pair{3, 1025}}) {
      INFO(arch << " " << M << " x " << N);
      std::vector<float> hx = randomFloats(size_t(M) * N, -6, 6);
      auto x = dev.upload(hx);
      std::vector<float> junk(size_t(M) * N);
      std::memset(junk.data(), 0xA5, junk.size() * sizeof(float));
      auto y = dev.upload(junk);
      auto [waves, fibers] = bothForms([&] { kernels::softmax(dev, x, y, M, N, N, N); }, [&] { return bytesOf(y); });
      CHECK(waves == fibers);
      std::vector<float> got(waves.size() / 4);
      std::memcpy(got.data(), waves.data(), waves.size());
      double worst = 0;
      for (int r = 0; r < M; ++r) {
        double m = -INFINITY, s = 0;
        for (int c = 0; c < N; ++c)
          m = std::max(m, double(hx[size_t(r) * N + c]));
        for (int c = 0; c < N; ++c)
          s += std::exp(double(hx[size_t(r) * N + c]) - m);
        for (int c = 0; c < N; ++c)
          worst = std::max(worst, relError(got[size_t(r) * N + c], std::exp(double(hx[size_t(r) * N + c]) - m) / s));
      }
      CHECK(worst < 1e-5);
    }
  }
}

TEST_CASE("emulator forms: layer norm is the same bytes as waves and as fibers") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    Device dev = Device::emulator(arch);
    const int M = 13, N = 1000;
    INFO(arch);
    std::vector<float> hx = randomFloats(size_t(M) * N, -3, 3), hw = randomFloats(N, -2, 2), hb = randomFloats(N, -2, 2);
    auto x = dev.upload(hx), w = dev.upload(hw), b = dev.upload(hb);
    std::vector<float> junk(size_t(M) * N);
    std::memset(junk.data(), 0xA5, junk.size() * sizeof(float));
    auto y = dev.upload(junk);
    auto mean = dev.upload(std::vector<float>(size_t(M), -7.0f)), rstd = dev.upload(std::vector<float>(size_t(M), -7.0f));
    auto [waves, fibers] = bothForms([&] { kernels::layer_norm(dev, x, y, w, b, mean, rstd, M, N, N, N); }, [&] {
      Bytes all = bytesOf(y), m = bytesOf(mean), r = bytesOf(rstd);
      all.insert(all.end(), m.begin(), m.end());
      all.insert(all.end(), r.begin(), r.end());
      return all;
    });
    CHECK(waves == fibers);
    std::vector<float> got = y.download(), gotMean = mean.download();
    double worst = 0;
    for (int r = 0; r < M; ++r) {
      double mu = 0, var = 0;
      for (int c = 0; c < N; ++c)
        mu += hx[size_t(r) * N + c];
      mu /= N;
      for (int c = 0; c < N; ++c)
        var += (hx[size_t(r) * N + c] - mu) * (hx[size_t(r) * N + c] - mu);
      const double rs = 1 / std::sqrt(var / N + 1e-5);
      worst = std::max(worst, std::fabs(gotMean[size_t(r)] - mu));
      for (int c = 0; c < N; ++c)
        worst = std::max(worst, std::fabs(got[size_t(r) * N + c] - ((hx[size_t(r) * N + c] - mu) * rs * hw[size_t(c)] + hb[size_t(c)])));
    }
    CHECK(worst < 1e-4);
  }
}

TEST_CASE("emulator forms: reductions and scans are the same bytes as waves and as fibers") {
  auto kernel = jit<reduce_tile>();
  for (const char *arch : {"gfx942", "gfx1100"}) {
    Device dev = Device::emulator(arch);
    for (int kind = 0; kind < 4; ++kind)
      for (int axis = 0; axis < 2; ++axis)
        for (unsigned warps : {4u, 8u}) {
          const int R = 32, C = 64, M = 29, N = 53;
          INFO(arch << " kind " << kind << " axis " << axis << " warps " << warps);
          std::vector<float> hx = randomInts<float>(size_t(R) * C, -8, 8);
          auto x = dev.upload(hx);
          std::vector<float> junk(size_t(R) * C);
          std::memset(junk.data(), 0xA5, junk.size() * sizeof(float));
          auto out = dev.upload(junk);
          auto idx = dev.upload(std::vector<int32_t>(size_t(R) * C, -5));
          auto [waves, fibers] = bothForms(
              [&] { kernel.launch(dev, {1}, {.num_warps = warps}, x, out, idx, M, N, R, C, axis, kind); },
              [&] {
                Bytes all = bytesOf(out), i = bytesOf(idx);
                all.insert(all.end(), i.begin(), i.end());
                return all;
              });
          CHECK(waves == fibers);
          if (kind == 0) { // sums of small integers: exact
            std::vector<float> got = out.download();
            const int lines = axis == 0 ? C : R;
            for (int l = 0; l < lines; ++l) {
              double want = 0;
              for (int k = 0; k < (axis == 0 ? R : C); ++k) {
                const int r = axis == 0 ? k : l, c = axis == 0 ? l : k;
                if (r < M && c < N)
                  want += hx[size_t(r) * C + c];
              }
              CHECK(got[size_t(l)] == want);
            }
          }
        }
  }
}

TEST_CASE("emulator forms: a wave's loads all come before its stores (the issue's example), both forms") {
  auto kernel = jit<read_then_store>();
  for (const char *arch : {"gfx942", "gfx1100"}) {
    Device dev = Device::emulator(arch);
    const int B = dev.arch() == "gfx942" ? 64 : 32;
    std::vector<float> hx = std::vector<float>(size_t(B));
    for (int i = 0; i < B; ++i)
      hx[size_t(i)] = float(i);
    auto x = dev.upload(hx);
    auto [waves, fibers] = bothForms(
        [&] {
          x = dev.upload(hx);
          kernel.launch(dev, {1}, {.num_warps = 1}, x, B);
        },
        [&] { return bytesOf(x); });
    CHECK(waves == fibers);
    std::vector<float> got = x.download();
    for (int i = 0; i < B; ++i)
      CHECK(got[size_t(i)] == float(8 * (i / 8)) + 100.0f);
  }
}

TEST_CASE("emulator forms: the sanitizer reports the same out-of-bounds access in both forms") {
  auto kernel = jit<read_then_store>();
  Device dev = Device::emulator("gfx942");
  auto x = dev.upload(std::vector<float>(40, 1.0f)); // 64 lanes store: lanes 40..63 are outside
  std::string waves, fibers;
  {
    ScopedEnv path("TESSEL_EMULATOR_PATH", "waves");
    waves = errorOf([&] { kernel.launch(dev, {1}, {.num_warps = 1}, x, 64); });
  }
  {
    ScopedEnv path("TESSEL_EMULATOR_PATH", "fibers");
    fibers = errorOf([&] { kernel.launch(dev, {1}, {.num_warps = 1}, x, 64); });
  }
  // The same report (after the launch's own line, which differs).
  auto report = [](const std::string &e) { return e.substr(std::min(e.size(), e.find("the emulator's sanitizer"))); };
  CHECK(contains(waves, "global load out of bounds"));
  CHECK(report(waves) == report(fibers));
}

TEST_CASE("emulator forms: TESSEL_EMULATOR_PATH=waves names why a kernel cannot run as waves") {
  Device dev = Device::emulator("gfx942");
  auto counts = dev.upload(std::vector<int32_t>(64, 0));
  auto kernel = jit<swap_zeros>();
  {
    ScopedEnv path("TESSEL_EMULATOR_PATH", "waves");
    CHECK(contains(errorOf([&] { kernel.launch(dev, {1}, {.num_warps = 1}, counts, 64); }),
                   "cannot run as waves on the emulator (TESSEL_EMULATOR_PATH=waves): compare-and-swap"));
  }
  kernel.launch(dev, {1}, {.num_warps = 1}, counts, 64); // auto: as fibers
  CHECK(counts.download() == std::vector<int32_t>(64, 1));
  ScopedEnv bad("TESSEL_EMULATOR_PATH", "sideways");
  CHECK(contains(errorOf([&] { kernel.launch(dev, {1}, {.num_warps = 1}, counts, 64); }), "takes auto, fibers or waves"));
}

// The wave form runs a matrix instruction for the whole wave from the
// lanes' registers side by side (TESSEL_EMULATOR_WAVE_MATRIX=1; off by
// default for its compile time): the same bytes as the fibers' meeting.
TEST_CASE("emulator forms: matrix instructions give the same bytes as waves and as fibers (fp8, gfx942, gfx950)") {
  ScopedEnv matrix("TESSEL_EMULATOR_WAVE_MATRIX", "1");
  auto check = [&]<class E>(const char *arch, int K) {
    Device dev = Device::emulator(arch);
    std::vector<E> ha(16 * K), hb(K * 16);
    auto fa = randomFloats(ha.size(), -2, 2), fb = randomFloats(hb.size(), -2, 2);
    for (size_t i = 0; i < ha.size(); ++i) ha[i] = E(fa[i]);
    for (size_t i = 0; i < hb.size(); ++i) hb[i] = E(fb[i]);
    auto a = dev.upload(ha), b = dev.upload(hb);
    auto c = dev.upload(std::vector<float>(256, std::nanf("")));
    auto [waves, fibers] = bothForms(
        [&] { jit<small_dot<E>>().launch(dev, {1}, {.num_warps = 1}, a, b, c, K); }, [&] { return bytesOf(c); });
    CHECK(waves == fibers);
    std::vector<float> got = c.download();
    double worst = 0;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j) {
        double want = 0;
        for (int k = 0; k < K; ++k) want += double(float(ha[i * K + k])) * double(float(hb[k * 16 + j]));
        worst = std::max(worst, std::fabs(got[i * 16 + j] - want));
      }
    CHECK(worst < 1e-3);
  };
  check.operator()<float8_e4m3fnuz>("gfx942", 32);
  check.operator()<float8_e4m3fn>("gfx950", 32);
}

// The switch from fibers to waves (formFor): a kernel runs as fibers until
// its launches have spent TESSEL_EMULATOR_WAVE_AFTER_MS as fibers, read when
// the kernel is loaded; here 1 ms, which the first launch spends, so the
// second compiles and runs the wave form. Another kernel loaded before under
// a threshold of 10^9 ms stays as fibers (a threshold read once a process
// would hold either for both).
TEST_CASE("emulator forms: a kernel moves from fibers to waves after TESSEL_EMULATOR_WAVE_AFTER_MS, same bytes") {
  ScopedEnv path("TESSEL_EMULATOR_PATH", "auto");
  ScopedEnv report("TESSEL_EMULATOR_REPORT", "1");
  Device dev = Device::emulator("gfx942");
  const int n = 1 << 18, BLOCK = 1024;
  std::vector<float> hx = randomFloats(size_t(n), -4, 4);
  auto x = dev.upload(hx);
  std::vector<float> junk(static_cast<size_t>(n));
  std::memset(junk.data(), 0xA5, junk.size() * sizeof(float));
  const std::string log = std::string(TESSEL_BINARY_DIR) + "/wave-after-" + std::to_string(getpid()) + ".txt";
  // Which form each launch compiled (REPORT's lines name them), and its output.
  auto launch = [&](auto &kernel, const char *name) {
    auto y = dev.upload(junk);
    std::string said = stderrOf(log, [&] { kernel.launch(dev, {n / BLOCK}, {.num_warps = 4}, x, y, n, BLOCK); });
    CHECK(said.find("kernel '" + std::string(name) + "' runs as fibers") == std::string::npos); // covered
    return std::pair{said.find("kernel '" + std::string(name) + "' runs as waves") != std::string::npos, bytesOf(y)};
  };
  {
    ScopedEnv after("TESSEL_EMULATOR_WAVE_AFTER_MS", "1000000000");
    auto primer = jit<affine_rows_primer>();
    for (int i = 0; i < 3; ++i)
      CHECK_FALSE(launch(primer, "affine_rows_primer").first);
  }
  ScopedEnv after("TESSEL_EMULATOR_WAVE_AFTER_MS", "1");
  auto kernel = jit<affine_rows>();
  auto [first, expected] = launch(kernel, "affine_rows");
  CHECK_FALSE(first); // fibers: nothing spent yet
  std::vector<float> got(static_cast<size_t>(n));
  std::memcpy(got.data(), expected.data(), expected.size());
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += got[size_t(i)] != hx[size_t(i)] * 3.0f - 1.0f;
  CHECK(wrong == 0);
  auto [second, bytes] = launch(kernel, "affine_rows");
  CHECK(second); // the wave form, compiled for this launch
  CHECK(bytes == expected);
  auto [third, again] = launch(kernel, "affine_rows");
  CHECK_FALSE(third); // compiled once
  CHECK(again == expected);
  std::remove(log.c_str());
}

// A kernel launched again after launches of at least a fifth of
// TESSEL_EMULATOR_WAVE_AFTER_MS each moves to waves before its launches have
// spent the whole threshold (bench-emulator's softmax: a warm-up launch of
// ~75 ms, then the timed ones). The threshold is twice a warm fiber launch of
// the same program measured from outside (which includes more than the
// launch's own run; the least of three), so the first launch of the kernel
// under test lands between a fifth of it and all of it unless the machine
// runs 2.5x faster than a moment ago; 2x slower, the total moves it as well
// (and the test passes without showing the rule).
TEST_CASE("emulator forms: a kernel relaunched after long fiber launches moves to waves before the total threshold") {
  ScopedEnv path("TESSEL_EMULATOR_PATH", "auto");
  ScopedEnv report("TESSEL_EMULATOR_REPORT", "1");
  Device dev = Device::emulator("gfx942");
  const int n = 1 << 21, BLOCK = 1024;
  auto x = dev.upload(randomFloats(size_t(n), -4, 4));
  auto y = dev.alloc<float>(size_t(n));
  const std::string log = std::string(TESSEL_BINARY_DIR) + "/wave-relaunch-" + std::to_string(getpid()) + ".txt";
  auto launch = [&](auto &kernel, const char *name) {
    std::string said = stderrOf(log, [&] { kernel.launch(dev, {n / BLOCK}, {.num_warps = 4}, x, y, n, BLOCK); });
    return said.find("kernel '" + std::string(name) + "' runs as waves") != std::string::npos;
  };
  double warm = 0;
  {
    ScopedEnv after("TESSEL_EMULATOR_WAVE_AFTER_MS", "1000000000");
    auto primer = jit<affine_rows_primer>();
    CHECK_FALSE(launch(primer, "affine_rows_primer")); // compiles
    for (int i = 0; i < 3; ++i) {
      const auto start = std::chrono::steady_clock::now();
      CHECK_FALSE(launch(primer, "affine_rows_primer")); // a fifth of 10^9 ms: never
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      warm = i == 0 ? ms : std::min(warm, ms);
    }
  }
  const std::string threshold = std::to_string(2 * warm);
  INFO("a warm fiber launch took " << warm << " ms; TESSEL_EMULATOR_WAVE_AFTER_MS = " << threshold);
  ScopedEnv after("TESSEL_EMULATOR_WAVE_AFTER_MS", threshold.c_str());
  auto kernel = jit<affine_rows_again>();
  CHECK_FALSE(launch(kernel, "affine_rows_again")); // fibers: nothing spent yet
  CHECK(launch(kernel, "affine_rows_again"));       // one launch of about half the threshold
  std::vector<float> got = y.download();
  CHECK(got[12345] == x.download()[12345] * 3.0f - 1.0f);
  std::remove(log.c_str());
}

// A kernel that loads 16-bit floats, stores them back and computes with them
// moves their bits, signalling NaNs too, as the GPU's loads and stores do
// (the host legalizes <8 x bfloat> extracts, inserts and stores through f32,
// which quieted 0x7f81 into 0x7fc1 before the retargeting moved them as i16).
// The wave form carries such lanes as i16 vectors and computes on them lane
// by lane in the fibers' scalar code: the same bytes as fibers.
// The same through a loop: the moved tile is a loop-carried value (a phi of
// <n x half> or <n x bfloat> in each thread), which x86 moved through f32.
TEST_CASE("emulator forms: 16-bit floats carried through a loop keep their bits, signalling NaNs too, both forms") {
  auto check = [&]<class E>(const char *arch) {
    Device dev = Device::emulator(arch);
    const int B = 256, turns = 5;
    std::vector<uint16_t> special = {0x7f81, 0xff81, 0x7fc1, 0x7c01, 0xfc01, 0x7e00, 0x7f80, 0xff80,
                                     0x7c00, 0x0001, 0x8001, 0x0000, 0x8000, 0x3c00, 0x3f80, 0xc000};
    std::vector<E> hx(size_t(B) * (turns + 1));
    std::vector<float> random = randomFloats(hx.size(), -100, 100);
    for (size_t i = 0; i < hx.size(); ++i)
      hx[i] = i % 7 < 3 ? E::fromBits(special[(i * 5) % special.size()]) : E(random[i]);
    auto x = dev.upload(hx);
    auto y = dev.upload(std::vector<E>(B, E::fromBits(0x5555)));
    auto [waves, fibers] =
        bothForms([&] { jit<carried_halves<E>>().launch(dev, {1}, {.num_warps = 4}, x, y, turns, B); },
                  [&] { return bytesOf(y); });
    CHECK(waves == fibers);
    std::vector<E> got = y.download();
    int wrong = 0;
    for (int i = 0; i < B; ++i) {
      uint16_t want = hx[size_t(i)].bits;
      for (int k = 0; k < turns; ++k)
        if ((i + k) % 3 == 0)
          want = hx[size_t((k + 1) * B + i)].bits;
      wrong += got[size_t(i)].bits != want;
    }
    CHECK(wrong == 0);
  };
  for (const char *arch : {"gfx942", "gfx1100"}) {
    INFO(arch);
    check.operator()<half>(arch);
    check.operator()<bfloat16>(arch);
  }
}

TEST_CASE("emulator forms: 16-bit floats a kernel only moves keep their bits, signalling NaNs too, both forms") {
  auto check = [&]<class E>(const char *arch) {
    Device dev = Device::emulator(arch);
    const int B = 256;
    std::vector<E> hx(B);
    std::vector<uint16_t> special = {0x7f81, 0xff81, 0x7fc1, 0x7c01, 0xfc01, 0x7e00, 0x7f80, 0xff80, 0x7c00,
                                     0x0001, 0x8001, 0x0000, 0x8000, 0x3c00, 0x3f80, 0xc000};
    std::vector<float> random = randomFloats(B, -100, 100);
    for (int i = 0; i < B; ++i)
      hx[size_t(i)] = i < int(special.size()) ? E::fromBits(special[size_t(i)]) : E(random[size_t(i)]);
    auto x = dev.upload(hx);
    auto y = dev.upload(std::vector<E>(B, E::fromBits(0x5555)));
    auto z = dev.upload(std::vector<float>(B, -1.0f));
    auto w = dev.upload(std::vector<E>(B, E::fromBits(0x5555)));
    auto [waves, fibers] = bothForms([&] { jit<halves<E>>().launch(dev, {1}, {.num_warps = 4}, x, y, z, w, B); },
                                     [&] {
                                       Bytes all = bytesOf(y), zz = bytesOf(z), ww = bytesOf(w);
                                       all.insert(all.end(), zz.begin(), zz.end());
                                       all.insert(all.end(), ww.begin(), ww.end());
                                       return all;
                                     });
    CHECK(waves == fibers);
    std::vector<E> gotY = y.download(), gotW = w.download();
    std::vector<float> gotZ = z.download();
    for (int i = 0; i < B; ++i) {
      INFO(std::hex << hx[size_t(i)].bits);
      CHECK(gotY[size_t(i)].bits == hx[size_t(i)].bits); // a load and a store move bits
      if constexpr (std::is_same_v<E, bfloat16>) // the GPU widens a bfloat by a shift (v_lshlrev_b32)
        CHECK(std::bit_cast<uint32_t>(gotZ[size_t(i)]) == uint32_t(hx[size_t(i)].bits) << 16);
      const float twice = float(hx[size_t(i)]) * 2.0f;
      if (!std::isnan(twice))
        CHECK(float(gotW[size_t(i)]) == float(E(twice)));
    }
  };
  for (const char *arch : {"gfx942", "gfx1100"}) {
    INFO(arch);
    check.operator()<half>(arch);
    check.operator()<bfloat16>(arch);
  }
}
