// The layouts' linear forms and the queries built on them.
#include "tessel/Dialect/Tessel/IR/Layouts.h"

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

LinearLayout mlir::tessel::getLinearLayout(RankedTensorType type) {
  return cast<DistributedLayoutAttr>(type.getEncoding()).toLinearLayout(type.getShape());
}

int64_t mlir::tessel::registersPerThread(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return getLinearLayout(tile).numRegisters();
  return 1;
}

BlockedLayoutAttr mlir::tessel::makeBlockedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                                  ArrayRef<unsigned> order, unsigned vec,
                                                  unsigned numWarps, unsigned waveSize) {
  unsigned rank = shape.size();
  SmallVector<unsigned> spt(rank, 1), tpw(rank, 1), wpb(rank, 1);
  spt[order[0]] = std::max<int64_t>(1, std::min<int64_t>(vec, shape[order[0]]));
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

bool mlir::tessel::isRegisterRenaming(ConvertLayoutOp convert) {
  auto src = cast<RankedTensorType>(convert.getSrc().getType());
  auto dst = convert.getType();
  return src.getEncoding() == dst.getEncoding() || src.getNumElements() == 1 ||
         getLinearLayout(src) == getLinearLayout(dst);
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
