// RUN: tessel-opt %s -split-input-file --tessel-lower-to-llvm | FileCheck %s

// A 64x64x32 f16 block over 4 waves (2 x 2 tiles of 32x32): each thread
// issues K / 8 = 4 MFMA 32x32x8 instructions, chained through the
// accumulator, whose operands are 4 halves (from LDS-staged conversions).
// CHECK-LABEL: llvm.func @matmul_block(
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.amdgcn.mfma.f32.32x32x8f16"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (vector<4xf16>, vector<4xf16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
// CHECK-NOT: llvm.amdgcn.mfma
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @matmul_block(%a: !tessel.ptr<f16>, %b: !tessel.ptr<f16>, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
    %ia = tessel.reshape %ra : tensor<2048xi32> -> tensor<64x32xi32>
    %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
    %qa = tessel.addptr %pa, %ia : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
    %va = tessel.load %qa : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
    %ib = tessel.reshape %ra : tensor<2048xi32> -> tensor<32x64xi32>
    %pb = tessel.splat %b : tensor<32x64x!tessel.ptr<f16>>
    %qb = tessel.addptr %pb, %ib : tensor<32x64x!tessel.ptr<f16>>, tensor<32x64xi32>
    %vb = tessel.load %qb : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %d = tessel.dot %va, %vb, %zero : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %rc = tessel.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
    %ic = tessel.reshape %rc : tensor<4096xi32> -> tensor<64x64xi32>
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    tessel.store %qc, %d : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// A 2x2x16 block pads the 16x16x16 instruction: the tile keeps 2 of D's 4
// registers (rows 0 and 1; the instruction's rows past 2 repeat them), so
// D's registers 2 and 3 get copies of 0 and 1 and only 0 and 1 are read back.
// CHECK-LABEL: llvm.func @padded(
// CHECK: %[[R0:.*]] = llvm.insertelement %[[A0:.*]], %{{.*}}[%{{.*}} : i32] : vector<4xf32>
// CHECK: %[[R1:.*]] = llvm.insertelement %[[A1:.*]], %[[R0]][%{{.*}} : i32] : vector<4xf32>
// CHECK: %[[R2:.*]] = llvm.insertelement %[[A0]], %[[R1]][%{{.*}} : i32] : vector<4xf32>
// CHECK: %[[R3:.*]] = llvm.insertelement %[[A1]], %[[R2]][%{{.*}} : i32] : vector<4xf32>
// CHECK: %[[D:.*]] = llvm.call_intrinsic "llvm.amdgcn.mfma.f32.16x16x16f16"(%{{.*}}, %{{.*}}, %[[R3]], %{{.*}}, %{{.*}}, %{{.*}}) : (vector<4xf16>, vector<4xf16>, vector<4xf32>, i32, i32, i32) -> vector<4xf32>
// CHECK-COUNT-2: llvm.extractelement %[[D]]
// CHECK-NOT: llvm.extractelement %[[D]]
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @padded(%a: !tessel.ptr<f16>, %b: !tessel.ptr<f16>, %c: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
    %ia = tessel.reshape %r : tensor<32xi32> -> tensor<2x16xi32>
    %pa = tessel.splat %a : tensor<2x16x!tessel.ptr<f16>>
    %qa = tessel.addptr %pa, %ia : tensor<2x16x!tessel.ptr<f16>>, tensor<2x16xi32>
    %va = tessel.load %qa : (tensor<2x16x!tessel.ptr<f16>>) -> tensor<2x16xf16>
    %ib = tessel.reshape %r : tensor<32xi32> -> tensor<16x2xi32>
    %pb = tessel.splat %b : tensor<16x2x!tessel.ptr<f16>>
    %qb = tessel.addptr %pb, %ib : tensor<16x2x!tessel.ptr<f16>>, tensor<16x2xi32>
    %vb = tessel.load %qb : (tensor<16x2x!tessel.ptr<f16>>) -> tensor<16x2xf16>
    %rc = tessel.make_range {start = 0 : i32, end = 4 : i32} : tensor<4xi32>
    %ic = tessel.reshape %rc : tensor<4xi32> -> tensor<2x2xi32>
    %pc = tessel.splat %c : tensor<2x2x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<2x2x!tessel.ptr<f32>>, tensor<2x2xi32>
    %acc = tessel.load %qc : (tensor<2x2x!tessel.ptr<f32>>) -> tensor<2x2xf32>
    %d = tessel.dot %va, %vb, %acc : tensor<2x16xf16> * tensor<16x2xf16> -> tensor<2x2xf32>
    tessel.store %qc, %d : (tensor<2x2x!tessel.ptr<f32>>, tensor<2x2xf32>) -> ()
    return
  }
}

// -----

// 8-bit floats on gfx942: a 64x64x32 block of FNUZ E4M3 (A) times E5M2 (B)
// is 2 x 2 waves of 32x32x16 tiles, K / 16 = 2 instructions a thread, each
// lane's 8 bytes of A and of B packed into an i64. The accumulator is
// transposed: the instruction's A is the dot's B, so fp8 x bf8 runs as
// bf8_fp8.
// CHECK-LABEL: llvm.func @fp8_mix(
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.amdgcn.mfma.f32.32x32x16.bf8.fp8"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
// CHECK-NOT: llvm.amdgcn.mfma
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @fp8_mix(%a: !tessel.ptr<f8E4M3FNUZ>, %b: !tessel.ptr<f8E5M2FNUZ>, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
    %ia = tessel.reshape %ra : tensor<2048xi32> -> tensor<64x32xi32>
    %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f8E4M3FNUZ>>
    %qa = tessel.addptr %pa, %ia : tensor<64x32x!tessel.ptr<f8E4M3FNUZ>>, tensor<64x32xi32>
    %va = tessel.load %qa : (tensor<64x32x!tessel.ptr<f8E4M3FNUZ>>) -> tensor<64x32xf8E4M3FNUZ>
    %ib = tessel.reshape %ra : tensor<2048xi32> -> tensor<32x64xi32>
    %pb = tessel.splat %b : tensor<32x64x!tessel.ptr<f8E5M2FNUZ>>
    %qb = tessel.addptr %pb, %ib : tensor<32x64x!tessel.ptr<f8E5M2FNUZ>>, tensor<32x64xi32>
    %vb = tessel.load %qb : (tensor<32x64x!tessel.ptr<f8E5M2FNUZ>>) -> tensor<32x64xf8E5M2FNUZ>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %d = tessel.dot %va, %vb, %zero : tensor<64x32xf8E4M3FNUZ> * tensor<32x64xf8E5M2FNUZ> -> tensor<64x64xf32>
    %rc = tessel.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
    %ic = tessel.reshape %rc : tensor<4096xi32> -> tensor<64x64xi32>
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    tessel.store %qc, %d : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// gfx950: the same instructions on the OCP formats; a 16x16 block takes the
// 16x16x32 form, not transposed below the instruction's tile (8 rows): the
// dot's own order, bf8 x fp8.
// CHECK-LABEL: llvm.func @fp8_ocp_small(
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mfma.f32.16x16x32.bf8.fp8"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, vector<4xf32>, i32, i32, i32) -> vector<4xf32>
// CHECK-NOT: llvm.amdgcn.mfma
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950"} {
  func.func @fp8_ocp_small(%a: !tessel.ptr<f8E5M2>, %b: !tessel.ptr<f8E4M3FN>, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %ia = tessel.reshape %ra : tensor<256xi32> -> tensor<8x32xi32>
    %pa = tessel.splat %a : tensor<8x32x!tessel.ptr<f8E5M2>>
    %qa = tessel.addptr %pa, %ia : tensor<8x32x!tessel.ptr<f8E5M2>>, tensor<8x32xi32>
    %va = tessel.load %qa : (tensor<8x32x!tessel.ptr<f8E5M2>>) -> tensor<8x32xf8E5M2>
    %rb = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32>
    %ib = tessel.reshape %rb : tensor<512xi32> -> tensor<32x16xi32>
    %pb = tessel.splat %b : tensor<32x16x!tessel.ptr<f8E4M3FN>>
    %qb = tessel.addptr %pb, %ib : tensor<32x16x!tessel.ptr<f8E4M3FN>>, tensor<32x16xi32>
    %vb = tessel.load %qb : (tensor<32x16x!tessel.ptr<f8E4M3FN>>) -> tensor<32x16xf8E4M3FN>
    %zero = arith.constant dense<0.0> : tensor<8x16xf32>
    %d = tessel.dot %va, %vb, %zero : tensor<8x32xf8E5M2> * tensor<32x16xf8E4M3FN> -> tensor<8x16xf32>
    %rc = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
    %ic = tessel.reshape %rc : tensor<128xi32> -> tensor<8x16xi32>
    %pc = tessel.splat %c : tensor<8x16x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<8x16x!tessel.ptr<f32>>, tensor<8x16xi32>
    tessel.store %qc, %d : (tensor<8x16x!tessel.ptr<f32>>, tensor<8x16xf32>) -> ()
    return
  }
}

// -----

// gfx950, K a multiple of 64: the f8f6f4 MFMA, 32 bytes a lane of A and of B
// as <8 x i32>. A 64x64x128 block of E4M3 (A) times E5M2 (B) is 2 x 2 waves
// of 32x32x64 tiles, K / 64 = 2 instructions a thread. Transposed, the
// instruction's A is the dot's B: cbsz (its A's format) is 1 (E5M2), blgp 0
// (E4M3); the scales are zero (LLVM selects the unscaled instruction).
// CHECK-LABEL: llvm.func @fp8_f8f6f4(
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4"(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE:.*]], %[[ZERO:.*]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]]) : (vector<8xi32>, vector<8xi32>, vector<16xf32>, i32, i32, i32, i32, i32, i32) -> vector<16xf32>
// CHECK-NOT: llvm.amdgcn.mfma
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950"} {
  func.func @fp8_f8f6f4(%a: !tessel.ptr<f8E4M3FN>, %b: !tessel.ptr<f8E5M2>, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
    %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
    %pa = tessel.splat %a : tensor<64x128x!tessel.ptr<f8E4M3FN>>
    %qa = tessel.addptr %pa, %ia : tensor<64x128x!tessel.ptr<f8E4M3FN>>, tensor<64x128xi32>
    %va = tessel.load %qa : (tensor<64x128x!tessel.ptr<f8E4M3FN>>) -> tensor<64x128xf8E4M3FN>
    %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
    %pb = tessel.splat %b : tensor<128x64x!tessel.ptr<f8E5M2>>
    %qb = tessel.addptr %pb, %ib : tensor<128x64x!tessel.ptr<f8E5M2>>, tensor<128x64xi32>
    %vb = tessel.load %qb : (tensor<128x64x!tessel.ptr<f8E5M2>>) -> tensor<128x64xf8E5M2>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %d = tessel.dot %va, %vb, %zero : tensor<64x128xf8E4M3FN> * tensor<128x64xf8E5M2> -> tensor<64x64xf32>
    %rc = tessel.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
    %ic = tessel.reshape %rc : tensor<4096xi32> -> tensor<64x64xi32>
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    tessel.store %qc, %d : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// gfx950, a 16x16 block with K = 128: the 16x16x128 f8f6f4 MFMA, once, not
// transposed (the dot's own order: cbsz 0 for E4M3 A, blgp 0 for E4M3 B).
// CHECK-LABEL: llvm.func @fp8_f8f6f4_small(
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4"(%{{.*}}, %{{.*}}, %{{.*}}, %[[Z:.*]], %[[Z]], %[[Z]], %[[Z]], %[[Z]], %[[Z]]) : (vector<8xi32>, vector<8xi32>, vector<4xf32>, i32, i32, i32, i32, i32, i32) -> vector<4xf32>
// CHECK-NOT: llvm.amdgcn.mfma
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950"} {
  func.func @fp8_f8f6f4_small(%a: !tessel.ptr<f8E4M3FN>, %b: !tessel.ptr<f8E4M3FN>, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 2048 : i32} : tensor<2048xi32>
    %ia = tessel.reshape %ra : tensor<2048xi32> -> tensor<16x128xi32>
    %pa = tessel.splat %a : tensor<16x128x!tessel.ptr<f8E4M3FN>>
    %qa = tessel.addptr %pa, %ia : tensor<16x128x!tessel.ptr<f8E4M3FN>>, tensor<16x128xi32>
    %va = tessel.load %qa : (tensor<16x128x!tessel.ptr<f8E4M3FN>>) -> tensor<16x128xf8E4M3FN>
    %ib = tessel.reshape %ra : tensor<2048xi32> -> tensor<128x16xi32>
    %pb = tessel.splat %b : tensor<128x16x!tessel.ptr<f8E4M3FN>>
    %qb = tessel.addptr %pb, %ib : tensor<128x16x!tessel.ptr<f8E4M3FN>>, tensor<128x16xi32>
    %vb = tessel.load %qb : (tensor<128x16x!tessel.ptr<f8E4M3FN>>) -> tensor<128x16xf8E4M3FN>
    %zero = arith.constant dense<0.0> : tensor<16x16xf32>
    %d = tessel.dot %va, %vb, %zero : tensor<16x128xf8E4M3FN> * tensor<128x16xf8E4M3FN> -> tensor<16x16xf32>
    %rc = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %ic = tessel.reshape %rc : tensor<256xi32> -> tensor<16x16xi32>
    %pc = tessel.splat %c : tensor<16x16x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<16x16x!tessel.ptr<f32>>, tensor<16x16xi32>
    tessel.store %qc, %d : (tensor<16x16x!tessel.ptr<f32>>, tensor<16x16xf32>) -> ()
    return
  }
}

// -----

// gfx950, e2m1 (FP4, packed two a byte along K) on the f8f6f4 MFMA: an e2m1
// operand is 16 bytes a lane, <4 x i32>, format 4. A 64x64 block of E4M3 A
// [64, 128] times e2m1 B [64 bytes, 64] (K = 128) is 2 x 2 waves of 32x32x64
// tiles, 2 instructions a thread; transposed, the instruction's A is the
// dot's B: cbsz 4 (E2M1) on <4 x i32>, blgp 0 (E4M3) on <8 x i32>.
// CHECK-LABEL: llvm.func @e2m1_f8f6f4(
// CHECK-DAG: %[[FOUR:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4"(%{{.*}}, %{{.*}}, %{{.*}}, %[[FOUR]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]]) : (vector<4xi32>, vector<8xi32>, vector<16xf32>, i32, i32, i32, i32, i32, i32) -> vector<16xf32>
// CHECK-NOT: llvm.amdgcn.mfma
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950"} {
  func.func @e2m1_f8f6f4(%a: !tessel.ptr<f8E4M3FN>, %b: !tessel.ptr<i8>, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
    %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
    %pa = tessel.splat %a : tensor<64x128x!tessel.ptr<f8E4M3FN>>
    %qa = tessel.addptr %pa, %ia : tensor<64x128x!tessel.ptr<f8E4M3FN>>, tensor<64x128xi32>
    %va = tessel.load %qa : (tensor<64x128x!tessel.ptr<f8E4M3FN>>) -> tensor<64x128xf8E4M3FN>
    %rb = tessel.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
    %ib = tessel.reshape %rb : tensor<4096xi32> -> tensor<64x64xi32>
    %pb = tessel.splat %b : tensor<64x64x!tessel.ptr<i8>>
    %qb = tessel.addptr %pb, %ib : tensor<64x64x!tessel.ptr<i8>>, tensor<64x64xi32>
    %vb = tessel.load %qb : (tensor<64x64x!tessel.ptr<i8>>) -> tensor<64x64xi8>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %d = tessel.dot %va, %vb, %zero {b_e2m1} : tensor<64x128xf8E4M3FN> * tensor<64x64xi8> -> tensor<64x64xf32>
    %ic = tessel.reshape %rb : tensor<4096xi32> -> tensor<64x64xi32>
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    tessel.store %qc, %d : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// gfx950, e2m1 x e2m1 on a 16x16 block with K = 128 (A [16, 64 bytes], B
// [64 bytes, 16]): the 16x16x128 f8f6f4 MFMA once, cbsz = blgp = 4, both
// operands <4 x i32>.
// CHECK-LABEL: llvm.func @e2m1_f8f6f4_small(
// CHECK: %[[F:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4"(%{{.*}}, %{{.*}}, %{{.*}}, %[[F]], %[[F]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (vector<4xi32>, vector<4xi32>, vector<4xf32>, i32, i32, i32, i32, i32, i32) -> vector<4xf32>
// CHECK-NOT: llvm.amdgcn.mfma
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950"} {
  func.func @e2m1_f8f6f4_small(%a: !tessel.ptr<i8>, %b: !tessel.ptr<i8>, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %ia = tessel.reshape %ra : tensor<1024xi32> -> tensor<16x64xi32>
    %pa = tessel.splat %a : tensor<16x64x!tessel.ptr<i8>>
    %qa = tessel.addptr %pa, %ia : tensor<16x64x!tessel.ptr<i8>>, tensor<16x64xi32>
    %va = tessel.load %qa : (tensor<16x64x!tessel.ptr<i8>>) -> tensor<16x64xi8>
    %ib = tessel.reshape %ra : tensor<1024xi32> -> tensor<64x16xi32>
    %pb = tessel.splat %b : tensor<64x16x!tessel.ptr<i8>>
    %qb = tessel.addptr %pb, %ib : tensor<64x16x!tessel.ptr<i8>>, tensor<64x16xi32>
    %vb = tessel.load %qb : (tensor<64x16x!tessel.ptr<i8>>) -> tensor<64x16xi8>
    %zero = arith.constant dense<0.0> : tensor<16x16xf32>
    %d = tessel.dot %va, %vb, %zero {a_e2m1, b_e2m1} : tensor<16x64xi8> * tensor<64x16xi8> -> tensor<16x16xf32>
    %rc = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %ic = tessel.reshape %rc : tensor<256xi32> -> tensor<16x16xi32>
    %pc = tessel.splat %c : tensor<16x16x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<16x16x!tessel.ptr<f32>>, tensor<16x16xi32>
    tessel.store %qc, %d : (tensor<16x16x!tessel.ptr<f32>>, tensor<16x16xf32>) -> ()
    return
  }
}
// -----

// gfx950, a scaled dot (tessel-legalize-dots' native form): 64x64x128 over 4
// waves, 32x32x64 tiles, K / 64 = 2 instructions a thread, each with a scale
// register and byte select of A's and of B's. Loaded scale bytes go into one
// register a side (byte i of the thread's: bits 8 i, select i), as Triton
// packs them.
// Transposed: the instruction's A (and its scale) is the dot's B.
// CHECK-LABEL: llvm.func @scaled_f8f6f4(
// CHECK-NOT: 32512
// CHECK: %[[A0:.*]] = llvm.zext %{{.*}} : i8 to i32
// CHECK: %[[A1:.*]] = llvm.zext %{{.*}} : i8 to i32
// CHECK: %[[A1H:.*]] = llvm.shl %[[A1]], %{{.*}} : i32
// CHECK: %[[SA:.*]] = llvm.or disjoint %[[A0]], %[[A1H]] : i32
// CHECK: %[[B0:.*]] = llvm.zext %{{.*}} : i8 to i32
// CHECK: %[[B1:.*]] = llvm.zext %{{.*}} : i8 to i32
// CHECK: %[[B1H:.*]] = llvm.shl %[[B1]], %{{.*}} : i32
// CHECK: %[[SB:.*]] = llvm.or disjoint %[[B0]], %[[B1H]] : i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4"(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE:.*]], %[[ZERO:.*]], %[[ZERO]], %[[SB]], %[[ZERO]], %[[SA]])
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4"(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[ZERO]], %[[ONE]], %[[SB]], %[[ONE]], %[[SA]])
// CHECK-NOT: llvm.amdgcn.mfma
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950"} {
  func.func @scaled_f8f6f4(%a: !tessel.ptr<f8E4M3FN>, %b: !tessel.ptr<f8E5M2>, %c: !tessel.ptr<f32>, %s: !tessel.ptr<i8>) {
    %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
    %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
    %pa = tessel.splat %a : tensor<64x128x!tessel.ptr<f8E4M3FN>>
    %qa = tessel.addptr %pa, %ia : tensor<64x128x!tessel.ptr<f8E4M3FN>>, tensor<64x128xi32>
    %va = tessel.load %qa : (tensor<64x128x!tessel.ptr<f8E4M3FN>>) -> tensor<64x128xf8E4M3FN>
    %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
    %pb = tessel.splat %b : tensor<128x64x!tessel.ptr<f8E5M2>>
    %qb = tessel.addptr %pb, %ib : tensor<128x64x!tessel.ptr<f8E5M2>>, tensor<128x64xi32>
    %vb = tessel.load %qb : (tensor<128x64x!tessel.ptr<f8E5M2>>) -> tensor<128x64xf8E5M2>
    %rs = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %is = tessel.reshape %rs : tensor<256xi32> -> tensor<64x4xi32>
    %ps = tessel.splat %s : tensor<64x4x!tessel.ptr<i8>>
    %qs = tessel.addptr %ps, %is : tensor<64x4x!tessel.ptr<i8>>, tensor<64x4xi32>
    %sa = tessel.load %qs : (tensor<64x4x!tessel.ptr<i8>>) -> tensor<64x4xi8>
    %sb = tessel.load %qs : (tensor<64x4x!tessel.ptr<i8>>) -> tensor<64x4xi8>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %d = tessel.dot %va, %vb, %zero scales %sa, %sb : tensor<64x4xi8>, tensor<64x4xi8> : tensor<64x128xf8E4M3FN> * tensor<128x64xf8E5M2> -> tensor<64x64xf32>
    %rc = tessel.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32>
    %ic = tessel.reshape %rc : tensor<4096xi32> -> tensor<64x64xi32>
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    tessel.store %qc, %d : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}
