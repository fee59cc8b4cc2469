// RUN: tessel-opt %s --tessel-specialize --canonicalize --tessel-check-assumptions -verify-diagnostics

// assume(n % 128 == 0), launched with n == 1.
func.func @broken_promise(%n: i32 {tessel.equal_to_one}) {
  %c128 = arith.constant 128 : i32
  %c0 = arith.constant 0 : i32
  %r = arith.remsi %n, %c128 : i32
  %ok = arith.cmpi eq, %r, %c0 : i32
  // expected-error@below {{this assumption is false for the arguments of this launch}}
  tessel.assume %ok
  return
}
