// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts -verify-diagnostics

// 1048576 i32 over 64 threads: 16384 registers per thread, past the 8192 a
// tile may take (past 256 it spills, and compiles).
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @too_big(%x: !tessel.ptr<f32>) {
    // expected-error@below {{this tile ([1048576] i32) needs 16384 registers per thread: 1 wave of 64 threads share it; a thread has 256 (more spill to scratch memory), and tessel compiles at most 8192 per tile; use a smaller block or more warps (num_warps)}}
    %r = tessel.make_range {start = 0 : i32, end = 1048576 : i32} : tensor<1048576xi32>
    %xs = tessel.splat %x : tensor<1048576x!tessel.ptr<f32>>
    %p = tessel.addptr %xs, %r : tensor<1048576x!tessel.ptr<f32>>, tensor<1048576xi32>
    %v = tessel.load %p : (tensor<1048576x!tessel.ptr<f32>>) -> tensor<1048576xf32>
    tessel.store %p, %v : (tensor<1048576x!tessel.ptr<f32>>, tensor<1048576xf32>) -> ()
    return
  }
}

// -----

// A pointer takes two registers: 8192 per thread are 16384.
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @pointers(%x: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 524288 : i32} : tensor<524288xi32>
    // expected-error@below {{this tile ([524288] pointers to f32) needs 16384 registers per thread}}
    %xs = tessel.splat %x : tensor<524288x!tessel.ptr<f32>>
    %p = tessel.addptr %xs, %r : tensor<524288x!tessel.ptr<f32>>, tensor<524288xi32>
    %v = tessel.load %p : (tensor<524288x!tessel.ptr<f32>>) -> tensor<524288xf32>
    tessel.store %p, %v : (tensor<524288x!tessel.ptr<f32>>, tensor<524288xf32>) -> ()
    return
  }
}

// -----

// Registers hold two 16-bit or four 8-bit elements: 16384 f16 or 32768 i8
// per thread are 8192 registers, which compile, as 8192 f32 do.
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 32 : i32} {
  func.func @packed(%h: tensor<524288xf16>, %b: tensor<1048576xi8>, %f: tensor<262144xf32>) {
    %h2 = arith.addf %h, %h : tensor<524288xf16>
    %b2 = arith.addi %b, %b : tensor<1048576xi8>
    %f2 = arith.addf %f, %f : tensor<262144xf32>
    return
  }
}

// -----

// A 64-bit element takes two: 4096 i64 per thread are 8192 registers, 8192 are too many.
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @wide(%fits: tensor<262144xi64>, %over: tensor<524288xi64>) {
    %a = arith.addi %fits, %fits : tensor<262144xi64>
    // expected-error@below {{this tile ([524288] i64) needs 16384 registers per thread}}
    %b = arith.addi %over, %over : tensor<524288xi64>
    return
  }
}
