//===- TesselInterfaces.td - op interfaces ------------------*- tablegen -*-===//
#ifndef TESSEL_INTERFACES
#define TESSEL_INTERFACES

include "mlir/IR/OpBase.td"

def Tessel_LdsScratchOpInterface : OpInterface<"LdsScratchOpInterface"> {
  let cppNamespace = "::mlir::tessel";
  let description = [{
    An op that exchanges data between the threads of a workgroup through
    workgroup memory (LDS) while it runs. The LDS plan gives each such op an
    offset (`tessel.lds_offset`); the op's LDS is free again once it ends
    (it ends with a barrier).
  }];
  let methods = [
    InterfaceMethod<[{
      Bytes of LDS the op needs with its operands' and results' layouts; 0
      when it needs none (a conversion that only renames registers, a
      reduction within one wave).
    }], "int64_t", "getLdsScratchBytes">,
    InterfaceMethod<[{What the bytes are for, in a diagnostic ("a layout conversion").}],
      "std::string", "describeLdsUse">,
  ];
}

#endif // TESSEL_INTERFACES
