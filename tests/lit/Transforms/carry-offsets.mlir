// RUN: tessel-opt %s -split-input-file --tessel-carry-offsets | FileCheck %s

// A pointer tile from a small Buffer (tessel.pointer_range = 31), moved each
// iteration by a runtime amount and a constant one: the loop carries one i32
// offset (from 0, plus both amounts) instead of the tile; the body and the
// code after the loop use the init moved by the offset.
// CHECK-LABEL: func.func @moved_pointer(
// CHECK: %[[P0:.*]] = tessel.addptr %{{.*}}, %{{.*}} : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[LOOP:.*]]:2 = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[OFF:.*]] = %[[ZERO]]) -> (tensor<32x32xf32>, i32)
// CHECK-NEXT: %[[OS:.*]] = tessel.splat %[[OFF]] : tensor<32x32xi32>
// CHECK-NEXT: %[[P:.*]] = tessel.addptr %[[P0]], %[[OS]]
// CHECK-NEXT: tessel.load %[[P]] :
// CHECK-NOT: tessel.addptr
// CHECK: %[[S:.*]] = arith.muli
// CHECK: %[[O1:.*]] = arith.addi %[[OFF]], %[[S]] : i32
// CHECK: %[[C16:.*]] = arith.constant 16 : i32
// CHECK: %[[O2:.*]] = arith.addi %[[O1]], %[[C16]] : i32
// CHECK: scf.yield %{{.*}}, %[[O2]] : tensor<32x32xf32>, i32
// CHECK: %[[LS:.*]] = tessel.splat %[[LOOP]]#1 : tensor<32x32xi32>
// CHECK: %[[LAST:.*]] = tessel.addptr %[[P0]], %[[LS]]
// CHECK: tessel.load %[[LAST]] :
module {
  func.func @moved_pointer(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %b: tensor<32x32xf16>, %n: i32, %stride: i32, %out: !tessel.ptr<f16>) -> tensor<32x32xf32> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %offs = tessel.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %p0 = tessel.addptr %base, %offs : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
    %c16 = arith.constant dense<16> : tensor<32x32xi32>
    %res:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>) : i32 {
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      %s = arith.muli %stride, %c32 : i32
      %ss = tessel.splat %s : tensor<32x32xi32>
      %pn = tessel.addptr %p, %ss : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      %pm = tessel.addptr %pn, %c16 : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      scf.yield %d, %pm : tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>
    }
    %v = tessel.load %res#1 : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
    %po = tessel.splat %out : tensor<32x32x!tessel.ptr<f16>>
    tessel.store %po, %v : (tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xf16>) -> ()
    return %res#0 : tensor<32x32xf32>
  }
}

// -----

// Without tessel.pointer_range the Buffer may be larger than 2 GiB: an i32
// offset could wrap where the pointers do not. The tile stays carried.
// CHECK-LABEL: func.func @large_buffer(
// CHECK: scf.for %{{.*}} -> (tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>)
module {
  func.func @large_buffer(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32, %stride: i32) -> tensor<32x32xf32> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %p0 = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %res:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>) : i32 {
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      %ss = tessel.splat %stride : tensor<32x32xi32>
      %pn = tessel.addptr %p, %ss : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      scf.yield %d, %pn : tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>
    }
    return %res#0 : tensor<32x32xf32>
  }
}

// -----

// A step that differs between elements (a tile of offsets) is not one
// scalar: the tile stays carried.
// CHECK-LABEL: func.func @varying_step(
// CHECK: scf.for %{{.*}} -> (tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>)
module {
  func.func @varying_step(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %b: tensor<32x32xf16>, %n: i32) -> tensor<32x32xf32> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %offs = tessel.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
    %p0 = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %res:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>) : i32 {
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      %pn = tessel.addptr %p, %offs : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      scf.yield %d, %pn : tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>
    }
    return %res#0 : tensor<32x32xf32>
  }
}
