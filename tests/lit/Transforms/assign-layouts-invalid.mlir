// RUN: tessel-opt %s --tessel-assign-layouts -verify-diagnostics

// A loaded tile (not cheap to recompute) used both as rows and as columns
// would need a layout conversion through LDS.
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32} {
  func.func @outer(%x: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %xs = tessel.splat %x : tensor<64x!tessel.ptr<i32>>
    %xp = tessel.addptr %xs, %r : tensor<64x!tessel.ptr<i32>>, tensor<64xi32>
    %v = tessel.load %xp : (tensor<64x!tessel.ptr<i32>>) -> tensor<64xi32>
    // expected-note@below {{other use here}}
    %a = tessel.expand_dims %v {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    // expected-error@below {{this tile is used along two different axes}}
    %b = tessel.expand_dims %v {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %ab = tessel.broadcast %a : tensor<64x1xi32> -> tensor<64x64xi32>
    %bb = tessel.broadcast %b : tensor<1x64xi32> -> tensor<64x64xi32>
    %s = arith.addi %ab, %bb : tensor<64x64xi32>
    %ys = tessel.splat %x : tensor<64x64x!tessel.ptr<i32>>
    %yp = tessel.addptr %ys, %s : tensor<64x64x!tessel.ptr<i32>>, tensor<64x64xi32>
    tessel.store %yp, %s : (tensor<64x64x!tessel.ptr<i32>>, tensor<64x64xi32>) -> ()
    return
  }
}
