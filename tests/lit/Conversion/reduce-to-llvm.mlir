// RUN: tessel-opt %s --tessel-assign-layouts --tessel-plan-lds --tessel-convert-to-llvm | FileCheck %s

// A 1024-element sum over 4 waves: in-thread adds, a butterfly across the
// 64 lanes (DPP within rows of 16: quad xor 1 and 2, half-row and row
// mirrors; ds_bpermute for distances 16 and 32: the module names no target,
// so no row broadcasts, see reduce-row-broadcast-to-llvm), then the 4 wave sums
// through LDS after one barrier, whose fences order LDS only (MMRA tag). No
// barrier after the reads: nothing later writes the scratch.
// CHECK: #mmra_tag = #llvm.mmra_tag<"amdgpu-synchronize-as":"local">
// CHECK: llvm.mlir.global internal @tessel_lds() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<16 x i8>
// CHECK-LABEL: llvm.func @row_sum(
// CHECK: rocdl.update.dpp {{.*}} with 177, 15, 15, true : f32
// CHECK: rocdl.update.dpp {{.*}} with 78, 15, 15, true : f32
// CHECK: rocdl.update.dpp {{.*}} with 321, 15, 15, true : f32
// CHECK: rocdl.update.dpp {{.*}} with 320, 15, 15, true : f32
// CHECK-COUNT-2: rocdl.ds_bpermute
// CHECK: llvm.store {{.*}} !llvm.ptr<3>
// CHECK: llvm.fence syncscope("workgroup") release {llvm.mmra = #mmra_tag}
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire {llvm.mmra = #mmra_tag}
// CHECK-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: rocdl.s.barrier
// CHECK: llvm.return
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @row_sum(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %x = arith.sitofp %r : tensor<1024xi32> to tensor<1024xf32>
    %s = tessel.reduce %x {axis = 0 : i32} : (tensor<1024xf32>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tessel.yield %c : f32
    }
    tessel.store %p, %s : (!tessel.ptr<f32>, f32) -> ()
    return
  }
}
