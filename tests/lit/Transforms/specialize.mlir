// RUN: tessel-opt %s --tessel-specialize | FileCheck %s
// RUN: tessel-opt %s --tessel-specialize --canonicalize | FileCheck %s --check-prefix=FOLD

// An argument known to be 1 is replaced by the constant; the signature keeps
// it so the kernarg layout does not depend on the specialization.
// CHECK-LABEL: func.func @stride_one
// CHECK-SAME: %[[S:[a-z0-9]+]]: i32 {tessel.equal_to_one}
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: arith.muli %{{.*}}, %[[ONE]]
// CHECK-NOT: arith.muli %{{.*}}, %[[S]]
func.func @stride_one(%p: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %s: i32 {tessel.equal_to_one}) {
  %pid = tessel.program_id 0 : i32
  %o = arith.muli %pid, %s : i32
  %q = tessel.addptr %p, %o : !tessel.ptr<f32>, i32
  return
}

// assume(n % 48 == 0) on an argument: 16 (the power of two in 48) divides n,
// recorded on the argument for the axis analysis; a larger fact stays.
// CHECK-LABEL: func.func @assumed_multiple
// CHECK-SAME: %{{[a-z0-9]+}}: i32 {tessel.divisibility = 16 : i32}
// CHECK-SAME: %{{[a-z0-9]+}}: i32 {tessel.divisibility = 32 : i32}
// CHECK-SAME: %{{[a-z0-9]+}}: i32)
func.func @assumed_multiple(%n: i32, %m: i32 {tessel.divisibility = 32 : i32}, %k: i32) {
  %c48 = arith.constant 48 : i32
  %c0 = arith.constant 0 : i32
  %r = arith.remsi %n, %c48 : i32
  %z = arith.cmpi eq, %r, %c0 : i32
  tessel.assume %z
  %c4 = arith.constant 4 : i32
  %r2 = arith.remsi %m, %c4 : i32
  %z2 = arith.cmpi eq, %r2, %c0 : i32
  tessel.assume %z2
  // A condition of another form is a plain assumption: no fact for %k.
  %g = arith.cmpi sge, %k, %c48 : i32
  tessel.assume %g
  return
}

// A tile times a specialized 1 folds away: the splat of the constant is a
// constant tile, which arith's folds see (Triton's `offs_k[None, :] *
// stride_ak` with stride_ak == 1 is the range itself). So do broadcasts and
// expand_dims of it.
// FOLD-LABEL: func.func @tile_stride_one
// FOLD-NOT: arith.muli
// FOLD-NOT: tessel.splat
// FOLD: %[[R:.*]] = tessel.make_range
// FOLD: %[[E:.*]] = tessel.expand_dims %[[R]]
// FOLD: %[[B:.*]] = tessel.broadcast %[[E]]
// FOLD: arith.addi %[[B]], %{{.*}} : tensor<16x64xi32>
// FOLD: return
func.func @tile_stride_one(%s: i32 {tessel.equal_to_one}, %t: tensor<16x64xi32>) -> tensor<16x64xi32> {
  %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %e = tessel.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %ss = tessel.splat %s : tensor<1x64xi32>
  %m = arith.muli %e, %ss : tensor<1x64xi32>
  %b = tessel.broadcast %m : tensor<1x64xi32> -> tensor<16x64xi32>
  %one = tessel.splat %s : tensor<1xi32>
  %one2 = tessel.expand_dims %one {axis = 0 : i32} : tensor<1xi32> -> tensor<1x1xi32>
  %one3 = tessel.broadcast %one2 : tensor<1x1xi32> -> tensor<16x64xi32>
  %t1 = arith.muli %t, %one3 : tensor<16x64xi32>
  %sum = arith.addi %b, %t1 : tensor<16x64xi32>
  return %sum : tensor<16x64xi32>
}
