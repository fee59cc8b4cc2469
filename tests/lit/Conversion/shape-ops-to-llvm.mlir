// reshape, permute, join, split: each an LDS round trip (writes, barrier, reads, barrier).
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm | FileCheck %s

// 1024 f32 as 32 x 32: each of 256 threads writes its 4 elements, and after
// a barrier reads the 4 of its new shape; a second barrier ends the use of
// the bytes.
// CHECK-LABEL: llvm.func @reshape(
// CHECK-NOT: rocdl.s.barrier
// CHECK-COUNT-4: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.return
#a = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
#m = #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [4, 16], wavesPerBlock = [4, 1], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 4224 : i64} {
  func.func @reshape(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #a>
    %x = arith.sitofp %r : tensor<1024xi32, #a> to tensor<1024xf32, #a>
    %y = tessel.reshape %x {tessel.lds_offset = 0 : i64} : tensor<1024xf32, #a> -> tensor<32x32xf32, #m>
    %ps = tessel.splat %p : tensor<32x32x!tessel.ptr<f32>, #m>
    tessel.store %ps, %y : (tensor<32x32x!tessel.ptr<f32>, #m>, tensor<32x32xf32, #m>) -> ()
    return
  }
}

// -----

// A transpose whose result has the operand's encoding: the encoding is the
// same but the elements are not, so it still goes through LDS (16 writes,
// barrier, 16 reads, barrier) and is never a rename.
// CHECK-LABEL: llvm.func @permute(
// CHECK-NOT: rocdl.s.barrier
// CHECK-COUNT-16: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-COUNT-16: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.return
#row = #tessel.blocked<sizePerThread = [1, 4], threadsPerWave = [4, 16], wavesPerBlock = [4, 1], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 16896 : i64} {
  func.func @permute(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #row>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #row>> -> tensor<1x64xi32, #row>
    %i = tessel.broadcast %e : tensor<1x64xi32, #row> -> tensor<64x64xi32, #row>
    %x = arith.sitofp %i : tensor<64x64xi32, #row> to tensor<64x64xf32, #row>
    %t = tessel.permute %x {order = array<i32: 1, 0>, tessel.lds_offset = 0 : i64} : tensor<64x64xf32, #row> -> tensor<64x64xf32, #row>
    %ps = tessel.splat %p : tensor<64x64x!tessel.ptr<f32>, #row>
    %pp = tessel.addptr %ps, %i : tensor<64x64x!tessel.ptr<f32>, #row>, tensor<64x64xi32, #row>
    tessel.store %pp, %t : (tensor<64x64x!tessel.ptr<f32>, #row>, tensor<64x64xf32, #row>) -> ()
    return
  }
}

// -----

// Joining two 256-element tiles: both operands are in LDS before the
// barrier (one element each per thread), then each thread reads the pair it
// holds in the 256 x 2 result.
// CHECK-LABEL: llvm.func @join(
// CHECK-NOT: rocdl.s.barrier
// CHECK-COUNT-2: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-COUNT-2: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.return
#a = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
#j = #tessel.blocked<sizePerThread = [1, 2], threadsPerWave = [64, 1], wavesPerBlock = [4, 1], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 2112 : i64} {
  func.func @join(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #a>
    %x = arith.sitofp %r : tensor<256xi32, #a> to tensor<256xf32, #a>
    %y = math.exp %x : tensor<256xf32, #a>
    %z = tessel.join %x, %y {tessel.lds_offset = 0 : i64} : tensor<256xf32, #a>, tensor<256xf32, #a> -> tensor<256x2xf32, #j>
    %ps = tessel.splat %p : tensor<256x2x!tessel.ptr<f32>, #j>
    tessel.store %ps, %z : (tensor<256x2x!tessel.ptr<f32>, #j>, tensor<256x2xf32, #j>) -> ()
    return
  }
}

// -----

// Splitting a 256 x 2 tile: the whole operand (2 elements per thread) is
// written before the barrier, and each thread reads back only the one
// element of the half it holds.
// CHECK-LABEL: llvm.func @split(
// CHECK-NOT: rocdl.s.barrier
// CHECK-COUNT-2: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.return
#a = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
#j = #tessel.blocked<sizePerThread = [1, 2], threadsPerWave = [64, 1], wavesPerBlock = [4, 1], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 2112 : i64} {
  func.func @split(%p: !tessel.ptr<f32>) {
    %c = tessel.make_range {start = 0 : i32, end = 2 : i32} : tensor<2xi32, #tessel.slice<dim = 0, parent = #j>>
    %ce = tessel.expand_dims %c {axis = 0 : i32} : tensor<2xi32, #tessel.slice<dim = 0, parent = #j>> -> tensor<1x2xi32, #j>
    %cb = tessel.broadcast %ce : tensor<1x2xi32, #j> -> tensor<256x2xi32, #j>
    %z = arith.sitofp %cb : tensor<256x2xi32, #j> to tensor<256x2xf32, #j>
    %h = tessel.split %z {half = 1 : i32, tessel.lds_offset = 0 : i64} : tensor<256x2xf32, #j> -> tensor<256xf32, #a>
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #a>
    %pp = tessel.splat %p : tensor<256x!tessel.ptr<f32>, #a>
    %q = tessel.addptr %pp, %r : tensor<256x!tessel.ptr<f32>, #a>, tensor<256xi32, #a>
    tessel.store %q, %h : (tensor<256x!tessel.ptr<f32>, #a>, tensor<256xf32, #a>) -> ()
    return
  }
}

// -----

// Scalars are held by every thread: joining two writes each from one thread
// only (a branch per store); splitting the 2-element tile back, which all
// waves hold, is written by its owners only and read as one scalar.
// CHECK-LABEL: llvm.func @scalars(
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.cond_br
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: llvm.cond_br
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.cond_br
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.return
#a = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 16 : i64} {
  func.func @scalars(%p: !tessel.ptr<f32>, %s: f32, %t: f32) {
    %j = tessel.join %s, %t {tessel.lds_offset = 0 : i64} : f32, f32 -> tensor<2xf32, #a>
    %h = tessel.split %j {half = 1 : i32, tessel.lds_offset = 0 : i64} : tensor<2xf32, #a> -> f32
    tessel.store %p, %h : (!tessel.ptr<f32>, f32) -> ()
    return
  }
}
