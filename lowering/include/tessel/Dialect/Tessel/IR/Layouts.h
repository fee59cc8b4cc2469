// Queries on tiles through their layouts, shared by layout assignment, the
// LDS plan and the conversion to LLVM. Everything here goes through the
// DistributedLayout interface (a layout's linear form); nothing asks which
// layout it is.
#pragma once

#include "tessel/Dialect/Tessel/IR/Dialect.h"

namespace mlir::tessel {

// The linear form of `type`'s layout; `type` must carry a distributed layout.
LinearLayout getLinearLayout(RankedTensorType type);
// Registers one thread holds of a tile of `type` (1 for a scalar).
int64_t registersPerThread(Type type);

// Fails, with an error at the first one, when a tile in `root` has no layout.
LogicalResult verifyEveryTileHasLayout(Operation *root);
// Fails, with an error at the first one, when a tile's layout covers another
// number of lanes or waves than the kernel runs.
LogicalResult verifyLayoutsFit(Operation *root, unsigned waveSize, unsigned numWarps);

// A blocked layout for `shape` with `vec` contiguous elements per thread
// along `order[0]`, spreading waveSize lanes and numWarps waves over the
// dimensions in `order`, the rest replicated.
BlockedLayoutAttr makeBlockedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                    ArrayRef<unsigned> order, unsigned vec, unsigned numWarps,
                                    unsigned waveSize);

// Elements one thread holds contiguously along `dim` in consecutive
// registers from its first (the widest vector access it can make).
int64_t contiguousPerThread(RankedTensorType type, unsigned dim);

// A conversion between layouts that give every thread the same elements
// in the same registers: the conversion renames registers.
bool isRegisterRenaming(ConvertLayoutOp convert);

// Bytes an element of `type` takes in LDS (i1 takes a byte, a pointer 8).
int64_t ldsElementBytes(Type type);
// Element slots of a tile of `elements` staged through LDS: one slot of
// padding after every 32 so that rows of a transposed access fall in
// different banks.
inline int64_t ldsPaddedSlots(int64_t elements) { return elements + elements / 32; }
// How a layout conversion stages a tile in LDS. Elements sit in rows along
// order[0] (the dimension the destination layout holds the longest register
// runs along, so its reads are vectors), the other dimensions in `order`
// numbering the rows; each row is followed by `pad` unused elements, so
// that the rows of a transposed access fall in different banks. The offset
// is linear in the coordinates (a thread's base plus a constant per
// register). `writeVec`/`readVec` elements move per LDS access (runs of
// consecutive registers along order[0], at most 16 bytes); pad is a multiple
// of both, so vectors stay aligned.
struct LdsStaging {
  SmallVector<unsigned> order;
  int64_t writeVec = 1, readVec = 1, pad = 1;
  // The element stride of each dimension of `shape`.
  SmallVector<int64_t> strides(ArrayRef<int64_t> shape) const {
    SmallVector<int64_t> s(shape.size(), 0);
    int64_t stride = 1;
    for (size_t i = 0; i < order.size(); ++i) {
      s[order[i]] = stride;
      stride *= shape[order[i]] + (i == 0 && order.size() > 1 ? pad : 0);
    }
    return s;
  }
  int64_t slots(ArrayRef<int64_t> shape) const {
    int64_t n = 1;
    for (size_t i = 0; i < order.size(); ++i)
      n *= shape[order[i]] + (i == 0 && order.size() > 1 ? pad : 0);
    return n;
  }
};
LdsStaging planLdsStaging(RankedTensorType src, RankedTensorType dst);

// Bytes of LDS `op` needs while it runs (LdsScratchOpInterface); 0 if none.
int64_t ldsScratchBytes(Operation *op);
// The offset the LDS plan gave `op` (0 before planning).
int64_t ldsOffset(Operation *op);

} // namespace mlir::tessel
