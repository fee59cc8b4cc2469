// Philox4x32 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy
// as 1, 2, 3", SC'11) traced from elementwise ops, and the conversions of its
// words to floats (random.hpp says what users see). Words that are known on
// the host (a literal seed's key, the zero counter words) stay C++ numbers, so
// the trace holds only the per-element work: round 1 of an int32_t offset
// multiplies once (one 32 x 32 -> 64-bit product), not twice.
#include "tessel/random.hpp"

#include "tracer_internal.hpp"

#include <optional>

namespace tessel::detail {

namespace {

// The round multipliers and the key's Weyl increments (the golden ratio's and
// sqrt(3) - 1's fractional bits), from the paper.
constexpr uint32_t kMultiplier0 = 0xD2511F53u, kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
constexpr int kMaxRounds = 16; // Random123's limit for philox4x32
constexpr double kTwoToMinus24 = 0x1p-24;
constexpr float kTwoPi = 6.28318530717958647692f;

// A 32-bit word of the generator: known on the host, or a traced i32 value
// (a scalar for key words, a tile for counter words).
struct Word {
  std::optional<uint32_t> known;
  ValueRef value;
};

Word knownWord(uint32_t v) { return {v, {}}; }
Word tracedWord(ValueRef v) { return {std::nullopt, v}; }

Operand operandOf(const Word &w) {
  return w.known ? Operand::literal(static_cast<int32_t>(*w.known)) : Operand::of(w.value);
}

Word binary(const OpSite &site, Elementwise op, const Word &a, const Word &b) {
  return tracedWord(emitBinary(op, site, operandOf(a), operandOf(b), DType::I32));
}

// a ^ b ^ c, the known words combined on the host first.
Word mix(const OpSite &site, const Word &a, const Word &b, const Word &c) {
  uint32_t known = 0;
  std::optional<Word> traced;
  for (const Word *w : {&a, &b, &c}) {
    if (w->known)
      known ^= *w->known;
    else
      traced = traced ? binary(site, Elementwise::Xor, *traced, *w) : *w;
  }
  if (!traced) return knownWord(known);
  return known ? binary(site, Elementwise::Xor, *traced, knownWord(known)) : *traced;
}

Word addWeyl(const OpSite &site, const Word &k, uint32_t weyl) {
  if (k.known) return knownWord(*k.known + weyl);
  return binary(site, Elementwise::Add, k, knownWord(weyl));
}

// The high and low halves of multiplier * c (unsigned 32 x 32 -> 64 bits).
std::pair<Word, Word> multiply(const OpSite &site, uint32_t multiplier, const Word &c) {
  if (c.known) {
    uint64_t product = uint64_t(multiplier) * *c.known;
    return {knownWord(uint32_t(product >> 32)), knownWord(uint32_t(product))};
  }
  auto [low, high] = emitMulExtended(site, operandOf(knownWord(multiplier)), operandOf(c), DType::I32);
  return {tracedWord(high), tracedWord(low)};
}

ValueRef shiftRight(const OpSite &site, ValueRef v, int64_t bits, DType dtype) {
  return emitBinary(Elementwise::Shr, site, Operand::of(v), Operand::literal(bits), dtype);
}

// Each element's word as an i32 tile of `shape`.
ValueRef toTile(const OpSite &site, const Word &w, const Shape &shape) {
  if (w.known) return emitFull(site, shape, Operand::literal(static_cast<int32_t>(*w.known)), DType::I32);
  Operand v = Operand::of(w.value);
  TraceContext &ctx = contextOf(site, {&v});
  return ctx.type(w.value.id).shape == shape ? w.value : emitBroadcastTo(site, w.value, shape);
}

// (word >> 8) with the shift logical: the word's top 24 bits, as f32 (exact).
ValueRef top24(const OpSite &site, ValueRef word, int64_t plus) {
  ValueRef bits = emitBinary(Elementwise::And, site, Operand::of(shiftRight(site, word, 8, DType::I32)),
                             Operand::literal(0xFFFFFF), DType::I32);
  if (plus) bits = emitBinary(Elementwise::Add, site, Operand::of(bits), Operand::literal(plus), DType::I32);
  return emitCast(site, bits, DType::F32);
}

ValueRef timesLiteral(const OpSite &site, ValueRef v, double literal) {
  return emitBinary(Elementwise::Mul, site, Operand::of(v), Operand::literal(literal), DType::F32);
}

} // namespace

std::array<ValueRef, 4> emitPhilox(const OpSite &site, const Operand &seed, ValueRef offsets, int n_rounds) {
  Operand offsetsOperand = Operand::of(offsets);
  TraceContext &ctx = contextOf(site, {&seed, &offsetsOperand});
  if (n_rounds < 1 || n_rounds > kMaxRounds)
    fail(site, "n_rounds = " + std::to_string(n_rounds) + " is out of range: Philox4x32 takes 1 to " +
                   std::to_string(kMaxRounds) + " rounds (10 is the standard)");

  // The key: the seed's value as a 64-bit integer, low word first.
  Word k0, k1;
  if (seed.kind == Operand::IntLiteral) {
    k0 = knownWord(static_cast<uint32_t>(static_cast<uint64_t>(seed.i)));
    k1 = knownWord(static_cast<uint32_t>(static_cast<uint64_t>(seed.i) >> 32));
  } else if (seed.kind == Operand::Value) {
    const TraceType &t = ctx.type(seed.value.id);
    if (t.isPtr || (t.dtype != DType::I32 && t.dtype != DType::I64))
      fail(site, "the seed must be an int32_t or int64_t scalar, not " +
                     (t.isPtr ? std::string("a pointer") : dtypeName(t.dtype)));
    if (!t.shape.empty())
      fail(site, "the seed must be a scalar (one seed for the whole tile), not a tile of shape " +
                     formatShape(t.shape));
    if (t.dtype == DType::I32) { // sign-extended: the high word is 0 or all ones
      k0 = tracedWord(seed.value);
      k1 = tracedWord(shiftRight(site, seed.value, 31, DType::I32));
    } else {
      k0 = tracedWord(emitCast(site, seed.value, DType::I32));
      k1 = tracedWord(emitCast(site, shiftRight(site, seed.value, 32, DType::I64), DType::I32));
    }
  } else {
    fail(site, "the seed must be an integer");
  }

  // The counter: the offset's low word, its high word (int64_t), 0, 0.
  const TraceType &offsetsType = ctx.type(offsets.id);
  const Shape shape = offsetsType.shape;
  if (offsetsType.isPtr || (offsetsType.dtype != DType::I32 && offsetsType.dtype != DType::I64))
    fail(site, "the offsets must be an int32_t or int64_t tile");
  Word c0, c1 = knownWord(0), c2 = knownWord(0), c3 = knownWord(0);
  if (offsetsType.dtype == DType::I32) {
    c0 = tracedWord(offsets);
  } else {
    c0 = tracedWord(emitCast(site, offsets, DType::I32));
    c1 = tracedWord(emitCast(site, shiftRight(site, offsets, 32, DType::I64), DType::I32));
  }

  // Each round: (c0, c1, c2, c3) <- (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1, lo(M0 c0)),
  // and the key moves on by the Weyl increments between rounds.
  for (int round = 0; round < n_rounds; ++round) {
    if (round > 0) {
      k0 = addWeyl(site, k0, kWeyl0);
      k1 = addWeyl(site, k1, kWeyl1);
    }
    auto [hi0, lo0] = multiply(site, kMultiplier0, c0);
    auto [hi1, lo1] = multiply(site, kMultiplier1, c2);
    c0 = mix(site, hi1, c1, k0);
    c1 = lo1;
    c2 = mix(site, hi0, c3, k1);
    c3 = lo0;
  }
  return {toTile(site, c0, shape), toTile(site, c1, shape), toTile(site, c2, shape), toTile(site, c3, shape)};
}

ValueRef emitUniform(const OpSite &site, ValueRef word) {
  return timesLiteral(site, top24(site, word, 0), kTwoToMinus24);
}

std::array<ValueRef, 2> emitNormalPair(const OpSite &site, ValueRef w0, ValueRef w1) {
  ValueRef u = timesLiteral(site, top24(site, w0, 1), kTwoToMinus24); // (0, 1]: log(u) is finite
  ValueRef r = emitUnary(Elementwise::Sqrt, site, timesLiteral(site, emitUnary(Elementwise::Log, site, u), -2.0));
  ValueRef t = timesLiteral(site, emitUniform(site, w1), kTwoPi);
  auto times = [&](ValueRef a, ValueRef b) {
    return emitBinary(Elementwise::Mul, site, Operand::of(a), Operand::of(b), DType::F32);
  };
  return {times(r, emitUnary(Elementwise::Cos, site, t)), times(r, emitUnary(Elementwise::Sin, site, t))};
}

} // namespace tessel::detail
