// RUN: tessel-opt %s --tessel-convert-to-llvm | FileCheck %s

// Two tiles of two bytes a thread (a scaled dot's A and B scales, each loaded
// as one <2 x i8>) crossing the software pipeliner's branch: each tile is a
// word of its own, not one word of both tiles' bytes (which LLVM packs and
// unpacks with byte shifts on both sides of the branch). A pair is unpacked
// as the two bytes of its word's low half.
// CHECK-LABEL: llvm.func @if_two_pairs(
// CHECK: ^[[THEN:bb[0-9]+]]:
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<2xi8>
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<2xi8>
// CHECK: llvm.br ^[[MERGE:bb[0-9]+]](%{{.*}}, %{{.*}} : i32, i32)
// CHECK: llvm.br ^[[MERGE]](%{{.*}}, %{{.*}} : i32, i32)
// CHECK: ^[[MERGE]](%[[W0:.*]]: i32, %[[W1:.*]]: i32):
// CHECK-NEXT: %[[H0:.*]] = llvm.trunc %[[W0]] : i32 to i16
// CHECK-NEXT: %[[V0:.*]] = llvm.bitcast %[[H0]] : i16 to vector<2xi8>
// CHECK-COUNT-2: llvm.extractelement %[[V0]]
// CHECK: %[[H1:.*]] = llvm.trunc %[[W1]] : i32 to i16
// CHECK-NEXT: %[[V1:.*]] = llvm.bitcast %[[H1]] : i16 to vector<2xi8>
// CHECK-COUNT-2: llvm.extractelement %[[V1]]
#bl = #tessel.blocked<sizePerThread = [2], threadsPerWave = [64], wavesPerBlock = [1], order = [0]>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950"} {
  func.func @if_two_pairs(%a: !tessel.ptr<i8> {tessel.divisibility = 16 : i32},
                          %b: !tessel.ptr<i8> {tessel.divisibility = 16 : i32},
                          %out: !tessel.ptr<i8> {tessel.divisibility = 16 : i32}, %c: i1) {
    %r = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32, #bl>
    %as = tessel.splat %a : tensor<128x!tessel.ptr<i8>, #bl>
    %ap = tessel.addptr %as, %r : tensor<128x!tessel.ptr<i8>, #bl>, tensor<128xi32, #bl>
    %bs = tessel.splat %b : tensor<128x!tessel.ptr<i8>, #bl>
    %bp = tessel.addptr %bs, %r : tensor<128x!tessel.ptr<i8>, #bl>, tensor<128xi32, #bl>
    %x:2 = scf.if %c -> (tensor<128xi8, #bl>, tensor<128xi8, #bl>) {
      %la = tessel.load %ap {vec = 2 : i32} : (tensor<128x!tessel.ptr<i8>, #bl>) -> tensor<128xi8, #bl>
      %lb = tessel.load %bp {vec = 2 : i32} : (tensor<128x!tessel.ptr<i8>, #bl>) -> tensor<128xi8, #bl>
      scf.yield %la, %lb : tensor<128xi8, #bl>, tensor<128xi8, #bl>
    } else {
      %p = ub.poison : tensor<128xi8, #bl>
      scf.yield %p, %p : tensor<128xi8, #bl>, tensor<128xi8, #bl>
    }
    %s = arith.addi %x#0, %x#1 : tensor<128xi8, #bl>
    %os = tessel.splat %out : tensor<128x!tessel.ptr<i8>, #bl>
    %op = tessel.addptr %os, %r : tensor<128x!tessel.ptr<i8>, #bl>, tensor<128xi32, #bl>
    tessel.store %op, %s : (tensor<128x!tessel.ptr<i8>, #bl>, tensor<128xi8, #bl>) -> ()
    return
  }
}
