// dot on 8-bit floats: gfx942's MFMAs on the FNUZ formats, gfx950's on the
// OCP ones, every E4M3 / E5M2 mix, against a float64 host matmul; what a
// target whose matrix cores do not take the format says; gfx1100 through f16.
//
// Inputs are exactly representable in all four formats: (4 + m) / 4 * 2^e
// with m in 0..3, e in -5..3 (and 0), any sign. The reference decodes them
// from that definition (not from the host types' conversion, which the
// inputs are checked against), multiplies and sums in double; the device
// accumulates in f32.
#include "e2e_common.hpp"
#include "lds_waits.hpp"

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/lowering/target.hpp"

#include <tessel/kernels/matmul.hpp>

#include "../../../bench/matmul_forms.hpp" // bench::mx_matmul_kernel

#include <optional>

using namespace tessel;
using namespace e2e;

namespace {

// C[M, N] = A[M, K] @ B[K, N], row-major, BM x BN blocks, a loop over K in
// steps of BK; every edge masked (other = 0).
template <class Ea, class Eb>
void fp8_matmul(Ptr<Ea> a, Ptr<Eb> b, Ptr<float> c, i32 M, i32 N, i32 K, Const<int> BM, Const<int> BN,
                Const<int> BK) {
  auto rows = program_id(0) * BM + arange(0, BM);
  auto cols = program_id(1) * BN + arange(0, BN);
  auto ks = arange(0, BK);
  auto acc = zeros<float>({BM, BN});
  for_range(0, K, BK, [&](i32 k) {
    auto ka = k + ks;
    auto ta = load(a + expand_dims(rows, 1) * K + expand_dims(ka, 0),
                   expand_dims(rows < M, 1) & expand_dims(ka < K, 0), zeros<Ea>({BM, BK}));
    auto tb = load(b + expand_dims(ka, 1) * N + expand_dims(cols, 0),
                   expand_dims(ka < K, 1) & expand_dims(cols < N, 0), zeros<Eb>({BK, BN}));
    acc = dot(ta, tb, acc);
  });
  store(c + expand_dims(rows, 1) * N + expand_dims(cols, 0), acc,
        expand_dims(rows < M, 1) & expand_dims(cols < N, 0));
}

// Random values every 8-bit float format holds exactly.
std::vector<double> representable(size_t n) {
  std::uniform_int_distribution<int> mantissa(0, 3), exponent(-6, 3), sign(0, 1);
  std::vector<double> out(n);
  for (double &v : out) {
    const int e = exponent(rng());
    v = e == -6 ? 0.0 : std::ldexp(4 + mantissa(rng()), e - 2) * (sign(rng()) ? -1 : 1);
  }
  return out;
}

template <class E> std::vector<E> toFormat(const std::vector<double> &values) {
  std::vector<E> out;
  for (double v : values) {
    out.push_back(E(float(v)));
    REQUIRE(double(float(out.back())) == v); // exactly representable, as meant
  }
  return out;
}

struct Result {
  double worst = 0; // largest error relative to the largest |C|
  bool written = true;
};

template <class Ea, class Eb>
Result runFp8Matmul(const char *arch, int M, int N, int K, int BM, int BN, int BK, unsigned warps = 4) {
  Device dev = Device::emulator(arch);
  std::vector<double> va = representable(size_t(M) * K), vb = representable(size_t(K) * N);
  auto a = dev.upload(toFormat<Ea>(va));
  auto b = dev.upload(toFormat<Eb>(vb));
  auto c = dev.upload(std::vector<float>(size_t(M) * N, std::nanf("")));
  static auto kernel = jit<fp8_matmul<Ea, Eb>>();
  kernel.launch(dev, {uint32_t((M + BM - 1) / BM), uint32_t((N + BN - 1) / BN)}, {.num_warps = warps}, a, b, c, M, N,
                K, BM, BN, BK);
  std::vector<float> got = c.download();
  std::vector<double> want(size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int kk = 0; kk < K; ++kk)
      for (int j = 0; j < N; ++j)
        want[size_t(i) * N + j] += va[size_t(i) * K + kk] * vb[size_t(kk) * N + j];
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  Result r;
  for (size_t i = 0; i < want.size(); ++i) {
    r.written = r.written && !std::isnan(got[i]);
    r.worst = std::max(r.worst, std::fabs(got[i] - want[i]) / std::max(scale, 1e-30));
  }
  return r;
}

// The assembly the kernel compiles to on `arch`.
template <class Ea, class Eb> std::string assemblyOf(const char *arch, int BM, int BN, int BK) {
  auto a = emulator().alloc<Ea>(64);
  auto b = emulator().alloc<Eb>(64);
  auto c = emulator().alloc<float>(64);
  detail::TraceRequest request = jit<fp8_matmul<Ea, Eb>>().trace(a, b, c, 100, 100, 100, BM, BN, BK);
  return compileTrace(request.trace, request.spec, {arch, 4}).assembly();
}

// Every mix of one family on `arch`, odd sizes, two block shapes (the
// 32x32x16 and the 16x16x32 instructions), each mix's instruction named.
template <class E4, class E5> void checkFamily(const char *arch) {
  auto check = [&](auto ta, auto tb, const std::string &mix) {
    using Ea = decltype(ta);
    using Eb = decltype(tb);
    CAPTURE(mix);
    // A 64x32 block takes 32x32x16 tiles (transposed: the instruction's A is
    // the dot's B, so fp8 x bf8 is v_mfma_..._bf8_fp8); 16x16 blocks 16x16x32.
    CHECK(contains(assemblyOf<Ea, Eb>(arch, 64, 32, 32), "v_mfma_f32_32x32x16_" + mix));
    CHECK(contains(assemblyOf<Ea, Eb>(arch, 16, 16, 64), "v_mfma_f32_16x16x32_" + mix));
    Result big = runFp8Matmul<Ea, Eb>(arch, 77, 45, 100, 64, 32, 32);
    CHECK(big.written);
    CHECK(big.worst < 1e-5);
    Result small = runFp8Matmul<Ea, Eb>(arch, 19, 33, 70, 16, 16, 64, 2);
    CHECK(small.written);
    CHECK(small.worst < 1e-5);
  };
  // The dot's (A, B) as the transposed instruction sees them: (B, A).
  check(E4(), E4(), "fp8_fp8");
  check(E4(), E5(), "bf8_fp8");
  check(E5(), E4(), "fp8_bf8");
  check(E5(), E5(), "bf8_bf8");
}

// The first line of `assembly` that holds `mnemonic` ("" when none does).
std::string lineWith(const std::string &assembly, const std::string &mnemonic) {
  const size_t at = assembly.find(mnemonic);
  if (at == std::string::npos)
    return "";
  const size_t start = assembly.rfind('\n', at) + 1, end = assembly.find('\n', at);
  return assembly.substr(start, end - start);
}

// gfx950's f8f6f4 MFMAs, for a block K they divide (64: 32x32x64; 128 in a
// 16x16 block: 16x16x128), every mix: the formats are the instruction's
// cbsz (its A) and blgp (its B) fields, 1 for E5M2, printed only when set;
// transposed, the instruction's A is the dot's B. Odd sizes, masked edges.
template <class E4, class E5> void checkF8f6f4() {
  auto check = [&](auto ta, auto tb) {
    using Ea = decltype(ta);
    using Eb = decltype(tb);
    const bool aE5 = std::is_same_v<Ea, E5>, bE5 = std::is_same_v<Eb, E5>;
    CAPTURE(aE5);
    CAPTURE(bE5);
    const std::string big = assemblyOf<Ea, Eb>("gfx950", 64, 32, 64);
    const std::string line = lineWith(big, "v_mfma_f32_32x32x64_f8f6f4");
    CAPTURE(line);
    CHECK(!line.empty());
    CHECK(contains(line, "cbsz:1") == bE5); // transposed: the dot's B is the instruction's A
    CHECK(contains(line, "blgp:1") == aE5);
    CHECK(!contains(big, "v_mfma_f32_32x32x16_"));
    CHECK(!contains(big, "v_mfma_scale")); // zero scales: the unscaled instruction
    const std::string small = assemblyOf<Ea, Eb>("gfx950", 16, 16, 128);
    CHECK(contains(small, "v_mfma_f32_16x16x128_f8f6f4"));
    Result r64 = runFp8Matmul<Ea, Eb>("gfx950", 77, 45, 100, 64, 32, 64);
    CHECK(r64.written);
    CHECK(r64.worst < 1e-5);
    Result r128 = runFp8Matmul<Ea, Eb>("gfx950", 19, 33, 300, 16, 16, 128, 1);
    CHECK(r128.written);
    CHECK(r128.worst < 1e-5);
  };
  check(E4(), E4());
  check(E4(), E5());
  check(E5(), E4());
  check(E5(), E5());
}

} // namespace

TEST_CASE("fp8 dot on gfx942: FNUZ E4M3 and E5M2 in every mix on v_mfma_*_fp8/bf8 match float64") {
  checkFamily<float8_e4m3fnuz, float8_e5m2fnuz>("gfx942");
}

TEST_CASE("fp8 dot on gfx950: OCP E4M3 and E5M2 in every mix on the same MFMAs match float64") {
  checkFamily<float8_e4m3fn, float8_e5m2>("gfx950");
}

TEST_CASE("fp8 dot on gfx950: a block K of 64 or 128 takes the f8f6f4 MFMAs, every mix, matching float64") {
  checkF8f6f4<float8_e4m3fn, float8_e5m2>();
}

TEST_CASE("fp8 dot: a block smaller than the instruction pads it; a K below 16 widens to f16") {
  // 8 rows: the 16x16x32 instruction, padded (not transposed: the fp8 x bf8
  // mix is the instruction's own).
  CHECK(contains(assemblyOf<float8_e4m3fnuz, float8_e5m2fnuz>("gfx942", 8, 16, 32), "v_mfma_f32_16x16x32_fp8_bf8"));
  Result padded = runFp8Matmul<float8_e4m3fnuz, float8_e5m2fnuz>("gfx942", 13, 30, 45, 8, 16, 32, 1);
  CHECK(padded.written);
  CHECK(padded.worst < 1e-5);
  // K = 8: no 8-bit float MFMA is that shallow; f16's 32x32x8 takes it.
  std::string shallow = assemblyOf<float8_e5m2, float8_e4m3fn>("gfx950", 32, 32, 8);
  CHECK(contains(shallow, "v_mfma_f32_32x32x8_f16"));
  CHECK(!contains(shallow, "v_mfma_f32_32x32x16_"));
  CHECK(contains(shallow, "v_cvt_f32_fp8")); // gfx950 widens OCP by its own instruction
  Result widened = runFp8Matmul<float8_e5m2, float8_e4m3fn>("gfx950", 40, 37, 21, 32, 32, 8);
  CHECK(widened.written);
  CHECK(widened.worst < 1e-5);
}

TEST_CASE("fp8 dot on gfx1100: operands widened to f16 for WMMA, every format") {
  CHECK(contains(assemblyOf<float8_e4m3fn, float8_e5m2>("gfx1100", 32, 32, 32), "v_wmma_f32_16x16x16_f16"));
  Result ocp = runFp8Matmul<float8_e4m3fn, float8_e5m2>("gfx1100", 50, 35, 70, 32, 32, 32);
  CHECK(ocp.written);
  CHECK(ocp.worst < 1e-5);
  Result fnuz = runFp8Matmul<float8_e5m2fnuz, float8_e5m2fnuz>("gfx1100", 33, 17, 40, 32, 16, 16, 2);
  CHECK(fnuz.written);
  CHECK(fnuz.worst < 1e-5);
}

namespace {
constexpr int kDotLine = __LINE__ + 4; // the dot below
template <class Ea, class Eb> void fp8_dot_once(Ptr<Ea> a, Ptr<Eb> b, Ptr<float> c) {
  auto i = arange(0, 32);
  auto offs = expand_dims(i, 1) * 32 + expand_dims(i, 0);
  auto d = dot(load(a + offs), load(b + offs));
  store(c + offs, d);
}

template <class Ea, class Eb> std::string errorOn(const char *arch) {
  Device dev = Device::emulator(arch);
  auto a = dev.alloc<Ea>(1024);
  auto b = dev.alloc<Eb>(1024);
  auto c = dev.alloc<float>(1024);
  return errorOf([&] { jit<fp8_dot_once<Ea, Eb>>().launch(dev, {1}, {}, a, b, c); });
}
} // namespace

TEST_CASE("fp8 dot: a format the target's matrix cores do not take is an error naming the target and the format") {
  const std::string line = "fp8_dot_test.cpp:" + std::to_string(kDotLine);
  std::string ocpOn942 = errorOn<float8_e4m3fn, float8_e4m3fn>("gfx942");
  CAPTURE(ocpOn942);
  CHECK(contains(ocpOn942, line));
  CHECK(contains(ocpOn942, "dot on float8_e4m3fn: gfx942's matrix cores take the FNUZ 8-bit floats "
                           "(float8_e4m3fnuz, float8_e5m2fnuz), not the OCP ones; use float8_e4m3fnuz"));
  CHECK(contains(ocpOn942, "or compile for gfx950 (float8_e4m3fn, float8_e5m2)"));
  std::string fnuzOn950 = errorOn<float8_e5m2fnuz, float8_e4m3fnuz>("gfx950");
  CAPTURE(fnuzOn950);
  CHECK(contains(fnuzOn950, line));
  CHECK(contains(fnuzOn950, "dot on float8_e5m2fnuz and float8_e4m3fnuz: gfx950's matrix cores take the OCP "
                            "8-bit floats (float8_e4m3fn, float8_e5m2), not the FNUZ ones; use float8_e5m2 and "
                            "float8_e4m3fn"));
  std::string on90a = errorOn<float8_e4m3fnuz, float8_e4m3fnuz>("gfx90a");
  CAPTURE(on90a);
  CHECK(contains(on90a, line));
  CHECK(contains(on90a, "dot on float8_e4m3fnuz: gfx90a's matrix cores take no 8-bit floats; cast<half>(...) the "
                        "operands (exact) and dot those, or compile for gfx942"));
  // The same kernel in the target's own format runs.
  CHECK(errorOn<float8_e4m3fnuz, float8_e4m3fnuz>("gfx942") == "<no error>");
  CHECK(errorOn<float8_e4m3fn, float8_e5m2>("gfx950") == "<no error>");
}

namespace {
// kernels::matmul on 8-bit floats: C = (A @ B) * scales + bias, relu, as Out.
template <class Ea, class Eb, class Out>
double runLibrary(const char *arch, int M, int N, int K, kernels::Fp8Scaling scaling,
                  std::optional<kernels::MatmulConfig> config) {
  Device dev = Device::emulator(arch);
  std::vector<double> va = representable(size_t(M) * K), vb = representable(size_t(K) * N);
  auto a = dev.upload(toFormat<Ea>(va));
  auto b = dev.upload(toFormat<Eb>(vb));
  const bool rows = scaling == kernels::Fp8Scaling::PerRow;
  std::vector<float> sa = randomFloats(rows ? M : 1, 0.25f, 2.0f), sb = randomFloats(rows ? N : 1, 0.25f, 2.0f);
  std::vector<float> hostBias = randomFloats(N, -4, 4);
  auto scaleA = dev.upload(sa), scaleB = dev.upload(sb);
  auto bias = dev.upload(std::vector<Out>(hostBias.begin(), hostBias.end()));
  std::vector<Out> junk(size_t(M) * N);
  std::memset(static_cast<void *>(junk.data()), 0xFF, junk.size() * sizeof(Out)); // NaN in each type
  auto c = dev.upload(junk);
  kernels::matmul(dev, a, b, c, {.M = M, .N = N, .K = K, .activation = kernels::Activation::Relu},
                  {scaleA, scaleB, scaling}, &bias, config);
  std::vector<Out> got = c.download();
  double scale = 0, worst = 0;
  std::vector<double> want(size_t(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int kk = 0; kk < K; ++kk) s += va[size_t(i) * K + kk] * vb[size_t(kk) * N + j];
      s = s * sa[rows ? i : 0] * sb[rows ? j : 0] + double(float(Out(hostBias[j])));
      want[size_t(i) * N + j] = std::max(s, 0.0);
      scale = std::max(scale, std::fabs(s));
    }
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = double(float(got[i]));
    if (std::isnan(g)) return INFINITY; // never written
    worst = std::max(worst, std::fabs(g - want[i]) / scale);
  }
  return worst;
}
} // namespace

TEST_CASE("fp8 kernels::matmul: per-tensor and per-row scales, bias and relu, float, half and bfloat16 C") {
  const kernels::MatmulConfig small{.BM = 32, .BN = 64, .BK = 64, .GROUP_M = 8, .num_warps = 2};
  CHECK(runLibrary<float8_e4m3fnuz, float8_e4m3fnuz, float>("gfx942", 77, 50, 130, kernels::Fp8Scaling::PerTensor,
                                                              small) < 1e-5);
  CHECK(runLibrary<float8_e5m2fnuz, float8_e4m3fnuz, half>("gfx942", 45, 70, 100, kernels::Fp8Scaling::PerRow,
                                                             small) < 2e-3);
  CHECK(runLibrary<float8_e4m3fn, float8_e5m2, bfloat16>("gfx950", 66, 33, 90, kernels::Fp8Scaling::PerRow, small) <
        1e-2);
  // No config: the tuner picks among matmulConfigs(1) by what each compiles to.
  CHECK(runLibrary<float8_e5m2, float8_e5m2, float>("gfx950", 40, 24, 64, kernels::Fp8Scaling::PerTensor,
                                                    std::nullopt) < 1e-5);
}

TEST_CASE("fp8 kernels::matmul: too few scales is an error naming both counts") {
  Device dev = Device::emulator("gfx942");
  auto a = dev.alloc<float8_e4m3fnuz>(64 * 64), b = dev.alloc<float8_e4m3fnuz>(64 * 64);
  auto c = dev.alloc<float>(64 * 64);
  auto one = dev.upload(std::vector<float>{1.0f});
  std::string message = errorOf([&] {
    kernels::matmul(dev, a, b, c, {.M = 64, .N = 64, .K = 64}, {one, one, kernels::Fp8Scaling::PerRow});
  });
  CHECK(message == "matmul: per-row scales need 64 values for A and 64 for B; the buffers hold 1 and 1");
}

namespace {
// A chain on 8-bit floats (attention's shape): S = Q K^T in f32, P = S cast
// to E4M3, O = P V. The tail's A is the head's transposed accumulator, whose
// registers run along K in 4s: on gfx950 the f8f6f4 tail reads its K in
// that order (kGroup 4), B alike.
void fp8_chain(Ptr<float8_e4m3fn> q, Ptr<float8_e4m3fn> k, Ptr<float8_e4m3fn> v, Ptr<float> o, Const<int> M,
               Const<int> D) {
  auto rows = arange(0, M), cols = arange(0, D);
  auto tq = load(q + expand_dims(rows, 1) * D + expand_dims(cols, 0));
  auto tk = load(k + expand_dims(rows, 1) * D + expand_dims(cols, 0));
  auto tv = load(v + expand_dims(rows, 1) * D + expand_dims(cols, 0));
  auto s = dot(tq, trans(tk));
  auto p = cast<float8_e4m3fn>(s * 0.0625f);
  store(o + expand_dims(rows, 1) * D + expand_dims(cols, 0), dot(p, tv));
}
} // namespace

TEST_CASE("fp8 dot on gfx950: a chain (cast<float8_e4m3fn>(Q K^T) V) on the f8f6f4 MFMAs matches float64") {
  const int M = 64, D = 64;
  Device dev = Device::emulator("gfx950");
  // Q, K: small integers and halves; S / 16 is then exact in E4M3 when small.
  std::uniform_int_distribution<int> small(-2, 2);
  std::vector<double> vq(M * D), vk(M * D), vv(M * D);
  for (double &x : vq) x = small(rng()) * 0.5;
  for (double &x : vk) x = small(rng()) * 0.5;
  for (double &x : vv) x = small(rng());
  auto q = dev.upload(toFormat<float8_e4m3fn>(vq)), k = dev.upload(toFormat<float8_e4m3fn>(vk)),
       v = dev.upload(toFormat<float8_e4m3fn>(vv));
  auto o = dev.upload(std::vector<float>(M * D, std::nanf("")));
  auto kernel = jit<fp8_chain>();
  kernel.launch(dev, {1}, {.num_warps = 4}, q, k, v, o, M, D);
  std::vector<float> got = o.download();
  // P as E4M3 holds it: S / 16 rounded to nearest even in E4M3 (the host type's conversion).
  std::vector<double> p(M * M);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < M; ++j) {
      double s = 0;
      for (int d = 0; d < D; ++d) s += vq[i * D + d] * vk[j * D + d];
      p[i * M + j] = double(float(float8_e4m3fn(float(s * 0.0625))));
    }
  double worst = 0, scale = 1e-30;
  std::vector<double> want(M * D, 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < M; ++j)
      for (int d = 0; d < D; ++d) want[i * D + d] += p[i * M + j] * vv[j * D + d];
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / scale);
  CHECK(worst < 1e-5);
  auto tq = emulator().alloc<float8_e4m3fn>(M * D);
  detail::TraceRequest request = kernel.trace(tq, tq, tq, emulator().alloc<float>(M * D), M, D);
  CHECK(contains(compileTrace(request.trace, request.spec, {"gfx950", 4}).assembly(), "v_mfma_f32_32x32x64_f8f6f4"));
}

namespace {
// The library's 8-bit float matmul at 128 x 128 x 64 over `numWarps` waves
// (the comparison bench's form), compiled for gfx942 as a launch would.
const CompiledKernel &compileFp8Matmul(Device &dev, unsigned wavesPerEu, unsigned numWarps = 4) {
  auto a = dev.alloc<float8_e4m3fnuz>(64), b = dev.alloc<float8_e4m3fnuz>(64);
  auto c = dev.alloc<half>(64);
  auto s = dev.upload(std::vector<float>{1.0f});
  const int n = 4096;
  return kernels::matmulFp8Kernel<float8_e4m3fnuz, float8_e4m3fnuz, half>().warmup(
      dev, {.num_warps = numWarps, .num_stages = 2, .waves_per_eu = wavesPerEu}, a, b, c, s, s, c, n, n, n, n, 1, n, 1, n,
      1, 0, 0, 0, 128, 128, 64, 8, 0, 0, 0);
}
double wavesOf(const CompiledKernel &k) {
  return occupancyOf(requireTarget(k.arch), kernelResources(k.hsaco, k.name), k.blockSize, k.ldsBytes).wavesPerSimd;
}
} // namespace

// The library's fp8 matmul at Triton's occupancy: 4 waves a SIMD, no
// spills (3 before 8-bit tiles crossed branches packed and gfx942's LDS
// rules for 8-bit accesses).
TEST_CASE("fp8 kernels::matmul 128x128x64 over 4 waves runs 4 waves a SIMD on gfx942, without spills") {
  Device dev = Device::emulator("gfx942");
  const CompiledKernel &k = compileFp8Matmul(dev, 0);
  const KernelResources r = kernelResources(k.hsaco, k.name);
  CHECK(wavesOf(k) == 4);
  CHECK(r.vgprSpills + r.sgprSpills == 0);
  CHECK(r.privateSegmentBytes == 0);
}

// Over 8 waves, Triton's 8 waves a SIMD (64 VGPRs). LLVM's own schedule
// takes 70 (7 waves by registers, so 3 workgroups a CU: 6 a SIMD); the
// compiler asks for 8 (retryForOccupancy: not 9, two more than 7), which fits
// without spills because B's slot keeps 2 write addresses, not 4 (its
// swizzle's phases change every 8 rows of N, not 4: planLdsStaging's
// address-register tie-break). Before: 72 VGPRs, 6 waves.
TEST_CASE("fp8 kernels::matmul 128x128x64 over 8 waves runs 8 waves a SIMD on gfx942, without spills") {
  Device dev = Device::emulator("gfx942");
  const CompiledKernel &k = compileFp8Matmul(dev, 0, 8);
  const KernelResources r = kernelResources(k.hsaco, k.name);
  CHECK(wavesOf(k) == 8);
  CHECK(r.vgprs <= 64);
  CHECK(r.vgprSpills + r.sgprSpills == 0);
  CHECK(r.privateSegmentBytes == 0);
  // That configuration's results, its B slot swizzled as planned, on odd sizes.
  const kernels::MatmulConfig eightWaves{.BM = 128, .BN = 128, .BK = 64, .GROUP_M = 8, .num_warps = 8};
  CHECK(runLibrary<float8_e4m3fnuz, float8_e4m3fnuz, half>("gfx942", 133, 150, 201, kernels::Fp8Scaling::PerRow,
                                                             eightWaves) < 2e-3);
}

namespace {
// The comparison bench's tl.dot_scaled matmul (bench::mx_matmul_kernel) with
// dot_scaled's decomposition written out (upcast to bf16, scales spread by
// selects, dot): the form every target but gfx950 runs, and gfx950 ran before
// its scaled MFMAs.
void mx_matmul_composed(Ptr<float8_e4m3fn> a_ptr, Ptr<float8_e4m3fn> b_ptr, Ptr<half> c_ptr, Ptr<int8_t> a_scale_ptr,
                        Ptr<int8_t> b_scale_ptr, i32 M, i32 N, i32 K, i32 stride_am, i32 stride_ak, i32 stride_bk,
                        i32 stride_bn, i32 stride_cm, i32 stride_cn, i32 stride_asm, i32 stride_ask, i32 stride_bsn,
                        i32 stride_bsk, Const<int> BLOCK_SIZE_M, Const<int> BLOCK_SIZE_N, Const<int> BLOCK_SIZE_K,
                        Const<int> GROUP_SIZE_M) {
  auto pid = program_id(0);
  auto num_pid_m = cdiv(M, BLOCK_SIZE_M);
  auto num_pid_n = cdiv(N, BLOCK_SIZE_N);
  auto num_pid_in_group = GROUP_SIZE_M * num_pid_n;
  auto group_id = pid / num_pid_in_group;
  auto first_pid_m = group_id * GROUP_SIZE_M;
  auto group_size_m = minimum(num_pid_m - first_pid_m, GROUP_SIZE_M);
  auto pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m);
  auto pid_n = (pid % num_pid_in_group) / group_size_m;
  auto offs_am = (pid_m * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M)) % M;
  auto offs_bn = (pid_n * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N)) % N;
  auto offs_k = arange(0, BLOCK_SIZE_K);
  auto offs_sk = arange(0, BLOCK_SIZE_K / 32);
  auto a_ptrs = a_ptr + (expand_dims(offs_am, 1) * stride_am + expand_dims(offs_k, 0) * stride_ak);
  auto b_ptrs = b_ptr + (expand_dims(offs_k, 1) * stride_bk + expand_dims(offs_bn, 0) * stride_bn);
  auto a_scale_ptrs = a_scale_ptr + expand_dims(offs_am, 1) * stride_asm + expand_dims(offs_sk, 0) * stride_ask;
  auto b_scale_ptrs = b_scale_ptr + expand_dims(offs_bn, 1) * stride_bsn + expand_dims(offs_sk, 0) * stride_bsk;
  auto accumulator = zeros<float>({BLOCK_SIZE_M, BLOCK_SIZE_N});
  const int64_t m = BLOCK_SIZE_M, n = BLOCK_SIZE_N, k = BLOCK_SIZE_K;
  for_range(0, cdiv(K, BLOCK_SIZE_K), [&](i32) {
    auto a = load(a_ptrs);
    auto b = load(b_ptrs);
    Tile<int8_t> a_scale = load(a_scale_ptrs);
    Tile<int8_t> b_scale = load(b_scale_ptrs);
    Tile<float> x = detail::applyScales(cast<float>(a), a_scale, m, k);
    Tile<float> y = trans(detail::applyScales(cast<float>(trans(b)), b_scale, n, k));
    accumulator = dot(cast<bfloat16>(x), cast<bfloat16>(y), accumulator);
    a_ptrs += BLOCK_SIZE_K * stride_ak;
    b_ptrs += BLOCK_SIZE_K * stride_bk;
    a_scale_ptrs += (BLOCK_SIZE_K / 32) * stride_ask;
    b_scale_ptrs += (BLOCK_SIZE_K / 32) * stride_bsk;
  });
  auto c = cast<half>(accumulator);
  auto offs_cm = pid_m * BLOCK_SIZE_M + arange(0, BLOCK_SIZE_M);
  auto offs_cn = pid_n * BLOCK_SIZE_N + arange(0, BLOCK_SIZE_N);
  auto c_ptrs = c_ptr + stride_cm * expand_dims(offs_cm, 1) + stride_cn * expand_dims(offs_cn, 0);
  auto c_mask = (expand_dims(offs_cm, 1) < M) & (expand_dims(offs_cn, 0) < N);
  store(c_ptrs, c, c_mask);
}

// That kernel at 128 x 128 x 64 over 4 waves on gfx950, as a launch compiles it.
const CompiledKernel &compileMxMatmul(Device &dev, unsigned wavesPerEu) {
  static auto kernel = jit(&mx_matmul_composed, "mx_matmul_composed");
  const int n = 4096;
  auto a = dev.alloc<float8_e4m3fn>(64), b = dev.alloc<float8_e4m3fn>(64);
  auto c = dev.alloc<half>(64);
  auto as = dev.alloc<int8_t>(64), bs = dev.alloc<int8_t>(64);
  return kernel.warmup(dev, {.num_warps = 4, .num_stages = 2, .fp_fusion = true, .waves_per_eu = wavesPerEu}, a, b,
                       c, as, bs, n, n, n, n, 1, n, 1, n, 1, n / 32, 1, n / 32, 1, 128, 128, 64, 8);
}
} // namespace

// LLVM's own schedule of this kernel takes 180 VGPRs (2 waves a SIMD);
// (dot_scaled itself runs on gfx950's scaled MFMAs now: 136 VGPRs, 3 waves);
// asked for 3 (amdgpu-waves-per-eu) it fits in 168 without spills, and the
// compiler asks when the registers alone stop a kernel this close to
// another wave (retryForOccupancy). An explicit waves_per_eu is the user's:
// the compiler asks nothing else.
TEST_CASE("a kernel whose registers stop just short of another wave is compiled once more for it (gfx950 dot_scaled)") {
  Device dev = Device::emulator("gfx950");
  const CompiledKernel &k = compileMxMatmul(dev, 0);
  const KernelResources r = kernelResources(k.hsaco, k.name);
  CHECK(wavesOf(k) == 3);
  CHECK(r.vgprSpills + r.sgprSpills == 0);
  CHECK(r.privateSegmentBytes == 0);
  // The kernel module carries the request, so its assembly is this code's.
  CHECK(std::regex_search(k.assembly(), std::regex("\\.vgpr_count:\\s+" + std::to_string(r.vgprs) + "\\b")));
  CHECK(contains(k.llvmIR(), "\"amdgpu-waves-per-eu\"=\"3\""));
  const CompiledKernel &asked2 = compileMxMatmul(dev, 2);
  CHECK(wavesOf(asked2) == 2);
  CHECK(contains(asked2.llvmIR(), "\"amdgpu-waves-per-eu\"=\"2\""));
  CHECK(!contains(asked2.llvmIR(), "\"amdgpu-waves-per-eu\"=\"3\""));
}

// The library's fp8 matmul on gfx950 computes its offsets from k each
// iteration (broadcast((splat(k) + range) * stride) + rows + splat(base)).
// Its loads straight into LDS move each lane's offsets to the lane whose
// swizzled chunk they fill (ds_bpermute): the uniform part, k's, is taken
// out and added after the move (tessel-pipeline-loops' splitShift), so the
// moves happen once, before the loop. Before, 2 ds_bpermute an iteration at
// 8 waves; at 4 waves 4, which kept that kernel through registers.
TEST_CASE("fp8 kernels::matmul on gfx950 loads straight into LDS at 4 and 8 waves with no lane moves in its loop, "
          "matching float64") {
  Device dev = Device::emulator("gfx950");
  auto a = dev.alloc<float8_e4m3fn>(64), b = dev.alloc<float8_e4m3fn>(64);
  auto c = dev.alloc<half>(64);
  auto s = dev.upload(std::vector<float>{1.0f});
  const int n = 4096;
  for (unsigned warps : {4u, 8u}) {
    CAPTURE(warps);
    const CompiledKernel &k = kernels::matmulFp8Kernel<float8_e4m3fn, float8_e4m3fn, half>().warmup(
        dev, {.num_warps = warps, .num_stages = 2}, a, b, c, s, s, c, n, n, n, n, 1, n, 1, n, 1, 0, 0, 0, 128, 128, 64,
        8, 0, 0, 0);
    const std::string loop = bench::mainLoop(k.assembly());
    REQUIRE(!loop.empty());
    CAPTURE(loop);
    CHECK(bench::countMatches(loop, R"(\bbuffer_load_dwordx4\b[^\n]*\blds\b)") == 16u / warps);
    CHECK(ldsLoadHazards(k.assembly()) == "");
    CHECK(bench::countMatches(loop, R"(\bds_bpermute_b32\b)") == 0u);
    // Each lane's mask bit made as the lane whose element it loads makes it
    // (from that lane's thread id; the row and column bounds hoisted): one
    // select a load and at most one K compare. Before, from the wave's
    // ballots: 6 / 3 v_cndmask (2 / 1 of them a ballot's 0/1 rebuilt) and
    // 10 / 6 v_cmp at 4 / 8 waves.
    CHECK(bench::countMatches(loop, R"(\bv_cndmask_b32)") == 16u / warps);
    CHECK(bench::countMatches(loop, R"(\bv_cmp_)") <= 16u / warps);
    // The loads' LDS pointer (M0) made on the scalar unit from the carried
    // slot, the wave's part read once before the loop (before: a v_or and a
    // v_readfirstlane a tile an iteration).
    CHECK(bench::countMatches(loop, R"(\bv_readfirstlane_b32\b)") == 0u);
    // M odd, N and K multiples of 16 (16-byte rows), K with a masked tail.
    const kernels::MatmulConfig config{.BM = 128, .BN = 128, .BK = 64, .GROUP_M = 8, .num_warps = warps};
    CHECK(runLibrary<float8_e4m3fn, float8_e4m3fn, half>("gfx950", 133, 144, 208, kernels::Fp8Scaling::PerRow,
                                                           config) < 2e-3);
  }
}
