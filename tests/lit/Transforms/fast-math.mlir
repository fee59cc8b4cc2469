// RUN: tessel-opt %s -split-input-file --tessel-fast-math | FileCheck %s

// Under tessel.fast_math: a division by a splat or a broadcast multiplies by
// the reciprocal of the repeated value (once per scalar / row); another
// division gets arcp + afn; a div_rn division stays as it is.
// CHECK-LABEL: func.func @fast(
// CHECK: %[[R1:.*]] = arith.divf %{{.*}}, %arg1 fastmath<arcp,afn> : f32
// CHECK: %[[S:.*]] = tessel.splat %[[R1]] : tensor<4x256xf32>
// CHECK: arith.mulf %arg0, %[[S]] : tensor<4x256xf32>
// CHECK: %[[R2:.*]] = arith.divf %{{.*}}, %arg2 fastmath<arcp,afn> : tensor<4x1xf32>
// CHECK: %[[B:.*]] = tessel.broadcast %[[R2]] : tensor<4x1xf32> -> tensor<4x256xf32>
// CHECK: arith.mulf %arg0, %[[B]] : tensor<4x256xf32>
// CHECK: arith.divf %arg0, %arg3 fastmath<arcp,afn> : tensor<4x256xf32>
// CHECK: arith.divf %arg0, %arg3 {tessel.div_rn} : tensor<4x256xf32>
module attributes {tessel.fast_math} {
  func.func @fast(%x: tensor<4x256xf32>, %s: f32, %row: tensor<4x1xf32>, %y: tensor<4x256xf32>)
      -> (tensor<4x256xf32>, tensor<4x256xf32>, tensor<4x256xf32>, tensor<4x256xf32>) {
    %ss = tessel.splat %s : tensor<4x256xf32>
    %a = arith.divf %x, %ss : tensor<4x256xf32>
    %rb = tessel.broadcast %row : tensor<4x1xf32> -> tensor<4x256xf32>
    %b = arith.divf %x, %rb : tensor<4x256xf32>
    %c = arith.divf %x, %y : tensor<4x256xf32>
    %d = arith.divf %x, %y {tessel.div_rn} : tensor<4x256xf32>
    return %a, %b, %c, %d : tensor<4x256xf32>, tensor<4x256xf32>, tensor<4x256xf32>, tensor<4x256xf32>
  }
}

// -----

// Without tessel.fast_math nothing changes: `/` is IEEE division.
// CHECK-LABEL: func.func @exact(
// CHECK: arith.divf %arg0, %{{.*}} : tensor<256xf32>
// CHECK-NOT: fastmath
// CHECK-NOT: arith.mulf
module {
  func.func @exact(%x: tensor<256xf32>, %s: f32) -> tensor<256xf32> {
    %ss = tessel.splat %s : tensor<256xf32>
    %a = arith.divf %x, %ss : tensor<256xf32>
    return %a : tensor<256xf32>
  }
}
