// Triton's tl.math functions (erf, tanh, log1p, expm1, sinh, cosh, asin,
// acos, atan, cbrt, round, rint, trunc, sigmoid, pow, atan2) on every
// target, in f32, f64, f16 and bf16, against float64 host math: random
// inputs at odd sizes plus edge inputs (signed zeros, denormals, large
// magnitudes, infinities, NaN, exact halves for the roundings). Each target
// compiles the kernel to its code object (ocml linked) and the emulator runs
// the same module, whose ocml calls are the host's libm: for the ocml
// functions this checks the calls (which function, operand order, f16/bf16
// through f32) and the edge semantics, not ocml's own accuracy, which only
// hardware shows. round, rint, trunc and sigmoid are lowered by tessel and
// checked in full.
#include "e2e_common.hpp"

#include <array>
#include <functional>

using namespace tessel;
using namespace e2e;

namespace {

constexpr int kBlock = 256;
const char *const kArchs[] = {"gfx90a", "gfx942", "gfx950", "gfx1100"};
const size_t kSizes[] = {1, 257, 3001};

enum Unary { uErf, uTanh, uLog1p, uExpm1, uSinh, uCosh, uAsin, uAcos, uAtan, uCbrt, uRound, uRint, uTrunc,
             uSigmoid, kUnary };
const char *const kUnaryName[] = {"erf",  "tanh", "log1p", "expm1", "sinh", "cosh", "asin",
                                  "acos", "atan", "cbrt",  "round", "rint", "trunc", "sigmoid"};

// Function k reads in[k * n + i] and writes out[k * n + i]: one kernel (one
// compile per target and type) covers all of them, each on its own domain.
template <class T> void unary_math(Ptr<T> in, Ptr<T> out, i32 n) {
  auto offs = program_id(0) * kBlock + arange(0, kBlock);
  auto m = offs < n;
  auto apply = [&](int k, auto fn) { store(out + (offs + k * n), fn(load(in + (offs + k * n), m)), m); };
  apply(uErf, [](T x) { return erf(x); });
  apply(uTanh, [](T x) { return tanh(x); });
  apply(uLog1p, [](T x) { return log1p(x); });
  apply(uExpm1, [](T x) { return expm1(x); });
  apply(uSinh, [](T x) { return sinh(x); });
  apply(uCosh, [](T x) { return cosh(x); });
  apply(uAsin, [](T x) { return asin(x); });
  apply(uAcos, [](T x) { return acos(x); });
  apply(uAtan, [](T x) { return atan(x); });
  apply(uCbrt, [](T x) { return cbrt(x); });
  apply(uRound, [](T x) { return round(x); });
  apply(uRint, [](T x) { return rint(x); });
  apply(uTrunc, [](T x) { return trunc(x); });
  apply(uSigmoid, [](T x) { return sigmoid(x); });
}

double unaryReference(int k, double x) {
  switch (k) {
  case uErf: return std::erf(x);
  case uTanh: return std::tanh(x);
  case uLog1p: return std::log1p(x);
  case uExpm1: return std::expm1(x);
  case uSinh: return std::sinh(x);
  case uCosh: return std::cosh(x);
  case uAsin: return std::asin(x);
  case uAcos: return std::acos(x);
  case uAtan: return std::atan(x);
  case uCbrt: return std::cbrt(x);
  case uRound: return std::round(x);
  case uRint: return std::nearbyint(x); // to even (the default rounding mode)
  case uTrunc: return std::trunc(x);
  default: return 1 / (1 + std::exp(-x));
  }
}

// Where function k's random inputs lie.
std::pair<double, double> unaryDomain(int k) {
  switch (k) {
  case uErf: return {-4, 4};
  case uLog1p: return {-0.999, 10};
  case uExpm1: return {-2, 2};
  case uAsin:
  case uAcos: return {-1, 1};
  case uAtan: return {-20, 20};
  case uCbrt: return {-1000, 1000};
  case uSigmoid: return {-30, 30};
  default: return {-10, 10};
  }
}

// Inputs every function sees first (those a type cannot hold become 0 or inf).
const double kEdges[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 1e30, -1e30, 1e-30, -1e-30, 1e-40,
                         -1e-40, 1.0, -1.0, 0.5, -0.5, 1e-4, -1e-4, 100.0, -100.0, 90.0, -90.0};
// The roundings' own: exact halves, the float just below 0.5, 2^23 + 1, ...
const double kRoundingEdges[] = {2.5, -2.5, 1.5, -1.5, 3.5, -3.5, 0.49999997, -0.49999997, 0.4, -0.4,
                                 8388609.0, -8388609.0, 4194304.5, 1e20};
// sigmoid's: results that are denormal in f32, and 0 and 1 exactly.
const double kSigmoidEdges[] = {-100.0, -95.0, -88.0, -87.0, -104.0, -110.0, 17.0, 40.0};

// The format of a host element type, for ulps.
template <class E> struct Format;
template <> struct Format<float> { static constexpr int mantissa = 23, minExponent = -126; };
template <> struct Format<double> { static constexpr int mantissa = 52, minExponent = -1022; };
template <> struct Format<half> { static constexpr int mantissa = 10, minExponent = -14; };
template <> struct Format<bfloat16> { static constexpr int mantissa = 7, minExponent = -126; };

// |got - want| in units of E's last place at `want`; a NaN must meet a NaN,
// an infinity the same infinity (after rounding want to E) and an exact zero
// a zero of its sign.
template <class E> double ulpError(double got, double want) {
  if (std::isnan(want))
    return std::isnan(got) ? 0 : INFINITY;
  const double rounded = double(E(want));
  if (std::isinf(rounded))
    return got == rounded ? 0 : INFINITY;
  if (want == 0)
    return got == 0 && std::signbit(got) == std::signbit(want) ? 0 : INFINITY;
  if (std::isnan(got) || std::isinf(got))
    return INFINITY;
  const int exponent = std::max(std::ilogb(want), Format<E>::minExponent);
  return std::fabs(got - want) / std::ldexp(1.0, exponent - Format<E>::mantissa);
}

std::vector<double> inputsFor(const std::vector<double> &edges, size_t n, double lo, double hi) {
  std::vector<double> v = randomDoubles(n, lo, hi);
  for (size_t i = 0; i < std::min(n, edges.size()); ++i)
    v[i] = edges[i];
  return v;
}

// Tolerance in ulps of E: exact roundings; ocml (and the emulator's libm) are
// within a few ulp in f32 and f64; f16 and bf16 round an f32 result once.
template <class E> double unaryTolerance(int k) {
  if (k == uRound || k == uRint || k == uTrunc)
    return 0;
  return sizeof(E) == 2 ? 1 : 4;
}

template <class T> void checkUnary(const char *name) {
  using E = typename T::element_type;
  auto kernel = jit(unary_math<T>, name);
  for (const char *arch : kArchs) {
    Device dev = Device::emulator(arch);
    for (size_t n : kSizes) {
      std::vector<E> in(kUnary * n);
      for (int k = 0; k < kUnary; ++k) {
        std::vector<double> edges(std::begin(kEdges), std::end(kEdges));
        if (k == uRound || k == uRint || k == uTrunc)
          edges.insert(edges.begin(), std::begin(kRoundingEdges), std::end(kRoundingEdges));
        if (k == uSigmoid)
          edges.insert(edges.begin(), std::begin(kSigmoidEdges), std::end(kSigmoidEdges));
        auto [lo, hi] = unaryDomain(k);
        std::vector<double> x = inputsFor(edges, n, lo, hi);
        for (size_t i = 0; i < n; ++i)
          in[k * n + i] = E(x[i]);
      }
      auto x = dev.upload(in);
      auto out = dev.upload(std::vector<E>(kUnary * n, E(-12345.0f)));
      kernel.launch(dev, {cdiv(n, kBlock)}, {}, x, out, int(n));
      auto got = out.download();
      for (int k = 0; k < kUnary; ++k) {
        double worst = 0;
        size_t worstAt = 0;
        for (size_t i = 0; i < n; ++i) {
          double e = ulpError<E>(double(got[k * n + i]), unaryReference(k, double(in[k * n + i])));
          if (e > worst || std::isnan(e))
            worst = e, worstAt = i;
        }
        const std::string what = std::string(name) + " on " + arch + ": " + kUnaryName[k];
        const double x = double(in[k * n + worstAt]);
        INFO(what << ", n = " << n << ", worst at x = " << x << ": got " << double(got[k * n + worstAt]) << ", want "
                  << unaryReference(k, x));
        CHECK(worst <= unaryTolerance<E>(k));
      }
    }
  }
}

} // namespace

TEST_CASE("tl.math functions: f32 on every target") { checkUnary<f32>("unary_math_f32"); }
TEST_CASE("tl.math functions: f64 on every target") { checkUnary<f64>("unary_math_f64"); }
TEST_CASE("tl.math functions: f16 (in f32) on every target") { checkUnary<f16>("unary_math_f16"); }
TEST_CASE("tl.math functions: bf16 (in f32) on every target") { checkUnary<bf16>("unary_math_bf16"); }

namespace {

enum Binary { bPow, bAtan2, bPowLiteralExponent, bPowLiteralBase, bAtan2LiteralX, kBinary };
const char *const kBinaryName[] = {"pow(a, b)", "atan2(a, b)", "pow(a, 3)", "pow(2.0, a)", "atan2(a, -1.0f)"};

template <class T> void binary_math(Ptr<T> a, Ptr<T> b, Ptr<T> out, i32 n) {
  auto offs = program_id(0) * kBlock + arange(0, kBlock);
  auto m = offs < n;
  auto x = load(a + offs, m), y = load(b + offs, m);
  store(out + offs, pow(x, y), m);
  store(out + (offs + n), atan2(x, y), m);
  store(out + (offs + 2 * n), pow(x, 3), m);
  store(out + (offs + 3 * n), pow(2.0, x), m);
  store(out + (offs + 4 * n), atan2(x, -1.0f), m);
}

double binaryReference(int k, double a, double b) {
  switch (k) {
  case bPow: return std::pow(a, b);
  case bAtan2: return std::atan2(a, b);
  case bPowLiteralExponent: return std::pow(a, 3.0);
  case bPowLiteralBase: return std::pow(2.0, a);
  default: return std::atan2(a, -1.0);
  }
}

// C's special cases of pow and atan2 (signed zeros, infinities, NaN, a
// negative base with an integer or fractional exponent, overflow).
const std::pair<double, double> kBinaryEdges[] = {
    {-2, 3},        {-2, 0.5},      {-2, -3},      {0.0, -1},      {-0.0, -1},     {-0.0, -2},      {-0.0, 3},
    {NAN, 0},       {1, NAN},       {NAN, 1},      {-1, INFINITY}, {0.5, INFINITY}, {2, -INFINITY}, {INFINITY, -1},
    {-INFINITY, 3}, {-INFINITY, -3}, {10, 40},     {10, -50},      {0.0, 0.0},     {-0.0, 0.0},     {0.0, -0.0},
    {-0.0, -0.0},   {1, 0},         {-1, 0},       {INFINITY, INFINITY}, {-INFINITY, -INFINITY}, {1e30, 1e-30},
    {1e-30, 1e30},  {-8, 1.0 / 3},  {1e-40, 2}};

template <class T> void checkBinary(const char *name) {
  using E = typename T::element_type;
  auto kernel = jit(binary_math<T>, name);
  for (const char *arch : kArchs) {
    Device dev = Device::emulator(arch);
    for (size_t n : kSizes) {
      auto da = randomDoubles(n, 0.01, 8), db = randomDoubles(n, -6, 6);
      std::vector<E> ha(n), hb(n);
      for (size_t i = 0; i < n; ++i) {
        double a = i % 3 == 0 ? -da[i] : da[i], b = db[i];
        if (i % 3 == 0 && i % 2 == 0)
          b = std::round(b); // a negative base with an integer exponent
        if (i < std::size(kBinaryEdges))
          std::tie(a, b) = kBinaryEdges[i];
        ha[i] = E(a);
        hb[i] = E(b);
      }
      auto a = dev.upload(ha), b = dev.upload(hb);
      auto out = dev.upload(std::vector<E>(kBinary * n, E(-12345.0f)));
      kernel.launch(dev, {cdiv(n, kBlock)}, {}, a, b, out, int(n));
      auto got = out.download();
      for (int k = 0; k < kBinary; ++k) {
        double worst = 0;
        size_t worstAt = 0;
        for (size_t i = 0; i < n; ++i) {
          double e = ulpError<E>(double(got[k * n + i]), binaryReference(k, double(ha[i]), double(hb[i])));
          if (e > worst || std::isnan(e))
            worst = e, worstAt = i;
        }
        const std::string what = std::string(name) + " on " + arch + ": " + kBinaryName[k];
        const double a = double(ha[worstAt]), b = double(hb[worstAt]);
        INFO(what << ", n = " << n << ", worst at (" << a << ", " << b << "): got " << double(got[k * n + worstAt])
                  << ", want " << binaryReference(k, a, b));
        CHECK(worst <= (sizeof(E) == 2 ? 1 : 4));
      }
    }
  }
}

} // namespace

TEST_CASE("pow and atan2, with literal operands: f32 on every target") { checkBinary<f32>("binary_math_f32"); }
TEST_CASE("pow and atan2, with literal operands: f64 on every target") { checkBinary<f64>("binary_math_f64"); }
TEST_CASE("pow and atan2, with literal operands: f16 (in f32) on every target") { checkBinary<f16>("binary_math_f16"); }
TEST_CASE("pow and atan2, with literal operands: bf16 (in f32) on every target") {
  checkBinary<bf16>("binary_math_bf16");
}

TEST_CASE("the tl.math functions are ocml calls in the kernel module; round, rint and trunc are instructions") {
  auto kernel = jit(unary_math<f32>, "unary_math_f32_module");
  Device dev = Device::emulator("gfx942");
  auto x = dev.upload(std::vector<float>(kUnary, 0.5f));
  auto out = dev.alloc<float>(kUnary);
  kernel.launch(dev, {1}, {}, x, out, 1);
  const std::string ir = kernel.runtime()->lastKernel()->llvmIR();
  for (const char *fn : {"erf", "tanh", "log1p", "expm1", "sinh", "cosh", "asin", "acos", "atan", "cbrt"}) {
    INFO(std::string(fn));
    CHECK(contains(ir, std::string("@__ocml_") + fn + "_f32("));
  }
  const std::string &s = kernel.runtime()->lastKernel()->assembly();
  CHECK(contains(s, "v_rndne_f32"));
  CHECK(contains(s, "v_trunc_f32"));
}
