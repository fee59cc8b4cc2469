// RUN: tessel-opt %s --split-input-file --tessel-assign-layouts --tessel-plan-lds --tessel-convert-to-llvm | FileCheck %s

// A combine of one commutative op (sum, max, and, ...) takes the partner
// lane's value as it comes: both lanes compute one result in either order,
// so the butterfly has no lane predicate and no selects (issue 34: LLVM
// removed them, quadratically in the number of reductions).
// CHECK-LABEL: llvm.func @commutative_sum(
// CHECK-NOT: llvm.select
// CHECK: rocdl.update.dpp {{.*}} with 177, 15, 15, true : f32
// CHECK-NOT: llvm.select
// CHECK: llvm.fadd
// CHECK-NOT: llvm.select
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @commutative_sum(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %x = arith.sitofp %r : tensor<64xi32> to tensor<64xf32>
    %s = tessel.reduce %x {axis = 0 : i32} : (tensor<64xf32>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %b, %a : f32
      tessel.yield %c : f32
    }
    tessel.store %p, %s : (!tessel.ptr<f32>, f32) -> ()
    return
  }
}

// -----

// Any other combine keeps the lower lane's value on the left: each step
// selects the operands' order by the lane's bit (here a max that keeps the
// left operand on ties, as argmax's tie-break needs).
// CHECK-LABEL: llvm.func @ordered_combine(
// CHECK: %[[DPP:.*]] = rocdl.update.dpp {{.*}} with 177, 15, 15, true : f32
// CHECK: llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, f32
// CHECK-NEXT: llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, f32
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @ordered_combine(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %x = arith.sitofp %r : tensor<64xi32> to tensor<64xf32>
    %s = tessel.reduce %x {axis = 0 : i32} : (tensor<64xf32>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %ge = arith.cmpf oge, %a, %b : f32
      %c = arith.select %ge, %a, %b : f32
      tessel.yield %c : f32
    }
    tessel.store %p, %s : (!tessel.ptr<f32>, f32) -> ()
    return
  }
}
