// Every DSL op on the emulator against a host reference, at sizes that are
// and are not multiples of the block.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <functional>

using namespace tessel;
using namespace e2e;

namespace {

constexpr int kBlock = 256;
const size_t kSizes[] = {1, 255, 256, 1000, 4099};

enum IntOp { kAdd, kSub, kMul, kDiv, kRem, kAnd, kOr, kXor, kShl, kShr, kMin, kMax, kEq, kNe,
             kLt, kLe, kGt, kGe, kNeg, kNot, kAbs, kNumIntOps };
const char *intOpName[] = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "min", "max",
                           "==", "!=", "<", "<=", ">", ">=", "neg", "~", "abs"};

template <class T> void int_ops(Ptr<T> a, Ptr<T> b, Ptr<T> out, i32 n, Const<int> OP) {
  using E = typename T::element_type;
  auto offs = program_id(0) * kBlock + arange(0, kBlock);
  auto m = offs < n;
  auto x = load(a + offs, m, 0);
  auto y = load(b + offs, m, 1);
  auto r = [&]() -> T {
    switch (int(OP)) {
    case kAdd: return x + y;
    case kSub: return x - y;
    case kMul: return x * y;
    case kDiv: return x / y;
    case kRem: return x % y;
    case kAnd: return x & y;
    case kOr: return x | y;
    case kXor: return x ^ y;
    case kShl: return x << y;
    case kShr: return x >> y;
    case kMin: return minimum(x, y);
    case kMax: return maximum(x, y);
    case kEq: return cast<E>(x == y);
    case kNe: return cast<E>(x != y);
    case kLt: return cast<E>(x < y);
    case kLe: return cast<E>(x <= y);
    case kGt: return cast<E>(x > y);
    case kGe: return cast<E>(x >= y);
    case kNeg: return -x;
    case kNot: return ~x;
    default: return abs(x);
    }
  }();
  store(out + offs, r, m);
}

template <class E> E intReference(int op, E x, E y) {
  int64_t a = x, b = y;
  switch (op) {
  case kAdd: return E(a + b);
  case kSub: return E(a - b);
  case kMul: return E(uint64_t(a) * uint64_t(b));
  case kDiv: return E(a / b);
  case kRem: return E(a % b);
  case kAnd: return E(a & b);
  case kOr: return E(a | b);
  case kXor: return E(a ^ b);
  case kShl: return E(uint64_t(a) << b);
  case kShr: return E(a >> b);
  case kMin: return E(std::min(a, b));
  case kMax: return E(std::max(a, b));
  case kEq: return a == b;
  case kNe: return a != b;
  case kLt: return a < b;
  case kLe: return a <= b;
  case kGt: return a > b;
  case kGe: return a >= b;
  case kNeg: return E(-a);
  case kNot: return E(~a);
  default: return E(a < 0 ? -a : a);
  }
}

template <class T> void checkIntOps(const char *name) {
  using E = typename T::element_type;
  auto kernel = jit(int_ops<T>, name);
  for (int op = 0; op < kNumIntOps; ++op) {
    for (size_t n : kSizes) {
      INFO(name);
      INFO(intOpName[op]);
      CAPTURE(n);
      int64_t lim = std::min<int64_t>(std::numeric_limits<E>::max() / 2, 1000000);
      auto hx = randomInts<E>(n, -lim, lim);
      auto hy = op == kShl || op == kShr ? randomInts<E>(n, 0, sizeof(E) * 8 - 2)
                                         : randomInts<E>(n, -lim, lim);
      if (op == kDiv || op == kRem)
        for (E &v : hy)
          v = v == 0 ? 7 : v;
      if (op == kShl) // keep the shifted value representable
        for (E &v : hx)
          v = E(v >> (sizeof(E) * 4));
      auto x = emulator().upload(hx), y = emulator().upload(hy);
      auto out = poisoned<E>(n);
      kernel.launch(emulator(), {cdiv(n, kBlock)}, {}, x, y, out, int(n), op);
      auto got = out.download();
      size_t wrong = 0;
      for (size_t i = 0; i < n; ++i)
        wrong += got[i] != intReference<E>(op, hx[i], hy[i]);
      CHECK(wrong == 0);
    }
  }
}

} // namespace

TEST_CASE("integer ops: i32") { checkIntOps<i32>("int_ops_i32"); }
TEST_CASE("integer ops: i64") { checkIntOps<i64>("int_ops_i64"); }
TEST_CASE("integer ops: i16") { checkIntOps<i16>("int_ops_i16"); }
TEST_CASE("integer ops: i8") { checkIntOps<i8>("int_ops_i8"); }

TEST_CASE("i16 arithmetic on gfx942 is packed two to an instruction (v_pk_sub_i16, v_pk_max_i16)") {
  // The lowering packs f32 itself and leaves LLVM's SLP vectorizer out of a
  // kernel of 32-bit values alone; one that computes on 16-bit values still
  // gets it. Without SLP these are one v_sub_u16 / v_max_i16 per element.
  // (n divisible by 16: whole 4-element runs, no masks.)
  auto kernel = jit(int_ops<i16>, "int_ops_i16_packed");
  auto x = emulator().upload(randomInts<int16_t>(4096, -100, 100));
  auto y = emulator().upload(randomInts<int16_t>(4096, -100, 100));
  auto out = poisoned<int16_t>(4096);
  for (int op : {kSub, kMax}) {
    kernel.launch(emulator(), {cdiv(4096, kBlock)}, {}, x, y, out, 4096, op);
    const std::string &s = kernel.runtime()->lastKernel()->assembly();
    CHECK(contains(s, op == kSub ? "v_pk_sub_i16" : "v_pk_max_i16"));
  }
}

namespace {

enum FloatOp { fAdd, fSub, fMul, fDiv, fRem, fMin, fMax, fFma, fNeg, fExp, fExp2, fLog, fLog2,
               fSqrt, fRsqrt, fAbs, fFloor, fCeil, fSin, fCos, fWhereLt, fNumFloatOps };
const char *floatOpName[] = {"+", "-", "*", "/", "%", "minimum", "maximum", "fma", "neg",
                             "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "floor",
                             "ceil", "sin", "cos", "where(<)"};

template <class T> void float_ops(Ptr<T> a, Ptr<T> b, Ptr<T> c, Ptr<T> out, i32 n, Const<int> OP) {
  auto offs = program_id(0) * kBlock + arange(0, kBlock);
  auto m = offs < n;
  auto x = load(a + offs, m, 1.0);
  auto y = load(b + offs, m, 1.0);
  auto z = load(c + offs, m, 1.0);
  auto r = [&]() -> T {
    switch (int(OP)) {
    case fAdd: return x + y;
    case fSub: return x - y;
    case fMul: return x * y;
    case fDiv: return x / y;
    case fRem: return x % y;
    case fMin: return minimum(x, y);
    case fMax: return maximum(x, y);
    case fFma: return fma(x, y, z);
    case fNeg: return -x;
    case fExp: return exp(x);
    case fExp2: return exp2(x);
    case fLog: return log(x);
    case fLog2: return log2(x);
    case fSqrt: return sqrt(x);
    case fRsqrt: return rsqrt(x);
    case fAbs: return abs(x);
    case fFloor: return floor(x);
    case fCeil: return ceil(x);
    case fSin: return sin(x);
    case fCos: return cos(x);
    default: return where(x < y, x, y * 2);
    }
  }();
  store(out + offs, r, m);
}

double floatReference(int op, double x, double y, double z) {
  switch (op) {
  case fAdd: return x + y;
  case fSub: return x - y;
  case fMul: return x * y;
  case fDiv: return x / y;
  case fRem: return std::fmod(x, y);
  case fMin: return std::min(x, y);
  case fMax: return std::max(x, y);
  case fFma: return x * y + z;
  case fNeg: return -x;
  case fExp: return std::exp(x);
  case fExp2: return std::exp2(x);
  case fLog: return std::log(x);
  case fLog2: return std::log2(x);
  case fSqrt: return std::sqrt(x);
  case fRsqrt: return 1 / std::sqrt(x);
  case fAbs: return std::fabs(x);
  case fFloor: return std::floor(x);
  case fCeil: return std::ceil(x);
  case fSin: return std::sin(x);
  case fCos: return std::cos(x);
  default: return x < y ? x : y * 2;
  }
}

bool positiveDomain(int op) { return op == fLog || op == fLog2 || op == fSqrt || op == fRsqrt; }

// E: host element type; tolerance relative to the float64 reference.
template <class T> void checkFloatOps(const char *name, double tolerance) {
  using E = typename T::element_type;
  auto kernel = jit(float_ops<T>, name);
  for (int op = 0; op < fNumFloatOps; ++op) {
    for (size_t n : {size_t(1), size_t(257), size_t(3001)}) {
      INFO(name);
      INFO(floatOpName[op]);
      CAPTURE(n);
      double lo = positiveDomain(op) ? 0.01 : -8, hi = 8;
      std::vector<E> hx(n), hy(n), hz(n);
      auto dx = randomDoubles(n, lo, hi), dy = randomDoubles(n, 0.5, 4),
           dz = randomDoubles(n, -4, 4);
      for (size_t i = 0; i < n; ++i) {
        hx[i] = E(dx[i]);
        hy[i] = E(i % 2 ? dy[i] : -dy[i]);
        hz[i] = E(dz[i]);
      }
      auto x = emulator().upload(hx), y = emulator().upload(hy), z = emulator().upload(hz);
      auto out = poisoned<E>(n);
      kernel.launch(emulator(), {cdiv(n, kBlock)}, {}, x, y, z, out, int(n), op);
      auto got = out.download();
      double worst = 0;
      for (size_t i = 0; i < n; ++i) {
        double want = floatReference(op, double(hx[i]), double(hy[i]), double(hz[i]));
        // Absolute floor: results that cancel to ~0 (sin near pi) are
        // judged against the operands' scale.
        worst = std::max(worst, relError(double(got[i]), want, 1.0));
      }
      CHECK(worst <= tolerance);
    }
  }
}

} // namespace

TEST_CASE("float ops: f32") { checkFloatOps<f32>("float_ops_f32", 2e-6); }
TEST_CASE("float ops: f64") { checkFloatOps<f64>("float_ops_f64", 1e-13); }
TEST_CASE("float ops: f16") { checkFloatOps<f16>("float_ops_f16", 1e-2); }
TEST_CASE("float ops: bf16") { checkFloatOps<bf16>("float_ops_bf16", 1e-2); }

namespace {

template <class From, class To> void cast_kernel(Ptr<From> a, Ptr<To> out, i32 n) {
  using E = typename To::element_type;
  auto offs = program_id(0) * kBlock + arange(0, kBlock);
  auto m = offs < n;
  store(out + offs, cast<E>(load(a + offs, m)), m);
}

template <class From, class To, class Ref>
void checkCast(const char *name, std::vector<typename From::element_type> input, Ref reference) {
  using TE = typename To::element_type;
  auto kernel = jit(cast_kernel<From, To>, name);
  size_t n = input.size();
  auto in = emulator().upload(input);
  auto out = poisoned<TE>(n);
  kernel.launch(emulator(), {cdiv(n, kBlock)}, {}, in, out, int(n));
  auto got = out.download();
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    TE want = reference(input[i]);
    wrong += std::memcmp(&got[i], &want, sizeof(TE)) != 0;
  }
  INFO(name);
  CHECK(wrong == 0);
}

} // namespace

TEST_CASE("casts between element types") {
  auto floats = randomFloats(1001, -1e5f, 1e5f);
  checkCast<f32, i32>("cast_f32_i32", floats, [](float v) { return int32_t(v); });
  checkCast<f32, f16>("cast_f32_f16", randomFloats(1001, -1000, 1000),
                      [](float v) { return half(v); });
  checkCast<f32, bf16>("cast_f32_bf16", floats, [](float v) { return bfloat16(v); });
  checkCast<f32, f64>("cast_f32_f64", floats, [](float v) { return double(v); });
  checkCast<f64, f32>("cast_f64_f32", randomDoubles(777, -1e30, 1e30),
                      [](double v) { return float(v); });
  auto ints = randomInts<int32_t>(1001, -100000, 100000);
  checkCast<i32, f32>("cast_i32_f32", ints, [](int32_t v) { return float(v); });
  checkCast<i32, i8>("cast_i32_i8", ints, [](int32_t v) { return int8_t(v); });
  checkCast<i32, i64>("cast_i32_i64", ints, [](int32_t v) { return int64_t(v); });
  checkCast<i8, i32>("cast_i8_i32", randomInts<int8_t>(999, -128, 127),
                     [](int8_t v) { return int32_t(v); });
}

namespace {
void bool_casts(Ptr<i32> a, Ptr<i32> out, i32 n) {
  auto offs = program_id(0) * kBlock + arange(0, kBlock);
  auto m = offs < n;
  auto x = load(a + offs, m);
  auto f = cast<float>(x);
  // i32 -> i1 -> i32 is x != 0; f32 -> i1 is f != 0; i1 -> f32 is 0 or 1.
  auto r = cast<int32_t>(cast<bool>(x)) + cast<int32_t>(x > 0) * 2 +
           cast<int32_t>(cast<float>(cast<bool>(f)) * 4.0f);
  store(out + offs, r, m);
}
} // namespace

TEST_CASE("casts to and from i1") {
  auto kernel = jit<bool_casts>();
  auto in = randomInts<int32_t>(1001, -2, 2);
  auto a = emulator().upload(in);
  auto out = poisoned<int32_t>(in.size());
  kernel.launch(emulator(), {cdiv(in.size(), kBlock)}, {}, a, out, int(in.size()));
  auto got = out.download();
  size_t wrong = 0;
  for (size_t i = 0; i < in.size(); ++i)
    wrong += got[i] != (in[i] != 0) + (in[i] > 0) * 2 + (in[i] != 0) * 4;
  CHECK(wrong == 0);
}

namespace {
void divide_anything(Ptr<i32> a, Ptr<i32> b, Ptr<i32> q, Ptr<i32> r, i32 n) {
  auto offs = arange(0, 64);
  auto m = offs < n;
  auto x = load(a + offs, m), d = load(b + offs, m);
  store(q + offs, x / d, m);
  store(r + offs, x % d, m);
}
} // namespace

TEST_CASE("integer division is defined for a zero divisor and MIN / -1") {
  auto kernel = jit<divide_anything>();
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> hx = {7, -7, 0, kMin, kMin, 5, 9, -9};
  std::vector<int32_t> hd = {0, 0, 0, -1, 0, 2, -3, 4};
  auto a = emulator().upload(hx), b = emulator().upload(hd);
  auto q = poisoned<int32_t>(hx.size()), r = poisoned<int32_t>(hx.size());
  kernel.launch(emulator(), {1}, {.num_warps = 1}, a, b, q, r, int(hx.size()));
  CHECK(q.download() == std::vector<int32_t>{-1, -1, -1, kMin, -1, 2, -3, -2});
  CHECK(r.download() == std::vector<int32_t>{7, -7, 0, 0, kMin, 1, 0, -1});
}

namespace {
// Triton tutorial 06's tl.where(mask, 0, -1.0e6): two literals take the
// mask's shape and the literals' type (a floating literal: f32; integers:
// i32, or i64 from a 64-bit C++ type; two bools: bool).
void where_literals(Ptr<f32> f, Ptr<i32> i, Ptr<i64> l, Ptr<i1> b, i32 n) {
  auto offs = expand_dims(arange(0, 4), 1) * 8 + expand_dims(arange(0, 8), 0);
  auto mask = offs < n;
  auto tutorial = where(mask, 0, -1.0e6);
  auto floats = where(mask, 0.0f, -1.0e6f);
  auto ints = where(mask, 7, -3);
  auto longs = where(mask, int64_t{1} << 40, 2);
  auto bools = where(mask, false, true);
  static_assert(std::is_same_v<decltype(tutorial), f32> && std::is_same_v<decltype(floats), f32>);
  static_assert(std::is_same_v<decltype(ints), i32> && std::is_same_v<decltype(longs), i64>);
  static_assert(std::is_same_v<decltype(bools), i1>);
  for (const Shape &s : {tutorial.shape(), floats.shape(), ints.shape(), longs.shape(), bools.shape()})
    CHECK(s == Shape{4, 8});
  store(f + offs, tutorial + floats);
  store(i + offs, ints);
  store(l + offs, longs);
  store(b + offs, bools);
}
} // namespace

TEST_CASE("where with two literals takes the mask's shape and the literals' type") {
  auto kernel = jit<where_literals>();
  for (int n : {0, 13, 32}) {
    auto f = poisoned<float>(32);
    auto i = poisoned<int32_t>(32);
    auto l = poisoned<int64_t>(32);
    auto b = emulator().alloc<bool>(32);
    kernel.launch(emulator(), {1}, {}, f, i, l, b, n);
    auto gf = f.download();
    auto gi = i.download();
    auto gl = l.download();
    auto gb = b.download();
    size_t wrong = 0;
    for (int k = 0; k < 32; ++k) {
      const bool in = k < n;
      wrong += gf[k] != (in ? 0.0f : -2.0e6f);
      wrong += gi[k] != (in ? 7 : -3);
      wrong += gl[k] != (in ? int64_t{1} << 40 : 2);
      wrong += gb[k] != !in;
    }
    CAPTURE(n);
    CHECK(wrong == 0);
  }
}
