// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --cse --tessel-hoist-conversions --tessel-plan-lds | FileCheck %s

// The two dots of attention's loop on gfx942, 4 waves: S = Q K^T, then
// P = exp2(S - rowmax(S)) (as f16) times V, accumulated. What moves data, and where:
// - Q, made before the loop, is converted to its operand layout once, before it;
// - K's transpose takes K's layout, permuted (no data moves); one conversion
//   (through LDS) gives the first dot its B operand;
// - both dots are a chain: their waves all run along M, and their accumulators
//   are transposed, so a thread holds runs of a row: the row max is mostly
//   in-thread, its slice is the same for both dots, and P (cast to f16) is
//   the second dot's A operand in registers (a renaming, no LDS);
// - V's conversion to the B operand is the loop's second trip through LDS.
// (The pointer tiles are arguments, of unknown contiguity: the loads take
// one element per thread.) What goes through LDS carries tessel.lds_offset.
// CHECK-DAG: #[[BLOCKED:.*]] = #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [1, 64], wavesPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[TRANSPOSED:.*]] = #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [64, 1], wavesPerBlock = [1, 4], order = [0, 1]>
// CHECK-DAG: #[[ACC:.*]] = #tessel.mfma<instrShape = [32, 32], wavesPerBlock = [4, 1], transposed = true>
// CHECK-DAG: #[[A:.*]] = #tessel.dot_operand<opIdx = 0, parent = #[[ACC]], kWidth = 4>
// CHECK-DAG: #[[B:.*]] = #tessel.dot_operand<opIdx = 1, parent = #[[ACC]], kWidth = 4>
// CHECK-DAG: #[[ROW:.*]] = #tessel.slice<dim = 1, parent = #[[ACC]]>
// CHECK-LABEL: func.func @attention_loop(
// CHECK: %[[QA:.*]] = tessel.convert_layout %{{.*}} {tessel.lds_offset = {{.*}}} : tensor<128x64xf16, #{{.*}}> -> tensor<128x64xf16, #[[A]]>
// CHECK: scf.for
// CHECK: %[[K:.*]] = tessel.load {{.*}} -> tensor<64x64xf16, #[[BLOCKED]]>
// CHECK: %[[KT:.*]] = tessel.permute %[[K]] {order = array<i32: 1, 0>} : {{.*}} -> tensor<64x64xf16, #[[TRANSPOSED]]>
// CHECK: %[[KB:.*]] = tessel.convert_layout %[[KT]] {tessel.lds_offset = {{.*}}} : tensor<64x64xf16, #[[TRANSPOSED]]> -> tensor<64x64xf16, #[[B]]>
// CHECK: tessel.dot %[[QA]], %[[KB]], {{.*}} -> tensor<128x64xf32, #[[ACC]]>
// CHECK: tessel.reduce {{.*}} -> tensor<128xf32, #[[ROW]]>
// CHECK: %[[P:.*]] = arith.truncf {{.*}} : tensor<128x64xf32, #[[ACC]]> to tensor<128x64xf16, #[[ACC]]>
// CHECK: %[[V:.*]] = tessel.load {{.*}} -> tensor<64x64xf16, #[[VL:.*]]>
// CHECK: %[[PA:.*]] = tessel.convert_layout %[[P]] : tensor<128x64xf16, #[[ACC]]> -> tensor<128x64xf16, #[[A]]>
// CHECK: %[[VB:.*]] = tessel.convert_layout %[[V]] {tessel.lds_offset = {{.*}}} : tensor<64x64xf16, #[[VL]]> -> tensor<64x64xf16, #[[B]]>
// CHECK: tessel.dot %[[PA]], %[[VB]], {{.*}} -> tensor<128x64xf32, #[[ACC]]>
// CHECK-NOT: tessel.convert_layout
// CHECK: scf.yield
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.lds_limit = 65536 : i64} {
  func.func @attention_loop(%qp: tensor<128x64x!tessel.ptr<f16>>, %kp: tensor<64x64x!tessel.ptr<f16>>,
                            %vp: tensor<64x64x!tessel.ptr<f16>>, %op: tensor<128x64x!tessel.ptr<f32>>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %q = tessel.load %qp : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
    %out = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
      %k = tessel.load %kp : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
      %kt = tessel.permute %k {order = array<i32: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
      %s = tessel.dot %q, %kt, %zero : tensor<128x64xf16> * tensor<64x64xf16> -> tensor<128x64xf32>
      %m = tessel.reduce %s {axis = 1 : i32} : (tensor<128x64xf32>) -> tensor<128xf32> {
      ^bb0(%a: f32, %b: f32):
        %c = arith.maxnumf %a, %b : f32
        tessel.yield %c : f32
      }
      %me = tessel.expand_dims %m {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
      %mb = tessel.broadcast %me : tensor<128x1xf32> -> tensor<128x64xf32>
      %d = arith.subf %s, %mb : tensor<128x64xf32>
      %e = math.exp2 %d : tensor<128x64xf32>
      %p = arith.truncf %e : tensor<128x64xf32> to tensor<128x64xf16>
      %v = tessel.load %vp : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
      %next = tessel.dot %p, %v, %acc : tensor<128x64xf16> * tensor<64x64xf16> -> tensor<128x64xf32>
      scf.yield %next : tensor<128x64xf32>
    }
    tessel.store %op, %out : (tensor<128x64x!tessel.ptr<f32>>, tensor<128x64xf32>) -> ()
    return
  }
}

// -----

// A conversion under an scf.if stays in the loop (the branch might not run),
// though its operand comes from before the loop.
// CHECK-LABEL: func.func @guarded(
// CHECK: %[[Q:.*]] = tessel.load
// CHECK: scf.for
// CHECK: scf.if
// CHECK: tessel.convert_layout %[[Q]] {tessel.lds_offset
// CHECK: tessel.dot
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 64 : i32, tessel.target = "gfx942", tessel.lds_limit = 65536 : i64} {
  func.func @guarded(%qp: tensor<128x64x!tessel.ptr<f16>>, %kp: tensor<64x64x!tessel.ptr<f16>>,
                     %op: tensor<128x64x!tessel.ptr<f32>>, %n: i32, %c: i1) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %q = tessel.load %qp : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
    %out = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
      %k = tessel.load %kp : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
      %next = scf.if %c -> (tensor<128x64xf32>) {
        %d = tessel.dot %q, %k, %acc : tensor<128x64xf16> * tensor<64x64xf16> -> tensor<128x64xf32>
        scf.yield %d : tensor<128x64xf32>
      } else {
        scf.yield %acc : tensor<128x64xf32>
      }
      scf.yield %next : tensor<128x64xf32>
    }
    tessel.store %op, %out : (tensor<128x64x!tessel.ptr<f32>>, tensor<128x64xf32>) -> ()
    return
  }
}

// -----

// The same loop on gfx1100 (wave32, WMMA): P reaches the second dot's A
// (all 16 K of a row in each lane) from the transposed accumulator (half of
// a row's columns in each row of 16 lanes) by an in-wave shuffle: the other
// half is the same lane's of the other row of 16 (v_permlanex16), so the
// conversion takes no LDS.
// CHECK-LABEL: func.func @attention_loop_gfx1100(
// CHECK: scf.for
// CHECK: %[[P:.*]] = arith.truncf {{.*}} to tensor<128x64xf16, #[[WMMA:[a-z_0-9]+]]>
// CHECK: %[[PA:.*]] = tessel.convert_layout %[[P]] : tensor<128x64xf16, #[[WMMA]]> -> tensor<128x64xf16, #[[WA:[a-z_0-9]+]]>
// CHECK: tessel.dot %[[PA]], {{.*}} : tensor<128x64xf16, #[[WA]]> *
module attributes {tessel.num_warps = 4 : i32, tessel.wave_size = 32 : i32, tessel.target = "gfx1100", tessel.lds_limit = 65536 : i64} {
  func.func @attention_loop_gfx1100(%qp: tensor<128x64x!tessel.ptr<f16>>, %kp: tensor<64x64x!tessel.ptr<f16>>,
                            %vp: tensor<64x64x!tessel.ptr<f16>>, %op: tensor<128x64x!tessel.ptr<f32>>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %q = tessel.load %qp : (tensor<128x64x!tessel.ptr<f16>>) -> tensor<128x64xf16>
    %out = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
      %k = tessel.load %kp : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
      %kt = tessel.permute %k {order = array<i32: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
      %s = tessel.dot %q, %kt, %zero : tensor<128x64xf16> * tensor<64x64xf16> -> tensor<128x64xf32>
      %m = tessel.reduce %s {axis = 1 : i32} : (tensor<128x64xf32>) -> tensor<128xf32> {
      ^bb0(%a: f32, %b: f32):
        %c = arith.maxnumf %a, %b : f32
        tessel.yield %c : f32
      }
      %me = tessel.expand_dims %m {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
      %mb = tessel.broadcast %me : tensor<128x1xf32> -> tensor<128x64xf32>
      %d = arith.subf %s, %mb : tensor<128x64xf32>
      %e = math.exp2 %d : tensor<128x64xf32>
      %p = arith.truncf %e : tensor<128x64xf32> to tensor<128x64xf16>
      %v = tessel.load %vp : (tensor<64x64x!tessel.ptr<f16>>) -> tensor<64x64xf16>
      %next = tessel.dot %p, %v, %acc : tensor<128x64xf16> * tensor<64x64xf16> -> tensor<128x64xf32>
      scf.yield %next : tensor<128x64xf32>
    }
    tessel.store %op, %out : (tensor<128x64x!tessel.ptr<f32>>, tensor<128x64xf32>) -> ()
    return
  }
}

