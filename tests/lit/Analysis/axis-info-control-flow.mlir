// The axis analysis joins facts where control flow merges: loop-carried
// values (scf.for iter_args) and scf.if results keep what holds on every path.
// RUN: tessel-opt %s --tessel-test-axis-info -verify-diagnostics

// A pointer tile advanced by 64 elements (256 bytes) per iteration stays
// contiguous and 16-byte aligned inside the loop and after it.
func.func @advance_by_64(%p: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [64]}}
  %ps = tessel.splat %p : tensor<64x!tessel.ptr<f32>>
  // expected-remark@below {{contiguity = [64], divisibility = [16], constancy = [1]}}
  %p0 = tessel.addptr %ps, %r : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [64], constancy = [64]}}
  %step = arith.constant dense<64> : tensor<64xi32>
  // expected-remark@below {{contiguity = [64], divisibility = [16], constancy = [1]}}
  %last = scf.for %i = %c0 to %k step %c1 iter_args(%cur = %p0) -> (tensor<64x!tessel.ptr<f32>>) {
    // expected-remark@below {{contiguity = [64], divisibility = [16], constancy = [1]}}
    %next = tessel.addptr %cur, %step : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    scf.yield %next : tensor<64x!tessel.ptr<f32>>
  }
  // expected-remark@below {{contiguity = [64], divisibility = [16], constancy = [1]}}
  %after = tessel.addptr %last, %step : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
  return
}

// Advanced by an odd number of elements, the carried pointers are only
// element-aligned: the join with the first iteration's 16 bytes keeps 4.
func.func @advance_by_odd(%p: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [64]}}
  %ps = tessel.splat %p : tensor<64x!tessel.ptr<f32>>
  // expected-remark@below {{contiguity = [64], divisibility = [16], constancy = [1]}}
  %p0 = tessel.addptr %ps, %r : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [64]}}
  %step = arith.constant dense<3> : tensor<64xi32>
  // expected-remark@below {{contiguity = [64], divisibility = [4], constancy = [1]}}
  %last = scf.for %i = %c0 to %k step %c1 iter_args(%cur = %p0) -> (tensor<64x!tessel.ptr<f32>>) {
    // expected-remark@below {{contiguity = [64], divisibility = [4], constancy = [1]}}
    %next = tessel.addptr %cur, %step : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    scf.yield %next : tensor<64x!tessel.ptr<f32>>
  }
  return
}

// Both branches yield contiguous runs of 64, starting at multiples of 16 on
// one path and of 4 on the other: the result starts at multiples of 4.
func.func @if_joins(%c: i1, %n16: i32 {tessel.divisibility = 16 : i32},
                    %n4: i32 {tessel.divisibility = 4 : i32}) {
  // expected-remark@below {{contiguity = [64], divisibility = [4], constancy = [1]}}
  %t = scf.if %c -> (tensor<64xi32>) {
    // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    // expected-remark@below {{contiguity = [1], divisibility = [16], constancy = [64]}}
    %s = tessel.splat %n16 : tensor<64xi32>
    // expected-remark@below {{contiguity = [64], divisibility = [16], constancy = [1]}}
    %a = arith.addi %s, %r : tensor<64xi32>
    scf.yield %a : tensor<64xi32>
  } else {
    // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    // expected-remark@below {{contiguity = [1], divisibility = [4], constancy = [64]}}
    %s = tessel.splat %n4 : tensor<64xi32>
    // expected-remark@below {{contiguity = [64], divisibility = [4], constancy = [1]}}
    %b = arith.addi %s, %r : tensor<64xi32>
    scf.yield %b : tensor<64xi32>
  }
  return
}

// Triton's matmul loop: a [16, 64] f16 pointer tile, rows %stride apart and
// 16-byte aligned, advanced each iteration by a scalar known only at run
// time (%s, a multiple of 4 elements: 8 bytes). The step is the same for
// every element, so each row stays one run of 64; the carried pointers are
// aligned to gcd(16, 8) = 8 bytes on every iteration and after the loop.
func.func @advance_by_scalar(%p: !tessel.ptr<f16> {tessel.divisibility = 16 : i32},
                             %stride: i32 {tessel.divisibility = 16 : i32},
                             %s: i32 {tessel.divisibility = 4 : i32}, %k: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-remark@below {{contiguity = [16], divisibility = [1073741824], constancy = [1], non-negative}}
  %rows = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  // expected-remark@below {{contiguity = [16, 1], divisibility = [1073741824, 1], constancy = [1, 1], non-negative}}
  %r2 = tessel.expand_dims %rows {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [16, 1]}}
  %st = tessel.splat %stride : tensor<16x1xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [1, 1]}}
  %ro = arith.muli %r2, %st : tensor<16x1xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [1, 64]}}
  %rb = tessel.broadcast %ro : tensor<16x1xi32> -> tensor<16x64xi32>
  // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1], non-negative}}
  %cols = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [1, 1], non-negative}}
  %c2 = tessel.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [16, 1], non-negative}}
  %cb = tessel.broadcast %c2 : tensor<1x64xi32> -> tensor<16x64xi32>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [1, 16], constancy = [1, 1]}}
  %offs = arith.addi %rb, %cb : tensor<16x64xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [16, 64]}}
  %ps = tessel.splat %p : tensor<16x64x!tessel.ptr<f16>>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [2, 16], constancy = [1, 1]}}
  %p0 = tessel.addptr %ps, %offs : tensor<16x64x!tessel.ptr<f16>>, tensor<16x64xi32>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [2, 8], constancy = [1, 1]}}
  %last = scf.for %i = %c0 to %k step %c1 iter_args(%cur = %p0) -> (tensor<16x64x!tessel.ptr<f16>>) : i32 {
    // expected-remark@below {{contiguity = [1, 1], divisibility = [4, 4], constancy = [16, 64]}}
    %step = tessel.splat %s : tensor<16x64xi32>
    // expected-remark@below {{contiguity = [1, 64], divisibility = [2, 8], constancy = [1, 1]}}
    %next = tessel.addptr %cur, %step : tensor<16x64x!tessel.ptr<f16>>, tensor<16x64xi32>
    scf.yield %next : tensor<16x64x!tessel.ptr<f16>>
  }
  return
}

// Advanced by a tile that differs from element to element (offsets read
// from memory, say), the carried pointers are no longer contiguous; advanced
// by one that is the same along each row (a per-row amount, 64 elements
// times the row), the rows stay runs of 64.
func.func @advance_by_tile(%p: !tessel.ptr<f16> {tessel.divisibility = 16 : i32},
                           %v: tensor<16x64xi32>, %k: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1], non-negative}}
  %cols = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [1, 1], non-negative}}
  %c2 = tessel.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [16, 1], non-negative}}
  %cb = tessel.broadcast %c2 : tensor<1x64xi32> -> tensor<16x64xi32>
  // expected-remark@below {{contiguity = [16], divisibility = [1073741824], constancy = [1], non-negative}}
  %rows = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  // expected-remark@below {{contiguity = [16, 1], divisibility = [1073741824, 1], constancy = [1, 1], non-negative}}
  %r2 = tessel.expand_dims %rows {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  // expected-remark@below {{contiguity = [16, 1], divisibility = [1073741824, 1], constancy = [1, 64], non-negative}}
  %rb = tessel.broadcast %r2 : tensor<16x1xi32> -> tensor<16x64xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [64, 64], constancy = [16, 64], non-negative}}
  %c64 = arith.constant dense<64> : tensor<16x64xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [64, 64], constancy = [1, 64], non-negative}}
  %per_row = arith.muli %rb, %c64 : tensor<16x64xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [16, 64]}}
  %ps = tessel.splat %p : tensor<16x64x!tessel.ptr<f16>>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [2, 16], constancy = [16, 1]}}
  %p0 = tessel.addptr %ps, %cb : tensor<16x64x!tessel.ptr<f16>>, tensor<16x64xi32>
  %last:2 = scf.for %i = %c0 to %k step %c1 iter_args(%a = %p0, %b = %p0) -> (tensor<16x64x!tessel.ptr<f16>>, tensor<16x64x!tessel.ptr<f16>>) : i32 {
    // expected-remark@below {{contiguity = [1, 1], divisibility = [2, 2], constancy = [1, 1]}}
    %a2 = tessel.addptr %a, %v : tensor<16x64x!tessel.ptr<f16>>, tensor<16x64xi32>
    // expected-remark@below {{contiguity = [1, 64], divisibility = [2, 16], constancy = [1, 1]}}
    %b2 = tessel.addptr %b, %per_row : tensor<16x64x!tessel.ptr<f16>>, tensor<16x64xi32>
    scf.yield %a2, %b2 : tensor<16x64x!tessel.ptr<f16>>, tensor<16x64x!tessel.ptr<f16>>
  }
  return
}
