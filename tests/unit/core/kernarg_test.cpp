// The kernarg ABI in core/kernarg.hpp: the rule itself, and that the
// compile-time plan (launch side) and the vector layout (compiler side) are
// one function.
#include "tessel/core/kernarg.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <vector>

using namespace tessel;

namespace {

// One argument of each size class, in an order that needs padding.
constexpr std::array<TraceArg, 6> kArgs{{{TraceArg::Int, DType::I1},
                                         {TraceArg::Pointer, DType::F16},
                                         {TraceArg::Int, DType::I16},
                                         {TraceArg::Float, DType::BF16},
                                         {TraceArg::Float, DType::F64},
                                         {TraceArg::Int, DType::I32}}};

// Natural alignment, pointers 8 bytes, i1 one byte; no padding at the end.
constexpr auto kPlan = kernargPlan(kArgs);
static_assert(kPlan.sizes == std::array<uint32_t, 6>{1, 8, 2, 2, 8, 4});
static_assert(kPlan.offsets == std::array<uint32_t, 6>{0, 8, 16, 18, 24, 32});
static_assert(kPlan.totalBytes == 36);
static_assert(kernargPlan(std::array<TraceArg, 0>{}).totalBytes == 0);

// The compiler's kernargLayout(), evaluated at compile time, equals the plan.
static_assert([] {
  KernargLayout layout = kernargLayout(std::vector<TraceArg>(kArgs.begin(), kArgs.end()));
  return std::ranges::equal(layout.offsets, kPlan.offsets) && std::ranges::equal(layout.sizes, kPlan.sizes) &&
         layout.totalBytes == kPlan.totalBytes;
}());

} // namespace

TEST_CASE("kernargLayout at run time equals the compile-time plan") {
  KernargLayout layout = kernargLayout(std::vector<TraceArg>(kArgs.begin(), kArgs.end()));
  CHECK(layout.offsets == std::vector<uint32_t>(kPlan.offsets.begin(), kPlan.offsets.end()));
  CHECK(layout.sizes == std::vector<uint32_t>(kPlan.sizes.begin(), kPlan.sizes.end()));
  CHECK(layout.totalBytes == kPlan.totalBytes);
  CHECK(kernargLayout({}) == KernargLayout{});
}

TEST_CASE("every dtype's kernarg size is its width in whole bytes") {
  for (DType t : {DType::I1, DType::I8, DType::I16, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32,
                  DType::F64}) {
    CAPTURE(dtypeName(t));
    CHECK(kernargBytes({isFloat(t) ? TraceArg::Float : TraceArg::Int, t}) == std::max(1u, dtypeBits(t) / 8));
    CHECK(kernargBytes({TraceArg::Pointer, t}) == 8);
  }
}
