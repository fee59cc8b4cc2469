// RUN: tessel-opt %s --tessel-lower-to-llvm | FileCheck %s

// The whole pipeline compileTrace runs, from specialized tile IR to the
// per-thread kernel: n == 1 folds, 16-byte aligned pointers give vector
// accesses, nothing tile-level is left.
// CHECK-LABEL: llvm.func @scale(
// CHECK-SAME: rocdl.kernel
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NOT: tessel.
module attributes {tessel.num_warps = 2 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @scale(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %s: i32 {tessel.equal_to_one}) {
    %pid = tessel.program_id 0 : i32
    %c = arith.constant 512 : i32
    %b = arith.muli %pid, %c : i32
    %bs = arith.muli %b, %s : i32
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32>
    %o = tessel.splat %bs : tensor<512xi32>
    %offs = arith.addi %o, %r : tensor<512xi32>
    %xs = tessel.splat %x : tensor<512x!tessel.ptr<f32>>
    %p = tessel.addptr %xs, %offs : tensor<512x!tessel.ptr<f32>>, tensor<512xi32>
    %v = tessel.load %p : (tensor<512x!tessel.ptr<f32>>) -> tensor<512xf32>
    %two = arith.constant dense<2.0> : tensor<512xf32>
    %w = arith.mulf %v, %two : tensor<512xf32>
    tessel.store %p, %w : (tensor<512x!tessel.ptr<f32>>, tensor<512xf32>) -> ()
    return
  }
}
