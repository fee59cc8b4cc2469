// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops | FileCheck %s

// Late staged loads (tessel.late_staged_loads: compileTrace's second compile
// when the first spills): the staged tiles but the first load after the
// products, their addresses made at the top with the first's; the slot
// stores take them after the barrier.
// CHECK: module attributes {tessel.late_staged_loads, tessel.late_staged_loads_apply,
// CHECK-LABEL: func.func @late(
// CHECK: scf.for
// CHECK: %[[A:.*]] = scf.if
// CHECK-NEXT: tessel.buffer_load %arg0
// CHECK-NOT: tessel.buffer_load
// CHECK: tessel.dot
// CHECK-NEXT: %[[B:.*]] = scf.if
// CHECK-NEXT: tessel.buffer_load %arg1
// CHECK: tessel.barrier
// CHECK-NEXT: tessel.local_store %[[A]]
// CHECK-NEXT: tessel.local_store %[[B]]
// CHECK-NEXT: tessel.barrier
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32, tessel.late_staged_loads} {
  func.func @late(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %bp: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %c2048 = arith.constant 2048 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0) -> (tensor<64x64xf32>, i32) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
      %ia = tessel.reshape %ra : tensor<2048xi32> -> tensor<64x32xi32>
      %ib = tessel.reshape %ra : tensor<2048xi32> -> tensor<32x64xi32>
      %os = tessel.splat %off : tensor<64x32xi32>
      %o = arith.addi %ia, %os : tensor<64x32xi32>
      %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
      %obs = tessel.splat %off : tensor<32x64xi32>
      %ob = arith.addi %ib, %obs : tensor<32x64xi32>
      %pb = tessel.splat %bp : tensor<32x64x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ob : tensor<32x64x!tessel.ptr<f16>>, tensor<32x64xi32>
      %tb = tessel.load %qb : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %next = arith.addi %off, %c2048 : i32
      scf.yield %d, %next : tensor<64x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// Without the request: one branch loads both before the products, and the
// module says the request would move loads.
// CHECK: module attributes {tessel.late_staged_loads_apply,
// CHECK-LABEL: func.func @early(
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NEXT: tessel.buffer_load %arg0
// CHECK-NEXT: tessel.buffer_load %arg1
// CHECK: tessel.dot
// CHECK-NOT: tessel.buffer_load
// CHECK: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32} {
  func.func @early(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %bp: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %c2048 = arith.constant 2048 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0) -> (tensor<64x64xf32>, i32) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
      %ia = tessel.reshape %ra : tensor<2048xi32> -> tensor<64x32xi32>
      %ib = tessel.reshape %ra : tensor<2048xi32> -> tensor<32x64xi32>
      %os = tessel.splat %off : tensor<64x32xi32>
      %o = arith.addi %ia, %os : tensor<64x32xi32>
      %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
      %obs = tessel.splat %off : tensor<32x64xi32>
      %ob = arith.addi %ib, %obs : tensor<32x64xi32>
      %pb = tessel.splat %bp : tensor<32x64x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ob : tensor<32x64x!tessel.ptr<f16>>, tensor<32x64xi32>
      %tb = tessel.load %qb : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %next = arith.addi %off, %c2048 : i32
      scf.yield %d, %next : tensor<64x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// A store in the body: loads moved past it might read what it wrote, so
// none moves.
// CHECK-NOT: tessel.late_staged_loads_apply
// CHECK-LABEL: func.func @writes(
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NEXT: tessel.buffer_load %arg0
// CHECK-NEXT: tessel.buffer_load %arg1
// CHECK: tessel.dot
// CHECK-NOT: tessel.buffer_load
// CHECK: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32, tessel.late_staged_loads} {
  func.func @writes(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %bp: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %c2048 = arith.constant 2048 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0) -> (tensor<64x64xf32>, i32) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
      %ia = tessel.reshape %ra : tensor<2048xi32> -> tensor<64x32xi32>
      %ib = tessel.reshape %ra : tensor<2048xi32> -> tensor<32x64xi32>
      %os = tessel.splat %off : tensor<64x32xi32>
      %o = arith.addi %ia, %os : tensor<64x32xi32>
      %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
      %obs = tessel.splat %off : tensor<32x64xi32>
      %ob = arith.addi %ib, %obs : tensor<32x64xi32>
      %pb = tessel.splat %bp : tensor<32x64x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ob : tensor<32x64x!tessel.ptr<f16>>, tensor<32x64xi32>
      %tb = tessel.load %qb : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %next = arith.addi %off, %c2048 : i32
      %pz = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
      tessel.store %pz, %d : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
      scf.yield %d, %next : tensor<64x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// B's offset carried on its own, its update the body's first op: the late
// load's address is made from that update, after it (building it at the
// body's begin, before the op it reads, was a dominance error).
// CHECK-LABEL: func.func @late_update_first(
// CHECK: scf.for {{.*}} iter_args({{.*}}, %[[OFFB:.*]] = %{{.*}}) ->
// CHECK: %[[NEXTB:.*]] = arith.addi %[[OFFB]], %c2048_i32 : i32
// CHECK: tessel.splat %[[NEXTB]] : tensor<32x64xi32
// CHECK: tessel.dot
// CHECK: scf.if
// CHECK-NEXT: tessel.buffer_load %arg1
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32, tessel.late_staged_loads} {
  func.func @late_update_first(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %bp: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %c2048 = arith.constant 2048 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %acc:3 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0, %offb = %c0) -> (tensor<64x64xf32>, i32, i32) : i32 {
      %nextb = arith.addi %offb, %c2048 : i32
      %ra = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
      %ia = tessel.reshape %ra : tensor<2048xi32> -> tensor<64x32xi32>
      %ib = tessel.reshape %ra : tensor<2048xi32> -> tensor<32x64xi32>
      %os = tessel.splat %off : tensor<64x32xi32>
      %o = arith.addi %ia, %os : tensor<64x32xi32>
      %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
      %obs = tessel.splat %offb : tensor<32x64xi32>
      %ob = arith.addi %ib, %obs : tensor<32x64xi32>
      %pb = tessel.splat %bp : tensor<32x64x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ob : tensor<32x64x!tessel.ptr<f16>>, tensor<32x64xi32>
      %tb = tessel.load %qb : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %next = arith.addi %off, %c2048 : i32
      scf.yield %d, %next, %nextb : tensor<64x64xf32>, i32, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}
