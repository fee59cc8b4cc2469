// The dot conversions refuse what only gfx950's scaled MFMAs take (scales,
// packed e2m1 bytes) rather than multiply the bytes as integers or drop the
// scales: tessel-legalize-dots never sends such a dot to the FMA or WMMA
// path, so hand-written IR is the only way here. (The conversion then
// reports the dot it could not legalize.)
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm -verify-diagnostics

#acc = #tessel.blocked<sizePerThread = [2, 2], threadsPerWave = [8, 8], wavesPerBlock = [1, 1], order = [1, 0]>
#a = #tessel.dot_operand<opIdx = 0, parent = #acc, kWidth = 1>
#b = #tessel.dot_operand<opIdx = 1, parent = #acc, kWidth = 1>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.lds_bytes = 0 : i64} {
  func.func @fma_e2m1() {
    %va = arith.constant dense<1> : tensor<16x32xi8, #a>
    %vb = arith.constant dense<1> : tensor<32x16xi8, #b>
    %c = arith.constant dense<0.0> : tensor<16x16xf32, #acc>
    // expected-error@below {{has packed e2m1 operands, which only gfx950's scaled MFMAs take, not the FMA path}}
    // expected-error@below {{failed to legalize operation 'tessel.dot'}}
    %d = tessel.dot %va, %vb, %c {a_e2m1, b_e2m1} : tensor<16x32xi8, #a> * tensor<32x16xi8, #b> -> tensor<16x16xf32, #acc>
    return
  }
}

// -----

#acc = #tessel.blocked<sizePerThread = [2, 2], threadsPerWave = [8, 8], wavesPerBlock = [1, 1], order = [1, 0]>
#a = #tessel.dot_operand<opIdx = 0, parent = #acc, kWidth = 1>
#b = #tessel.dot_operand<opIdx = 1, parent = #acc, kWidth = 1>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.lds_bytes = 0 : i64} {
  func.func @fma_e2m1_one_side() {
    %va = arith.constant dense<1.0> : tensor<16x64xf8E4M3FN, #a>
    %vb = arith.constant dense<1> : tensor<32x16xi8, #b>
    %c = arith.constant dense<0.0> : tensor<16x16xf32, #acc>
    // expected-error@below {{has packed e2m1 operands, which only gfx950's scaled MFMAs take, not the FMA path}}
    // expected-error@below {{failed to legalize operation 'tessel.dot'}}
    %d = tessel.dot %va, %vb, %c {b_e2m1} : tensor<16x64xf8E4M3FN, #a> * tensor<32x16xi8, #b> -> tensor<16x16xf32, #acc>
    return
  }
}

// -----

#acc = #tessel.wmma<wavesPerBlock = [1, 1]>
#a = #tessel.dot_operand<opIdx = 0, parent = #acc, kWidth = 16>
#b = #tessel.dot_operand<opIdx = 1, parent = #acc, kWidth = 16>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100", tessel.lds_bytes = 0 : i64} {
  func.func @wmma_e2m1() {
    %va = arith.constant dense<1> : tensor<16x32xi8, #a>
    %vb = arith.constant dense<1> : tensor<32x16xi8, #b>
    %c = arith.constant dense<0.0> : tensor<16x16xf32, #acc>
    // expected-error@below {{has packed e2m1 operands, which only gfx950's scaled MFMAs take, not the WMMA path}}
    // expected-error@below {{failed to legalize operation 'tessel.dot'}}
    %d = tessel.dot %va, %vb, %c {a_e2m1, b_e2m1} : tensor<16x32xi8, #a> * tensor<32x16xi8, #b> -> tensor<16x16xf32, #acc>
    return
  }
}
