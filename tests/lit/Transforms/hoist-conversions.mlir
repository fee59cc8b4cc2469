// RUN: tessel-opt %s -split-input-file --tessel-hoist-conversions | FileCheck %s

#a = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
#b = #tessel.blocked<sizePerThread = [4], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
#c = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>

// A conversion to the layout its source has is its source; a chain whose
// inner conversion nothing else reads is one conversion; an inner one read
// elsewhere stays.
// CHECK-LABEL: func.func @redundant(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1024xf32, #[[A:[^>]*]]>
// CHECK-NEXT: %[[ONE:.*]] = tessel.convert_layout %[[X]] : tensor<1024xf32, #[[A]]> -> tensor<1024xf32, #[[C:[^>]*]]>
// CHECK-NEXT: %[[KEPT:.*]] = tessel.convert_layout %[[X]] : tensor<1024xf32, #[[A]]> -> tensor<1024xf32, #[[B:[^>]*]]>
// CHECK-NEXT: %[[AGAIN:.*]] = tessel.convert_layout %[[KEPT]] : tensor<1024xf32, #[[B]]> -> tensor<1024xf32, #[[C]]>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[X]]
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[ONE]], %[[AGAIN]]
// CHECK-NEXT: arith.addf %[[KEPT]], %[[KEPT]]
// CHECK-NEXT: return
func.func @redundant(%x: tensor<1024xf32, #a>) {
  %same = tessel.convert_layout %x : tensor<1024xf32, #a> -> tensor<1024xf32, #a>
  %step = tessel.convert_layout %x : tensor<1024xf32, #a> -> tensor<1024xf32, #b>
  %one = tessel.convert_layout %step : tensor<1024xf32, #b> -> tensor<1024xf32, #c>
  %kept = tessel.convert_layout %x : tensor<1024xf32, #a> -> tensor<1024xf32, #b>
  %again = tessel.convert_layout %kept : tensor<1024xf32, #b> -> tensor<1024xf32, #c>
  %s = arith.addf %same, %same : tensor<1024xf32, #a>
  %t = arith.addf %one, %again : tensor<1024xf32, #c>
  %u = arith.addf %kept, %kept : tensor<1024xf32, #b>
  return
}

// -----

#a = #tessel.blocked<sizePerThread = [1], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>
#b = #tessel.blocked<sizePerThread = [4], threadsPerWave = [64], wavesPerBlock = [4], order = [0]>

// A conversion there and back is no conversion.
// CHECK-LABEL: func.func @round_trip(
// CHECK-NOT: tessel.convert_layout
// CHECK: return
func.func @round_trip(%x: tensor<1024xf32, #a>) -> tensor<1024xf32, #a> {
  %there = tessel.convert_layout %x : tensor<1024xf32, #a> -> tensor<1024xf32, #b>
  %back = tessel.convert_layout %there : tensor<1024xf32, #b> -> tensor<1024xf32, #a>
  return %back : tensor<1024xf32, #a>
}
