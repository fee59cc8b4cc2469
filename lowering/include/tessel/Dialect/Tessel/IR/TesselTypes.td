//===- TesselTypes.td - tessel types -----------------------*- tablegen -*-===//
#ifndef TESSEL_TYPES
#define TESSEL_TYPES

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypes.td"

def Tessel_PtrType : TypeDef<Tessel_Dialect, "Ptr"> {
  let mnemonic = "ptr";
  let summary = "pointer to global memory holding elements of one type";
  let parameters = (ins "::mlir::Type":$pointeeType);
  let assemblyFormat = "`<` $pointeeType `>`";
}

def Tessel_Ptr : Type<CPred<"::llvm::isa<::mlir::tessel::PtrType>($_self)">,
                      "tessel pointer", "::mlir::tessel::PtrType">;
def Tessel_PtrTensor : RankedTensorOf<[Tessel_Ptr]>;
def Tessel_PtrLike : AnyTypeOf<[Tessel_Ptr, Tessel_PtrTensor]>;
def Tessel_IntLike : AnyTypeOf<[AnySignlessInteger, RankedTensorOf<[AnySignlessInteger]>]>;
def Tessel_I1Tensor : RankedTensorOf<[I1]>;
def Tessel_BoolLike : AnyTypeOf<[I1, Tessel_I1Tensor]>;
def Tessel_Tile : RankedTensorOf<[AnyType]>;

#endif // TESSEL_TYPES
