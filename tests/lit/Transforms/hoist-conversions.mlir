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

// -----

// Two loops convert one tile made before them to one layout (attention's
// loops of whole and of masked key blocks, each reading Q as a dot operand):
// both conversions leave their loops and the second reuses the first, so
// the source is not kept live across the first loop for a second conversion.
#row = #tessel.blocked<sizePerThread = [1, 4], threadsPerWave = [16, 4], wavesPerBlock = [4, 1], order = [1, 0]>
#col = #tessel.blocked<sizePerThread = [4, 1], threadsPerWave = [4, 16], wavesPerBlock = [1, 4], order = [0, 1]>
// CHECK-LABEL: func.func @two_loops(
// CHECK: %[[C:.*]] = tessel.convert_layout %{{.*}} : tensor<64x64xf32, #{{.*}}> -> tensor<64x64xf32, #[[COL:.*]]>
// CHECK-NOT: tessel.convert_layout
// CHECK: scf.for
// CHECK: arith.addf %{{.*}}, %[[C]] : tensor<64x64xf32, #[[COL]]>
// CHECK-NOT: tessel.convert_layout
// CHECK: scf.for
// CHECK: arith.addf %{{.*}}, %[[C]] : tensor<64x64xf32, #[[COL]]>
func.func @two_loops(%t: tensor<64x64xf32, #row>, %init: tensor<64x64xf32, #col>,
                     %n: index) -> tensor<64x64xf32, #col> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<64x64xf32, #col>) {
    %c = tessel.convert_layout %t : tensor<64x64xf32, #row> -> tensor<64x64xf32, #col>
    %s = arith.addf %acc, %c : tensor<64x64xf32, #col>
    scf.yield %s : tensor<64x64xf32, #col>
  }
  %b = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<64x64xf32, #col>) {
    %c = tessel.convert_layout %t : tensor<64x64xf32, #row> -> tensor<64x64xf32, #col>
    %s = arith.addf %acc, %c : tensor<64x64xf32, #col>
    scf.yield %s : tensor<64x64xf32, #col>
  }
  return %b : tensor<64x64xf32, #col>
}

// -----

// Conversions of one tile to two layouts are two tiles: both stay.
#row = #tessel.blocked<sizePerThread = [1, 4], threadsPerWave = [16, 4], wavesPerBlock = [4, 1], order = [1, 0]>
#col = #tessel.blocked<sizePerThread = [4, 1], threadsPerWave = [4, 16], wavesPerBlock = [1, 4], order = [0, 1]>
#wide = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [32, 2], wavesPerBlock = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @two_layouts(
// CHECK: tessel.convert_layout %{{.*}} -> tensor<64x64xf32, #{{.*}}>
// CHECK: scf.for
// CHECK: tessel.convert_layout %{{.*}} -> tensor<64x64xf32, #{{.*}}>
// CHECK: scf.for
func.func @two_layouts(%t: tensor<64x64xf32, #row>, %x: tensor<64x64xf32, #col>,
                       %y: tensor<64x64xf32, #wide>, %n: index)
    -> (tensor<64x64xf32, #col>, tensor<64x64xf32, #wide>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<64x64xf32, #col>) {
    %c = tessel.convert_layout %t : tensor<64x64xf32, #row> -> tensor<64x64xf32, #col>
    %s = arith.addf %acc, %c : tensor<64x64xf32, #col>
    scf.yield %s : tensor<64x64xf32, #col>
  }
  %b = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %y) -> (tensor<64x64xf32, #wide>) {
    %c = tessel.convert_layout %t : tensor<64x64xf32, #row> -> tensor<64x64xf32, #wide>
    %s = arith.addf %acc, %c : tensor<64x64xf32, #wide>
    scf.yield %s : tensor<64x64xf32, #wide>
  }
  return %a, %b : tensor<64x64xf32, #col>, tensor<64x64xf32, #wide>
}
