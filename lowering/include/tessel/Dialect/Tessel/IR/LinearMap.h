// Linear maps over GF(2) between named spaces of bits: the algebra behind
// layouts (Triton's LinearLayout is the model). A layout is the map from
// (register, lane, wave) to a tile's coordinates; an LDS buffer's swizzle
// is the map from coordinates to an offset. Composing, inverting and
// restricting them answers "where does this thread find that element".
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::tessel {

// Each space is a list of named dimensions of 2^bits values; a value of the
// space is its dimensions' bits packed one after the other (the first
// dimension lowest), at most 64 bits in all. The map sends the XOR of input
// bits to the XOR of their columns.
class LinearMap {
public:
  struct Dim {
    std::string name;
    unsigned bits;
    bool operator==(const Dim &o) const { return name == o.name && bits == o.bits; }
  };

  // `columns[i]`: the packed output of packed input bit i.
  LinearMap(llvm::SmallVector<Dim> ins, llvm::SmallVector<Dim> outs, llvm::SmallVector<uint64_t> columns);
  static LinearMap identity(llvm::SmallVector<Dim> dims);

  llvm::ArrayRef<Dim> ins() const { return ins_; }
  llvm::ArrayRef<Dim> outs() const { return outs_; }
  unsigned inBits() const { return columns_.size(); }
  unsigned outBits() const;
  uint64_t column(unsigned inBit) const { return columns_[inBit]; }
  // Where dimension `name` starts in the packed input; asserts it exists.
  unsigned inOffset(llvm::StringRef name) const;

  uint64_t applyPacked(uint64_t in) const;
  // One value per input dimension in, one per output dimension out.
  llvm::SmallVector<int64_t> apply(llvm::ArrayRef<int64_t> in) const;
  uint64_t packIn(llvm::ArrayRef<int64_t> values) const;
  llvm::SmallVector<int64_t> unpackOut(uint64_t packed) const;

  // x -> (*this)(inner(x)); inner's outputs are this map's inputs.
  LinearMap compose(const LinearMap &inner) const;
  // A map g with (*this)(g(y)) == y for every y, when every output is
  // reached (none otherwise). Where several inputs reach an output (a
  // replicating layout), g takes the combination of the earliest input bits:
  // registers before lanes before waves, lower bits first.
  std::optional<LinearMap> rightInverse() const;
  // The map on the inputs `keep` only (the others held at 0), in this
  // map's input order: a layout's lanes alone, or its lanes and waves.
  LinearMap restrict(llvm::ArrayRef<llvm::StringRef> keep) const;
  // A basis of the inputs that map to 0 (packed), from the same elimination
  // as rightInverse: each is a later input bit XOR earlier ones.
  llvm::SmallVector<uint64_t> kernel() const;
  unsigned rank() const;
  bool isSurjective() const { return rank() == outBits(); }

  bool operator==(const LinearMap &o) const {
    return ins_ == o.ins_ && outs_ == o.outs_ && columns_ == o.columns_;
  }

private:
  llvm::SmallVector<Dim> ins_, outs_;
  llvm::SmallVector<uint64_t> columns_;
};

} // namespace mlir::tessel
