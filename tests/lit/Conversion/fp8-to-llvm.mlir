// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-plan-lds --tessel-convert-to-llvm | FileCheck %s

// gfx942 converts the FNUZ formats in hardware: two registers to one
// v_cvt_pk_fp8_f32 (E4M3) / v_cvt_pk_bf8_f32 (E5M2), back one a
// v_cvt_f32_fp8; the 8-bit values live in i8 registers.
// CHECK-LABEL: llvm.func @fnuz_on_gfx942(
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.amdgcn.cvt.pk.fp8.f32"
// CHECK-NOT: llvm.call_intrinsic "llvm.amdgcn.cvt.pk.fp8.f32"
// CHECK: llvm.store {{.*}} : i8, !llvm.ptr<1>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.amdgcn.cvt.pk.bf8.f32"
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.amdgcn.cvt.f32.bf8"
// CHECK: llvm.return
module attributes {tessel.target = "gfx942", tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @fnuz_on_gfx942(%p: !tessel.ptr<f8E4M3FNUZ>, %o: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %x = arith.sitofp %r : tensor<256xi32> to tensor<256xf32>
    %q = arith.truncf %x : tensor<256xf32> to tensor<256xf8E4M3FNUZ>
    %ptrs = tessel.splat %p : tensor<256x!tessel.ptr<f8E4M3FNUZ>>
    %a = tessel.addptr %ptrs, %r : tensor<256x!tessel.ptr<f8E4M3FNUZ>>, tensor<256xi32>
    tessel.store %a, %q : (tensor<256x!tessel.ptr<f8E4M3FNUZ>>, tensor<256xf8E4M3FNUZ>) -> ()
    %b = arith.truncf %x : tensor<256xf32> to tensor<256xf8E5M2FNUZ>
    %y = arith.extf %b : tensor<256xf8E5M2FNUZ> to tensor<256xf32>
    %optrs = tessel.splat %o : tensor<256x!tessel.ptr<f32>>
    %oa = tessel.addptr %optrs, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    tessel.store %oa, %y : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}

// -----

// gfx942's instructions do not take OCP's formats, and gfx1100 has none:
// integer operations (no conversion intrinsic), NaN 0x7F with the sign.
// CHECK-LABEL: llvm.func @ocp_on_gfx942(
// CHECK-NOT: llvm.call_intrinsic "llvm.amdgcn.cvt
// CHECK: llvm.bitcast {{.*}} : f32 to i32
// CHECK: llvm.mlir.constant(127 : i32)
// CHECK-NOT: llvm.call_intrinsic "llvm.amdgcn.cvt
// CHECK: llvm.return
module attributes {tessel.target = "gfx942", tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @ocp_on_gfx942(%p: !tessel.ptr<f8E4M3FN>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %x = arith.sitofp %r : tensor<256xi32> to tensor<256xf32>
    %q = arith.truncf %x : tensor<256xf32> to tensor<256xf8E4M3FN>
    %ptrs = tessel.splat %p : tensor<256x!tessel.ptr<f8E4M3FN>>
    %a = tessel.addptr %ptrs, %r : tensor<256x!tessel.ptr<f8E4M3FN>>, tensor<256xi32>
    tessel.store %a, %q : (tensor<256x!tessel.ptr<f8E4M3FN>>, tensor<256xf8E4M3FN>) -> ()
    return
  }
}

// -----

// gfx950 converts OCP's formats in hardware.
// CHECK-LABEL: llvm.func @ocp_on_gfx950(
// CHECK: llvm.call_intrinsic "llvm.amdgcn.cvt.pk.fp8.f32"
// CHECK: llvm.call_intrinsic "llvm.amdgcn.cvt.f32.fp8"
// CHECK: llvm.return
module attributes {tessel.target = "gfx950", tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @ocp_on_gfx950(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %x = arith.sitofp %r : tensor<256xi32> to tensor<256xf32>
    %q = arith.truncf %x : tensor<256xf32> to tensor<256xf8E4M3FN>
    %y = arith.extf %q : tensor<256xf8E4M3FN> to tensor<256xf32>
    %ptrs = tessel.splat %p : tensor<256x!tessel.ptr<f32>>
    %a = tessel.addptr %ptrs, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    tessel.store %a, %y : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}

// -----

// Decoding without a conversion instruction: the byte's sign, exponent and
// mantissa fields under f32's, times 2^(127 - bias) (E4M3: 2^120, E5M2:
// 2^112), exact for normal and subnormal codes alike (f32 subnormals are
// kept); selects only for NaN (and E5M2's infinity). No int -> float
// conversion of the mantissa, no select between a normal and a subnormal
// decoding.
// CHECK-LABEL: llvm.func @decode_ocp_on_gfx942(
// CHECK-NOT: llvm.uitofp
// CHECK: %[[E4M3:.*]] = llvm.mlir.constant(1.329228E+36 : f32) : f32
// CHECK: llvm.fmul %{{.*}}, %[[E4M3]] : f32
// CHECK-NOT: llvm.uitofp
// CHECK: %[[E5M2:.*]] = llvm.mlir.constant(5.19229686E+33 : f32) : f32
// CHECK: llvm.fmul %{{.*}}, %[[E5M2]] : f32
// CHECK-NOT: llvm.uitofp
// CHECK: llvm.return
module attributes {tessel.target = "gfx942", tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @decode_ocp_on_gfx942(%p: !tessel.ptr<f8E4M3FN>, %q: !tessel.ptr<f8E5M2>, %o: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %ps = tessel.splat %p : tensor<64x!tessel.ptr<f8E4M3FN>>
    %pa = tessel.addptr %ps, %r : tensor<64x!tessel.ptr<f8E4M3FN>>, tensor<64xi32>
    %a = tessel.load %pa : (tensor<64x!tessel.ptr<f8E4M3FN>>) -> tensor<64xf8E4M3FN>
    %qs = tessel.splat %q : tensor<64x!tessel.ptr<f8E5M2>>
    %qa = tessel.addptr %qs, %r : tensor<64x!tessel.ptr<f8E5M2>>, tensor<64xi32>
    %b = tessel.load %qa : (tensor<64x!tessel.ptr<f8E5M2>>) -> tensor<64xf8E5M2>
    %x = arith.extf %a : tensor<64xf8E4M3FN> to tensor<64xf32>
    %y = arith.extf %b : tensor<64xf8E5M2> to tensor<64xf32>
    %s = arith.addf %x, %y : tensor<64xf32>
    %os = tessel.splat %o : tensor<64x!tessel.ptr<f32>>
    %oa = tessel.addptr %os, %r : tensor<64x!tessel.ptr<f32>>, tensor<64xi32>
    tessel.store %oa, %s : (tensor<64x!tessel.ptr<f32>>, tensor<64xf32>) -> ()
    return
  }
}
