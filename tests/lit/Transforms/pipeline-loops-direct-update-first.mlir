// RUN: tessel-opt %s --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops=direct-to-lds=1 | FileCheck %s

// Loads straight into LDS (gfx950) whose offset is carried on its own, its
// update the body's first op: the next tile's load takes that update, made
// before it (building the shift at the body's begin, before the op it reads,
// was a dominance error).
// CHECK-LABEL: func.func @direct_update_first(
// CHECK: scf.for {{.*}} iter_args(%{{[^ ]*}} = %cst, %{{[^ ]*}} = %c0_i32, %[[OA:[^ ]*]] = %c0_i32
// CHECK: %[[NA:.*]] = arith.addi %[[OA]], %c32_i32 : i32
// CHECK: tessel.async_wait
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.buffer_load_to_local %arg0[%{{.*}} + %[[NA]]]
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @direct_update_first(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: tensor<32x64xf16>, %c: !tessel.ptr<f32>, %n: i32, %K: i32 {tessel.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %zh = arith.constant dense<0.0> : tensor<64x32xf16>
    %acc:3 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0, %oa = %c0) -> (tensor<64x64xf32>, i32, i32) : i32 {
      %na = arith.addi %oa, %c32 : i32
      %row = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
      %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
      %c32s = tessel.splat %c32 : tensor<64x1xi32>
      %rowk = arith.muli %rowe, %c32s : tensor<64x1xi32>
      %rowb = tessel.broadcast %rowk : tensor<64x1xi32> -> tensor<64x32xi32>
      %col = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
      %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
      %colb = tessel.broadcast %cole : tensor<1x32xi32> -> tensor<64x32xi32>
      %ia = arith.addi %rowb, %colb : tensor<64x32xi32>
      %left = arith.subi %K, %k : i32
      %ls = tessel.splat %left : tensor<64x32xi32>
      %m = arith.cmpi slt, %colb, %ls : tensor<64x32xi32>
      %os = tessel.splat %oa : tensor<64x32xi32>
      %o = arith.addi %ia, %os : tensor<64x32xi32>
      %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa, %m, other %zh : (tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi1>, tensor<64x32xf16>) -> tensor<64x32xf16>
      %d = tessel.dot %ta, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %next = arith.addi %off, %c32 : i32
      scf.yield %d, %next, %na : tensor<64x64xf32>, i32, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}
