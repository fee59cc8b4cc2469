// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-plan-lds | FileCheck %s

// A row sum over 4 waves exchanges 4 x 1 partial sums; the transpose moves
// the whole 64 x 64 f32 tile (padded by one slot every 32). Sharing bytes
// would need a barrier after the sum's reads; 16 more bytes keep the sum's
// scratch apart until the transpose's own barrier, so neither needs one
// after its reads (tessel.lds_no_reuse).
// CHECK: module attributes {{.*}}tessel.lds_bytes = 16912 : i64
// CHECK: tessel.reduce {{.*}}, tessel.lds_no_reuse, tessel.lds_offset = 0 : i64}
// CHECK: tessel.permute {{.*}}, tessel.lds_no_reuse, tessel.lds_offset = 16 : i64}
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @sum_and_transpose(%x: tensor<1x1024xf32>, %y: tensor<64x64xf32>, %p: tensor<64x64x!tessel.ptr<f32>>) {
    %s = tessel.reduce %x {axis = 1 : i32} : (tensor<1x1024xf32>) -> tensor<1xf32> {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tessel.yield %c : f32
    }
    %t = tessel.permute %y {order = array<i32: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
    tessel.store %p, %t : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
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

// -----

// Two transposes in a row: keeping the first's 16896 bytes apart would cost
// more than 1 KiB, so both sit at offset 0 and the first keeps the barrier
// after its reads; nothing writes LDS after the second. (Each result is
// stored, so each takes a layout of its own for its store and moves
// through LDS.)
// CHECK: module attributes {{.*}}tessel.lds_bytes = 16896 : i64
// CHECK-LABEL: func.func @two_transposes(
// CHECK: tessel.permute {{.*}}{order = array<i32: 1, 0>, tessel.lds_offset = 0 : i64}
// CHECK: tessel.permute {{.*}}{order = array<i32: 1, 0>, tessel.lds_no_reuse, tessel.lds_offset = 0 : i64}
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @two_transposes(%y: tensor<64x64xf32>, %p: tensor<64x64x!tessel.ptr<f32>>, %q: tensor<64x64x!tessel.ptr<f32>>) {
    %t = tessel.permute %y {order = array<i32: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
    tessel.store %p, %t : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    %u = tessel.permute %t {order = array<i32: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
    tessel.store %q, %u : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// A sum inside a loop runs again before anything else: it keeps its barrier
// after the reads, so the sum after the loop may share its bytes. That one
// needs no barrier after its reads.
// CHECK-LABEL: func.func @sums_in_and_after_loop(
// CHECK: scf.for
// CHECK: tessel.reduce {{.*}} {axis = 0 : i32, tessel.lds_offset = 0 : i64}
// CHECK: tessel.reduce {{.*}} {axis = 0 : i32, tessel.lds_no_reuse, tessel.lds_offset = 0 : i64}
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @sums_in_and_after_loop(%x: tensor<1024xf32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = arith.constant 0.0 : f32
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) : i32 {
      %s = tessel.reduce %x {axis = 0 : i32} : (tensor<1024xf32>) -> f32 {
      ^bb0(%l: f32, %r: f32):
        %c = arith.addf %l, %r : f32
        tessel.yield %c : f32
      }
      %b = arith.addf %a, %s : f32
      scf.yield %b : f32
    }
    %t = tessel.reduce %x {axis = 0 : i32} : (tensor<1024xf32>) -> f32 {
    ^bb0(%l: f32, %r: f32):
      %c = arith.maximumf %l, %r : f32
      tessel.yield %c : f32
    }
    return
  }
}
