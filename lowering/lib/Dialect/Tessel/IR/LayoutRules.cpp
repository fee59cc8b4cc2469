// The layout rules of the tessel ops (LayoutRulesOpInterface), attached as
// external models: what each op asks of its tiles' layouts. Layout
// assignment (tessel-assign-layouts) solves them.
#include "tessel/Dialect/Tessel/IR/LayoutRules.h"

#include "tessel/Dialect/Tessel/IR/TesselLayoutRules.cpp.inc"

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isTile(Value v) { return isa<RankedTensorType>(v.getType()); }

// The operand is the result without `axis`.
void rulesOf(ExpandDimsOp op, LayoutConstraints &c) { c.sliceOf(op.getSrc(), op.getResult(), op.getAxis()); }

// The operands share a layout; each tile result is the first operand's
// without `axis`.
void rulesOf(ReduceOp op, LayoutConstraints &c) {
  for (Value src : op.getSrcs())
    c.same(op.getSrcs()[0], src);
  for (Value res : op.getResults())
    if (isTile(res))
      c.sliceOf(res, op.getSrcs()[0], op.getAxis());
}

void rulesOf(ScanOp op, LayoutConstraints &c) {
  c.sameAll(op);
  c.scanAlong(op.getAxis());
}

// No data moves when the result takes the operand's layout permuted; when
// not, the permute moves through LDS.
void rulesOf(PermuteOp op, LayoutConstraints &c) { c.permuteOf(op.getResult(), op.getSrc(), op.getOrder()); }

// The accumulator's slot alone: the same tile may also be an operand.
void rulesOf(DotOp op, LayoutConstraints &c) {
  c.same(op.getResult(), op.getCMutable());
  c.matrixProduct(op);
}

// The source is counted through LDS; its mask is read beside it.
void rulesOf(HistogramOp op, LayoutConstraints &c) {
  if (op.getMask())
    c.same(op.getSrc(), op.getMask());
}

// The source is read through LDS; each thread reads for the indices it holds.
void rulesOf(GatherOp op, LayoutConstraints &c) { c.same(op.getResult(), op.getIndicesMutable()); }

// Ops that move their data through LDS: operands and results are free.
void rulesOf(ConvertLayoutOp, LayoutConstraints &) {}
void rulesOf(ReshapeOp, LayoutConstraints &) {}
void rulesOf(JoinOp, LayoutConstraints &) {}
void rulesOf(SplitOp, LayoutConstraints &) {}
// Each thread prints or checks the elements it owns, in any layout.
void rulesOf(PrintOp, LayoutConstraints &) {}
void rulesOf(DeviceAssertOp, LayoutConstraints &) {}

void rulesOf(LoadOp op, LayoutConstraints &c) {
  c.sameAll(op);
  c.access(op.getPtr(), op.getMask());
}
void rulesOf(StoreOp op, LayoutConstraints &c) {
  c.sameAll(op);
  c.access(op.getPtr(), op.getMask());
}
void rulesOf(AtomicRMWOp op, LayoutConstraints &c) {
  c.sameAll(op);
  if (packsPairs(op))
    c.access(op.getPtr(), op.getMask());
}

template <typename OpTy>
struct Rules : LayoutRulesOpInterface::ExternalModel<Rules<OpTy>, OpTy> {
  void addLayoutConstraints(Operation *op, LayoutConstraints &c) const { rulesOf(cast<OpTy>(op), c); }
};

template <typename... OpTys>
void attach(MLIRContext *ctx) {
  (OpTys::template attachInterface<Rules<OpTys>>(*ctx), ...);
}

} // namespace

void LayoutConstraints::sameAll(Operation *op) {
  SmallVector<Value> tiles;
  for (Value v : op->getOperands())
    if (isTile(v))
      tiles.push_back(v);
  const size_t operands = tiles.size();
  for (Value v : op->getResults())
    if (isTile(v))
      tiles.push_back(v);
  // An operand that disagrees gets a converted copy; a result that does,
  // the first tile (its operand, when the op has one).
  for (size_t i = 1; i < tiles.size(); ++i) {
    if (i < operands)
      same(tiles[0], tiles[i]);
    else
      same(tiles[i], tiles[0]);
  }
}

bool mlir::tessel::packsPairs(AtomicRMWOp op) {
  Type elem = pointeeOf(op.getPtr().getType());
  return op.getKind() == AtomicKind::add && (elem.isF16() || elem.isBF16()) &&
         isa<RankedTensorType>(op.getPtr().getType());
}

void mlir::tessel::attachLayoutRules(MLIRContext *ctx) {
  attach<ExpandDimsOp, ReduceOp, ScanOp, PermuteOp, DotOp, HistogramOp, GatherOp, ConvertLayoutOp,
         ReshapeOp, JoinOp, SplitOp, LoadOp, StoreOp, AtomicRMWOp>(ctx);
  attach<PrintOp, DeviceAssertOp>(ctx);
}
