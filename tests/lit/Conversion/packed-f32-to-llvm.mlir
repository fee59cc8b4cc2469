// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-plan-lds --tessel-convert-to-llvm | FileCheck %s

// gfx942 packs f32 (v_pk_fma_f32, v_pk_mul_f32, v_pk_add_f32): a thread's
// 4 registers of x * y + z go two to an op on vector<2xf32>. The add takes
// the multiply's pairs as they are (no extract and insert between), a scalar
// operand is splat into both halves once, where it is defined (here the
// function's entry), for both ops that take it, and the store reads the
// halves.
// CHECK-LABEL: llvm.func @packed_ops(
// CHECK: %[[S0:.*]] = llvm.insertelement %[[SCALAR:arg1]], %{{.*}}[%{{.*}} : i32] : vector<2xf32>
// CHECK: %[[SPLAT:.*]] = llvm.insertelement %[[SCALAR]], %[[S0]][%{{.*}} : i32] : vector<2xf32>
// CHECK-NOT: llvm.insertelement %[[SCALAR]]
// CHECK-NOT: llvm.fmul {{.*}} : f32
// CHECK: %[[M0:.*]] = llvm.fmul %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: %[[M1:.*]] = llvm.fmul %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: llvm.fadd %[[M0]], %{{.*}} : vector<2xf32>
// CHECK: llvm.fadd %[[M1]], %{{.*}} : vector<2xf32>
// CHECK-NOT: llvm.insertelement %[[SCALAR]]
// CHECK: llvm.fsub %{{.*}}, %[[SPLAT]] : vector<2xf32>
// CHECK-NOT: llvm.insertelement %[[SCALAR]]
// CHECK: llvm.fsub %{{.*}}, %[[SPLAT]] : vector<2xf32>
// CHECK: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<2xf32>, vector<2xf32>, vector<2xf32>) -> vector<2xf32>
// CHECK-NOT: llvm.fadd {{.*}} : f32
// CHECK-NOT: llvm.fmul {{.*}} : f32
// CHECK: llvm.return
module attributes {tessel.target = "gfx942", tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @packed_ops(%p: !tessel.ptr<f32>, %s: f32) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %x = arith.sitofp %r : tensor<256xi32> to tensor<256xf32>
    %y = arith.mulf %x, %x : tensor<256xf32>
    %z = arith.addf %y, %x : tensor<256xf32>
    %b = tessel.splat %s : tensor<256xf32>
    %d = arith.subf %z, %b : tensor<256xf32>
    %f = math.fma %d, %x, %z : tensor<256xf32>
    %ptrs = tessel.splat %p : tensor<256x!tessel.ptr<f32>>
    %q = tessel.addptr %ptrs, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    tessel.store %q, %f : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}

// -----

// gfx1100 has no packed f32: one scalar op per register.
// CHECK-LABEL: llvm.func @scalar_on_gfx1100(
// CHECK-NOT: vector<2xf32>
// CHECK-COUNT-8: llvm.fmul {{.*}} : f32
// CHECK-NOT: vector<2xf32>
// CHECK: llvm.return
module attributes {tessel.target = "gfx1100", tessel.num_warps = 1 : i32, tessel.wave_size = 32 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @scalar_on_gfx1100(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %x = arith.sitofp %r : tensor<256xi32> to tensor<256xf32>
    %y = arith.mulf %x, %x : tensor<256xf32>
    %ptrs = tessel.splat %p : tensor<256x!tessel.ptr<f32>>
    %q = tessel.addptr %ptrs, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    tessel.store %q, %y : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}

// -----

// Only f32 add, subtract, multiply and fma are packed: a division, a max and
// f16 arithmetic stay scalar (LLVM's SLP vectorizer pairs f16 itself).
// CHECK-LABEL: llvm.func @not_packed(
// CHECK-NOT: vector<2x
// CHECK: llvm.return
module attributes {tessel.target = "gfx942", tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @not_packed(%p: !tessel.ptr<f32>, %h: !tessel.ptr<f16>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %x = arith.sitofp %r : tensor<256xi32> to tensor<256xf32>
    %d = arith.divf %x, %x : tensor<256xf32>
    %m = arith.maxnumf %d, %x : tensor<256xf32>
    %ptrs = tessel.splat %p : tensor<256x!tessel.ptr<f32>>
    %q = tessel.addptr %ptrs, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    tessel.store %q, %m : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    %xh = arith.sitofp %r : tensor<256xi32> to tensor<256xf16>
    %yh = arith.addf %xh, %xh : tensor<256xf16>
    %hptrs = tessel.splat %h : tensor<256x!tessel.ptr<f16>>
    %hq = tessel.addptr %hptrs, %r : tensor<256x!tessel.ptr<f16>>, tensor<256xi32>
    tessel.store %hq, %yh : (tensor<256x!tessel.ptr<f16>>, tensor<256xf16>) -> ()
    return
  }
}

// -----

// Column sums of an [8, 128] tile on one wave: a thread holds 8 rows of 2
// columns, two lines of 8 values. The two lines' trees go together, each add
// of one with the same add of the other: 4 packed adds, then 2 and 1, each
// level on the pairs the level before made (no insertelement), and no
// scalar add (the lines are along the thread's registers, not lanes).
// CHECK-LABEL: llvm.func @column_sums(
// CHECK-NOT: llvm.fadd
// CHECK-COUNT-4: llvm.fadd %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: %[[A:.*]] = llvm.fadd %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: %[[B:.*]] = llvm.fadd %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: llvm.fadd %[[A]], %[[B]] : vector<2xf32>
// CHECK-NOT: llvm.fadd
// CHECK: llvm.return
module attributes {tessel.target = "gfx942", tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @column_sums(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
    %x = arith.sitofp %r : tensor<1024xi32> to tensor<1024xf32>
    %t = tessel.reshape %x : tensor<1024xf32> -> tensor<8x128xf32>
    %s = tessel.reduce %t {axis = 0 : i32} : (tensor<8x128xf32>) -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tessel.yield %c : f32
    }
    %c128 = tessel.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
    %ptrs = tessel.splat %p : tensor<128x!tessel.ptr<f32>>
    %q = tessel.addptr %ptrs, %c128 : tensor<128x!tessel.ptr<f32>>, tensor<128xi32>
    tessel.store %q, %s : (tensor<128x!tessel.ptr<f32>>, tensor<128xf32>) -> ()
    return
  }
}

// -----

// A where between packed ops: the compare and the select take the pairs the
// packed ops made (fcmp and select on vector<2xf32>, which the backend
// splits into the same v_cmp and v_cndmask), so no element is extracted and
// inserted again between the multiply, the select and the add. A compare of
// registers that are no pair (a conversion's) stays scalar.
// CHECK-LABEL: llvm.func @where_on_pairs(
// CHECK-COUNT-4: llvm.fcmp "olt" %{{.*}}, %{{.*}} : f32
// CHECK: %[[M0:.*]] = llvm.fmul %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: %[[M1:.*]] = llvm.fmul %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: %[[C0:.*]] = llvm.fcmp "ogt" %[[M0]], %{{.*}} : vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: %[[C1:.*]] = llvm.fcmp "ogt" %[[M1]], %{{.*}} : vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: %[[Q0:.*]] = llvm.fmul %[[M0]], %{{.*}} : vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: %[[Q1:.*]] = llvm.fmul %[[M1]], %{{.*}} : vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: %[[S0:.*]] = llvm.select %[[C0]], %[[M0]], %[[Q0]] : vector<2xi1>, vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: %[[S1:.*]] = llvm.select %[[C1]], %[[M1]], %[[Q1]] : vector<2xi1>, vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: llvm.fadd %[[S0]], %[[M0]] : vector<2xf32>
// CHECK-NOT: llvm.insertelement
// CHECK: llvm.fadd %[[S1]], %[[M1]] : vector<2xf32>
// CHECK-NOT: llvm.fcmp "ogt" {{.*}} : f32
// CHECK-NOT: llvm.select {{.*}} : i1, f32
// CHECK: llvm.return
module attributes {tessel.target = "gfx942", tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.lds_limit = 65536 : i64} {
  func.func @where_on_pairs(%p: !tessel.ptr<f32>, %q: !tessel.ptr<i1>) {
    %r = tessel.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
    %x = arith.sitofp %r : tensor<256xi32> to tensor<256xf32>
    %half = arith.constant dense<5.000000e-01> : tensor<256xf32>
    %quarter = arith.constant dense<2.500000e-01> : tensor<256xf32>
    %neg = arith.cmpf olt, %x, %half : tensor<256xf32>
    %m = arith.mulf %x, %x : tensor<256xf32>
    %c = arith.cmpf ogt, %m, %half : tensor<256xf32>
    %mq = arith.mulf %m, %quarter : tensor<256xf32>
    %w = arith.select %c, %m, %mq : tensor<256xi1>, tensor<256xf32>
    %y = arith.addf %w, %m : tensor<256xf32>
    %ptrs = tessel.splat %p : tensor<256x!tessel.ptr<f32>>
    %at = tessel.addptr %ptrs, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    tessel.store %at, %y : (tensor<256x!tessel.ptr<f32>>, tensor<256xf32>) -> ()
    %qs = tessel.splat %q : tensor<256x!tessel.ptr<i1>>
    %qat = tessel.addptr %qs, %r : tensor<256x!tessel.ptr<i1>>, tensor<256xi32>
    tessel.store %qat, %neg : (tensor<256x!tessel.ptr<i1>>, tensor<256xi1>) -> ()
    return
  }
}
