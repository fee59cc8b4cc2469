// Solves the layout constraints the ops of a function state
// (LayoutRulesOpInterface, plus control flow): groups the tiles that take
// one layout, records what decides each group's layout (slices,
// permutations, scans, dots' matrix layouts, memory accesses), and inserts
// the tessel.convert_layout ops where constraints cannot all hold. Used by
// tessel-assign-layouts, which then picks each group's layout.
#pragma once

#include "tessel/Dialect/Tessel/IR/LayoutRules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tessel {

// Tiles that take one layout, and what decides it.
struct LayoutGroup {
  SmallVector<int64_t> shape; // the extent of each dim (members agree or are 1)
  struct Anchor {
    unsigned dim;
    int64_t vec;
  };
  SmallVector<Anchor> anchors; // the memory accesses' wishes (the pass fills them)
  // The layout is a slice of another group's: (axis, that group).
  std::optional<std::pair<unsigned, unsigned>> sliceOf;
  std::optional<unsigned> scanAxis; // a scan walks this dim: one chunk per thread
  // A tessel.permute's result: with no access of its own to suit, it takes
  // its source's layout permuted (no data moves): (order, the source's group).
  std::optional<std::pair<ArrayRef<int32_t>, unsigned>> permuteOf;
  Attribute fixed; // a matrix-core layout a dot gives the group
  // The group goes (through LDS) into a dot operand, which reads runs of
  // `second` elements along dim `first` (K): holding such runs too, a thread
  // writes them to LDS as vectors even when its loads run along another dim.
  std::optional<std::pair<unsigned, int64_t>> operandRun;
  Attribute layout;      // the pass's choice
  bool resolving = false; // the pass's cycle guard
};

struct LayoutGroups {
  std::vector<LayoutGroup> groups;
  llvm::DenseMap<Value, unsigned> groupOf; // every tile of the function
  // The memory accesses that anchor layouts, in program order: (ptr, mask).
  SmallVector<std::pair<Value, Value>> accesses;
  unsigned of(Value v) const { return groupOf.lookup(v); }
};

// Inserts the conversions the constraints of `func` need and returns its
// layout groups. Fails (with an error) only on a compiler bug.
FailureOr<LayoutGroups> solveLayoutConstraints(func::FuncOp func, const std::string &arch, unsigned numWarps,
                                               unsigned waveSize);

} // namespace mlir::tessel
