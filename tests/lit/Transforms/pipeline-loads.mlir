// RUN: tessel-opt %s -split-input-file --tessel-pipeline-loads | FileCheck %s

// num_stages = 2: the dot's operand load moves one iteration ahead. The first
// tile is loaded before the loop, only if the loop runs (one uniform branch,
// not a mask per element); each iteration starts by loading the next tile if
// there is a next one, and yields it; the dot reads the carried tile.
// CHECK-LABEL: func.func @k_loop(
// CHECK: %[[RUNS:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK: %[[FIRST:.*]] = scf.if %[[RUNS]] -> (tensor<32x32xf16>) {
// CHECK: %[[T:.*]] = tessel.load %{{.*}} : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
// CHECK: scf.yield %[[T]]
// CHECK: } else {
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<32x32xf16>
// CHECK: scf.yield %[[Z]]
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[DIST:.*]] = arith.muli %[[STEP:.*]], %[[ONE]] : i32
// CHECK: scf.for %[[K:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[TILE:.*]] = %[[FIRST]])
// CHECK: %[[NEXT:.*]] = arith.addi %[[K]], %[[DIST]] : i32
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %[[NEXT]], %[[UB]] : i32
// CHECK: %[[PREFETCH:.*]] = scf.if %[[VALID]]
// CHECK: tessel.load
// CHECK: } else {
// CHECK-NOT: tessel.load
// CHECK: tessel.dot %[[TILE]], %{{.*}}, %[[ACC]]
// CHECK: scf.yield %{{.*}}, %[[PREFETCH]]
module attributes {tessel.num_stages = 2 : i32} {
  func.func @k_loop(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32) -> tensor<32x32xf32> {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %offs = tessel.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero) -> (tensor<32x32xf32>) : i32 {
      %ks = tessel.splat %k : tensor<32x32xi32>
      %o = arith.addi %offs, %ks : tensor<32x32xi32>
      %p = tessel.addptr %base, %o : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      scf.yield %d : tensor<32x32xf32>
    }
    return %acc : tensor<32x32xf32>
  }
}

// -----

// num_stages = 3: two iterations ahead. Two tiles before the loop (the second
// masked by whether the loop reaches its second iteration); the loop carries
// both, loads the one two steps ahead and yields the sets shifted by one.
// CHECK-LABEL: func.func @two_ahead(
// CHECK: %[[R0:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK: %[[T0:.*]] = scf.if %[[R0]]
// CHECK: %[[IV1:.*]] = arith.addi %[[LB]], %[[STEP:.*]] : i32
// CHECK: %[[R1:.*]] = arith.cmpi slt, %[[IV1]], %[[UB]] : i32
// CHECK: %[[T1:.*]] = scf.if %[[R1]]
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK: %[[DIST:.*]] = arith.muli %[[STEP]], %[[TWO]] : i32
// CHECK: scf.for %[[K:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[CUR:.*]] = %[[T0]], %[[AFTER:.*]] = %[[T1]])
// CHECK: %[[AT:.*]] = arith.addi %[[K]], %[[DIST]] : i32
// CHECK: %[[AHEAD:.*]] = scf.if
// CHECK: tessel.splat %[[AT]]
// CHECK: tessel.load
// The address computation of the moved load is gone from the body.
// CHECK: } else {
// CHECK-NOT: tessel.addptr
// CHECK: tessel.dot %[[CUR]], %{{.*}}, %[[ACC]]
// CHECK: scf.yield %{{.*}}, %[[AFTER]], %[[AHEAD]]
module attributes {tessel.num_stages = 3 : i32} {
  func.func @two_ahead(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32) -> tensor<32x32xf32> {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero) -> (tensor<32x32xf32>) : i32 {
      %ks = tessel.splat %k : tensor<32x32xi32>
      %p = tessel.addptr %base, %ks : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      scf.yield %d : tensor<32x32xf32>
    }
    return %acc : tensor<32x32xf32>
  }
}

// -----

// Without num_stages (or with 1) nothing moves.
// CHECK-LABEL: func.func @unpipelined(
// CHECK: scf.for
// CHECK: tessel.load
module {
  func.func @unpipelined(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32) -> tensor<32x32xf32> {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero) -> (tensor<32x32xf32>) : i32 {
      %t = tessel.load %base : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      scf.yield %d : tensor<32x32xf32>
    }
    return %acc : tensor<32x32xf32>
  }
}
