// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts -verify-diagnostics

// gfx1100's matrix cores (WMMA) are not lowered yet: a clear error.
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100"} {
  func.func @wmma(%x: tensor<32x32xf16>, %y: tensor<32x32xf16>, %p: tensor<32x32x!tessel.ptr<f32>>) {
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    // expected-error@below {{no matrix instruction of gfx1100 takes this dot ('f16' operands, [32, 32, 32]); tessel lowers dot to MFMA (gfx90a, gfx942, gfx950) only so far}}
    %d = tessel.dot %x, %y, %zero : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
    tessel.store %p, %d : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    return
  }
}
