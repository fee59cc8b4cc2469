// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts | FileCheck %s

// A 128x128x64 f16 dot on gfx942 with 4 waves: the 32x32x8 instruction, a
// 2 x 2 wave grid; the loaded operands are converted to the operand layouts
// (kWidth 4 halves per lane); the accumulator, the result and the store
// share the MFMA layout.
// CHECK-DAG: #[[MFMA:.*]] = #tessel.mfma<instrShape = [32, 32], wavesPerBlock = [2, 2], transposed = true>
// CHECK-DAG: #[[A:.*]] = #tessel.dot_operand<opIdx = 0, parent = #[[MFMA]], kWidth = 4>
// CHECK-DAG: #[[B:.*]] = #tessel.dot_operand<opIdx = 1, parent = #[[MFMA]], kWidth = 4>
// B is loaded along N, but each thread also holds a run of kWidth = 4 along
// K (the operand's reads run along K), so its LDS writes are vectors.
// CHECK-DAG: #[[BLOADED:.*]] = #tessel.blocked<sizePerThread = [4, 1], threadsPerWave = [1, 64], wavesPerBlock = [2, 2], order = [1, 0]>
// CHECK-LABEL: func.func @matmul_block(
// CHECK: %[[ACC:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #[[MFMA]]>
// CHECK: %[[CA:.*]] = tessel.convert_layout %{{.*}} : tensor<128x64xf16, #{{.*}}> -> tensor<128x64xf16, #[[A]]>
// CHECK: %[[CB:.*]] = tessel.convert_layout %{{.*}} : tensor<64x128xf16, #[[BLOADED]]> -> tensor<64x128xf16, #[[B]]>
// CHECK: tessel.dot %[[CA]], %[[CB]], %[[ACC]] : tensor<128x64xf16, #[[A]]> * tensor<64x128xf16, #[[B]]> -> tensor<128x128xf32, #[[MFMA]]>
// CHECK: tessel.store {{.*}} : (tensor<128x128x!tessel.ptr<f32>, #[[MFMA]]>, tensor<128x128xf32, #[[MFMA]]>)
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @matmul_block(%a: !tessel.ptr<f16>, %b: !tessel.ptr<f16>, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
    %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
    %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
    %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
    %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
    %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
    %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
    %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
    %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %d = tessel.dot %va, %vb, %zero : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %d : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// A 16-row block takes the 16x16x16 instruction; four waves split N; a
// block as large as the instruction takes it transposed.
// CHECK: #tessel.mfma<instrShape = [16, 16], wavesPerBlock = [1, 4], transposed = true>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @thin(%x: tensor<16x32xf16>, %y: tensor<32x64xf16>, %p: tensor<16x64x!tessel.ptr<f32>>) {
    %zero = arith.constant dense<0.0> : tensor<16x64xf32>
    %d = tessel.dot %x, %y, %zero : tensor<16x32xf16> * tensor<32x64xf16> -> tensor<16x64xf32>
    tessel.store %p, %d : (tensor<16x64x!tessel.ptr<f32>>, tensor<16x64xf32>) -> ()
    return
  }
}

// -----

// gfx1100's WMMA takes no f32: the dot becomes multiply-adds on a blocked
// accumulator; each operand's layout holds all of K for the accumulator's
// rows (A) or columns (B). The 128 threads split 16 x 8 over M x N, so a
// thread holds 2 rows of A and 4 columns of B, (2 + 4) * 32 registers (a
// 32 x 4 split, the old one, needed (1 + 8) * 32; a 4 x 32 one, 8 * 32 for A).
// CHECK-DAG: #[[ACC:.*]] = #tessel.blocked<sizePerThread = [2, 4], threadsPerWave = [4, 8], wavesPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[FA:.*]] = #tessel.dot_operand<opIdx = 0, parent = #[[ACC]], kWidth = 32>
// CHECK-DAG: #[[FB:.*]] = #tessel.dot_operand<opIdx = 1, parent = #[[ACC]], kWidth = 32>
// CHECK-LABEL: func.func @fma(
// CHECK: tessel.dot {{.*}} : tensor<32x32xf32, #[[FA]]> * tensor<32x32xf32, #[[FB]]> -> tensor<32x32xf32, #[[ACC]]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100"} {
  func.func @fma(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>, %p: tensor<32x32x!tessel.ptr<f32>>) {
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %d = tessel.dot %x, %y, %zero : tensor<32x32xf32> * tensor<32x32xf32> -> tensor<32x32xf32>
    tessel.store %p, %d : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    return
  }
}

// -----

// A scan beside a dot (found by the random programs, gfx1100): the scanned
// tile and the dot's result meet in one elementwise op, so their group has
// the dot's layout, which does not give each thread one chunk along the
// scan's axis: the scan gets conversions of its own.
// CHECK-LABEL: func.func @scan_beside_dot(
// CHECK: %[[D:.*]] = tessel.dot
// CHECK: %[[IN:.*]] = tessel.convert_layout %{{.*}} : tensor<32x32xf32, #{{.*}}> -> tensor<32x32xf32, #[[SCANNED:.*]]>
// CHECK: %[[S:.*]] = tessel.scan %[[IN]] {axis = 0 : i32} {{.*}} -> tensor<32x32xf32, #[[SCANNED]]>
// CHECK: %[[OUT:.*]] = tessel.convert_layout %[[S]]
// CHECK: arith.maximumf %[[OUT]], %[[D]]
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100"} {
  func.func @scan_beside_dot(%x: tensor<32x32xf32>, %p: tensor<32x32x!tessel.ptr<f32>>) {
    %zero = arith.constant dense<0.0> : tensor<32x32xf32>
    %d = tessel.dot %x, %x, %zero : tensor<32x32xf32> * tensor<32x32xf32> -> tensor<32x32xf32>
    %s = tessel.scan %x {axis = 0 : i32} : (tensor<32x32xf32>) -> tensor<32x32xf32> {
    ^bb0(%l: f32, %r: f32):
      %t = arith.addf %l, %r : f32
      tessel.yield %t : f32
    }
    %m = arith.maximumf %s, %d : tensor<32x32xf32>
    tessel.store %p, %m : (tensor<32x32x!tessel.ptr<f32>>, tensor<32x32xf32>) -> ()
    return
  }
}

// -----

// Two dots whose accumulators meet in different layouts (found by the random
// programs, gfx1100): an f32 dot (multiply-adds, a blocked accumulator)
// starts the loop-carried accumulator of an f16 dot (WMMA). The dot outside
// the loop gets conversions of its own; the loop's accumulator keeps the
// WMMA layout (no conversion inside the loop).
// CHECK-LABEL: func.func @accumulators_meet(
// CHECK: %[[D1:.*]] = tessel.dot {{.*}} -> tensor<16x16xf32, #blocked
// CHECK: %[[INIT:.*]] = tessel.convert_layout %[[D1]] : {{.*}} -> tensor<16x16xf32, #[[WMMA:wmma.*]]>
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<16x16xf32, #[[WMMA]]>)
// CHECK-NOT: tessel.convert_layout %[[ACC]]
// CHECK: tessel.dot %{{.*}}, %{{.*}}, %[[ACC]] : {{.*}} -> tensor<16x16xf32, #[[WMMA]]>
// CHECK: scf.yield
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100"} {
  func.func @accumulators_meet(%a: tensor<16x16xf32>, %x: tensor<16x16xf16>,
                               %p: tensor<16x16x!tessel.ptr<f32>>, %n: i32) {
    %zero = arith.constant dense<0.0> : tensor<16x16xf32>
    %d = tessel.dot %a, %a, %zero : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %d) -> (tensor<16x16xf32>) : i32 {
      %e = tessel.dot %x, %x, %acc : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
      scf.yield %e : tensor<16x16xf32>
    }
    tessel.store %p, %r : (tensor<16x16x!tessel.ptr<f32>>, tensor<16x16xf32>) -> ()
    return
  }
}

// -----

// Blocks below every instruction's tile take the instruction that pads them
// least (gfx942, f16): 2x2x16 and 8x64x32 the 16x16x16 one (waves split N
// while it has tiles, then repeat), which 32x32x8 would pad fourfold.
// CHECK-DAG: #[[TINY:.*]] = #tessel.mfma<instrShape = [16, 16], wavesPerBlock = [4, 1]>
// CHECK-DAG: #[[WIDE:.*]] = #tessel.mfma<instrShape = [16, 16], wavesPerBlock = [1, 4]>
// CHECK-LABEL: func.func @padded(
// CHECK: tessel.dot {{.*}} -> tensor<2x2xf32, #[[TINY]]>
// CHECK: tessel.dot {{.*}} -> tensor<8x64xf32, #[[WIDE]]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @padded(%x: tensor<2x16xf16>, %y: tensor<16x2xf16>, %p: tensor<2x2x!tessel.ptr<f32>>,
                    %u: tensor<8x32xf16>, %v: tensor<32x64xf16>, %q: tensor<8x64x!tessel.ptr<f32>>) {
    %zero = arith.constant dense<0.0> : tensor<2x2xf32>
    %d = tessel.dot %x, %y, %zero : tensor<2x16xf16> * tensor<16x2xf16> -> tensor<2x2xf32>
    tessel.store %p, %d : (tensor<2x2x!tessel.ptr<f32>>, tensor<2x2xf32>) -> ()
    %zero2 = arith.constant dense<0.0> : tensor<8x64xf32>
    %e = tessel.dot %u, %v, %zero2 : tensor<8x32xf16> * tensor<32x64xf16> -> tensor<8x64xf32>
    tessel.store %q, %e : (tensor<8x64x!tessel.ptr<f32>>, tensor<8x64xf32>) -> ()
    return
  }
}

// -----

// One row per batch on gfx1100 pads WMMA; K = 8, which no instruction of the
// table divides, takes multiply-adds.
// CHECK-DAG: #[[W:.*]] = #tessel.wmma<wavesPerBlock = [1, 1]>
// CHECK-LABEL: func.func @row_and_shallow(
// CHECK: tessel.dot {{.*}} -> tensor<4x1x16xf32, #[[W]]>
// CHECK: tessel.dot {{.*}} -> tensor<16x16xf32, #blocked
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100"} {
  func.func @row_and_shallow(%x: tensor<4x1x32xf16>, %y: tensor<4x32x16xf16>, %p: tensor<4x1x16x!tessel.ptr<f32>>,
                             %u: tensor<16x8xf16>, %v: tensor<8x16xf16>, %q: tensor<16x16x!tessel.ptr<f32>>) {
    %zero = arith.constant dense<0.0> : tensor<4x1x16xf32>
    %d = tessel.dot %x, %y, %zero : tensor<4x1x32xf16> * tensor<4x32x16xf16> -> tensor<4x1x16xf32>
    tessel.store %p, %d : (tensor<4x1x16x!tessel.ptr<f32>>, tensor<4x1x16xf32>) -> ()
    %zero2 = arith.constant dense<0.0> : tensor<16x16xf32>
    %e = tessel.dot %u, %v, %zero2 : tensor<16x8xf16> * tensor<8x16xf16> -> tensor<16x16xf32>
    tessel.store %q, %e : (tensor<16x16x!tessel.ptr<f32>>, tensor<16x16xf32>) -> ()
    return
  }
}

// -----

// An fp8 B loaded along N (a byte a thread here: no known contiguity) at 4
// waves. On gfx942 each thread also holds a run along K (its LDS writes along
// K are vectors); gfx950 keeps an 8-bit B along N in LDS and reads it
// transposed, so no run: a wave's lanes fill whole rows, which its loads
// straight into LDS need (planDirectLds; the fp8 matmuls' B at 4 waves).
// CHECK: #[[KPAIRS:.*]] = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [1, 64], wavesPerBlock = [2, 2], order = [1, 0]>
// CHECK-LABEL: func.func @fp8_b_gfx942(
// CHECK: tessel.convert_layout %{{.*}} : tensor<64x128xf8E4M3FNUZ, #[[KPAIRS]]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942"} {
  func.func @fp8_b_gfx942(%a: !tessel.ptr<f8E4M3FNUZ> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f8E4M3FNUZ> {tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
    %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
    %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f8E4M3FNUZ>>
    %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f8E4M3FNUZ>>, tensor<128x64xi32>
    %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f8E4M3FNUZ>>) -> tensor<128x64xf8E4M3FNUZ>
    %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
    %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f8E4M3FNUZ>>
    %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f8E4M3FNUZ>>, tensor<64x128xi32>
    %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f8E4M3FNUZ>>) -> tensor<64x128xf8E4M3FNUZ>
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %d = tessel.dot %va, %vb, %zero : tensor<128x64xf8E4M3FNUZ> * tensor<64x128xf8E4M3FNUZ> -> tensor<128x128xf32>
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %d : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// CHECK: #[[ROWS:.*]] = #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [1, 64], wavesPerBlock = [2, 2], order = [1, 0]>
// CHECK-LABEL: func.func @fp8_b_gfx950(
// CHECK: tessel.convert_layout %{{.*}} : tensor<64x128xf8E4M3FN, #[[ROWS]]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950"} {
  func.func @fp8_b_gfx950(%a: !tessel.ptr<f8E4M3FN> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f8E4M3FN> {tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>) {
    %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
    %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
    %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f8E4M3FN>>
    %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f8E4M3FN>>, tensor<128x64xi32>
    %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f8E4M3FN>>) -> tensor<128x64xf8E4M3FN>
    %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
    %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f8E4M3FN>>
    %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f8E4M3FN>>, tensor<64x128xi32>
    %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f8E4M3FN>>) -> tensor<64x128xf8E4M3FN>
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %d = tessel.dot %va, %vb, %zero : tensor<128x64xf8E4M3FN> * tensor<64x128xf8E4M3FN> -> tensor<128x128xf32>
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %d : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// A 16-bit B in a pipelined loop on gfx950 keeps its run along K (its
// register-staged LDS writes are vectors) unless the loop's loads will
// likely go straight into LDS (loadsLikelyToLds), where the run would keep
// a wave's lanes from filling whole rows (planDirectLds). 128x128x64 f16 at
// 8 waves: the two slots of A and B (64 KiB) keep 4 waves a SIMD, so no run
// (the library's 8-wave f16/bf16 matmul, 142.7 -> 131.1 llvm-mca cycles).
// CHECK: #[[FLAT:.*]] = #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [1, 64], wavesPerBlock = [4, 2], order = [1, 0]>
// CHECK-LABEL: func.func @f16_b_w8(
// CHECK: tessel.convert_layout %{{.*}} : tensor<64x128xf16, #[[FLAT]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @f16_b_w8(%a: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
      %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
      %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
      %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
      %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
      %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
      %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
      %d = tessel.dot %va, %vb, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %acc : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// At 4 waves the slots allow 2 waves a SIMD: through registers, with the run.
// CHECK: #[[PAIRS4:.*]] = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [1, 64], wavesPerBlock = [2, 2], order = [1, 0]>
// CHECK-LABEL: func.func @f16_b_w4(
// CHECK: tessel.convert_layout %{{.*}} : tensor<64x128xf16, #[[PAIRS4]]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @f16_b_w4(%a: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
      %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
      %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
      %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
      %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
      %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
      %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
      %d = tessel.dot %va, %vb, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %acc : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// Asked for loads to LDS (TESSEL_DIRECT_TO_LDS=1), 4 waves drop the run too.
// CHECK: #[[FORCED:.*]] = #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [1, 64], wavesPerBlock = [2, 2], order = [1, 0]>
// CHECK-LABEL: func.func @f16_b_w4_asked(
// CHECK: tessel.convert_layout %{{.*}} : tensor<64x128xf16, #[[FORCED]]>
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32, tessel.direct_to_lds} {
  func.func @f16_b_w4_asked(%a: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
      %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
      %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
      %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
      %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
      %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
      %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
      %d = tessel.dot %va, %vb, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %acc : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// Asked not to (TESSEL_DIRECT_TO_LDS=0), or not pipelined (1 stage): 8 waves keep it.
// CHECK: #[[ASKEDNOT:.*]] = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [1, 64], wavesPerBlock = [4, 2], order = [1, 0]>
// CHECK-LABEL: func.func @f16_b_w8_asked_not(
// CHECK: tessel.convert_layout %{{.*}} : tensor<64x128xf16, #[[ASKEDNOT]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32, tessel.no_direct_to_lds} {
  func.func @f16_b_w8_asked_not(%a: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
      %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
      %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
      %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
      %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
      %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
      %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
      %d = tessel.dot %va, %vb, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %acc : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// CHECK: #[[ONESTAGE:.*]] = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [1, 64], wavesPerBlock = [4, 2], order = [1, 0]>
// CHECK-LABEL: func.func @f16_b_w8_one_stage(
// CHECK: tessel.convert_layout %{{.*}} : tensor<64x128xf16, #[[ONESTAGE]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 1 : i32} {
  func.func @f16_b_w8_one_stage(%a: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
      %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
      %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
      %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
      %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
      %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
      %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
      %d = tessel.dot %va, %vb, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %acc : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// A 128x128 block at 8 waves has as many instruction tiles along M as
// along N. gfx950 (LDS reads transpose) gives the tie to N, as Triton's AMD
// backend does: waves [2, 4], each reading more of A and less of B.
// CHECK: #[[W950:.*]] = #tessel.mfma<instrShape = [32, 32], wavesPerBlock = [2, 4], transposed = true>
// CHECK-LABEL: func.func @waves_gfx950(
// CHECK: tessel.dot {{.*}} -> tensor<128x128xf32, #[[W950]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 2 : i32} {
  func.func @waves_gfx950(%a: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
      %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
      %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
      %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
      %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
      %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
      %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
      %d = tessel.dot %va, %vb, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %acc : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// gfx942 gives it to M (there the tie to N made the 8-wave f16 matmuls slower).
// CHECK: #[[W942:.*]] = #tessel.mfma<instrShape = [32, 32], wavesPerBlock = [4, 2], transposed = true>
// CHECK-LABEL: func.func @waves_gfx942(
// CHECK: tessel.dot {{.*}} -> tensor<128x128xf32, #[[W942]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.num_stages = 2 : i32} {
  func.func @waves_gfx942(%a: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
      %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
      %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
      %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
      %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
      %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
      %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
      %d = tessel.dot %va, %vb, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %acc : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// At 3 stages the pipeliner stages through registers (loads to LDS only at
// distance 1): B keeps its run.
// CHECK: #[[THREESTAGES:.*]] = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [1, 64], wavesPerBlock = [4, 2], order = [1, 0]>
// CHECK-LABEL: func.func @f16_b_w8_three_stages(
// CHECK: tessel.convert_layout %{{.*}} : tensor<64x128xf16, #[[THREESTAGES]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950", tessel.num_stages = 3 : i32} {
  func.func @f16_b_w8_three_stages(%a: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %c: !tessel.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ra = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
      %ia = tessel.reshape %ra : tensor<8192xi32> -> tensor<128x64xi32>
      %pa = tessel.splat %a : tensor<128x64x!tessel.ptr<f16>>
      %qa = tessel.addptr %pa, %ia : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
      %va = tessel.load %qa : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
      %ib = tessel.reshape %ra : tensor<8192xi32> -> tensor<64x128xi32>
      %pb = tessel.splat %b : tensor<64x128x!tessel.ptr<f16>>
      %qb = tessel.addptr %pb, %ib : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
      %vb = tessel.load %qb : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
      %d = tessel.dot %va, %vb, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %rc = tessel.make_range {start = 0 : i32, end = 16384 : i32} : tensor<16384xi32>
    %ic = tessel.reshape %rc : tensor<16384xi32> -> tensor<128x128xi32>
    %pc = tessel.splat %c : tensor<128x128x!tessel.ptr<f32>>
    %qc = tessel.addptr %pc, %ic : tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xi32>
    tessel.store %qc, %acc : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}

// -----

// A chain of dots (attention's two) keeps gfx950's tie on M: both split
// [4, 2], as on gfx942 (the split attention was measured with).
// CHECK: #[[CHAIN:.*]] = #tessel.mfma<instrShape = [32, 32], wavesPerBlock = [4, 2], transposed = true>
// CHECK-NOT: wavesPerBlock = [2, 4]
// CHECK-LABEL: func.func @chain_gfx950(
// CHECK: tessel.dot {{.*}} -> tensor<128x128xf32, #[[CHAIN]]>
// CHECK: tessel.dot {{.*}} -> tensor<128x64xf32, #[[CHAIN]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950"} {
  func.func @chain_gfx950(%q: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %k: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %v: !tessel.ptr<f16> {tessel.divisibility = 16 : i32}, %o: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 8192 : i32} : tensor<8192xi32>
    %iq = tessel.reshape %r : tensor<8192xi32> -> tensor<128x64xi32>
    %pq = tessel.splat %q : tensor<128x64x!tessel.ptr<f16>>
    %aq = tessel.addptr %pq, %iq : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
    %tq = tessel.load %aq : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
    %ik = tessel.reshape %r : tensor<8192xi32> -> tensor<64x128xi32>
    %pk = tessel.splat %k : tensor<64x128x!tessel.ptr<f16>>
    %ak = tessel.addptr %pk, %ik : tensor<64x128x!tessel.ptr<f16>>, tensor<64x128xi32>
    %tk = tessel.load %ak : (tensor<64x128x!tessel.ptr<f16>>) -> tensor<64x128xf16>
    %z1 = arith.constant dense<0.0> : tensor<128x128xf32>
    %s = tessel.dot %tq, %tk, %z1 : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    %p = arith.truncf %s : tensor<128x128xf32> to tensor<128x128xf16>
    %pv = tessel.splat %v : tensor<128x64x!tessel.ptr<f16>>
    %iv = tessel.reshape %r : tensor<8192xi32> -> tensor<128x64xi32>
    %av = tessel.addptr %pv, %iv : tensor<128x64x!tessel.ptr<f16>>, tensor<128x64xi32>
    %tv = tessel.load %av : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
    %z2 = arith.constant dense<0.0> : tensor<128x64xf32>
    %out = tessel.dot %p, %tv, %z2 : tensor<128x128xf16> * tensor<128x64xf16> -> tensor<128x64xf32>
    %po = tessel.splat %o : tensor<128x64x!tessel.ptr<f32>>
    %ao = tessel.addptr %po, %iv : tensor<128x64x!tessel.ptr<f32>>, tensor<128x64xi32>
    tessel.store %ao, %out : (tensor<128x64x!tessel.ptr<f32>>, tensor<128x64xf32>) -> ()
    return
  }
}

// -----

// gfx1100 (WMMA) at 8 waves with attention's d64 blocks there: Q [64, 64],
// K^T [64, 32], V [32, 64]. The head (64x32) splits [4, 2] on either
// tie-break. The tail P V (64x64: 4 tiles each way) gives its tie to N,
// [2, 4]: each wave reads one 16-column tile of V (B) instead of two, and
// two 16-row tiles of P (A), which comes from the head's waves through LDS
// on either split.
// CHECK-DAG: #[[HEAD:.*]] = #tessel.wmma<wavesPerBlock = [4, 2], transposed = true>
// CHECK-DAG: #[[TAIL:.*]] = #tessel.wmma<wavesPerBlock = [2, 4], transposed = true>
// CHECK-LABEL: func.func @chain_gfx1100(
// CHECK: tessel.dot {{.*}} -> tensor<64x32xf32, #[[HEAD]]>
// CHECK: tessel.dot {{.*}} -> tensor<64x64xf32, #[[TAIL]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100"} {
  func.func @chain_gfx1100(%q: !tessel.ptr<f16>, %k: !tessel.ptr<f16>, %v: !tessel.ptr<f16>, %o: !tessel.ptr<f32>) {
    %pq = tessel.splat %q : tensor<64x64x!tessel.ptr<f16>>
    %tq = tessel.load %pq : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
    %pk = tessel.splat %k : tensor<64x32x!tessel.ptr<f16>>
    %tk = tessel.load %pk : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
    %z1 = arith.constant dense<0.0> : tensor<64x32xf32>
    %s = tessel.dot %tq, %tk, %z1 : tensor<64x64xf16> * tensor<64x32xf16> -> tensor<64x32xf32>
    %p = arith.truncf %s : tensor<64x32xf32> to tensor<64x32xf16>
    %pv = tessel.splat %v : tensor<32x64x!tessel.ptr<f16>>
    %tv = tessel.load %pv : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
    %z2 = arith.constant dense<0.0> : tensor<64x64xf32>
    %out = tessel.dot %p, %tv, %z2 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %po = tessel.splat %o : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %po, %out : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// A chain of three on gfx1100: the middle dot is a head too and keeps its
// tie on M, [4, 2], as the first does; only the last, a tail alone, gives
// it to N, [2, 4].
// CHECK-DAG: #[[M3:.*]] = #tessel.wmma<wavesPerBlock = [4, 2], transposed = true>
// CHECK-DAG: #[[N3:.*]] = #tessel.wmma<wavesPerBlock = [2, 4], transposed = true>
// CHECK-LABEL: func.func @chain3_gfx1100(
// CHECK: tessel.dot {{.*}} -> tensor<64x32xf32, #[[M3]]>
// CHECK: tessel.dot {{.*}} -> tensor<64x64xf32, #[[M3]]>
// CHECK: tessel.dot {{.*}} -> tensor<64x64xf32, #[[N3]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100"} {
  func.func @chain3_gfx1100(%q: !tessel.ptr<f16>, %k: !tessel.ptr<f16>, %v: !tessel.ptr<f16>, %o: !tessel.ptr<f32>) {
    %pq = tessel.splat %q : tensor<64x64x!tessel.ptr<f16>>
    %tq = tessel.load %pq : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
    %pk = tessel.splat %k : tensor<64x32x!tessel.ptr<f16>>
    %tk = tessel.load %pk : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
    %z1 = arith.constant dense<0.0> : tensor<64x32xf32>
    %s = tessel.dot %tq, %tk, %z1 : tensor<64x64xf16> * tensor<64x32xf16> -> tensor<64x32xf32>
    %p = arith.truncf %s : tensor<64x32xf32> to tensor<64x32xf16>
    %pv = tessel.splat %v : tensor<32x64x!tessel.ptr<f16>>
    %tv = tessel.load %pv : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
    %z2 = arith.constant dense<0.0> : tensor<64x64xf32>
    %mid = tessel.dot %p, %tv, %z2 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %pm = arith.truncf %mid : tensor<64x64xf32> to tensor<64x64xf16>
    %out = tessel.dot %pm, %tq, %z2 : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %po = tessel.splat %o : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %po, %out : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// The same second dot with its A loaded (no chain) keeps gfx1100's tie on
// M, as its matmuls do: [4, 2] (the tie to N cost the 8-wave matmuls 2
// waves a SIMD).
// CHECK: #[[LONE:.*]] = #tessel.wmma<wavesPerBlock = [4, 2], transposed = true>
// CHECK-NOT: wavesPerBlock = [2, 4]
// CHECK-LABEL: func.func @unchained_gfx1100(
// CHECK: tessel.dot {{.*}} -> tensor<64x64xf32, #[[LONE]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100"} {
  func.func @unchained_gfx1100(%q: !tessel.ptr<f16>, %k: !tessel.ptr<f16>, %v: !tessel.ptr<f16>, %o: !tessel.ptr<f32>) {
    %pq = tessel.splat %q : tensor<64x64x!tessel.ptr<f16>>
    %tq = tessel.load %pq : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
    %pk = tessel.splat %k : tensor<64x32x!tessel.ptr<f16>>
    %tk = tessel.load %pk : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
    %z1 = arith.constant dense<0.0> : tensor<64x32xf32>
    %s = tessel.dot %tq, %tk, %z1 : tensor<64x64xf16> * tensor<64x32xf16> -> tensor<64x32xf32>
    %p = arith.truncf %s : tensor<64x32xf32> to tensor<64x32xf16>
    %pv = tessel.splat %v : tensor<32x64x!tessel.ptr<f16>>
    %tv = tessel.load %pv : (tensor<32x64x!tessel.ptr<f16>>) -> tensor<32x64xf16>
    %z2 = arith.constant dense<0.0> : tensor<64x64xf32>
    %plp = tessel.splat %k : tensor<64x32x!tessel.ptr<f16>>
    %lp = tessel.load %plp : (tensor<64x32x!tessel.ptr<f16>>) -> tensor<64x32xf16>
    %out = tessel.dot %lp, %tv, %z2 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %po = tessel.splat %o : tensor<64x64x!tessel.ptr<f32>>
    tessel.store %po, %out : (tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xf32>) -> ()
    return
  }
}

// -----

// On MFMA the tail keeps the tie on M (gfx950 at 8 waves, attention's d128
// blocks: Q [128, 128], K^T [128, 32], V [32, 128]): the head splits
// [8, 1] (one 32-row tile each, copies past 4 waves) and the tail [4, 2]
// takes P's rows as the head's waves hold them, by renaming registers; [2, 4]
// sent P through LDS (llvm-mca 276.0 -> 334.9 cycles a key block).
// CHECK-DAG: #[[HEAD950:.*]] = #tessel.mfma<instrShape = [32, 32], wavesPerBlock = [8, 1], transposed = true>
// CHECK-DAG: #[[TAIL950:.*]] = #tessel.mfma<instrShape = [32, 32], wavesPerBlock = [4, 2], transposed = true>
// CHECK-LABEL: func.func @chain_tail_gfx950(
// CHECK: tessel.dot {{.*}} -> tensor<128x32xf32, #[[HEAD950]]>
// CHECK: tessel.dot {{.*}} -> tensor<128x128xf32, #[[TAIL950]]>
module attributes {tessel.num_warps = 8 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx950"} {
  func.func @chain_tail_gfx950(%q: !tessel.ptr<f16>, %k: !tessel.ptr<f16>, %v: !tessel.ptr<f16>, %o: !tessel.ptr<f32>) {
    %pq = tessel.splat %q : tensor<128x128x!tessel.ptr<f16>>
    %tq = tessel.load %pq : (tensor<128x128x!tessel.ptr<f16>>) -> tensor<128x128xf16>
    %pk = tessel.splat %k : tensor<128x32x!tessel.ptr<f16>>
    %tk = tessel.load %pk : (tensor<128x32x!tessel.ptr<f16>>) -> tensor<128x32xf16>
    %z1 = arith.constant dense<0.0> : tensor<128x32xf32>
    %s = tessel.dot %tq, %tk, %z1 : tensor<128x128xf16> * tensor<128x32xf16> -> tensor<128x32xf32>
    %p = arith.truncf %s : tensor<128x32xf32> to tensor<128x32xf16>
    %pv = tessel.splat %v : tensor<32x128x!tessel.ptr<f16>>
    %tv = tessel.load %pv : (tensor<32x128x!tessel.ptr<f16>>) -> tensor<32x128xf16>
    %z2 = arith.constant dense<0.0> : tensor<128x128xf32>
    %out = tessel.dot %p, %tv, %z2 : tensor<128x32xf16> * tensor<32x128xf16> -> tensor<128x128xf32>
    %po = tessel.splat %o : tensor<128x128x!tessel.ptr<f32>>
    tessel.store %po, %out : (tensor<128x128x!tessel.ptr<f32>>, tensor<128x128xf32>) -> ()
    return
  }
}
