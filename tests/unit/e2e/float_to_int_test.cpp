// cast<int>(float tile) of NaN, infinities and values outside the integer's
// range gives on the emulator what the AMDGPU code gives, in both emulator
// forms: the GPU's conversion instructions saturate and turn NaN into 0
// (V_CVT_I32_F32 & co.), where LLVM's fptosi is poison and x86's cvttss2si
// gives 0x80000000. cast to i8 / i16 converts to i32 and keeps the low bits
// (on every target: gfx11 alone would pair f32 -> i16 conversions into a
// saturating 16-bit one); to i64 follows the AMDGPU backend's two-word
// sequence (emulator_float_to_int.cpp).
#include "e2e_common.hpp"

#include "../scoped_env.hpp"

using namespace tessel;
using namespace e2e;
using tessel::testing::ScopedEnv;

namespace {

template <class From, class To> void float_to_int(Ptr<From> x, Ptr<To> out, Const<int> B) {
  auto i = arange(0, B);
  store(out + i, cast<To>(load(x + i)));
}

// One GPU conversion instruction: toward zero, saturating, NaN -> 0.
template <class I> I cvt(double x) {
  if (std::isnan(x))
    return 0;
  const double t = std::trunc(x);
  if (t <= double(std::numeric_limits<I>::min()))
    return std::numeric_limits<I>::min();
  if (t >= double(std::numeric_limits<I>::max()))
    return std::numeric_limits<I>::max();
  return I(t);
}

// What the AMDGPU code of cast<To> computes for x, a value of type From.
template <class From, class To> To gpuCast(double x) {
  constexpr bool fromHalf = std::is_same_v<From, half>, fromDouble = std::is_same_v<From, double>;
  if constexpr (sizeof(To) <= 4) {
    return To(uint32_t(cvt<int32_t>(x))); // v_cvt_i32_f{32,64}, then the low bits (cast converts through i32)
  } else if constexpr (fromHalf) {
    return To(cvt<int32_t>(x)); // v_cvt_i32_f32, sign-extended
  } else if constexpr (fromDouble) {
    const double t = std::trunc(x), hi = std::floor(t * 0x1p-32), lo = std::fma(hi, -0x1p32, t);
    return To((uint64_t(uint32_t(cvt<int32_t>(hi))) << 32) | cvt<uint32_t>(lo));
  } else { // f32 and bf16 (through f32): on the magnitude, then the sign
    const float t = std::trunc(float(x)), a = std::fabs(t), hi = std::floor(a * 0x1p-32f),
                lo = std::fma(hi, -0x1p32f, a);
    const uint64_t v = (uint64_t(cvt<uint32_t>(hi)) << 32) | cvt<uint32_t>(lo);
    const uint64_t s = std::signbit(t) ? ~uint64_t(0) : 0;
    return To((v ^ s) - s);
  }
}

const std::vector<double> kInputs = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -0.5, 1.9, -1.9, 127.9, 128, -129, 300.5, -300.5, 255, 256,
    32767.5, 32768, -32769, 40000, -40000, 65504, 65535, 1e5, -1e5, 2147483520.0, 2147483648.0, -2147483648.0,
    -2147483904.0, 3e9, -3e9, 4294967296.0, 5e9, -5e9, 1e10, -1e10, 9.2e18, 1e19, 2e19, -1e19, -9.3e18, 1e30,
    -1e30, 1e300, -1e300, 7.5, -7.5, 1000.25, -1000.25, 123456.0, -123456.0, 16777217.0, 1e15, -1e15, 4.5e15,
    0x1p63, -0x1p63, 0x1p64, 0x1p62 * 3, 1e-30, -1e-30, 65519.0, 65520.0};

// Runs cast<To> of kInputs (as From) in `path` and checks every element.
template <class From, class To> void check(Device &dev, const char *path) {
  const int B = 64;
  std::vector<From> hx;
  for (double v : kInputs)
    hx.push_back(From(static_cast<float>(v)));
  if constexpr (std::is_same_v<From, double>)
    for (size_t i = 0; i < hx.size(); ++i)
      hx[i] = kInputs[i]; // doubles exactly
  REQUIRE(hx.size() == size_t(B));
  auto x = dev.upload(hx);
  auto out = dev.upload(std::vector<To>(size_t(B), To(0x5A)));
  ScopedEnv form("TESSEL_EMULATOR_PATH", path);
  jit<float_to_int<From, To>>().launch(dev, {1}, {.num_warps = 1}, x, out, B);
  std::vector<To> got = out.download();
  for (int i = 0; i < B; ++i) {
    const double v = double(hx[size_t(i)]);
    INFO(dev.arch() << " " << std::string(path) << ": cast of " << v << " (input " << kInputs[size_t(i)] << ") to "
                    << sizeof(To) * 8 << "-bit int");
    CHECK(int64_t(got[size_t(i)]) == int64_t(gpuCast<From, To>(v)));
  }
}

template <class From> void checkAllWidths(Device &dev, const char *path) {
  check<From, int8_t>(dev, path);
  check<From, int16_t>(dev, path);
  check<From, int32_t>(dev, path);
  check<From, int64_t>(dev, path);
}

} // namespace

TEST_CASE("cast float to int: NaN is 0 and out-of-range values saturate as the GPU's v_cvt_i32_f32 does") {
  // The model's anchors, from the ISA text (saturate, NaN -> 0) and the backend's lowering.
  CHECK(gpuCast<float, int32_t>(NAN) == 0);
  CHECK(gpuCast<float, int32_t>(INFINITY) == INT32_MAX);
  CHECK(gpuCast<float, int32_t>(-3e9) == INT32_MIN);
  CHECK(gpuCast<float, int8_t>(300.5) == 44);     // 300, truncated to a byte
  CHECK(gpuCast<float, int8_t>(1e10) == -1);      // INT32_MAX's low byte
  CHECK(gpuCast<half, int16_t>(40000) == -25536);  // 40000's low half
  CHECK(gpuCast<half, int16_t>(INFINITY) == -1);   // INT32_MAX's low half
  CHECK(gpuCast<half, int64_t>(INFINITY) == INT32_MAX);
  CHECK(gpuCast<float, int64_t>(-INFINITY) == int64_t(1) << 32);
  CHECK(gpuCast<float, int64_t>(-5e9) == -5000000000);
  CHECK(gpuCast<double, int64_t>(NAN) == 0);
  CHECK(gpuCast<double, int64_t>(-0x1p63) == INT64_MIN);
  CHECK(uint64_t(gpuCast<double, int64_t>(1e19)) == 0x7fffffff89e80000u); // the user guide's example

  for (const char *arch : {"gfx942", "gfx1100"}) {
    Device dev = Device::emulator(arch);
    for (const char *path : {"waves", "fibers"}) {
      checkAllWidths<float>(dev, path);
      checkAllWidths<double>(dev, path);
      checkAllWidths<half>(dev, path);
      checkAllWidths<bfloat16>(dev, path);
    }
  }
}

// Why cast<int8_t> / cast<int16_t> convert through int32: gfx1100's backend
// pairs two f32 -> i16 conversions into v_cvt_pk_i16_f32, which saturates to
// 16 bits (40000 -> 32767) where one at a time through 32 bits keeps the low
// bits (40000 -> -25536), so a conversion's result would depend on its
// neighbour. The code for every target converts with v_cvt_i32_f32. (The
// emulator runs the IR before the backend pairs anything: only the
// assembly shows it; without the cast through i32 gfx1100's has it.)
TEST_CASE("cast float to int16 converts through i32 on every target: no paired v_cvt_pk_i16_f32") {
  for (std::string arch : {"gfx942", "gfx950", "gfx1100"}) {
    INFO(arch);
    Device dev = Device::emulator(arch);
    auto x = dev.upload(std::vector<float>(64, 40000.0f));
    auto out = dev.upload(std::vector<int16_t>(64, 0));
    auto kernel = jit<float_to_int<float, int16_t>>();
    kernel.launch(dev, {1}, {.num_warps = 1}, x, out, 64);
    const std::string assembly = kernel.runtime()->lastKernel()->assembly();
    CHECK_FALSE(contains(assembly, "v_cvt_pk_i16_f32"));
    CHECK(contains(assembly, "v_cvt_i32_f32"));
    CHECK(out.download() == std::vector<int16_t>(64, int16_t(-25536)));
  }
}
