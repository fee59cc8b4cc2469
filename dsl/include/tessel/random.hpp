// Counter-based random numbers, as Triton's tl.rand / tl.randn / tl.randint /
// tl.randint4x: each element's numbers are Philox4x32 (Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3", SC'11) of a counter made
// from its offset under a key made from the seed. The same seed and offset
// give the same numbers in every kernel, on every device, so a kernel can
// regenerate what an earlier one drew instead of storing it (dropout's mask).
//
//   key     = (k0, k1): the seed's value as a 64-bit two's complement integer,
//             k0 its low 32 bits, k1 its high 32 (an i32 seed is sign-extended)
//   counter = (c0, c1, 0, 0): c0 the offset's low 32 bits, c1 its high 32 bits
//             for an int64_t offset, 0 for an int32_t one
//   n_rounds Philox rounds (10 by default, as Random123's philox4x32_10)
//
// The words are unsigned 32-bit numbers held in int32_t tiles (their bits).
#pragma once

#include "tessel/ops.hpp"

#include <array>
#include <cstdint>
#include <source_location>
#include <type_traits>

namespace tessel {

namespace detail {

// Philox4x32 with n_rounds rounds of the counters of `offsets` under the key of
// `seed` (a scalar tile or an integer literal): the four words, each of the
// offsets' shape. Traced in dsl/src/random.cpp.
std::array<ValueRef, 4> emitPhilox(const OpSite &site, const Operand &seed, ValueRef offsets, int n_rounds);
// floats in [0, 1): (word >> 8, logical) * 2^-24.
ValueRef emitUniform(const OpSite &site, ValueRef word);
// Two standard normals from two words by Box-Muller (see randn4x).
std::array<ValueRef, 2> emitNormalPair(const OpSite &site, ValueRef w0, ValueRef w1);

template <class S> consteval bool isSeed() {
  using T = std::remove_cvref_t<S>;
  if constexpr (is_tile_v<T>)
    return std::is_same_v<tile_elem_t<T>, int32_t> || std::is_same_v<tile_elem_t<T>, int64_t>;
  else
    return std::is_integral_v<unwrap_const_t<T>> && !std::is_same_v<unwrap_const_t<T>, bool>;
}
template <class O> consteval bool isOffsets() {
  using T = std::remove_cvref_t<O>;
  if constexpr (is_tile_v<T>)
    return std::is_same_v<tile_elem_t<T>, int32_t> || std::is_same_v<tile_elem_t<T>, int64_t>;
  else
    return false;
}

// The four Philox words of `offsets` under `seed`, after the compile-time checks.
template <class S, class O>
std::array<ValueRef, 4> philoxWords(const char *op, const S &seed, const O &offsets, int n_rounds,
                                    std::source_location loc) {
  static_assert(isSeed<S>(), "tessel: a random seed is an int32_t or int64_t scalar (a kernel argument such as "
                             "i64 seed) or an integer literal");
  static_assert(isOffsets<O>(), "tessel: random offsets are an int32_t or int64_t tile (e.g. "
                                "program_id(0) * BLOCK + arange(0, BLOCK))");
  if constexpr (isSeed<S>() && isOffsets<O>()) {
    Operand key;
    if constexpr (is_tile_v<S>)
      key = Operand::of(seed.ref());
    else // the literal's bits as a 64-bit integer (a uint64_t above INT64_MAX keeps its bits)
      key = Operand::literal(static_cast<int64_t>(static_cast<unwrap_const_t<S>>(seed)));
    return emitPhilox({op, toSourceLoc(loc)}, key, offsets.ref(), n_rounds);
  } else {
    return {};
  }
}

} // namespace detail

// The four 32-bit Philox4x32 words of each offset under `seed`, as int32_t
// (the unsigned words' bits): `auto [r0, r1, r2, r3] = randint4x(seed, offs);`.
// `seed`: an int32_t or int64_t scalar tile or an integer literal; `offsets`:
// an int32_t or int64_t tile, whose shape the results have; `n_rounds`: 1 to
// 16 (10 is Random123's philox4x32_10; 7 is the fewest it recommends).
template <class S, class O>
std::array<i32, 4> randint4x(const S &seed, const O &offsets, int n_rounds = 10,
                             std::source_location loc = std::source_location::current()) {
  std::array<detail::ValueRef, 4> w = detail::philoxWords("randint4x", seed, offsets, n_rounds, loc);
  return {i32(w[0]), i32(w[1]), i32(w[2]), i32(w[3])};
}

// The first Philox word of each offset (randint4x(...)[0]), as int32_t.
template <class S, class O>
i32 randint(const S &seed, const O &offsets, int n_rounds = 10,
            std::source_location loc = std::source_location::current()) {
  return i32(detail::philoxWords("randint", seed, offsets, n_rounds, loc)[0]);
}

// Four f32 uniform in [0, 1) per offset, one from each word u:
// (u >> 8) * 2^-24 with u unsigned, i.e. its top 24 bits; every value is a
// multiple of 2^-24 from 0 to 1 - 2^-24 (never 1.0), each equally likely.
template <class S, class O>
std::array<f32, 4> rand4x(const S &seed, const O &offsets, int n_rounds = 10,
                          std::source_location loc = std::source_location::current()) {
  std::array<detail::ValueRef, 4> w = detail::philoxWords("rand4x", seed, offsets, n_rounds, loc);
  detail::OpSite site{"rand4x", detail::toSourceLoc(loc)};
  return {f32(detail::emitUniform(site, w[0])), f32(detail::emitUniform(site, w[1])),
          f32(detail::emitUniform(site, w[2])), f32(detail::emitUniform(site, w[3]))};
}

// One f32 uniform in [0, 1) per offset: rand4x(...)[0].
template <class S, class O>
f32 rand(const S &seed, const O &offsets, int n_rounds = 10,
         std::source_location loc = std::source_location::current()) {
  std::array<detail::ValueRef, 4> w = detail::philoxWords("rand", seed, offsets, n_rounds, loc);
  return f32(detail::emitUniform({"rand", detail::toSourceLoc(loc)}, w[0]));
}

// Four f32 standard normals per offset by Box-Muller, from the words in
// pairs (w0, w1) and (w2, w3): with u = ((w0 >> 8) + 1) * 2^-24 in (0, 1]
// (never 0, so the log is finite) and v = (w1 >> 8) * 2^-24 in [0, 1),
// r = sqrt(-2 log(u)), t = 2 pi v: results r cos(t), r sin(t), then the same of
// (w2, w3). |result| <= sqrt(48 ln 2) ~ 5.77.
template <class S, class O>
std::array<f32, 4> randn4x(const S &seed, const O &offsets, int n_rounds = 10,
                           std::source_location loc = std::source_location::current()) {
  std::array<detail::ValueRef, 4> w = detail::philoxWords("randn4x", seed, offsets, n_rounds, loc);
  detail::OpSite site{"randn4x", detail::toSourceLoc(loc)};
  auto [z0, z1] = detail::emitNormalPair(site, w[0], w[1]);
  auto [z2, z3] = detail::emitNormalPair(site, w[2], w[3]);
  return {f32(z0), f32(z1), f32(z2), f32(z3)};
}

// One f32 standard normal per offset: randn4x(...)[0], r cos(t) of (w0, w1).
template <class S, class O>
f32 randn(const S &seed, const O &offsets, int n_rounds = 10,
          std::source_location loc = std::source_location::current()) {
  std::array<detail::ValueRef, 4> w = detail::philoxWords("randn", seed, offsets, n_rounds, loc);
  return f32(detail::emitNormalPair({"randn", detail::toSourceLoc(loc)}, w[0], w[1])[0]);
}

} // namespace tessel
