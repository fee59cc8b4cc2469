// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-convert-to-llvm | FileCheck %s

// Triton's tl.math functions AMDGPU has no instruction for are calls to
// ocml, per register (a thread of 64 holds one element here), in f32 and
// f64; pow and atan2 pass their operands in order (atan2(y, x)).
// CHECK-DAG: llvm.func @__ocml_erf_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_tanh_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_log1p_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_expm1_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_sinh_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_cosh_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_asin_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_acos_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_atan_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_cbrt_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_pow_f32(f32, f32) -> f32
// CHECK-DAG: llvm.func @__ocml_atan2_f32(f32, f32) -> f32
// CHECK-LABEL: llvm.func @tl_math(
// CHECK: %[[X:.*]] = llvm.sitofp
// CHECK: %[[E:.*]] = llvm.call @__ocml_erf_f32(%[[X]])
// CHECK: %[[T:.*]] = llvm.call @__ocml_tanh_f32(%[[E]])
// CHECK: %[[L:.*]] = llvm.call @__ocml_log1p_f32(%[[T]])
// CHECK: %[[M:.*]] = llvm.call @__ocml_expm1_f32(%[[L]])
// CHECK: %[[SH:.*]] = llvm.call @__ocml_sinh_f32(%[[M]])
// CHECK: %[[CH:.*]] = llvm.call @__ocml_cosh_f32(%[[SH]])
// CHECK: %[[AS:.*]] = llvm.call @__ocml_asin_f32(%[[CH]])
// CHECK: %[[AC:.*]] = llvm.call @__ocml_acos_f32(%[[AS]])
// CHECK: %[[AT:.*]] = llvm.call @__ocml_atan_f32(%[[AC]])
// CHECK: %[[CB:.*]] = llvm.call @__ocml_cbrt_f32(%[[AT]])
// CHECK: %[[P:.*]] = llvm.call @__ocml_pow_f32(%[[CB]], %[[X]])
// CHECK: llvm.call @__ocml_atan2_f32(%[[P]], %[[X]])
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @tl_math(%out: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %x = arith.sitofp %r : tensor<64xi32> to tensor<64xf32>
    %e = math.erf %x : tensor<64xf32>
    %t = math.tanh %e : tensor<64xf32>
    %l = math.log1p %t : tensor<64xf32>
    %m = math.expm1 %l : tensor<64xf32>
    %sh = math.sinh %m : tensor<64xf32>
    %ch = math.cosh %sh : tensor<64xf32>
    %as = math.asin %ch : tensor<64xf32>
    %ac = math.acos %as : tensor<64xf32>
    %at = math.atan %ac : tensor<64xf32>
    %cb = math.cbrt %at : tensor<64xf32>
    %p = math.powf %cb, %x : tensor<64xf32>
    %a2 = math.atan2 %p, %x : tensor<64xf32>
    %os = tessel.splat %out : tensor<64x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %r : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    tessel.store %op, %a2 : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> ()
    return
  }
}

// -----

// f64, on a scalar as on a tile: the _f64 functions.
// CHECK-DAG: llvm.func @__ocml_erf_f64(f64) -> f64
// CHECK-DAG: llvm.func @__ocml_pow_f64(f64, f64) -> f64
// CHECK-LABEL: llvm.func @tl_math_f64(
// CHECK: %[[E:.*]] = llvm.call @__ocml_erf_f64(%{{.*}}) : (f64) -> f64
// CHECK: llvm.call @__ocml_pow_f64(%[[E]], %{{.*}}) : (f64, f64) -> f64
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @tl_math_f64(%out: !tessel.ptr<f64>, %s: f64) {
    %e = math.erf %s : f64
    %p = math.powf %e, %s : f64
    tessel.store %out, %p : (!tessel.ptr<f64>, f64) -> ()
    return
  }
}

// -----

// round (halves away from zero), rint (math.roundeven: halves to even) and
// trunc are exact: LLVM's intrinsics (v_rndne_f32, v_trunc_f32), no call.
// CHECK-LABEL: llvm.func @roundings(
// CHECK-NOT: llvm.call
// CHECK: llvm.intr.round
// CHECK: llvm.intr.roundeven
// CHECK: llvm.intr.trunc
// CHECK-NOT: llvm.call
// CHECK: llvm.return
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @roundings(%out: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %x = arith.sitofp %r : tensor<64xi32> to tensor<64xf32>
    %a = math.round %x : tensor<64xf32>
    %b = math.roundeven %a : tensor<64xf32>
    %c = math.trunc %b : tensor<64xf32>
    %os = tessel.splat %out : tensor<64x!tessel.ptr<f32>>
    %op = tessel.addptr %os, %r : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    tessel.store %op, %c : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> ()
    return
  }
}
