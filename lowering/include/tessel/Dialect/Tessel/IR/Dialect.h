// The tessel dialect: types, layouts and their interface, op interfaces and
// ops (see the .td files beside this one).
#pragma once

#include "tessel/Dialect/Tessel/IR/LinearLayout.h"
#include "tessel/core/dtype.hpp"

#include <optional>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h.inc"
#include "tessel/Dialect/Tessel/IR/TesselEnums.h.inc"

#include "tessel/Dialect/Tessel/IR/TesselAttrInterfaces.h.inc"
#include "tessel/Dialect/Tessel/IR/TesselOpInterfaces.h.inc"

namespace mlir::tessel {
// How a tile is staged in LDS. Elements sit in rows along order[0] (for a
// conversion, the dimension the destination layout holds the longest
// register runs along, so its reads are vectors), the other dimensions in
// `order` numbering the rows; each row is followed by `pad` unused
// elements. A swizzle (maxPhase > 1) instead permutes a row's chunks of
// `unit` elements: chunk c of a row r along order[1] goes to chunk
// c ^ ((r / perPhase) % maxPhase), so the rows of a transposed access fall
// in different banks without padding (all three are powers of two, and
// unit * maxPhase fits in a row). Either way the offset is a thread's base
// plus a constant per register (coordinates and the phase are XORs of
// bits). `writeVec`/`readVec` elements move per LDS access, within a chunk
// and aligned by the pad.
struct LdsStaging {
  SmallVector<unsigned> order;
  int64_t writeVec = 1, readVec = 1, pad = 1;
  int64_t unit = 1, perPhase = 1, maxPhase = 1;
  // Reads are LDS transpose reads (ldsTransposedRead), readVec elements a lane.
  bool transposedRead = false;
  bool swizzled() const { return maxPhase > 1 && order.size() > 1; }
  // The element stride of each dimension of `shape` (order[0]'s chunks
  // move under a swizzle; its stride is still 1).
  SmallVector<int64_t> strides(ArrayRef<int64_t> shape) const {
    SmallVector<int64_t> s(shape.size(), 0);
    int64_t stride = 1;
    for (size_t i = 0; i < order.size(); ++i) {
      s[order[i]] = stride;
      stride *= shape[order[i]] + (i == 0 && order.size() > 1 ? pad : 0);
    }
    return s;
  }
  int64_t slots(ArrayRef<int64_t> shape) const {
    int64_t n = 1;
    for (size_t i = 0; i < order.size(); ++i)
      n *= shape[order[i]] + (i == 0 && order.size() > 1 ? pad : 0);
    return n;
  }
  // Where element `column` of row `row` sits in its row.
  int64_t column(int64_t column, int64_t row) const {
    if (!swizzled())
      return column;
    return ((column / unit) ^ ((row / perPhase) % maxPhase)) * unit + column % unit;
  }
  // The element offset of `coords` in a slot of a tile of `shape`.
  int64_t offset(ArrayRef<int64_t> coords, ArrayRef<int64_t> shape) const {
    SmallVector<int64_t> s = strides(shape);
    int64_t off = 0;
    for (size_t d = 0; d < coords.size(); ++d)
      if (d != order.front())
        off += coords[d] * s[d];
    return off + column(coords[order.front()], order.size() > 1 ? coords[order[1]] : 0);
  }
};
} // namespace mlir::tessel

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselAttrs.h.inc"


#define GET_OP_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselOps.h.inc"

namespace mlir::tessel {

// Element type of a tile or the type itself for scalars.
Type elementTypeOf(Type t);
// The DType of a scalar element type tessel's matrix code knows (f16, bf16,
// f32, i8, i32), or nullopt.
std::optional<::tessel::DType> dtypeOf(Type elem);
// Pointee of a pointer or a tile of pointers.
Type pointeeOf(Type t);
// Whether `v` is a kernel argument whose call's Buffer is under 2 GiB
// (tessel.pointer_range <= 31): a valid element's byte offset from it fits
// in 31 bits.
bool isSmallBufferArgument(Value v);

// How a kernel module is launched, from its typed module attributes.
struct KernelConfig {
  unsigned numWarps = 0;
  unsigned waveSize = 0;
};
// Fails with an error naming `pass` when the module lacks them.
FailureOr<KernelConfig> getKernelConfig(ModuleOp module, StringRef pass);
// The dialect's typed attribute helpers (TesselDialect::get...AttrHelper()).
TesselDialect &tesselDialect(MLIRContext *ctx);

// An error meant for the kernel's author (a resource limit, a false
// assumption): a compile shows its text as it is, with the user's line.
// Every other error diagnostic (a verifier, a failed conversion) is a
// compiler bug, and a compile reports it as one without MLIR's text.
InFlightDiagnostic emitUserError(Operation *op);
InFlightDiagnostic emitUserError(Location loc);
bool isUserError(Diagnostic &diagnostic);

} // namespace mlir::tessel
