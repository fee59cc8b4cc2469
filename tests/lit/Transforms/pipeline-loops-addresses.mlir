// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-pipeline-loops | FileCheck %s

// num_stages = 2: the dot's operand load moves one iteration ahead. The first
// tile is loaded before the loop, only if the loop runs (one uniform branch,
// not a mask per element); each iteration starts by loading the next tile if
// there is a next one, and yields it. An iteration that does not run gets a
// poison tile (nobody reads it). The tile is also summed, so it has two uses
// and waits in registers (carried): the dot and the sum read the carried one.
// CHECK-LABEL: func.func @k_loop(
// CHECK: %[[RUNS:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK: %[[FIRST:.*]] = scf.if %[[RUNS]] -> (tensor<32x32xf16, #{{.*}}>) {
// CHECK: %[[T:.*]] = tessel.load %{{.*}} : (tensor<32x32x!tessel.ptr<f16>, #{{.*}}>) -> tensor<32x32xf16, #{{.*}}>
// CHECK: scf.yield %[[T]]
// CHECK: } else {
// CHECK: %[[Z:.*]] = ub.poison : tensor<32x32xf16, #{{.*}}>
// CHECK: scf.yield %[[Z]]
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[DIST:.*]] = arith.muli %[[STEP:.*]], %[[ONE]] : i32
// CHECK-NOT: tessel.local_alloc
// CHECK: scf.for %[[K:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[SUM:.*]] = %{{.*}}, %[[TILE:.*]] = %[[FIRST]])
// CHECK: %[[NEXT:.*]] = arith.addi %[[K]], %[[DIST]] : i32
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %[[NEXT]], %[[UB]] : i32
// CHECK: %[[PREFETCH:.*]] = scf.if %[[VALID]]
// CHECK: tessel.load
// CHECK: } else {
// CHECK-NOT: tessel.load
// CHECK: %[[OP:.*]] = tessel.convert_layout %[[TILE]]
// CHECK: tessel.dot %[[OP]], %{{.*}}, %[[ACC]]
// CHECK: arith.addf %[[SUM]], %[[TILE]]
// CHECK-NOT: tessel.barrier
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[PREFETCH]]
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32} {
  func.func @k_loop(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32, %out: !tessel.ptr<f32>, %out2: !tessel.ptr<f16>) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %zh = arith.constant dense<0.0> : tensor<32x32xf16>
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %offs = tessel.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %sum = %zh) -> (tensor<32x32xf32>, tensor<32x32xf16>) : i32 {
      %ks = tessel.splat %k : tensor<32x32xi32>
      %o = arith.addi %offs, %ks : tensor<32x32xi32>
      %p = tessel.addptr %base, %o : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      %s = arith.addf %sum, %t : tensor<32x32xf16>
      scf.yield %d, %s : tensor<32x32xf32>, tensor<32x32xf16>
    }
    %po = tessel.splat %out : tensor<32x32x!tessel.ptr<f32>>
    tessel.store %po, %acc#0 : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    %po2 = tessel.splat %out2 : tensor<32x32x!tessel.ptr<f16>>
    tessel.store %po2, %acc#1 : (tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xf16>) -> ()
    return
  }
}

// -----

// num_stages = 3, the tile in registers (two uses): two iterations ahead.
// Two tiles before the loop (the second masked by whether the loop reaches
// its second iteration); the loop carries both, loads the one two steps
// ahead and yields the sets shifted by one. Addresses are computed before
// the uniform branch, the loads inside it.
// CHECK-LABEL: func.func @two_ahead(
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[SPAN1:.*]] = arith.muli %[[STEP:.*]], %[[ONE]] : i32
// CHECK: %[[R0:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK: %[[T0:.*]] = scf.if %[[R0]]
// CHECK: %[[IV1:.*]] = arith.addi %[[LB]], %[[SPAN1]] : i32
// CHECK: %[[R1:.*]] = arith.cmpi slt, %[[IV1]], %[[UB]] : i32
// CHECK: tessel.splat %[[IV1]]
// CHECK: %[[T1:.*]] = scf.if %[[R1]]
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK: %[[DIST:.*]] = arith.muli %[[STEP]], %[[TWO]] : i32
// CHECK: scf.for %[[K:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[SUM:.*]] = %{{.*}}, %[[CUR:.*]] = %[[T0]], %[[AFTER:.*]] = %[[T1]])
// CHECK: %[[AT:.*]] = arith.addi %[[K]], %[[DIST]] : i32
// CHECK: tessel.splat %[[AT]]
// CHECK: %[[AHEAD:.*]] = scf.if
// CHECK-NEXT: tessel.load
// The address computation of the moved load is gone from the body.
// CHECK: } else {
// CHECK-NOT: tessel.addptr
// CHECK: %[[OP:.*]] = tessel.convert_layout %[[CUR]]
// CHECK: tessel.dot %[[OP]], %{{.*}}, %[[ACC]]
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[AFTER]], %[[AHEAD]]
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 3 : i32} {
  func.func @two_ahead(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32, %out: !tessel.ptr<f32>, %out2: !tessel.ptr<f16>) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %zh = arith.constant dense<0.0> : tensor<32x32xf16>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %sum = %zh) -> (tensor<32x32xf32>, tensor<32x32xf16>) : i32 {
      %ks = tessel.splat %k : tensor<32x32xi32>
      %p = tessel.addptr %base, %ks : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      %s = arith.addf %sum, %t : tensor<32x32xf16>
      scf.yield %d, %s : tensor<32x32xf32>, tensor<32x32xf16>
    }
    %po = tessel.splat %out : tensor<32x32x!tessel.ptr<f32>>
    tessel.store %po, %acc#0 : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    %po2 = tessel.splat %out2 : tensor<32x32x!tessel.ptr<f16>>
    tessel.store %po2, %acc#1 : (tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xf16>) -> ()
    return
  }
}

// -----

// A pointer tile carried through the loop and moved by a runtime stride each
// iteration (Triton's `a_ptrs += BLOCK_K * stride_ak`): the next iteration's
// pointer is this iteration's yield. The body moves the pointer once, loads
// through the moved pointer and yields it: no second addptr. The tile waits
// in LDS (one slot): the dot reads the slot, the prefetch is written to it.
// CHECK-LABEL: func.func @carried_pointer(
// CHECK: %[[P0:.*]] = tessel.addptr
// CHECK: %[[RUNS:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK: %[[FIRST:.*]] = scf.if %[[RUNS]]
// CHECK-NEXT: tessel.load %[[P0]] :
// CHECK: %[[BUF:.*]] = tessel.local_alloc
// CHECK: tessel.local_store %[[FIRST]], %[[BUF]]
// CHECK: scf.for %[[K:.*]] = %[[LB]] to %[[UB]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[P:.*]] = %[[P0]]) 
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %{{.*}}, %[[UB]] : i32
// CHECK: %[[S:.*]] = arith.muli %[[STRIDE:.*]], %{{.*}} : i32
// CHECK: %[[SS:.*]] = tessel.splat %[[S]]
// CHECK: %[[PN:.*]] = tessel.addptr %[[P]], %[[SS]]
// CHECK-NOT: tessel.addptr
// CHECK: %[[NEXT:.*]] = scf.if %[[VALID]]
// CHECK-NEXT: tessel.load %[[PN]] :
// CHECK-NOT: tessel.addptr
// CHECK: %[[TILE:.*]] = tessel.local_load %[[BUF]]
// CHECK: tessel.dot %[[TILE]], %{{.*}}, %[[ACC]]
// CHECK-NOT: tessel.addptr
// CHECK: tessel.local_store %[[NEXT]], %[[BUF]]
// CHECK-NOT: tessel.addptr
// CHECK: scf.yield %{{.*}}, %[[PN]] :
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32} {
  func.func @carried_pointer(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32, %stride: i32, %out: !tessel.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %offs = tessel.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %p0 = tessel.addptr %base, %offs : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
    %res:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>) : i32 {
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      %s = arith.muli %stride, %c32 : i32
      %ss = tessel.splat %s : tensor<32x32xi32>
      %pn = tessel.addptr %p, %ss : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      scf.yield %d, %pn : tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>
    }
    %po = tessel.splat %out : tensor<32x32x!tessel.ptr<f32>>
    tessel.store %po, %res#0 : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    return
  }
}

// -----

// The same with num_stages = 3: the second tile before the loop goes through
// the pointer moved once (from the init), the body loads through the pointer
// moved twice (once for the yield, once more for the iteration after). The
// first tile goes to LDS slot 0, the second is carried in registers and
// written to the next slot at the end of the first iteration.
// CHECK-LABEL: func.func @carried_pointer_two_ahead(
// CHECK: %[[P0:.*]] = tessel.addptr
// CHECK: %[[T0:.*]] = scf.if
// CHECK-NEXT: tessel.load %[[P0]] :
// CHECK: %[[S0:.*]] = arith.muli %[[STRIDE:.*]], %{{.*}} : i32
// CHECK: %[[SS0:.*]] = tessel.splat %[[S0]]
// CHECK: %[[P1:.*]] = tessel.addptr %[[P0]], %[[SS0]]
// CHECK: %[[T1:.*]] = scf.if
// CHECK-NEXT: tessel.load %[[P1]] :
// CHECK: %[[BUF:.*]] = tessel.local_alloc
// CHECK: tessel.local_store %[[T0]], %[[BUF]]
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[P:.*]] = %[[P0]], %[[AFTER:.*]] = %[[T1]], %[[READ:.*]] = %{{.*}})
// The step's splat is the prologue's (the pass ends with CSE: the body's
// loop-invariant address ops become the prologue's copies).
// CHECK: %[[PN:.*]] = tessel.addptr %[[P]], %[[SS0]]
// CHECK: %[[PNN:.*]] = tessel.addptr %[[PN]], %[[SS0]]
// CHECK-NOT: tessel.addptr
// CHECK: %[[AHEAD:.*]] = scf.if
// CHECK-NEXT: tessel.load %[[PNN]] :
// CHECK-NOT: tessel.addptr
// CHECK: %[[CUR:.*]] = tessel.local_load %[[BUF]][%[[READ]]]
// CHECK: tessel.dot %[[CUR]], %{{.*}}, %[[ACC]]
// CHECK: %[[WRITE:.*]] = arith.select
// CHECK: tessel.local_store %[[AFTER]], %[[BUF]][%[[WRITE]]]
// CHECK: scf.yield %{{.*}}, %[[PN]], %[[AHEAD]], %[[WRITE]]
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 3 : i32} {
  func.func @carried_pointer_two_ahead(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32, %stride: i32, %out: !tessel.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %offs = tessel.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %p0 = tessel.addptr %base, %offs : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
    %res:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>) : i32 {
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      %s = arith.muli %stride, %c32 : i32
      %ss = tessel.splat %s : tensor<32x32xi32>
      %pn = tessel.addptr %p, %ss : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      scf.yield %d, %pn : tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>
    }
    %po = tessel.splat %out : tensor<32x32x!tessel.ptr<f32>>
    tessel.store %po, %res#0 : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    return
  }
}

// -----

// A mask on what remains of K (Triton's `offs_k < K - k * BLOCK_K`): the
// prefetch's mask is computed from the induction variable one step ahead;
// the current iteration's mask, read by nothing now, is gone.
// CHECK-LABEL: func.func @iv_mask(
// CHECK: scf.for %[[K:.*]] = %{{.*}} iter_args(
// CHECK: %[[NEXT:.*]] = arith.addi %[[K]], %{{.*}} : i32
// CHECK: %[[KK:.*]] = arith.muli %[[NEXT]], %{{.*}} : i32
// CHECK: %[[LEFT:.*]] = arith.subi %{{.*}}, %[[KK]] : i32
// CHECK: %[[LS:.*]] = tessel.splat %[[LEFT]]
// CHECK: %[[M:.*]] = arith.cmpi slt, %{{.*}}, %[[LS]]
// CHECK: scf.if
// CHECK-NEXT: tessel.load %{{.*}}, %[[M]], other
// CHECK: } else {
// CHECK-NOT: arith.cmpi
// CHECK: tessel.dot
// CHECK-NOT: arith.cmpi
// CHECK: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32} {
  func.func @iv_mask(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32, %K: i32, %out: !tessel.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %zh = arith.constant dense<0.0> : tensor<32x32xf16>
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %offs = tessel.reshape %r : tensor<1024xi32> -> tensor<32x32xi32>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %p0 = tessel.addptr %base, %offs : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
    %res:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>) : i32 {
      %kk = arith.muli %k, %c32 : i32
      %left = arith.subi %K, %kk : i32
      %ls = tessel.splat %left : tensor<32x32xi32>
      %m = arith.cmpi slt, %offs, %ls : tensor<32x32xi32>
      %t = tessel.load %p, %m, other %zh : (tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi1>, tensor<32x32xf16>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      %ss = tessel.splat %c32 : tensor<32x32xi32>
      %pn = tessel.addptr %p, %ss : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      scf.yield %d, %pn : tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>
    }
    %po = tessel.splat %out : tensor<32x32x!tessel.ptr<f32>>
    tessel.store %po, %res#0 : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    return
  }
}

// -----

// An address that may not be computed speculatively (a division by a
// runtime value) is computed inside the uniform branch, with what depends on
// it.
// CHECK-LABEL: func.func @division_in_branch(
// CHECK: scf.for
// CHECK: %[[VALID:.*]] = arith.cmpi slt
// CHECK-NOT: arith.divsi
// CHECK: scf.if %[[VALID]]
// CHECK-NEXT: arith.divsi
// CHECK-NEXT: tessel.splat
// CHECK-NEXT: tessel.addptr
// CHECK-NEXT: tessel.load
// CHECK: tessel.dot
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32} {
  func.func @division_in_branch(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32, %d: i32, %out: !tessel.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<32x32xf32>) : i32 {
      %q = arith.divsi %k, %d : i32
      %qs = tessel.splat %q : tensor<32x32xi32>
      %p = tessel.addptr %base, %qs : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %r = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      scf.yield %r : tensor<32x32xf32>
    }
    %po = tessel.splat %out : tensor<32x32x!tessel.ptr<f32>>
    tessel.store %po, %acc : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    return
  }
}

// -----

// A carried pointer moved by a loaded amount: its next value is not known
// before this iteration's load, so nothing is pipelined.
// CHECK-LABEL: func.func @loaded_step(
// CHECK-NOT: scf.if
// CHECK-NOT: tessel.local_alloc
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[P:.*]] = %{{.*}}) -> (tensor<32x32xf32, #{{.*}}>, tensor<32x32x!tessel.ptr<f16>, #{{.*}}>)
// CHECK-NOT: scf.if
// CHECK: %[[T:.*]] = tessel.load %[[P]] :
// CHECK: %[[OP:.*]] = tessel.convert_layout %[[T]]
// CHECK: tessel.dot %[[OP]]
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32} {
  func.func @loaded_step(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32, %steps: tensor<32x32x!tessel.ptr<i32>>, %out: !tessel.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %p0 = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %res:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>) : i32 {
      %t = tessel.load %p : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      %o = tessel.load %steps : (tensor<32x32x!tessel.ptr<i32>>) -> tensor<32x32xi32>
      %pn = tessel.addptr %p, %o : tensor<32x32x!tessel.ptr<f16>>, tensor<32x32xi32>
      scf.yield %d, %pn : tensor<32x32xf32>, tensor<32x32x!tessel.ptr<f16>>
    }
    %po = tessel.splat %out : tensor<32x32x!tessel.ptr<f32>>
    tessel.store %po, %res#0 : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    return
  }
}

// -----

// Without num_stages (or with 1) nothing moves.
// CHECK-LABEL: func.func @unpipelined(
// CHECK-NOT: tessel.local_alloc
// CHECK: scf.for
// CHECK: tessel.load
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @unpipelined(%a: !tessel.ptr<f16>, %b: tensor<32x32xf16>, %n: i32, %out: !tessel.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %base = tessel.splat %a : tensor<32x32x!tessel.ptr<f16>>
    %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero) -> (tensor<32x32xf32>) : i32 {
      %t = tessel.load %base : (tensor<32x32x!tessel.ptr<f16>>) -> tensor<32x32xf16>
      %d = tessel.dot %t, %b, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
      scf.yield %d : tensor<32x32xf32>
    }
    %po = tessel.splat %out : tensor<32x32x!tessel.ptr<f32>>
    tessel.store %po, %acc : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    return
  }
}
