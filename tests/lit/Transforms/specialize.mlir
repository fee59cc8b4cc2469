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
