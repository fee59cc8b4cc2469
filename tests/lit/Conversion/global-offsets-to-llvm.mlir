// Global accesses at a scalar base plus 32-bit offsets (tessel.buffer_load /
// buffer_store the lowering keeps as global instructions): the address is the
// base plus the zero-extended byte offset, so the backend can use the saddr
// form (scalar base, one 32-bit VGPR per lane) instead of a 64-bit address
// per lane.
// RUN: tessel-opt %s -split-input-file --tessel-lower-to-llvm | FileCheck %s --implicit-check-not=rocdl.make.buffer.rsrc

// Unmasked, 4 groups of 4 f32 per thread, 256 elements apart: the first
// group's address, then 1024, 2048 and 3072 bytes past it (immediate offsets
// of the instruction).
// CHECK-LABEL: llvm.func @near(
// CHECK: %[[Z:.*]] = llvm.zext %{{.*}} : i32 to i64
// CHECK: %[[P:.*]] = llvm.getelementptr %arg0[%[[Z]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: llvm.load %[[P]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[P]][1024] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
// CHECK: llvm.load %[[P1]]
// CHECK: llvm.getelementptr %[[P]][2048]
// CHECK: llvm.getelementptr %[[P]][3072]
// CHECK: %[[Q:.*]] = llvm.getelementptr %arg1[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: llvm.store %{{.*}}, %[[Q]] {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: llvm.getelementptr %[[Q]][1024]
// CHECK: llvm.getelementptr %[[Q]][2048]
// CHECK: llvm.getelementptr %[[Q]][3072]
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.return

module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @near(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %o: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}) {
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %xs = tessel.splat %x : tensor<1024x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %r : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    %a = tessel.load %xp : (tensor<1024x!tessel.ptr<f32>>) -> tensor<1024xf32>
    %os = tessel.splat %o : tensor<1024x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %r : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    tessel.store %op, %a : (tensor<1024x!tessel.ptr<f32>>, tensor<1024xf32>) -> ()
    return
  }
}

// -----

// 8 groups 1024 bytes apart: past 4095 bytes a group's offset is the first
// group's 32-bit byte offset plus the distance, added before the zext (one
// 32-bit add, not a 64-bit address add per lane).
// CHECK-LABEL: llvm.func @far(
// CHECK-DAG: %[[C4096:.*]] = llvm.mlir.constant(4096 : i32) : i32
// CHECK-DAG: %[[C7168:.*]] = llvm.mlir.constant(7168 : i32) : i32
// CHECK: %[[Z:.*]] = llvm.zext %[[BYTES:.*]] : i32 to i64
// CHECK: %[[P:.*]] = llvm.getelementptr %arg0[%[[Z]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: llvm.getelementptr %[[P]][3072]
// CHECK: %[[O4:.*]] = llvm.add %[[BYTES]], %[[C4096]] : i32
// CHECK: %[[Z4:.*]] = llvm.zext %[[O4]] : i32 to i64
// CHECK: llvm.getelementptr %arg0[%[[Z4]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: llvm.add %[[BYTES]], %[[C7168]] : i32
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @far(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}) {
    %r = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
    %xs = tessel.splat %x : tensor<2048x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %r : tensor<2048x!tessel.ptr<f32>>, tensor<2048xi32>
    %a = tessel.load %xp : (tensor<2048x!tessel.ptr<f32>>) -> tensor<2048xf32>
    %s = arith.addf %a, %a : tensor<2048xf32>
    tessel.store %xp, %s : (tensor<2048x!tessel.ptr<f32>>, tensor<2048xf32>) -> ()
    return
  }
}

// -----

// One masked group per thread: a branch on the mask around the global access
// (one exec region per access), no resource and no selected offset.
// CHECK-LABEL: llvm.func @masked(
// CHECK-NOT: llvm.select
// CHECK: %[[M:.*]] = llvm.icmp "slt" %{{.*}}, %arg1 : i32
// CHECK: %[[BASE:.*]] = llvm.getelementptr %arg0[%{{.*}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK: %[[P:.*]] = llvm.getelementptr %[[BASE]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: llvm.cond_br %[[M]], ^[[LOAD:.*]], ^
// CHECK: ^[[LOAD]]:
// CHECK-NEXT: llvm.load %[[P]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.cond_br %[[M]], ^[[STORE:.*]], ^
// CHECK: ^[[STORE]]:
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NOT: llvm.select
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @masked(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %n: i32 {tessel.divisibility = 16 : i32}) {
    %pid = tessel.program_id 0 : i32
    %c = arith.constant 256 : i32
    %base = arith.muli %pid, %c : i32
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %bs = tessel.splat %base : tensor<256xi32>
    %offs = arith.addi %bs, %r : tensor<256xi32>
    %ns = tessel.splat %n : tensor<256xi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<256xi32>
    %xs = tessel.splat %x : tensor<256x!tessel.ptr<f32>>
    %xp = tessel.addptr %xs, %offs : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    %a = tessel.load %xp, %m : (tensor<256x!tessel.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    %s = arith.addf %a, %a : tensor<256xf32>
    tessel.store %xp, %s, %m : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>, tensor<256xi1>) -> ()
    return
  }
}
