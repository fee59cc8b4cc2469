// LdsScratchOpInterface for the ops that exchange data between threads: how
// many bytes each needs is a question of its tiles' layouts.
#include "tessel/Dialect/Tessel/IR/LayoutConversion.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {
int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// A tile staged whole, one padded slot per element.
int64_t tileBytes(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return ldsPaddedSlots(t.getNumElements()) * ldsElementBytes(t);
}

// A reduce or scan whose axis spans several waves exchanges one value per
// line and wave, per operand (each operand's section 8-byte aligned).
int64_t perWaveBytes(ValueRange srcs, unsigned axis) {
  auto type = cast<RankedTensorType>(srcs[0].getType());
  int64_t waves = getLinearLayout(type).distinctWaves(axis);
  if (waves == 1)
    return 0;
  int64_t lines = type.getNumElements() / type.getDimSize(axis);
  int64_t bytes = 0;
  for (Value s : srcs)
    bytes = alignTo(bytes, 8) + waves * lines * ldsElementBytes(s.getType());
  return bytes;
}
} // namespace

int64_t ReduceOp::getLdsScratchBytes() { return perWaveBytes(getSrcs(), getAxis()); }
std::string ReduceOp::describeLdsUse() { return "a reduction across waves"; }

int64_t ScanOp::getLdsScratchBytes() { return perWaveBytes(getSrcs(), getAxis()); }
std::string ScanOp::describeLdsUse() { return "a scan across waves"; }

int64_t ConvertLayoutOp::getLdsScratchBytes() {
  if (conversionPath(*this) != ConversionPath::Lds)
    return 0;
  auto src = cast<RankedTensorType>(getSrc().getType());
  return planLdsStaging(src, getType()).slots(getType().getShape()) * ldsElementBytes(src);
}
std::string ConvertLayoutOp::describeLdsUse() { return "a layout conversion"; }

int64_t ReshapeOp::getLdsScratchBytes() { return tileBytes(getSrc()); }
std::string ReshapeOp::describeLdsUse() { return "moving a tile between shapes ('tessel.reshape')"; }

int64_t PermuteOp::getLdsScratchBytes() {
  return conversionPath(*this) != ConversionPath::Lds ? 0 : tileBytes(getSrc());
}
std::string PermuteOp::describeLdsUse() { return "moving a tile between shapes ('tessel.permute')"; }

int64_t JoinOp::getLdsScratchBytes() { return tileBytes(getResult()); }
std::string JoinOp::describeLdsUse() { return "moving a tile between shapes ('tessel.join')"; }

int64_t SplitOp::getLdsScratchBytes() { return tileBytes(getSrc()); }
std::string SplitOp::describeLdsUse() { return "moving a tile between shapes ('tessel.split')"; }

int64_t LocalAllocOp::getLdsScratchBytes() { return getType().getSlots() * getType().slotBytes(); }
std::string LocalAllocOp::describeLdsUse() {
  int64_t slots = getType().getSlots();
  return "a tile kept in LDS across loop iterations (" + std::to_string(slots) + (slots > 1 ? " slots" : " slot") +
         "; a smaller num_stages keeps fewer)";
}

namespace {
// An atomic's old values reach the threads that hold copies of an element
// (a replicated layout, or a scalar every thread holds) through LDS: the
// thread that did the atomic writes them, every copy reads them.
int64_t atomicResultBytes(Value result) {
  if (result.use_empty())
    return 0;
  auto t = dyn_cast<RankedTensorType>(result.getType());
  if (!t)
    return 8; // a scalar: one slot
  if (!t.getEncoding())
    return 0; // before layouts
  LinearLayout layout = getLinearLayout(t);
  if (!layout.laneReplicaMask() && !layout.waveReplicaMask())
    return 0;
  return tileBytes(result);
}
} // namespace

int64_t AtomicRMWOp::getLdsScratchBytes() { return atomicResultBytes(getResult()); }
std::string AtomicRMWOp::describeLdsUse() { return "an atomic's old values, shared with the threads holding copies"; }

int64_t AtomicCASOp::getLdsScratchBytes() { return atomicResultBytes(getResult()); }
std::string AtomicCASOp::describeLdsUse() { return "an atomic's old values, shared with the threads holding copies"; }

// A sort whose axis spans several waves exchanges through LDS, one operand
// at a time (and the index it sorts stably by).
int64_t SortOp::getLdsScratchBytes() {
  auto type = cast<RankedTensorType>(getSrcs()[0].getType());
  if (!type.getEncoding() || getLinearLayout(type).waveBitsAlong(getAxis()).empty())
    return 0;
  int64_t bytes = getStable() ? ldsPaddedSlots(type.getNumElements()) * 4 : 0;
  for (Value s : getSrcs())
    bytes = std::max(bytes, tileBytes(s));
  return bytes;
}
std::string SortOp::describeLdsUse() { return "a sort across waves"; }

int64_t GatherOp::getLdsScratchBytes() { return tileBytes(getSrc()); }
std::string GatherOp::describeLdsUse() { return "a gather within a tile ('tessel.gather')"; }

int64_t HistogramOp::getLdsScratchBytes() { return getType().getNumElements() * 4; }
std::string HistogramOp::describeLdsUse() { return "the bins of a histogram"; }
