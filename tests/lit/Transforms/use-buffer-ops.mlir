// RUN: tessel-opt %s -split-input-file --tessel-use-buffer-ops | FileCheck %s

// pid * 1024 + arange(0, 1024) under `offs < n`: the splatted pid * 1024
// moves into the scalar base, the arange (0..1023) is the offset, and the
// resource holds what is left of max(n, 0) past pid * 1024 (none when pid *
// 1024 is beyond it): its range check is the whole mask. The unmasked load
// takes the same base and offsets without a bound (the lowering picks a
// global load at the scalar base for it).
// CHECK-LABEL: func.func @vector_add(
// CHECK: %[[BASE:.*]] = arith.muli
// CHECK: %[[R:.*]] = tessel.make_range
// CHECK: %[[N:.*]] = arith.maxsi %arg3, %{{.*}} : i32
// CHECK: %[[XB:.*]] = tessel.addptr %arg0, %[[BASE]] : !tessel.ptr<f32>, i32
// CHECK: %[[PAST:.*]] = arith.cmpi ugt, %[[BASE]], %[[N]] : i32
// CHECK: %[[LEFT:.*]] = arith.subi %[[N]], %[[BASE]] : i32
// CHECK: %[[B:.*]] = arith.select %[[PAST]], %{{.*}}, %[[LEFT]] : i32
// CHECK: tessel.buffer_load %[[XB]][%[[R]]] bound %[[B]] : (!tessel.ptr<f32>, tensor<1024xi32>, i32) -> tensor<1024xf32>
// CHECK: %[[YB:.*]] = tessel.addptr %arg1, %[[BASE]] : !tessel.ptr<f32>, i32
// CHECK: tessel.buffer_load %[[YB]][%[[R]]] : (!tessel.ptr<f32>, tensor<1024xi32>) -> tensor<1024xf32>
// CHECK: %[[OB:.*]] = tessel.addptr %arg2, %[[BASE]] : !tessel.ptr<f32>, i32
// CHECK: tessel.buffer_store %[[OB]][%[[R]]], %{{.*}} bound %{{.*}} : (!tessel.ptr<f32>, tensor<1024xi32>, tensor<1024xf32>, i32) -> ()
// CHECK-NOT: tessel.store
module attributes {tessel.target = "gfx942"} {
  func.func @vector_add(%x: !tessel.ptr<f32>, %y: !tessel.ptr<f32>, %out: !tessel.ptr<f32>, %n: i32) {
    %pid = tessel.program_id 0 : i32
    %c = arith.constant 1024 : i32
    %base = arith.muli %pid, %c : i32
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %bs = tessel.splat %base : tensor<1024xi32>
    %offs = arith.addi %bs, %r : tensor<1024xi32>
    %ns = tessel.splat %n : tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
    %zero = arith.constant dense<0.0> : tensor<1024xf32>
    %xs = tessel.splat %x : tensor<1024x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %a = tessel.load %xp, %mask, other %zero : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>, tensor<1024xf32>) -> tensor<1024xf32>
    %ys = tessel.splat %y : tensor<1024x!tessel.ptr<f32>>
    %yp = tessel.addptr %ys, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %b = tessel.load %yp : (tensor<1024x!tessel.ptr<f32>>) -> tensor<1024xf32>
    %s = arith.addf %a, %b : tensor<1024xf32>
    %os = tessel.splat %out : tensor<1024x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    tessel.store %op, %s, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
    return
  }
}

// -----

// Through small Buffers (tessel.pointer_range = 31), under a mask the
// resource's range cannot carry (offs < n & offs > 3): pid * 1024 + arange
// cannot be negative, so the whole index is the offset from the argument
// itself (one offset tile for both accesses, no base arithmetic), masked off
// by offset. A runtime start that may be negative stays in the scalar base,
// where a wild base is an address the sanitizer sees.
// CHECK-LABEL: func.func @small_buffers(
// CHECK: %[[OFFS:.*]] = arith.addi
// CHECK: tessel.buffer_load %arg0[%[[OFFS]]], %{{.*}}, other %{{.*}}
// CHECK: tessel.buffer_store %arg2[%[[OFFS]]], %{{.*}}, %{{.*}}
// CHECK: %[[XS:.*]] = tessel.addptr %arg0, %arg4 : !tessel.ptr<f32>, i32
// CHECK: %[[SB:.*]] = tessel.addptr %[[XS]], %{{.*}} : !tessel.ptr<f32>, i32
// CHECK: tessel.buffer_load %[[SB]][%{{.*}}], %{{.*}}, other
module attributes {tessel.target = "gfx942"} {
  func.func @small_buffers(%x: !tessel.ptr<f32> {tessel.pointer_range = 31 : i32}, %y: !tessel.ptr<f32>, %out: !tessel.ptr<f32> {tessel.pointer_range = 31 : i32}, %n: i32, %start: i32) {
    %pid = tessel.program_id 0 : i32
    %c = arith.constant 1024 : i32
    %base = arith.muli %pid, %c : i32
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %bs = tessel.splat %base : tensor<1024xi32>
    %offs = arith.addi %bs, %r : tensor<1024xi32>
    %ns = tessel.splat %n : tensor<1024xi32>
    %below = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
    %three = arith.constant dense<3> : tensor<1024xi32>
    %above = arith.cmpi sgt, %offs, %three : tensor<1024xi32>
    %mask = arith.andi %below, %above : tensor<1024xi1>
    %zero = arith.constant dense<0.0> : tensor<1024xf32>
    %xs = tessel.splat %x : tensor<1024x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %a = tessel.load %xp, %mask, other %zero : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>, tensor<1024xf32>) -> tensor<1024xf32>
    %os = tessel.splat %out : tensor<1024x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    tessel.store %op, %a, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
    %xst = tessel.addptr %x, %start : !tessel.ptr<f32>, i32
    %xss = tessel.splat %xst : tensor<1024x!tessel.ptr<f32>>
    %xsp = tessel.addptr %xss, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %b = tessel.load %xsp, %mask, other %zero : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>, tensor<1024xf32>) -> tensor<1024xf32>
    tessel.store %op, %b, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
    return
  }
}

// -----

// Offsets the analysis cannot bound stay global accesses: a loaded index
// (any i32), an arange shifted below zero, and a loop's iv * 2^20 + arange
// whose bytes reach past 2^31 (iv up to 1023: 2^30 elements of 4 bytes).
// The unmasked loads and stores at arange itself are bounded.
// CHECK-LABEL: func.func @unbounded(
// CHECK: tessel.buffer_load %arg1[%{{.*}}] : (!tessel.ptr<i32>, tensor<256xi32>)
// CHECK-NOT: tessel.buffer_load
// CHECK-COUNT-3: tessel.load %{{.*}}, %{{.*}} :
// CHECK-NOT: tessel.buffer_load
// CHECK: tessel.buffer_store %arg2[%{{.*}}], %{{.*}} : (!tessel.ptr<f32>, tensor<256xi32>, tensor<256xf32>) -> ()
module attributes {tessel.target = "gfx942"} {
  func.func @unbounded(%x: !tessel.ptr<f32>, %idx: !tessel.ptr<i32>, %out: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %t = arith.constant dense<true> : tensor<256xi1>
    %is = tessel.splat %idx : tensor<256x!tessel.ptr<i32>>
    %ip = tessel.addptr %is, %r : tensor<256x!tessel.ptr<i32>>, tensor<256xi32>
    %i = tessel.load %ip : (tensor<256x!tessel.ptr<i32>>) -> tensor<256xi32>
    %xs = tessel.splat %x : tensor<256x!tessel.ptr<f32>>
    %gp = tessel.addptr %xs, %i : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    %g = tessel.load %gp, %t : (tensor<256x!tessel.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    %c3 = arith.constant dense<3> : tensor<256xi32>
    %shifted = arith.subi %r, %c3 : tensor<256xi32>
    %sp = tessel.addptr %xs, %shifted : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    %s = tessel.load %sp, %t : (tensor<256x!tessel.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c1024 = arith.constant 1024 : i32
    %big = arith.constant dense<1048576> : tensor<256xi32>
    %sum = scf.for %iv = %c0 to %c1024 step %c1 iter_args(%acc = %g) -> (tensor<256xf32>) : i32 {
      %ivs = tessel.splat %iv : tensor<256xi32>
      %far = arith.muli %ivs, %big : tensor<256xi32>
      %o = arith.addi %far, %r : tensor<256xi32>
      %fp = tessel.addptr %xs, %o : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
      %f = tessel.load %fp, %t : (tensor<256x!tessel.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
      %n = arith.addf %acc, %f : tensor<256xf32>
      scf.yield %n : tensor<256xf32>
    }
    %os = tessel.splat %out : tensor<256x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    %all = arith.addf %sum, %s : tensor<256xf32>
    tessel.store %op, %all : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}

// -----

// A target without buffer instructions in its table would keep every
// access; every target tessel has takes them, so a module without a target
// (as tessel-opt tests of other passes are) is left alone.
// CHECK-LABEL: func.func @no_target(
// CHECK: tessel.load
// CHECK-NOT: tessel.buffer_load
func.func @no_target(%x: !tessel.ptr<f32>, %n: i32) {
  %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %ns = tessel.splat %n : tensor<64xi32>
  %mask = arith.cmpi slt, %r, %ns : tensor<64xi32>
  %xs = tessel.splat %x : tensor<64x!tessel.ptr<f32>>
  %xp = tessel.addptr %xs, %r : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
  %a = tessel.load %xp, %mask : (tensor<64x!tessel.ptr<f32>>, tensor<64xi1>) -> tensor<64xf32>
  tessel.store %xp, %a, %mask : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>, tensor<64xi1>) -> ()
  return
}

// -----

// Rows with a runtime stride: nothing bounds r * stride, but %in is marked
// tessel.pointer_range = 31 (the call passed a Buffer under 2 GiB): its base
// stays the argument and the whole offset is the buffer offset, the scalar
// row start (pid * stride, a scalar addptr) splatted and added to the tile's
// terms, the row tile broadcast to the access's shape. %out has no mark and
// keeps its global store.
// CHECK-LABEL: func.func @strided_rows(
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %arg3 : i32
// CHECK: %[[CT:.*]] = tessel.broadcast %{{.*}} : tensor<1x256xi32> -> tensor<4x256xi32>
// CHECK: %[[RT:.*]] = tessel.broadcast %{{.*}} : tensor<4x1xi32> -> tensor<4x256xi32>
// CHECK: %[[SUM:.*]] = arith.addi %[[CT]], %[[RT]] : tensor<4x256xi32>
// CHECK: %[[S:.*]] = tessel.splat %[[ROW]] : tensor<4x256xi32>
// CHECK: %[[OFF:.*]] = arith.addi %[[SUM]], %[[S]] : tensor<4x256xi32>
// CHECK: tessel.buffer_load %arg0[%[[OFF]]], %{{.*}}, other %{{.*}} : (!tessel.ptr<f32>, tensor<4x256xi32>
// CHECK-NOT: tessel.buffer_store
// CHECK: tessel.store
module attributes {tessel.target = "gfx942"} {
  func.func @strided_rows(%in: !tessel.ptr<f32> {tessel.pointer_range = 31 : i32}, %out: !tessel.ptr<f32>,
                          %n: i32, %stride: i32) {
    %pid = tessel.program_id 0 : i32
    %row0 = arith.muli %pid, %stride : i32
    %start = tessel.addptr %in, %row0 : !tessel.ptr<f32>, i32
    %r = tessel.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
    %r2 = tessel.expand_dims %r {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
    %ss = tessel.splat %stride : tensor<4x1xi32>
    %roff = arith.muli %r2, %ss : tensor<4x1xi32>
    %c = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %c2 = tessel.expand_dims %c {axis = 0 : i32} : tensor<256xi32> -> tensor<1x256xi32>
    %cb = tessel.broadcast %c2 : tensor<1x256xi32> -> tensor<4x256xi32>
    %ns = tessel.splat %n : tensor<1x256xi32>
    %cm = arith.cmpi slt, %c2, %ns : tensor<1x256xi32>
    %mask = tessel.broadcast %cm : tensor<1x256xi1> -> tensor<4x256xi1>
    %zero = arith.constant dense<0.0> : tensor<4x256xf32>
    %ps = tessel.splat %start : tensor<4x1x!tessel.ptr<f32>>
    %pr = tessel.addptr %ps, %roff : tensor<4x1x!tessel.ptr<f32>>, tensor<4x1xi32>
    %pb = tessel.broadcast %pr : tensor<4x1x!tessel.ptr<f32>> -> tensor<4x256x!tessel.ptr<f32>>
    %p = tessel.addptr %pb, %cb : tensor<4x256x!tessel.ptr<f32>>, tensor<4x256xi32>
    %x = tessel.load %p, %mask, other %zero : (tensor<4x256x!tessel.ptr<f32>>, tensor<4x256xi1>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %os = tessel.splat %out : tensor<4x1x!tessel.ptr<f32>>
    %or = tessel.addptr %os, %roff : tensor<4x1x!tessel.ptr<f32>>, tensor<4x1xi32>
    %ob = tessel.broadcast %or : tensor<4x1x!tessel.ptr<f32>> -> tensor<4x256x!tessel.ptr<f32>>
    %o = tessel.addptr %ob, %cb : tensor<4x256x!tessel.ptr<f32>>, tensor<4x256xi32>
    tessel.store %o, %x, %mask : (tensor<4x256x!tessel.ptr<f32>>, tensor<4x256xf32>, tensor<4x256xi1>) -> ()
    return
  }
}

// -----

// One row per program under `rows < M & cols < N`: the row offset and
// `rows < M` are uniform (their scalars are made beside them), so the
// resource starts at the row and holds max(N, 0) elements, none when the row
// is past M. The load's -inf padding is one compare of the column with that
// bound; the store needs no mask at all.
// CHECK-LABEL: func.func @bounded_row(
// CHECK-DAG: %[[ROWOK:.*]] = arith.cmpi slt, %{{.*}}, %arg3 : i32
// CHECK-DAG: %[[ROWOFF:.*]] = arith.muli %{{.*}}, %arg4 : i32
// CHECK: %[[N:.*]] = arith.maxsi %arg2, %{{.*}} : i32
// CHECK: %[[BASE:.*]] = tessel.addptr %arg0, %[[ROWOFF]] : !tessel.ptr<f32>, i32
// CHECK: %[[BOUND:.*]] = arith.select %[[ROWOK]], %[[N]], %{{.*}} : i32
// CHECK: %[[X:.*]] = tessel.buffer_load %[[BASE]][%[[COLS:.*]]] bound %[[BOUND]] :
// CHECK: %[[BS:.*]] = tessel.splat %[[BOUND]] : tensor<1x256xi32>
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[COLS]], %[[BS]] : tensor<1x256xi32>
// CHECK: arith.select %[[IN]], %[[X]], %{{.*}} : tensor<1x256xi1>, tensor<1x256xf32>
// CHECK: tessel.buffer_store %{{.*}}[%[[COLS]]], %{{.*}} bound %{{.*}} :
module attributes {tessel.target = "gfx942"} {
  func.func @bounded_row(%x: !tessel.ptr<f32> {tessel.pointer_range = 31 : i32}, %out: !tessel.ptr<f32> {tessel.pointer_range = 31 : i32}, %n: i32, %m: i32, %stride: i32) {
    %pid = tessel.program_id 0 : i32
    %cols = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %ns = tessel.splat %n : tensor<256xi32>
    %colok = arith.cmpi slt, %cols, %ns : tensor<256xi32>
    %colok2 = tessel.expand_dims %colok {axis = 0 : i32} : tensor<256xi1> -> tensor<1x256xi1>
    %pids = tessel.splat %pid : tensor<1xi32>
    %r0 = tessel.make_range {start = 0 : i32, end = 1 : i32} : tensor<1xi32>
    %rows = arith.addi %pids, %r0 : tensor<1xi32>
    %ms = tessel.splat %m : tensor<1xi32>
    %rowok = arith.cmpi slt, %rows, %ms : tensor<1xi32>
    %rowok2 = tessel.expand_dims %rowok {axis = 1 : i32} : tensor<1xi1> -> tensor<1x1xi1>
    %rowokb = tessel.broadcast %rowok2 : tensor<1x1xi1> -> tensor<1x256xi1>
    %mask = arith.andi %rowokb, %colok2 : tensor<1x256xi1>
    %r = tessel.expand_dims %rows {axis = 1 : i32} : tensor<1xi32> -> tensor<1x1xi32>
    %c = tessel.expand_dims %cols {axis = 0 : i32} : tensor<256xi32> -> tensor<1x256xi32>
    %ss = tessel.splat %stride : tensor<1x1xi32>
    %roff = arith.muli %r, %ss : tensor<1x1xi32>
    %xs = tessel.splat %x : tensor<1x1x!tessel.ptr<f32>>
    %xr = tessel.addptr %xs, %roff : tensor<1x1x!tessel.ptr<f32>>, tensor<1x1xi32>
    %xb = tessel.broadcast %xr : tensor<1x1x!tessel.ptr<f32>> -> tensor<1x256x!tessel.ptr<f32>>
    %xp = tessel.addptr %xb, %c : tensor<1x256x!tessel.ptr<f32>>, tensor<1x256xi32>
    %ninf = arith.constant dense<0xFF800000> : tensor<1x256xf32>
    %v = tessel.load %xp, %mask, other %ninf : (tensor<1x256x!tessel.ptr<f32>>, tensor<1x256xi1>, tensor<1x256xf32>) -> tensor<1x256xf32>
    %os = tessel.splat %out : tensor<1x1x!tessel.ptr<f32>>
    %or = tessel.addptr %os, %roff : tensor<1x1x!tessel.ptr<f32>>, tensor<1x1xi32>
    %ob = tessel.broadcast %or : tensor<1x1x!tessel.ptr<f32>> -> tensor<1x256x!tessel.ptr<f32>>
    %op = tessel.addptr %ob, %c : tensor<1x256x!tessel.ptr<f32>>, tensor<1x256xi32>
    tessel.store %op, %v, %mask : (tensor<1x256x!tessel.ptr<f32>>, tensor<1x256xf32>, tensor<1x256xi1>) -> ()
    return
  }
}

// -----

// The compare's other spellings: `N > cols` is cols < N; `cols <u N` needs
// no max (an unsigned N is its own count). Masks the bound cannot carry keep
// theirs: a second varying conjunct (cols < K & cols > 3), and a compare of
// another tile than the offset (cols < N for cols + 1).
// CHECK-LABEL: func.func @bound_forms(
// CHECK: %[[N:.*]] = arith.maxsi %arg1, %{{.*}} : i32
// CHECK: tessel.buffer_load %arg0[%[[C:.*]]] bound %[[N]] :
// CHECK: tessel.buffer_load %arg0[%[[C]]] bound %arg1 :
// CHECK: tessel.buffer_load %arg0[%[[C]]], %{{.*}} : (!tessel.ptr<f32>, tensor<64xi32>, tensor<64xi1>) -> tensor<64xf32>
// CHECK: tessel.buffer_load %arg0[%{{.*}}], %{{.*}} : (!tessel.ptr<f32>, tensor<64xi32>, tensor<64xi1>) -> tensor<64xf32>
// x + cols + cols under cols < N: the second cols is not uniform, so no bound
// (the access keeps both terms and its mask).
// CHECK: %[[TWICE:.*]] = arith.addi %[[C]], %[[C]] : tensor<64xi32>
// CHECK: tessel.buffer_load %arg0[%[[TWICE]]], %{{.*}} : (!tessel.ptr<f32>, tensor<64xi32>, tensor<64xi1>) -> tensor<64xf32>
module attributes {tessel.target = "gfx942"} {
  func.func @bound_forms(%x: !tessel.ptr<f32> {tessel.pointer_range = 31 : i32}, %n: i32, %k: i32, %out: !tessel.ptr<f32>) {
    %c = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %ns = tessel.splat %n : tensor<64xi32>
    %xs = tessel.splat %x : tensor<64x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %c : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    %gt = arith.cmpi sgt, %ns, %c : tensor<64xi32>
    %a = tessel.load %xp, %gt : (tensor<64x!tessel.ptr<f32>>, tensor<64xi1>) -> tensor<64xf32>
    %ult = arith.cmpi ult, %c, %ns : tensor<64xi32>
    %b = tessel.load %xp, %ult : (tensor<64x!tessel.ptr<f32>>, tensor<64xi1>) -> tensor<64xf32>
    %ks = tessel.splat %k : tensor<64xi32>
    %below = arith.cmpi slt, %c, %ks : tensor<64xi32>
    %three = arith.constant dense<3> : tensor<64xi32>
    %above = arith.cmpi sgt, %c, %three : tensor<64xi32>
    %both = arith.andi %below, %above : tensor<64xi1>
    %d = tessel.load %xp, %both : (tensor<64x!tessel.ptr<f32>>, tensor<64xi1>) -> tensor<64xf32>
    %one = arith.constant dense<1> : tensor<64xi32>
    %c1 = arith.addi %c, %one : tensor<64xi32>
    %xp1 = tessel.addptr %xs, %c1 : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    %e = tessel.load %xp1, %gt : (tensor<64x!tessel.ptr<f32>>, tensor<64xi1>) -> tensor<64xf32>
    %xpp = tessel.addptr %xp, %c : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    %f = tessel.load %xpp, %gt : (tensor<64x!tessel.ptr<f32>>, tensor<64xi1>) -> tensor<64xf32>
    %s0 = arith.addf %e, %f : tensor<64xf32>
    %s1 = arith.addf %a, %b : tensor<64xf32>
    %s2 = arith.addf %d, %s0 : tensor<64xf32>
    %s = arith.addf %s1, %s2 : tensor<64xf32>
    %os = tessel.splat %out : tensor<64x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %c : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    tessel.store %op, %s : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> ()
    return
  }
}

// -----

// Uniform terms from separate addptrs join the scalar base one addptr each
// (each sign-extended, as the pointer chain had them): a + b summed in i32
// could wrap where the chain's 64-bit addresses do not.
// CHECK-LABEL: func.func @uniform_terms(
// CHECK-NOT: arith.addi
// CHECK: %[[A:.*]] = tessel.addptr %arg0, %arg{{[12]}} : !tessel.ptr<i8>, i32
// CHECK: %[[B:.*]] = tessel.addptr %[[A]], %arg{{[12]}} : !tessel.ptr<i8>, i32
// CHECK: tessel.buffer_store %[[B]][%{{.*}}], %{{.*}} : (!tessel.ptr<i8>, tensor<256xi32>, tensor<256xi8>) -> ()
module attributes {tessel.target = "gfx942"} {
  func.func @uniform_terms(%x: !tessel.ptr<i8>, %a: i32, %b: i32, %v: tensor<256xi8>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %xs = tessel.splat %x : tensor<256x!tessel.ptr<i8>>
    %p0 = tessel.addptr %xs, %r : tensor<256x!tessel.ptr<i8>>, tensor<256xi32>
    %as = tessel.splat %a : tensor<256xi32>
    %p1 = tessel.addptr %p0, %as : tensor<256x!tessel.ptr<i8>>, tensor<256xi32>
    %bs = tessel.splat %b : tensor<256xi32>
    %p2 = tessel.addptr %p1, %bs : tensor<256x!tessel.ptr<i8>>, tensor<256xi32>
    tessel.store %p2, %v : (tensor<256x!tessel.ptr<i8>>, tensor<256xi8>) -> ()
    return
  }
}

// -----

// Through small Buffers with `offs < n` the only offset tile: the resource
// is the argument itself and offs (pid * 1024 + arange) the offset, no base
// arithmetic. Its bytes stay below 2^32 while pid * 1024 <= (2^32 - 1) / 4 -
// (1023 + 1) = 1073740799; past that every lane is beyond any Buffer of
// under 2 GiB, and the bound is 0.
// CHECK-LABEL: func.func @whole_offset(
// CHECK: %[[U:.*]] = arith.muli
// CHECK: %[[OFFS:.*]] = arith.addi
// CHECK: %[[N:.*]] = arith.maxsi %arg3, %[[ZERO:.*]] : i32
// CHECK: %[[LIMIT:.*]] = arith.constant 1073740799 : i32
// CHECK: %[[FAR:.*]] = arith.cmpi ugt, %[[U]], %[[LIMIT]] : i32
// CHECK: %[[B:.*]] = arith.select %[[FAR]], %[[ZERO]], %[[N]] : i32
// CHECK: tessel.buffer_load %arg0[%[[OFFS]]] bound %[[B]] :
// CHECK-NOT: tessel.addptr %arg
// CHECK: tessel.buffer_store %arg2[%[[OFFS]]], %{{.*}} bound %{{.*}} :
module attributes {tessel.target = "gfx942"} {
  func.func @whole_offset(%x: !tessel.ptr<f32> {tessel.pointer_range = 31 : i32}, %y: !tessel.ptr<f32>, %out: !tessel.ptr<f32> {tessel.pointer_range = 31 : i32}, %n: i32) {
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
    %a = tessel.load %xp, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
    %os = tessel.splat %out : tensor<1024x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    tessel.store %op, %a, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
    return
  }
}

// -----

// Bytes under an unsigned mask: the bound is n itself (no max with 0), and
// the limit (2^32 - 1) - (1023 + 1) is past INT32_MAX - as an i32 constant
// -1025, which the unsigned compare reads as 4294966271.
// CHECK-LABEL: func.func @whole_offset_bytes(
// CHECK-NOT: arith.maxsi
// CHECK: %[[U:.*]] = arith.muli
// CHECK: %[[OFFS:.*]] = arith.addi
// CHECK: %[[LIMIT:.*]] = arith.constant -1025 : i32
// CHECK: %[[FAR:.*]] = arith.cmpi ugt, %[[U]], %[[LIMIT]] : i32
// CHECK: %[[B:.*]] = arith.select %[[FAR]], %{{.*}}, %arg2 : i32
// CHECK: tessel.buffer_load %arg0[%[[OFFS]]] bound %[[B]] :
// CHECK-NOT: arith.maxsi
module attributes {tessel.target = "gfx942"} {
  func.func @whole_offset_bytes(%x: !tessel.ptr<i8> {tessel.pointer_range = 31 : i32}, %out: !tessel.ptr<i8>, %n: i32) {
    %pid = tessel.program_id 0 : i32
    %c = arith.constant 1024 : i32
    %base = arith.muli %pid, %c : i32
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %bs = tessel.splat %base : tensor<1024xi32>
    %offs = arith.addi %bs, %r : tensor<1024xi32>
    %ns = tessel.splat %n : tensor<1024xi32>
    %mask = arith.cmpi ult, %offs, %ns : tensor<1024xi32>
    %xs = tessel.splat %x : tensor<1024x!tessel.ptr<i8>>
    %xp = tessel.addptr %xs, %offs : tensor<1024x!tessel.ptr<i8>>, tensor<1024xi32>
    %a = tessel.load %xp, %mask : (tensor<1024x!tessel.ptr<i8>>, tensor<1024xi1>) -> tensor<1024xi8>
    %os = tessel.splat %out : tensor<1024x!tessel.ptr<i8>>
    %op = tessel.addptr %os, %r : tensor<1024x!tessel.ptr<i8>>, tensor<1024xi32>
    tessel.store %op, %a : (tensor<1024x!tessel.ptr<i8>>, tensor<1024xi8>) -> ()
    return
  }
}

// -----

// Offsets made from a loop's counter, `rows * stride + (k + ks) * sk`
// (kernels::matmul's form), through a small Buffer: the uniform part, k *
// sk, is gathered apart from under the product, expand_dims and broadcast,
// so the access reads a loop-invariant tile (rows * stride + ks * sk) plus
// splat(k * sk): the pipeliner passes that scalar as a load to LDS's shift,
// and the tile's lanes move once, before the loop.
// CHECK-LABEL: func.func @offsets_from_counter(
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: tessel.addptr %{{.*}}, %{{.*}} : tensor<4x64x!tessel.ptr<f32>>, tensor<4x64xi32>
// CHECK-NEXT: %[[KT:.*]] = arith.muli %{{.*}}, %{{.*}} : tensor<64xi32>
// CHECK-NEXT: %[[KU:.*]] = arith.muli %[[K]], %arg2 : i32
// CHECK-NEXT: %[[E:.*]] = tessel.expand_dims %[[KT]] {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
// CHECK: %[[B:.*]] = tessel.broadcast %[[E]] : tensor<1x64xi32> -> tensor<4x64xi32>
// CHECK: %[[V:.*]] = arith.addi %{{.*}}, %[[B]] : tensor<4x64xi32>
// CHECK: %[[S:.*]] = tessel.splat %[[KU]] : tensor<4x64xi32>
// CHECK: %[[OFF:.*]] = arith.addi %[[V]], %[[S]] : tensor<4x64xi32>
// CHECK: tessel.buffer_load %arg0[%[[OFF]]] : (!tessel.ptr<f32>, tensor<4x64xi32>) -> tensor<4x64xf32>
module attributes {tessel.target = "gfx950"} {
  func.func @offsets_from_counter(%a: !tessel.ptr<f32> {tessel.pointer_range = 31 : i32}, %stride: i32, %sk: i32,
                                  %K: i32, %out: !tessel.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %r = tessel.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
    %r2 = tessel.expand_dims %r {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
    %ss = tessel.splat %stride : tensor<4x1xi32>
    %roff = arith.muli %r2, %ss : tensor<4x1xi32>
    %rb = tessel.broadcast %roff : tensor<4x1xi32> -> tensor<4x64xi32>
    %ks = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %init = arith.constant dense<0.0> : tensor<4x64xf32>
    %sum = scf.for %k = %c0 to %K step %c64 iter_args(%acc = %init) -> (tensor<4x64xf32>) : i32 {
      %kb = tessel.splat %k : tensor<64xi32>
      %kk = arith.addi %kb, %ks : tensor<64xi32>
      %sks = tessel.splat %sk : tensor<64xi32>
      %koff = arith.muli %kk, %sks : tensor<64xi32>
      %k2 = tessel.expand_dims %koff {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
      %kb2 = tessel.broadcast %k2 : tensor<1x64xi32> -> tensor<4x64xi32>
      %off = arith.addi %rb, %kb2 : tensor<4x64xi32>
      %ps = tessel.splat %a : tensor<4x64x!tessel.ptr<f32>>
      %p = tessel.addptr %ps, %off : tensor<4x64x!tessel.ptr<f32>>, tensor<4x64xi32>
      %x = tessel.load %p : (tensor<4x64x!tessel.ptr<f32>>) -> tensor<4x64xf32>
      %acc2 = arith.addf %acc, %x : tensor<4x64xf32>
      scf.yield %acc2 : tensor<4x64xf32>
    }
    %os = tessel.splat %out : tensor<4x64x!tessel.ptr<f32>>
    %o = tessel.addptr %os, %rb : tensor<4x64x!tessel.ptr<f32>>, tensor<4x64xi32>
    tessel.store %o, %sum : (tensor<4x64x!tessel.ptr<f32>>, tensor<4x64xf32>) -> ()
    return
  }
}
