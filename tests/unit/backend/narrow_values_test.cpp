// computesOnNarrowValues (amdgpu_codegen.hpp): the optimizer runs LLVM's SLP
// vectorizer only on modules that compute on 8- or 16-bit values.
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "parse_ir.hpp"

#include <doctest/doctest.h>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <string>

using namespace tessel;

namespace {
// A kernel that scales a float through a buffer resource, with `extra`
// appended to its body.
std::string kernel(const std::string &extra) {
  return "define amdgpu_kernel void @k(ptr addrspace(1) %a, i32 %n) {\nentry:\n"
         "  %tid = call i32 @llvm.amdgcn.workitem.id.x()\n"
         "  %r = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %a, i16 0, "
         "i64 1024, i32 159744)\n"
         "  %o = shl i32 %tid, 2\n"
         "  %x = call float @llvm.amdgcn.raw.ptr.buffer.load.f32(ptr addrspace(8) %r, i32 %o, i32 0, i32 0)\n"
         "  %y = fmul float %x, 3.0\n" +
         extra +
         "  call void @llvm.amdgcn.raw.ptr.buffer.store.f32(float %y, ptr addrspace(8) %r, i32 %o, i32 0, i32 0)\n"
         "  ret void\n}\n"
         "declare i32 @llvm.amdgcn.workitem.id.x()\n"
         "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)\n"
         "declare float @llvm.amdgcn.raw.ptr.buffer.load.f32(ptr addrspace(8), i32, i32, i32)\n"
         "declare void @llvm.amdgcn.raw.ptr.buffer.store.f32(float, ptr addrspace(8), i32, i32, i32)\n";
}

bool narrow(const std::string &extra) {
  llvm::LLVMContext context;
  auto module = testing::parseIR(kernel(extra), context);
  return computesOnNarrowValues(*module);
}
} // namespace

TEST_CASE("a buffer resource's i16 stride is no computation on narrow values; a 16-bit or 8-bit value is") {
  CHECK_FALSE(narrow(""));
  CHECK_FALSE(narrow("  %c = icmp slt i32 %tid, %n\n")); // i1 is not narrow
  CHECK(narrow("  %t = trunc i32 %n to i16\n"));
  CHECK(narrow("  %h = fptrunc float %y to half\n"));
  CHECK(narrow("  %b = trunc i32 %n to i8\n  %w = zext i8 %b to i32\n"));
}
