// RUN: tessel-opt %s -split-input-file --tessel-pipeline-loads --tessel-assign-layouts --tessel-use-buffer-ops --tessel-stage-operands --tessel-plan-lds | FileCheck %s

// gfx950, num_stages = 2, A [64, 32] and B stored [N, K] (both loaded 8
// halves a lane along K, the rows of their slots): both load straight into
// LDS, into two slots each (2 x 4096 bytes). Before the loop the first tiles
// load into slot 0 in the guard pipeline-loads made; then the wait for the
// loads to LDS and a barrier. In the loop: the slot to write is computed
// first, the operands read slot `read`, then the guard loads the next tiles
// into slot `write` (after the reads, which need not wait for them; the
// offsets are the tile made before the loop plus the step's scalar), the
// dot, the wait and one barrier. Nothing carries the tiles any more.
// CHECK: module attributes {{.*}}tessel.lds_bytes = 16896 : i64
// CHECK-LABEL: func.func @k_loop_bt(
// CHECK: %[[BA:.*]] = tessel.local_alloc {tessel.lds_offset = 0 : i64} : <2x64x32xf16, order [1, 0], pad 0, swizzle [8, 2, 4]>
// CHECK: %[[BB:.*]] = tessel.local_alloc {tessel.lds_offset = 8192 : i64} : <2x32x64xf16, order [0, 1], pad 0, swizzle [8, 2, 4]>
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: tessel.buffer_load_to_local %{{.*}}[%{{.*}}] into %[[BA]][%[[C0:.*]]] {vec = 8 : i32}
// CHECK-NEXT: tessel.buffer_load_to_local %{{.*}}[%{{.*}}] into %[[BB]][%[[C0]]] {vec = 8 : i32}
// CHECK: tessel.async_wait
// CHECK-NEXT: tessel.barrier
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[READ:.*]] = %[[C0]]) -> (tensor<64x64xf32, #mfma>, i32)
// CHECK: %[[NEXT:.*]] = arith.addi %[[READ]], %{{.*}} : i32
// CHECK: %[[WRITE:.*]] = arith.select %{{.*}}, %[[C0]], %[[NEXT]] : i32
// CHECK: %[[OA:.*]] = tessel.local_load %[[BA]][%[[READ]]]
// CHECK-NEXT: %[[OB:.*]] = tessel.local_load %[[BB]][%[[READ]]]
// CHECK-NEXT: scf.if
// CHECK-NEXT: tessel.buffer_load_to_local %{{.*}}[%{{.*}} + %{{.*}}] into %[[BA]][%[[WRITE]]] {vec = 8 : i32}
// CHECK-NEXT: tessel.buffer_load_to_local %{{.*}}[%{{.*}} + %{{.*}}] into %[[BB]][%[[WRITE]]] {vec = 8 : i32}
// CHECK: tessel.dot %[[OA]], %[[OB]], %[[ACC]]
// CHECK-NEXT: tessel.async_wait
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: scf.yield %{{.*}}, %[[WRITE]] : tensor<64x64xf32, #mfma>, i32
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32, tessel.lds_limit = 163840 : i64} {
  func.func @k_loop_bt(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %r64 = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %r32 = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
    %rows = tessel.expand_dims %r64 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %s32 = arith.constant dense<32> : tensor<64x1xi32>
    %rowoff = arith.muli %rows, %s32 : tensor<64x1xi32>
    %rowb = tessel.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x32xi32>
    %cols = tessel.expand_dims %r32 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %colb = tessel.broadcast %cols : tensor<1x32xi32> -> tensor<64x32xi32>
    %ia = arith.addi %rowb, %colb : tensor<64x32xi32>
    %krows = tessel.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %kb = tessel.broadcast %krows : tensor<32x1xi32> -> tensor<32x64xi32>
    %ncols = tessel.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %s32n = arith.constant dense<32> : tensor<1x64xi32>
    %noff = arith.muli %ncols, %s32n : tensor<1x64xi32>
    %nb = tessel.broadcast %noff : tensor<1x64xi32> -> tensor<32x64xi32>
    %ib = arith.addi %kb, %nb : tensor<32x64xi32>
    %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
    %pb = tessel.splat %b : tensor<32x64x!tessel.ptr<f16>>
    %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %ksa = tessel.splat %k : tensor<64x32xi32>
      %oa = arith.addi %ia, %ksa : tensor<64x32xi32>
      %qa = tessel.addptr %pa, %oa : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
      %ksb = tessel.splat %k : tensor<32x64xi32>
      %ob = arith.addi %ib, %ksb : tensor<32x64xi32>
      %qb = tessel.addptr %pb, %ob : tensor<32x64x!tessel.ptr<f16>>, tensor<32x64xi32>
      %tb = tessel.load %qb : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
    %ic = tessel.reshape %rc : tensor<4096xi32> -> tensor<64x64xi32>
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    tessel.store %qc, %acc : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// B loaded along N but read along K (its slot is K-major): it cannot load
// into LDS, and then neither does A (all or none: a register-staged operand
// in two slots costs an address op per swizzled pattern each iteration).
// Both go through registers into one slot each, two barriers a step.
// CHECK-LABEL: func.func @k_loop(
// CHECK-NOT: tessel.buffer_load_to_local
// CHECK: tessel.local_alloc {{.*}} : <1x64x32xf16
// CHECK: tessel.local_alloc {{.*}} : <1x32x64xf16
// CHECK: scf.for
// CHECK: tessel.dot
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.local_store
// CHECK-NEXT: tessel.local_store
// CHECK-NEXT: tessel.barrier
// CHECK-NOT: tessel.buffer_load_to_local
// CHECK-NOT: tessel.async_wait
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32, tessel.lds_limit = 163840 : i64} {
  func.func @k_loop(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %r64 = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %r32 = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
    %rows = tessel.expand_dims %r64 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %s32 = arith.constant dense<32> : tensor<64x1xi32>
    %rowoff = arith.muli %rows, %s32 : tensor<64x1xi32>
    %rowb = tessel.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x32xi32>
    %cols = tessel.expand_dims %r32 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %colb = tessel.broadcast %cols : tensor<1x32xi32> -> tensor<64x32xi32>
    %ia = arith.addi %rowb, %colb : tensor<64x32xi32>
    %krows = tessel.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %s64 = arith.constant dense<64> : tensor<32x1xi32>
    %koff = arith.muli %krows, %s64 : tensor<32x1xi32>
    %kb = tessel.broadcast %koff : tensor<32x1xi32> -> tensor<32x64xi32>
    %ncols = tessel.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %nb = tessel.broadcast %ncols : tensor<1x64xi32> -> tensor<32x64xi32>
    %ib = arith.addi %kb, %nb : tensor<32x64xi32>
    %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
    %pb = tessel.splat %b : tensor<32x64x!tessel.ptr<f16>>
    %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %ksa = tessel.splat %k : tensor<64x32xi32>
      %oa = arith.addi %ia, %ksa : tensor<64x32xi32>
      %qa = tessel.addptr %pa, %oa : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
      %k64 = arith.muli %k, %c32 : i32
      %ksb = tessel.splat %k64 : tensor<32x64xi32>
      %ob = arith.addi %ib, %ksb : tensor<32x64xi32>
      %qb = tessel.addptr %pb, %ob : tensor<32x64x!tessel.ptr<f16>>, tensor<32x64xi32>
      %tb = tessel.load %qb : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
    %ic = tessel.reshape %rc : tensor<4096xi32> -> tensor<64x64xi32>
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    tessel.store %qc, %acc : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// The transposed-B loop on gfx942, whose loads to LDS move 4 bytes a lane:
// registers and one slot each, as before.
// CHECK-LABEL: func.func @k_loop_gfx942(
// CHECK-NOT: tessel.buffer_load_to_local
// CHECK: tessel.local_alloc {{.*}} : <1x64x32xf16
// CHECK: tessel.local_alloc {{.*}} : <1x32x64xf16
// CHECK: scf.for
// CHECK: tessel.dot
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.local_store
// CHECK-NEXT: tessel.local_store
// CHECK-NEXT: tessel.barrier
// CHECK-NOT: tessel.buffer_load_to_local
// CHECK-NOT: tessel.async_wait
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @k_loop_gfx942(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %r64 = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %r32 = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
    %rows = tessel.expand_dims %r64 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %s32 = arith.constant dense<32> : tensor<64x1xi32>
    %rowoff = arith.muli %rows, %s32 : tensor<64x1xi32>
    %rowb = tessel.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x32xi32>
    %cols = tessel.expand_dims %r32 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %colb = tessel.broadcast %cols : tensor<1x32xi32> -> tensor<64x32xi32>
    %ia = arith.addi %rowb, %colb : tensor<64x32xi32>
    %krows = tessel.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %kb = tessel.broadcast %krows : tensor<32x1xi32> -> tensor<32x64xi32>
    %ncols = tessel.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %s32n = arith.constant dense<32> : tensor<1x64xi32>
    %noff = arith.muli %ncols, %s32n : tensor<1x64xi32>
    %nb = tessel.broadcast %noff : tensor<1x64xi32> -> tensor<32x64xi32>
    %ib = arith.addi %kb, %nb : tensor<32x64xi32>
    %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
    %pb = tessel.splat %b : tensor<32x64x!tessel.ptr<f16>>
    %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %ksa = tessel.splat %k : tensor<64x32xi32>
      %oa = arith.addi %ia, %ksa : tensor<64x32xi32>
      %qa = tessel.addptr %pa, %oa : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
      %ksb = tessel.splat %k : tensor<32x64xi32>
      %ob = arith.addi %ib, %ksb : tensor<32x64xi32>
      %qb = tessel.addptr %pb, %ob : tensor<32x64x!tessel.ptr<f16>>, tensor<32x64xi32>
      %tb = tessel.load %qb : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
    %ic = tessel.reshape %rc : tensor<4096xi32> -> tensor<64x64xi32>
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    tessel.store %qc, %acc : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}
