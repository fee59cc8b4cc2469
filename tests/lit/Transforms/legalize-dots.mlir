// RUN: tessel-opt %s -split-input-file --tessel-legalize-dots | FileCheck %s

// gfx942 takes FNUZ 8-bit floats with K a multiple of 16: unchanged.
// CHECK-LABEL: func.func @native
// CHECK-NOT: arith.extf
// CHECK: tessel.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x32xf8E4M3FNUZ> * tensor<32x32xf8E5M2FNUZ>
module attributes {tessel.target = "gfx942"} {
  func.func @native(%a: tensor<32x32xf8E4M3FNUZ>, %b: tensor<32x32xf8E5M2FNUZ>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %d = tessel.dot %a, %b, %c : tensor<32x32xf8E4M3FNUZ> * tensor<32x32xf8E5M2FNUZ> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// K = 8, below every 8-bit float instruction's depth: both operands widen to
// f16 (exact), which f16's 32x32x8 takes.
// CHECK-LABEL: func.func @shallow
// CHECK: %[[A:.*]] = arith.extf %{{.*}} : tensor<32x8xf8E4M3FNUZ> to tensor<32x8xf16>
// CHECK: %[[B:.*]] = arith.extf %{{.*}} : tensor<8x32xf8E4M3FNUZ> to tensor<8x32xf16>
// CHECK: tessel.dot %[[A]], %[[B]], %{{.*}} : tensor<32x8xf16> * tensor<8x32xf16>
module attributes {tessel.target = "gfx942"} {
  func.func @shallow(%a: tensor<32x8xf8E4M3FNUZ>, %b: tensor<8x32xf8E4M3FNUZ>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %d = tessel.dot %a, %b, %c : tensor<32x8xf8E4M3FNUZ> * tensor<8x32xf8E4M3FNUZ> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// gfx1100's matrix cores take no 8-bit float: f16 operands for WMMA, either family.
// CHECK-LABEL: func.func @wmma
// CHECK: arith.extf %{{.*}} : tensor<32x32xf8E5M2> to tensor<32x32xf16>
// CHECK: arith.extf %{{.*}} : tensor<32x32xf8E4M3FN> to tensor<32x32xf16>
// CHECK: tessel.dot %{{.*}} : tensor<32x32xf16> * tensor<32x32xf16>
module attributes {tessel.target = "gfx1100"} {
  func.func @wmma(%a: tensor<32x32xf8E5M2>, %b: tensor<32x32xf8E4M3FN>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %d = tessel.dot %a, %b, %c : tensor<32x32xf8E5M2> * tensor<32x32xf8E4M3FN> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// Without a target the pass changes nothing; other element types are not its business.
// CHECK-LABEL: func.func @untargeted
// CHECK-NOT: arith.extf
module {
  func.func @untargeted(%a: tensor<32x8xf8E4M3FN>, %b: tensor<8x32xf8E4M3FN>, %h: tensor<32x8xf16>, %g: tensor<8x32xf16>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %d = tessel.dot %a, %b, %c : tensor<32x8xf8E4M3FN> * tensor<8x32xf8E4M3FN> -> tensor<32x32xf32>
    %e = tessel.dot %h, %g, %d : tensor<32x8xf16> * tensor<8x32xf16> -> tensor<32x32xf32>
    return %e : tensor<32x32xf32>
  }
}
