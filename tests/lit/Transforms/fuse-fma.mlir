// RUN: tessel-opt %s -split-input-file --tessel-fuse-fma | FileCheck %s

// Under tessel.fp_fusion: a * b + c, c + a * b, a * b - c and c - a * b
// become one fma each; a product used by two sums, two fmas; a product
// with another use stays a multiply (and its sum stays a sum).
// CHECK-LABEL: func.func @fused(
// CHECK: %[[F1:.*]] = math.fma %arg0, %arg1, %arg2 : tensor<256xf32>
// CHECK: %[[F2:.*]] = math.fma %arg1, %arg2, %arg0 : tensor<256xf32>
// CHECK: %[[N1:.*]] = arith.negf %arg2 : tensor<256xf32>
// CHECK: %[[F3:.*]] = math.fma %arg0, %arg2, %[[N1]] : tensor<256xf32>
// CHECK: %[[N2:.*]] = arith.negf %arg1 : tensor<256xf32>
// CHECK: %[[F4:.*]] = math.fma %[[N2]], %arg2, %arg0 : tensor<256xf32>
// CHECK: math.fma %arg0, %arg0, %arg1 : tensor<256xf32>
// CHECK: math.fma %arg0, %arg0, %arg2 : tensor<256xf32>
// CHECK: %[[P:.*]] = arith.mulf %arg1, %arg1 : tensor<256xf32>
// CHECK: arith.addf %[[P]], %arg2 : tensor<256xf32>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[P]] :
module attributes {tessel.fp_fusion} {
  func.func @fused(%a: tensor<256xf32>, %b: tensor<256xf32>, %c: tensor<256xf32>)
      -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) {
    %p1 = arith.mulf %a, %b : tensor<256xf32>
    %s1 = arith.addf %p1, %c : tensor<256xf32>
    %p2 = arith.mulf %b, %c : tensor<256xf32>
    %s2 = arith.addf %a, %p2 : tensor<256xf32>
    %p3 = arith.mulf %a, %c : tensor<256xf32>
    %s3 = arith.subf %p3, %c : tensor<256xf32>
    %p4 = arith.mulf %b, %c : tensor<256xf32>
    %s4 = arith.subf %a, %p4 : tensor<256xf32>
    %p5 = arith.mulf %a, %a : tensor<256xf32>
    %s5 = arith.addf %p5, %b : tensor<256xf32>
    %s6 = arith.addf %p5, %c : tensor<256xf32>
    %p7 = arith.mulf %b, %b : tensor<256xf32>
    %s7 = arith.addf %p7, %c : tensor<256xf32>
    return %s1, %s2, %s3, %s4, %s5, %s6, %s7, %p7 : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
  }
}

// -----

// Without tessel.fp_fusion every operation rounds on its own.
// CHECK-LABEL: func.func @unfused(
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: math.fma
module {
  func.func @unfused(%a: f32, %b: f32, %c: f32) -> f32 {
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %c : f32
    return %s : f32
  }
}
