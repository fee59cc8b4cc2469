// Pins the errors tessel-convert-to-llvm reports for scans it cannot distribute.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm -verify-diagnostics

// The scan's result never got a layout (tessel-assign-layouts did not run
// on it): the op's verifier refuses it (a scan keeps its operands' layout)
// before the conversion could guess where elements live.
#b = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [1], order = [0]>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 0 : i64} {
  func.func @scan_without_layout() {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #b>
    %x = arith.sitofp %r : tensor<64xi32, #b> to tensor<64xf32, #b>
    // expected-error@below {{results must have the operands' layout}}
    %s = tessel.scan %x {axis = 0 : i32} : (tensor<64xf32, #b>) -> tensor<64xf32> {
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      tessel.yield %t : f32
    }
    return
  }
}

// -----

// Every op of a combine region must compute values of one type per thread;
// an op whose results differ in type (a sum and its carry) cannot be replayed
// per register.
#b = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [1], order = [0]>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 0 : i64} {
  func.func @two_result_combine() {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #b>
    %s = tessel.scan %r {axis = 0 : i32} : (tensor<64xi32, #b>) -> tensor<64xi32, #b> {
    ^bb0(%a: i32, %c: i32):
      // expected-error@below {{a combine function can only compute values}}
      %t, %o = arith.addui_extended %a, %c : i32, i1
      tessel.yield %t : i32
    }
    return
  }
}
