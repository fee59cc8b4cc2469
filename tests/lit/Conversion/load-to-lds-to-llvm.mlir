// tessel.buffer_load_to_local / async_wait on gfx950: loads straight into LDS.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm | FileCheck %s

// A 64x32 f16 tile, 8 halves a lane along K (4 lanes a row, 16 rows a wave,
// 4 waves), into slot 1 of a buffer at byte 512 whose rows swizzle 16-byte
// chunks ([8, 2, 4]): one 16-byte load to LDS per thread (each wave fills
// 1024 consecutive bytes), at 512 + 1 * 4096 + 1024 * wave; the swizzle
// moves chunks within rows, so each lane takes its offset from another lane
// (ds_bpermute, right where the offsets are made) and its mask bit from the
// wave's ballot of the compare (made right after it); a masked-off lane's
// offset is 2^31 (the range check writes 0). The wait is vmcnt(0) alone
// (0xF70).
// CHECK-LABEL: llvm.func @to_lds(
// CHECK: rocdl.ds_bpermute
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: %[[CMP:.*]] = llvm.icmp "slt"
// CHECK-NEXT: rocdl.ballot %[[CMP]] : i64
// CHECK-NOT: rocdl.ballot
// CHECK: rocdl.make.buffer.rsrc
// CHECK: llvm.mlir.constant(4096 : i32) : i32
// The wave's LDS pointer (M0) once, on the scalar unit.
// CHECK: rocdl.readfirstlane
// CHECK: llvm.mlir.constant(-2147483648 : i32) : i32
// CHECK: llvm.select
// CHECK: rocdl.raw.ptr.buffer.load.lds %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}{{$}}
// CHECK-NOT: rocdl.raw.ptr.buffer.load.lds
// CHECK: rocdl.s.waitcnt 3952
// CHECK: rocdl.s.barrier
#ld = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], wavesPerBlock = [4, 1], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.lds_bytes = 8704 : i64} {
  func.func @to_lds(%p: !tessel.ptr<f16>, %n: i32) {
    %one = arith.constant 1 : i32
    %r = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32, #tessel.slice<dim = 0, parent = #ld>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<32xi32, #tessel.slice<dim = 0, parent = #ld>> -> tensor<1x32xi32, #ld>
    %i = tessel.broadcast %e : tensor<1x32xi32, #ld> -> tensor<64x32xi32, #ld>
    %ns = tessel.splat %n : tensor<64x32xi32, #ld>
    %m = arith.cmpi slt, %i, %ns : tensor<64x32xi32, #ld>
    %b = tessel.local_alloc {tessel.lds_offset = 512 : i64} : !tessel.lds<2x64x32xf16, order [1, 0], pad 0, swizzle [8, 2, 4]>
    tessel.buffer_load_to_local %p[%i], %m into %b[%one] {vec = 8 : i32} : (!tessel.ptr<f16>, tensor<64x32xi32, #ld>, tensor<64x32xi1, #ld>, !tessel.lds<2x64x32xf16, order [1, 0], pad 0, swizzle [8, 2, 4]>, i32) -> ()
    tessel.async_wait
    tessel.barrier
    return
  }
}


// -----

// The mask an AND of two compares (a loop's K bound and a row bound): the
// source lane's bit is read from the AND of the two compares' ballots, each
// made right after its compare, not from one ballot of the AND (which the
// backend makes a 0/1 select and a compare per group).
// CHECK-LABEL: llvm.func @to_lds_conjunction(
// CHECK: %[[A:.*]] = llvm.icmp "slt" %{{.*}}, %arg1 : i32
// CHECK-NEXT: %[[BA:.*]] = rocdl.ballot %[[A]] : i64
// CHECK: %[[B:.*]] = llvm.icmp "slt" %{{.*}}, %arg2 : i32
// CHECK-NEXT: %[[BB:.*]] = rocdl.ballot %[[B]] : i64
// CHECK: llvm.and %[[BB]], %[[BA]] : i64
// CHECK-NOT: rocdl.ballot %{{.*}} : i64
// CHECK: rocdl.raw.ptr.buffer.load.lds
#ld2 = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], wavesPerBlock = [4, 1], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.lds_bytes = 8704 : i64} {
  func.func @to_lds_conjunction(%p: !tessel.ptr<f16>, %n: i32, %m: i32) {
    %one = arith.constant 1 : i32
    %r = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32, #tessel.slice<dim = 0, parent = #ld2>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<32xi32, #tessel.slice<dim = 0, parent = #ld2>> -> tensor<1x32xi32, #ld2>
    %i = tessel.broadcast %e : tensor<1x32xi32, #ld2> -> tensor<64x32xi32, #ld2>
    %ns = tessel.splat %n : tensor<64x32xi32, #ld2>
    %k = arith.cmpi slt, %i, %ns : tensor<64x32xi32, #ld2>
    %rr = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 1, parent = #ld2>>
    %re = tessel.expand_dims %rr {axis = 1 : i32} : tensor<64xi32, #tessel.slice<dim = 1, parent = #ld2>> -> tensor<64x1xi32, #ld2>
    %ms = tessel.splat %m : tensor<64x1xi32, #ld2>
    %rm = arith.cmpi slt, %re, %ms : tensor<64x1xi32, #ld2>
    %rb = tessel.broadcast %rm : tensor<64x1xi1, #ld2> -> tensor<64x32xi1, #ld2>
    %mask = arith.andi %rb, %k : tensor<64x32xi1, #ld2>
    %b = tessel.local_alloc {tessel.lds_offset = 512 : i64} : !tessel.lds<2x64x32xf16, order [1, 0], pad 0, swizzle [8, 2, 4]>
    tessel.buffer_load_to_local %p[%i], %mask into %b[%one] {vec = 8 : i32} : (!tessel.ptr<f16>, tensor<64x32xi32, #ld2>, tensor<64x32xi1, #ld2>, !tessel.lds<2x64x32xf16, order [1, 0], pad 0, swizzle [8, 2, 4]>, i32) -> ()
    tessel.async_wait
    tessel.barrier
    return
  }
}
