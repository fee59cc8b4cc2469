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

def Tessel_LdsType : TypeDef<Tessel_Dialect, "Lds"> {
  let mnemonic = "lds";
  let summary = "a buffer in LDS (workgroup memory) of `slots` tiles";
  let description = [{
    `!tessel.lds<2x128x64xf16, order [1, 0], pad 8>`: two slots, each a
    128x64 f16 tile. In a slot, elements are consecutive along `order[0]`
    (the other dimensions follow in `order`) and each row along order[0] is
    followed by `pad` unused elements, so that the rows of a transposed
    access fall in different banks. `..., pad 0, swizzle [8, 1, 8]` instead
    XORs a row's chunks of 8 elements with the row's phase (row / 1) % 8
    (LdsStaging). Where the buffer sits in LDS is the LDS plan's.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType,
                        ArrayRefParameter<"unsigned">:$order, "int64_t":$pad,
                        ArrayRefParameter<"int64_t">:$swizzle);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getSlots() const { return getShape().front(); }
    ::llvm::ArrayRef<int64_t> getTileShape() const { return getShape().drop_front(); }
    // A slot's staging, as layout conversions describe theirs.
    LdsStaging staging() const;
    // Bytes of one slot (a multiple of 16).
    int64_t slotBytes() const;
  }];
}
def Tessel_Lds : Type<CPred<"::llvm::isa<::mlir::tessel::LdsType>($_self)">,
                      "LDS buffer", "::mlir::tessel::LdsType">;

def Tessel_Ptr : Type<CPred<"::llvm::isa<::mlir::tessel::PtrType>($_self)">,
                      "tessel pointer", "::mlir::tessel::PtrType">;
def Tessel_PtrTensor : RankedTensorOf<[Tessel_Ptr]>;
def Tessel_PtrLike : AnyTypeOf<[Tessel_Ptr, Tessel_PtrTensor]>;
def Tessel_IntLike : AnyTypeOf<[AnySignlessInteger, RankedTensorOf<[AnySignlessInteger]>]>;
def Tessel_I1Tensor : RankedTensorOf<[I1]>;
def Tessel_BoolLike : AnyTypeOf<[I1, Tessel_I1Tensor]>;
def Tessel_Tile : RankedTensorOf<[AnyType]>;

#endif // TESSEL_TYPES
