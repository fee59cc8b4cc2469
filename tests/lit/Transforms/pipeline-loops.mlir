// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-pipeline-loops --tessel-plan-lds | FileCheck %s

// num_stages = 2: each operand has one LDS slot. Before the loop the first
// tiles (loaded in one branch on whether the loop runs) go into slot 0,
// then a barrier. In the loop: the next tiles load
// first, the dot reads its operands from LDS in the operand layouts, a
// barrier (every thread has read the slot), the next tiles are written, a
// barrier. The loop no longer carries the tiles: only the accumulator.
// The plan: the two buffers (4096 bytes each, the tiles' bytes: a swizzle
// as conflict-free as a pad, so no padding) live over the loop; the reshape
// after it (16896 bytes) reuses their bytes.
// CHECK: module attributes {{.*}}tessel.lds_bytes = 16896 : i64
// CHECK-LABEL: func.func @k_loop(
// CHECK: %[[F:.*]]:2 = scf.if
// CHECK: tessel.load
// CHECK: tessel.load
// CHECK: %[[BA:.*]] = tessel.local_alloc {tessel.lds_offset = 0 : i64} : <1x64x32xf16, order [1, 0], pad 0, swizzle [4, 2, 8]>
// CHECK: tessel.local_store %[[F]]#0, %[[BA]][%[[C0:[0-9a-z_]+]]]
// CHECK: %[[BB:.*]] = tessel.local_alloc {tessel.lds_offset = 4096 : i64} : <1x32x64xf16, order [0, 1], pad 0, swizzle [4, 2, 8]>
// CHECK: tessel.local_store %[[F]]#1, %[[BB]][%[[C0]]]
// CHECK: tessel.barrier
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<64x64xf32, #mfma>)
// CHECK: %[[N:.*]]:2 = scf.if
// CHECK: tessel.load
// CHECK: tessel.load
// CHECK: %[[OA:.*]] = tessel.local_load %[[BA]][%[[C0]]] : <1x64x32xf16, order [1, 0], pad 0, swizzle [4, 2, 8]> -> tensor<64x32xf16, #dot_op>
// CHECK: %[[OB:.*]] = tessel.local_load %[[BB]][%[[C0]]] : <1x32x64xf16, order [0, 1], pad 0, swizzle [4, 2, 8]> -> tensor<32x64xf16, #dot_op1>
// CHECK: %[[D:.*]] = tessel.dot %[[OA]], %[[OB]], %[[ACC]]
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.local_store %[[N]]#0, %[[BA]][%[[C0]]]
// CHECK-NEXT: tessel.local_store %[[N]]#1, %[[BB]][%[[C0]]]
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: scf.yield %[[D]] : tensor<64x64xf32, #mfma>
// CHECK: tessel.reshape %{{.*}} {{{.*}}tessel.lds_offset = 0 : i64}
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @k_loop(%a: !tessel.ptr<f16>, %b: !tessel.ptr<f16>, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %ra = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
    %ia = tessel.reshape %ra : tensor<2048xi32> -> tensor<64x32xi32>
    %ib = tessel.reshape %ra : tensor<2048xi32> -> tensor<32x64xi32>
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

// num_stages = 3: two slots per operand. The slot to read is carried (from
// 0); each iteration writes the next tile into the slot after it (wrapping
// at 2) and needs only the barrier after the writes. The tile two steps
// ahead is still carried in registers (loaded one iteration, written to LDS
// the next).
// The reshape's scratch (8448 bytes) stays reserved until the prologue's
// barrier (its trailing barrier is not emitted), so the slots start after it
// (2 x 4096 bytes, swizzled); the reshape after the loop (16896) is larger.
// CHECK: module attributes {{.*}}tessel.lds_bytes = 16896 : i64
// CHECK-LABEL: func.func @two_slots(
// CHECK: %[[FIRST:.*]] = scf.if
// CHECK: tessel.load
// CHECK: %[[SECOND:.*]] = scf.if
// CHECK: tessel.load
// CHECK: %[[BA:.*]] = tessel.local_alloc {tessel.lds_offset = 8448 : i64} : <2x64x32xf16, order [1, 0], pad 0, swizzle [4, 2, 8]>
// CHECK: tessel.local_store %[[FIRST]], %[[BA]][%[[C0:[0-9a-z_]+]]]
// CHECK: tessel.barrier
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[AHEAD:.*]] = %[[SECOND]], %[[READ:.*]] = %[[C0]])
// CHECK: %[[NEW:.*]] = scf.if
// CHECK: tessel.load
// CHECK: %[[OA:.*]] = tessel.local_load %[[BA]][%[[READ]]]
// CHECK: %[[D:.*]] = tessel.dot %[[OA]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[READ]], %{{.*}} : i32
// CHECK: %[[WRAPS:.*]] = arith.cmpi eq, %[[NEXT]], %{{.*}} : i32
// CHECK: %[[WRITE:.*]] = arith.select %[[WRAPS]], %[[C0]], %[[NEXT]] : i32
// CHECK-NOT: tessel.barrier
// CHECK: tessel.local_store %[[AHEAD]], %[[BA]][%[[WRITE]]]
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: scf.yield %[[D]], %[[NEW]], %[[WRITE]]
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 3 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @two_slots(%a: !tessel.ptr<f16>, %b: tensor<32x64xf16>, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %ra = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
    %ia = tessel.reshape %ra : tensor<2048xi32> -> tensor<64x32xi32>
    %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
    %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %ksa = tessel.splat %k : tensor<64x32xi32>
      %oa = arith.addi %ia, %ksa : tensor<64x32xi32>
      %qa = tessel.addptr %pa, %oa : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
      %d = tessel.dot %ta, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
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

// Tutorial 03's blocks, 128x128x64 f16 over 4 waves: the staged operand
// buffers take exactly the tiles' bytes (16384 each), swizzled (chunks of
// 4 halves XOR'ed with the row's phase) instead of padded (a pad of 2 or 4
// halves a row made them 34304 bytes: one workgroup of 4 waves per CU on
// gfx942 where Triton's 32768 fit two).
// CHECK-LABEL: func.func @tutorial_blocks(
// CHECK: tessel.local_alloc {tessel.lds_offset = 0 : i64} : <1x128x64xf16, order [1, 0], pad 0, swizzle [4, 1, 16]>
// CHECK: tessel.local_alloc {tessel.lds_offset = 16384 : i64} : <1x64x128xf16, order [0, 1], pad 0, swizzle [4, 1, 16]>
// CHECK-NOT: pad {{[1-9]}}
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @tutorial_blocks(%a: !tessel.ptr<f16>, %b: !tessel.ptr<f16>, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
    %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
    %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
    %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
    %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
    %acc = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ksa = tessel.splat %k : tensor<128x64xi32>
      %oa = arith.addi %ia, %ksa : tensor<128x64xi32>
      %qa = tessel.addptr %pa, %oa : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
      %ta = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
      %ksb = tessel.splat %k : tensor<64x128xi32>
      %ob = arith.addi %ib, %ksb : tensor<64x128xi32>
      %qb = tessel.addptr %pb, %ob : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
      %tb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    tessel.store %pc, %acc : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}
