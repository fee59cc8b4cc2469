// RUN: tessel-opt %s --tessel-assign-layouts -verify-diagnostics

// One layout cannot walk two axes in order.
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32} {
  func.func @two_scans(%x: tensor<16x16xf32>) {
    %a = tessel.scan %x {axis = 0 : i32} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      tessel.yield %s : f32
    }
    // expected-error@below {{scanned along two different axes}}
    %b = tessel.scan %x {axis = 1 : i32} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      tessel.yield %s : f32
    }
    %c = arith.addf %a, %b : tensor<16x16xf32>
    return
  }
}
