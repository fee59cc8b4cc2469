// RUN: tessel-opt %s -split-input-file --tessel-assign-layouts --tessel-convert-to-llvm | FileCheck %s

// device_print: per register an owner prints "pid (x, y, z) idx (i)<prefix><value>"
// through the ROCm device library's printf: the format string as a constant
// in addrspace(4), the program ids, the index and the value (f32 extended to
// f64) as 64-bit arguments. 16 elements on a wave of 64 lanes: lanes 16 and up
// hold replicas and print nothing.
// CHECK-DAG: llvm.func @__ockl_printf_begin(i64) -> i64
// CHECK-DAG: llvm.func @__ockl_printf_append_string_n(i64, !llvm.ptr, i64, i32) -> i64
// CHECK-DAG: llvm.func @__ockl_printf_append_args(i64, i32, i64, i64, i64, i64, i64, i64, i64, i32) -> i64
// CHECK-DAG: llvm.mlir.global private constant @__tessel_printf_format_0("pid (%i, %i, %i) idx (%2i) x: %f\0A\00") {addr_space = 4 : i32
// CHECK-LABEL: llvm.func @print_f32(
// CHECK: llvm.cond_br
// CHECK: llvm.fpext %{{.*}} : f32 to f64
// CHECK: llvm.call @__ockl_printf_begin
// CHECK: llvm.mlir.addressof @__tessel_printf_format_0 : !llvm.ptr<4>
// CHECK: llvm.addrspacecast
// CHECK: llvm.call @__ockl_printf_append_string_n
// CHECK: llvm.call @__ockl_printf_append_args(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32} {
  func.func @print_f32(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
    %x = arith.sitofp %r : tensor<16xi32> to tensor<16xf32>
    tessel.print " x: " %x : tensor<16xf32>
    return
  }
}

// -----

// Two operands: "(operand k) " after the prefix; a 2-D index pads each dim
// to its extent's digits; a '%' in the prefix is doubled; i64 is %lli, i1
// is extended to 0/1. Each text is one constant, whatever the registers.
// CHECK-DAG: ("pid (%i, %i, %i) idx (%1i, %2i) 100%% done: (operand 0) %lli\0A\00")
// CHECK-DAG: ("pid (%i, %i, %i) idx (%1i, %2i) 100%% done: (operand 1) %i\0A\00")
// CHECK-NOT: llvm.mlir.global
// CHECK-LABEL: llvm.func @print_two(
// CHECK: llvm.zext %{{.*}} : i1 to i32
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 32 : i32} {
  func.func @print_two(%p: !tessel.ptr<f32>) {
    %a = arith.constant dense<7> : tensor<4x16xi64>
    %b = arith.constant dense<true> : tensor<4x16xi1>
    tessel.print " 100% done: " %a, %b : tensor<4x16xi64>, tensor<4x16xi1>
    return
  }
}

// -----

// A failed device_assert prints its line, message, program and index to
// stderr, then traps.
// CHECK: llvm.mlir.global private constant @__tessel_printf_format_0("{{.*}}kernel.cpp:12: device_assert failed: x is small: pid (%i, %i, %i) idx (%2i)\0A\00")
// CHECK-LABEL: llvm.func @check(
// CHECK: llvm.cond_br
// CHECK: llvm.call @__ockl_fprintf_stderr_begin()
// CHECK: llvm.call @__ockl_printf_append_args
// CHECK: llvm.intr.trap
module attributes {tessel.num_warps = 1 : i32, tessel.wave_size = 64 : i32, tessel.debug} {
  func.func @check(%p: !tessel.ptr<f32>) {
    %r = tessel.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
    %c = arith.constant dense<10> : tensor<64xi32>
    %ok = arith.cmpi slt, %r, %c : tensor<64xi32>
    tessel.device_assert %ok, "x is small" : tensor<64xi1> loc("kernel.cpp":12:3)
    return
  }
}
