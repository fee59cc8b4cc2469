// tessel-pipeline-loops' loads straight into LDS (gfx950): which staged
// loads can go and where they keep the waves, and how a load to LDS is built
// from a load's offsets (PipelineLoops.cpp schedules and expands the loops).
#pragma once

#include "tessel/Dialect/Tessel/IR/Dialect.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <utility>

namespace mlir::tessel::pipeline {

// Whether `v` is a value `loop` carries (an argument of its body but the
// induction variable).
bool isCarried(scf::ForOp loop, Value v);
// The body's own op that defines `v`, or null.
Operation *bodyDef(scf::ForOp loop, Value v);
// Whether `v` changes from one iteration of `loop` to the next.
bool variesIn(scf::ForOp loop, Value v);

// Whether staged `load` can write its slots of `type` straight from global
// memory, `directBytes` a lane.
bool loadsToLds(Operation *load, LdsType type, unsigned directBytes);
// Whether `load`, straight into a slot of `type`, would move offsets between
// lanes every iteration for more than one group of a thread's registers.
bool shufflesEachIteration(scf::ForOp loop, Operation *load, LdsType type);
// What `module` asks of loads to LDS: 1 always (tessel.direct_to_lds,
// TESSEL_DIRECT_TO_LDS=1), 0 never (tessel.no_direct_to_lds), -1 where they
// keep the waves (slotsKeepWaves).
int directToLdsMode(ModuleOp module);
// Whether slots of `bytes` (all of a loop's) keep the waves loads to LDS
// need by default, `numWarps` a workgroup on `facts`.
bool slotsKeepWaves(int64_t bytes, int64_t numWarps, const ::tessel::TargetFacts &facts);

// `v` as x + splat(s) with s an i32 scalar, x built at `b`; no shift: (v, null).
std::pair<Value, Value> splitShift(OpBuilder &b, Value v);
// `load` (its operands mapped by `map`) writing slot `slot` of `buffer`
// straight from global memory, masked by `mask` (the load's own when null);
// its offsets' shift taken out at `outside` (at `b` when null).
void toLds(OpBuilder &b, BufferLoadOp load, IRMapping &map, Value buffer, Value slot, Value mask = {},
           OpBuilder *outside = nullptr);

} // namespace mlir::tessel::pipeline
