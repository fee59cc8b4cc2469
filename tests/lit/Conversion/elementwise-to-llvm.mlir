// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-plan-lds --tessel-convert-to-llvm | FileCheck %s

// arith.mului_extended (umulhi, Philox) on a tile: each of a thread's
// registers gets the op on scalars, lowered to one 64-bit product whose low
// and high words are the two results.
// CHECK-LABEL: llvm.func @unsigned_product(
// CHECK-COUNT-2: llvm.mul {{.*}} : i64
// CHECK: llvm.lshr {{.*}} : i64
// CHECK: llvm.store
// CHECK: llvm.store
// CHECK-NOT: llvm.mul
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @unsigned_product(%p: !tessel.ptr<i32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
    %m = arith.constant dense<-766435501> : tensor<128xi32>
    %low, %high = arith.mului_extended %r, %m : tensor<128xi32>
    %ps = tessel.splat %p : tensor<128x!tessel.ptr<i32>>
    %pp = tessel.addptr %ps, %r : tensor<128x!tessel.ptr<i32>>, tensor<128xi32>
    tessel.store %pp, %low : (tensor<128x!tessel.ptr<i32>>, tensor<128xi32>) -> ()
    %qs = tessel.splat %q : tensor<128x!tessel.ptr<i32>>
    %qp = tessel.addptr %qs, %r : tensor<128x!tessel.ptr<i32>>, tensor<128xi32>
    tessel.store %qp, %high : (tensor<128x!tessel.ptr<i32>>, tensor<128xi32>) -> ()
    return
  }
}

// -----

// A combine function may use it too: its values are replayed per register.
// CHECK-LABEL: llvm.func @product_reduce(
// CHECK: llvm.mul {{.*}} : i64
// CHECK: rocdl.update.dpp
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @product_reduce(%p: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %s = tessel.reduce %r {axis = 0 : i32} : (tensor<64xi32>) -> i32 {
    ^bb0(%a: i32, %b: i32):
      %low, %high = arith.mului_extended %a, %b : i32
      tessel.yield %high : i32
    }
    tessel.store %p, %s : (!tessel.ptr<i32>, i32) -> ()
    return
  }
}
