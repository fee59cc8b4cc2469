// Runs the hand-written HIP reference kernels of bench/hip/ on tessel's CPU
// emulator and checks their results against host math, so the kernels
// scripts/codegen-table.py compares tessel with are known to compute the
// same thing. No GPU needed.
//
//   build/bench/bench-hip-reference-check DIR ARCH...
//
// DIR holds <source>-<arch>.ll for each ARCH: the LLVM IR clang makes of
// bench/hip/{vector_add,softmax,layer_norm}.hip with -DREF_EMULATOR
// (clang++ -x hip --cuda-device-only --offload-arch=ARCH -nogpuinc -nogpulib
// -O3 -emit-llvm -S); the script writes them. The emulator runs the IR with
// the arch's wave size (DPP and lane exchanges included). Prints one line
// per kernel; exits 1 when one is wrong.
#include <tessel/tessel.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace tessel;

namespace {

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-4.f, 4.f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw Error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Kernel arguments packed by the natural-alignment rule (pointers 8 bytes).
class Kernarg {
public:
  template <class T> Kernarg &add(T value) {
    size_t at = (bytes_.size() + sizeof(T) - 1) / sizeof(T) * sizeof(T);
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
    return *this;
  }
  const void *data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

private:
  std::vector<unsigned char> bytes_;
};

struct Runner {
  Device dev;
  std::string dir, arch;

  void launch(const std::string &source, const std::string &kernel, uint32_t grid, uint32_t lanes,
              const Kernarg &args) {
    CompiledKernel k;
    k.name = kernel;
    k.arch = arch;
    k.llvmModule = readFile(dir + "/" + source + "-" + arch + ".ll");
    k.blockSize = lanes;
    k.waveSize = dev.waveSize();
    std::unique_ptr<LoadedKernel> loaded = dev.impl().load(k);
    dev.impl().launch(*loaded, {grid}, lanes, args.data(), args.size());
    dev.synchronize();
  }
  template <class T> std::vector<T> read(const Buffer<T> &b) {
    std::vector<T> host(b.size());
    dev.impl().copyToHost(host.data(), b.devicePtr(), b.bytes());
    return host;
  }
};

// Largest |got - want| / max(|want|, floor) over the elements.
double worst(const std::vector<float> &got, const std::vector<double> &want, double floor) {
  double w = 0;
  for (size_t i = 0; i < got.size(); ++i)
    w = std::max(w, std::abs(got[i] - want[i]) / std::max(std::abs(want[i]), floor));
  return w;
}

bool report(const char *what, const std::string &arch, double err, double tolerance) {
  const bool ok = err <= tolerance && !std::isnan(err);
  std::printf("%-28s %-8s max rel. error %.2e (tolerance %.0e): %s\n", what, arch.c_str(), err, tolerance,
              ok ? "ok" : "WRONG");
  return ok;
}

bool checkVectorAdd(Runner &r) {
  const unsigned n = 98432;
  const uint32_t lanes = 4 * r.dev.waveSize();
  auto hx = randomFloats(n, 1), hy = randomFloats(n, 2);
  auto x = r.dev.upload(hx), y = r.dev.upload(hy);
  auto out = r.dev.alloc<float>(n);
  r.launch("vector_add", "ref_vector_add_f32", (n + 1023) / 1024, lanes,
           Kernarg().add(x.devicePtr()).add(y.devicePtr()).add(out.devicePtr()).add(n));
  std::vector<double> want(n);
  for (unsigned i = 0; i < n; ++i)
    want[i] = double(hx[i]) + double(hy[i]);
  return report("vector add (n = 98432)", r.arch, worst(r.read(out), want, 1e-3), 1e-6);
}

bool checkSoftmax(Runner &r, int N, uint32_t lanes) {
  const int M = 37;
  auto hin = randomFloats(size_t(M) * N, 3 + N);
  auto in = r.dev.upload(hin);
  auto out = r.dev.alloc<float>(size_t(M) * N);
  r.launch("softmax", "ref_softmax_" + std::to_string(N) + "_f32", M, lanes,
           Kernarg().add(in.devicePtr()).add(out.devicePtr()));
  std::vector<double> want(size_t(M) * N);
  for (int row = 0; row < M; ++row) {
    const float *x = &hin[size_t(row) * N];
    double m = *std::max_element(x, x + N), s = 0;
    for (int c = 0; c < N; ++c)
      s += std::exp(double(x[c]) - m);
    for (int c = 0; c < N; ++c)
      want[size_t(row) * N + c] = std::exp(double(x[c]) - m) / s;
  }
  std::string what = "softmax (N = " + std::to_string(N) + ")";
  return report(what.c_str(), r.arch, worst(r.read(out), want, 1e-6), 1e-4);
}

bool checkLayerNorm(Runner &r) {
  const int M = 9, N = 8192;
  const float eps = 1e-5f;
  auto hx = randomFloats(size_t(M) * N, 5), hw = randomFloats(N, 6), hb = randomFloats(N, 7);
  auto x = r.dev.upload(hx), w = r.dev.upload(hw), b = r.dev.upload(hb);
  auto y = r.dev.alloc<float>(size_t(M) * N);
  auto mean = r.dev.alloc<float>(M), rstd = r.dev.alloc<float>(M);
  r.launch("layer_norm", "ref_layer_norm_8192_f32", M, 512,
           Kernarg()
               .add(x.devicePtr()).add(y.devicePtr()).add(w.devicePtr()).add(b.devicePtr())
               .add(mean.devicePtr()).add(rstd.devicePtr()).add(eps));
  std::vector<double> wantY(size_t(M) * N), wantMean(M), wantRstd(M);
  for (int row = 0; row < M; ++row) {
    const float *v = &hx[size_t(row) * N];
    double mu = 0, var = 0;
    for (int c = 0; c < N; ++c)
      mu += v[c];
    mu /= N;
    for (int c = 0; c < N; ++c)
      var += (v[c] - mu) * (v[c] - mu);
    const double rs = 1.0 / std::sqrt(var / N + eps);
    wantMean[row] = mu;
    wantRstd[row] = rs;
    for (int c = 0; c < N; ++c)
      wantY[size_t(row) * N + c] = (v[c] - mu) * rs * hw[c] + hb[c];
  }
  // y near 0 is a difference of O(1) terms: relative to max(|y|, 1).
  double err = std::max({worst(r.read(y), wantY, 1.0), worst(r.read(mean), wantMean, 1e-2),
                         worst(r.read(rstd), wantRstd, 1e-3)});
  return report("layer norm (N = 8192)", r.arch, err, 1e-4);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DIR ARCH...\n", argv[0]);
    return 2;
  }
  bool ok = true;
  try {
    for (int i = 2; i < argc; ++i) {
      Runner r{Device::emulator(argv[i]), argv[1], argv[i]};
      ok &= checkVectorAdd(r);
      ok &= checkSoftmax(r, 781, 128);
      ok &= checkSoftmax(r, 4096, 512);
      ok &= checkLayerNorm(r);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench-hip-reference-check: %s\n", e.what());
    return 1;
  }
  return ok ? 0 : 1;
}
