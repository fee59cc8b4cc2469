//===- TesselLayoutRules.td - how ops constrain layouts ----*- tablegen -*-===//
#ifndef TESSEL_LAYOUT_RULES
#define TESSEL_LAYOUT_RULES

include "mlir/IR/OpBase.td"

def Tessel_LayoutRulesOpInterface : OpInterface<"LayoutRulesOpInterface"> {
  let cppNamespace = "::mlir::tessel";
  let description = [{
    How an op constrains the layouts of its tile operands and results, told
    to layout assignment (tessel-assign-layouts) as facts through a
    `LayoutConstraints`: which tiles share one layout, which is a slice or a
    permutation of another's, which memory access anchors a layout, which
    tiles a matrix instruction or a scan fixes. An op without the interface
    keeps all its tiles in one layout (elementwise ops). The tessel ops
    implement it as external models (LayoutRules.cpp), so the rules live
    beside the ops without every user of the op classes seeing them.
  }];
  let methods = [
    InterfaceMethod<[{Tells `constraints` what the op asks of its tiles' layouts.}],
      "void", "addLayoutConstraints", (ins "::mlir::tessel::LayoutConstraints &":$constraints)>,
  ];
}

#endif // TESSEL_LAYOUT_RULES
