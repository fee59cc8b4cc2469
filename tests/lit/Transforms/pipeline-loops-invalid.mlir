// RUN: tessel-opt %s --tessel-assign-layouts --tessel-pipeline-loops --tessel-plan-lds -verify-diagnostics

// num_stages = 4 keeps three slots of each 128x128x64 f16 operand in LDS:
// 3 x 2 x 128 x 64 x 2 bytes = 98304 (swizzled, unpadded), more than
// gfx942's 65536. The plan names the largest buffer and what to change.
// (num_stages = 3, 65536 bytes, fits.)
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 4 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @too_many_stages(%a: !tessel.ptr<f16>, %b: !tessel.ptr<f16>, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
    %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
    %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
    %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
    %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
    // expected-error@below {{needs 49152 bytes of LDS (workgroup memory) for a tile kept in LDS across loop iterations (3 slots; a smaller num_stages keeps fewer); the kernel's LDS plan totals 98304 bytes but gfx942 has 65536; use smaller tiles (a smaller block size) or fewer warps}}
    %acc = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ksa = tessel.splat %k : tensor<128x64xi32>
      %oa = arith.addi %ia, %ksa : tensor<128x64xi32>
      %qa = tessel.addptr %pa, %oa : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
      %ta = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
      %ksb = tessel.splat %k : tensor<64x128xi32>
      %ob = arith.addi %ib, %ksb : tensor<64x128xi32>
      %qb = tessel.addptr %pb, %ob : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
      %tb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    tessel.store %pc, %acc : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}
