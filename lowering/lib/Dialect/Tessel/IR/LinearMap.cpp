#include "tessel/Dialect/Tessel/IR/LinearMap.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <array>
#include <cassert>

using namespace mlir;
using namespace mlir::tessel;

namespace {

unsigned totalBits(llvm::ArrayRef<LinearMap::Dim> dims) {
  unsigned n = 0;
  for (const LinearMap::Dim &d : dims)
    n += d.bits;
  return n;
}

unsigned offsetOf(llvm::ArrayRef<LinearMap::Dim> dims, llvm::StringRef name) {
  unsigned off = 0;
  for (const LinearMap::Dim &d : dims) {
    if (d.name == name)
      return off;
    off += d.bits;
  }
  llvm::report_fatal_error("LinearMap: no dimension named " + llvm::Twine(name));
}

// Gaussian elimination over GF(2): rows keyed by their highest output bit,
// each with the input combination that produces it.
struct Echelon {
  std::array<uint64_t, 64> out{}, comb{};
  std::array<bool, 64> has{};

  // Reduces `v` (made by inputs `c`) by the rows; what is left has no
  // pivot bit set.
  void reduce(uint64_t &v, uint64_t &c) const {
    for (int b = 63; b >= 0; --b)
      if ((v >> b & 1) && has[b]) {
        v ^= out[b];
        c ^= comb[b];
      }
  }
  // Adds `v` = f(`c`); returns false (and leaves `c` a kernel vector) when
  // it depends on the rows already there.
  bool insert(uint64_t v, uint64_t &c) {
    reduce(v, c);
    if (!v)
      return false;
    int top = 63 - __builtin_clzll(v);
    has[top] = true;
    out[top] = v;
    comb[top] = c;
    return true;
  }
};

Echelon eliminate(const LinearMap &f, llvm::SmallVector<uint64_t> *kernel) {
  Echelon e;
  for (unsigned i = 0; i < f.inBits(); ++i) {
    uint64_t c = uint64_t(1) << i;
    if (!e.insert(f.column(i), c) && kernel)
      kernel->push_back(c);
  }
  return e;
}

} // namespace

LinearMap::LinearMap(llvm::SmallVector<Dim> ins, llvm::SmallVector<Dim> outs,
                     llvm::SmallVector<uint64_t> columns)
    : ins_(std::move(ins)), outs_(std::move(outs)), columns_(std::move(columns)) {
  assert(columns_.size() == totalBits(ins_) && totalBits(outs_) <= 64 && "LinearMap: bad sizes");
}

LinearMap LinearMap::identity(llvm::SmallVector<Dim> dims) {
  llvm::SmallVector<uint64_t> cols;
  for (unsigned i = 0; i < totalBits(dims); ++i)
    cols.push_back(uint64_t(1) << i);
  return LinearMap(dims, dims, std::move(cols));
}

unsigned LinearMap::outBits() const { return totalBits(outs_); }
unsigned LinearMap::inOffset(llvm::StringRef name) const { return offsetOf(ins_, name); }

uint64_t LinearMap::applyPacked(uint64_t in) const {
  uint64_t out = 0;
  for (unsigned i = 0; i < columns_.size(); ++i)
    if (in >> i & 1)
      out ^= columns_[i];
  return out;
}

uint64_t LinearMap::packIn(llvm::ArrayRef<int64_t> values) const {
  uint64_t packed = 0;
  unsigned off = 0;
  for (size_t d = 0; d < ins_.size(); ++d) {
    assert(uint64_t(values[d]) < (uint64_t(1) << ins_[d].bits) && "LinearMap: input out of range");
    packed |= uint64_t(values[d]) << off;
    off += ins_[d].bits;
  }
  return packed;
}

llvm::SmallVector<int64_t> LinearMap::unpackOut(uint64_t packed) const {
  llvm::SmallVector<int64_t> values;
  for (const Dim &d : outs_) {
    values.push_back(int64_t(packed & ((uint64_t(1) << d.bits) - 1)));
    packed >>= d.bits;
  }
  return values;
}

llvm::SmallVector<int64_t> LinearMap::apply(llvm::ArrayRef<int64_t> in) const {
  return unpackOut(applyPacked(packIn(in)));
}

LinearMap LinearMap::compose(const LinearMap &inner) const {
  assert(inner.outs_ == ins_ && "LinearMap::compose: the inner map's outputs are not these inputs");
  llvm::SmallVector<uint64_t> cols;
  for (uint64_t c : inner.columns_)
    cols.push_back(applyPacked(c));
  return LinearMap(inner.ins_, outs_, std::move(cols));
}

std::optional<LinearMap> LinearMap::rightInverse() const {
  Echelon e = eliminate(*this, nullptr);
  llvm::SmallVector<uint64_t> cols;
  for (unsigned b = 0; b < outBits(); ++b) {
    uint64_t v = uint64_t(1) << b, c = 0;
    e.reduce(v, c);
    if (v)
      return std::nullopt; // output bit b is reached by no input
    cols.push_back(c);
  }
  return LinearMap(outs_, ins_, std::move(cols));
}

LinearMap LinearMap::restrict(llvm::ArrayRef<llvm::StringRef> keep) const {
  llvm::SmallVector<Dim> ins;
  llvm::SmallVector<uint64_t> cols;
  unsigned off = 0;
  for (const Dim &d : ins_) {
    if (llvm::is_contained(keep, d.name)) {
      ins.push_back(d);
      cols.append(columns_.begin() + off, columns_.begin() + off + d.bits);
    }
    off += d.bits;
  }
  return LinearMap(std::move(ins), outs_, std::move(cols));
}

llvm::SmallVector<uint64_t> LinearMap::kernel() const {
  llvm::SmallVector<uint64_t> k;
  eliminate(*this, &k);
  return k;
}

unsigned LinearMap::rank() const { return inBits() - kernel().size(); }
