// wave32 (gfx1100): lane = tid & 31, wave = tid >> 5, butterflies and scans over 32 lanes.
// RUN: tessel-opt %s -split-input-file --tessel-lower-to-llvm | FileCheck %s --implicit-check-not="llvm.mlir.constant(63 : i32)"

// 4 waves of 32 lanes are 128 threads; 1024 elements give each thread 2
// groups of 4 contiguous f32, moved with two 16-byte accesses per operand.
// The masked accesses are buffer instructions (gfx11's resource word, OOB_SELECT 3)
// whose range is what is left of n past the program's block: no select, no
// branch.
// CHECK-LABEL: llvm.func @vector_add(
// CHECK-SAME: rocdl.flat_work_group_size = "128,128"
// CHECK-DAG: %[[C31:.*]] = llvm.mlir.constant(31 : i32) : i32
// CHECK-DAG: %[[C5:.*]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-DAG: %[[TID:.*]] = rocdl.workitem.id.x range <i32, 0, 128> : i32
// CHECK-DAG: llvm.and %[[TID]], %[[C31]] : i32
// CHECK-DAG: llvm.lshr %[[TID]], %[[C5]] : i32
// CHECK-DAG: %[[FLAGS:.*]] = llvm.mlir.constant(822243328 : i32) : i32
// CHECK-NOT: llvm.cond_br
// CHECK: rocdl.readfirstlane
// CHECK: %[[RECORDS:.*]] = llvm.zext %{{.*}} : i32 to i64
// CHECK: rocdl.make.buffer.rsrc %{{.*}}, %{{.*}}, %[[RECORDS]], %[[FLAGS]] : <1> to <8>
// CHECK-NOT: -2147483648 : i32
// CHECK: rocdl.raw.ptr.buffer.load %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: rocdl.raw.ptr.buffer.load {{.*}} : vector<4xf32>
// CHECK-NOT: llvm.cond_br
// CHECK-NOT: llvm.load
// CHECK-COUNT-8: llvm.fadd {{.*}} : f32
// CHECK: rocdl.raw.ptr.buffer.store {{.*}} : vector<4xf32>
// CHECK-NOT: llvm.store
// CHECK: llvm.return
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100", tessel.lds_limit = 65536 : i64} {
  func.func @vector_add(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %y: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %n: i32 {tessel.divisibility = 16 : i32}) {
    %pid = tessel.program_id 0 : i32
    %c = arith.constant 1024 : i32
    %base = arith.muli %pid, %c : i32
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %bs = tessel.splat %base : tensor<1024xi32>
    %offs = arith.addi %bs, %r : tensor<1024xi32>
    %ns = tessel.splat %n : tensor<1024xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
    %xs = tessel.splat %x : tensor<1024x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %ys = tessel.splat %y : tensor<1024x!tessel.ptr<f32>>
    %yp = tessel.addptr %ys, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %os = tessel.splat %out : tensor<1024x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %a = tessel.load %xp, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
    %b = tessel.load %yp, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
    %s = arith.addf %a, %b : tensor<1024xf32>
    tessel.store %op, %s, %mask : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
    return
  }
}

// -----

// A 512-element sum over 4 waves of 32: the butterfly covers 32 lanes, the
// 4 DPP row steps (quad xor 1 and 2, half-row and row mirrors) then one
// v_permlanex16 for distance 16 (each lane reads its lane of the other row:
// selects 0x76543210, 0xfedcba98; its old value is poison, as no lane reads
// it and a live old value costs a v_mov), no ds_bpermute; the 4 wave sums then go
// through LDS after one barrier (none after the reads: nothing later writes
// the scratch).
// CHECK: llvm.mlir.global internal @tessel_lds() {addr_space = 3 : i32
// CHECK-LABEL: llvm.func @row_sum(
// CHECK-SAME: rocdl.flat_work_group_size = "128,128"
// CHECK-DAG: %[[C31:.*]] = llvm.mlir.constant(31 : i32) : i32
// CHECK-DAG: %[[SELHI:.*]] = llvm.mlir.constant(-19088744 : i32) : i32
// CHECK-DAG: %[[SELLO:.*]] = llvm.mlir.constant(1985229328 : i32) : i32
// CHECK-DAG: %[[OLD:.*]] = llvm.mlir.poison : i32
// CHECK-DAG: %[[TID:.*]] = rocdl.workitem.id.x range <i32, 0, 128> : i32
// CHECK-DAG: llvm.and %[[TID]], %[[C31]] : i32
// CHECK: rocdl.update.dpp {{.*}} with 177, 15, 15, true : f32
// CHECK: rocdl.update.dpp {{.*}} with 78, 15, 15, true : f32
// CHECK: rocdl.update.dpp {{.*}} with 321, 15, 15, true : f32
// CHECK: rocdl.update.dpp {{.*}} with 320, 15, 15, true : f32
// CHECK: rocdl.permlanex16 %[[OLD]], %{{.*}}, %[[SELLO]], %[[SELHI]], false, true : i32, i32
// CHECK-NOT: rocdl.ds_bpermute
// CHECK-NOT: rocdl.permlanex16
// CHECK-NOT: rocdl.update.dpp
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK-NOT: rocdl.ds_bpermute
// CHECK-NOT: rocdl.update.dpp
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.return
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100", tessel.lds_limit = 65536 : i64} {
  func.func @row_sum(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32>
    %x = arith.sitofp %r : tensor<512xi32> to tensor<512xf32>
    %s = tessel.reduce %x {axis = 0 : i32} : (tensor<512xf32>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tessel.yield %c : f32
    }
    tessel.store %p, %s : (!tessel.ptr<f32>, f32) -> ()
    return
  }
}

// -----

// A 256-element scan on one wave of 32 lanes: each thread scans its chunk
// of 8 (two 16-byte loads), then 5 Hillis-Steele rounds plus the shift to
// the previous lane (wave64 would hold 4 per thread and take 6 rounds); no
// LDS, no barrier.
// CHECK-LABEL: llvm.func @cumsum(
// CHECK-SAME: rocdl.flat_work_group_size = "32,32"
// CHECK-COUNT-2: llvm.load {{.*}} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK-COUNT-6: rocdl.ds_bpermute
// CHECK-NOT: rocdl.ds_bpermute
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK-COUNT-2: llvm.store {{.*}} : vector<4xf32>, !llvm.ptr<1>
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100", tessel.lds_limit = 65536 : i64} {
  func.func @cumsum(%p: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %ps = tessel.splat %p : tensor<256x!tessel.ptr<f32>>
    %pp = tessel.addptr %ps, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    %x = tessel.load %pp : (tensor<256x!tessel.ptr<f32>>) -> tensor<256xf32>
    %s = tessel.scan %x {axis = 0 : i32} : (tensor<256xf32>) -> tensor<256xf32> {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tessel.yield %c : f32
    }
    tessel.store %pp, %s : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}
