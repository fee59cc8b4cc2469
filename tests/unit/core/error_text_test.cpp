// The guard of tests/unit/main.cpp: what counts as compiler-internal text in
// an error, and that every thrown tessel::Error passes through the check.
#include "../error_text.hpp"
#include "tessel/core/error.hpp"

#include <doctest/doctest.h>

using tessel_test::compilerTextIn;

TEST_CASE("compiler-internal text in an error is found") {
  CHECK(compilerTextIn("k.cpp:3: 'arith.select' op failed to verify that all of {true_value, false_value, result} "
                       "have same type") == "'arith.select' op ");
  CHECK(!compilerTextIn("failed to legalize operation 'tessel.dot'").empty());
  CHECK(!compilerTextIn("'rocdl.mfma.f32.32x32x8f16' op operand #0 must be ...").empty());
  CHECK(!compilerTextIn("operand #0 has type tensor<16xf32>").empty());
  CHECK(!compilerTextIn("LLVM ERROR: Cannot select: intrinsic").empty());
  CHECK(!compilerTextIn("  %3 = llvm.add %1, %2 : i32").empty());
  // tessel's own words about an LLVM intrinsic are not LLVM's message
  CHECK(compilerTextIn("the emulator does not support the AMDGPU intrinsic 'llvm.amdgcn.ds.swizzle'").empty());
  CHECK(!compilerTextIn("k.cpp:9: tessel: internal compiler error in the pass 'tessel-assign-layouts'").empty());
  // tessel's own messages, which may name an op
  CHECK(compilerTextIn("errors_test.cpp:18: needs 135168 bytes of LDS (workgroup memory) for moving a tile between "
                       "shapes ('tessel.permute'); the kernel's LDS plan totals 135168 bytes but gfx942 has 65536")
            .empty());
  CHECK(compilerTextIn("k.cpp:4: where: the shapes [4] and [8] do not broadcast").empty());
}

TEST_CASE("every thrown tessel::Error passes the guard") {
  const int before = tessel_test::compilerTextAllowed;
  tessel_test::AllowCompilerText allow;
  try {
    throw tessel::Error("'arith.select' op failed to verify");
  } catch (const tessel::Error &) {
  }
  try {
    throw tessel::Error("a clean message");
  } catch (const tessel::Error &) {
  }
  CHECK(tessel_test::compilerTextAllowed == before + 1);
}
