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
