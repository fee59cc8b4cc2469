// RUN: tessel-opt %s --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops | FileCheck %s
// RUN: tessel-opt %s --tessel-assign-layouts --tessel-use-buffer-ops --tessel-pipeline-loops=direct-to-lds=0 | FileCheck %s --check-prefix=REGS

// gfx950, 4 waves, a scaled dot: A (64x64 fp8, 16 bytes a lane) and its
// scales (64x2 bytes: fewer than 16 a thread, too small for a load to LDS)
// both wait in LDS for the dot. A goes straight into two slots; the scales
// ride along through registers in two slots of their own: the first stored
// into slot 0 before the loop; each iteration, after the wait and the
// barrier, loads the next scales in the branch on whether the next
// iteration runs, then A's next tile into the other slot (the register
// loads first: vmcnt counts in order, so the wait before their store need
// not wait for A's); both read from this iteration's slot; the scales
// stored into the next slot at the end, with no barrier (the next
// iteration's top orders them). The scales' reads and stores touch no byte
// a load to LDS writes (tessel.async_copied).
// CHECK-LABEL: func.func @scaled(
// CHECK-DAG: %[[A:.*]] = tessel.local_alloc : <2x64x64xf8E4M3FN
// CHECK-DAG: %[[S:.*]] = tessel.local_alloc : <2x64x2xi8
// CHECK: %[[FIRST:.*]]:{{.*}} = scf.if
// CHECK: tessel.local_store %[[FIRST]]{{.*}}, %[[S]][%{{.*}}] {tessel.async_copied}
// CHECK-NOT: tessel.barrier
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[READ:.*]] = %{{.*}})
// CHECK: %[[WRITE:.*]] = arith.select
// CHECK: tessel.async_wait
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: %[[NEXTS:.*]] = scf.if
// CHECK-NEXT: tessel.buffer_load %{{.*}} : tensor<64x2xi32
// CHECK: tessel.buffer_load_to_local %{{.*}} into %[[A]][%[[WRITE]]]
// CHECK-DAG: tessel.local_load %[[A]][%[[READ]]] {tessel.async_copied}
// CHECK-DAG: tessel.local_load %[[S]][%[[READ]]] {tessel.async_copied}
// CHECK: tessel.dot
// CHECK-NOT: tessel.barrier
// CHECK: tessel.local_store %[[NEXTS]], %[[S]][%[[WRITE]]] {tessel.async_copied}
// CHECK-NOT: tessel.barrier
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tessel.async_wait
// CHECK-NEXT: tessel.barrier

// Through registers (direct-to-lds=0): one slot each, no loads to LDS.
// REGS-LABEL: func.func @scaled(
// REGS-DAG: tessel.local_alloc : <1x64x64xf8E4M3FN
// REGS-DAG: tessel.local_alloc : <1x64x2xi8
// REGS-NOT: tessel.buffer_load_to_local
// REGS-NOT: tessel.async_copied
// REGS: return
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @scaled(%a: !tessel.ptr<f8E4M3FN> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32},
                    %as: !tessel.ptr<i8> {tessel.pointer_range = 31 : i32, tessel.divisibility = 16 : i32},
                    %b: tensor<64x64xf8E4M3FN>, %bs: tensor<64x2xi8>, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c2 = arith.constant 2 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %acc:2 = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero, %ks = %c0) -> (tensor<64x64xf32>, i32) : i32 {
      %row = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
      %rowe = tessel.expand_dims %row {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
      %c64s = tessel.splat %c64 : tensor<64x1xi32>
      %rowk = arith.muli %rowe, %c64s : tensor<64x1xi32>
      %rowb = tessel.broadcast %rowk : tensor<64x1xi32> -> tensor<64x64xi32>
      %col = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
      %cole = tessel.expand_dims %col {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
      %colb = tessel.broadcast %cole : tensor<1x64xi32> -> tensor<64x64xi32>
      %ia = arith.addi %rowb, %colb : tensor<64x64xi32>
      %os = tessel.splat %k : tensor<64x64xi32>
      %o = arith.addi %ia, %os : tensor<64x64xi32>
      %pa = tessel.splat %a : tensor<64x64x!tessel.ptr<f8E4M3FN>>
      %qa = tessel.addptr %pa, %o : tensor<64x64x!tessel.ptr<f8E4M3FN>>, tensor<64x64xi32>
      %ta = tessel.load %qa : (tensor<64x64x!tessel.ptr<f8E4M3FN>>) -> tensor<64x64xf8E4M3FN>
      %c2s = tessel.splat %c2 : tensor<64x1xi32>
      %srow = arith.muli %rowe, %c2s : tensor<64x1xi32>
      %srowb = tessel.broadcast %srow : tensor<64x1xi32> -> tensor<64x2xi32>
      %scol = tessel.make_range {start = 0 : i32, end = 2 : i32} : tensor<2xi32>
      %scole = tessel.expand_dims %scol {axis = 0 : i32} : tensor<2xi32> -> tensor<1x2xi32>
      %scolb = tessel.broadcast %scole : tensor<1x2xi32> -> tensor<64x2xi32>
      %is = arith.addi %srowb, %scolb : tensor<64x2xi32>
      %kss = tessel.splat %ks : tensor<64x2xi32>
      %so = arith.addi %is, %kss : tensor<64x2xi32>
      %ps = tessel.splat %as : tensor<64x2x!tessel.ptr<i8>>
      %qs = tessel.addptr %ps, %so : tensor<64x2x!tessel.ptr<i8>>, tensor<64x2xi32>
      %ts = tessel.load %qs : (tensor<64x2x!tessel.ptr<i8>>) -> tensor<64x2xi8>
      %d = tessel.dot %ta, %b, %acc scales %ts, %bs : tensor<64x2xi8>, tensor<64x2xi8> : tensor<64x64xf8E4M3FN> * tensor<64x64xf8E4M3FN> -> tensor<64x64xf32>
      %ksn = arith.addi %ks, %c2 : i32
      scf.yield %d, %ksn : tensor<64x64xf32>, i32
    }
    %pc = tessel.splat %c : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %pc, %acc#0 : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}
