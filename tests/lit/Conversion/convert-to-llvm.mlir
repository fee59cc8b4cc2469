// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-convert-to-llvm | FileCheck %s

// Each of 256 threads moves 4 contiguous f32 with one 16-byte access,
// predicated by its mask through a branch.
// CHECK-LABEL: llvm.func @vector_add(
// CHECK-SAME: !llvm.ptr<1>
// CHECK-SAME: rocdl.flat_work_group_size = "256,256", rocdl.kernel
// CHECK-DAG: rocdl.workitem.id.x
// CHECK-DAG: rocdl.workgroup.id.x
// CHECK: llvm.cond_br
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-COUNT-4: llvm.fadd {{.*}} : f32
// CHECK: llvm.cond_br
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
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
