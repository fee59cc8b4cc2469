// Performance remarks (CompiledKernel::remarks; TESSEL_REMARKS=1 prints
// them): what in a kernel costs speed, at the user's line, with what to
// change. Collected from the tile IR after tessel-plan-lds (layouts, `vec`
// and LDS offsets are final there) and from the code object's metadata.
#pragma once

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/Dialect/Tessel/IR/SourceLine.h"
#include "tessel/lowering/target.hpp"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

#include <vector>

namespace tessel {

using mlir::tessel::fileLineOf; // the first file:line a location names

// Narrow global accesses and why, conversions through LDS in loops, loads
// feeding a dot a loop does not fetch ahead (num_stages >= 2).
std::vector<Remark> collectTileRemarks(mlir::ModuleOp module);

// Spills and occupancy of the kernel, at `file`:`line` (the kernel's first).
void addCodeObjectRemarks(std::vector<Remark> &remarks, const TargetFacts &target,
                          const KernelResources &resources, unsigned blockSize, unsigned ldsBytes,
                          const std::string &file, unsigned line);

// Source order (file, line), kinds in their enum's order on one line.
void sortRemarks(std::vector<Remark> &remarks);

} // namespace tessel
