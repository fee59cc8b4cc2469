// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops | FileCheck %s
// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops=direct-to-lds=1 | FileCheck %s --check-prefix=FORCED

// tessel-pipeline-loops without direct-to-lds, as the runtime compiles with
// TESSEL_DIRECT_TO_LDS unset: loads to LDS where the two slots keep 4 waves
// a SIMD (kDirectLdsMinWaves), unless the module says otherwise.

// gfx950, 4 waves, a 64x32 f16 tile in two slots (8 KiB): 160 KiB of LDS a
// CU holds 20 such workgroups, 20 waves a SIMD: straight into LDS.
// CHECK-LABEL: func.func @direct(
// CHECK: tessel.local_alloc : <2x64x32xf16
// CHECK: scf.for
// CHECK: tessel.async_wait
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.buffer_load_to_local
// CHECK-NOT: tessel.local_store
// CHECK: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @direct(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: tensor<32x64xf16>, %c: !tessel.ptr<f32>, %n: i32, %K: i32 {tessel.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %zh = arith.constant dense<0.0> : tensor<64x32xf16>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0) -> (tensor<64x64xf32>, i32) : i32 {
      %row = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
      %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
      %c32s = tessel.splat %c32 : tensor<64x1xi32>
      %rowk = arith.muli %rowe, %c32s : tensor<64x1xi32>
      %rowb = tessel.broadcast %rowk : tensor<64x1xi32> -> tensor<64x32xi32>
      %col = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
      %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
      %colb = tessel.broadcast %cole : tensor<1x32xi32> -> tensor<64x32xi32>
      %ia = arith.addi %rowb, %colb : tensor<64x32xi32>
      %left = arith.subi %K, %k : i32
      %ls = tessel.splat %left : tensor<64x32xi32>
      %m = arith.cmpi slt, %colb, %ls : tensor<64x32xi32>
      %os = tessel.splat %k : tensor<64x32xi32>
      %o = arith.addi %ia, %os : tensor<64x32xi32>
      %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa, %m, other %zh : (tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi1>, tensor<64x32xf16>) -> tensor<64x32xf16>
      %d = tessel.dot %ta, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %next = arith.addi %off, %c32 : i32
      scf.yield %d, %next : tensor<64x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// The same with an offset divided by an argument (times 64: still 16-byte
// groups): loads to LDS take no
// branch, so their address ops run for the iteration past the last one,
// where the divisor may be 0; the division is not speculated: through
// registers, asked for or not.
// CHECK-LABEL: func.func @division(
// CHECK: tessel.local_alloc : <1x64x32xf16
// CHECK-NOT: tessel.buffer_load_to_local
// CHECK: scf.yield
// FORCED-LABEL: func.func @division(
// FORCED: tessel.local_alloc : <1x64x32xf16
// FORCED-NOT: tessel.buffer_load_to_local
// FORCED: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @division(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: tensor<32x64xf16>, %c: !tessel.ptr<f32>, %n: i32, %K: i32 {tessel.divisibility = 16 : i32}, %den: i32) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %zh = arith.constant dense<0.0> : tensor<64x32xf16>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0) -> (tensor<64x64xf32>, i32) : i32 {
      %row = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
      %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
      %c32s = tessel.splat %c32 : tensor<64x1xi32>
      %rowk = arith.muli %rowe, %c32s : tensor<64x1xi32>
      %rowb = tessel.broadcast %rowk : tensor<64x1xi32> -> tensor<64x32xi32>
      %col = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
      %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
      %colb = tessel.broadcast %cole : tensor<1x32xi32> -> tensor<64x32xi32>
      %ia = arith.addi %rowb, %colb : tensor<64x32xi32>
      %left = arith.subi %K, %k : i32
      %ls = tessel.splat %left : tensor<64x32xi32>
      %m = arith.cmpi slt, %colb, %ls : tensor<64x32xi32>
      %kq = arith.divsi %k, %den : i32
      %c64 = arith.constant 64 : i32
      %kd = arith.muli %kq, %c64 : i32
      %os = tessel.splat %kd : tensor<64x32xi32>
      %o = arith.addi %ia, %os : tensor<64x32xi32>
      %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa, %m, other %zh : (tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi1>, tensor<64x32xf16>) -> tensor<64x32xf16>
      %d = tessel.dot %ta, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %next = arith.addi %off, %c32 : i32
      scf.yield %d, %next : tensor<64x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// A 128x128 f16 tile: two slots take 64 KiB, 2 workgroups of 4 waves a CU,
// 2 waves a SIMD: through registers, one slot.
// Asked for (direct-to-lds=1, TESSEL_DIRECT_TO_LDS=1), it loads into LDS.
// CHECK-LABEL: func.func @big(
// FORCED-LABEL: func.func @big(
// FORCED: tessel.local_alloc : <2x128x128xf16
// FORCED: tessel.buffer_load_to_local
// CHECK: tessel.local_alloc : <1x128x128xf16
// CHECK-NOT: tessel.buffer_load_to_local
// CHECK: scf.for
// CHECK: tessel.local_store
// CHECK-NOT: tessel.buffer_load_to_local
// CHECK: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @big(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: tensor<128x64xf16>, %c: !tessel.ptr<f32>, %n: i32, %K: i32 {tessel.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 128 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %zh = arith.constant dense<0.0> : tensor<128x128xf16>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0) -> (tensor<128x64xf32>, i32) : i32 {
      %row = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
      %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
      %c32s = tessel.splat %c32 : tensor<128x1xi32>
      %rowk = arith.muli %rowe, %c32s : tensor<128x1xi32>
      %rowb = tessel.broadcast %rowk : tensor<128x1xi32> -> tensor<128x128xi32>
      %col = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
      %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
      %colb = tessel.broadcast %cole : tensor<1x128xi32> -> tensor<128x128xi32>
      %ia = arith.addi %rowb, %colb : tensor<128x128xi32>
      %left = arith.subi %K, %k : i32
      %ls = tessel.splat %left : tensor<128x128xi32>
      %m = arith.cmpi slt, %colb, %ls : tensor<128x128xi32>
      %os = tessel.splat %k : tensor<128x128xi32>
      %o = arith.addi %ia, %os : tensor<128x128xi32>
      %pa = tessel.splat %a : tensor<128x128x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<128x128x!tessel.ptr<f16>>, tensor<128x128xi32>
      %ta = tessel.load %qa, %m, other %zh : (tensor<128x128x!tessel.ptr<f16>>, tensor<128x128xi1>, tensor<128x128xf16>) -> tensor<128x128xf16>
      %d = tessel.dot %ta, %b, %acc : tensor<128x128xf16> * tensor<128x64xf16> -> tensor<128x64xf32>
      %next = arith.addi %off, %c32 : i32
      scf.yield %d, %next : tensor<128x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<128x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<128x64x!tessel.ptr<f32>>, tensor<128x64xf32>) -> ()
    return
  }
}

// -----

// The module says no (TESSEL_DIRECT_TO_LDS=0): through registers.
// CHECK-LABEL: func.func @off(
// CHECK: tessel.local_alloc : <1x64x32xf16
// CHECK-NOT: tessel.buffer_load_to_local
// CHECK: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32, tessel.no_direct_to_lds} {
  func.func @off(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: tensor<32x64xf16>, %c: !tessel.ptr<f32>, %n: i32, %K: i32 {tessel.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %zh = arith.constant dense<0.0> : tensor<64x32xf16>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0) -> (tensor<64x64xf32>, i32) : i32 {
      %row = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
      %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
      %c32s = tessel.splat %c32 : tensor<64x1xi32>
      %rowk = arith.muli %rowe, %c32s : tensor<64x1xi32>
      %rowb = tessel.broadcast %rowk : tensor<64x1xi32> -> tensor<64x32xi32>
      %col = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
      %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
      %colb = tessel.broadcast %cole : tensor<1x32xi32> -> tensor<64x32xi32>
      %ia = arith.addi %rowb, %colb : tensor<64x32xi32>
      %left = arith.subi %K, %k : i32
      %ls = tessel.splat %left : tensor<64x32xi32>
      %m = arith.cmpi slt, %colb, %ls : tensor<64x32xi32>
      %os = tessel.splat %k : tensor<64x32xi32>
      %o = arith.addi %ia, %os : tensor<64x32xi32>
      %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa, %m, other %zh : (tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi1>, tensor<64x32xf16>) -> tensor<64x32xf16>
      %d = tessel.dot %ta, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %next = arith.addi %off, %c32 : i32
      scf.yield %d, %next : tensor<64x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// gfx950, 4 waves, a 128x64 fp8 tile: two 16-byte groups a thread, whose
// slot's swizzle moves elements between lanes. With a row stride that
// changes every iteration (K + k) the offsets vary beyond a uniform shift, so
// each group would take a ds_bpermute every iteration: through registers
// unless asked for (shufflesEachIteration). With a fixed stride, the same
// tile goes straight into LDS (@shift_only, below).
// CHECK-LABEL: func.func @shuffles(
// CHECK: tessel.local_alloc : <1x128x64xf8E4M3FN
// CHECK-NOT: tessel.buffer_load_to_local
// CHECK: scf.yield
// FORCED-LABEL: func.func @shuffles(
// FORCED: tessel.local_alloc : <2x128x64xf8E4M3FN
// FORCED: tessel.buffer_load_to_local
// FORCED: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @shuffles(%a: !tessel.ptr<f8E4M3FN> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: tensor<64x64xf8E4M3FN>, %c: !tessel.ptr<f32>, %n: i32, %K: i32 {tessel.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %zh = arith.constant dense<0.0> : tensor<128x64xf8E4M3FN>
    %acc:2 = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero, %off = %c0) -> (tensor<128x64xf32>, i32) : i32 {
      %row = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
      %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
      %stride = arith.addi %K, %k : i32
      %ss = tessel.splat %stride : tensor<128x1xi32>
      %rowk = arith.muli %rowe, %ss : tensor<128x1xi32>
      %rowb = tessel.broadcast %rowk : tensor<128x1xi32> -> tensor<128x64xi32>
      %col = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
      %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
      %colb = tessel.broadcast %cole : tensor<1x64xi32> -> tensor<128x64xi32>
      %ia = arith.addi %rowb, %colb : tensor<128x64xi32>
      %left = arith.subi %K, %k : i32
      %ls = tessel.splat %left : tensor<128x64xi32>
      %m = arith.cmpi slt, %colb, %ls : tensor<128x64xi32>
      %os = tessel.splat %k : tensor<128x64xi32>
      %o = arith.addi %ia, %os : tensor<128x64xi32>
      %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f8E4M3FN>>
      %qa = tessel.addptr %pa, %o : tensor<128x64x!tessel.ptr<f8E4M3FN>>, tensor<128x64xi32>
      %ta = tessel.load %qa, %m, other %zh : (tensor<128x64x!tessel.ptr<f8E4M3FN>>, tensor<128x64xi1>, tensor<128x64xf8E4M3FN>) -> tensor<128x64xf8E4M3FN>
      %d = tessel.dot %ta, %b, %acc : tensor<128x64xf8E4M3FN> * tensor<64x64xf8E4M3FN> -> tensor<128x64xf32>
      %next = arith.addi %off, %c64 : i32
      scf.yield %d, %next : tensor<128x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<128x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<128x64x!tessel.ptr<f32>>, tensor<128x64xf32>) -> ()
    return
  }
}

// -----

// The same tile with a fixed row stride (K + 64): its offsets move between
// lanes once, before the loop (splitShift), and it goes straight into LDS.
// CHECK-LABEL: func.func @shift_only(
// CHECK: tessel.local_alloc : <2x128x64xf8E4M3FN
// CHECK: scf.for
// CHECK: tessel.buffer_load_to_local
// CHECK-NOT: tessel.local_store
// CHECK: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @shift_only(%a: !tessel.ptr<f8E4M3FN> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: tensor<64x64xf8E4M3FN>, %c: !tessel.ptr<f32>, %n: i32, %K: i32 {tessel.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %zh = arith.constant dense<0.0> : tensor<128x64xf8E4M3FN>
    %acc:2 = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero, %off = %c0) -> (tensor<128x64xf32>, i32) : i32 {
      %row = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
      %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
      %stride = arith.addi %K, %c64 : i32
      %ss = tessel.splat %stride : tensor<128x1xi32>
      %rowk = arith.muli %rowe, %ss : tensor<128x1xi32>
      %rowb = tessel.broadcast %rowk : tensor<128x1xi32> -> tensor<128x64xi32>
      %col = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
      %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
      %colb = tessel.broadcast %cole : tensor<1x64xi32> -> tensor<128x64xi32>
      %ia = arith.addi %rowb, %colb : tensor<128x64xi32>
      %left = arith.subi %K, %k : i32
      %ls = tessel.splat %left : tensor<128x64xi32>
      %m = arith.cmpi slt, %colb, %ls : tensor<128x64xi32>
      %os = tessel.splat %k : tensor<128x64xi32>
      %o = arith.addi %ia, %os : tensor<128x64xi32>
      %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f8E4M3FN>>
      %qa = tessel.addptr %pa, %o : tensor<128x64x!tessel.ptr<f8E4M3FN>>, tensor<128x64xi32>
      %ta = tessel.load %qa, %m, other %zh : (tensor<128x64x!tessel.ptr<f8E4M3FN>>, tensor<128x64xi1>, tensor<128x64xf8E4M3FN>) -> tensor<128x64xf8E4M3FN>
      %d = tessel.dot %ta, %b, %acc : tensor<128x64xf8E4M3FN> * tensor<64x64xf8E4M3FN> -> tensor<128x64xf32>
      %next = arith.addi %off, %c64 : i32
      scf.yield %d, %next : tensor<128x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<128x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<128x64x!tessel.ptr<f32>>, tensor<128x64xf32>) -> ()
    return
  }
}
