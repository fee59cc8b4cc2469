// Which chunk of an LDS slot each lane's load to LDS writes, and whose offset
// it loads (see DirectLds.h).
#include "tessel/Dialect/Tessel/IR/DirectLds.h"

#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/Dialect/Tessel/IR/LinearLayout.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tessel;

std::optional<DirectLdsPlan> mlir::tessel::planDirectLds(RankedTensorType offsets, LdsType buffer, int64_t vec) {
  LdsStaging staging = buffer.staging();
  ArrayRef<int64_t> shape = buffer.getTileShape();
  if (!offsets.getEncoding() || offsets.getShape() != shape || staging.order.empty())
    return std::nullopt;
  const bool rows = staging.order.size() > 1;
  if (rows && staging.pad != 0)
    return std::nullopt;
  if (staging.swizzled() && staging.unit % vec != 0)
    return std::nullopt;
  LinearLayout layout = getLinearLayout(offsets);
  const int64_t lanes = int64_t(1) << layout.laneBases().size(), waves = int64_t(1) << layout.waveBases().size();
  const int64_t regs = layout.numRegisters();
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  // Every element once, in runs of `vec` registers along the rows.
  if (regs % vec != 0 || regs * lanes * waves != elements || layout.laneReplicaMask() || layout.waveReplicaMask())
    return std::nullopt;
  const unsigned d0 = staging.order.front();
  SmallVector<int64_t> strides = staging.strides(shape);
  auto linear = [&](ArrayRef<int64_t> c) {
    int64_t at = 0;
    for (size_t d = 0; d < c.size(); ++d)
      at += c[d] * strides[d];
    return at;
  };
  struct Holder {
    int64_t reg, lane, wave;
  };
  llvm::DenseMap<int64_t, Holder> holders;
  for (int64_t w = 0; w < waves; ++w)
    for (int64_t l = 0; l < lanes; ++l)
      for (int64_t r = 0; r < regs; ++r)
        if (!holders.try_emplace(linear(layout.coords(r, l, w)), Holder{r, l, w}).second)
          return std::nullopt;
  const int64_t groups = regs / vec;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t i = 0; i < vec; ++i) {
      LinearLayout::Basis first = layout.coords(g * vec, 0, 0), c = layout.coords(g * vec + i, 0, 0);
      first[d0] += i;
      if (c != first)
        return std::nullopt;
    }

  // pos[g][w][l]: the unswizzled slot position of the group's first
  // element; src: the lane holding the element the swizzle puts there.
  DirectLdsPlan plan;
  plan.vec = vec;
  auto position = [&](int64_t g, int64_t l, int64_t w) { return linear(layout.coords(g * vec, l, w)); };
  auto source = [&](int64_t g, int64_t l, int64_t w) -> std::optional<int64_t> {
    LinearLayout::Basis c = layout.coords(g * vec, l, w);
    if (staging.swizzled())
      c[d0] = staging.column(c[d0], c[staging.order[1]]);
    Holder h = holders.lookup(linear(c));
    if (h.reg != g * vec || h.wave != w)
      return std::nullopt;
    return h.lane;
  };
  for (int64_t g = 0; g < groups; ++g) {
    plan.groupStart.push_back(position(g, 0, 0));
    std::optional<int64_t> s = source(g, 0, 0);
    if (!s)
      return std::nullopt;
    plan.groupLane.push_back(*s);
  }
  std::optional<int64_t> s0 = source(0, 0, 0);
  for (int64_t bit = 1; bit < lanes; bit <<= 1) {
    std::optional<int64_t> s = source(0, bit, 0);
    if (!s)
      return std::nullopt;
    plan.laneXor.push_back(*s ^ *s0);
  }
  for (int64_t bit = 1; bit < waves; bit <<= 1) {
    std::optional<int64_t> s = source(0, 0, bit);
    if (!s)
      return std::nullopt;
    plan.waveLaneXor.push_back(*s ^ *s0);
    plan.waveStep.push_back(position(0, 0, bit) - position(0, 0, 0));
  }
  // The model must hold for every lane of every wave and group.
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t w = 0; w < waves; ++w) {
      int64_t start = plan.groupStart[g], lane0 = plan.groupLane[g];
      for (size_t j = 0; j < plan.waveStep.size(); ++j)
        if (w >> j & 1) {
          start += plan.waveStep[j];
          lane0 ^= plan.waveLaneXor[j];
        }
      for (int64_t l = 0; l < lanes; ++l) {
        int64_t want = lane0;
        for (size_t i = 0; i < plan.laneXor.size(); ++i)
          if (l >> i & 1)
            want ^= plan.laneXor[i];
        std::optional<int64_t> s = source(g, l, w);
        if (position(g, l, w) != start + l * vec || !s || *s != want)
          return std::nullopt;
        plan.permutes |= *s != l;
      }
    }
  return plan;
}
