// RUN: tessel-opt %s --tessel-assign-layouts | FileCheck %s

// One layout cannot walk two axes in order: the second scan gets its own
// tiles, moved through layout conversions.
// CHECK-LABEL: func.func @two_scans
// CHECK: tessel.scan %{{.*}} {axis = 0 : i32}
// CHECK: %[[IN:.*]] = tessel.convert_layout
// CHECK: %[[S:.*]] = tessel.scan %[[IN]] {axis = 1 : i32}
// CHECK: tessel.convert_layout %[[S]]
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32} {
  func.func @two_scans(%x: tensor<16x16xf32>) {
    %a = tessel.scan %x {axis = 0 : i32} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      tessel.yield %s : f32
    }
    %b = tessel.scan %x {axis = 1 : i32} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      tessel.yield %s : f32
    }
    %c = arith.addf %a, %b : tensor<16x16xf32>
    return
  }
}
