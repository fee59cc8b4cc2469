// tessel.buffer_load_to_local / async_wait on gfx950: loads straight into LDS.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm | FileCheck %s

// A 64x32 f16 tile, 8 halves a lane along K (4 lanes a row, 16 rows a wave,
// 4 waves), into slot 1 of a buffer at byte 512 whose rows swizzle 16-byte
// chunks ([8, 2, 4]): one 16-byte load to LDS per thread (each wave fills
// 1024 consecutive bytes), at 512 + 1 * 4096 + 1024 * wave; the swizzle
// moves chunks within rows, so each lane takes its offset from another lane
// (ds_bpermute, right where the offsets are made) and its mask bit as that
// lane computes it: the mask is a function of the thread id, so its compare
// is made again from the source lane's thread id (this wave's bits, the
// source lane's), no ballot; a masked-off lane's offset is 2^31 (the range
// check writes 0). The wait is vmcnt(0) alone (0xF70).
// CHECK-LABEL: llvm.func @to_lds(
// CHECK-NOT: rocdl.ballot
// The wave's part of the LDS pointer (M0) once, on the scalar unit, where
// the wave id is made (not in a loop), the slot's bytes added to it.
// CHECK: %[[WAVE:.*]] = rocdl.readfirstlane %{{.*}} : i32
// CHECK: rocdl.ds_bpermute
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: rocdl.make.buffer.rsrc
// CHECK: llvm.mlir.constant(4096 : i32) : i32
// CHECK: llvm.add %{{.*}}, %[[WAVE]] : i32
// CHECK-NOT: rocdl.readfirstlane
// CHECK: llvm.mlir.constant(-64 : i32) : i32
// CHECK: %[[SRC:.*]] = llvm.or %{{.*}}, %{{.*}} : i32
// CHECK: llvm.and %[[SRC]], %{{.*}} : i32
// CHECK: %[[CMP:.*]] = llvm.icmp "slt" %{{.*}}, %arg1 : i32
// CHECK: llvm.mlir.constant(-2147483648 : i32) : i32
// CHECK: llvm.select %[[CMP]]
// CHECK: rocdl.raw.ptr.buffer.load.lds %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}{{$}}
// CHECK-NOT: rocdl.raw.ptr.buffer.load.lds
// CHECK-NOT: rocdl.ballot
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

// The mask an AND of two compares (a loop's K bound and a row bound), both
// functions of the thread id: each made again from the source lane's thread
// id and ANDed, no ballot.
// CHECK-LABEL: llvm.func @to_lds_conjunction(
// CHECK-NOT: rocdl.ballot
// CHECK: rocdl.make.buffer.rsrc
// CHECK: %[[ROW:.*]] = llvm.icmp "slt" %{{.*}}, %arg2 : i32
// CHECK: %[[K:.*]] = llvm.icmp "slt" %{{.*}}, %arg1 : i32
// CHECK: %[[BOTH:.*]] = llvm.and %[[ROW]], %[[K]] : i1
// CHECK: llvm.select %[[BOTH]]
// CHECK: rocdl.raw.ptr.buffer.load.lds
// CHECK-NOT: rocdl.ballot
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


// -----

// A conjunct that is not a function of the thread id (a compare of loaded
// values: another lane's need not be this one's) comes from the wave's
// ballot, made right after its compare, shifted by the source lane; the
// row bound beside it is made again from the source lane's thread id.
// CHECK-LABEL: llvm.func @to_lds_loaded_mask(
// CHECK: %[[L:.*]] = llvm.icmp "sgt" %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[BL:.*]] = rocdl.ballot %[[L]] : i64
// CHECK-NOT: rocdl.ballot
// CHECK: rocdl.make.buffer.rsrc
// CHECK: %[[ROW:.*]] = llvm.icmp "slt" %{{.*}}, %arg2 : i32
// CHECK: llvm.lshr %[[BL]], %{{.*}} : i64
// CHECK: %[[BIT:.*]] = llvm.icmp "ne" %{{.*}}, %{{.*}} : i64
// CHECK: %[[BOTH:.*]] = llvm.and %[[ROW]], %[[BIT]] : i1
// CHECK: llvm.select %[[BOTH]]
// CHECK: rocdl.raw.ptr.buffer.load.lds
#ld3 = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], wavesPerBlock = [4, 1], order = [1, 0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.lds_bytes = 8704 : i64} {
  func.func @to_lds_loaded_mask(%p: !tessel.ptr<f16>, %q: !tessel.ptr<i32>, %m: i32) {
    %one = arith.constant 1 : i32
    %r = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32, #tessel.slice<dim = 0, parent = #ld3>>
    %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<32xi32, #tessel.slice<dim = 0, parent = #ld3>> -> tensor<1x32xi32, #ld3>
    %i = tessel.broadcast %e : tensor<1x32xi32, #ld3> -> tensor<64x32xi32, #ld3>
    %v = tessel.buffer_load %q[%i] : (!tessel.ptr<i32>, tensor<64x32xi32, #ld3>) -> tensor<64x32xi32, #ld3>
    %zero = arith.constant dense<0> : tensor<64x32xi32, #ld3>
    %k = arith.cmpi sgt, %v, %zero : tensor<64x32xi32, #ld3>
    %rr = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #tessel.slice<dim = 1, parent = #ld3>>
    %re = tessel.expand_dims %rr {axis = 1 : i32} : tensor<64xi32, #tessel.slice<dim = 1, parent = #ld3>> -> tensor<64x1xi32, #ld3>
    %ms = tessel.splat %m : tensor<64x1xi32, #ld3>
    %rm = arith.cmpi slt, %re, %ms : tensor<64x1xi32, #ld3>
    %rb = tessel.broadcast %rm : tensor<64x1xi1, #ld3> -> tensor<64x32xi1, #ld3>
    %mask = arith.andi %rb, %k : tensor<64x32xi1, #ld3>
    %b = tessel.local_alloc {tessel.lds_offset = 512 : i64} : !tessel.lds<2x64x32xf16, order [1, 0], pad 0, swizzle [8, 2, 4]>
    tessel.buffer_load_to_local %p[%i], %mask into %b[%one] {vec = 8 : i32} : (!tessel.ptr<f16>, tensor<64x32xi32, #ld3>, tensor<64x32xi1, #ld3>, !tessel.lds<2x64x32xf16, order [1, 0], pad 0, swizzle [8, 2, 4]>, i32) -> ()
    tessel.async_wait
    tessel.barrier
    return
  }
}
