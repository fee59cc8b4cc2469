// RUN: tessel-opt %s -split-input-file --tessel-specialize | FileCheck %s

// Without tessel.debug (LaunchOptions::debug), device_assert is erased;
// device_print stays.
// CHECK-LABEL: func.func @no_debug(
// CHECK-NOT: tessel.device_assert
// CHECK: tessel.print
module {
  func.func @no_debug(%n: i32) {
    %z = arith.constant 0 : i32
    %ok = arith.cmpi sgt, %n, %z : i32
    tessel.device_assert %ok, "n is positive" : i1
    tessel.print " n: " %n : i32
    return
  }
}

// -----

// With it, device_assert stays.
// CHECK-LABEL: func.func @debug(
// CHECK: tessel.device_assert %{{.*}}, "n is positive" : i1
module attributes {tessel.debug} {
  func.func @debug(%n: i32) {
    %z = arith.constant 0 : i32
    %ok = arith.cmpi sgt, %n, %z : i32
    tessel.device_assert %ok, "n is positive" : i1
    return
  }
}
