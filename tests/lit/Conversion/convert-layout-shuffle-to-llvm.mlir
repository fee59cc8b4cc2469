// tessel.convert_layout between layouts that keep every element in its wave:
// an in-wave shuffle (ds_bpermute, or v_permlanex16 where lanes swap rows of
// 16), with no LDS and no barrier.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm | FileCheck %s

// A transpose within each of 2 waves (32 x 16 f32, wave64): a thread's
// register 1 (row + 1) is another lane's, and which of the source's 2
// registers holds it depends on the lane (a select): 2 ds_bpermute a
// register, no LDS memory, no barrier.
// CHECK-LABEL: llvm.func @transpose_in_wave(
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK-COUNT-8: rocdl.ds_bpermute
// CHECK-NOT: rocdl.ds_bpermute
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.return
#rows = #tessel.blocked<sizePerThread = [1, 2], threadsPerWave = [16, 4], wavesPerBlock = [2, 1], order = [1, 0]>
#cols = #tessel.blocked<sizePerThread = [2, 1], threadsPerWave = [8, 8], wavesPerBlock = [2, 1], order = [0, 1]>
module attributes {tessel.num_warps = 2 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.lds_bytes = 0 : i64} {
  func.func @transpose_in_wave(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #rows>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #rows>> -> tensor<1x16xi32, #rows>
    %i = tessel.broadcast %e : tensor<1x16xi32, #rows> -> tensor<32x16xi32, #rows>
    %x = arith.sitofp %i : tensor<32x16xi32, #rows> to tensor<32x16xf32, #rows>
    %y = tessel.convert_layout %x : tensor<32x16xf32, #rows> -> tensor<32x16xf32, #cols>
    %c = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #cols>>
    %ce = tessel.expand_dims %c {axis = 0 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #cols>> -> tensor<1x16xi32, #cols>
    %ci = tessel.broadcast %ce : tensor<1x16xi32, #cols> -> tensor<32x16xi32, #cols>
    %ps = tessel.splat %p : tensor<32x16x!tessel.ptr<f32>, #cols>
    %pp = tessel.addptr %ps, %ci : tensor<32x16x!tessel.ptr<f32>, #cols>, tensor<32x16xi32, #cols>
    tessel.store %pp, %y : (tensor<32x16x!tessel.ptr<f32>, #cols>, tensor<32x16xf32, #cols>) -> ()
    return
  }
}

// -----

// gfx1100 attention's P: the transposed WMMA result (lane l: row l % 16,
// columns 2 r + l / 16), cast to f16, becomes the next dot's A (each lane all
// 16 columns of its row): the other 8 columns are the same lane's of the
// other row of 16. Each pair of f16 registers moves once, packed in a
// v_permlanex16 (16 for the thread's 32 values), and a select keeps the
// lane's own where its row holds the column. No LDS, no barrier, no
// ds_bpermute.
// CHECK-LABEL: llvm.func @wmma_result_to_a(
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: rocdl.ds_bpermute
// CHECK-COUNT-16: rocdl.permlanex16 {{.*}} : i32
// CHECK-NOT: rocdl.permlanex16
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: llvm.call_intrinsic "llvm.amdgcn.wmma
// CHECK: llvm.return
#acc = #tessel.wmma<wavesPerBlock = [2, 1], transposed = true>
#a = #tessel.dot_operand<opIdx = 0, parent = #acc, kWidth = 16>
#b = #tessel.dot_operand<opIdx = 1, parent = #acc, kWidth = 16>
module attributes {tessel.num_warps = 2 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100", tessel.lds_bytes = 0 : i64} {
  func.func @wmma_result_to_a(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #acc>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #acc>> -> tensor<1x64xi32, #acc>
    %i = tessel.broadcast %e : tensor<1x64xi32, #acc> -> tensor<32x64xi32, #acc>
    %x = arith.sitofp %i : tensor<32x64xi32, #acc> to tensor<32x64xf16, #acc>
    %y = tessel.convert_layout %x : tensor<32x64xf16, #acc> -> tensor<32x64xf16, #a>
    %v = arith.constant dense<1.0> : tensor<64x16xf16, #b>
    %z = arith.constant dense<0.0> : tensor<32x16xf32, #acc>
    %o = tessel.dot %y, %v, %z : tensor<32x64xf16, #a> * tensor<64x16xf16, #b> -> tensor<32x16xf32, #acc>
    %c = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #acc>>
    %ce = tessel.expand_dims %c {axis = 0 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #acc>> -> tensor<1x16xi32, #acc>
    %ci = tessel.broadcast %ce : tensor<1x16xi32, #acc> -> tensor<32x16xi32, #acc>
    %ps = tessel.splat %p : tensor<32x16x!tessel.ptr<f32>, #acc>
    %pp = tessel.addptr %ps, %ci : tensor<32x16x!tessel.ptr<f32>, #acc>, tensor<32x16xi32, #acc>
    tessel.store %pp, %o : (tensor<32x16x!tessel.ptr<f32>, #acc>, tensor<32x16xf32, #acc>) -> ()
    return
  }
}

// -----

// The same kind of transpose on 64 x 64 f32 in one wave: each of a thread's
// 64 result registers may come from 4 of the source's (the lane picks), so
// a shuffle would take 256 ds_bpermute; the target's costs send it through
// LDS (writes, a barrier, reads, a barrier).
// CHECK-LABEL: llvm.func @transpose_too_costly(
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: llvm.return
#rows = #tessel.blocked<sizePerThread = [1, 4], threadsPerWave = [16, 4], wavesPerBlock = [1, 1], order = [1, 0]>
#cols = #tessel.blocked<sizePerThread = [4, 1], threadsPerWave = [4, 16], wavesPerBlock = [1, 1], order = [0, 1]>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.lds_bytes = 17408 : i64} {
  func.func @transpose_too_costly(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #rows>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #rows>> -> tensor<1x64xi32, #rows>
    %i = tessel.broadcast %e : tensor<1x64xi32, #rows> -> tensor<64x64xi32, #rows>
    %x = arith.sitofp %i : tensor<64x64xi32, #rows> to tensor<64x64xf32, #rows>
    %y = tessel.convert_layout %x {tessel.lds_offset = 0 : i64} : tensor<64x64xf32, #rows> -> tensor<64x64xf32, #cols>
    %c = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #cols>>
    %ce = tessel.expand_dims %c {axis = 0 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #cols>> -> tensor<1x64xi32, #cols>
    %ci = tessel.broadcast %ce : tensor<1x64xi32, #cols> -> tensor<64x64xi32, #cols>
    %ps = tessel.splat %p : tensor<64x64x!tessel.ptr<f32>, #cols>
    %pp = tessel.addptr %ps, %ci : tensor<64x64x!tessel.ptr<f32>, #cols>, tensor<64x64xi32, #cols>
    tessel.store %pp, %y : (tensor<64x64x!tessel.ptr<f32>, #cols>, tensor<64x64xf32, #cols>) -> ()
    return
  }
}

// -----

// The transpose of the first case on f16, hoisted before a loop that reads
// it: LDS, not the shuffle. The shuffle picks each half on its own, and LLVM
// packs them next to every loop that reads them, holding them unpacked (twice
// the registers) in between; LDS reads them packed, and the cycles are
// spent once.
// CHECK-LABEL: llvm.func @transpose_read_in_loop(
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK: llvm.load {{.*}} !llvm.ptr<3>
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: llvm.return
#rows = #tessel.blocked<sizePerThread = [1, 2], threadsPerWave = [16, 4], wavesPerBlock = [2, 1], order = [1, 0]>
#cols = #tessel.blocked<sizePerThread = [2, 1], threadsPerWave = [8, 8], wavesPerBlock = [2, 1], order = [0, 1]>
module attributes {tessel.num_warps = 2 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.lds_bytes = 1152 : i64} {
  func.func @transpose_read_in_loop(%p: !tessel.ptr<f16>, %n: i32) {
    %r = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #rows>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #rows>> -> tensor<1x16xi32, #rows>
    %i = tessel.broadcast %e : tensor<1x16xi32, #rows> -> tensor<32x16xi32, #rows>
    %x = arith.sitofp %i : tensor<32x16xi32, #rows> to tensor<32x16xf16, #rows>
    %y = tessel.convert_layout %x {tessel.lds_offset = 0 : i64} : tensor<32x16xf16, #rows> -> tensor<32x16xf16, #cols>
    %c = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #cols>>
    %ce = tessel.expand_dims %c {axis = 0 : i32} : tensor<16xi32, #tessel.slice<dim = 0, parent = #cols>> -> tensor<1x16xi32, #cols>
    %ci = tessel.broadcast %ce : tensor<1x16xi32, #cols> -> tensor<32x16xi32, #cols>
    %ps = tessel.splat %p : tensor<32x16x!tessel.ptr<f16>, #cols>
    %pp = tessel.addptr %ps, %ci : tensor<32x16x!tessel.ptr<f16>, #cols>, tensor<32x16xi32, #cols>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %k = %c0 to %n step %c1 : i32 {
      %ks = tessel.splat %k : tensor<32x16xi32, #cols>
      %pk = tessel.addptr %pp, %ks : tensor<32x16x!tessel.ptr<f16>, #cols>, tensor<32x16xi32, #cols>
      tessel.store %pk, %y : (tensor<32x16x!tessel.ptr<f16>, #cols>, tensor<32x16xf16, #cols>) -> ()
    }
    return
  }
}
