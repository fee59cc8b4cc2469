// RUN: tessel-opt %s | tessel-opt | FileCheck %s

// CHECK-LABEL: func.func @argmax_rows
// CHECK: tessel.reduce %{{.*}}, %{{.*}} {axis = 1 : i32} : (tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4xf32>, tensor<4xi32>)
// CHECK: tessel.yield %{{.*}}, %{{.*}} : f32, i32
func.func @argmax_rows(%v: tensor<4x8xf32>, %i: tensor<4x8xi32>) {
  %m:2 = tessel.reduce %v, %i {axis = 1 : i32} : (tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  ^bb0(%av: f32, %ai: i32, %bv: f32, %bi: i32):
    %gt = arith.cmpf ogt, %bv, %av : f32
    %v2 = arith.select %gt, %bv, %av : f32
    %i2 = arith.select %gt, %bi, %ai : i32
    tessel.yield %v2, %i2 : f32, i32
  }
  return
}

// CHECK-LABEL: func.func @scalar_sum
// CHECK: tessel.reduce {{.*}} -> f32
// CHECK: tessel.scan {{.*}} {axis = 0 : i32, reverse = true}
func.func @scalar_sum(%v: tensor<64xf32>) {
  %s = tessel.reduce %v {axis = 0 : i32} : (tensor<64xf32>) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    tessel.yield %c : f32
  }
  %p = tessel.scan %v {axis = 0 : i32, reverse = true} : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %c = arith.mulf %a, %b : f32
    tessel.yield %c : f32
  }
  return
}

// CHECK-LABEL: func.func @shapes
// CHECK: tessel.reshape
// CHECK: tessel.permute {{.*}} {order = array<i32: 1, 0>}
// CHECK: tessel.join
// CHECK: tessel.split {{.*}} {half = 1 : i32}
func.func @shapes(%x: tensor<4x8xf32>, %y: tensor<16xf32>) {
  %r = tessel.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %t = tessel.permute %x {order = array<i32: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %j = tessel.join %y, %y : tensor<16xf32>, tensor<16xf32> -> tensor<16x2xf32>
  %s = tessel.split %j {half = 1 : i32} : tensor<16x2xf32> -> tensor<16xf32>
  return
}
