// The linear form of a distributed layout: which element of a tile each
// register of each lane of each wave holds. Every layout (blocked, slice, and
// the matrix-core layouts to come) converts to one, and the compiler asks it,
// never the layout, about elements per thread, replicas and coordinates.
#pragma once

#include "tessel/Dialect/Tessel/IR/LinearMap.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir::tessel {

// Tile dimensions are powers of two. Register r of lane l of wave w holds the
// element whose coordinates are the XOR of the bases of the bits set in r, l
// and w. A basis of zeros replicates: the registers, lanes or waves that bit
// tells apart hold the same elements. A basis may set several coordinate
// bits (an XOR swizzle, the general GF(2) form: map() and fromMap());
// the layouts of tiles are *simple*: each basis moves along at most one
// dimension and no two bases share a coordinate bit, so XOR is also the
// sum. The queries marked "simple" need that form.
class LinearLayout {
public:
  using Basis = llvm::SmallVector<int64_t, 4>; // an offset per tile dimension

  LinearLayout(llvm::ArrayRef<int64_t> shape, llvm::SmallVector<Basis> registers,
               llvm::SmallVector<Basis> lanes, llvm::SmallVector<Basis> waves)
      : shape_(shape), registers_(std::move(registers)), lanes_(std::move(lanes)),
        waves_(std::move(waves)) {}

  // The layout as a map from (register, lane, wave) to (dim0, dim1, ...),
  // and back (`map`'s outputs must be `shape`'s dims, its inputs those three).
  LinearMap map() const;
  static LinearLayout fromMap(llvm::ArrayRef<int64_t> shape, const LinearMap &map);
  // Each basis sets at most one coordinate bit, and no two set the same one.
  bool isSimple() const;

  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  unsigned rank() const { return shape_.size(); }
  llvm::ArrayRef<Basis> registerBases() const { return registers_; }
  llvm::ArrayRef<Basis> laneBases() const { return lanes_; }
  llvm::ArrayRef<Basis> waveBases() const { return waves_; }

  int64_t numRegisters() const { return int64_t(1) << registers_.size(); }
  // Static coordinates of register `reg` (its lane and wave add the rest).
  Basis registerCoords(int64_t reg) const;
  // Coordinates of the element register `reg` of lane `lane` of wave
  // `wave` holds.
  Basis coords(int64_t reg, int64_t lane, int64_t wave) const;
  // The register whose static coordinates are `coords`; -1 when none is
  // (simple).
  int64_t registerAt(llvm::ArrayRef<int64_t> coords) const;

  // Bits of a lane (wave) id that move along `dim`, lowest first.
  llvm::SmallVector<unsigned> laneBitsAlong(unsigned dim) const;
  llvm::SmallVector<unsigned> waveBitsAlong(unsigned dim) const;
  // Lanes (waves) that hold distinct coordinates along `dim`.
  int64_t distinctLanes(unsigned dim) const { return int64_t(1) << laneBitsAlong(dim).size(); }
  int64_t distinctWaves(unsigned dim) const { return int64_t(1) << waveBitsAlong(dim).size(); }
  // (The queries from here to registerPicks are simple.)
  // Lane (wave) id bits that only replicate; a thread owns its elements when
  // its id has none of them set.
  uint64_t laneReplicaMask() const;
  uint64_t waveReplicaMask() const;

  // A thread's registers grouped into lines along `dim`: each line lists the
  // registers that differ only in their `dim` coordinate, by increasing
  // coordinate. Lines come in register order of the layout without `dim`
  // (what a reduction along `dim` leaves).
  llvm::SmallVector<llvm::SmallVector<int64_t>> linesAlong(unsigned dim) const;
  // Elements along `dim` held in consecutive registers from register 0.
  int64_t contiguousRegisters(unsigned dim) const;
  // The register bits that step along `dim` by 1, 2, 4, ..., wherever they
  // sit in the register order: a thread holds runs of 2^size() elements
  // contiguous along `dim`, register r's run being r | any of these bits.
  llvm::SmallVector<unsigned> registerRunBits(unsigned dim) const;
  // The same layout without dimension `dim` (whose extent must be 1).
  LinearLayout withoutDim(unsigned dim) const;
  // The layout of the tile whose dimension i is this tile's dimension
  // order[i] (tessel.permute): every thread keeps its elements in its
  // registers.
  LinearLayout permuted(llvm::ArrayRef<int32_t> order) const;
  // When every thread holds the same elements in `to` as here (the lanes
  // and waves agree; the registers may come in another order): for each
  // register of `to`, the register here that holds its element. A
  // conversion between the two only renames registers.
  std::optional<llvm::SmallVector<int64_t>> registerPicks(const LinearLayout &to) const;

  bool operator==(const LinearLayout &o) const {
    return shape_ == o.shape_ && registers_ == o.registers_ && lanes_ == o.lanes_ &&
           waves_ == o.waves_;
  }

private:
  llvm::SmallVector<int64_t, 4> shape_;
  llvm::SmallVector<Basis> registers_, lanes_, waves_;
};

} // namespace mlir::tessel
