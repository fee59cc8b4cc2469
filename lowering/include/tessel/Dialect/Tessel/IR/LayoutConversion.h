// How a layout conversion moves data, chosen from the layouts' algebra:
// T = src^-1 . dst says, for each register of each lane of each wave of
// the result, where the source holds that element. When every thread keeps
// its elements, T only renames registers; when each element comes from a
// lane of the thread's own wave, the conversion is an in-wave shuffle
// (v_permlanex16 where lanes swap rows of 16, ds_bpermute otherwise: no LDS
// memory, no barrier); else the tile goes through LDS. Between a shuffle
// and LDS the target table's costs decide.
#pragma once

#include "tessel/Dialect/Tessel/IR/Dialect.h"

namespace tessel {
struct TargetFacts;
} // namespace tessel

namespace mlir::tessel {

// How one source register reaches a result register: the thread's own
// (the lane map is the identity), the same lane of the other row of 16
// (lane l ^ 16: v_permlanex16 where the target has it, and a select where
// some lanes keep their own), or any lane (ds_bpermute).
enum class LaneMoveKind { Own, SwapRows, Permute };

// An in-wave conversion. For result register r of lane l of wave w the
// element is source register regOf[r] ^ varying(l, w) of source lane
// laneOf[r] ^ lanePart(l, w), where varying(l, w) XORs laneToReg[i] over
// the bits i set in l and waveToReg[j] over the bits j set in w, and
// lanePart likewise with laneToLane and waveToLane.
struct InWaveShuffle {
  SmallVector<int64_t> regOf, laneOf;
  SmallVector<int64_t> laneToReg, laneToLane, waveToReg, waveToLane;

  // What the lowering moves: one value per distinct (source register, lane
  // constant); 16- and 8-bit values of one lane pattern share 32-bit moves.
  struct Move {
    int64_t srcReg, laneConst;
    LaneMoveKind kind;
  };
  SmallVector<Move> moves;
  // Per result register: (the value of varying(l, w) it takes it at, the
  // move) for each source register the lanes may need; the first is the
  // default, the rest are selected.
  SmallVector<SmallVector<std::pair<int64_t, unsigned>>> picks;

  // The moves that go between lanes, packed into 32-bit words: narrow
  // values of one lane pattern share a word, in the order of `moves`
  // (words of one source registers' swap between rows move once).
  struct Word {
    LaneMoveKind kind;
    int64_t laneConst;
    SmallVector<unsigned> members; // indices into `moves`
  };
  SmallVector<Word> words(unsigned bits) const;
  // Whether a row swap's lanes differ in which row they read (a select).
  bool rowsVary() const;
  // The values varying() takes (0 first).
  SmallVector<int64_t> variants() const;
  // 32-bit lane moves of each kind (ds_bpermute, permlanex16) and VALU
  // selects, for elements of `bits`.
  struct Count {
    int64_t permutes = 0, rowSwaps = 0, selects = 0;
  };
  Count count(unsigned bits) const;
};

// The shuffle that converts `src` to `dst` when every element a thread
// needs is held in its own wave; none otherwise. `swapRows`: the target has
// v_permlanex16 (a move between the rows of 16 lanes is one VALU op).
std::optional<InWaveShuffle> planInWaveShuffle(const LinearLayout &src, const LinearLayout &dst,
                                               unsigned waveSize, bool swapRows);

// Where a tile staged by `plan` (unpadded) keeps each element: the map
// from its coordinates (dim0, dim1, ...) to the element offset in the slot
// ("offset"), swizzle included; none when padding makes offsets non-linear.
// Composed with a layout's map it gives each register its LDS offset.
std::optional<LinearMap> ldsOffsetMap(const LdsStaging &plan, ArrayRef<int64_t> shape);

enum class ConversionPath { Rename, Shuffle, Lds };
// How `convert` moves data on its module's target (tessel.target; without
// one, a shuffle only by ds_bpermute and with CDNA's costs).
ConversionPath conversionPath(ConvertLayoutOp convert);
// The same, with the shuffle plan when the path is a shuffle.
ConversionPath conversionPath(ConvertLayoutOp convert, std::optional<InWaveShuffle> &shuffle);
// A tessel.permute: its source's layout permuted, to its result's.
ConversionPath conversionPath(PermuteOp permute);
ConversionPath conversionPath(PermuteOp permute, std::optional<InWaveShuffle> &shuffle);

} // namespace mlir::tessel
