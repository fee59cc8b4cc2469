// Pins what tessel-convert-to-llvm refuses in the layouts and LDS plan it is given.
// RUN: tessel-opt %s -split-input-file --tessel-convert-to-llvm -verify-diagnostics

// A layout written for 32-lane waves reaching a wave64 kernel: refused
// rather than distributed over lanes that do not exist.
#b32 = #tessel.blocked<sizePerThread = [1], threadsPerWave = [32], wavesPerBlock = [1], order = [0]>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @layout_for_another_wave_size() {
    // expected-error@below {{this tile's layout spreads it over 32 lanes and 1 waves, but the kernel runs 1 waves of 64 lanes}}
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #b32>
    return
  }
}

// -----

// A layout conversion the LDS plan never placed (tessel-plan-lds did not run):
// wave 1's elements of the result are wave 0's of the source (not in-wave).
#one = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [2], order = [0]>
#two = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [2], order = [0]>
module attributes {tessel.num_warps = 2 : i32, tessel.wave_size = 64 : i32} {
  func.func @unplanned_lds() {
    %r = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32, #one>
    // expected-error@below {{needs 512 bytes of LDS that the LDS plan has not placed; run tessel-plan-lds first}}
    %c = tessel.convert_layout %r : tensor<128xi32, #one> -> tensor<128xi32, #two>
    return
  }
}
