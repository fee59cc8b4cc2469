// RUN: tessel-opt %s --tessel-plan-lds -verify-diagnostics

func.func @no_layout(%y: tensor<16x16xf32>) {
  // expected-error@below {{tile without a layout; run tessel-assign-layouts first}}
  %t = tessel.permute %y {order = array<i32: 1, 0>} : tensor<16x16xf32> -> tensor<16x16xf32>
  return
}
