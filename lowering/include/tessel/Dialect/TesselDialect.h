// The tessel dialect: types, layout attributes and ops (see TesselOps.td).
#pragma once

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessel/Dialect/TesselDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/TesselTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/TesselAttrs.h.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/TesselOps.h.inc"

namespace mlir::tessel {
// Element type of a tile or the type itself for scalars.
Type elementTypeOf(Type t);
// Pointee of a pointer or a tile of pointers.
Type pointeeOf(Type t);
} // namespace mlir::tessel
