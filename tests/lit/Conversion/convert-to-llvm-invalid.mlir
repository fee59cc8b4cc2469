// RUN: tessel-opt %s --tessel-assign-layouts --tessel-convert-to-llvm -split-input-file -verify-diagnostics

module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  // expected-error@below {{kernel arguments must be scalars or pointers, not tiles}}
  func.func @tile_arg(%x: tensor<64xf32>) {
    return
  }
}

