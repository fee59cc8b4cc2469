// RUN: tessel-opt %s --tessel-assign-layouts -verify-diagnostics

// 65536 f32 over 64 threads: 1024 registers per thread.
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @too_big(%x: !tessel.ptr<f32>) {
    // expected-error@below {{this tile ([65536] i32) needs 1024 registers per thread: 1 wave of 64 threads share it, and a thread has at most 256; use a smaller block or more warps (num_warps)}}
    %r = tessel.make_range {start = 0 : i32, end = 65536 : i32} : tensor<65536xi32>
    %xs = tessel.splat %x : tensor<65536x!tessel.ptr<f32>>
    %p = tessel.addptr %xs, %r : tensor<65536x!tessel.ptr<f32>>, tensor<65536xi32>
    %v = tessel.load %p : (tensor<65536x!tessel.ptr<f32>>) -> tensor<65536xf32>
    tessel.store %p, %v : (tensor<65536x!tessel.ptr<f32>>, tensor<65536xf32>) -> ()
    return
  }
}
