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
// The same in 32-bit hardware registers: two 16-bit or four 8-bit elements
// (or booleans) share one, a 64-bit element or pointer takes two.
int64_t packedRegistersPerThread(RankedTensorType type);

// Fails, with an error at the first one, when a tile in `root` has no layout.
LogicalResult verifyEveryTileHasLayout(Operation *root);
// Fails, with an error at the first one, when a tile's layout covers another
// number of lanes or waves than the kernel runs.
LogicalResult verifyLayoutsFit(Operation *root, unsigned waveSize, unsigned numWarps);

// A blocked layout for `shape` with `vec` contiguous elements per thread
// along `order[0]` (and, with `run` = (dim, n), n elements along another
// dim), spreading waveSize lanes and numWarps waves over the dimensions in
// `order`, the rest replicated.
BlockedLayoutAttr makeBlockedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                    ArrayRef<unsigned> order, unsigned vec, unsigned numWarps,
                                    unsigned waveSize,
                                    std::optional<std::pair<unsigned, int64_t>> run = std::nullopt);

// Elements one thread holds contiguously along `dim` in consecutive
// registers from its first (the widest vector access it can make).
int64_t contiguousPerThread(RankedTensorType type, unsigned dim);

// A conversion between layouts that give every thread the same elements
// (in any register order) only renames registers: for each result
// register, the source register that holds its element. None when data
// must move between threads.
std::optional<SmallVector<int64_t>> renamedRegisters(ConvertLayoutOp convert);
bool isRegisterRenaming(ConvertLayoutOp convert);
// A tessel.permute whose result layout is its source's, permuted
// (LinearLayout::permuted), moves no data: the same, for its registers.
std::optional<SmallVector<int64_t>> renamedRegisters(PermuteOp permute);

// Bytes an element of `type` takes in LDS (i1 takes a byte, a pointer 8).
int64_t ldsElementBytes(Type type);
// Element slots of a tile of `elements` staged through LDS: one slot of
// padding after every 32 so that rows of a transposed access fall in
// different banks.
inline int64_t ldsPaddedSlots(int64_t elements) { return elements + elements / 32; }
// How a conversion from `src` to `dst` stages its tile in LDS: the
// fastest dimension (where the accesses are widest), the access widths, and
// the row padding or swizzle that costs the fewest LDS cycles
// (ldsAccessCycles) for the write and the read together; then the fewest
// accesses; then padding over a swizzle (no XOR per access), the smaller
// pad first. A buffer kept across a loop's iterations (LdsPriority::Bytes)
// takes no padding when a swizzle is as conflict-free, even with narrower
// chunks than the widest access: its pad would cost occupancy for the
// whole loop, the XOR instructions and an address register per chunk a
// thread's accesses XOR differently (the 128x128x64 matmul: ~50 VGPRs).
enum class LdsPriority { Accesses, Bytes };
// With `transposeReads` (the target has ldsTransposedRead's instructions)
// the tile may also be kept along the source's fastest dimension and read
// transposed, when that costs less (accesses issued counted too: the other
// way, 8-bit elements are written a byte at a time).
LdsStaging planLdsStaging(RankedTensorType src, RankedTensorType dst,
                          LdsPriority priority = LdsPriority::Accesses, bool transposeReads = false);
// An LdsType's swizzle parameters for `plan`: [unit, perPhase, maxPhase],
// or none.
SmallVector<int64_t> swizzleOf(const LdsStaging &plan);
// How a tile of `type` is written to or read from a slot of `lds`: the
// buffer's order and pad, each access as wide as the tile's layout allows
// without crossing into a row's padding.
// With `transposeReads`, a read narrower than 8 bytes that
// ldsTransposedRead can make is one (plan.transposedRead).
LdsStaging ldsAccessPlan(LdsType lds, RankedTensorType type, bool transposeReads = false);
// gfx950's LDS transpose reads (ds_read_b64_tr_b8 / _b16, CDNA4 ISA 11.4):
// each lane reads E = 8 / elemBytes elements at its own address, and in
// every group of 16 lanes lane l receives column l of the E x 16 tile whose
// row j is the reads of lanes R j .. R j + R - 1 (R = 16 / E). Read as
// layouts: the lane that reads element e of a run holds, after the
// exchange, lane bits [0, k) (k = log2 E) of the receiver in its register
// bits, and the receiver's lane bits [k, 4) and its k register bits in its
// own lane bits [0, 4). So a tile of `type` staged as `plan` can be read
// this way when its lanes [0, k) step 1, 2, 4 elements along plan.order[0]
// (each read is 8 contiguous, aligned bytes) and it has k register bits
// running along another dim (`moved`, whose element e of a read fills
// them); `loading` is the layout of what each lane reads (addresses), the
// receiver's registers with `moved` bits standing for the read's elements.
struct LdsTransposedRead {
  LinearLayout loading;
  SmallVector<unsigned> moved; // the receiver's register bits an element index sets, lowest first
  int64_t elems = 0;           // E
};
std::optional<LdsTransposedRead> ldsTransposedRead(RankedTensorType type, const LdsStaging &plan);
// A thread's registers in runs of `vec` elements contiguous along `dim`
// (vec at most ldsVectorElems): each run's registers, first to last. A run's
// registers need not be neighbours (a B operand loaded along N holds its K
// run 8 registers apart).
SmallVector<SmallVector<int64_t>> ldsRuns(RankedTensorType type, unsigned dim, int64_t vec);

// The LDS cost model: 32 banks of 4 bytes; a wave's access is served
// 128 bytes a cycle, in groups of consecutive lanes (32 lanes for accesses
// of up to 4 bytes, 16 for 8 bytes, 8 for 16 bytes); lanes of a group that
// touch different dwords of one bank take a cycle each (the same dword is a
// broadcast). Cycles one wave spends moving the whole tile of `type` staged
// as `plan`, `vec` elements a lane at a time, and the conflict-free count.
struct LdsCycles {
  int64_t cycles = 0, conflictFree = 0;
};
LdsCycles ldsAccessCycles(RankedTensorType type, const LdsStaging &plan, int64_t vec);
// Elements of a tile of `type` one LDS access moves along `dim`: a thread's
// run of elements contiguous along `dim` (LinearLayout::registerRunBits,
// whatever their register order), at most 16 bytes (pointers and bools one
// at a time).
int64_t ldsVectorElems(RankedTensorType type, unsigned dim);

// Bytes of LDS `op` needs while it runs (LdsScratchOpInterface); 0 if none.
int64_t ldsScratchBytes(Operation *op);
// The offset the LDS plan gave `op` (0 before planning).
int64_t ldsOffset(Operation *op);

} // namespace mlir::tessel
