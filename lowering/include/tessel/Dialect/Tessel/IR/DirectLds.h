// Loads from global memory straight into an LDS slot (tessel.buffer_load_to_local):
// which chunk of the slot each lane writes, and whose offset it loads.
#pragma once

#include "tessel/Dialect/Tessel/IR/Dialect.h"

#include <optional>

namespace mlir::tessel {

// A lane's load to LDS writes `vec` elements at its wave's LDS pointer plus
// lane * vec elements: a wave's lanes fill consecutive chunks. For a tile
// whose offsets have a layout that puts them so (ignoring the slot's
// swizzle), group g of a thread's registers (registers g * vec ...):
// - lane 0 of wave w writes at element groupStart[g] + the waveStep of each
//   bit set in w (the slot's unswizzled order, where the lanes follow);
// - the lane writes there the element the swizzle puts at that chunk: the
//   one whose offsets register g * vec of lane groupLane[g] ^ laneXor[bits
//   of the lane] ^ waveLaneXor[bits of the wave] holds (same wave).
// With no swizzle every lane loads its own offsets (`permutes` is false).
struct DirectLdsPlan {
  int64_t vec = 1;
  SmallVector<int64_t> groupStart, waveStep;
  SmallVector<int64_t> groupLane, laneXor, waveLaneXor;
  bool permutes = false;
};

// The plan for loading a tile whose offsets are `offsets` (a layout with
// `vec`-element runs along the slot's rows, every element held once) into a
// slot of `buffer`, `vec` elements a lane; none when the layout's lanes do
// not fill consecutive chunks of the slot, the buffer is padded, or a
// swizzle chunk is narrower than `vec`.
std::optional<DirectLdsPlan> planDirectLds(RankedTensorType offsets, LdsType buffer, int64_t vec);

} // namespace mlir::tessel
