// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts -verify-diagnostics

// gfx1100 has no matrix instruction for f32 operands (WMMA takes f16, bf16
// and 8-bit integers): a clear error.
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100"} {
  func.func @wmma_f32(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>, %p: tensor<32x32x!tessel.ptr<f32>>) {
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    // expected-error@below {{no matrix instruction of gfx1100 takes this dot ('f32' operands, [32, 32, 32])}}
    %d = tessel.dot %x, %y, %zero : tensor<32x32xf32> * tensor<32x32xf32> -> tensor<32x32xf32>
    tessel.store %p, %d : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    return
  }
}
