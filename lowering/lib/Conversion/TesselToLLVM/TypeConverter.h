// Tile types to what one thread holds: a tile in a distributed layout becomes
// its registers (one scalar per element the thread holds, in the layout's
// register order); a tessel pointer becomes a global LLVM pointer.
#pragma once

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"

namespace mlir::tessel {

constexpr unsigned kGlobalAddressSpace = 1;
constexpr unsigned kLdsAddressSpace = 3;
constexpr unsigned kConstantAddressSpace = 4;

class TesselToLLVMTypeConverter : public LLVMTypeConverter {
public:
  explicit TesselToLLVMTypeConverter(MLIRContext *ctx);
  // The per-thread scalar type of a tile's (or a scalar's) elements.
  Type scalarType(Type tileOrScalar) const;
};

} // namespace mlir::tessel
