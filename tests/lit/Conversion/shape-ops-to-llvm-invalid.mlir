// Pins the error for reshape, permute, join and split results without a layout.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm -verify-diagnostics

#b = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 1056 : i64} {
  func.func @reshape_without_layout() {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #b>
    // expected-error@below {{tile without a layout; run tessel-assign-layouts first}}
    %t = tessel.reshape %r {tessel.lds_offset = 0 : i64} : tensor<256xi32, #b> -> tensor<16x16xi32>
    return
  }
}

// -----

#m = #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [4, 16], wavesPerBlock = [4, 1], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 1056 : i64} {
  func.func @permute_without_layout() {
    %r = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #m>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #m>> -> tensor<1x16xi32, #m>
    %i = tessel.broadcast %e : tensor<1x16xi32, #m> -> tensor<16x16xi32, #m>
    // expected-error@below {{tile without a layout; run tessel-assign-layouts first}}
    %t = tessel.permute %i {order = array<i32: 1, 0>, tessel.lds_offset = 0 : i64} : tensor<16x16xi32, #m> -> tensor<16x16xi32>
    return
  }
}

// -----

module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 16 : i64} {
  func.func @join_without_layout(%s: f32, %t: f32) {
    // expected-error@below {{tile without a layout; run tessel-assign-layouts first}}
    %j = tessel.join %s, %t {tessel.lds_offset = 0 : i64} : f32, f32 -> tensor<2xf32>
    return
  }
}

// -----

#j = #tessel.blocked<sizePerThread = [1, 2], threadsPerWave = [64, 1], wavesPerBlock = [4, 1], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 2112 : i64} {
  func.func @split_without_layout() {
    %c = tessel.make_range {start = 0 : i32, end = 2 : i32} : tensor<2xi32, #tessel.slice<dim = 0, parent = #j>>
    %ce = tessel.expand_dims %c {axis = 0 : i32} : tensor<2xi32, #tessel.slice<dim = 0, parent = #j>> -> tensor<1x2xi32, #j>
    %cb = tessel.broadcast %ce : tensor<1x2xi32, #j> -> tensor<256x2xi32, #j>
    // expected-error@below {{tile without a layout; run tessel-assign-layouts first}}
    %h = tessel.split %cb {half = 0 : i32, tessel.lds_offset = 0 : i64} : tensor<256x2xi32, #j> -> tensor<256xi32>
    return
  }
}
