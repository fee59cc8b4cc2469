// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-convert-to-llvm | FileCheck %s

// Each of 256 threads moves 4 contiguous f32 with one 16-byte access,
// predicated by its mask through a branch; the adds go two to an op on
// vector<2xf32> (gfx942 packs f32), whose operands are halves of the
// loaded vectors (a shufflevector each, right after the load's result) and
// whose results, joined, are what the store writes.
// CHECK-LABEL: llvm.func @vector_add(
// CHECK-SAME: !llvm.ptr<1>
// CHECK-SAME: rocdl.flat_work_group_size = "256,256", rocdl.kernel
// CHECK-DAG: rocdl.workitem.id.x range <i32, 0, 256> : i32
// CHECK-DAG: rocdl.workgroup.id.x
// CHECK: llvm.cond_br
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: ^bb{{[0-9]+}}(%[[A:[0-9]+]]: vector<4xf32>)
// CHECK-DAG: %[[A23:.*]] = llvm.shufflevector %[[A]], %[[A]] [2, 3] : vector<4xf32>
// CHECK-DAG: %[[A01:.*]] = llvm.shufflevector %[[A]], %[[A]] [0, 1] : vector<4xf32>
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: ^bb{{[0-9]+}}(%[[B:[0-9]+]]: vector<4xf32>)
// CHECK-DAG: %[[B23:.*]] = llvm.shufflevector %[[B]], %[[B]] [2, 3] : vector<4xf32>
// CHECK-DAG: %[[B01:.*]] = llvm.shufflevector %[[B]], %[[B]] [0, 1] : vector<4xf32>
// CHECK: %[[S01:.*]] = llvm.fadd %[[A01]], %[[B01]] : vector<2xf32>
// CHECK: %[[S23:.*]] = llvm.fadd %[[A23]], %[[B23]] : vector<2xf32>
// CHECK: %[[S:.*]] = llvm.shufflevector %[[S01]], %[[S23]] [0, 1, 2, 3] : vector<2xf32>
// CHECK: llvm.cond_br
// CHECK: llvm.store %[[S]], {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: llvm.return
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

// num_programs reads the grid size from the dispatch packet; sin comes from
// the device library; exp on f32 stays an LLVM intrinsic.
// CHECK: llvm.func @__ocml_sin_f32(f32) -> f32
// CHECK-LABEL: llvm.func @math(
// CHECK: llvm.call_intrinsic "llvm.amdgcn.dispatch.ptr"() : () -> !llvm.ptr<4>
// CHECK: llvm.load {{.*}} : !llvm.ptr<4> -> i32
// CHECK: llvm.udiv
// CHECK: llvm.call @__ocml_sin_f32
// CHECK: llvm.intr.exp
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @math(%x: !tessel.ptr<f32>) {
    %np = tessel.num_programs 0 : i32
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %ns = tessel.splat %np : tensor<64xi32>
    %i = arith.addi %r, %ns : tensor<64xi32>
    %f = arith.sitofp %i : tensor<64xi32> to tensor<64xf32>
    %s = math.sin %f : tensor<64xf32>
    %e = math.exp %s : tensor<64xf32>
    %xs = tessel.splat %x : tensor<64x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %r : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    tessel.store %xp, %e : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> ()
    return
  }
}

// -----

// fast_exp2 / fast_exp (afn on f32, tile or scalar) are the hardware
// exponential itself; without afn, and for f64, exp2 stays the precise
// intrinsic (LLVM scales around v_exp_f32 for denormal results).
// CHECK-LABEL: llvm.func @hardware_exp(
// CHECK: %[[A:.*]] = rocdl.exp2 %{{.*}} f32 -> f32
// CHECK: %[[L:.*]] = llvm.mlir.constant(1.44269502 : f32) : f32
// CHECK: %[[M:.*]] = llvm.fmul %{{.*}}, %[[L]] : f32
// CHECK: rocdl.exp2 %[[M]] f32 -> f32
// CHECK: llvm.intr.exp2(%{{.*}}) : (f32) -> f32
// CHECK: rocdl.exp2 %{{.*}} f32 -> f32
// CHECK-NOT: rocdl.exp2
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @hardware_exp(%x: !tessel.ptr<f32>, %s: f32) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %f = arith.sitofp %r : tensor<64xi32> to tensor<64xf32>
    %a = math.exp2 %f fastmath<afn> : tensor<64xf32>
    %b = math.exp %a fastmath<afn> : tensor<64xf32>
    %c = math.exp2 %b : tensor<64xf32>
    %xs = tessel.splat %x : tensor<64x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %r : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    tessel.store %xp, %c : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> ()
    %t = math.exp2 %s fastmath<afn> : f32
    tessel.store %x, %t : (!tessel.ptr<f32>, f32) -> ()
    return
  }
}

// -----

// Integer division is defined for every input, in the module both executors
// run: the divisor is replaced by 1 where it is 0 (or MIN / -1), and x / 0
// selects -1, x % 0 selects x.
// CHECK-LABEL: llvm.func @divide(
// CHECK: %[[Z:.*]] = llvm.icmp "eq" %[[D:.*]], %{{.*}} : i32
// CHECK: %[[SAFE:.*]] = llvm.select %{{.*}}, %{{.*}}, %[[D]] : i1, i32
// CHECK: %[[Q:.*]] = llvm.sdiv %{{.*}}, %[[SAFE]] : i32
// CHECK: llvm.select %[[Z]], %{{.*}}, %[[Q]] : i1, i32
// CHECK: llvm.srem
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @divide(%x: i32, %d: i32, %p: !tessel.ptr<i32>) {
    %q = arith.divsi %x, %d : i32
    %r = arith.remsi %x, %d : i32
    %s = arith.addi %q, %r : i32
    tessel.store %p, %s : (!tessel.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// 64 elements over 4 waves of 64 lanes: each element is held by 4 threads
// (one per wave); only wave 0's lanes store, so replicas never race.
// CHECK-LABEL: llvm.func @replicated_store(
// CHECK: %[[WAVE:.*]] = llvm.lshr %{{.*}}, %{{.*}} : i32
// CHECK: %[[REPLICA_BITS:.*]] = llvm.and %[[WAVE]], %{{.*}} : i32
// CHECK: %[[OWNER:.*]] = llvm.icmp "eq" %[[REPLICA_BITS]], %{{.*}} : i32
// CHECK: llvm.cond_br %[[OWNER]]
// CHECK: llvm.store
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32} {
  func.func @replicated_store(%x: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %f = arith.sitofp %r : tensor<64xi32> to tensor<64xf32>
    %xs = tessel.splat %x : tensor<64x!tessel.ptr<f32>>
    %p = tessel.addptr %xs, %r : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    tessel.store %p, %f : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> ()
    return
  }
}

// -----

// Registers the axis analysis proves equal are computed once: each thread
// holds 4 contiguous columns starting at a multiple of 4, and n is a
// multiple of 16, so `cols < n` is one compare per thread (Triton's
// maybeDeduplicate) that all 4 selects share.
// CHECK-LABEL: llvm.func @equal_compares(
// CHECK: %[[C:.*]] = llvm.icmp "slt"
// CHECK-NOT: llvm.icmp
// CHECK-COUNT-4: llvm.select %[[C]],
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @equal_compares(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %n: i32 {tessel.divisibility = 16 : i32}) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %xs = tessel.splat %x : tensor<256x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    %v = tessel.load %xp : (tensor<256x!tessel.ptr<f32>>) -> tensor<256xf32>
    %ns = tessel.splat %n : tensor<256xi32>
    %m = arith.cmpi slt, %r, %ns : tensor<256xi32>
    %z = arith.constant dense<0.0> : tensor<256xf32>
    %s = arith.select %m, %v, %z : tensor<256xi1>, tensor<256xf32>
    tessel.store %xp, %s : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}

// -----

// Without n's divisibility each column is compared on its own.
// CHECK-LABEL: llvm.func @distinct_compares(
// CHECK-COUNT-4: llvm.icmp "slt"
// CHECK-NOT: llvm.icmp
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @distinct_compares(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %n: i32) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %xs = tessel.splat %x : tensor<256x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    %v = tessel.load %xp : (tensor<256x!tessel.ptr<f32>>) -> tensor<256xf32>
    %ns = tessel.splat %n : tensor<256xi32>
    %m = arith.cmpi slt, %r, %ns : tensor<256xi32>
    %z = arith.constant dense<0.0> : tensor<256xf32>
    %s = arith.select %m, %v, %z : tensor<256xi1>, tensor<256xf32>
    tessel.store %xp, %s : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}

// -----

// math.rsqrt on f32 is v_rsq_f32 (llvm.amdgcn.rsq); 1 / sqrt stays precise.
// CHECK-LABEL: llvm.func @hardware_rsqrt(
// CHECK: llvm.call_intrinsic "llvm.amdgcn.rsq"(%{{.*}}) : (f32) -> f32
// CHECK: llvm.intr.sqrt
// CHECK: llvm.fdiv
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @hardware_rsqrt(%x: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %f = arith.sitofp %r : tensor<64xi32> to tensor<64xf32>
    %a = math.rsqrt %f : tensor<64xf32>
    %one = arith.constant dense<1.0> : tensor<64xf32>
    %s = math.sqrt %a : tensor<64xf32>
    %b = arith.divf %one, %s : tensor<64xf32>
    %xs = tessel.splat %x : tensor<64x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %r : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    tessel.store %xp, %b : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> ()
    return
  }
}

// -----

// A masked buffer load reads 0 out of range: `other` = 0.0 needs no select,
// any other value does. The three accesses share one resource.
// CHECK-LABEL: llvm.func @buffer_other(
// CHECK-COUNT-1: rocdl.make.buffer.rsrc
// CHECK-COUNT-4: rocdl.raw.ptr.buffer.load
// CHECK-NOT: : i1, f32
// CHECK-NOT: rocdl.make.buffer.rsrc
// CHECK: rocdl.raw.ptr.buffer.load
// CHECK-COUNT-4: : i1, f32
// CHECK-NOT: rocdl.make.buffer.rsrc
// CHECK-NOT: : i1, f32
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @buffer_other(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32, tessel.pointer_range = 31 : i32}, %n: i32 {tessel.divisibility = 16 : i32}) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %ns = tessel.splat %n : tensor<256xi32>
    %m = arith.cmpi slt, %r, %ns : tensor<256xi32>
    %zero = arith.constant dense<0.0> : tensor<256xf32>
    %minus = arith.constant dense<-1.0> : tensor<256xf32>
    %a = tessel.buffer_load %x[%r], %m, other %zero : (!tessel.ptr<f32>, tensor<256xi32>, tensor<256xi1>, tensor<256xf32>) -> tensor<256xf32>
    %b = tessel.buffer_load %x[%r], %m, other %minus : (!tessel.ptr<f32>, tensor<256xi32>, tensor<256xi1>, tensor<256xf32>) -> tensor<256xf32>
    %s = arith.addf %a, %b : tensor<256xf32>
    tessel.buffer_store %x[%r], %s, %m : (!tessel.ptr<f32>, tensor<256xi32>, tensor<256xf32>, tensor<256xi1>) -> ()
    return
  }
}

// -----

// A bounded buffer access: the resource's range is min(bound, 2^29 - 1) * 4
// bytes, made on the scalar unit (readfirstlane of the uniform bound), and
// no offset is selected. Each thread's 4 groups of 1 are at x + 0, 64, 128,
// 192 elements: x * 4 plus a constant byte offset the backend folds into the
// instruction. The store to the same base with the same bound reuses the
// load's resource and byte offsets (one readfirstlane, one multiply, one add
// per group). f32 moves as f32: no bitcast either way.
// CHECK-LABEL: llvm.func @buffer_bound(
// CHECK: %[[B:.*]] = rocdl.readfirstlane %arg1 : i32
// CHECK: %[[LIMIT:.*]] = llvm.mlir.constant(536870911 : i32) : i32
// CHECK: %[[E:.*]] = llvm.intr.umin(%[[B]], %[[LIMIT]]) : (i32, i32) -> i32
// CHECK: %[[BYTES:.*]] = llvm.mul %[[E]], %{{.*}} : i32
// CHECK: %[[REC:.*]] = llvm.zext %[[BYTES]] : i32 to i64
// CHECK: %[[RSRC:.*]] = rocdl.make.buffer.rsrc %arg0, %{{.*}}, %[[REC]], %{{.*}}
// CHECK-NOT: llvm.select
// CHECK: %[[X4:.*]] = llvm.mul %[[X:.*]], %{{.*}} : i32
// CHECK: %[[V0:.*]] = rocdl.raw.ptr.buffer.load %[[RSRC]], %[[X4]], %{{.*}} : f32
// CHECK-NOT: llvm.mul
// CHECK: %[[AT:.*]] = llvm.add %[[X4]], %{{.*}} : i32
// CHECK: %[[V1:.*]] = rocdl.raw.ptr.buffer.load %[[RSRC]], %[[AT]], %{{.*}} : f32
// CHECK-NOT: llvm.select
// CHECK-NOT: rocdl.readfirstlane
// CHECK-NOT: rocdl.make.buffer.rsrc
// CHECK-NOT: llvm.mul
// CHECK-NOT: llvm.bitcast
// CHECK: rocdl.raw.ptr.buffer.store %[[V0]], %[[RSRC]], %[[X4]], %{{.*}} : f32
// CHECK-NOT: llvm.add
// CHECK: rocdl.raw.ptr.buffer.store %[[V1]], %[[RSRC]], %[[AT]], %{{.*}} : f32
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @buffer_bound(%x: !tessel.ptr<f32> {tessel.pointer_range = 31 : i32}, %n: i32) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %a = tessel.buffer_load %x[%r] bound %n : (!tessel.ptr<f32>, tensor<256xi32>, i32) -> tensor<256xf32>
    tessel.buffer_store %x[%r], %a bound %n : (!tessel.ptr<f32>, tensor<256xi32>, tensor<256xf32>, i32) -> ()
    return
  }
}
