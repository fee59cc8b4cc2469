// RUN: tessel-opt %s --tessel-specialize | FileCheck %s

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
