#include "tessel/Dialect/Layout.h"

using namespace mlir;
using namespace mlir::tessel;

int64_t RegisterLayout::numRegisters() const {
  int64_t n = 1;
  for (const DimDistribution &d : dims)
    n *= d.staticCoord.size();
  return n;
}

SmallVector<int64_t> RegisterLayout::unflatten(int64_t reg) const {
  SmallVector<int64_t> idx(dims.size(), 0);
  for (unsigned d : order) {
    int64_t n = dims[d].staticCoord.size();
    idx[d] = reg % n;
    reg /= n;
  }
  return idx;
}

int64_t RegisterLayout::flatten(ArrayRef<int64_t> idx) const {
  int64_t reg = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    reg = reg * dims[*it].staticCoord.size() + idx[*it];
  return reg;
}

static RegisterLayout blockedRegisters(BlockedLayoutAttr layout, ArrayRef<int64_t> shape) {
  RegisterLayout out;
  out.root = layout;
  out.order.assign(layout.getOrder().begin(), layout.getOrder().end());
  for (unsigned d = 0; d < shape.size(); ++d) {
    DimDistribution dist;
    dist.size = shape[d];
    dist.sourceDim = d;
    if (shape[d] == 1) {
      dist.staticCoord = {0};
    } else {
      int64_t spt = layout.getSizePerThread()[d];
      int64_t tpw = layout.getThreadsPerWave()[d];
      int64_t wpb = layout.getWavesPerBlock()[d];
      int64_t perBlock = spt * tpw * wpb;
      int64_t perThread = std::min<int64_t>(spt, shape[d]);
      int64_t reps = std::max<int64_t>(1, shape[d] / perBlock);
      for (int64_t r = 0; r < reps; ++r)
        for (int64_t e = 0; e < perThread; ++e)
          dist.staticCoord.push_back(r * perBlock + e);
      dist.laneScale = spt;
      dist.waveScale = spt * tpw;
      dist.wraps = perBlock > shape[d];
    }
    out.dims.push_back(std::move(dist));
  }
  return out;
}

RegisterLayout mlir::tessel::getRegisterLayout(RankedTensorType type) {
  Attribute enc = type.getEncoding();
  if (auto blocked = dyn_cast_or_null<BlockedLayoutAttr>(enc))
    return blockedRegisters(blocked, type.getShape());
  auto slice = cast<SliceLayoutAttr>(enc);
  // Rebuild the parent's tile shape with the sliced dim present (size 1
  // registers there are irrelevant: we drop that dim below).
  SmallVector<int64_t> parentShape(type.getShape());
  parentShape.insert(parentShape.begin() + slice.getDim(), 1);
  auto parentType = RankedTensorType::get(parentShape, type.getElementType(), slice.getParent());
  RegisterLayout parent = getRegisterLayout(parentType);
  RegisterLayout out;
  out.root = parent.root;
  for (unsigned d = 0; d < parent.dims.size(); ++d)
    if (d != slice.getDim())
      out.dims.push_back(parent.dims[d]);
  for (unsigned d : parent.order)
    if (d != slice.getDim())
      out.order.push_back(d > slice.getDim() ? d - 1 : d);
  return out;
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
  RegisterLayout layout = getRegisterLayout(type);
  const DimDistribution &d = layout.dims[dim];
  if (d.size == 1 || layout.order.empty() || layout.order[0] != dim)
    return 1;
  // Registers along `dim` come in runs of sizePerThread consecutive coordinates.
  int64_t run = 1;
  for (size_t i = 1; i < d.staticCoord.size() && d.staticCoord[i] == d.staticCoord[i - 1] + 1; ++i)
    ++run;
  return run;
}

int64_t mlir::tessel::distinctLanes(const RegisterLayout &layout, unsigned dim) {
  const DimDistribution &d = layout.dims[dim];
  int64_t spt = layout.root.getSizePerThread()[d.sourceDim];
  int64_t tpw = layout.root.getThreadsPerWave()[d.sourceDim];
  return d.size <= spt ? 1 : std::min(tpw, d.size / spt);
}

int64_t mlir::tessel::distinctWaves(const RegisterLayout &layout, unsigned dim) {
  const DimDistribution &d = layout.dims[dim];
  int64_t spt = layout.root.getSizePerThread()[d.sourceDim];
  int64_t tpw = layout.root.getThreadsPerWave()[d.sourceDim];
  int64_t wpb = layout.root.getWavesPerBlock()[d.sourceDim];
  return d.size <= spt * tpw ? 1 : std::min(wpb, d.size / (spt * tpw));
}

static int64_t strideAlong(BlockedLayoutAttr root, ArrayRef<unsigned> counts, unsigned dim) {
  int64_t stride = 1;
  for (unsigned d : root.getOrder()) {
    if (d == dim)
      return stride;
    stride *= counts[d];
  }
  return stride;
}

int64_t mlir::tessel::laneStride(const RegisterLayout &layout, unsigned dim) {
  return strideAlong(layout.root, layout.root.getThreadsPerWave(), layout.dims[dim].sourceDim);
}

int64_t mlir::tessel::waveStride(const RegisterLayout &layout, unsigned dim) {
  return strideAlong(layout.root, layout.root.getWavesPerBlock(), layout.dims[dim].sourceDim);
}

int64_t mlir::tessel::ldsElementBytes(Type type) {
  Type elem = elementTypeOf(type);
  if (isa<PtrType>(elem))
    return 8; // a global address
  return std::max<unsigned>(1, elem.getIntOrFloatBitWidth() / 8);
}

bool mlir::tessel::isRegisterRenaming(ConvertLayoutOp convert) {
  auto src = cast<RankedTensorType>(convert.getSrc().getType());
  return src.getEncoding() == convert.getType().getEncoding() || src.getNumElements() == 1;
}

static int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

int64_t mlir::tessel::ldsScratchBytes(Operation *op) {
  auto tileBytes = [](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return ldsPaddedSlots(t.getNumElements()) * ldsElementBytes(t);
  };
  // Reduce and scan exchange one value per line and wave when the axis
  // spans several waves.
  auto perWaveBytes = [](ValueRange srcs, int64_t axis) -> int64_t {
    auto type = cast<RankedTensorType>(srcs[0].getType());
    RegisterLayout layout = getRegisterLayout(type);
    int64_t waves = distinctWaves(layout, axis);
    if (waves == 1)
      return 0;
    int64_t lines = type.getNumElements() / type.getDimSize(axis);
    int64_t bytes = 0;
    for (Value s : srcs)
      bytes = alignTo(bytes, 8) + waves * lines * ldsElementBytes(s.getType());
    return bytes;
  };
  if (auto r = dyn_cast<ReduceOp>(op))
    return perWaveBytes(r.getSrcs(), r.getAxis());
  if (auto s = dyn_cast<ScanOp>(op))
    return perWaveBytes(s.getSrcs(), s.getAxis());
  if (auto convert = dyn_cast<ConvertLayoutOp>(op); convert && isRegisterRenaming(convert))
    return 0;
  if (isa<ConvertLayoutOp, ReshapeOp, PermuteOp, SplitOp>(op))
    return tileBytes(op->getOperand(0));
  if (auto j = dyn_cast<JoinOp>(op))
    return tileBytes(j.getResult());
  return 0;
}

LogicalResult mlir::tessel::verifyEveryTileHasLayout(Operation *root) {
  auto check = [](Value v, Location loc) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (t && !isa_and_nonnull<BlockedLayoutAttr, SliceLayoutAttr>(t.getEncoding()))
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
