// half and bfloat16 host conversions: exact where representable, RNE otherwise.
#include <tessel/types.hpp>

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>

using tessel::bfloat16;
using tessel::half;

TEST_CASE("half: exact values") {
  CHECK(half(1.0f).bits == 0x3C00);
  CHECK(half(-2.0f).bits == 0xC000);
  CHECK(half(0.5f).bits == 0x3800);
  CHECK(half(65504.0f).bits == 0x7BFF);             // largest finite
  CHECK(half(std::ldexp(1.0f, -14)).bits == 0x0400); // smallest normal
  CHECK(half(std::ldexp(1.0f, -24)).bits == 0x0001); // smallest subnormal
  CHECK(half(-0.0f).bits == 0x8000);
  CHECK(float(half::fromBits(0x3555)) == 0.333251953125f);
  static_assert(half(1.5f).bits == 0x3E00); // constexpr
}

TEST_CASE("half: round to nearest even, overflow, NaN") {
  float one = 1.0f, ulp = std::ldexp(1.0f, -10);
  CHECK(half(one + ulp / 2).bits == 0x3C00);      // tie -> even (down)
  CHECK(half(one + 3 * ulp / 2).bits == 0x3C02);  // tie -> even (up)
  CHECK(half(one + ulp / 2 + ulp / 8).bits == 0x3C01);
  CHECK(half(std::ldexp(1.0f, -25)).bits == 0x0000);     // tie with zero -> 0
  CHECK(half(std::ldexp(3.0f, -25)).bits == 0x0002);     // 1.5 subnormal ulps -> 2
  CHECK(half(std::ldexp(1.0f, -26)).bits == 0x0000);
  CHECK(half(std::ldexp(1023.5f, -24)).bits == 0x0400);  // rounds up into the normals
  CHECK(half(65519.0f).bits == 0x7BFF);
  CHECK(half(65520.0f).bits == 0x7C00); // tie -> even is infinity
  CHECK(half(1e10f).bits == 0x7C00);
  CHECK(half(-std::numeric_limits<float>::infinity()).bits == 0xFC00);
  CHECK(std::isnan(float(half(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("half: every half converts to float and back unchanged") {
  int mismatches = 0, checked = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = half::fromBits(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    ++checked;
    mismatches += half(f).bits != b;
  }
  CHECK(checked == 0x10000 - 2 * 1023); // all but the NaNs
  CHECK(mismatches == 0);
}

TEST_CASE("bfloat16: exact, RNE, NaN, round trip") {
  CHECK(bfloat16(1.0f).bits == 0x3F80);
  CHECK(bfloat16(-2.0f).bits == 0xC000);
  CHECK(bfloat16(std::bit_cast<float>(0x3F808000u)).bits == 0x3F80); // tie -> even
  CHECK(bfloat16(std::bit_cast<float>(0x3F818000u)).bits == 0x3F82);
  CHECK(bfloat16(std::bit_cast<float>(0x3F808001u)).bits == 0x3F81);
  CHECK(bfloat16(std::bit_cast<float>(0x7F7FFFFFu)).bits == 0x7F80); // max float rounds to inf
  CHECK(std::isnan(float(bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isnan(float(bfloat16(std::bit_cast<float>(0x7F800001u))))); // signalling NaN stays NaN
  int mismatches = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = bfloat16::fromBits(static_cast<uint16_t>(b));
    if (!std::isnan(f)) mismatches += bfloat16(f).bits != b;
  }
  CHECK(mismatches == 0);
}
