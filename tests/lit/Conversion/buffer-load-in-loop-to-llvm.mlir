// A masked buffer load that a thread holds one group of takes global
// instructions under a branch outside loops (global-offsets-to-llvm.mlir,
// @masked), but in a loop a buffer resource (loop-invariant: LLVM hoists
// it), a masked-off group's offset selected past its range, no branch each
// iteration (the exec-mask instructions and the `other` moves cost more).
// RUN: tessel-opt %s --tessel-lower-to-llvm | FileCheck %s

// CHECK-LABEL: llvm.func @masked_in_loop(
// CHECK: ^[[HEAD:bb[0-9]+]](
// CHECK: llvm.cond_br %{{.*}}, ^[[BODY:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]
// CHECK: ^[[BODY]]:
// CHECK-NOT: llvm.cond_br
// CHECK: rocdl.make.buffer.rsrc
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i32
// CHECK-NOT: llvm.cond_br
// CHECK: rocdl.raw.ptr.buffer.load %{{.*}} : vector<4xi32>
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.br ^[[HEAD]](
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @masked_in_loop(%x: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %o: !tessel.ptr<f32> {tessel.divisibility = 16 : i32},
                            %n: i32 {tessel.divisibility = 16 : i32}, %steps: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c256 = arith.constant 256 : i32
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %ns = tessel.splat %n : tensor<256xi32>
    %xs = tessel.splat %x : tensor<256x!tessel.ptr<f32>>
    %zero = arith.constant dense<0.0> : tensor<256xf32>
    %sum = scf.for %k = %c0 to %steps step %c1 iter_args(%acc = %zero) -> (tensor<256xf32>) : i32 {
      %base = arith.muli %k, %c256 : i32
      %bs = tessel.splat %base : tensor<256xi32>
      %offs = arith.addi %bs, %r : tensor<256xi32>
      %m = arith.cmpi slt, %offs, %ns : tensor<256xi32>
      %xp = tessel.addptr %xs, %offs : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
      %a = tessel.load %xp, %m : (tensor<256x!tessel.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
      %next = arith.addf %acc, %a : tensor<256xf32>
      scf.yield %next : tensor<256xf32>
    }
    %os = tessel.splat %o : tensor<256x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    tessel.store %op, %sum : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}
