// RUN: tessel-opt %s --tessel-assign-layouts --tessel-convert-to-llvm | FileCheck %s

// A loop carrying a [256] f32 tile over 64 threads: each thread carries its
// 4 registers round the loop as block arguments, and the loop is a backward
// branch whose trip count is known only at run time.
// CHECK-LABEL: llvm.func @carry(
// CHECK: llvm.br ^[[HEAD:bb[0-9]+]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i32, f32, f32, f32, f32)
// CHECK: ^[[HEAD]](%[[K:.*]]: i32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: %[[MORE:.*]] = llvm.icmp "slt" %[[K]], %{{.*}} : i32
// CHECK: llvm.cond_br %[[MORE]], ^[[BODY:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]
// CHECK: ^[[BODY]]:
// CHECK-COUNT-2: llvm.fadd {{.*}} : vector<2xf32>
// CHECK: llvm.br ^[[HEAD]](
// CHECK: ^[[EXIT]]:
// CHECK: llvm.store
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @carry(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<256xf32>
    %one = arith.constant dense<1.0> : tensor<256xf32>
    %sum = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<256xf32>) : i32 {
      %next = arith.addf %acc, %one : tensor<256xf32>
      scf.yield %next : tensor<256xf32>
    }
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %os = tessel.splat %out : tensor<256x!tessel.ptr<f32>>
    %p = tessel.addptr %os, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    tessel.store %p, %sum : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}
