// A sort's payload nobody reads stops moving with the keys; the keys stay
// (they order everything), and so does a payload that is read.
// RUN: tessel-opt %s -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @unread_payload(
// CHECK-SAME: %[[K:.*]]: tensor<64xf32>, %[[P:.*]]: tensor<64xi32>, %[[Q:.*]]: tensor<64xi64>
// CHECK: %[[S:.*]]:2 = tessel.sort %[[K]], %[[Q]] {axis = 0 : i32, descending = true, stable = false} : (tensor<64xf32>, tensor<64xi64>) -> (tensor<64xf32>, tensor<64xi64>)
// CHECK: return %[[S]]#1
func.func @unread_payload(%k: tensor<64xf32>, %p: tensor<64xi32>, %q: tensor<64xi64>) -> tensor<64xi64> {
  %s:3 = tessel.sort %k, %p, %q {axis = 0 : i32, descending = true, stable = false} : (tensor<64xf32>, tensor<64xi32>, tensor<64xi64>) -> (tensor<64xf32>, tensor<64xi32>, tensor<64xi64>)
  return %s#2 : tensor<64xi64>
}

// CHECK-LABEL: func.func @keys_only_read(
// CHECK: tessel.sort %{{[^,]*}} {axis = 1 : i32, descending = false, stable = true} : (tensor<4x16xi32>) -> tensor<4x16xi32>
func.func @keys_only_read(%k: tensor<4x16xi32>, %p: tensor<4x16xf16>) -> tensor<4x16xi32> {
  %s:2 = tessel.sort %k, %p {axis = 1 : i32, descending = false, stable = true} : (tensor<4x16xi32>, tensor<4x16xf16>) -> (tensor<4x16xi32>, tensor<4x16xf16>)
  return %s#0 : tensor<4x16xi32>
}

// A masked sort keeps its mask (the last operand: it orders) even unread.
// CHECK-LABEL: func.func @masked(
// CHECK-SAME: %[[K:.*]]: tensor<64xf32>, %[[P:.*]]: tensor<64xi32>, %[[M:.*]]: tensor<64xi1>
// CHECK: %[[S:.*]]:2 = tessel.sort %[[K]], %[[M]] {axis = 0 : i32, descending = false, masked = true, stable = true}
// CHECK: return %[[S]]#0
func.func @masked(%k: tensor<64xf32>, %p: tensor<64xi32>, %m: tensor<64xi1>) -> tensor<64xf32> {
  %s:3 = tessel.sort %k, %p, %m {axis = 0 : i32, descending = false, stable = true, masked = true} : (tensor<64xf32>, tensor<64xi32>, tensor<64xi1>) -> (tensor<64xf32>, tensor<64xi32>, tensor<64xi1>)
  return %s#0 : tensor<64xf32>
}
