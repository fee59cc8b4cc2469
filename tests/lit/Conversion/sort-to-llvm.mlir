// tessel.sort: a bitonic network whose pairs meet where the layout puts
// them. 1024 keys as 2 registers x 64 lanes x 8 waves: distance 1 is a
// register swap (selects only), distances 2..128 lane exchanges (DPP within
// a row, ds_bpermute beyond), 128..512 (waves) go through LDS between
// barriers. No global memory, no calls.
// RUN: tessel-opt %s --tessel-convert-to-llvm | FileCheck %s

// CHECK-LABEL: llvm.func @bitonic(
// CHECK-NOT: rocdl.s.barrier
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
#b = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [8], order = [0]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 4224 : i64} {
  func.func @bitonic(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #b>
    %ps = tessel.splat %p : tensor<1024x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<1024x!tessel.ptr<f32>, #b>, tensor<1024xi32, #b>
    %x = tessel.load %pp : (tensor<1024x!tessel.ptr<f32>, #b>) -> tensor<1024xf32, #b>
    %s = tessel.sort %x {axis = 0 : i32, descending = false, stable = false, tessel.lds_offset = 0 : i64} : (tensor<1024xf32, #b>) -> tensor<1024xf32, #b>
    tessel.store %pp, %s : (tensor<1024x!tessel.ptr<f32>, #b>, tensor<1024xf32, #b>) -> ()
    return
  }
}
