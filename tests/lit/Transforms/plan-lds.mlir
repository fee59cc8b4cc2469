// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-plan-lds | FileCheck %s

// A row sum over 4 waves exchanges 4 x 1 partial sums; the transpose moves
// the whole 64 x 64 f32 tile (padded by one slot every 32). Neither is alive while the other runs, so both
// sit at offset 0 and the plan is the larger one.
// CHECK: module attributes {{.*}}tessel.lds_bytes = 16896 : i64
// CHECK: tessel.reduce {{.*}}tessel.lds_offset = 0 : i64
// CHECK: tessel.permute {{.*}}tessel.lds_offset = 0 : i64
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @sum_and_transpose(%x: tensor<1x1024xf32>, %y: tensor<64x64xf32>) {
    %s = tessel.reduce %x {axis = 1 : i32} : (tensor<1x1024xf32>) -> tensor<1xf32> {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tessel.yield %c : f32
    }
    %t = tessel.permute %y {order = array<i32: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
    return
  }
}

// -----

// A reduction that stays inside each wave needs no LDS.
// CHECK: tessel.lds_bytes = 0 : i64
// CHECK-NOT: tessel.lds_offset
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @in_wave(%x: tensor<256xf32>) {
    %s = tessel.reduce %x {axis = 0 : i32} : (tensor<256xf32>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tessel.yield %c : f32
    }
    return
  }
}

// -----

// Converting a one-element tile renames a register: no LDS.
// CHECK: tessel.lds_bytes = 0 : i64
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @one_element(%x: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 1 : i32} : tensor<1xi32>
    %xs = tessel.splat %x : tensor<1x!tessel.ptr<f32>>
    %p = tessel.addptr %xs, %r : tensor<1x!tessel.ptr<f32>>, tensor<1xi32>
    %v = tessel.load %p : (tensor<1x!tessel.ptr<f32>>) -> tensor<1xf32>
    %c = tessel.convert_layout %v : tensor<1xf32> -> tensor<1xf32>
    tessel.store %p, %c : (tensor<1x!tessel.ptr<f32>>, tensor<1xf32>) -> ()
    return
  }
}
