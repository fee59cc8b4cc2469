// The layouts' linear forms and the queries built on them.
#include "tessel/Dialect/Tessel/IR/Layouts.h"

#include <array>
#include <limits>
#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::tessel;

namespace {
int log2Of(int64_t v) { return llvm::Log2_64(uint64_t(v)); }

// A basis moving `offset` along `dim` (nothing when that wraps off the tile).
LinearLayout::Basis along(unsigned rank, unsigned dim, int64_t offset, int64_t extent) {
  LinearLayout::Basis b(rank, 0);
  if (offset < extent)
    b[dim] = offset;
  return b;
}
} // namespace

// Registers run along order[0] first: its elements within a thread, then its
// repetitions over the tile, then the next dimension. Lanes and waves are
// numbered along order[0] first too.
LinearLayout BlockedLayoutAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  unsigned rank = shape.size();
  SmallVector<LinearLayout::Basis> regs, lanes, waves;
  for (unsigned d : getOrder()) {
    int64_t spt = getSizePerThread()[d], tpw = getThreadsPerWave()[d], wpb = getWavesPerBlock()[d];
    if (shape[d] > 1) {
      int64_t perThread = std::min(spt, shape[d]);
      int64_t perBlock = spt * tpw * wpb;
      int64_t reps = std::max<int64_t>(1, shape[d] / perBlock);
      for (int b = 0; b < log2Of(perThread); ++b)
        regs.push_back(along(rank, d, int64_t(1) << b, shape[d]));
      for (int b = 0; b < log2Of(reps); ++b)
        regs.push_back(along(rank, d, perBlock << b, shape[d]));
    }
    for (int b = 0; b < log2Of(tpw); ++b)
      lanes.push_back(along(rank, d, spt << b, shape[d]));
  }
  for (unsigned d : getOrder()) {
    int64_t spt = getSizePerThread()[d], tpw = getThreadsPerWave()[d], wpb = getWavesPerBlock()[d];
    for (int b = 0; b < log2Of(wpb); ++b)
      waves.push_back(along(rank, d, (spt * tpw) << b, shape[d]));
  }
  return LinearLayout(shape, std::move(regs), std::move(lanes), std::move(waves));
}

// The parent's layout of the tile with a size-1 `dim` put back, without it.
LinearLayout SliceLayoutAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  SmallVector<int64_t> parentShape(shape);
  parentShape.insert(parentShape.begin() + getDim(), 1);
  return getParent().toLinearLayout(parentShape).withoutDim(getDim());
}

// ---- matrix-core layouts (wave64 MFMA) ----
//
// From AMD's CDNA3 ISA guide, section "Matrix fused multiply-add": the D
// matrix of a 32x32 instruction holds, in lane l and register r, row
// 8 * (r / 4) + 4 * (l / 32) + r % 4 and column l % 32; of a 16x16 one, row
// 4 * (l / 16) + r and column l % 16. A and B give lane l the row (column)
// l % m and kWidth consecutive K elements starting at kWidth * (l / m).

static constexpr unsigned kMfmaWaveSize = 64;

// A basis of a rank-`rank` tile moving `row` along dim rank - 2 and `col`
// along rank - 1 (the matrix dims after an optional batch dim); zero where
// that wraps off the tile.
static LinearLayout::Basis matrixBasis(ArrayRef<int64_t> shape, int64_t row, int64_t col) {
  const size_t r = shape.size();
  LinearLayout::Basis b(r, 0);
  b[r - 2] = row < shape[r - 2] ? row : 0;
  b[r - 1] = col < shape[r - 1] ? col : 0;
  return b;
}

// An instruction's register basis, kept only when it stays on the tile: a
// block with fewer rows than the instruction (M < 16, M < 32) leaves the
// registers holding the rows past M out of the tile's registers; the dot
// lowering pads the instruction's D with them (copies) and drops them from
// its result, so no register of a tile repeats another.
static void addInstrRegister(SmallVector<LinearLayout::Basis> &regs, LinearLayout::Basis b) {
  if (llvm::any_of(b, [](int64_t v) { return v != 0; }))
    regs.push_back(std::move(b));
}

// A batch dim (rank 3) repeats the whole pattern in the highest registers.
static void addBatchRegisters(ArrayRef<int64_t> shape, SmallVector<LinearLayout::Basis> &regs) {
  if (shape.size() != 3)
    return;
  for (int64_t b = 1; b < shape[0]; b <<= 1) {
    LinearLayout::Basis basis(3, 0);
    basis[0] = b;
    regs.push_back(basis);
  }
}

LinearLayout MfmaLayoutAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  const int64_t m = getInstrShape()[0], n = getInstrShape()[1];
  const int64_t wM = getWavesPerBlock()[0], wN = getWavesPerBlock()[1];
  const size_t rank = shape.size();
  const int64_t M = shape[rank - 2], N = shape[rank - 1];
  SmallVector<LinearLayout::Basis> regs, lanes, waves;
  auto rowCol = [&](int64_t row, int64_t col) { return matrixBasis(shape, row, col); };
  // One instruction's registers and lanes, as the ISA gives D; transposed,
  // D holds the tile's columns where it says rows (m == n).
  auto inD = [&](int64_t row, int64_t col) { return getTransposed() ? rowCol(col, row) : rowCol(row, col); };
  addInstrRegister(regs, inD(1, 0));
  addInstrRegister(regs, inD(2, 0));
  if (m == 32) {
    addInstrRegister(regs, inD(8, 0));
    addInstrRegister(regs, inD(16, 0));
  }
  for (int64_t b = 1; b < n; b <<= 1)
    lanes.push_back(inD(0, b));
  for (int64_t b = 4; lanes.size() < 6; b <<= 1)
    lanes.push_back(inD(b, 0)); // 32x32: lane 32 -> row 4; 16x16: lanes 16, 32 -> rows 4, 8
  // Waves tile M first, then N.
  for (int64_t b = 1; b < wM; b <<= 1)
    waves.push_back(rowCol(m * b, 0));
  for (int64_t b = 1; b < wN; b <<= 1)
    waves.push_back(rowCol(0, n * b));
  // Repetitions over the tile, M first, then the batch.
  for (int64_t b = m * wM; b < M; b <<= 1)
    regs.push_back(rowCol(b, 0));
  for (int64_t b = n * wN; b < N; b <<= 1)
    regs.push_back(rowCol(0, b));
  addBatchRegisters(shape, regs);
  return LinearLayout(shape, std::move(regs), std::move(lanes), std::move(waves));
}

// RDNA3 ISA guide, "Wave matrix multiply accumulate": the 32-bit D matrix of
// v_wmma_*_16x16x16_* holds, in lane l and register r, row 2 * r + l / 16
// and column l % 16; A and B give lane l the row (column) l % 16 and all 16
// K elements, lanes 16..31 repeating lanes 0..15.
LinearLayout WmmaLayoutAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  const int64_t wM = getWavesPerBlock()[0], wN = getWavesPerBlock()[1];
  const size_t rank = shape.size();
  const int64_t M = shape[rank - 2], N = shape[rank - 1];
  SmallVector<LinearLayout::Basis> regs, lanes, waves;
  auto rowCol = [&](int64_t row, int64_t col) { return matrixBasis(shape, row, col); };
  // As the ISA gives D; transposed, D's rows are the tile's columns.
  auto inD = [&](int64_t row, int64_t col) { return getTransposed() ? rowCol(col, row) : rowCol(row, col); };
  for (int64_t b = 2; b < 16; b <<= 1)
    addInstrRegister(regs, inD(b, 0));
  for (int64_t b = 1; b < 16; b <<= 1)
    lanes.push_back(inD(0, b));
  lanes.push_back(inD(1, 0));
  for (int64_t b = 1; b < wM; b <<= 1)
    waves.push_back(rowCol(16 * b, 0));
  for (int64_t b = 1; b < wN; b <<= 1)
    waves.push_back(rowCol(0, 16 * b));
  for (int64_t b = 16 * wM; b < M; b <<= 1)
    regs.push_back(rowCol(b, 0));
  for (int64_t b = 16 * wN; b < N; b <<= 1)
    regs.push_back(rowCol(0, b));
  addBatchRegisters(shape, regs);
  return LinearLayout(shape, std::move(regs), std::move(lanes), std::move(waves));
}

// The FMA path's operand of a blocked accumulator: a thread holds, for each
// accumulator register, the whole K of that register's row of A (column of
// B) in consecutive registers; what distinguishes accumulator elements along
// the other operand's dimension replicates.
static LinearLayout fmaOperandLayout(BlockedLayoutAttr parent, bool isA, ArrayRef<int64_t> shape) {
  const unsigned rank = shape.size(), kDim = isA ? rank - 1 : rank - 2;
  // The accumulator's layout over [.., M, 1] (A) or [.., 1, N] (B): what it
  // spreads along the other operand's dimension collapses to replicas.
  SmallVector<int64_t> accShape(shape);
  accShape[kDim] = 1;
  LinearLayout acc = parent.toLinearLayout(accShape);
  SmallVector<LinearLayout::Basis> regs;
  for (int64_t k = 1; k < shape[kDim]; k <<= 1) { // all of K, in consecutive registers
    LinearLayout::Basis b(rank, 0);
    b[kDim] = k;
    regs.push_back(b);
  }
  regs.append(acc.registerBases().begin(), acc.registerBases().end());
  return LinearLayout(shape, std::move(regs), SmallVector<LinearLayout::Basis>(acc.laneBases()),
                      SmallVector<LinearLayout::Basis>(acc.waveBases()));
}

LinearLayout DotOperandLayoutAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  if (auto blocked = dyn_cast<BlockedLayoutAttr>(getParent()))
    return fmaOperandLayout(blocked, getOpIdx() == 0, shape);
  const bool wmma = isa<WmmaLayoutAttr>(getParent());
  auto mfma = dyn_cast<MfmaLayoutAttr>(getParent());
  ArrayRef<unsigned> grid = wmma ? cast<WmmaLayoutAttr>(getParent()).getWavesPerBlock() : mfma.getWavesPerBlock();
  const bool isA = getOpIdx() == 0, kLast = isA || getKLast();
  const unsigned rank = shape.size(), first = rank - 2; // an optional batch dim comes first
  const unsigned kDim = kLast ? first + 1 : first, nonK = kLast ? first : first + 1;
  // rows of A (columns of B) per instruction
  const int64_t mn = wmma ? 16 : mfma.getInstrShape()[isA ? 0 : 1];
  const int64_t kWidth = getKWidth(), kInstr = wmma ? kWidth : kWidth * (kMfmaWaveSize / mn);
  const int64_t wM = grid[0], wN = grid[1];
  SmallVector<LinearLayout::Basis> regs, lanes, waves;
  auto along = [&](unsigned dim, int64_t offset) {
    LinearLayout::Basis b(rank, 0);
    if (offset < shape[dim])
      b[dim] = offset;
    return b;
  };
  const LinearLayout::Basis none(rank, 0);
  // kGroup consecutive K a lane, the lane groups next, then the rest of the
  // lane's kWidth (kGroup == kWidth: a lane's kWidth K are consecutive).
  const int64_t kGroup = getKGroup() ? getKGroup() : kWidth;
  for (int64_t b = 1; b < kGroup; b <<= 1)
    regs.push_back(along(kDim, b));
  for (int64_t b = 1; b < mn; b <<= 1)
    lanes.push_back(along(nonK, b));
  for (int64_t b = kGroup; b < kGroup * (kInstr / kWidth); b <<= 1)
    lanes.push_back(along(kDim, b));
  for (int64_t b = kGroup * (kInstr / kWidth); b < kInstr; b <<= 1)
    regs.push_back(along(kDim, b));
  if (wmma)
    lanes.push_back(none); // lanes 16..31 repeat lanes 0..15
  // Waves: the parent's grid, M bits first; the other operand's bits replicate.
  for (int64_t b = 1; b < wM; b <<= 1)
    waves.push_back(isA ? along(nonK, mn * b) : none);
  for (int64_t b = 1; b < wN; b <<= 1)
    waves.push_back(isA ? none : along(nonK, mn * b));
  // Repetitions: along K first, then along M (A) or N (B), then the batch.
  for (int64_t b = kInstr; b < shape[kDim]; b <<= 1)
    regs.push_back(along(kDim, b));
  const int64_t waveSpan = mn * (isA ? wM : wN);
  for (int64_t b = waveSpan; b < shape[nonK]; b <<= 1)
    regs.push_back(along(nonK, b));
  addBatchRegisters(shape, regs);
  return LinearLayout(shape, std::move(regs), std::move(lanes), std::move(waves));
}

LinearLayout mlir::tessel::getLinearLayout(RankedTensorType type) {
  return cast<DistributedLayoutAttr>(type.getEncoding()).toLinearLayout(type.getShape());
}

int64_t mlir::tessel::registersPerThread(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return getLinearLayout(tile).numRegisters();
  return 1;
}

int64_t mlir::tessel::packedRegistersPerThread(RankedTensorType type) {
  Type elem = type.getElementType();
  int64_t bits = isa<PtrType>(elem) ? 64 : std::max(8u, elem.getIntOrFloatBitWidth());
  return (registersPerThread(type) * bits + 31) / 32;
}

BlockedLayoutAttr mlir::tessel::makeBlockedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                                  ArrayRef<unsigned> order, unsigned vec,
                                                  unsigned numWarps, unsigned waveSize,
                                                  std::optional<std::pair<unsigned, int64_t>> run) {
  unsigned rank = shape.size();
  SmallVector<unsigned> spt(rank, 1), tpw(rank, 1), wpb(rank, 1);
  spt[order[0]] = std::max<int64_t>(1, std::min<int64_t>(vec, shape[order[0]]));
  if (run && run->first != order[0])
    spt[run->first] = std::max<int64_t>(1, std::min(run->second, shape[run->first]));
  unsigned lanes = waveSize;
  for (unsigned d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / spt[d]);
    tpw[d] = std::min<int64_t>(lanes, room);
    lanes /= tpw[d];
  }
  tpw[order[0]] *= lanes; // leftover lanes replicate along the fastest dim
  unsigned waves = numWarps;
  for (unsigned d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / (int64_t(spt[d]) * tpw[d]));
    wpb[d] = std::min<int64_t>(waves, room);
    waves /= wpb[d];
  }
  wpb[order[0]] *= waves;
  return BlockedLayoutAttr::get(ctx, spt, tpw, wpb, order);
}

int64_t mlir::tessel::contiguousPerThread(RankedTensorType type, unsigned dim) {
  return getLinearLayout(type).contiguousRegisters(dim);
}

std::optional<SmallVector<int64_t>> mlir::tessel::renamedRegisters(ConvertLayoutOp convert) {
  auto src = cast<RankedTensorType>(convert.getSrc().getType());
  auto dst = convert.getType();
  LinearLayout to = getLinearLayout(dst);
  if (src.getEncoding() == dst.getEncoding() || src.getNumElements() == 1) {
    SmallVector<int64_t> same;
    for (int64_t r = 0; r < to.numRegisters(); ++r)
      same.push_back(src.getNumElements() == 1 ? 0 : r);
    return same;
  }
  return getLinearLayout(src).registerPicks(to);
}

bool mlir::tessel::isRegisterRenaming(ConvertLayoutOp convert) { return renamedRegisters(convert).has_value(); }

std::optional<SmallVector<int64_t>> mlir::tessel::renamedRegisters(PermuteOp permute) {
  auto src = cast<RankedTensorType>(permute.getSrc().getType());
  return getLinearLayout(src).permuted(permute.getOrder()).registerPicks(getLinearLayout(permute.getType()));
}

int64_t mlir::tessel::ldsElementBytes(Type type) {
  Type elem = elementTypeOf(type);
  if (isa<PtrType>(elem))
    return 8; // a global address
  return std::max<unsigned>(1, elem.getIntOrFloatBitWidth() / 8);
}

LogicalResult mlir::tessel::verifyEveryTileHasLayout(Operation *root) {
  auto check = [](Value v, Location loc) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (t && !isa_and_nonnull<DistributedLayoutAttr>(t.getEncoding()))
      return emitError(loc, "tile without a layout; run tessel-assign-layouts first");
    return success();
  };
  WalkResult result = root->walk([&](Operation *op) -> WalkResult {
    for (Value v : op->getResults())
      if (failed(check(v, op->getLoc())))
        return WalkResult::interrupt();
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument a : b.getArguments())
          if (failed(check(a, op->getLoc())))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

SmallVector<SmallVector<int64_t>> mlir::tessel::ldsRuns(RankedTensorType type, unsigned dim, int64_t vec) {
  LinearLayout layout = getLinearLayout(type);
  SmallVector<unsigned> bits = layout.registerRunBits(dim);
  bits.resize(llvm::Log2_64(uint64_t(vec)));
  uint64_t runMask = 0;
  for (unsigned bit : bits)
    runMask |= uint64_t(1) << bit;
  SmallVector<SmallVector<int64_t>> runs;
  for (int64_t r = 0, n = layout.numRegisters(); r < n; ++r) {
    if (r & runMask)
      continue;
    SmallVector<int64_t> &run = runs.emplace_back();
    for (int64_t e = 0; e < vec; ++e) {
      int64_t reg = r;
      for (size_t i = 0; i < bits.size(); ++i)
        if (e >> i & 1)
          reg |= int64_t(1) << bits[i];
      run.push_back(reg);
    }
  }
  return runs;
}

SmallVector<int64_t> mlir::tessel::swizzleOf(const LdsStaging &plan) {
  if (!plan.swizzled())
    return {};
  return {plan.unit, plan.perPhase, plan.maxPhase};
}

namespace {
// The widest access of at most `vec` elements that stays aligned in rows of
// `row` + pad elements and within a swizzle's chunk.
int64_t alignedVec(int64_t vec, const LdsStaging &plan, int64_t row) {
  while ((row + plan.pad) % vec || (plan.swizzled() && plan.unit % vec))
    vec /= 2;
  return vec;
}
} // namespace

LdsStaging mlir::tessel::ldsAccessPlan(LdsType lds, RankedTensorType type, bool transposeReads) {
  LdsStaging plan = lds.staging();
  int64_t vec = alignedVec(ldsVectorElems(type, plan.order.front()), plan, type.getDimSize(plan.order.front()));
  plan.writeVec = plan.readVec = vec;
  if (transposeReads)
    if (std::optional<LdsTransposedRead> read = ldsTransposedRead(type, plan)) {
      plan.transposedRead = true;
      plan.readVec = read->elems;
    }
  return plan;
}

std::optional<LdsTransposedRead> mlir::tessel::ldsTransposedRead(RankedTensorType type, const LdsStaging &plan) {
  // 8- and 16-bit numbers (not bools, which take a byte each in LDS).
  const Type elem = type.getElementType();
  if (!elem.isIntOrFloat() || elem.isInteger(1) || plan.order.size() < 2 || !type.getEncoding())
    return std::nullopt;
  const int64_t elemBytes = ldsElementBytes(type);
  if (elemBytes != 1 && elemBytes != 2)
    return std::nullopt;
  const int64_t elems = 8 / elemBytes;
  const unsigned k = unsigned(log2Of(elems)), along = plan.order.front(), rank = type.getRank();
  // A read as wide as 8 bytes along the buffer's order needs no transposing.
  if (ldsVectorElems(type, along) * elemBytes >= 8)
    return std::nullopt;
  LinearLayout layout = getLinearLayout(type);
  ArrayRef<LinearLayout::Basis> lanes = layout.laneBases();
  if (lanes.size() < 4)
    return std::nullopt;
  for (unsigned i = 0; i < k; ++i)
    for (unsigned d = 0; d < rank; ++d)
      if (lanes[i][d] != (d == along ? int64_t(1) << i : 0))
        return std::nullopt;
  // Each read's E elements fill a run of registers along another dim (the
  // longest: a matrix operand's K run).
  SmallVector<unsigned> moved;
  for (unsigned d = 0; d < rank; ++d) {
    SmallVector<unsigned> bits = layout.registerRunBits(d);
    if (d != along && bits.size() >= k && bits.size() > moved.size())
      moved = bits;
  }
  if (moved.size() < k || alignedVec(elems, plan, type.getDimSize(along)) != elems)
    return std::nullopt;
  moved.resize(k);
  SmallVector<LinearLayout::Basis> registers(layout.registerBases()), loadingLanes(lanes);
  for (unsigned i = 0; i < k; ++i) {
    registers[moved[i]] = lanes[i];
    loadingLanes[4 - k + i] = layout.registerBases()[moved[i]];
  }
  for (unsigned i = 0; i < 4 - k; ++i)
    loadingLanes[i] = lanes[k + i];
  return LdsTransposedRead{LinearLayout(type.getShape(), registers, loadingLanes,
                                        SmallVector<LinearLayout::Basis>(layout.waveBases())),
                           moved, elems};
}

namespace {
// What the LDS cost model reads of a tile's accesses, the same under every
// candidate plan: per access (a run of `vec` registers along `dim`) and
// lane of wave 0, the first element's coordinates. planLdsStaging prices
// some hundred candidates with one of these per access width (each built
// once: rebuilding them per candidate was most of a matmul's
// tessel-pipeline-loops time).
class LdsAccesses {
public:
  LdsAccesses(RankedTensorType type, unsigned dim, int64_t vec) : shape_(type.getShape()) {
    SmallVector<int64_t> firsts;
    for (ArrayRef<int64_t> run : ldsRuns(type, dim, vec))
      firsts.push_back(run.front());
    init(getLinearLayout(type), ldsElementBytes(type), firsts, vec);
  }
  // Transpose reads: each lane's 8 bytes at the loading layout's runs.
  LdsAccesses(RankedTensorType type, const LdsTransposedRead &read) : shape_(type.getShape()) {
    uint64_t moved = 0;
    for (unsigned bit : read.moved)
      moved |= uint64_t(1) << bit;
    SmallVector<int64_t> firsts;
    for (int64_t r = 0, n = read.loading.numRegisters(); r < n; ++r)
      if (!(uint64_t(r) & moved))
        firsts.push_back(r);
    init(read.loading, ldsElementBytes(type), firsts, read.elems);
  }

  size_t accesses() const { return coords_.size() / size_t(lanes_); }

  LdsCycles cycles(const LdsStaging &plan) const {
    LdsCycles total;
    SmallVector<int64_t, 64> dwords;
    for (size_t first = 0; first < coords_.size(); first += group_) {
      dwords.clear();
      for (size_t access = first; access < first + size_t(group_); ++access) {
        const int64_t offset = plan.offset(coords_[access], shape_) * elemBytes_;
        for (int64_t dword = offset / kBankBytes, end = (offset + bytes_ + kBankBytes - 1) / kBankBytes;
             dword < end; ++dword)
          dwords.push_back(dword);
      }
      // Lanes touching one dword share it (a broadcast); distinct dwords of
      // one bank take a cycle each.
      llvm::sort(dwords);
      std::array<int64_t, kBanks> perBank{};
      int64_t ways = 1;
      for (size_t i = 0; i < dwords.size(); ++i)
        if (i == 0 || dwords[i] != dwords[i - 1])
          ways = std::max(ways, ++perBank[size_t(dwords[i] % kBanks)]);
      total.cycles += ways;
      total.conflictFree += 1;
    }
    return total;
  }

  // Address registers a thread's accesses keep under `plan`: a swizzled
  // access's chunk is its row's chunk XOR its phase, so an access whose
  // chunk differs from the thread's first by another XOR has a base of its
  // own (no immediate offset folds an XOR; the lowering keeps one base per
  // XOR across a loop). The most over wave 0's lanes.
  int64_t addressRegisters(const LdsStaging &plan) const {
    if (!plan.swizzled())
      return 1;
    const unsigned along = plan.order[0], across = plan.order[1];
    auto chunk = [&](ArrayRef<int64_t> c) { return plan.column(c[along], c[across]) / plan.unit; };
    int64_t most = 1;
    SmallVector<int64_t, 32> xors;
    for (int64_t lane = 0; lane < lanes_; ++lane) {
      xors.clear();
      const int64_t first = chunk(coords_[lane]);
      for (size_t access = 0, n = accesses(); access < n; ++access)
        xors.push_back(chunk(coords_[access * lanes_ + lane]) ^ first);
      llvm::sort(xors);
      most = std::max<int64_t>(most, std::unique(xors.begin(), xors.end()) - xors.begin());
    }
    return most;
  }

private:
  void init(const LinearLayout &layout, int64_t elemBytes, ArrayRef<int64_t> firsts, int64_t vec) {
    constexpr int64_t kBytesPerCycle = kBanks * kBankBytes;
    elemBytes_ = elemBytes;
    bytes_ = vec * elemBytes_;
    lanes_ = int64_t(1) << layout.laneBases().size();
    group_ = std::min(lanes_, kBytesPerCycle / std::max(bytes_, kBankBytes));
    // Wave 0 stands for all: another wave's addresses are wave 0's plus one
    // offset, which keeps which lanes share a bank.
    for (int64_t first : firsts)
      for (int64_t lane = 0; lane < lanes_; ++lane)
        coords_.push_back(layout.coords(first, lane, 0));
    // Groups never straddle two accesses: lanes and group are powers of two
    // (tile extents are) and group is at most lanes.
    assert(lanes_ % group_ == 0 && "an LDS cycle's lane group straddles two accesses");
  }

  static constexpr int64_t kBanks = 32, kBankBytes = 4;
  ArrayRef<int64_t> shape_;
  int64_t elemBytes_ = 0, bytes_ = 0, lanes_ = 0, group_ = 0;
  SmallVector<SmallVector<int64_t>> coords_; // access-major: [run * lanes + lane]
};
} // namespace

LdsCycles mlir::tessel::ldsAccessCycles(RankedTensorType type, const LdsStaging &plan, int64_t vec) {
  return LdsAccesses(type, plan.order.front(), vec).cycles(plan);
}

// What an access narrowed below 8 bytes (where the layouts allow wider)
// costs beyond its bank cycles: its issue, its address, and the copies that
// pair 4-byte results into an instruction's 8-byte operand (gfx942's
// 128x128x64 matmul: its B operand read 4 bytes at a time took 24 v_mov an
// iteration). Where the reads are 16 bytes (gfx950's f16 operands) the
// narrower chunks measured cheaper than the bank conflicts they avoid
// (llvm-mca, bench-triton-compare), so only 8-byte reads pay it, and
// 8-bit elements' reads of any width: gfx950's fp8 B operand (16-byte runs)
// read in 4-byte chunks took 12 v_mov and ~8 VGPRs an iteration to pair
// them across tiles, for 354 llvm-mca cycles against 339 with 8-byte reads.
// A WMMA operand (gfx1100) pays below 16 bytes: its 16 K of a lane are two
// 16-byte reads, and narrower pieces are copied into the instruction's
// 8-register operand: the 128x128x64 f16 matmul's B read in 4-byte chunks
// (swizzled so its 8-byte writes miss no bank) took 64 ds_load_2addr_b32
// and 199 VGPRs (6 waves) at 8 waves, against 32 ds_load_b128 and 187 (8
// waves), 634 -> 406 llvm-mca cycles; at 4 waves 55 -> 7 VGPRs spilled,
// 4418 -> 1245 cycles (with gfx1100's 16-bit moves off, target.cpp).
static constexpr int64_t kLdsIssueCycles = 8;

LdsStaging mlir::tessel::planLdsStaging(RankedTensorType src, RankedTensorType dst, LdsPriority priority,
                                        bool transposeReads) {
  LdsStaging plan;
  const unsigned rank = dst.getRank();
  LinearLayout from = getLinearLayout(src), to = getLinearLayout(dst);
  // Fastest: where the destination's runs are longest (then the source's, then the last dim).
  unsigned fastest = rank - 1, sourceFastest = rank - 1;
  int64_t best = 0, bestSource = 0;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t score = (int64_t(1) << to.registerRunBits(d).size()) * 64 + (int64_t(1) << from.registerRunBits(d).size());
    if (score > best || (score == best && d == rank - 1)) {
      best = score;
      fastest = d;
    }
    int64_t sourceScore = int64_t(1) << from.registerRunBits(d).size();
    if (sourceScore > bestSource || (sourceScore == bestSource && d == rank - 1)) {
      bestSource = sourceScore;
      sourceFastest = d;
    }
  }
  auto orderFrom = [&](unsigned first) {
    LdsStaging p;
    p.order.push_back(first);
    for (int d = int(rank) - 1; d >= 0; --d)
      if (unsigned(d) != first)
        p.order.push_back(d);
    p.writeVec = ldsVectorElems(src, first);
    p.readVec = ldsVectorElems(dst, first);
    p.pad = std::max(p.writeVec, p.readVec);
    return p;
  };
  plan = orderFrom(fastest);
  if (rank < 2)
    return plan;
  const int64_t elemBytes = ldsElementBytes(dst);
  auto operand = dyn_cast_or_null<DotOperandLayoutAttr>(dst.getEncoding());
  const int64_t pairedBytes = operand && isa<WmmaLayoutAttr>(operand.getParent()) ? 16 : 8;
  // Candidates: pads up to twice the widest access (a pad that breaks an
  // access's alignment narrows it), and swizzles of chunks of the widest
  // access. Cost: cycles, (for a kept buffer: whether it pads,) then
  // accesses, then the address registers a thread keeps (a kept buffer's,
  // over the loop: the 8-wave fp8 matmul's B, 4 of them for byte writes
  // to rows of 4 phases, 2 for rows of 8, at equal cycles), then a swizzle
  // (an XOR per access).
  using Cost = std::tuple<int64_t, bool, size_t, int64_t, bool>;
  // The accesses at each width a candidate gives them, built once (a
  // std::map: a reference to one stays valid while another is added).
  std::map<std::tuple<unsigned, bool, int64_t>, LdsAccesses> accessesOf;
  auto accessesAt = [&](unsigned dim, bool write, int64_t vec) -> const LdsAccesses & {
    auto it = accessesOf.find({dim, write, vec});
    if (it == accessesOf.end())
      it = accessesOf.try_emplace({dim, write, vec}, write ? src : dst, dim, vec).first;
    return it->second;
  };
  // The best candidate laid out along `base.order[0]`, read as usual or
  // (`transposed`) by transpose reads, with its cost and its accesses.
  auto search = [&](const LdsStaging &base, bool transposed) {
    const unsigned along = base.order.front();
    const int64_t row = dst.getDimSize(along), writeVec = base.writeVec, readVec = base.readVec;
    const int64_t widest = std::max(writeVec, transposed ? int64_t(1) : readVec);
    const size_t fewestAccesses = ldsRuns(src, along, writeVec).size() + ldsRuns(dst, along, readVec).size();
    Cost bestCost{std::numeric_limits<int64_t>::max(), false, 0, 0, false};
    std::optional<LdsStaging> chosen;
    std::optional<LdsAccesses> transposedReads; // the loading layout is the candidates' alike
    auto consider = [&](LdsStaging candidate) {
      candidate.writeVec = alignedVec(writeVec, candidate, row);
      candidate.readVec = alignedVec(readVec, candidate, row);
      const LdsAccesses &writes = accessesAt(along, true, candidate.writeVec);
      const LdsAccesses *reads = nullptr;
      if (transposed) {
        std::optional<LdsTransposedRead> read = ldsTransposedRead(dst, candidate);
        if (!read)
          return;
        candidate.transposedRead = true;
        candidate.readVec = read->elems;
        if (!transposedReads)
          transposedReads.emplace(dst, *read);
        reads = &*transposedReads;
      } else {
        reads = &accessesAt(along, false, candidate.readVec);
      }
      const size_t accesses = writes.accesses() + reads->accesses();
      auto narrowed = [&](int64_t vec, int64_t natural) { return vec < natural && vec * elemBytes < pairedBytes; };
      const bool belowPairs = !transposed && (readVec * elemBytes <= pairedBytes || elemBytes == 1) &&
                              (narrowed(candidate.writeVec, writeVec) || narrowed(candidate.readVec, readVec));
      Cost cost{writes.cycles(candidate).cycles + reads->cycles(candidate).cycles +
                    (belowPairs ? kLdsIssueCycles * int64_t(accesses - fewestAccesses) : 0),
                priority == LdsPriority::Bytes && candidate.pad > 0, accesses,
                priority == LdsPriority::Bytes ? writes.addressRegisters(candidate) + reads->addressRegisters(candidate)
                                               : 0,
                candidate.swizzled()};
      if (cost < bestCost) {
        bestCost = cost;
        chosen = candidate;
      }
    };
    for (int64_t pad = 0; pad <= 2 * widest; pad = pad ? pad * 2 : 1) {
      LdsStaging candidate = base;
      candidate.pad = pad;
      consider(candidate);
    }
    // A kept buffer also tries narrower chunks: more phases fit in a row, an
    // access may narrow; but not below 16-byte reads of 8-bit elements
    // (gfx950's f8f6f4 operands): 8-byte pieces of two tiles come back paired
    // (ds_read2) and are copied into each instruction's 8-register operand,
    // copies and registers the bank model does not see (the 128x128x64 fp8
    // matmul at 8 waves, with 8-bit carries packed: 88 -> 78 VGPRs, 4 -> 6
    // waves, 151 -> 139 llvm-mca cycles; at 4 waves 138 -> 146 VGPRs, still 3
    // waves, 167 -> 173 cycles). Transpose reads take 8 bytes whatever the
    // chunk.
    const int64_t narrowest = priority != LdsPriority::Bytes ? widest
                              : transposed                    ? std::min(widest, 8 / elemBytes)
                              : elemBytes == 1 && readVec * elemBytes >= 16 ? readVec
                                                                           : 1;
    // Transpose reads take a group of 16 lanes' rows (of 8 bytes) side by
    // side: chunks wider than the writes move a row's reads past the others'
    // banks (16-bit elements: 4 rows of 32 bytes a group, which chunks of 8
    // or 16 bytes XOR within the same 32 bytes).
    const int64_t widestUnit = transposed ? std::max(widest, std::min(row / 2, 64 / elemBytes)) : widest;
    for (int64_t unit = widestUnit; unit >= narrowest; unit /= 2)
      for (int64_t perPhase = 1; perPhase <= 8; perPhase *= 2)
        for (int64_t maxPhase = 2; unit * maxPhase <= row && maxPhase <= 32; maxPhase *= 2) {
          LdsStaging candidate = base;
          candidate.pad = 0;
          candidate.unit = unit;
          candidate.perPhase = perPhase;
          candidate.maxPhase = maxPhase;
          consider(candidate);
        }
    return std::make_pair(chosen, bestCost);
  };
  auto [usual, usualCost] = search(plan, false);
  if (usual)
    plan = *usual;
  // Kept along the source's fastest dim and read transposed: taken when its
  // cycles and its accesses' issue together cost less (fp8 B [K, N] kept
  // along K is written a byte at a time: 64 one-byte stores a thread for a
  // 128 x 128 tile over 256 threads, against 4 of 16 bytes and 8 reads).
  if (transposeReads && sourceFastest != fastest) {
    auto [transposed, transposedCost] = search(orderFrom(sourceFastest), true);
    auto total = [](const Cost &c) { return std::get<0>(c) + kLdsIssueCycles * int64_t(std::get<2>(c)); };
    if (transposed && (!usual || total(transposedCost) < total(usualCost)))
      plan = *transposed;
  }
  return plan;
}

int64_t mlir::tessel::ldsVectorElems(RankedTensorType type, unsigned dim) {
  Type elem = type.getElementType();
  int64_t most = (isa<PtrType>(elem) || elem.isInteger(1)) ? 1 : std::max<int64_t>(1, 16 / ldsElementBytes(type));
  int64_t run = int64_t(1) << getLinearLayout(type).registerRunBits(dim).size();
  const int64_t vec = std::min({most, type.getDimSize(dim), run});
  // Two 8-bit elements are two registers (an i8 each) that a 2-byte access
  // packs or unpacks with 2-4 VALU instructions; a byte at a time costs one
  // more LDS instruction instead (gfx950's fp8 B operand, two K rows a thread
  // written along K: 149 -> 117 VALU, 339 -> 267 llvm-mca cycles an iteration).
  return ldsElementBytes(type) == 1 && vec == 2 ? 1 : vec;
}

int64_t mlir::tessel::ldsScratchBytes(Operation *op) {
  if (auto scratch = dyn_cast<LdsScratchOpInterface>(op))
    return scratch.getLdsScratchBytes();
  return 0;
}

int64_t mlir::tessel::ldsOffset(Operation *op) {
  if (IntegerAttr offset = tesselDialect(op->getContext()).getLdsOffsetAttrHelper().getAttr(op))
    return offset.getInt();
  return 0;
}

LogicalResult mlir::tessel::verifyLayoutsFit(Operation *root, unsigned waveSize, unsigned numWarps) {
  WalkResult result = root->walk([&](Operation *op) -> WalkResult {
    for (Value v : op->getResults()) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || !isa_and_nonnull<DistributedLayoutAttr>(t.getEncoding()))
        continue;
      LinearLayout layout = getLinearLayout(t);
      int64_t lanes = int64_t(1) << layout.laneBases().size();
      int64_t waves = int64_t(1) << layout.waveBases().size();
      if (lanes != waveSize || waves != numWarps) {
        op->emitError() << "this tile's layout spreads it over " << lanes << " lanes and " << waves
                        << " waves, but the kernel runs " << numWarps << " waves of " << waveSize
                        << " lanes";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
