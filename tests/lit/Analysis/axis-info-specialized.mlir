// Specialized arguments feed the axis analysis as constants do: an argument
// the call passed as 1 (tessel.equal_to_one) becomes the constant 1, and a
// range times it stays contiguous, as Triton's `offs_k[None, :] * stride_ak`
// with stride_ak == 1 must for 128-bit loads.
// RUN: tessel-opt %s --tessel-specialize --tessel-test-axis-info -verify-diagnostics

func.func @stride_one(%p: !tessel.ptr<f16> {tessel.divisibility = 16 : i32},
                      %stride: i32 {tessel.equal_to_one}) {
  // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1], non-negative}}
  %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [1, 1], non-negative}}
  %row = tessel.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [1, 64], non-negative}}
  %s = tessel.splat %stride : tensor<1x64xi32>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [1, 1], non-negative}}
  %offs = arith.muli %row, %s : tensor<1x64xi32>
  // expected-remark@below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [1, 64]}}
  %ps = tessel.splat %p : tensor<1x64x!tessel.ptr<f16>>
  // expected-remark@below {{contiguity = [1, 64], divisibility = [2, 16], constancy = [1, 1]}}
  %ptrs = tessel.addptr %ps, %offs : tensor<1x64x!tessel.ptr<f16>>, tensor<1x64xi32>
  return
}

// Without the specialization the stride is unknown: the products are not
// contiguous.
func.func @stride_unknown(%stride: i32) {
  // expected-remark@below {{contiguity = [64], divisibility = [1073741824], constancy = [1], non-negative}}
  %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [64]}}
  %s = tessel.splat %stride : tensor<64xi32>
  // expected-remark@below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %offs = arith.muli %r, %s : tensor<64xi32>
  return
}
