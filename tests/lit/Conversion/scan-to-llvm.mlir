// tessel.scan: chains in scan order, lanes by ds_bpermute, waves through LDS between two barriers.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm | FileCheck %s

// 4 elements per thread, 64 lanes, one wave: the thread's chain runs
// x0, x0+x1, ... in order; then 6 Hillis-Steele rounds over the 64 lanes plus
// one shift to the previous lane, all by ds_bpermute. Nothing goes through
// LDS, nothing waits at a barrier.
// CHECK-LABEL: llvm.func @scan_in_wave(
// CHECK: %[[X0:.*]] = llvm.sitofp
// CHECK: %[[X1:.*]] = llvm.sitofp
// CHECK: %[[X2:.*]] = llvm.sitofp
// CHECK: %[[X3:.*]] = llvm.sitofp
// CHECK: %[[S1:.*]] = llvm.fadd %[[X0]], %[[X1]] {{.*}}: f32
// CHECK: %[[S2:.*]] = llvm.fadd %[[S1]], %[[X2]] {{.*}}: f32
// CHECK: llvm.fadd %[[S2]], %[[X3]] {{.*}}: f32
// CHECK-COUNT-7: rocdl.ds_bpermute
// CHECK-NOT: rocdl.ds_bpermute
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [4], threadsPerWave = [64], wavesPerBlock = [1], order = [0]>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 0 : i64} {
  func.func @scan_in_wave(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #b>
    %x = arith.sitofp %r : tensor<256xi32, #b> to tensor<256xf32, #b>
    %s = tessel.scan %x {axis = 0 : i32} : (tensor<256xf32, #b>) -> tensor<256xf32, #b> {
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      tessel.yield %t : f32
    }
    %ps = tessel.splat %p : tensor<256x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<256x!tessel.ptr<f32>, #b>, tensor<256xi32, #b>
    tessel.store %pp, %s : (tensor<256x!tessel.ptr<f32>, #b>, tensor<256xf32, #b>) -> ()
    return
  }
}

// -----

// The same scan reversed: the thread's chain starts at its last element and
// keeps the scan order in the combine (x3, x3+x2, ...); across lanes the
// same 6 rounds and shift, still without LDS or barrier.
// CHECK-LABEL: llvm.func @scan_in_wave_reverse(
// CHECK: %[[X0:.*]] = llvm.sitofp
// CHECK: %[[X1:.*]] = llvm.sitofp
// CHECK: %[[X2:.*]] = llvm.sitofp
// CHECK: %[[X3:.*]] = llvm.sitofp
// CHECK: %[[S2:.*]] = llvm.fadd %[[X3]], %[[X2]] {{.*}}: f32
// CHECK: %[[S1:.*]] = llvm.fadd %[[S2]], %[[X1]] {{.*}}: f32
// CHECK: llvm.fadd %[[S1]], %[[X0]] {{.*}}: f32
// CHECK-COUNT-7: rocdl.ds_bpermute
// CHECK-NOT: rocdl.ds_bpermute
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [4], threadsPerWave = [64], wavesPerBlock = [1], order = [0]>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 0 : i64} {
  func.func @scan_in_wave_reverse(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #b>
    %x = arith.sitofp %r : tensor<256xi32, #b> to tensor<256xf32, #b>
    %s = tessel.scan %x {axis = 0 : i32, reverse = true} : (tensor<256xf32, #b>) -> tensor<256xf32, #b> {
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      tessel.yield %t : f32
    }
    %ps = tessel.splat %p : tensor<256x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<256x!tessel.ptr<f32>, #b>, tensor<256xi32, #b>
    tessel.store %pp, %s : (tensor<256x!tessel.ptr<f32>, #b>, tensor<256xf32, #b>) -> ()
    return
  }
}

// -----

// Two operands scanned along dim 1 of a 4 x 16 tile: the axis spans 16 of
// the wave's 64 lanes, so 4 rounds plus the shift, and every step moves both
// operands: 10 ds_bpermute, not 14 (the 4 rows are not scanned together).
// CHECK-LABEL: llvm.func @scan_two_operands(
// CHECK-COUNT-10: rocdl.ds_bpermute
// CHECK-NOT: rocdl.ds_bpermute
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [4, 16], wavesPerBlock = [1, 1], order = [1, 0]>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 0 : i64} {
  func.func @scan_two_operands(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %r = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #b>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #b>> -> tensor<1x16xi32, #b>
    %i = tessel.broadcast %e : tensor<1x16xi32, #b> -> tensor<4x16xi32, #b>
    %x = arith.sitofp %i : tensor<4x16xi32, #b> to tensor<4x16xf32, #b>
    %s:2 = tessel.scan %x, %i {axis = 1 : i32} : (tensor<4x16xf32, #b>, tensor<4x16xi32, #b>) -> (tensor<4x16xf32, #b>, tensor<4x16xi32, #b>) {
    ^bb0(%a0: f32, %a1: i32, %c0: f32, %c1: i32):
      %t0 = arith.addf %a0, %c0 : f32
      %t1 = arith.maxsi %a1, %c1 : i32
      tessel.yield %t0, %t1 : f32, i32
    }
    %ps = tessel.splat %p : tensor<4x16x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %i : tensor<4x16x!tessel.ptr<f32>, #b>, tensor<4x16xi32, #b>
    tessel.store %pp, %s#0 : (tensor<4x16x!tessel.ptr<f32>, #b>, tensor<4x16xf32, #b>) -> ()
    %qs = tessel.splat %q : tensor<4x16x!tessel.ptr<i32>, #b>
    %qp = tessel.addptr %qs, %i : tensor<4x16x!tessel.ptr<i32>, #b>, tensor<4x16xi32, #b>
    tessel.store %qp, %s#1 : (tensor<4x16x!tessel.ptr<i32>, #b>, tensor<4x16xi32, #b>) -> ()
    return
  }
}

// -----

// 512 elements over 4 waves: after the lane rounds, each wave's total goes
// to LDS, and it is read back only after a barrier (release fence, barrier,
// acquire fence); a second barrier keeps the next use of these bytes from
// overwriting them while slower waves still read. No LDS access after it.
// CHECK: llvm.mlir.global internal @tessel_lds() {addr_space = 3 : i32
// CHECK-LABEL: llvm.func @scan_across_waves(
// CHECK: rocdl.ds_bpermute
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 16 : i64} {
  func.func @scan_across_waves(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #b>
    %x = arith.sitofp %r : tensor<512xi32, #b> to tensor<512xf32, #b>
    %s = tessel.scan %x {axis = 0 : i32, tessel.lds_offset = 0 : i64} : (tensor<512xf32, #b>) -> tensor<512xf32, #b> {
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      tessel.yield %t : f32
    }
    %ps = tessel.splat %p : tensor<512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    tessel.store %pp, %s : (tensor<512x!tessel.ptr<f32>, #b>, tensor<512xf32, #b>) -> ()
    return
  }
}

// -----

// A reverse scan of two operands over 4 waves: both wave totals (f32 and
// i32) are stored before the first barrier and both are read between the
// two barriers.
// CHECK-LABEL: llvm.func @scan_across_waves_reverse(
// CHECK: rocdl.ds_bpermute
// CHECK-NOT: rocdl.s.barrier
// CHECK-DAG: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-DAG: llvm.store {{.*}} : i32, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-DAG: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-DAG: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 32 : i64} {
  func.func @scan_across_waves_reverse(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i32>) {
    %i = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #b>
    %x = arith.sitofp %i : tensor<256xi32, #b> to tensor<256xf32, #b>
    %s:2 = tessel.scan %x, %i {axis = 0 : i32, reverse = true, tessel.lds_offset = 0 : i64} : (tensor<256xf32, #b>, tensor<256xi32, #b>) -> (tensor<256xf32, #b>, tensor<256xi32, #b>) {
    ^bb0(%a0: f32, %a1: i32, %c0: f32, %c1: i32):
      %t0 = arith.addf %a0, %c0 : f32
      %t1 = arith.maxsi %a1, %c1 : i32
      tessel.yield %t0, %t1 : f32, i32
    }
    %ps = tessel.splat %p : tensor<256x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %i : tensor<256x!tessel.ptr<f32>, #b>, tensor<256xi32, #b>
    tessel.store %pp, %s#0 : (tensor<256x!tessel.ptr<f32>, #b>, tensor<256xf32, #b>) -> ()
    %qs = tessel.splat %q : tensor<256x!tessel.ptr<i32>, #b>
    %qp = tessel.addptr %qs, %i : tensor<256x!tessel.ptr<i32>, #b>, tensor<256xi32, #b>
    tessel.store %qp, %s#1 : (tensor<256x!tessel.ptr<i32>, #b>, tensor<256xi32, #b>) -> ()
    return
  }
}
