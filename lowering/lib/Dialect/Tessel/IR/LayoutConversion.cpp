#include "tessel/Dialect/Tessel/IR/LayoutConversion.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::tessel;

namespace {

// The XOR of the values of those `vectors` whose keys (of `keyBits` bits)
// XOR to `target`; none when no combination does. The algebra answers it:
// `target` is a last column of the keys' map, and a kernel vector that uses
// it names the combination.
std::optional<uint64_t> solve(ArrayRef<std::pair<uint64_t, uint64_t>> vectors, uint64_t target, unsigned keyBits) {
  const unsigned n = vectors.size();
  SmallVector<uint64_t> cols;
  for (auto [key, value] : vectors)
    cols.push_back(key);
  cols.push_back(target);
  LinearMap keys({{"vector", n + 1}}, {{"key", keyBits}}, std::move(cols));
  for (uint64_t k : keys.kernel())
    if (k >> n & 1) {
      uint64_t value = 0;
      for (unsigned i = 0; i < n; ++i)
        if (k >> i & 1)
          value ^= vectors[i].second;
      return value;
    }
  return std::nullopt;
}

int64_t bitsOf(uint64_t packed, unsigned offset, unsigned bits) {
  return int64_t((packed >> offset) & ((uint64_t(1) << bits) - 1));
}

} // namespace

SmallVector<int64_t> InWaveShuffle::variants() const {
  SmallVector<int64_t> span = {0};
  auto add = [&](int64_t v) {
    if (llvm::is_contained(span, v))
      return;
    for (size_t i = 0, n = span.size(); i < n; ++i)
      span.push_back(span[i] ^ v);
  };
  for (int64_t v : laneToReg)
    add(v);
  for (int64_t v : waveToReg)
    add(v);
  return span;
}

bool InWaveShuffle::rowsVary() const {
  for (size_t i = 0; i < laneToLane.size(); ++i)
    if (laneToLane[i] != int64_t(1) << i)
      return true;
  return llvm::any_of(waveToLane, [](int64_t v) { return v != 0; });
}

SmallVector<InWaveShuffle::Word> InWaveShuffle::words(unsigned bits) const {
  const size_t perWord = bits >= 8 && bits < 32 ? 32 / bits : 1;
  std::map<std::pair<int64_t, int>, SmallVector<unsigned>> groups;
  for (auto [i, m] : llvm::enumerate(moves))
    if (m.kind != LaneMoveKind::Own)
      groups[{m.laneConst, int(m.kind)}].push_back(i);
  SmallVector<Word> out;
  for (auto &[key, members] : groups)
    for (size_t first = 0; first < members.size(); first += perWord)
      out.push_back({LaneMoveKind(key.second), key.first,
                     SmallVector<unsigned>(ArrayRef(members).slice(first, std::min(perWord, members.size() - first)))});
  return out;
}

InWaveShuffle::Count InWaveShuffle::count(unsigned bits) const {
  Count c;
  const int64_t halves = bits > 32 ? 2 : 1;
  std::set<SmallVector<int64_t>> swapped;
  for (const Word &w : words(bits)) {
    if (w.kind == LaneMoveKind::Permute) {
      c.permutes += halves;
      continue;
    }
    SmallVector<int64_t> regs;
    for (unsigned m : w.members)
      regs.push_back(moves[m].srcReg);
    if (swapped.insert(regs).second)
      c.rowSwaps += halves;
    if (rowsVary())
      c.selects += halves;
  }
  for (const auto &p : picks)
    c.selects += int64_t(p.size() - 1) * halves;
  return c;
}

std::optional<InWaveShuffle> mlir::tessel::planInWaveShuffle(const LinearLayout &src, const LinearLayout &dst,
                                                             unsigned waveSize, bool swapRows) {
  if (src.shape() != dst.shape() || src.laneBases().size() != dst.laneBases().size() ||
      src.waveBases().size() != dst.waveBases().size() || (int64_t(1) << src.laneBases().size()) != waveSize)
    return std::nullopt;
  LinearMap s = src.map(), d = dst.map();
  std::optional<LinearMap> sInv = s.rightInverse();
  if (!sInv || !d.isSurjective())
    return std::nullopt;
  LinearMap t = sInv->compose(d);
  const unsigned sRegs = src.registerBases().size(), lanes = src.laneBases().size(),
                 waves = src.waveBases().size(), dRegs = dst.registerBases().size();
  const unsigned laneAt = sRegs, waveAt = sRegs + lanes;

  // Where replicas give a choice, take the source in the result's own wave.
  SmallVector<std::pair<uint64_t, uint64_t>> kernel;
  for (uint64_t k : s.kernel())
    kernel.push_back({uint64_t(bitsOf(k, waveAt, waves)), k});
  SmallVector<uint64_t> cols;
  for (unsigned i = 0; i < t.inBits(); ++i) {
    uint64_t col = t.column(i);
    uint64_t want = i >= dRegs + lanes ? uint64_t(1) << (i - dRegs - lanes) : 0;
    uint64_t wrong = uint64_t(bitsOf(col, waveAt, waves)) ^ want;
    if (wrong) {
      std::optional<uint64_t> fix = solve(kernel, wrong, waves);
      if (!fix)
        return std::nullopt; // the element lives in another wave only
      col ^= *fix;
    }
    cols.push_back(col);
  }

  InWaveShuffle plan;
  auto regOf = [&](uint64_t col) { return bitsOf(col, 0, sRegs); };
  auto laneOf = [&](uint64_t col) { return bitsOf(col, laneAt, lanes); };
  for (unsigned i = 0; i < lanes; ++i) {
    plan.laneToReg.push_back(regOf(cols[dRegs + i]));
    plan.laneToLane.push_back(laneOf(cols[dRegs + i]));
  }
  for (unsigned j = 0; j < waves; ++j) {
    plan.waveToReg.push_back(regOf(cols[dRegs + lanes + j]));
    plan.waveToLane.push_back(laneOf(cols[dRegs + lanes + j]));
  }
  bool laneIdentity = true, rowsOnly = swapRows && waveSize >= 32;
  for (unsigned i = 0; i < lanes; ++i) {
    int64_t diff = plan.laneToLane[i] ^ (int64_t(1) << i);
    laneIdentity &= diff == 0;
    rowsOnly &= diff == 0 || diff == 16;
  }
  for (int64_t v : plan.waveToLane) {
    laneIdentity &= v == 0;
    rowsOnly &= v == 0 || v == 16;
  }
  SmallVector<int64_t> variants = plan.variants();
  std::map<std::pair<int64_t, int64_t>, unsigned> index;
  for (int64_t r = 0; r < (int64_t(1) << dRegs); ++r) {
    uint64_t col = 0;
    for (unsigned b = 0; b < dRegs; ++b)
      if (r >> b & 1)
        col ^= cols[b];
    plan.regOf.push_back(regOf(col));
    plan.laneOf.push_back(laneOf(col));
    auto &picks = plan.picks.emplace_back();
    for (int64_t v : variants) {
      std::pair<int64_t, int64_t> key = {plan.regOf.back() ^ v, plan.laneOf.back()};
      auto [it, fresh] = index.try_emplace(key, plan.moves.size());
      if (fresh) {
        LaneMoveKind kind = laneIdentity && key.second == 0                          ? LaneMoveKind::Own
                            : rowsOnly && (key.second == 0 || key.second == 16) ? LaneMoveKind::SwapRows
                                                                                : LaneMoveKind::Permute;
        plan.moves.push_back({key.first, key.second, kind});
      }
      picks.push_back({v, it->second});
    }
  }
  return plan;
}

std::optional<LinearMap> mlir::tessel::ldsOffsetMap(const LdsStaging &plan, ArrayRef<int64_t> shape) {
  auto pow2 = [](int64_t v) { return v > 0 && llvm::isPowerOf2_64(uint64_t(v)); };
  const bool padded = plan.order.size() > 1 && plan.pad != 0;
  if (padded || !pow2(plan.unit) || !pow2(plan.perPhase) || !pow2(plan.maxPhase) || !llvm::all_of(shape, pow2))
    return std::nullopt;
  SmallVector<LinearMap::Dim> ins;
  for (size_t d = 0; d < shape.size(); ++d)
    ins.push_back({"dim" + std::to_string(d), llvm::Log2_64(uint64_t(shape[d]))});
  const int64_t slots = plan.slots(shape);
  SmallVector<int64_t> strides = plan.strides(shape);
  SmallVector<uint64_t> cols;
  for (size_t d = 0; d < shape.size(); ++d)
    for (int64_t bit = 1; bit < shape[d]; bit <<= 1) {
      uint64_t col = uint64_t(bit * strides[d]);
      // A row's phase XORs its chunks: (row / perPhase) % maxPhase, in units.
      if (plan.swizzled() && d == plan.order[1])
        col ^= uint64_t((bit / plan.perPhase) % plan.maxPhase * plan.unit);
      cols.push_back(col);
    }
  return LinearMap(std::move(ins), {{"offset", llvm::Log2_64(uint64_t(slots))}}, std::move(cols));
}

namespace {
// Whether a loop that does not hold `op` reads its result: the conversion
// runs once and its tile stays live through every trip.
bool readInLaterLoop(Operation *op) {
  for (Operation *user : op->getUsers())
    for (Operation *p = user->getParentOp(); p && p != op->getParentOp(); p = p->getParentOp())
      if (isa<LoopLikeOpInterface>(p))
        return true;
  return false;
}
// `op` moves a tile held as `from` into `dst`'s layout; `ldsCycles`: what
// its trip through LDS costs a wave.
ConversionPath choosePath(Operation *op, const LinearLayout &from, RankedTensorType dst,
                          function_ref<int64_t(const ::tessel::TargetFacts *)> ldsCycles,
                          std::optional<InWaveShuffle> &shuffle) {
  auto module = op->getParentOfType<ModuleOp>();
  TesselDialect &dialect = tesselDialect(op->getContext());
  IntegerAttr wave = module ? dialect.getWaveSizeAttrHelper().getAttr(module) : IntegerAttr();
  StringAttr arch = module ? dialect.getTargetAttrHelper().getAttr(module) : StringAttr();
  if (!wave)
    return ConversionPath::Lds;
  // A tile narrower than a register that a later loop reads goes through
  // LDS, whose reads give its registers packed. The shuffle picks each
  // element on its own; LLVM then packs them next to each loop that reads
  // them and keeps them unpacked in between, twice the registers for the
  // whole loop (gfx950 attention's Q at head dim 64: 190 VGPRs and 2 waves
  // against 160 and 3). Its cycles, spent once, gain nothing.
  Type elem = dst.getElementType();
  unsigned bits = elem.isIntOrFloat() ? elem.getIntOrFloatBitWidth() : 64; // a pointer: 64 bits
  if (bits < 32 && readInLaterLoop(op))
    return ConversionPath::Lds;
  const ::tessel::TargetFacts *facts = arch ? ::tessel::lookupTarget(arch.getValue().str()) : nullptr;
  const unsigned waveSize = unsigned(wave.getInt());
  shuffle = planInWaveShuffle(from, getLinearLayout(dst), waveSize, facts && facts->permlaneX16);
  if (!shuffle)
    return ConversionPath::Lds;
  // A wave's cycles either way: ds_bpermute moves 4 bytes a lane through
  // the LDS crossbar at 128 bytes a cycle; LDS writes the tile, reads it,
  // and waits at two barriers.
  const int64_t valu = facts ? facts->valuCycles : 4;
  InWaveShuffle::Count c = shuffle->count(bits);
  int64_t shuffleCycles = c.permutes * std::max<int64_t>(1, waveSize * 4 / 128) + (c.rowSwaps + c.selects) * valu;
  if (shuffleCycles <= ldsCycles(facts))
    return ConversionPath::Shuffle;
  shuffle.reset();
  return ConversionPath::Lds;
}

int64_t barrierCycles(const ::tessel::TargetFacts *facts) { return facts ? facts->barrierCycles : 64; }
} // namespace

ConversionPath mlir::tessel::conversionPath(ConvertLayoutOp convert, std::optional<InWaveShuffle> &shuffle) {
  shuffle.reset();
  if (renamedRegisters(convert))
    return ConversionPath::Rename;
  auto src = cast<RankedTensorType>(convert.getSrc().getType());
  RankedTensorType dst = convert.getType();
  return choosePath(convert, getLinearLayout(src), dst, [&](const ::tessel::TargetFacts *facts) {
    LdsStaging plan = planLdsStaging(src, dst);
    return ldsAccessCycles(src, plan, plan.writeVec).cycles + ldsAccessCycles(dst, plan, plan.readVec).cycles +
           2 * barrierCycles(facts);
  }, shuffle);
}

ConversionPath mlir::tessel::conversionPath(PermuteOp permute, std::optional<InWaveShuffle> &shuffle) {
  shuffle.reset();
  if (renamedRegisters(permute))
    return ConversionPath::Rename;
  auto src = cast<RankedTensorType>(permute.getSrc().getType());
  RankedTensorType dst = permute.getType();
  // Its LDS trip moves one element an access.
  return choosePath(permute, getLinearLayout(src).permuted(permute.getOrder()), dst,
                    [&](const ::tessel::TargetFacts *facts) {
                      int64_t lanes = int64_t(1) << getLinearLayout(dst).laneBases().size();
                      int64_t perAccess = std::max<int64_t>(1, lanes * ldsElementBytes(dst) / 128);
                      return (registersPerThread(src) + registersPerThread(dst)) * perAccess +
                             2 * barrierCycles(facts);
                    },
                    shuffle);
}

ConversionPath mlir::tessel::conversionPath(PermuteOp permute) {
  std::optional<InWaveShuffle> unused;
  return conversionPath(permute, unused);
}

ConversionPath mlir::tessel::conversionPath(ConvertLayoutOp convert) {
  std::optional<InWaveShuffle> unused;
  return conversionPath(convert, unused);
}
