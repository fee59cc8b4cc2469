// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts | FileCheck %s

// A loop-carried accumulator has one layout: the initial value, the body's
// block argument, what the body yields and the loop's result. The load in
// the body vectorizes: k steps by 1024 from 0 and the pointer is aligned.
// CHECK: #[[B:.*]] = #tessel.blocked<sizePerThread = [4], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
// CHECK-LABEL: func.func @row_sum(
// CHECK: %[[INIT:.*]] = arith.constant dense<0.000000e+00> : tensor<1024xf32, #[[B]]>
// CHECK: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<1024xf32, #[[B]]>) : i32 {
// CHECK: tessel.load {{.*}} {vec = 4 : i32} : (tensor<1024x!tessel.ptr<f32>, #[[B]]>
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], %{{.*}} : tensor<1024xf32, #[[B]]>
// CHECK: scf.yield %[[NEXT]] : tensor<1024xf32, #[[B]]>
// CHECK: tessel.reduce %[[R]] {axis = 0 : i32}
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @row_sum(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %out: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %step = arith.constant 1024 : i32
    %zero = arith.constant dense<0.0> : tensor<1024xf32>
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %xs = tessel.splat %x : tensor<1024x!tessel.ptr<f32>>
    %sum = scf.for %k = %c0 to %n step %step iter_args(%acc = %zero) -> (tensor<1024xf32>) : i32 {
      %ks = tessel.splat %k : tensor<1024xi32>
      %offs = arith.addi %ks, %r : tensor<1024xi32>
      %p = tessel.addptr %xs, %offs : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
      %v = tessel.load %p : (tensor<1024x!tessel.ptr<f32>>) -> tensor<1024xf32>
      %next = arith.addf %acc, %v : tensor<1024xf32>
      scf.yield %next : tensor<1024xf32>
    }
    %total = "tessel.reduce"(%sum) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tessel.yield %s : f32
    }) : (tensor<1024xf32>) -> f32
    tessel.store %out, %total : (!tessel.ptr<f32>, f32) -> ()
    return
  }
}

// -----

// The carried tile goes round through a broadcast, a reduce (a slice of the
// wide tile's layout) and expand_dims: the slice's parent is the carried
// tile's layout, so the loop needs no conversion.
// CHECK-LABEL: func.func @through_reduce(
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x1xf32, #[[L:.*]]>)
// CHECK-NOT: tessel.convert_layout
// CHECK: scf.yield %{{.*}} : tensor<4x1xf32, #[[L]]>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @through_reduce(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init = arith.constant dense<0.0> : tensor<4x1xf32>
    %grid = arith.constant dense<1.0> : tensor<4x64xf32>
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<4x1xf32>) : i32 {
      %wide = tessel.broadcast %acc : tensor<4x1xf32> -> tensor<4x64xf32>
      %sum = arith.addf %wide, %grid : tensor<4x64xf32>
      %row = "tessel.reduce"(%sum) <{axis = 1 : i32}> ({
      ^bb0(%a: f32, %b: f32):
        %s = arith.addf %a, %b : f32
        tessel.yield %s : f32
      }) : (tensor<4x64xf32>) -> tensor<4xf32>
      %next = tessel.expand_dims %row {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf32>
      scf.yield %next : tensor<4x1xf32>
    }
    return
  }
}
