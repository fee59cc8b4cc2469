#include "tessel/Dialect/Tessel/IR/LinearLayout.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tessel;

namespace {
bool isZero(const LinearLayout::Basis &b) {
  return std::all_of(b.begin(), b.end(), [](int64_t v) { return v == 0; });
}
llvm::SmallVector<unsigned> bitsAlong(llvm::ArrayRef<LinearLayout::Basis> bases, unsigned dim) {
  llvm::SmallVector<unsigned> bits;
  for (unsigned i = 0; i < bases.size(); ++i)
    if (bases[i][dim] != 0)
      bits.push_back(i);
  return bits;
}
uint64_t replicaMask(llvm::ArrayRef<LinearLayout::Basis> bases) {
  uint64_t mask = 0;
  for (unsigned i = 0; i < bases.size(); ++i)
    if (isZero(bases[i]))
      mask |= uint64_t(1) << i;
  return mask;
}
} // namespace

LinearLayout::Basis LinearLayout::registerCoords(int64_t reg) const {
  Basis c(rank(), 0);
  for (unsigned i = 0; i < registers_.size(); ++i)
    if (reg >> i & 1)
      for (unsigned d = 0; d < rank(); ++d)
        c[d] ^= registers_[i][d];
  return c;
}

LinearLayout::Basis LinearLayout::coords(int64_t reg, int64_t lane, int64_t wave) const {
  Basis c = registerCoords(reg);
  auto add = [&](llvm::ArrayRef<Basis> bases, int64_t id) {
    for (unsigned i = 0; i < bases.size(); ++i)
      if (id >> i & 1)
        for (unsigned d = 0; d < rank(); ++d)
          c[d] ^= bases[i][d];
  };
  add(lanes_, lane);
  add(waves_, wave);
  return c;
}

int64_t LinearLayout::registerAt(llvm::ArrayRef<int64_t> coords) const {
  // Bases are disjoint single bits of one coordinate each: pick the bits
  // that make up `coords`.
  Basis rest(coords.begin(), coords.end());
  int64_t reg = 0;
  for (unsigned i = 0; i < registers_.size(); ++i) {
    bool take = true;
    for (unsigned d = 0; d < rank(); ++d)
      if (registers_[i][d] && !(rest[d] & registers_[i][d]))
        take = false;
    if (take && !isZero(registers_[i])) {
      reg |= int64_t(1) << i;
      for (unsigned d = 0; d < rank(); ++d)
        rest[d] ^= registers_[i][d];
    }
  }
  return isZero(rest) ? reg : -1;
}

llvm::SmallVector<unsigned> LinearLayout::laneBitsAlong(unsigned dim) const {
  return bitsAlong(lanes_, dim);
}
llvm::SmallVector<unsigned> LinearLayout::waveBitsAlong(unsigned dim) const {
  return bitsAlong(waves_, dim);
}
uint64_t LinearLayout::laneReplicaMask() const { return replicaMask(lanes_); }
uint64_t LinearLayout::waveReplicaMask() const { return replicaMask(waves_); }

llvm::SmallVector<llvm::SmallVector<int64_t>> LinearLayout::linesAlong(unsigned dim) const {
  llvm::SmallVector<unsigned> along = bitsAlong(registers_, dim), across;
  for (unsigned i = 0; i < registers_.size(); ++i)
    if (!llvm::is_contained(along, i))
      across.push_back(i);
  llvm::SmallVector<llvm::SmallVector<int64_t>> lines(int64_t(1) << across.size());
  for (int64_t line = 0; line < int64_t(lines.size()); ++line) {
    int64_t base = 0;
    for (unsigned j = 0; j < across.size(); ++j)
      if (line >> j & 1)
        base |= int64_t(1) << across[j];
    for (int64_t k = 0; k < (int64_t(1) << along.size()); ++k) {
      int64_t reg = base;
      for (unsigned j = 0; j < along.size(); ++j)
        if (k >> j & 1)
          reg |= int64_t(1) << along[j];
      lines[line].push_back(reg);
    }
    llvm::sort(lines[line], [&](int64_t a, int64_t b) {
      return registerCoords(a)[dim] < registerCoords(b)[dim];
    });
  }
  return lines;
}

int64_t LinearLayout::contiguousRegisters(unsigned dim) const {
  int64_t run = 1;
  for (unsigned i = 0; i < registers_.size(); ++i) {
    Basis unit(rank(), 0);
    unit[dim] = run;
    if (registers_[i] != unit)
      break;
    run *= 2;
  }
  return run;
}

llvm::SmallVector<unsigned> LinearLayout::registerRunBits(unsigned dim) const {
  llvm::SmallVector<unsigned> bits;
  for (int64_t step = 1;; step *= 2) {
    Basis unit(rank(), 0);
    unit[dim] = step;
    auto it = llvm::find(registers_, unit);
    if (it == registers_.end())
      return bits;
    bits.push_back(unsigned(it - registers_.begin()));
  }
}

LinearLayout LinearLayout::withoutDim(unsigned dim) const {
  auto drop = [&](llvm::ArrayRef<Basis> bases) {
    llvm::SmallVector<Basis> out;
    for (const Basis &b : bases) {
      Basis c(b);
      c.erase(c.begin() + dim);
      out.push_back(std::move(c));
    }
    return out;
  };
  llvm::SmallVector<int64_t, 4> shape(shape_);
  shape.erase(shape.begin() + dim);
  llvm::SmallVector<Basis> regs;
  for (Basis &b : drop(registers_))
    if (!isZero(b)) // a register along the dropped (size-1) dim cannot exist
      regs.push_back(std::move(b));
  return LinearLayout(shape, std::move(regs), drop(lanes_), drop(waves_));
}

LinearLayout LinearLayout::permuted(llvm::ArrayRef<int32_t> order) const {
  auto move = [&](llvm::ArrayRef<Basis> bases) {
    llvm::SmallVector<Basis> out;
    for (const Basis &b : bases) {
      Basis c(rank(), 0);
      for (unsigned i = 0; i < rank(); ++i)
        c[i] = b[order[i]];
      out.push_back(std::move(c));
    }
    return out;
  };
  llvm::SmallVector<int64_t, 4> shape;
  for (unsigned i = 0; i < rank(); ++i)
    shape.push_back(shape_[order[i]]);
  return LinearLayout(shape, move(registers_), move(lanes_), move(waves_));
}

std::optional<llvm::SmallVector<int64_t>> LinearLayout::registerPicks(const LinearLayout &to) const {
  if (shape_ != to.shape_ || lanes_ != to.lanes_ || waves_ != to.waves_ ||
      numRegisters() != to.numRegisters())
    return std::nullopt;
  llvm::SmallVector<int64_t> picks;
  for (int64_t r = 0; r < to.numRegisters(); ++r) {
    Basis c = to.registerCoords(r);
    int64_t s = registerAt(c);
    if (s < 0 || registerCoords(s) != c)
      return std::nullopt;
    picks.push_back(s);
  }
  return picks;
}

namespace {
unsigned bitsOf(int64_t extent) { return llvm::Log2_64(uint64_t(extent)); }
} // namespace

LinearMap LinearLayout::map() const {
  llvm::SmallVector<LinearMap::Dim> ins = {{"register", unsigned(registers_.size())},
                                           {"lane", unsigned(lanes_.size())},
                                           {"wave", unsigned(waves_.size())}};
  llvm::SmallVector<LinearMap::Dim> outs;
  for (unsigned d = 0; d < rank(); ++d)
    outs.push_back({"dim" + std::to_string(d), bitsOf(shape_[d])});
  llvm::SmallVector<uint64_t> cols;
  auto add = [&](llvm::ArrayRef<Basis> bases) {
    for (const Basis &b : bases) {
      uint64_t packed = 0;
      unsigned off = 0;
      for (unsigned d = 0; d < rank(); ++d) {
        packed |= uint64_t(b[d]) << off;
        off += bitsOf(shape_[d]);
      }
      cols.push_back(packed);
    }
  };
  add(registers_);
  add(lanes_);
  add(waves_);
  return LinearMap(std::move(ins), std::move(outs), std::move(cols));
}

LinearLayout LinearLayout::fromMap(llvm::ArrayRef<int64_t> shape, const LinearMap &map) {
  auto bases = [&](llvm::StringRef name) {
    llvm::SmallVector<Basis> out;
    for (const LinearMap::Dim &d : map.ins())
      if (d.name == name)
        for (unsigned i = 0; i < d.bits; ++i) {
          llvm::SmallVector<int64_t> c = map.unpackOut(map.column(map.inOffset(name) + i));
          out.push_back(Basis(c.begin(), c.end()));
        }
    return out;
  };
  return LinearLayout(shape, bases("register"), bases("lane"), bases("wave"));
}

bool LinearLayout::isSimple() const {
  uint64_t seen = 0;
  LinearMap m = map();
  for (unsigned i = 0; i < m.inBits(); ++i) {
    uint64_t c = m.column(i);
    if (!c)
      continue;
    if (c & (c - 1) || c & seen)
      return false;
    seen |= c;
  }
  return true;
}
