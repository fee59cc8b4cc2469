// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops=direct-to-lds=0 | FileCheck %s
// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops=direct-to-lds=0 --tessel-plan-lds --tessel-convert-to-llvm | FileCheck %s --check-prefix=LLVM

// An fp8 B operand loaded as stored, [K, N] with N contiguous (16 bytes a
// lane along N), staged in LDS for the f8f6f4 MFMA, which wants K
// contiguous in each lane. gfx950 keeps the tile along N (order [1, 0]),
// written 16 bytes at a time, and reads it with ds_read_b64_tr_b8: each
// lane's 8 bytes along N, transposed in groups of 16 lanes into 8 bytes
// along K. 64 x 64 bytes over 256 lanes: one 16-byte write a lane; each
// wave's MFMA takes 32 bytes a lane of B (2 x 2 waves of 32 x 32 tiles):
// four transpose reads.
// CHECK-LABEL: func.func @fp8_b(
// CHECK: tessel.local_alloc : <1x64x64xf8E4M3FN, order [1, 0]
// LLVM-LABEL: llvm.func @fp8_b(
// LLVM-NOT: llvm.store {{.*}} : {{i8|vector<2xi8>}}, !llvm.ptr<3>
// LLVM: llvm.store {{.*}} : vector<16xi8>, !llvm.ptr<3>
// LLVM-NOT: llvm.load {{.*}} !llvm.ptr<3> -> {{i8|vector<8xi8>}}
// LLVM-COUNT-4: rocdl.ds.read.tr8.b64 %{{.*}} : <3> -> vector<2xi32>
// LLVM-NOT: llvm.load {{.*}} !llvm.ptr<3> -> {{i8|vector<8xi8>}}
// LLVM-NOT: llvm.store {{.*}} : {{i8|vector<2xi8>}}, !llvm.ptr<3>
// LLVM: llvm.store {{.*}} : vector<16xi8>, !llvm.ptr<3>
// LLVM: llvm.return
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @fp8_b(%a: !tessel.ptr<f8E4M3FN> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f8E4M3FN> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %row = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %c64s = tessel.splat %c64 : tensor<64x1xi32>
    %rowk = arith.muli %rowe, %c64s : tensor<64x1xi32>
    %rowb = tessel.broadcast %rowk : tensor<64x1xi32> -> tensor<64x64xi32>
    %col = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %colb = tessel.broadcast %cole : tensor<1x64xi32> -> tensor<64x64xi32>
    %ib = arith.addi %rowb, %colb : tensor<64x64xi32>
    %pa = tessel.splat %a : tensor<64x64x!tessel.ptr<f8E4M3FN>>
    %qa = tessel.addptr %pa, %ib : tensor<64x64x!tessel.ptr<f8E4M3FN>>, tensor<64x64xi32>
    %ta = tessel.load %qa : (tensor<64x64x!tessel.ptr<f8E4M3FN>>) -> tensor<64x64xf8E4M3FN>
    %acc = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %ks = arith.muli %k, %c64 : i32
      %os = tessel.splat %ks : tensor<64x64xi32>
      %o = arith.addi %ib, %os : tensor<64x64xi32>
      %pb = tessel.splat %b : tensor<64x64x!tessel.ptr<f8E4M3FN>>
      %qb = tessel.addptr %pb, %o : tensor<64x64x!tessel.ptr<f8E4M3FN>>, tensor<64x64xi32>
      %tb = tessel.load %qb : (tensor<64x64x!tessel.ptr<f8E4M3FN>>) -> tensor<64x64xf8E4M3FN>
      %d = tessel.dot %ta, %tb, %acc : tensor<64x64xf8E4M3FN> * tensor<64x64xf8E4M3FN> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// gfx942 has no transpose reads: the same tile is kept along K (order
// [0, 1]) and read 8 bytes along K a lane, as the MFMA takes it.
// CHECK-LABEL: func.func @fp8_b_gfx942(
// CHECK: tessel.local_alloc : <1x64x64xf8E4M3FNUZ, order [0, 1]
// LLVM-LABEL: llvm.func @fp8_b_gfx942(
// LLVM-NOT: ds.read.tr
// LLVM: llvm.return
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32} {
  func.func @fp8_b_gfx942(%a: !tessel.ptr<f8E4M3FNUZ> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f8E4M3FNUZ> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %row = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %c64s = tessel.splat %c64 : tensor<64x1xi32>
    %rowk = arith.muli %rowe, %c64s : tensor<64x1xi32>
    %rowb = tessel.broadcast %rowk : tensor<64x1xi32> -> tensor<64x64xi32>
    %col = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %colb = tessel.broadcast %cole : tensor<1x64xi32> -> tensor<64x64xi32>
    %ib = arith.addi %rowb, %colb : tensor<64x64xi32>
    %pa = tessel.splat %a : tensor<64x64x!tessel.ptr<f8E4M3FNUZ>>
    %qa = tessel.addptr %pa, %ib : tensor<64x64x!tessel.ptr<f8E4M3FNUZ>>, tensor<64x64xi32>
    %ta = tessel.load %qa : (tensor<64x64x!tessel.ptr<f8E4M3FNUZ>>) -> tensor<64x64xf8E4M3FNUZ>
    %acc = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %ks = arith.muli %k, %c64 : i32
      %os = tessel.splat %ks : tensor<64x64xi32>
      %o = arith.addi %ib, %os : tensor<64x64xi32>
      %pb = tessel.splat %b : tensor<64x64x!tessel.ptr<f8E4M3FNUZ>>
      %qb = tessel.addptr %pb, %o : tensor<64x64x!tessel.ptr<f8E4M3FNUZ>>, tensor<64x64xi32>
      %tb = tessel.load %qb : (tensor<64x64x!tessel.ptr<f8E4M3FNUZ>>) -> tensor<64x64xf8E4M3FNUZ>
      %d = tessel.dot %ta, %tb, %acc : tensor<64x64xf8E4M3FNUZ> * tensor<64x64xf8E4M3FNUZ> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// 16-bit: the same B in f16, read with ds_read_b64_tr_b16 (4 elements a
// read: each lane's 8 K of the 32x32x16 instruction's operand in two reads).
// CHECK-LABEL: func.func @f16_b(
// CHECK: tessel.local_alloc : <1x64x64xf16, order [1, 0]
// LLVM-LABEL: llvm.func @f16_b(
// LLVM-NOT: llvm.load {{.*}} !llvm.ptr<3> -> {{f16|vector<2xf16>}}
// LLVM-COUNT-8: rocdl.ds.read.tr16.b64 %{{.*}} : <3> -> vector<4xf16>
// LLVM-NOT: llvm.load {{.*}} !llvm.ptr<3> -> {{f16|vector<2xf16>}}
// LLVM: llvm.return
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @f16_b(%a: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %row = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %c64s = tessel.splat %c64 : tensor<64x1xi32>
    %rowk = arith.muli %rowe, %c64s : tensor<64x1xi32>
    %rowb = tessel.broadcast %rowk : tensor<64x1xi32> -> tensor<64x64xi32>
    %col = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %colb = tessel.broadcast %cole : tensor<1x64xi32> -> tensor<64x64xi32>
    %ib = arith.addi %rowb, %colb : tensor<64x64xi32>
    %pa = tessel.splat %a : tensor<64x64x!tessel.ptr<f16>>
    %qa = tessel.addptr %pa, %ib : tensor<64x64x!tessel.ptr<f16>>, tensor<64x64xi32>
    %ta = tessel.load %qa : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
    %acc = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %ks = arith.muli %k, %c64 : i32
      %os = tessel.splat %ks : tensor<64x64xi32>
      %o = arith.addi %ib, %os : tensor<64x64xi32>
      %pb = tessel.splat %b : tensor<64x64x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %o : tensor<64x64x!tessel.ptr<f16>>, tensor<64x64xi32>
      %tb = tessel.load %qb : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

