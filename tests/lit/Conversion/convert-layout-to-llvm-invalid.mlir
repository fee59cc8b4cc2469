// Pins the error for a layout conversion whose destination has no layout.
// RUN: tessel-opt %s --tessel-convert-to-llvm -verify-diagnostics

// tessel-assign-layouts inserts conversions with a plain destination type
// and fills it in; one left plain cannot be distributed.
#b = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_bytes = 1056 : i64} {
  func.func @destination_without_layout() {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32, #b>
    // expected-error@below {{tile without a layout; run tessel-assign-layouts first}}
    %c = tessel.convert_layout %r {tessel.lds_offset = 0 : i64} : tensor<256xi32, #b> -> tensor<256xi32>
    return
  }
}
