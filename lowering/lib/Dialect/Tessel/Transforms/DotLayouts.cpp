// The layouts of a tessel.dot (see DotLayouts.h).
#include "DotLayouts.h"

#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/lowering/target.hpp"

#include <optional>

using namespace mlir;
using namespace mlir::tessel;
using ::tessel::DType;
using ::tessel::lookupTarget;
using ::tessel::MatrixCore;
using ::tessel::MatrixInstr;
using ::tessel::TargetFacts;

FailureOr<DotLayouts> mlir::tessel::chooseDotLayouts(DotOp dot, const std::string &arch, unsigned numWarps,
                                                     unsigned waveSize) {
  auto a = cast<RankedTensorType>(dot.getA().getType()), c = cast<RankedTensorType>(dot.getC().getType());
  const int64_t rank = c.getRank(); // a batch dim, if any, comes first
  const int64_t M = c.getDimSize(rank - 2), N = c.getDimSize(rank - 1), K = a.getDimSize(rank - 1);
  const TargetFacts *target = lookupTarget(arch);
  std::optional<DType> in = dtypeOf(a.getElementType()), acc = dtypeOf(c.getElementType());
  const MatrixInstr *chosen = nullptr;
  std::vector<MatrixInstr> candidates;
  if (target && in && acc)
    candidates = target->matrixInstrsFor(*in, *acc);
  for (const MatrixInstr &i : candidates)
    if (i.m <= M && i.n <= N && K % i.k == 0) {
      chosen = &i;
      break;
    }
  MLIRContext *ctx = dot.getContext();
  if (!chosen) {
    // No matrix instruction takes it: multiply-adds on a blocked
    // accumulator, each thread holding whole rows of A and columns of B.
    SmallVector<int64_t> shape(c.getShape());
    SmallVector<unsigned> order;
    for (int64_t d = rank - 1; d >= 0; --d)
      order.push_back(unsigned(d));
    return DotLayouts{makeBlockedLayout(ctx, shape, order, 1, numWarps, waveSize), unsigned(K)};
  }
  // Waves split M and N, the longer first, while there are instruction
  // tiles to share; any left over replicate.
  unsigned wM = 1, wN = 1;
  for (unsigned left = numWarps; left > 1; left /= 2) {
    int64_t tilesM = M / (int64_t(chosen->m) * wM), tilesN = N / (int64_t(chosen->n) * wN);
    if (tilesM >= tilesN && tilesM > 1)
      wM *= 2;
    else if (tilesN > 1)
      wN *= 2;
    else
      wM *= 2;
  }
  DistributedLayoutAttr mfma;
  unsigned kWidth;
  if (chosen->kind == MatrixCore::Wmma) { // wave32: a lane holds all 16 K of its row
    mfma = WmmaLayoutAttr::get(ctx, {wM, wN});
    kWidth = chosen->k;
  } else {
    mfma = MfmaLayoutAttr::get(ctx, {chosen->m, chosen->n}, {wM, wN});
    kWidth = chosen->k / (64 / chosen->m);
  }
  return DotLayouts{mfma, kWidth};
}
