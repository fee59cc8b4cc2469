// RUN: tessel-opt %s --tessel-lower-to-llvm | FileCheck %s

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
