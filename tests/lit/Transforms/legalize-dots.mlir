// RUN: tessel-opt %s -split-input-file --tessel-legalize-dots | FileCheck %s

// gfx942 takes FNUZ 8-bit floats with K a multiple of 16: unchanged.
// CHECK-LABEL: func.func @native
// CHECK-NOT: arith.extf
// CHECK: tessel.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x32xf8E4M3FNUZ> * tensor<32x32xf8E5M2FNUZ>
module attributes {tessel.target = "gfx942"} {
  func.func @native(%a: tensor<32x32xf8E4M3FNUZ>, %b: tensor<32x32xf8E5M2FNUZ>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %d = tessel.dot %a, %b, %c : tensor<32x32xf8E4M3FNUZ> * tensor<32x32xf8E5M2FNUZ> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// K = 8, below every 8-bit float instruction's depth: both operands widen to
// f16 (exact), which f16's 32x32x8 takes.
// CHECK-LABEL: func.func @shallow
// CHECK: %[[A:.*]] = arith.extf %{{.*}} : tensor<32x8xf8E4M3FNUZ> to tensor<32x8xf16>
// CHECK: %[[B:.*]] = arith.extf %{{.*}} : tensor<8x32xf8E4M3FNUZ> to tensor<8x32xf16>
// CHECK: tessel.dot %[[A]], %[[B]], %{{.*}} : tensor<32x8xf16> * tensor<8x32xf16>
module attributes {tessel.target = "gfx942"} {
  func.func @shallow(%a: tensor<32x8xf8E4M3FNUZ>, %b: tensor<8x32xf8E4M3FNUZ>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %d = tessel.dot %a, %b, %c : tensor<32x8xf8E4M3FNUZ> * tensor<8x32xf8E4M3FNUZ> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// gfx1100's matrix cores take no 8-bit float: f16 operands for WMMA, either family.
// CHECK-LABEL: func.func @wmma
// CHECK: arith.extf %{{.*}} : tensor<32x32xf8E5M2> to tensor<32x32xf16>
// CHECK: arith.extf %{{.*}} : tensor<32x32xf8E4M3FN> to tensor<32x32xf16>
// CHECK: tessel.dot %{{.*}} : tensor<32x32xf16> * tensor<32x32xf16>
module attributes {tessel.target = "gfx1100"} {
  func.func @wmma(%a: tensor<32x32xf8E5M2>, %b: tensor<32x32xf8E4M3FN>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %d = tessel.dot %a, %b, %c : tensor<32x32xf8E5M2> * tensor<32x32xf8E4M3FN> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// Without a target the pass changes nothing; other element types are not its business.
// CHECK-LABEL: func.func @untargeted
// CHECK-NOT: arith.extf
module {
  func.func @untargeted(%a: tensor<32x8xf8E4M3FN>, %b: tensor<8x32xf8E4M3FN>, %h: tensor<32x8xf16>, %g: tensor<8x32xf16>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %d = tessel.dot %a, %b, %c : tensor<32x8xf8E4M3FN> * tensor<8x32xf8E4M3FN> -> tensor<32x32xf32>
    %e = tessel.dot %h, %g, %d : tensor<32x8xf16> * tensor<8x32xf16> -> tensor<32x32xf32>
    return %e : tensor<32x32xf32>
  }
}

// -----

// tessel.dot_scaled on gfx950, e4m3 x e5m2, a 64x64 block, K = 128: the
// scaled MFMAs take it; a tessel.dot with the scales, the decomposition
// (here a stand-in: an extf and a dot) erased.
// CHECK-LABEL: func.func @scaled_native
// CHECK-NOT: arith.extf
// CHECK: tessel.dot %{{.*}}, %{{.*}}, %{{.*}} scales %{{.*}}, %{{.*}} : tensor<64x4xi8>, tensor<64x4xi8> : tensor<64x128xf8E4M3FN> * tensor<128x64xf8E5M2>
// CHECK-NOT: tessel.dot
module attributes {tessel.target = "gfx950"} {
  func.func @scaled_native(%a: tensor<64x128xf8E4M3FN>, %b: tensor<128x64xf8E5M2>, %c: tensor<64x64xf32>,
                           %sa: tensor<64x4xi8>, %sb: tensor<64x4xi8>) -> tensor<64x64xf32> {
    %x = arith.extf %a : tensor<64x128xf8E4M3FN> to tensor<64x128xf16>
    %y = arith.extf %b : tensor<128x64xf8E5M2> to tensor<128x64xf16>
    %f = tessel.dot %x, %y, %c : tensor<64x128xf16> * tensor<128x64xf16> -> tensor<64x64xf32>
    %d = tessel.dot_scaled %a, %b, %c fallback %f a_scale %sa : tensor<64x4xi8> b_scale %sb : tensor<64x4xi8>
         {a_format = 1 : i32, b_format = 2 : i32} : tensor<64x128xf8E4M3FN> * tensor<128x64xf8E5M2> -> tensor<64x64xf32>
    return %d : tensor<64x64xf32>
  }
}

// -----

// One side scaled: the other side's scales are 127 (1.0) everywhere.
// CHECK-LABEL: func.func @scaled_one_side
// CHECK: %[[ONES:.*]] = arith.constant dense<127> : tensor<32x2xi8>
// CHECK: tessel.dot %{{.*}}, %{{.*}}, %{{.*}} scales %{{.*}}, %[[ONES]]
module attributes {tessel.target = "gfx950"} {
  func.func @scaled_one_side(%a: tensor<32x64xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %c: tensor<32x32xf32>,
                             %f: tensor<32x32xf32>, %sa: tensor<32x2xi8>) -> tensor<32x32xf32> {
    %d = tessel.dot_scaled %a, %b, %c fallback %f a_scale %sa : tensor<32x2xi8>
         {a_format = 1 : i32, b_format = 1 : i32} : tensor<32x64xf8E4M3FN> * tensor<64x32xf8E4M3FN> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// The decomposition where the scaled MFMAs do not take the op: gfx942 (none),
// gfx950 with an e2m1 operand and K = 32, and gfx950 with K = 32 (below 64). What only
// the native form read (here a stand-in: an add on the scales), unused then,
// is erased.
// CHECK-LABEL: func.func @scaled_gfx942
// CHECK-NOT: arith.addi
// CHECK-NOT: tessel.dot_scaled
// CHECK: return %arg3
module attributes {tessel.target = "gfx942"} {
  func.func @scaled_gfx942(%a: tensor<32x64xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %c: tensor<32x32xf32>,
                           %f: tensor<32x32xf32>, %sa: tensor<32x2xi8>, %sbt: tensor<32x2xi8>) -> tensor<32x32xf32> {
    %sb = arith.addi %sbt, %sbt : tensor<32x2xi8>
    %d = tessel.dot_scaled %a, %b, %c fallback %f a_scale %sa : tensor<32x2xi8> b_scale %sb : tensor<32x2xi8>
         {a_format = 1 : i32, b_format = 1 : i32} : tensor<32x64xf8E4M3FN> * tensor<64x32xf8E4M3FN> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// CHECK-LABEL: func.func @scaled_e2m1_short_k
// CHECK-NOT: tessel.dot_scaled
// CHECK: return %arg3
module attributes {tessel.target = "gfx950"} {
  func.func @scaled_e2m1_short_k(%a: tensor<32x16xi8>, %b: tensor<32x32xf8E4M3FN>, %c: tensor<32x32xf32>,
                                 %f: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %d = tessel.dot_scaled %a, %b, %c fallback %f {a_format = 0 : i32, b_format = 1 : i32}
         : tensor<32x16xi8> * tensor<32x32xf8E4M3FN> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// e2m1 on gfx950 (alone, or beside e4m3/e5m2): the f8f6f4 MFMAs take it, K
// counted in elements (a [32, 32] byte tile holds K = 64); the dot marks
// the packed operands. Unscaled, it has no scales.
// CHECK-LABEL: func.func @scaled_e2m1
// CHECK-NOT: tessel.dot_scaled
// CHECK: tessel.dot %{{.*}}, %{{.*}}, %{{.*}} {a_e2m1} : tensor<32x32xi8> * tensor<64x32xf8E4M3FN> -> tensor<32x32xf32>
// CHECK-NOT: return %arg3
module attributes {tessel.target = "gfx950"} {
  func.func @scaled_e2m1(%a: tensor<32x32xi8>, %b: tensor<64x32xf8E4M3FN>, %c: tensor<32x32xf32>,
                         %f: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %d = tessel.dot_scaled %a, %b, %c fallback %f {a_format = 0 : i32, b_format = 1 : i32}
         : tensor<32x32xi8> * tensor<64x32xf8E4M3FN> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// CHECK-LABEL: func.func @scaled_e2m1_both
// CHECK: tessel.dot %{{.*}}, %{{.*}}, %{{.*}} scales %{{.*}}, %{{.*}} : tensor<64x4xi8>, tensor<32x4xi8> {a_e2m1, b_e2m1} : tensor<64x64xi8> * tensor<64x32xi8> -> tensor<64x32xf32>
module attributes {tessel.target = "gfx950"} {
  func.func @scaled_e2m1_both(%a: tensor<64x64xi8>, %b: tensor<64x32xi8>, %c: tensor<64x32xf32>,
                              %f: tensor<64x32xf32>, %sa: tensor<64x4xi8>, %sb: tensor<32x4xi8>) -> tensor<64x32xf32> {
    %d = tessel.dot_scaled %a, %b, %c fallback %f a_scale %sa : tensor<64x4xi8> b_scale %sb : tensor<32x4xi8>
         {a_format = 0 : i32, b_format = 0 : i32} : tensor<64x64xi8> * tensor<64x32xi8> -> tensor<64x32xf32>
    return %d : tensor<64x32xf32>
  }
}

// -----

// e5m2 A, e2m1 B scaled on one side: B's scales 127.
// CHECK-LABEL: func.func @scaled_e2m1_b
// CHECK: %[[ONES:.*]] = arith.constant dense<127> : tensor<32x2xi8>
// CHECK: tessel.dot %{{.*}}, %{{.*}}, %{{.*}} scales %{{.*}}, %[[ONES]] : tensor<32x2xi8>, tensor<32x2xi8> {b_e2m1} : tensor<32x64xf8E5M2> * tensor<32x32xi8>
module attributes {tessel.target = "gfx950"} {
  func.func @scaled_e2m1_b(%a: tensor<32x64xf8E5M2>, %b: tensor<32x32xi8>, %c: tensor<32x32xf32>,
                           %f: tensor<32x32xf32>, %sa: tensor<32x2xi8>) -> tensor<32x32xf32> {
    %d = tessel.dot_scaled %a, %b, %c fallback %f a_scale %sa : tensor<32x2xi8>
         {a_format = 2 : i32, b_format = 0 : i32} : tensor<32x64xf8E5M2> * tensor<32x32xi8> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// CHECK-LABEL: func.func @scaled_short_k
// CHECK-NOT: tessel.dot_scaled
// CHECK: return %arg3
module attributes {tessel.target = "gfx950"} {
  func.func @scaled_short_k(%a: tensor<32x32xf8E4M3FN>, %b: tensor<32x32xf8E4M3FN>, %c: tensor<32x32xf32>,
                            %f: tensor<32x32xf32>, %sa: tensor<32x1xi8>) -> tensor<32x32xf32> {
    %d = tessel.dot_scaled %a, %b, %c fallback %f a_scale %sa : tensor<32x1xi8>
         {a_format = 1 : i32, b_format = 1 : i32} : tensor<32x32xf8E4M3FN> * tensor<32x32xf8E4M3FN> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// The decomposition's bf16 operands, rounded from f32 by the trace, are
// truncated instead (the high 16 bits, as Triton's AMD upcast): equal to
// rounding for an element times a power of two unless it is below 2^-126.
// An f16 operand (either format fp16) keeps its rounding.
// CHECK-LABEL: func.func @scaled_truncates
// CHECK-NOT: arith.truncf
// CHECK: %[[BITS:.*]] = arith.bitcast %arg3 : tensor<32x64xf32> to tensor<32x64xi32>
// CHECK: %[[SIXTEEN:.*]] = arith.constant dense<16> : tensor<32x64xi32>
// CHECK: %[[HIGH:.*]] = arith.shrui %[[BITS]], %[[SIXTEEN]] : tensor<32x64xi32>
// CHECK: %[[NARROW:.*]] = arith.trunci %[[HIGH]] : tensor<32x64xi32> to tensor<32x64xi16>
// CHECK: %[[A:.*]] = arith.bitcast %[[NARROW]] : tensor<32x64xi16> to tensor<32x64xbf16>
// CHECK: arith.bitcast %arg4 : tensor<64x32xf32> to tensor<64x32xi32>
// CHECK: tessel.dot %[[A]], %{{.*}}, %arg2 : tensor<32x64xbf16> * tensor<64x32xbf16>
// CHECK-NOT: tessel.dot_scaled
module attributes {tessel.target = "gfx942"} {
  func.func @scaled_truncates(%a: tensor<32x64xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %c: tensor<32x32xf32>,
                              %x: tensor<32x64xf32>, %y: tensor<64x32xf32>) -> tensor<32x32xf32> {
    %xb = arith.truncf %x : tensor<32x64xf32> to tensor<32x64xbf16>
    %yb = arith.truncf %y : tensor<64x32xf32> to tensor<64x32xbf16>
    %f = tessel.dot %xb, %yb, %c : tensor<32x64xbf16> * tensor<64x32xbf16> -> tensor<32x32xf32>
    %d = tessel.dot_scaled %a, %b, %c fallback %f {a_format = 1 : i32, b_format = 1 : i32}
         : tensor<32x64xf8E4M3FN> * tensor<64x32xf8E4M3FN> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// CHECK-LABEL: func.func @scaled_half_rounds
// CHECK: arith.truncf %arg3 : tensor<32x64xf32> to tensor<32x64xf16>
// CHECK-NOT: arith.bitcast
module attributes {tessel.target = "gfx942"} {
  func.func @scaled_half_rounds(%a: tensor<32x64xf16>, %b: tensor<64x32xf8E4M3FN>, %c: tensor<32x32xf32>,
                                %x: tensor<32x64xf32>, %y: tensor<64x32xf16>) -> tensor<32x32xf32> {
    %xh = arith.truncf %x : tensor<32x64xf32> to tensor<32x64xf16>
    %f = tessel.dot %xh, %y, %c : tensor<32x64xf16> * tensor<64x32xf16> -> tensor<32x32xf32>
    %d = tessel.dot_scaled %a, %b, %c fallback %f {a_format = 4 : i32, b_format = 1 : i32}
         : tensor<32x64xf16> * tensor<64x32xf8E4M3FN> -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}
