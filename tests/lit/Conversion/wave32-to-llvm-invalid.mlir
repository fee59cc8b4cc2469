// Pins that the conversion never guesses the wave size from the target.
// RUN: tessel-opt %s --tessel-convert-to-llvm -verify-diagnostics

// gfx1100 runs wave32 or wave64; without tessel.wave_size the lane masks
// and butterfly lengths would be a guess.
#b = #tessel.blocked<sizePerThread = [4], threadsPerWave = [32], wavesPerBlock = [4], order = [0]>
// expected-error@below {{tessel-convert-to-llvm needs tessel.num_warps and tessel.wave_size}}
module attributes {tessel.num_warps = 4 : i32, tessel.target = "gfx1100", tessel.lds_bytes = 0 : i64} {
  func.func @no_wave_size(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 512 : i32} : tensor<512xi32, #b>
    %x = arith.sitofp %r : tensor<512xi32, #b> to tensor<512xf32, #b>
    %ps = tessel.splat %p : tensor<512x!tessel.ptr<f32>, #b>
    %pp = tessel.addptr %ps, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    tessel.store %pp, %x : (tensor<512x!tessel.ptr<f32>, #b>, tensor<512xf32, #b>) -> ()
    return
  }
}
