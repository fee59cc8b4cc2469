// tessel.convert_layout: an LDS round trip between barriers, or a rename with no LDS and no barrier.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm | FileCheck %s

// Rows to columns on 64 x 64 f32 over 256 threads: each thread writes its 16
// elements to LDS, waits at a barrier, reads the 16 elements of its new
// layout, and waits again before the bytes can be reused. Nothing touches
// LDS outside that window. The LDS index runs along the columns' layout's
// runs (dim 0), so the reads are 4 vectors of 4 and the writes single
// floats. No pad: a swizzle (chunks of 4 XOR'd with (column / 4) % 8, an
// xor per access) keeps the reads conflict-free and the writes 2-way in the
// bank model, where rows of 64 + 4 would put the writes 8-way.
// CHECK: llvm.mlir.global internal @tessel_lds() {addr_space = 3 : i32
// CHECK-LABEL: llvm.func @rows_to_columns(
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.xor
// CHECK-COUNT-16: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK: llvm.xor
// CHECK-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.return
#row = #tessel.blocked<sizePerThread = [1, 4], threadsPerWave = [4, 16], wavesPerBlock = [4, 1], order = [1, 0]>
#col = #tessel.blocked<sizePerThread = [4, 1], threadsPerWave = [16, 4], wavesPerBlock = [1, 4], order = [0, 1]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 17408 : i64} {
  func.func @rows_to_columns(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #row>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #row>> -> tensor<1x64xi32, #row>
    %i = tessel.broadcast %e : tensor<1x64xi32, #row> -> tensor<64x64xi32, #row>
    %x = arith.sitofp %i : tensor<64x64xi32, #row> to tensor<64x64xf32, #row>
    %y = tessel.convert_layout %x {tessel.lds_offset = 0 : i64} : tensor<64x64xf32, #row> -> tensor<64x64xf32, #col>
    %c = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #col>>
    %ce = tessel.expand_dims %c {axis = 0 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #col>> -> tensor<1x64xi32, #col>
    %ci = tessel.broadcast %ce : tensor<1x64xi32, #col> -> tensor<64x64xi32, #col>
    %ps = tessel.splat %p : tensor<64x64x!tessel.ptr<f32>, #col>
    %pp = tessel.addptr %ps, %ci : tensor<64x64x!tessel.ptr<f32>, #col>, tensor<64x64xi32, #col>
    tessel.store %pp, %y : (tensor<64x64x!tessel.ptr<f32>, #col>, tensor<64x64xf32, #col>) -> ()
    return
  }
}

// -----

// 2 x 64 bools, each row held by 2 of the 4 waves (replicas), to a layout
// that gives every wave both rows (not in-wave): only the owning threads
// write LDS, inside a branch that closes before the barrier every thread
// must reach; bools travel as bytes.
// CHECK-LABEL: llvm.func @replicated_bools(
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.cond_br
// CHECK: llvm.store {{.*}} : i8, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: llvm.br
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK-COUNT-2: llvm.load {{.*}} : !llvm.ptr<3> -> i8
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.return
#a = #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [1, 64], wavesPerBlock = [4, 1], order = [1, 0]>
#v = #tessel.blocked<sizePerThread = [2, 1], threadsPerWave = [1, 64], wavesPerBlock = [1, 4], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 160 : i64} {
  func.func @replicated_bools(%p: !tessel.ptr<i1>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #a>>
    %re = tessel.expand_dims %r {axis = 0 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #a>> -> tensor<1x64xi32, #a>
    %rb = tessel.broadcast %re : tensor<1x64xi32, #a> -> tensor<2x64xi32, #a>
    %c = arith.constant dense<3> : tensor<2x64xi32, #a>
    %m = arith.cmpi slt, %rb, %c : tensor<2x64xi32, #a>
    %y = tessel.convert_layout %m {tessel.lds_offset = 0 : i64} : tensor<2x64xi1, #a> -> tensor<2x64xi1, #v>
    %r2 = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #v>>
    %r2e = tessel.expand_dims %r2 {axis = 0 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #v>> -> tensor<1x64xi32, #v>
    %r2b = tessel.broadcast %r2e : tensor<1x64xi32, #v> -> tensor<2x64xi32, #v>
    %ps = tessel.splat %p : tensor<2x64x!tessel.ptr<i1>, #v>
    %pp = tessel.addptr %ps, %r2b : tensor<2x64x!tessel.ptr<i1>, #v>, tensor<2x64xi32, #v>
    tessel.store %pp, %y : (tensor<2x64x!tessel.ptr<i1>, #v>, tensor<2x64xi1, #v>) -> ()
    return
  }
}

// -----

// Converting to the layout the tile already has renames registers: no LDS,
// no barrier, no lane exchange.
// CHECK-LABEL: llvm.func @same_layout(
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 0 : i64} {
  func.func @same_layout(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #b>
    %x = arith.sitofp %r : tensor<256xi32, #b> to tensor<256xf32, #b>
    %y = tessel.convert_layout %x : tensor<256xf32, #b> -> tensor<256xf32, #b>
    %ps = tessel.splat %p : tensor<256x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<256x!tessel.ptr<f32>, #b>, tensor<256xi32, #b>
    tessel.store %pp, %y : (tensor<256x!tessel.ptr<f32>, #b>, tensor<256xf32, #b>) -> ()
    return
  }
}

// -----

// A one-element tile is the same value in every thread whatever the layout:
// converting between two different layouts is still a rename.
// CHECK-LABEL: llvm.func @one_element(
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.return
#a = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
#c = #tessel.blocked<sizePerThread = [4], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 0 : i64} {
  func.func @one_element(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 1 : i32} : tensor<1xi32, #a>
    %x = arith.sitofp %r : tensor<1xi32, #a> to tensor<1xf32, #a>
    %y = tessel.convert_layout %x : tensor<1xf32, #a> -> tensor<1xf32, #c>
    %r2 = tessel.make_range {start = 0 : i32, end = 1 : i32} : tensor<1xi32, #c>
    %ps = tessel.splat %p : tensor<1x!tessel.ptr<f32>, #c>
    %pp = tessel.addptr %ps, %r2 : tensor<1x!tessel.ptr<f32>, #c>, tensor<1xi32, #c>
    tessel.store %pp, %y : (tensor<1x!tessel.ptr<f32>, #c>, tensor<1xf32, #c>) -> ()
    return
  }
}
