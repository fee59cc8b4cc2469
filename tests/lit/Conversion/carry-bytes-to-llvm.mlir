// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-convert-to-llvm | FileCheck %s

// Tiles of 8-bit elements cross control flow as 32-bit words, four
// consecutive registers a word (register 4w + j in bits 8j..8j+7), packed at
// every branch that passes them and unpacked at the top of the block that
// takes them: LLVM carries one `phi i32` per word, not one `phi i8` per
// element. A [1024] i8 tile over 64 threads is 16 registers a thread: 4 words.

// A loop carrying an i8 tile: the header takes (iv, 4 words); the entry and
// the back edge pack registers 0..3 of the tile into the first word.
// CHECK-LABEL: llvm.func @loop_i8(
// CHECK: %[[B0:.*]] = llvm.zext %{{.*}} : i8 to i32
// CHECK: %[[B1:.*]] = llvm.zext %{{.*}} : i8 to i32
// CHECK: %[[EIGHT:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK: %[[S1:.*]] = llvm.shl %[[B1]], %[[EIGHT]] : i32
// CHECK: llvm.or disjoint %[[B0]], %[[S1]] : i32
// CHECK: llvm.br ^[[HEAD:bb[0-9]+]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i32, i32, i32, i32, i32)
// CHECK: ^[[HEAD]](%{{.*}}: i32, %[[W0:.*]]: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32):
// CHECK-NOT: i8)
// CHECK-NEXT: llvm.trunc %[[W0]] : i32 to i8
// CHECK-NEXT: %[[EIGHT2:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[H1:.*]] = llvm.lshr %[[W0]], %[[EIGHT2]] : i32
// CHECK-NEXT: llvm.trunc %[[H1]] : i32 to i8
// CHECK: llvm.cond_br
// CHECK: llvm.add {{.*}} : i8
// CHECK: llvm.br ^[[HEAD]]({{.*}} : i32, i32, i32, i32, i32)
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @loop_i8(%out: !tessel.ptr<i8> {tessel.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %init = arith.trunci %r : tensor<1024xi32> to tensor<1024xi8>
    %one = arith.constant dense<1> : tensor<1024xi8>
    %sum = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<1024xi8>) : i32 {
      %next = arith.addi %acc, %one : tensor<1024xi8>
      scf.yield %next : tensor<1024xi8>
    }
    %os = tessel.splat %out : tensor<1024x!tessel.ptr<i8>>
    %p = tessel.addptr %os, %r : tensor<1024x!tessel.ptr<i8>>, tensor<1024xi32>
    tessel.store %p, %sum : (tensor<1024x!tessel.ptr<i8>>, tensor<1024xi8>) -> ()
    return
  }
}

// -----

// An scf.if yielding an 8-bit float tile loaded on one side (the software
// pipeliner's prefetch branch): the merge block takes 4 words, and each side
// passes words (a poison tile's words are built from poison bytes).
// CHECK-LABEL: llvm.func @if_fp8(
// CHECK: llvm.cond_br %{{.*}}, ^[[THEN:bb[0-9]+]], ^[[ELSE:bb[0-9]+]]
// CHECK: ^[[THEN]]:
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<16xi8>
// CHECK: llvm.br ^[[MERGE:bb[0-9]+]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i32, i32, i32, i32)
// CHECK: ^[[ELSE]]:
// CHECK: llvm.br ^[[MERGE]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i32, i32, i32, i32)
// CHECK: ^[[MERGE]](%{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32):
// CHECK-COUNT-4: llvm.trunc %{{.*}} : i32 to i8
// CHECK: llvm.store %{{.*}} : vector<16xi8>, !llvm.ptr<1>
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @if_fp8(%in: !tessel.ptr<f8E4M3FNUZ> {tessel.divisibility = 16 : i32},
                    %out: !tessel.ptr<f8E4M3FNUZ> {tessel.divisibility = 16 : i32}, %c: i1) {
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %is = tessel.splat %in : tensor<1024x!tessel.ptr<f8E4M3FNUZ>>
    %ip = tessel.addptr %is, %r : tensor<1024x!tessel.ptr<f8E4M3FNUZ>>, tensor<1024xi32>
    %t = scf.if %c -> (tensor<1024xf8E4M3FNUZ>) {
      %x = tessel.load %ip : (tensor<1024x!tessel.ptr<f8E4M3FNUZ>>) -> tensor<1024xf8E4M3FNUZ>
      scf.yield %x : tensor<1024xf8E4M3FNUZ>
    } else {
      %p = ub.poison : tensor<1024xf8E4M3FNUZ>
      scf.yield %p : tensor<1024xf8E4M3FNUZ>
    }
    %os = tessel.splat %out : tensor<1024x!tessel.ptr<f8E4M3FNUZ>>
    %op = tessel.addptr %os, %r : tensor<1024x!tessel.ptr<f8E4M3FNUZ>>, tensor<1024xi32>
    tessel.store %op, %t : (tensor<1024x!tessel.ptr<f8E4M3FNUZ>>, tensor<1024xf8E4M3FNUZ>) -> ()
    return
  }
}

// -----

// A branch that passes poison bytes (the pipeliner's arm that loads nothing)
// passes poison words, not the bytes or-ed into one: a defined byte sharing a
// word with a poison one would turn poison. The tile's registers: 4 words.
// CHECK-LABEL: llvm.func @if_poison(
// CHECK: llvm.br ^[[JOIN:bb[0-9]+]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i32, i32, i32, i32)
// CHECK: %[[P0:.*]] = llvm.mlir.poison : i32
// CHECK-NEXT: %[[P1:.*]] = llvm.mlir.poison : i32
// CHECK-NEXT: %[[P2:.*]] = llvm.mlir.poison : i32
// CHECK-NEXT: %[[P3:.*]] = llvm.mlir.poison : i32
// CHECK-NEXT: llvm.br ^[[JOIN]](%[[P0]], %[[P1]], %[[P2]], %[[P3]] : i32, i32, i32, i32)
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @if_poison(%out: !tessel.ptr<i8> {tessel.divisibility = 16 : i32}, %c: i1) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %t = arith.trunci %r : tensor<256xi32> to tensor<256xi8>
    %y = scf.if %c -> (tensor<256xi8>) {
      scf.yield %t : tensor<256xi8>
    } else {
      %p = ub.poison : tensor<256xi8>
      scf.yield %p : tensor<256xi8>
    }
    %os = tessel.splat %out : tensor<256x!tessel.ptr<i8>>
    %q = tessel.addptr %os, %r : tensor<256x!tessel.ptr<i8>>, tensor<256xi32>
    tessel.store %q, %y : (tensor<256x!tessel.ptr<i8>>, tensor<256xi8>) -> ()
    return
  }
}
