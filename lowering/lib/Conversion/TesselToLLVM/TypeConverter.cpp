#include "TypeConverter.h"

#include "tessel/Dialect/Tessel/IR/Layouts.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"

using namespace mlir;
using namespace mlir::tessel;

TesselToLLVMTypeConverter::TesselToLLVMTypeConverter(MLIRContext *ctx) : LLVMTypeConverter(ctx) {
  addConversion([ctx](PtrType) -> Type { return LLVM::LLVMPointerType::get(ctx, kGlobalAddressSpace); });
  // An LDS buffer is its byte offset in the module's LDS.
  addConversion([ctx](LdsType) -> Type { return IntegerType::get(ctx, 32); });
  addConversion([this](RankedTensorType tile, SmallVectorImpl<Type> &results)
                    -> std::optional<LogicalResult> {
    if (!isa_and_nonnull<DistributedLayoutAttr>(tile.getEncoding()))
      return failure(); // a tile without a layout has no registers
    Type scalar = scalarType(tile);
    if (!scalar)
      return failure();
    results.append(getLinearLayout(tile).numRegisters(), scalar);
    return success();
  });
}

Type TesselToLLVMTypeConverter::scalarType(Type t) const {
  Type elem = elementTypeOf(t);
  if (isa<PtrType>(elem))
    return LLVM::LLVMPointerType::get(&getContext(), kGlobalAddressSpace);
  return convertType(elem);
}
