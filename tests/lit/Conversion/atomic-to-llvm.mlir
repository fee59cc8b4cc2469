// tessel.atomic_rmw / atomic_cas: one LLVM atomic per element with the op's
// ordering and AMDGPU sync scope, by the element's owner where its mask
// holds; the old values of a scalar (every thread holds it) go through LDS.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm | FileCheck %s

// 256 f32 elements over 4 waves, one per thread: no replicas, no LDS. Each
// add runs in a branch on its mask. acq_rel is the program's order: a
// barrier (fencing all memory at workgroup scope) before the adds, so every
// thread's earlier accesses precede them, and one after.
// CHECK-LABEL: llvm.func @masked_add(
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK: llvm.cond_br
// CHECK: llvm.atomicrmw fadd %{{.*}}, %{{.*}} syncscope("agent") acq_rel {alignment = 4 : i64} : !llvm.ptr<1>, f32
// CHECK-NOT: llvm.atomicrmw
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 0 : i64} {
  func.func @masked_add(%p: !tessel.ptr<f32>, %n: i32) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #b>
    %ps = tessel.splat %p : tensor<256x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<256x!tessel.ptr<f32>, #b>, tensor<256xi32, #b>
    %ns = tessel.splat %n : tensor<256xi32, #b>
    %m = arith.cmpi slt, %r, %ns : tensor<256xi32, #b>
    %v = arith.sitofp %r : tensor<256xi32, #b> to tensor<256xf32, #b>
    %old = tessel.atomic_rmw add acq_rel agent %pp, %v, %m : (tensor<256x!tessel.ptr<f32>, #b>, tensor<256xf32, #b>, tensor<256xi1, #b>) -> tensor<256xf32, #b>
    return
  }
}

// -----

// A scalar compare-and-swap whose old value is used: thread 0 swaps
// (relaxed: monotonic both ways; system scope: no syncscope), writes the old
// value to LDS, a barrier, every thread reads it, a barrier.
// CHECK-LABEL: llvm.func @scalar_cas(
// CHECK-NOT: llvm.fence
// CHECK: llvm.cond_br
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} monotonic monotonic {alignment = 4 : i64} : !llvm.ptr<1>, i32
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK: rocdl.s.barrier
// CHECK: llvm.return
module attributes {tessel.num_warps = 2 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 8 : i64} {
  func.func @scalar_cas(%p: !tessel.ptr<i32>, %c: i32, %out: !tessel.ptr<i32>) {
    %one = arith.constant 1 : i32
    %v = arith.addi %c, %one : i32
    %old = tessel.atomic_cas relaxed system %p, %c, %v {tessel.lds_offset = 0 : i64} : (!tessel.ptr<i32>, i32, i32) -> i32
    tessel.store %out, %old : (!tessel.ptr<i32>, i32) -> ()
    return
  }
}
