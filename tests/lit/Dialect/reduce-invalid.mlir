// RUN: tessel-opt %s -split-input-file -verify-diagnostics

func.func @wrong_arity(%v: tensor<8xf32>) {
  // expected-error@below {{combine region must take 2 arguments}}
  %s = tessel.reduce %v {axis = 0 : i32} : (tensor<8xf32>) -> f32 {
  ^bb0(%a: f32):
    tessel.yield %a : f32
  }
  return
}

// -----

func.func @wrong_result(%v: tensor<4x8xf32>) {
  // expected-error@below {{result must have the operand's element type and shape without axis 0}}
  %s = tessel.reduce %v {axis = 0 : i32} : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    tessel.yield %c : f32
  }
  return
}

// -----

func.func @wrong_axis(%v: tensor<8xf32>) {
  // expected-error@below {{axis 1 is out of range for a rank-1 tile}}
  %s = tessel.scan %v {axis = 1 : i32} : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    tessel.yield %c : f32
  }
  return
}

// -----

func.func @yield_type(%v: tensor<8xf32>) {
  // expected-error@below {{combine must yield the element type of operand #0}}
  %s = tessel.reduce %v {axis = 0 : i32} : (tensor<8xf32>) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.fptosi %a : f32 to i32
    tessel.yield %c : i32
  }
  return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // expected-error@below {{cannot reshape 32 elements into 16}}
  %r = tessel.reshape %x : tensor<4x8xf32> -> tensor<16xf32>
  return
}

// -----

func.func @permute_order(%x: tensor<4x8xf32>) {
  // expected-error@below {{order must be a permutation}}
  %t = tessel.permute %x {order = array<i32: 0, 0>} : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @split_last(%x: tensor<4x8xf32>) {
  // expected-error@below {{operand's last dimension must be 2}}
  %s = tessel.split %x {half = 0 : i32} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @join_shapes(%a: tensor<8xf32>, %b: tensor<4xf32>) {
  // expected-error@below {{operands must have one shape and element type}}
  %j = tessel.join %a, %b : tensor<8xf32>, tensor<4xf32> -> tensor<8x2xf32>
  return
}

// -----

#a = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [1], order = [0]>
#b = #tessel.blocked<sizePerThread = [2], threadsPerWave = [32], wavesPerBlock = [1], order = [0]>
func.func @operands_in_two_layouts(%x: tensor<64xf32, #a>, %y: tensor<64xi32, #b>) {
  // expected-error@below {{'tessel.reduce' op operands must have one layout}}
  %m, %i = tessel.reduce %x, %y {axis = 0 : i32} : (tensor<64xf32, #a>, tensor<64xi32, #b>) -> (f32, i32) {
  ^bb0(%a0: f32, %a1: i32, %b0: f32, %b1: i32):
    tessel.yield %a0, %a1 : f32, i32
  }
  return
}
