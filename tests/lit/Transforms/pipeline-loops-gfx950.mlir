// RUN: tessel-opt %s --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops=direct-to-lds=0 | FileCheck %s
// RUN: tessel-opt %s --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops=direct-to-lds=1 | FileCheck %s --check-prefix=DIRECT

// gfx950 at num_stages 2: A (K contiguous, 16-byte loads) staged in LDS.
// With direct-to-lds=0 through registers: one slot, stored at the end of
// the body between two barriers.
// CHECK-LABEL: func.func @direct(
// CHECK: %[[FIRST:.*]] = scf.if
// CHECK-NEXT: tessel.buffer_load
// CHECK: tessel.local_alloc : <1x64x32xf16
// CHECK: tessel.local_store %[[FIRST]]
// CHECK: scf.for
// CHECK: tessel.local_load %{{.*}}[%{{.*}}] :
// CHECK: tessel.dot
// CHECK: tessel.barrier
// CHECK: tessel.local_store
// CHECK: tessel.barrier
// CHECK-NOT: tessel.async_wait
// CHECK: scf.yield

// With direct-to-lds, the tiles go straight from global memory into two
// slots: the prologue loads slot 0 (behind the loop's branch, no barrier
// after it); each iteration computes the slot it writes (the one it does not
// read) and the next tile's mask (its own ANDed with whether the next
// iteration runs: no branch), then waits for its loads and a barrier (the
// slot it reads has landed, the other is free), loads the next tile into
// the other slot (a buffer load's offsets less the carried offset, which is
// the shift), reads its own; no barrier at the end. After the loop: a wait
// (the last iteration's loads, masked off, still write) and a barrier. No
// tile is carried in registers, none is stored by threads.
// DIRECT-LABEL: func.func @direct(
// DIRECT: %[[BUF:.*]] = tessel.local_alloc : <2x64x32xf16
// DIRECT: scf.if
// DIRECT-NEXT: tessel.buffer_load_to_local %{{.*}}[%{{.*}} + %{{.*}}], %{{.*}} into %[[BUF]][%{{.*}}] {vec = 8 : i32}
// DIRECT-NEXT: }
// DIRECT-NOT: tessel.barrier
// DIRECT-NOT: tessel.async_wait
// DIRECT: scf.for %[[IV:.*]] = %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[READ:.*]] = %{{.*}}) -> (tensor<64x64xf32, #{{.*}}>, i32, i32)
// DIRECT: %[[AFTER:.*]] = arith.addi %[[READ]], %{{.*}} : i32
// DIRECT: %[[WRITE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[AFTER]] : i32
// DIRECT: %[[NEXT:.*]] = arith.addi %[[IV]], %{{.*}} : i32
// DIRECT: %[[VALID:.*]] = arith.cmpi slt, %[[NEXT]], %{{.*}} : i32
// DIRECT: %[[KMASK:.*]] = arith.cmpi slt
// DIRECT: %[[ALL:.*]] = tessel.splat %[[VALID]] : tensor<64x32xi1
// DIRECT: %[[MASK:.*]] = arith.andi %[[KMASK]], %[[ALL]]
// DIRECT-NOT: scf.if
// DIRECT: tessel.async_wait
// DIRECT-NEXT: tessel.barrier
// DIRECT-NEXT: tessel.buffer_load_to_local %{{.*}}[%{{.*}} + %[[NEXT]]], %[[MASK]] into %[[BUF]][%[[WRITE]]]
// DIRECT-NOT: tessel.local_store
// DIRECT: tessel.local_load %[[BUF]][%[[READ]]] {tessel.async_copied}
// DIRECT: tessel.dot
// DIRECT-NOT: tessel.local_store
// DIRECT-NOT: tessel.barrier
// DIRECT: scf.yield %{{.*}}, %{{.*}}, %[[WRITE]]
// DIRECT-NEXT: }
// DIRECT-NEXT: tessel.async_wait
// DIRECT-NEXT: tessel.barrier
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @direct(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %b: tensor<32x64xf16>, %c: !tessel.ptr<f32>, %n: i32, %K: i32 {tessel.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %zh = arith.constant dense<0.0> : tensor<64x32xf16>
    %acc:2 = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero, %off = %c0) -> (tensor<64x64xf32>, i32) : i32 {
      %row = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
      %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
      %c32s = tessel.splat %c32 : tensor<64x1xi32>
      %rowk = arith.muli %rowe, %c32s : tensor<64x1xi32>
      %rowb = tessel.broadcast %rowk : tensor<64x1xi32> -> tensor<64x32xi32>
      %col = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
      %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
      %colb = tessel.broadcast %cole : tensor<1x32xi32> -> tensor<64x32xi32>
      %ia = arith.addi %rowb, %colb : tensor<64x32xi32>
      %left = arith.subi %K, %k : i32
      %ls = tessel.splat %left : tensor<64x32xi32>
      %m = arith.cmpi slt, %colb, %ls : tensor<64x32xi32>
      %os = tessel.splat %k : tensor<64x32xi32>
      %o = arith.addi %ia, %os : tensor<64x32xi32>
      %pa = tessel.splat %a : tensor<64x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %o : tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi32>
      %ta = tessel.load %qa, %m, other %zh : (tensor<64x32x!tessel.ptr<f16>>, tensor<64x32xi1>, tensor<64x32xf16>) -> tensor<64x32xf16>
      %d = tessel.dot %ta, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      %next = arith.addi %off, %c32 : i32
      scf.yield %d, %next : tensor<64x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}
