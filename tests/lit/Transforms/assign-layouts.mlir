// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts | FileCheck %s

// n % 16 == 0 and 16-byte aligned pointers: 4 f32 per thread per access.
// CHECK: #[[B:.*]] = #tessel.blocked<sizePerThread = [4], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
// CHECK-LABEL: func.func @vector_add(
// CHECK: tessel.load {{.*}} {vec = 4 : i32} : (tensor<1024x!tessel.ptr<f32>, #[[B]]>
// CHECK: tessel.store {{.*}} {vec = 4 : i32}
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @vector_add(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %y: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %n: i32 {tessel.divisibility = 16 : i32}) {
    %pid = tessel.program_id 0 : i32
    %c = arith.constant 1024 : i32
    %base = arith.muli %pid, %c : i32
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %bs = tessel.splat %base : tensor<1024xi32>
    %offs = arith.addi %bs, %r : tensor<1024xi32>
    %ns = tessel.splat %n : tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
    %xs = tessel.splat %x : tensor<1024x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %ys = tessel.splat %y : tensor<1024x!tessel.ptr<f32>>
    %yp = tessel.addptr %ys, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %os = tessel.splat %out : tensor<1024x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %a = tessel.load %xp, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
    %b = tessel.load %yp, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
    %s = arith.addf %a, %b : tensor<1024xf32>
    tessel.store %op, %s, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
    return
  }
}

// -----

// Nothing known about n or the pointers: one element per access.
// CHECK-LABEL: func.func @vector_add_unaligned(
// CHECK: tessel.load
// CHECK-NOT: vec = 
// CHECK: tessel.store
// CHECK-NOT: vec = 
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @vector_add_unaligned(%x: !tessel.ptr<f32>, %y: !tessel.ptr<f32>, %out: !tessel.ptr<f32>, %n: i32) {
    %pid = tessel.program_id 0 : i32
    %c = arith.constant 1024 : i32
    %base = arith.muli %pid, %c : i32
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %bs = tessel.splat %base : tensor<1024xi32>
    %offs = arith.addi %bs, %r : tensor<1024xi32>
    %ns = tessel.splat %n : tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
    %xs = tessel.splat %x : tensor<1024x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %ys = tessel.splat %y : tensor<1024x!tessel.ptr<f32>>
    %yp = tessel.addptr %ys, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %os = tessel.splat %out : tensor<1024x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %a = tessel.load %xp, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
    %b = tessel.load %yp, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
    %s = arith.addf %a, %b : tensor<1024xf32>
    tessel.store %op, %s, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
    return
  }
}

// -----

// One range used as rows and as columns is computed once per use, each in
// the slice of the 2-D layout; rows of 64 f32 move 4 at a time.
// CHECK: #[[B2:.*]] = #tessel.blocked<sizePerThread = [1, 4], threadsPerWave = [4, 16], wavesPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[S0:.*]] = #tessel.slice<dim = 0, parent = #[[B2]]>
// CHECK-DAG: #[[S1:.*]] = #tessel.slice<dim = 1, parent = #[[B2]]>
// CHECK-LABEL: func.func @copy2d(
// CHECK-DAG: tessel.make_range {{.*}} : tensor<64xi32, #[[S0]]>
// CHECK-DAG: tessel.make_range {{.*}} : tensor<64xi32, #[[S1]]>
// CHECK: tessel.load {{.*}} {vec = 4 : i32}
// CHECK: tessel.store {{.*}} {vec = 4 : i32}
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32} {
  func.func @copy2d(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %y: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %c64 = arith.constant dense<64> : tensor<64x1xi32>
    %rows = tessel.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %rows, %c64 : tensor<64x1xi32>
    %rowb = tessel.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x64xi32>
    %cols = tessel.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %colb = tessel.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
    %idx = arith.addi %rowb, %colb : tensor<64x64xi32>
    %xs = tessel.splat %x : tensor<64x64x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %idx : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    %ys = tessel.splat %y : tensor<64x64x!tessel.ptr<f32>>
    %yp = tessel.addptr %ys, %idx : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    %v = tessel.load %xp : (tensor<64x64x!tessel.ptr<f32>>) -> tensor<64x64xf32>
    tessel.store %yp, %v : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// A loaded tile (not cheap to recompute) used both as rows and as columns:
// the second use gets a copy converted through LDS.
// CHECK-LABEL: func.func @outer(
// CHECK: %[[V:.*]] = tessel.load
// CHECK: tessel.expand_dims %[[V]] {axis = 1 : i32}
// CHECK: %[[C:.*]] = tessel.convert_layout %[[V]]
// CHECK: tessel.expand_dims %[[C]] {axis = 0 : i32}
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32} {
  func.func @outer(%x: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %xs = tessel.splat %x : tensor<64x!tessel.ptr<i32>>
    %xp = tessel.addptr %xs, %r : tensor<64x!tessel.ptr<i32>>, tensor<64xi32>
    %v = tessel.load %xp : (tensor<64x!tessel.ptr<i32>>) -> tensor<64xi32>
    %a = tessel.expand_dims %v {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %b = tessel.expand_dims %v {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %ab = tessel.broadcast %a : tensor<64x1xi32> -> tensor<64x64xi32>
    %bb = tessel.broadcast %b : tensor<1x64xi32> -> tensor<64x64xi32>
    %s = arith.addi %ab, %bb : tensor<64x64xi32>
    %ys = tessel.splat %x : tensor<64x64x!tessel.ptr<i32>>
    %yp = tessel.addptr %ys, %s : tensor<64x64x!tessel.ptr<i32>>, tensor<64x64xi32>
    tessel.store %yp, %s : (tensor<64x64x!tessel.ptr<i32>>, tensor<64x64xi32>) -> ()
    return
  }
}

// -----

// One loaded row broadcast to 16 and to 2048 rows: one layout cannot spread
// both, so the second broadcast gets a converted copy; the load itself is
// never recomputed.
// CHECK-LABEL: func.func @two_heights(
// CHECK-COUNT-1: tessel.load
// CHECK-NOT: tessel.load
// CHECK: tessel.broadcast
// CHECK: tessel.convert_layout
// CHECK: tessel.broadcast
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32} {
  func.func @two_heights(%x: !tessel.ptr<f32>, %y: !tessel.ptr<f32>, %z: !tessel.ptr<f32>) {
    %c = tessel.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
    %xs = tessel.splat %x : tensor<4x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %c : tensor<4x!tessel.ptr<f32>>, tensor<4xi32>
    %row = tessel.load %xp : (tensor<4x!tessel.ptr<f32>>) -> tensor<4xf32>
    %r2 = tessel.expand_dims %row {axis = 0 : i32} : tensor<4xf32> -> tensor<1x4xf32>
    %a = tessel.broadcast %r2 : tensor<1x4xf32> -> tensor<16x4xf32>
    %b = tessel.broadcast %r2 : tensor<1x4xf32> -> tensor<2048x4xf32>
    %ys = tessel.splat %y : tensor<16x4x!tessel.ptr<f32>>
    tessel.store %ys, %a : (tensor<16x4x!tessel.ptr<f32>>, tensor<16x4xf32>) -> ()
    %zs = tessel.splat %z : tensor<2048x4x!tessel.ptr<f32>>
    tessel.store %zs, %b : (tensor<2048x4x!tessel.ptr<f32>>, tensor<2048x4xf32>) -> ()
    return
  }
}
