// The LDS plan sees ops nested in regions (a loop body, a branch): each
// op's scratch lives while that op runs, so a buffer inside a loop and one
// after it share bytes, and the total is the larger. (Two waves: the
// result's wave 1 needs wave 0's elements, so each conversion goes through LDS.)
// RUN: tessel-opt %s --tessel-plan-lds | FileCheck %s

// CHECK: module attributes {{.*}}tessel.lds_bytes = 512 : i64
// CHECK: scf.for
// CHECK: tessel.convert_layout {{.*}}tessel.lds_offset = 0 : i64
// CHECK: scf.if
// CHECK: tessel.convert_layout {{.*}}tessel.lds_offset = 0 : i64
// CHECK: tessel.convert_layout {{.*}}tessel.lds_offset = 0 : i64
#one = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [2], order = [0]>
#two = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [2], order = [0]>
module attributes {tessel.num_warps = 2 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @nested(%k: index, %c: i1) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32, #one>
    scf.for %i = %c0 to %k step %c1 {
      %a = tessel.convert_layout %r : tensor<128xi32, #one> -> tensor<128xi32, #two>
    }
    scf.if %c {
      %b = tessel.convert_layout %r : tensor<128xi32, #one> -> tensor<128xi32, #two>
    }
    %w = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32, #one>
    %d = tessel.convert_layout %w : tensor<128xi32, #one> -> tensor<128xi32, #two>
    return
  }
}
