// The emulator runs handwritten AMDGPU kernel modules, written the way the
// lowering emits them (amdgcn triple, AMDGPU data layout, amdgpu_kernel).
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"

#include "emulator_ir.hpp"
#include "tessel/runtime/device.hpp"

#include <doctest/doctest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace tessel;

namespace {

const char *kDeclarations =
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "declare i32 @llvm.amdgcn.workitem.id.y()\n"
    "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
    "declare i32 @llvm.amdgcn.workgroup.id.y()\n"
    "declare i32 @llvm.amdgcn.workgroup.id.z()\n"
    "declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()\n"
    "attributes #0 = { \"amdgpu-flat-work-group-size\"=\"1,1024\" \"target-cpu\"=\"gfx942\" "
    "\"uniform-work-group-size\"=\"true\" }\n";

CompiledKernel kernelFromIR(std::string name, const std::string &body, std::vector<TraceArg> args) {
  return testing::kernelFromIR(std::move(name), std::string(kDeclarations) + body, args);
}

const TraceArg kF32Ptr{TraceArg::Pointer, DType::F32};
const TraceArg kF64Ptr{TraceArg::Pointer, DType::F64};
const TraceArg kI32Ptr{TraceArg::Pointer, DType::I32};
const TraceArg kI32{TraceArg::Int, DType::I32};

using testing::Kernarg;
using testing::kGlobalIndex;

} // namespace

TEST_CASE("emulator: vector add over a grid with a tail") {
  Device dev = Device::emulator("gfx942");
  CHECK(dev.isEmulator());
  CHECK(dev.arch() == "gfx942");
  CompiledKernel k = kernelFromIR("vadd", std::string(R"(
define amdgpu_kernel void @vadd(ptr addrspace(1) %x, ptr addrspace(1) %y, ptr addrspace(1) %out, i32 %n) #0 {
entry:)") + kGlobalIndex + R"(
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %body, label %exit
body:
  %px = getelementptr float, ptr addrspace(1) %x, i64 %i64
  %py = getelementptr float, ptr addrspace(1) %y, i64 %i64
  %po = getelementptr float, ptr addrspace(1) %out, i64 %i64
  %a = load float, ptr addrspace(1) %px, align 4
  %b = load float, ptr addrspace(1) %py, align 4
  %s = fadd float %a, %b
  store float %s, ptr addrspace(1) %po, align 4
  br label %exit
exit:
  ret void
}
)", {kF32Ptr, kF32Ptr, kF32Ptr, kI32});
  auto loaded = dev.impl().load(k);

  const int n = 1000, block = 64, grid = (n + block - 1) / block; // 1000 = 15*64 + 40
  std::vector<float> x(n + 24), y(n + 24);
  for (int i = 0; i < n + 24; ++i) {
    x[i] = float(i) * 0.5f;
    y[i] = float(3 * i + 1);
  }
  auto bx = dev.upload(x), by = dev.upload(y);
  auto out = dev.upload(std::vector<float>(n + 24, std::nanf("")));
  Kernarg args(k.kernargs);
  args.set(0, bx.devicePtr()).set(1, by.devicePtr()).set(2, out.devicePtr()).set(3, int32_t(n));
  dev.impl().launch(*loaded, {uint32_t(grid), 1, 1}, block, args.data(), args.size());
  std::vector<float> got = out.download();
  for (int i = 0; i < n; ++i)
    REQUIRE(got[i] == x[i] + y[i]);
  for (int i = n; i < n + 24; ++i) // the tail past n stays untouched
    REQUIRE(std::isnan(got[i]));
}

TEST_CASE("emulator: work-item ids, workgroup ids and the dispatch packet") {
  Device dev = Device::emulator();
  CompiledKernel k = kernelFromIR("ids", R"(
define amdgpu_kernel void @ids(ptr addrspace(1) %out) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %gx = call i32 @llvm.amdgcn.workgroup.id.x()
  %gy = call i32 @llvm.amdgcn.workgroup.id.y()
  %gz = call i32 @llvm.amdgcn.workgroup.id.z()
  %dp = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %p4 = getelementptr i8, ptr addrspace(4) %dp, i64 4
  %wsx16 = load i16, ptr addrspace(4) %p4, align 4
  %wsx = zext i16 %wsx16 to i32
  %p12 = getelementptr i8, ptr addrspace(4) %dp, i64 12
  %gsx = load i32, ptr addrspace(4) %p12, align 4
  %p16 = getelementptr i8, ptr addrspace(4) %dp, i64 16
  %gsy = load i32, ptr addrspace(4) %p16, align 4
  %p20 = getelementptr i8, ptr addrspace(4) %dp, i64 20
  %gsz = load i32, ptr addrspace(4) %p20, align 4
  ; linear thread = ((gz * 2 + gy) * 3 + gx) * wsx + tx, for a grid of 3 x 2 x 2
  %l0 = mul i32 %gz, 2
  %l1 = add i32 %l0, %gy
  %l2 = mul i32 %l1, 3
  %l3 = add i32 %l2, %gx
  %l4 = mul i32 %l3, %wsx
  %lin = add i32 %l4, %tx
  %slot = mul i32 %lin, 9
  %s64 = zext i32 %slot to i64
  %o = getelementptr i32, ptr addrspace(1) %out, i64 %s64
  store i32 %tx, ptr addrspace(1) %o, align 4
  %o1 = getelementptr i32, ptr addrspace(1) %o, i64 1
  store i32 %ty, ptr addrspace(1) %o1, align 4
  %o2 = getelementptr i32, ptr addrspace(1) %o, i64 2
  store i32 %gx, ptr addrspace(1) %o2, align 4
  %o3 = getelementptr i32, ptr addrspace(1) %o, i64 3
  store i32 %gy, ptr addrspace(1) %o3, align 4
  %o4 = getelementptr i32, ptr addrspace(1) %o, i64 4
  store i32 %gz, ptr addrspace(1) %o4, align 4
  %o5 = getelementptr i32, ptr addrspace(1) %o, i64 5
  store i32 %wsx, ptr addrspace(1) %o5, align 4
  %o6 = getelementptr i32, ptr addrspace(1) %o, i64 6
  store i32 %gsx, ptr addrspace(1) %o6, align 4
  %o7 = getelementptr i32, ptr addrspace(1) %o, i64 7
  store i32 %gsy, ptr addrspace(1) %o7, align 4
  %o8 = getelementptr i32, ptr addrspace(1) %o, i64 8
  store i32 %gsz, ptr addrspace(1) %o8, align 4
  ret void
}
)", {kI32Ptr});
  auto loaded = dev.impl().load(k);
  const uint32_t block = 5;
  const Dim3 grid{3, 2, 2};
  const size_t threads = 3 * 2 * 2 * block;
  auto out = dev.upload(std::vector<int32_t>(threads * 9, int32_t(0xABABABAB)));
  Kernarg args(k.kernargs);
  args.set(0, out.devicePtr());
  dev.impl().launch(*loaded, grid, block, args.data(), args.size());
  std::vector<int32_t> got = out.download();
  size_t lin = 0;
  for (int32_t gz = 0; gz < 2; ++gz)
    for (int32_t gy = 0; gy < 2; ++gy)
      for (int32_t gx = 0; gx < 3; ++gx)
        for (int32_t tx = 0; tx < int32_t(block); ++tx, ++lin) {
          const int32_t *r = &got[lin * 9];
          CAPTURE(lin);
          CHECK(r[0] == tx);
          CHECK(r[1] == 0);
          CHECK(r[2] == gx);
          CHECK(r[3] == gy);
          CHECK(r[4] == gz);
          CHECK(r[5] == int32_t(block));
          CHECK(r[6] == int32_t(3 * block)); // grid sizes are in work-items
          CHECK(r[7] == 2);
          CHECK(r[8] == 2);
        }
}

TEST_CASE("emulator: integer division by zero and INT_MIN / -1 do not trap") {
  Device dev = Device::emulator();
  CompiledKernel k = kernelFromIR("divs", std::string(R"(
define amdgpu_kernel void @divs(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %out) #0 {
entry:)") + kGlobalIndex + R"(
  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %i64
  %pb = getelementptr i32, ptr addrspace(1) %b, i64 %i64
  %va = load i32, ptr addrspace(1) %pa, align 4
  %vb = load i32, ptr addrspace(1) %pb, align 4
  %q = sdiv i32 %va, %vb
  %r = srem i32 %va, %vb
  %uq = udiv i32 %va, %vb
  %ur = urem i32 %va, %vb
  %slot = mul i64 %i64, 4
  %o0 = getelementptr i32, ptr addrspace(1) %out, i64 %slot
  store i32 %q, ptr addrspace(1) %o0, align 4
  %o1 = getelementptr i32, ptr addrspace(1) %o0, i64 1
  store i32 %r, ptr addrspace(1) %o1, align 4
  %o2 = getelementptr i32, ptr addrspace(1) %o0, i64 2
  store i32 %uq, ptr addrspace(1) %o2, align 4
  %o3 = getelementptr i32, ptr addrspace(1) %o0, i64 3
  store i32 %ur, ptr addrspace(1) %o3, align 4
  ret void
}
)", {kI32Ptr, kI32Ptr, kI32Ptr});
  auto loaded = dev.impl().load(k);
  std::vector<int32_t> a = {7, -7, 100, INT_MIN, 5, INT_MIN, 0, 9};
  std::vector<int32_t> b = {2, 2, 0, -1, 0, 0, 0, -3};
  auto ba = dev.upload(a), bb = dev.upload(b);
  auto out = dev.upload(std::vector<int32_t>(a.size() * 4, int32_t(0xABABABAB)));
  Kernarg args(k.kernargs);
  args.set(0, ba.devicePtr()).set(1, bb.devicePtr()).set(2, out.devicePtr());
  dev.impl().launch(*loaded, {2, 1, 1}, 4, args.data(), args.size());
  std::vector<int32_t> got = out.download();
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    const int32_t *r = &got[i * 4];
    const uint32_t ua = uint32_t(a[i]), ub = uint32_t(b[i]);
    if (b[i] == 0) { // GPU-like: quotient all ones, remainder the dividend
      CHECK(r[0] == -1);
      CHECK(r[1] == a[i]);
      CHECK(uint32_t(r[2]) == 0xFFFFFFFFu);
      CHECK(uint32_t(r[3]) == ua);
    } else if (a[i] == INT_MIN && b[i] == -1) { // wraps
      CHECK(r[0] == INT_MIN);
      CHECK(r[1] == 0);
      CHECK(uint32_t(r[2]) == ua / ub);
      CHECK(uint32_t(r[3]) == ua % ub);
    } else {
      CHECK(r[0] == a[i] / b[i]);
      CHECK(r[1] == a[i] % b[i]);
      CHECK(uint32_t(r[2]) == ua / ub);
      CHECK(uint32_t(r[3]) == ua % ub);
    }
  }
}

TEST_CASE("emulator: __ocml_sin_f64 and __ocml_exp_f32 call the host's libm") {
  Device dev = Device::emulator();
  CompiledKernel k = kernelFromIR("sines", std::string(R"(
declare double @__ocml_sin_f64(double)
declare float @__ocml_exp_f32(float)
define amdgpu_kernel void @sines(ptr addrspace(1) %x, ptr addrspace(1) %out, ptr addrspace(1) %outf) #0 {
entry:)") + kGlobalIndex + R"(
  %px = getelementptr double, ptr addrspace(1) %x, i64 %i64
  %v = load double, ptr addrspace(1) %px, align 8
  %s = call double @__ocml_sin_f64(double %v)
  %po = getelementptr double, ptr addrspace(1) %out, i64 %i64
  store double %s, ptr addrspace(1) %po, align 8
  %vf = fptrunc double %v to float
  %e = call float @__ocml_exp_f32(float %vf)
  %pf = getelementptr float, ptr addrspace(1) %outf, i64 %i64
  store float %e, ptr addrspace(1) %pf, align 4
  ret void
}
)", {kF64Ptr, kF64Ptr, kF32Ptr});
  auto loaded = dev.impl().load(k);
  std::vector<double> x(128);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = -3.0 + 0.05 * double(i);
  auto bx = dev.upload(x);
  auto out = dev.upload(std::vector<double>(x.size(), std::nan("")));
  auto outf = dev.upload(std::vector<float>(x.size(), std::nanf("")));
  Kernarg args(k.kernargs);
  args.set(0, bx.devicePtr()).set(1, out.devicePtr()).set(2, outf.devicePtr());
  dev.impl().launch(*loaded, {2, 1, 1}, 64, args.data(), args.size());
  std::vector<double> got = out.download();
  std::vector<float> gotf = outf.download();
  for (size_t i = 0; i < x.size(); ++i) {
    REQUIRE(got[i] == std::sin(x[i]));
    REQUIRE(gotf[i] == std::exp(float(x[i])));
  }
}

TEST_CASE("emulator: private (addrspace 5) allocas work") {
  Device dev = Device::emulator();
  CompiledKernel k = kernelFromIR("priv", std::string(R"(
define amdgpu_kernel void @priv(ptr addrspace(1) %out) #0 {
entry:
  %buf = alloca [4 x i32], align 4, addrspace(5))") + kGlobalIndex + R"(
  %e0 = getelementptr [4 x i32], ptr addrspace(5) %buf, i32 0, i32 0
  %e3 = getelementptr [4 x i32], ptr addrspace(5) %buf, i32 0, i32 3
  store volatile i32 %i, ptr addrspace(5) %e0, align 4
  store volatile i32 7, ptr addrspace(5) %e3, align 4
  %a = load volatile i32, ptr addrspace(5) %e0, align 4
  %b = load volatile i32, ptr addrspace(5) %e3, align 4
  %s = mul i32 %a, %b
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %i64
  store i32 %s, ptr addrspace(1) %po, align 4
  ret void
}
)", {kI32Ptr});
  auto loaded = dev.impl().load(k);
  auto out = dev.upload(std::vector<int32_t>(32, 0));
  Kernarg args(k.kernargs);
  args.set(0, out.devicePtr());
  dev.impl().launch(*loaded, {1, 1, 1}, 32, args.data(), args.size());
  std::vector<int32_t> got = out.download();
  for (int i = 0; i < 32; ++i)
    CHECK(got[i] == 7 * i);
}

TEST_CASE("emulator: errors name what is wrong") {
  Device dev = Device::emulator();
  SUBCASE("an unsupported llvm.amdgcn intrinsic") {
    CompiledKernel k = kernelFromIR("uses_swizzle", R"(
declare i32 @llvm.amdgcn.ds.swizzle(i32, i32)
define amdgpu_kernel void @uses_swizzle(ptr addrspace(1) %out) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %v = call i32 @llvm.amdgcn.ds.swizzle(i32 %t, i32 31)
  store i32 %v, ptr addrspace(1) %out, align 4
  ret void
}
)", {kI32Ptr});
    CHECK_THROWS_WITH_AS(dev.impl().load(k),
                         doctest::Contains("the emulator does not support the AMDGPU intrinsic "
                                           "'llvm.amdgcn.ds.swizzle' (used by kernel 'uses_swizzle')"),
                         Error);
  }
  SUBCASE("a call to malloc") {
    CompiledKernel k = kernelFromIR("allocates", R"(
declare ptr @malloc(i64)
define amdgpu_kernel void @allocates(ptr addrspace(1) %out) #0 {
  %p = call ptr @malloc(i64 16)
  store ptr %p, ptr addrspace(1) %out, align 8
  ret void
}
)", {kI32Ptr});
    CHECK_THROWS_WITH_AS(dev.impl().load(k),
                         doctest::Contains("kernel 'allocates' calls the external function 'malloc'"),
                         Error);
  }
  SUBCASE("a device library function the emulator lacks") {
    CompiledKernel k = kernelFromIR("odd", R"(
declare half @__ocml_sin_f16(half)
define amdgpu_kernel void @odd(ptr addrspace(1) %out) #0 {
  %v = call half @__ocml_sin_f16(half 1.0)
  store half %v, ptr addrspace(1) %out, align 2
  ret void
}
)", {kI32Ptr});
    CHECK_THROWS_WITH_AS(dev.impl().load(k), doctest::Contains("'__ocml_sin_f16'"), Error);
  }
  SUBCASE("a kernel the module does not define") {
    CompiledKernel k = kernelFromIR("missing", "define void @other() { ret void }\n", {});
    CHECK_THROWS_WITH_AS(dev.impl().load(k),
                         doctest::Contains("does not define the kernel 'missing'"), Error);
  }
  SUBCASE("IR that does not parse") {
    CompiledKernel k = kernelFromIR("broken", "define amdgpu_kernel void @broken( {\n", {});
    CHECK_THROWS_WITH_AS(dev.impl().load(k),
                         doctest::Contains("cannot parse the LLVM IR of kernel 'broken'"), Error);
  }
  SUBCASE("a kernarg layout that does not match the parameters") {
    CompiledKernel k = kernelFromIR("two", R"(
define amdgpu_kernel void @two(ptr addrspace(1) %out, i32 %n) #0 {
  ret void
}
)", {kI32Ptr});
    CHECK_THROWS_WITH_AS(dev.impl().load(k),
                         doctest::Contains("kernel 'two' has 2 parameters but its kernarg layout lists 1"),
                         Error);
  }
  SUBCASE("too few kernarg bytes at launch") {
    CompiledKernel k = kernelFromIR("two", R"(
define amdgpu_kernel void @two(ptr addrspace(1) %out, i32 %n) #0 {
  ret void
}
)", {kI32Ptr, kI32});
    auto loaded = dev.impl().load(k);
    uint8_t bytes[8] = {};
    CHECK_THROWS_WITH_AS(dev.impl().launch(*loaded, {1, 1, 1}, 64, bytes, sizeof bytes),
                         doctest::Contains("kernel 'two' reads 12 bytes of arguments but the launch passed 8"),
                         Error);
  }
  SUBCASE("an unknown architecture") {
    CHECK_THROWS_AS(Device::emulator("gfx000"), Error);
  }
}

TEST_CASE("emulator: implicit kernel arguments and __ockl work-item queries") {
  Device dev = Device::emulator();
  CompiledKernel k = kernelFromIR("shape", R"(
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
declare i64 @__ockl_get_local_size(i32)
declare i64 @__ockl_get_num_groups(i32)
declare i64 @__ockl_get_global_id(i32)
define amdgpu_kernel void @shape(ptr addrspace(1) %out) #0 {
entry:
  %ia = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %blocks = load i32, ptr addrspace(4) %ia, align 4
  %p12 = getelementptr i8, ptr addrspace(4) %ia, i64 12
  %gs16 = load i16, ptr addrspace(4) %p12, align 2
  %gs = zext i16 %gs16 to i64
  %b64 = zext i32 %blocks to i64
  %ls = call i64 @__ockl_get_local_size(i32 0)
  %ng = call i64 @__ockl_get_num_groups(i32 0)
  %gid = call i64 @__ockl_get_global_id(i32 0)
  %slot = mul i64 %gid, 5
  %o = getelementptr i64, ptr addrspace(1) %out, i64 %slot
  store i64 %b64, ptr addrspace(1) %o, align 8
  %o1 = getelementptr i64, ptr addrspace(1) %o, i64 1
  store i64 %gs, ptr addrspace(1) %o1, align 8
  %o2 = getelementptr i64, ptr addrspace(1) %o, i64 2
  store i64 %ls, ptr addrspace(1) %o2, align 8
  %o3 = getelementptr i64, ptr addrspace(1) %o, i64 3
  store i64 %ng, ptr addrspace(1) %o3, align 8
  %o4 = getelementptr i64, ptr addrspace(1) %o, i64 4
  store i64 %gid, ptr addrspace(1) %o4, align 8
  ret void
}
)", {kI32Ptr});
  auto loaded = dev.impl().load(k);
  const uint32_t block = 16, groups = 3;
  auto out = dev.upload(std::vector<int64_t>(block * groups * 5, -7));
  Kernarg args(k.kernargs);
  args.set(0, out.devicePtr());
  dev.impl().launch(*loaded, {groups, 1, 1}, block, args.data(), args.size());
  std::vector<int64_t> got = out.download();
  for (uint32_t g = 0; g < block * groups; ++g) {
    CAPTURE(g);
    CHECK(got[g * 5 + 0] == groups);
    CHECK(got[g * 5 + 1] == block);
    CHECK(got[g * 5 + 2] == block);
    CHECK(got[g * 5 + 3] == groups);
    CHECK(got[g * 5 + 4] == g);
  }
}

TEST_CASE("emulator: f32 -> f16 and f32 -> bf16 conversions round to nearest even") {
  Device dev = Device::emulator();
  CompiledKernel k = kernelFromIR("narrow", std::string(R"(
define amdgpu_kernel void @narrow(ptr addrspace(1) %x, ptr addrspace(1) %h, ptr addrspace(1) %b) #0 {
entry:)") + kGlobalIndex + R"(
  %px = getelementptr float, ptr addrspace(1) %x, i64 %i64
  %v = load float, ptr addrspace(1) %px, align 4
  %vh = fptrunc float %v to half
  %ph = getelementptr half, ptr addrspace(1) %h, i64 %i64
  store half %vh, ptr addrspace(1) %ph, align 2
  %vb = fptrunc float %v to bfloat
  %pb = getelementptr bfloat, ptr addrspace(1) %b, i64 %i64
  store bfloat %vb, ptr addrspace(1) %pb, align 2
  ret void
}
)", {kF32Ptr, kI32Ptr, kI32Ptr});
  auto loaded = dev.impl().load(k);
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (float(i) - 128.0f) * 7.37f + 0.001f * float(i * i);
  auto bx = dev.upload(x);
  auto h = dev.upload(std::vector<uint16_t>(x.size(), 0xABAB));
  auto b = dev.upload(std::vector<uint16_t>(x.size(), 0xABAB));
  Kernarg args(k.kernargs);
  args.set(0, bx.devicePtr()).set(1, h.devicePtr()).set(2, b.devicePtr());
  dev.impl().launch(*loaded, {4, 1, 1}, 64, args.data(), args.size());
  auto gotH = h.download(), gotB = b.download();
  for (size_t i = 0; i < x.size(); ++i) {
    CAPTURE(x[i]);
    uint32_t bits;
    std::memcpy(&bits, &x[i], 4);
    const uint16_t bf16 = uint16_t((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
    _Float16 half = static_cast<_Float16>(x[i]);
    uint16_t f16;
    std::memcpy(&f16, &half, 2);
    CHECK(gotH[i] == f16);
    CHECK(gotB[i] == bf16);
  }
}
