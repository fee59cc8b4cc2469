// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-plan-lds --tessel-convert-to-llvm | FileCheck %s

// A thread's 16 values of a float sum combine as a tree: 8 adds of values 8
// apart (none uses another's result), then 4, 2, 1. The backend packs those
// independent adds (v_pk_add_f32) or dual-issues them (VOPD).
// CHECK-LABEL: llvm.func @sum_tree(
// CHECK: %[[S0:.*]] = llvm.fadd
// CHECK-NOT: llvm.fadd %[[S0]],
// CHECK-COUNT-7: llvm.fadd
// CHECK-NEXT: llvm.fadd %[[S0]], %{{.*}} : f32
// CHECK-COUNT-6: llvm.fadd
// CHECK-NOT: llvm.fadd
// CHECK: rocdl.update.dpp
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @sum_tree(%p: !tessel.ptr<f32>) {
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

// A max stays a chain, each step using the last: the backend folds it into
// v_max3_f32 without canonicalizing every input.
// CHECK-LABEL: llvm.func @max_chain(
// CHECK: %[[M0:.*]] = llvm.intr.maxnum
// CHECK-NEXT: %[[M1:.*]] = llvm.intr.maxnum(%[[M0]], %{{.*}})
// CHECK-NEXT: llvm.intr.maxnum(%[[M1]], %{{.*}})
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @max_chain(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %x = arith.sitofp %r : tensor<1024xi32> to tensor<1024xf32>
    %s = tessel.reduce %x {axis = 0 : i32} : (tensor<1024xf32>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.maxnumf %a, %b : f32
      tessel.yield %c : f32
    }
    tessel.store %p, %s : (!tessel.ptr<f32>, f32) -> ()
    return
  }
}
