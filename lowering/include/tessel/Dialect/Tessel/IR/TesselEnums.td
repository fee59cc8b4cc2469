//===- TesselEnums.td - tessel enums ------------------------*- tablegen -*-===//
#ifndef TESSEL_ENUMS
#define TESSEL_ENUMS

include "mlir/IR/EnumAttr.td"

// What an atomic read-modify-write does to the memory value m with v.
// umax/umin compare integers as unsigned (tessel has no unsigned element
// types); and/or/xor/umax/umin take integers only.
def Tessel_AtomicKind : I32EnumAttr<"AtomicKind", "atomic read-modify-write operation", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"max", 1>, I32EnumAttrCase<"min", 2>,
    I32EnumAttrCase<"umax", 3>, I32EnumAttrCase<"umin", 4>, I32EnumAttrCase<"and_", 5, "and">,
    I32EnumAttrCase<"or_", 6, "or">, I32EnumAttrCase<"xor_", 7, "xor">, I32EnumAttrCase<"xchg", 8>]> {
  let cppNamespace = "::mlir::tessel";
}

// The memory ordering of an atomic, as Triton's `sem`.
def Tessel_MemSem : I32EnumAttr<"MemSem", "memory ordering of an atomic", [
    I32EnumAttrCase<"relaxed", 0>, I32EnumAttrCase<"acquire", 1>, I32EnumAttrCase<"release", 2>,
    I32EnumAttrCase<"acq_rel", 3>]> {
  let cppNamespace = "::mlir::tessel";
}

// Which threads the ordering is with, as Triton's `scope` (AMDGPU sync scopes).
def Tessel_MemScope : I32EnumAttr<"MemScope", "synchronization scope of an atomic", [
    I32EnumAttrCase<"wavefront", 0>, I32EnumAttrCase<"workgroup", 1>, I32EnumAttrCase<"agent", 2>,
    I32EnumAttrCase<"system", 3>]> {
  let cppNamespace = "::mlir::tessel";
}

#endif // TESSEL_ENUMS
