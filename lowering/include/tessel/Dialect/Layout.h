// How a tile's elements are spread over the threads of a workgroup: which
// registers a thread holds and the coordinates of each, as a static part (per
// register) plus a dynamic part (per thread). Both blocked and slice layouts
// factor per dimension, which is what makes broadcast and expand_dims free.
#pragma once

#include "tessel/Dialect/TesselDialect.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::tessel {

// The per-dimension distribution of one dimension of a tile.
struct DimDistribution {
  int64_t size = 1;                      // the tile's extent along this dim
  llvm::SmallVector<int64_t> staticCoord; // coordinate contribution per register index
  // Dynamic part: laneCoord(sourceDim) * laneScale + waveCoord(sourceDim) * waveScale,
  // where sourceDim is the dimension of the root blocked layout.
  unsigned sourceDim = 0;
  int64_t laneScale = 0, waveScale = 0;
  bool wraps = false; // coordinates are taken modulo `size` (replication)
};

struct RegisterLayout {
  BlockedLayoutAttr root;                  // the blocked layout the threads follow
  llvm::SmallVector<DimDistribution> dims; // one per tile dimension
  llvm::SmallVector<unsigned> order;       // tile dims, fastest-varying register first
  int64_t numRegisters() const;
  // Register index <-> per-dim register indices.
  llvm::SmallVector<int64_t> unflatten(int64_t reg) const;
  int64_t flatten(llvm::ArrayRef<int64_t> idx) const;
};

// Layout of `type` (which must carry a blocked or slice encoding).
RegisterLayout getRegisterLayout(RankedTensorType type);

// Fails, with an error at the first one, when a tile in `root` has no layout.
LogicalResult verifyEveryTileHasLayout(Operation *root);

// A blocked layout for `shape` with `vec` contiguous elements per thread
// along `order[0]`, spreading waveSize lanes and numWarps waves over the
// dimensions in `order`, the rest replicated.
BlockedLayoutAttr makeBlockedLayout(MLIRContext *ctx, llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<unsigned> order, unsigned vec,
                                    unsigned numWarps, unsigned waveSize);

// Elements one thread holds contiguously along `dim` (for vector access).
int64_t contiguousPerThread(RankedTensorType type, unsigned dim);

} // namespace mlir::tessel

namespace mlir::tessel {

// How many lanes (waves) of the workgroup hold distinct coordinates along
// tile dim `dim`; the others hold replicas.
int64_t distinctLanes(const RegisterLayout &layout, unsigned dim);
int64_t distinctWaves(const RegisterLayout &layout, unsigned dim);
// Lane-id (wave-id) distance between neighbours along tile dim `dim`.
int64_t laneStride(const RegisterLayout &layout, unsigned dim);
int64_t waveStride(const RegisterLayout &layout, unsigned dim);

// Bytes an element of `type` takes in LDS (i1 takes a byte).
int64_t ldsElementBytes(Type type);
// Element slot of element `index` in a tile staged through LDS: one slot of
// padding after every 32 so that rows of a transposed access fall in
// different banks.
inline int64_t ldsPaddedSlots(int64_t elements) { return elements + elements / 32; }

// A conversion between layouts that give every thread the same elements
// (one encoding, or a one-element tile): the distributor renames registers.
bool isRegisterRenaming(ConvertLayoutOp convert);

// Workgroup memory (LDS) `op` needs as scratch while it runs; 0 if none.
int64_t ldsScratchBytes(Operation *op);

} // namespace mlir::tessel
