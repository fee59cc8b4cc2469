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

#include "tessel/Dialect/Tessel/IR/TesselAttrInterfaces.h.inc"
#include "tessel/Dialect/Tessel/IR/TesselOpInterfaces.h.inc"

namespace mlir::tessel {
// How a layout conversion stages a tile in LDS. Elements sit in rows along
// order[0] (the dimension the destination layout holds the longest register
// runs along, so its reads are vectors), the other dimensions in `order`
// numbering the rows; each row is followed by `pad` unused elements, so
// that the rows of a transposed access fall in different banks. The offset
// is linear in the coordinates (a thread's base plus a constant per
// register). `writeVec`/`readVec` elements move per LDS access (runs of
// consecutive registers along order[0], at most 16 bytes); pad is a multiple
// of both, so vectors stay aligned.
struct LdsStaging {
  SmallVector<unsigned> order;
  int64_t writeVec = 1, readVec = 1, pad = 1;
  // The element stride of each dimension of `shape`.
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

// How a kernel module is launched, from its typed module attributes.
struct KernelConfig {
  unsigned numWarps = 0;
  unsigned waveSize = 0;
};
// Fails with an error naming `pass` when the module lacks them.
FailureOr<KernelConfig> getKernelConfig(ModuleOp module, StringRef pass);
// The dialect's typed attribute helpers (TesselDialect::get...AttrHelper()).
TesselDialect &tesselDialect(MLIRContext *ctx);

} // namespace mlir::tessel
