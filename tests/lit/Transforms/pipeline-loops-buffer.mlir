// RUN: tessel-opt %s --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops | FileCheck %s

// The pipeliner runs after use-buffer-ops: the loads it moves ahead are
// buffer loads (a kernel argument under 2 GiB plus i32 offsets, as
// tessel-carry-offsets leaves Triton's carried pointers), masked by what
// remains of K. The prologue's and the prefetch's copies are buffer loads
// with their offsets and masks at the iteration they load; the body keeps
// no pointer tiles (what use-buffer-ops left of them is dropped) and its
// loop-invariant row offsets are the prologue's (hoisted by CSE).
// CHECK-LABEL: func.func @buffer_loads(
// CHECK: %[[FIRST:.*]] = scf.if
// CHECK-NEXT: tessel.buffer_load
// CHECK: tessel.local_alloc
// CHECK: tessel.local_store %[[FIRST]]
// CHECK: scf.for %[[K:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[OFF:.*]] = %{{.*}}) -> (tensor<64x64xf32, #{{.*}}>, i32)
// CHECK-NOT: tessel.make_range
// CHECK-NOT: tessel.addptr
// CHECK: %[[NEXT:.*]] = scf.if
// CHECK-NEXT: tessel.buffer_load %{{.*}}[%{{.*}}], %{{.*}}, other
// CHECK-NOT: tessel.addptr
// CHECK: tessel.local_load
// CHECK: tessel.dot
// CHECK: tessel.local_store %[[NEXT]]
// CHECK-NOT: tessel.addptr
// CHECK: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32} {
  func.func @buffer_loads(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %b: tensor<32x64xf16>, %c: !tessel.ptr<f32>, %n: i32, %K: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %zh = arith.constant dense<0.0> : tensor<64x32xf16>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0) -> (tensor<64x64xf32>, i32) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
      %ia = tessel.reshape %ra : tensor<2048xi32> -> tensor<64x32xi32>
      %col = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
      %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
      %colb = tessel.broadcast %cole : tensor<1x32xi32> -> tensor<64x32xi32>
      %left = arith.subi %K, %k : i32
      %ls = tessel.splat %left : tensor<64x32xi32>
      %m = arith.cmpi slt, %colb, %ls : tensor<64x32xi32>
      %os = tessel.splat %off : tensor<64x32xi32>
      %o = arith.addi %ia, %os : tensor<64x32xi32>
      %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa, %m, other %zh : (tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi1>, tensor<64x32xf16>) -> tensor<64x32xf16>
      %d = tessel.dot %ta, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %next = arith.addi %off, %c32 : i32
      scf.yield %d, %next : tensor<64x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}
