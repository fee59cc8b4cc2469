// RUN: tessel-opt %s --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops | FileCheck %s
// RUN: tessel-opt %s --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops=direct-to-lds=0 | FileCheck %s --check-prefix=REGS

// gfx950, 8 waves: A (128x32 f16, 16 bytes a lane) goes straight into two
// slots; B (32x64 f16 with columns 3 apart: one element a load, 8 bytes a
// thread, too small for a load to LDS) rides along through registers in two
// slots of its own: the first stored into slot 0 before the loop, with no
// barrier (the loop's top orders it); each iteration, after the wait and the
// barrier, loads the next B in the branch on whether the next iteration
// runs, then A's next tile into the other slot (the register loads first:
// vmcnt counts in order, so the wait before B's store need not wait for
// A's); both read from this iteration's slot; B stored into the next slot at
// the end, again with no barrier. B's reads and stores touch no byte a load
// to LDS writes (tessel.async_copied). A's offsets from k go in as a
// loop-invariant tile plus the shift k (splitShift).
// CHECK-LABEL: func.func @mixed(
// CHECK-DAG: %[[A:.*]] = tessel.local_alloc : <2x128x32xf16
// CHECK-DAG: %[[B:.*]] = tessel.local_alloc : <2x32x64xf16
// CHECK: %[[FIRST:.*]] = scf.if
// CHECK: tessel.buffer_load_to_local %{{.*}} into %[[A]][%c0_i32]
// CHECK: tessel.buffer_load %{{.*}} -> tensor<32x64xf16
// CHECK: tessel.local_store %[[FIRST]], %[[B]][%c0_i32] {tessel.async_copied}
// CHECK-NOT: tessel.barrier
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[READ:.*]] = %{{.*}})
// CHECK: %[[WRITE:.*]] = arith.select
// CHECK: tessel.async_wait
// CHECK-NEXT: tessel.barrier
// CHECK: %[[NEXTB:.*]] = scf.if
// CHECK-NEXT: tessel.buffer_load %{{.*}} -> tensor<32x64xf16
// CHECK: tessel.buffer_load_to_local %{{.*}}[%{{.*}} + %{{.*}}], %{{.*}} into %[[A]][%[[WRITE]]]
// CHECK-DAG: tessel.local_load %[[A]][%[[READ]]] {tessel.async_copied}
// CHECK-DAG: tessel.local_load %[[B]][%[[READ]]] {tessel.async_copied}
// CHECK: tessel.local_store %[[NEXTB]], %[[B]][%[[WRITE]]] {tessel.async_copied}
// CHECK-NOT: tessel.barrier
// CHECK: scf.yield
// CHECK: tessel.async_wait
// CHECK-NEXT: tessel.barrier
// Through registers (direct-to-lds=0): no load to LDS, one slot a tile.
// REGS-LABEL: func.func @mixed(
// REGS-NOT: buffer_load_to_local
// REGS-DAG: tessel.local_alloc : <1x128x32xf16
// REGS-DAG: tessel.local_alloc : <1x32x64xf16
// REGS-NOT: buffer_load_to_local
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @mixed(%a: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %bp: !tessel.ptr<f16> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32, %K: i32 {tessel.divisibility = 16 : i32}) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
      %row = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
      %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
      %c32s = tessel.splat %c32 : tensor<128x1xi32>
      %rowk = arith.muli %rowe, %c32s : tensor<128x1xi32>
      %rowb = tessel.broadcast %rowk : tensor<128x1xi32> -> tensor<128x32xi32>
      %col = tessel.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
      %ks = tessel.splat %k : tensor<32xi32>
      %kk = arith.addi %ks, %col : tensor<32xi32>
      %cole = tessel.expand_dims %kk {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
      %colb = tessel.broadcast %cole : tensor<1x32xi32> -> tensor<128x32xi32>
      %ia = arith.addi %rowb, %colb : tensor<128x32xi32>
      %pa = tessel.splat %a : tensor<128x32x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %ia : tensor<128x32x!tessel.ptr<f16>>, tensor<128x32xi32>
      %ta = tessel.load %qa : (tensor<128x32x!tessel.ptr<f16>>) -> tensor<128x32xf16>
      %kr = tessel.expand_dims %kk {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
      %krb = tessel.broadcast %kr : tensor<32x1xi32> -> tensor<32x64xi32>
      %cn = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
      %cne = tessel.expand_dims %cn {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
      %cnb0 = tessel.broadcast %cne : tensor<1x64xi32> -> tensor<32x64xi32>
      %s3 = arith.constant dense<3> : tensor<32x64xi32>
      %cnb = arith.muli %cnb0, %s3 : tensor<32x64xi32>
      %ib = arith.addi %krb, %cnb : tensor<32x64xi32>
      %pb = tessel.splat %bp : tensor<32x64x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ib : tensor<32x64x!tessel.ptr<f16>>, tensor<32x64xi32>
      %tb = tessel.load %qb : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
      %d = tessel.dot %ta, %tb, %acc : tensor<128x32xf16> * tensor<32x64xf16> -> tensor<128x64xf32>
      scf.yield %d : tensor<128x64xf32>
    }
    %pc = tessel.splat %c : tensor<128x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc : (tensor<128x64x!tessel.ptr<f32>>, tensor<128x64xf32>) -> ()
    return
  }
}
