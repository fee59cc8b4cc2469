// RUN: tessel-opt %s -split-input-file -verify-diagnostics

// The dialect's discardable attributes (TesselDialect.td) have the types
// their helpers read; written by hand with another, the verifier says so
// (a pass would have read it as absent).

// expected-error@below {{'tessel.late_staged_loads' must be a unit attribute, not 1 : i32}}
module attributes {tessel.late_staged_loads = 1 : i32} {
}

// -----

// expected-error@below {{'tessel.late_staged_loads_apply' must be a unit attribute, not "yes"}}
module attributes {tessel.late_staged_loads_apply = "yes"} {
}

// -----

// expected-error@below {{'tessel.num_warps' must be an integer attribute, not "4"}}
module attributes {tessel.num_warps = "4"} {
}

// -----

func.func @sort_mark(%x: tensor<8xf32>, %i: tensor<8xi32>) {
  // expected-error@below {{'tessel.sort_positions' must be an integer attribute, not "1"}}
  %k, %p = tessel.sort %x, %i {axis = 0 : i32, descending = false, stable = true, tessel.sort_positions = "1"} : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  return
}

// -----

func.func @async_copied(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@below {{'tessel.async_copied' must be a unit attribute, not 0 : i64}}
  %y = arith.negf %x {tessel.async_copied = 0} : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// expected-error@below {{argument 1: 'tessel.divisibility' must be an integer attribute, not "16"}}
func.func @divisibility(%p: !tessel.ptr<f32>, %n: i32 {tessel.divisibility = "16"}) {
  return
}

// -----

// The right types, and names the dialect does not declare, verify.
module attributes {tessel.num_warps = 4 : i32, tessel.target = "gfx942", tessel.late_staged_loads, tessel.something_else = 3 : i32} {
  func.func @fine(%n: i32 {tessel.divisibility = 16 : i32, tessel.equal_to_one}) {
    return
  }
}
