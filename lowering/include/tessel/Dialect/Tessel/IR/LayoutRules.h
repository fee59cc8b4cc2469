// How ops constrain the layouts of their tiles: the facts each op states to
// layout assignment (LayoutRulesOpInterface), and the listener it states
// them to. The rules of the tessel ops are in LayoutRules.cpp; control flow
// (scf) is the assignment's own business, and an op without the interface
// keeps all its tiles in one layout.
#pragma once

#include "tessel/Dialect/Tessel/IR/Dialect.h"

namespace mlir::tessel {

// What layout assignment learns from one op. Values are the op's tile
// operands or results (a value an op reads is that op's view of it: a
// converted copy, when assignment cuts it loose, serves that op alone).
class LayoutConstraints {
public:
  virtual ~LayoutConstraints() = default;

  // `keep` and `cut` take one layout. When they cannot (their tiles
  // disagree on an extent), `cut` gets a converted copy: the op reads one
  // when `cut` is its operand, its users do when `cut` is its result.
  virtual void same(Value keep, Value cut) = 0;
  // The same for one operand slot: where one tile fills several slots of
  // different roles (a dot's A and its accumulator), only this one.
  virtual void same(Value keep, OpOperand &cut) = 0;
  // `child`'s layout is `parent`'s without dimension `axis`: a reduction's
  // result, or what expand_dims widens. When the child is a result and
  // its tiles want another slice, its users read a converted copy; when an
  // operand, the op does.
  virtual void sliceOf(Value child, Value parent, unsigned axis) = 0;
  // `result` has `src`'s elements with its dimension i being src's
  // order[i]: with no access of its own to suit, it takes src's layout
  // permuted, and no data moves.
  virtual void permuteOf(Value result, Value src, ArrayRef<int32_t> order) = 0;
  // The op walks its first operand along `axis` in order: its tiles need
  // one contiguous chunk per thread there, or conversions of their own.
  virtual void scanAlong(unsigned axis) = 0;
  // A global memory access through `ptr` (under `mask`, may be null): its
  // contiguity and alignment anchor the layout of `ptr`'s tiles.
  virtual void access(Value ptr, Value mask) = 0;
  // The op is a tessel.dot: its accumulator and result take the target's
  // matrix-instruction layout, its operands the matching operand layouts.
  virtual void matrixProduct(DotOp dot) = 0;

  // Every tile operand and result of `op` in one layout, the first one's
  // (the rule of an op without the interface).
  void sameAll(Operation *op);
};

// An atomic add of 16-bit floats moves pairs as one packed atomic where its
// pointers allow (the backend's global_atomic_pk_add_{f16,bf16}, or a
// 32-bit compare-and-swap loop where the target has none).
bool packsPairs(AtomicRMWOp op);

// Attaches the tessel ops' rules (TesselDialect::initialize calls it).
void attachLayoutRules(MLIRContext *ctx);

} // namespace mlir::tessel

#include "tessel/Dialect/Tessel/IR/TesselLayoutRules.h.inc"
