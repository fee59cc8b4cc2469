// RUN: tessel-opt %s -split-input-file --tessel-fold-compares | FileCheck %s

// assume(n >= 1024): the columns 0..1023 are all < n, so the mask is true
// and the load and store lose it; the row mask (pid < m) is unknown and stays.
// CHECK-LABEL: func.func @assumed_width(
// CHECK: tessel.assume
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<1024xi32>
// CHECK: tessel.load %{{[0-9]+}} : (tensor<1024x!tessel.ptr<f32>>) -> tensor<1024xf32>
// CHECK: tessel.store %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>)
func.func @assumed_width(%x: !tessel.ptr<f32>, %out: !tessel.ptr<f32>, %n: i32, %m: i32) {
  %c1024 = arith.constant 1024 : i32
  %big = arith.cmpi sge, %n, %c1024 : i32
  tessel.assume %big
  %pid = tessel.program_id 0 : i32
  %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %ns = tessel.splat %n : tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %ns : tensor<1024xi32>
  %xs = tessel.splat %x : tensor<1024x!tessel.ptr<f32>>
  %p = tessel.addptr %xs, %r : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
  %v = tessel.load %p, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
  %row = arith.cmpi slt, %pid, %m : i32
  %rows = tessel.splat %row : tensor<1024xi1>
  %both = arith.andi %rows, %mask : tensor<1024xi1>
  %os = tessel.splat %out : tensor<1024x!tessel.ptr<f32>>
  %q = tessel.addptr %os, %r : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
  tessel.store %q, %v, %both : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  return
}

// -----

// Without the assumption nothing is known: the mask stays.
// CHECK-LABEL: func.func @unknown_width(
// CHECK: %[[MASK:.*]] = arith.cmpi slt
// CHECK: tessel.load %{{.*}}, %[[MASK]]
func.func @unknown_width(%x: !tessel.ptr<f32>, %n: i32) {
  %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %ns = tessel.splat %n : tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %ns : tensor<1024xi32>
  %xs = tessel.splat %x : tensor<1024x!tessel.ptr<f32>>
  %p = tessel.addptr %xs, %r : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
  %v = tessel.load %p, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
  tessel.store %p, %v : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>) -> ()
  return
}

// -----

// A loop's induction variable is bounded by the loop: k lies in [0, 255], so
// k + 0..63 < 320 always holds.
// CHECK-LABEL: func.func @loop_bound(
// CHECK-NOT: arith.cmpi slt, %{{.*}} : tensor<64xi32>
// CHECK: tessel.load %{{[0-9a-z_]+}} : (tensor<64x!tessel.ptr<f32>>)
func.func @loop_bound(%x: !tessel.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c256 = arith.constant 256 : i32
  %c320 = arith.constant dense<320> : tensor<64xi32>
  %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %xs = tessel.splat %x : tensor<64x!tessel.ptr<f32>>
  scf.for %k = %c0 to %c256 step %c64 : i32 {
    %ks = tessel.splat %k : tensor<64xi32>
    %c = arith.addi %ks, %r : tensor<64xi32>
    %mask = arith.cmpi slt, %c, %c320 : tensor<64xi32>
    %p = tessel.addptr %xs, %c : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    %v = tessel.load %p, %mask : (tensor<64x!tessel.ptr<f32>>, tensor<64xi1>) -> tensor<64xf32>
    tessel.store %p, %v : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> ()
  }
  return
}

// -----

// Without the loop's bound the same compare is unknown: here the bound is n.
// CHECK-LABEL: func.func @loop_unbounded(
// CHECK: arith.cmpi slt
func.func @loop_unbounded(%x: !tessel.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c320 = arith.constant dense<320> : tensor<64xi32>
  %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %xs = tessel.splat %x : tensor<64x!tessel.ptr<f32>>
  scf.for %k = %c0 to %n step %c64 : i32 {
    %ks = tessel.splat %k : tensor<64xi32>
    %c = arith.addi %ks, %r : tensor<64xi32>
    %mask = arith.cmpi slt, %c, %c320 : tensor<64xi32>
    %p = tessel.addptr %xs, %c : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    %v = tessel.load %p, %mask : (tensor<64x!tessel.ptr<f32>>, tensor<64xi1>) -> tensor<64xf32>
    tessel.store %p, %v : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> ()
  }
  return
}

// -----

// The constant on the left: assume(4096 <= n) is n >= 4096.
// CHECK-LABEL: func.func @constant_first(
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: return %[[TRUE]]
func.func @constant_first(%n: i32) -> i1 {
  %c4096 = arith.constant 4096 : i32
  %c100 = arith.constant 100 : i32
  %big = arith.cmpi sle, %c4096, %n : i32
  tessel.assume %big
  %gt = arith.cmpi sgt, %n, %c100 : i32
  return %gt : i1
}
