// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts | FileCheck %s

// One tile as both operands of a dot: each operand slot reads a conversion
// of its own, to its own operand layout (the solver cuts operand slots, not
// values).
// CHECK-DAG: #[[A:.*]] = #tessel.dot_operand<opIdx = 0, parent = #{{.*}}, kWidth = 4>
// CHECK-DAG: #[[B:.*]] = #tessel.dot_operand<opIdx = 1, parent = #{{.*}}, kWidth = 4>
// CHECK-LABEL: func.func @square(
// CHECK: %[[V:.*]] = tessel.load
// CHECK: %[[CA:.*]] = tessel.convert_layout %[[V]] : tensor<64x64xf16, #{{.*}}> -> tensor<64x64xf16, #[[A]]>
// CHECK: %[[CB:.*]] = tessel.convert_layout %[[V]] : tensor<64x64xf16, #{{.*}}> -> tensor<64x64xf16, #[[B]]>
// CHECK: tessel.dot %[[CA]], %[[CB]], %{{.*}} : tensor<64x64xf16, #[[A]]> * tensor<64x64xf16, #[[B]]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @square(%a: !tessel.ptr<f16>, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
    %ia = tessel.reshape %ra : tensor<4096xi32> -> tensor<64x64xi32>
    %pa = tessel.splat %a : tensor<64x64x!tessel.ptr<f16>>
    %qa = tessel.addptr %pa, %ia : tensor<64x64x!tessel.ptr<f16>>, tensor<64x64xi32>
    %va = tessel.load %qa : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %d = tessel.dot %va, %va, %zero : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ia : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    tessel.store %qc, %d : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// A scan that cannot share its operand's layout (another scan walks the
// other axis) reads a copy per operand slot, even when both slots hold one
// tile, and its users read copies of its results.
// CHECK-LABEL: func.func @two_scans_two_operands
// CHECK: tessel.scan %{{.*}} {axis = 0 : i32}
// CHECK: %[[X0:.*]] = tessel.convert_layout %arg0
// CHECK: %[[X1:.*]] = tessel.convert_layout %arg0
// CHECK: %[[S:.*]]:2 = tessel.scan %[[X0]], %[[X1]] {axis = 1 : i32}
// CHECK-DAG: tessel.convert_layout %[[S]]#0
// CHECK-DAG: tessel.convert_layout %[[S]]#1
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32} {
  func.func @two_scans_two_operands(%x: tensor<16x16xf32>) {
    %a = tessel.scan %x {axis = 0 : i32} : (tensor<16x16xf32>) -> tensor<16x16xf32> {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      tessel.yield %s : f32
    }
    %b:2 = tessel.scan %x, %x {axis = 1 : i32} : (tensor<16x16xf32>, tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
    ^bb0(%l: f32, %m: f32, %r: f32, %q: f32):
      %s = arith.addf %l, %r : f32
      %t = arith.maximumf %m, %q : f32
      tessel.yield %s, %t : f32, f32
    }
    %c = arith.addf %a, %b#0 : tensor<16x16xf32>
    %d = arith.addf %c, %b#1 : tensor<16x16xf32>
    return
  }
}

// -----

// One tile as a dot's A, B and accumulator: the operand slots read
// conversions of their own; the accumulator's slot takes the dot's layout
// (the rule names the accumulator's slot, not every slot holding the tile).
// CHECK-LABEL: func.func @a_is_acc(
// CHECK: %[[V:.*]] = tessel.load {{.*}} -> tensor<16x16xf32, #[[MFMA:mfma[0-9]*]]>
// CHECK: %[[CA:.*]] = tessel.convert_layout %[[V]] : tensor<16x16xf32, #[[MFMA]]> -> tensor<16x16xf32, #[[A:dot_op[0-9]*]]>
// CHECK: %[[CB:.*]] = tessel.convert_layout %[[V]] : tensor<16x16xf32, #[[MFMA]]> -> tensor<16x16xf32, #[[B:dot_op[0-9]*]]>
// CHECK: tessel.dot %[[CA]], %[[CB]], %[[V]] : tensor<16x16xf32, #[[A]]> * tensor<16x16xf32, #[[B]]> -> tensor<16x16xf32, #[[MFMA]]>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @a_is_acc(%a: !tessel.ptr<f32>, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %ia = tessel.reshape %ra : tensor<256xi32> -> tensor<16x16xi32>
    %pa = tessel.splat %a : tensor<16x16x!tessel.ptr<f32>>
    %qa = tessel.addptr %pa, %ia : tensor<16x16x!tessel.ptr<f32>>, tensor<16x16xi32>
    %va = tessel.load %qa : (tensor<16x16x!tessel.ptr<f32>>) -> tensor<16x16xf32>
    %d = tessel.dot %va, %va, %va : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    %pc = tessel.splat %c : tensor<16x16x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ia : tensor<16x16x!tessel.ptr<f32>>, tensor<16x16xi32>
    tessel.store %qc, %d : (tensor<16x16x!tessel.ptr<f32>>, tensor<16x16xf32>) -> ()
    return
  }
}
