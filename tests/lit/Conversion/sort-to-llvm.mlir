// tessel.sort: a bitonic network whose pairs meet where the layout puts
// them. No global memory, no calls.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm | FileCheck %s

// 256 keys as 2 registers x 64 lanes x 2 waves, unrolled (36 stages):
// distance 1 is a register swap (selects only), distances 2..64 lane
// exchanges (DPP within a row, ds_bpermute beyond), 128 (waves) goes
// through LDS between barriers.
// CHECK-LABEL: llvm.func @bitonic_unrolled(
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.fcmp "olt"
// CHECK: llvm.select
// CHECK: rocdl.update.dpp
// CHECK: rocdl.ds_bpermute
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: rocdl.s.barrier
// CHECK-NOT: llvm.call
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [2], order = [0]>
module attributes {tessel.num_warps = 2 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 1056 : i64} {
  func.func @bitonic_unrolled(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #b>
    %ps = tessel.splat %p : tensor<256x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<256x!tessel.ptr<f32>, #b>, tensor<256xi32, #b>
    %x = tessel.load %pp : (tensor<256x!tessel.ptr<f32>, #b>) -> tensor<256xf32, #b>
    %s = tessel.sort %x {axis = 0 : i32, descending = false, stable = false, tessel.lds_offset = 0 : i64} : (tensor<256xf32, #b>) -> tensor<256xf32, #b>
    tessel.store %pp, %s : (tensor<256x!tessel.ptr<f32>, #b>, tensor<256xf32, #b>) -> ()
    return
  }
}

// -----

// 1024 keys as 2 registers x 64 lanes x 8 waves: two loops (k = 2^t, then
// j = 2^(t-1-u)) carry each thread's keys; the body picks the exchange of
// its distance j by one branch per distance (register swap, DPP, ds_bpermute,
// LDS between barriers for the wave distances 128..512), each once, then
// keeps the smaller or larger of each pair.
// CHECK-LABEL: llvm.func @bitonic_looped(
// CHECK: llvm.br ^[[OUTER:bb[0-9]+]]({{.*}} : i32, f32, f32)
// CHECK: ^[[OUTER]]({{.*}}: i32, {{.*}}: f32, {{.*}}: f32):
// CHECK: llvm.br ^[[INNER:bb[0-9]+]]({{.*}} : i32, f32, f32)
// CHECK: ^[[INNER]]({{.*}}: i32, {{.*}}: f32, {{.*}}: f32):
// CHECK-COUNT-4: rocdl.update.dpp
// CHECK-NOT: rocdl.update.dpp
// CHECK-COUNT-8: rocdl.ds_bpermute
// CHECK-NOT: rocdl.ds_bpermute
// CHECK-COUNT-6: rocdl.s.barrier
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.fcmp "olt"
// CHECK: llvm.select
// CHECK: llvm.br ^[[INNER]](
// CHECK: llvm.br ^[[OUTER]](
// CHECK-NOT: llvm.call
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [8], order = [0]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 4224 : i64} {
  func.func @bitonic_looped(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #b>
    %ps = tessel.splat %p : tensor<1024x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<1024x!tessel.ptr<f32>, #b>, tensor<1024xi32, #b>
    %x = tessel.load %pp : (tensor<1024x!tessel.ptr<f32>, #b>) -> tensor<1024xf32, #b>
    %s = tessel.sort %x {axis = 0 : i32, descending = false, stable = false, tessel.lds_offset = 0 : i64} : (tensor<1024xf32, #b>) -> tensor<1024xf32, #b>
    tessel.store %pp, %s : (tensor<1024x!tessel.ptr<f32>, #b>, tensor<1024xf32, #b>) -> ()
    return
  }
}
