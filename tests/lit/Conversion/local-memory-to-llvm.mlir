// tessel.local_alloc / local_store / local_load / barrier: a tile kept in LDS.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm | FileCheck %s

// A 64x64 f32 tile in rows of 4 per thread, written to slot 1 of a two-slot
// buffer placed at byte 1024 and read back in columns. The slot starts at
// 1024 + 1 * 64 rows * (64 + 4) * 4 bytes (17408 a slot); the row's pad keeps the
// 4-wide accesses aligned. No barrier but the one asked for.
// CHECK: llvm.mlir.global internal @tessel_lds() {addr_space = 3 : i32
// CHECK-LABEL: llvm.func @slots(
// CHECK: %[[BASE:.*]] = llvm.mlir.constant(1024 : i32) : i32
// CHECK: %[[SIZE:.*]] = llvm.mlir.constant(17408 : i32) : i32
// CHECK-NEXT: %[[OFF:.*]] = llvm.mul %{{.*}}, %[[SIZE]] : i32
// CHECK-NEXT: llvm.add %[[BASE]], %[[OFF]] : i32
// CHECK-NOT: rocdl.s.barrier
// CHECK-COUNT-4: llvm.store {{.*}} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT: llvm.load {{.*}} !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.mlir.constant(17408 : i32) : i32
// CHECK-COUNT-16: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.return
#row = #tessel.blocked<sizePerThread = [1, 4], threadsPerWave = [4, 16], wavesPerBlock = [4, 1], order = [1, 0]>
#col = #tessel.blocked<sizePerThread = [4, 1], threadsPerWave = [16, 4], wavesPerBlock = [1, 4], order = [0, 1]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 35840 : i64} {
  func.func @slots(%p: !tessel.ptr<f32>) {
    %one = arith.constant 1 : i32
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #row>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<64xi32, #tessel.slice<dim = 0, parent = #row>> -> tensor<1x64xi32, #row>
    %i = tessel.broadcast %e : tensor<1x64xi32, #row> -> tensor<64x64xi32, #row>
    %x = arith.sitofp %i : tensor<64x64xi32, #row> to tensor<64x64xf32, #row>
    %b = tessel.local_alloc {tessel.lds_offset = 1024 : i64} : !tessel.lds<2x64x64xf32, order [1, 0], pad 4>
    tessel.local_store %x, %b[%one] : tensor<64x64xf32, #row> -> !tessel.lds<2x64x64xf32, order [1, 0], pad 4>
    tessel.barrier
    %y = tessel.local_load %b[%one] : !tessel.lds<2x64x64xf32, order [1, 0], pad 4> -> tensor<64x64xf32, #col>
    %ps = tessel.splat %p : tensor<64x64x!tessel.ptr<f32>, #col>
    tessel.store %ps, %y : (tensor<64x64x!tessel.ptr<f32>, #col>, tensor<64x64xf32, #col>) -> ()
    return
  }
}

// -----

// A B operand as loaded (rows of 8 along N, 4 rows per thread) kept K-fastest
// in LDS: each thread's 4 elements along K are 8 registers apart, and one
// 8-byte write moves them (not four 2-byte ones).
// CHECK-LABEL: llvm.func @k_runs(
// CHECK-NOT: llvm.store {{.*}} : f16, !llvm.ptr<3>
// CHECK-COUNT-8: llvm.store {{.*}} : vector<4xf16>, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: llvm.return
#b = #tessel.blocked<sizePerThread = [4, 8], threadsPerWave = [4, 16], wavesPerBlock = [4, 1], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 17408 : i64} {
  func.func @k_runs(%p: !tessel.ptr<f16>) {
    %zero = arith.constant 0 : i32
    %ps = tessel.splat %p : tensor<64x128x!tessel.ptr<f16>, #b>
    %x = tessel.load %ps : (tensor<64x128x!tessel.ptr<f16>, #b>) -> tensor<64x128xf16, #b>
    %buf = tessel.local_alloc {tessel.lds_offset = 0 : i64} : !tessel.lds<1x64x128xf16, order [0, 1], pad 4>
    tessel.local_store %x, %buf[%zero] : tensor<64x128xf16, #b> -> !tessel.lds<1x64x128xf16, order [0, 1], pad 4>
    return
  }
}

// -----

// A swizzled slot (gfx1100's B^T matmul tile: 16-byte runs along K, each
// row's 16-byte chunks XOR'd with its index mod 8): the thread's part of the
// address is its unswizzled offset XOR the row's phase in the chunk bits,
// added to the slot's start as one register. As a sum of the two, every
// store's address was an add CodeGenPrepare sinks next to each store,
// keeping both addends live over the loop (spilled at 4 waves).
// CHECK-LABEL: llvm.func @swizzled_part(
// CHECK: %[[PART:.*]] = llvm.xor %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: llvm.add %{{.*}}, %[[PART]] : i32
// CHECK-COUNT-8: llvm.store {{.*}} : vector<8xf16>, !llvm.ptr<3>
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: llvm.return
#bt = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [8, 4], wavesPerBlock = [1, 4], order = [0, 1]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 32 : i32, tessel.lds_bytes = 32768 : i64} {
  func.func @swizzled_part(%p: !tessel.ptr<f16>) {
    %zero = arith.constant 0 : i32
    %ps = tessel.splat %p : tensor<64x128x!tessel.ptr<f16>, #bt>
    %x = tessel.load %ps : (tensor<64x128x!tessel.ptr<f16>, #bt>) -> tensor<64x128xf16, #bt>
    %buf = tessel.local_alloc {tessel.lds_offset = 16384 : i64} : !tessel.lds<1x64x128xf16, order [0, 1], pad 0, swizzle [8, 1, 8]>
    tessel.local_store %x, %buf[%zero] : tensor<64x128xf16, #bt> -> !tessel.lds<1x64x128xf16, order [0, 1], pad 0, swizzle [8, 1, 8]>
    return
  }
}
