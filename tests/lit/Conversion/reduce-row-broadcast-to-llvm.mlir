// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-plan-lds --tessel-convert-to-llvm | FileCheck %s

// gfx942, a sum over all 64 lanes of each wave: DPP within rows of 16, then
// row_bcast:15 (ctrl 322) and row_bcast:31 (ctrl 323) with full masks and
// bound_ctrl, each combined with the lower rows' value on the left, and the
// wave's result read from lane 63. No ds_bpermute.
// CHECK-LABEL: llvm.func @row_sum(
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: rocdl.update.dpp {{.*}} with 320, 15, 15, true : f32
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: %[[UNUSED:.*]] = llvm.mlir.poison : f32
// CHECK: %[[B15:.*]] = rocdl.update.dpp %[[UNUSED]], %{{.*}} with 322, 15, 15, true : f32
// CHECK: llvm.fadd %[[B15]], %{{.*}} : f32
// CHECK: rocdl.update.dpp %{{.*}}, %{{.*}} with 323, 15, 15, true : f32
// CHECK: %[[C63:.*]] = llvm.mlir.constant(63 : i32) : i32
// CHECK: rocdl.readlane %{{.*}}, %[[C63]] : (i32, i32) -> i32
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: rocdl.s.barrier
// CHECK: llvm.return
module attributes {tessel.target = "gfx942", tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @row_sum(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %x = arith.sitofp %r : tensor<1024xi32> to tensor<1024xf32>
    %s = tessel.reduce %x {axis = 0 : i32} : (tensor<1024xf32>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tessel.yield %c : f32
    }
    tessel.store %p, %s : (!tessel.ptr<f32>, f32) -> ()
    return
  }
}

// -----

// A reduction over 32 lanes (rows of 2 x 32 over one wave: lane bit 5 picks
// the row): broadcasts into lane 63 would mix the two rows, so the
// butterfly goes on with ds_bpermute for distance 16.
// CHECK-LABEL: llvm.func @row_pairs(
// CHECK-NOT: with 322
// CHECK: rocdl.ds_bpermute
// CHECK-NOT: rocdl.readlane
// CHECK: llvm.return
module attributes {tessel.target = "gfx942", tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @row_pairs(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %r2 = tessel.reshape %r : tensor<64xi32> -> tensor<2x32xi32>
    %x = arith.sitofp %r2 : tensor<2x32xi32> to tensor<2x32xf32>
    %s = tessel.reduce %x {axis = 1 : i32} : (tensor<2x32xf32>) -> tensor<2xf32> {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tessel.yield %c : f32
    }
    %ps = tessel.splat %p : tensor<2x!tessel.ptr<f32>>
    tessel.store %ps, %s : (tensor<2x!tessel.ptr<f32>>, tensor<2xf32>) -> ()
    return
  }
}
