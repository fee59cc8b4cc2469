// dot_scaled: the matrix product of two blocks in microscaling (MX)
// formats (Triton's tl.dot_scaled; OCP Microscaling Formats v1.0).
//
// Each operand's elements are e2m1 (4-bit floats, two to a byte, the first
// in the low nibble), e4m3 or e5m2 (OCP 8-bit floats), bf16 or fp16, and
// each run of 32 along K shares one e8m0 scale (a byte s: 2^(s - 127); 255
// is NaN). Bytes are int8_t tiles (tessel has no unsigned elements; Triton's
// are uint8), read as unsigned. gfx950 runs e2m1, e4m3 and e5m2 operands
// on its scaled MFMAs (V_MFMA_SCALE_F32_*_F8F6F4, the scales as their
// operands, e2m1 packed as loaded); everything else by upcasting: each element times its scale, in bf16
// (fp16 when either operand is fp16), then dot with f32 accumulation. An 8-
// or 4-bit element times a power of two is exact in bf16 unless it leaves
// bf16's range (as Triton's upcasting path); tessel-legalize-dots turns the
// composition's f32 -> bf16 rounding into truncation, as Triton's AMD upcast,
// which differs only below f32's normal range. Both forms are traced into one
// tessel.dot_scaled; the compiler keeps the one the target runs.
#pragma once

#include "tessel/dot.hpp"
#include "tessel/ops.hpp"
#include "tessel/reduce.hpp"

#include <limits>
#include <optional>
#include <source_location>
#include <string>
#include <type_traits>

namespace tessel {

// MxFormat: core/dtype.hpp (the compiler reads the same values).

namespace detail {

inline const char *mxFormatName(MxFormat f) {
  switch (f) {
  case MxFormat::e2m1: return "e2m1";
  case MxFormat::e4m3: return "e4m3";
  case MxFormat::e5m2: return "e5m2";
  case MxFormat::bf16: return "bf16";
  case MxFormat::fp16: return "fp16";
  }
  return "?";
}

// The element type each format is held in: e2m1 packs two in a int8_t.
template <class E> constexpr bool holdsMxFormat(MxFormat f) {
  switch (f) {
  case MxFormat::e2m1: return std::is_same_v<E, int8_t>;
  case MxFormat::e4m3: return std::is_same_v<E, float8_e4m3fn>;
  case MxFormat::e5m2: return std::is_same_v<E, float8_e5m2>;
  case MxFormat::bf16: return std::is_same_v<E, bfloat16>;
  case MxFormat::fp16: return std::is_same_v<E, half>;
  }
  return false;
}

template <class E> constexpr const char *mxElementName() {
  if constexpr (std::is_same_v<E, int8_t>) return "int8_t";
  else if constexpr (std::is_same_v<E, float8_e4m3fn>) return "float8_e4m3fn";
  else if constexpr (std::is_same_v<E, float8_e5m2>) return "float8_e5m2";
  else if constexpr (std::is_same_v<E, bfloat16>) return "bfloat16";
  else return "half";
}

template <class E> consteval void checkMxElement() {
  static_assert(std::is_same_v<E, int8_t> || std::is_same_v<E, float8_e4m3fn> || std::is_same_v<E, float8_e5m2> ||
                    std::is_same_v<E, bfloat16> || std::is_same_v<E, half>,
                "tessel: dot_scaled takes int8_t (e2m1, two a byte), float8_e4m3fn (e4m3), float8_e5m2 (e5m2), "
                "bfloat16 or half tiles");
}

// e2m1 nibbles (int32, 0..15) as f32: sign, 2 exponent bits (bias 1), 1
// mantissa bit: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
inline Tile<float> decodeE2m1(const Tile<int32_t> &n) {
  Tile<float> m = cast<float>(n & 1) * 0.5f;
  Tile<int32_t> e = (n >> 1) & 3;
  Tile<float> magnitude = where(e == 0, m, (m + 1.0f) * where(e == 1, 1.0f, where(e == 2, 2.0f, 4.0f)));
  return where((n & 8) != 0, -magnitude, magnitude);
}

// e8m0 bytes as f32 powers of two, 2^(s - 127), exactly: 2^(s & 127) by
// its bits times 2 (s >= 128) or 2^-127; 255 is NaN.
inline Tile<float> decodeE8m0(const Tile<int8_t> &scale) {
  Tile<int32_t> s = cast<int32_t>(scale) & 255; // the byte, unsigned
  Tile<float> p = where((s & 1) != 0, 2.0f, 1.0f);
  float factor = 2.0f;
  for (int bit = 1; bit < 7; ++bit) {
    factor *= factor; // 2^(2^bit)
    p = p * where((s & (1 << bit)) != 0, factor, 1.0f);
  }
  p = p * where(s >= 128, 2.0f, 0x1p-127f);
  return where(s == 255, std::numeric_limits<float>::quiet_NaN(), p);
}

// `x` [R, Kx] in `format` as f32 [R, K], K along the last dimension.
template <class E> Tile<float> upcastRows(const Tile<E> &x, MxFormat format, int64_t rows, int64_t k) {
  if constexpr (std::is_same_v<E, int8_t>) {
    Tile<int32_t> bytes = reshape(cast<int32_t>(x) & 255, {rows * k / 2});
    return reshape(join(decodeE2m1(bytes & 15), decodeE2m1(bytes >> 4)), {rows, k});
  } else {
    (void)format;
    return cast<float>(x);
  }
}

// Scales [R, K / 32] spread over [R, K] and applied. For a few groups (a
// matmul's K step: 2 at BLOCK_K 64) each group's column is taken out with a
// select and a sum over the groups and spread by selects on K: elementwise
// work in x's own layout. Reshaping [R, K / 32, 32] to [R, K] instead moves
// the tile through LDS (gfx942 at 128 x 128 x 128: more LDS than it has);
// for many groups it is the cheaper of the two.
inline constexpr int64_t kScaleGroupsBySelect = 8;

// decoded [L, K / 32] (a scale per line and group of 32 along K) spread over
// K by a select per group: [L, K].
inline Tile<float> spreadGroups(const Tile<float> &decoded, int64_t lines, int64_t k) {
  const int64_t groups = k / 32;
  const Shape shape{lines, k};
  auto group = expand_dims(arange(0, int32_t(groups)), 0);    // [1, G]
  auto groupOfK = expand_dims(arange(0, int32_t(k)) / 32, 0); // [1, K]
  Tile<float> spread = zeros<float>(shape);
  for (int32_t g = 0; g < int32_t(groups); ++g) {
    Tile<float> line = expand_dims(sum(where(group == g, decoded, 0.0f), 1), 1); // [L, 1]
    spread = g == 0 ? broadcast_to(line, shape) : where(groupOfK == g, line, spread);
  }
  return spread;
}

inline Tile<float> applyScales(const Tile<float> &x, const std::optional<Tile<int8_t>> &scale, int64_t rows,
                               int64_t k) {
  if (!scale)
    return x;
  const int64_t groups = k / 32;
  Tile<float> decoded = decodeE8m0(*scale);
  if (groups > kScaleGroupsBySelect)
    return x * reshape(broadcast_to(expand_dims(decoded, 2), {rows, groups, 32}), {rows, k});
  return x * spreadGroups(decoded, rows, k);
}

// b [K, N] (f32) times its scales [N, K / 32] along K, b's first
// dimension (up to kScaleGroupsBySelect groups, the limit A's select spread
// has; the gather itself has none): b stays as loaded, where scaling it as rows of
// trans(b) moved the 8-bit tile through LDS (gfx942's e4m3 decomposition: a
// byte a thread a K row each way, two barriers). Each element's scale is
// gathered from the decoded [K / 32, N] through LDS (one trip, a read per
// element): a thread of a tile loaded along N holds 16 columns of one K
// row, and spreading every group's column by selects kept all of them
// live (gfx942 triton03mx at 8 waves: 143 VGPRs, 2 waves, against 124 and
// Triton's 4; one LDS trip instead of one a group).
inline Tile<float> applyScalesAlongK(const Tile<float> &y, const std::optional<Tile<int8_t>> &scale, int64_t k,
                                     int64_t n) {
  if (!scale)
    return y;
  auto groupOfK = broadcast_to(expand_dims(arange(0, int32_t(k)) / 32, 1), {k, n});
  return y * gather(trans(decodeE8m0(*scale)), groupOfK, 0);
}

} // namespace detail

// (a * a_scale) [M, K] times (b * b_scale) [K, N] plus acc [M, N], in f32:
// Triton's `tl.dot_scaled(a, a_scale, a_format, b, b_scale, b_format, acc)`.
// a is [M, K] ([M, K / 2] bytes for e2m1, packed along K); b is [K, N]
// ([K / 2, N] for e2m1, packed along K); a_scale is [M, K / 32] and b_scale
// [N, K / 32] e8m0 bytes, or std::nullopt for none. K is a multiple of 32.
// Each format names its operand's element type (checked at trace time):
// e2m1 int8_t, e4m3 float8_e4m3fn, e5m2 float8_e5m2, bf16 bfloat16, fp16 half.
template <class A, class B>
Tile<float> dot_scaled(const Tile<A> &a, const std::optional<Tile<int8_t>> &a_scale, MxFormat a_format,
                       const Tile<B> &b, const std::optional<Tile<int8_t>> &b_scale, MxFormat b_format,
                       const Tile<float> &acc, source_location loc = source_location::current()) {
  detail::checkMxElement<A>();
  detail::checkMxElement<B>();
  const detail::OpSite site{"dot_scaled", detail::toSourceLoc(loc)};
  auto shapeText = [](const Shape &s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i)
      t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
  };
  auto checkFormat = [&](const char *which, MxFormat f, bool holds, const char *held) {
    if (!holds)
      detail::fail(site, std::string(which) + "_format " + detail::mxFormatName(f) + " does not name " + which +
                             "'s element type " + held +
                             " (e2m1: int8_t, e4m3: float8_e4m3fn, e5m2: float8_e5m2, bf16: bfloat16, fp16: half)");
  };
  checkFormat("a", a_format, detail::holdsMxFormat<A>(a_format), detail::mxElementName<A>());
  checkFormat("b", b_format, detail::holdsMxFormat<B>(b_format), detail::mxElementName<B>());
  const Shape as = a.shape(), bs = b.shape(), cs = acc.shape();
  if (as.size() != 2 || bs.size() != 2)
    detail::fail(site, "a and b must be 2-D, not " + shapeText(as) + " and " + shapeText(bs));
  const int64_t m = as[0], n = bs[1];
  const int64_t k = a_format == MxFormat::e2m1 ? as[1] * 2 : as[1];
  const int64_t kb = b_format == MxFormat::e2m1 ? bs[0] * 2 : bs[0];
  if (k != kb)
    detail::fail(site, "a " + shapeText(as) + " (" + detail::mxFormatName(a_format) + ") holds K = " +
                           std::to_string(k) + " and b " + shapeText(bs) + " (" + detail::mxFormatName(b_format) +
                           ") K = " + std::to_string(kb));
  if (k % 32 != 0)
    detail::fail(site, "K = " + std::to_string(k) + " is not a multiple of 32, the e8m0 scales' group");
  if (cs != Shape{m, n})
    detail::fail(site, "acc is " + shapeText(cs) + ", not the product's " + shapeText(Shape{m, n}));
  auto checkScale = [&](const char *which, const std::optional<Tile<int8_t>> &s, int64_t rows) {
    if (s && s.value().shape() != Shape{rows, k / 32})
      detail::fail(site, std::string(which) + "_scale is " + shapeText(s.value().shape()) + ", not " +
                             shapeText(Shape{rows, k / 32}) + " (one e8m0 scale per 32 of K)");
  };
  checkScale("a", a_scale, m);
  checkScale("b", b_scale, n);

  // The decomposition, every target's: upcast, scale, dot.
  Tile<float> x = detail::applyScales(detail::upcastRows(a, a_format, m, k), a_scale, m, k);
  // b along K is its first dimension: e2m1 (packed along K) and many scale
  // groups take the row form on trans(b); others are scaled as loaded.
  Tile<float> y = b_format != MxFormat::e2m1 && k / 32 <= detail::kScaleGroupsBySelect
                      ? detail::applyScalesAlongK(cast<float>(b), b_scale, k, n)
                      : trans(detail::applyScales(detail::upcastRows(trans(b), b_format, n, k), b_scale, n, k));
  Tile<float> composed = a_format == MxFormat::fp16 || b_format == MxFormat::fp16
                             ? dot(cast<half>(x), cast<half>(y), acc, loc)
                             : dot(cast<bfloat16>(x), cast<bfloat16>(y), acc, loc);
  // One tessel.dot_scaled carries it: the compiler keeps it where the
  // target's scaled matrix instructions do not take the formats, and runs
  // those instead where they do (gfx950: e2m1, e4m3 and e5m2).
  std::optional<detail::ValueRef> sa, sb;
  if (a_scale)
    sa = a_scale->ref();
  if (b_scale)
    sb = b_scale->ref(); // [N, K / 32], as Triton takes it
  return Tile<float>(detail::emitDotScaled(site, a.ref(), b.ref(), acc.ref(), composed.ref(), sa ? &*sa : nullptr,
                                           sb ? &*sb : nullptr, int(a_format), int(b_format)));
}

// The same from a zero accumulator.
template <class A, class B>
Tile<float> dot_scaled(const Tile<A> &a, const std::optional<Tile<int8_t>> &a_scale, MxFormat a_format,
                       const Tile<B> &b, const std::optional<Tile<int8_t>> &b_scale, MxFormat b_format,
                       source_location loc = source_location::current()) {
  const int64_t m = a.shape().empty() ? 1 : a.shape()[0];
  const int64_t n = b.shape().size() < 2 ? 1 : b.shape()[1];
  return dot_scaled(a, a_scale, a_format, b, b_scale, b_format, zeros<float>({m, n}, loc), loc);
}

} // namespace tessel
