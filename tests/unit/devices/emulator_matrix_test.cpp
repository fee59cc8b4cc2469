// The emulator's matrix-core instructions against a plain host matmul. Each
// lane of a handwritten kernel loads its A, B and C registers from memory,
// runs one MFMA or WMMA intrinsic and stores its D registers; the host puts
// the matrices into those registers as AMD's matrix instruction calculator
// prints the layouts (`matrix_calculator.py -a cdna3 -i v_mfma_f32_32x32x8_f16
// --matrix-layout -A`, ... ; the placement functions below were checked
// against its output for every instruction listed here), and reads D back the
// same way.
#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

#include "emulator_ir.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tessel;

namespace {

// Fp8 (E4M3) and Bf8 (E5M2): FNUZ on gfx942, OCP on gfx950.
enum class In { F16, BF16, F32, I8, Fp8, Bf8 };

struct Case {
  const char *arch;
  const char *intrinsic;    // as the module calls it
  bool wmma;
  unsigned m, n, k;
  In in;
  const char *operandType;  // the LLVM type of a lane's A (and B)
  const char *accType;      // of C and D
  int inB = -1;             // B's element type (an In) when it differs from A's
};

unsigned inBytes(In in) { return in == In::F32 ? 4 : (in == In::I8 || in == In::Fp8 || in == In::Bf8) ? 1 : 2; }
In inOfB(const Case &c) { return c.inB < 0 ? c.in : In(c.inB); }
bool isOcp(const Case &c) { return std::string(c.arch) == "gfx950"; }
unsigned waveOf(const Case &c) { return c.wmma ? 32 : 64; }
unsigned perLane(const Case &c) { return c.wmma ? c.k : c.k / (64 / c.m); }

// The calculator's layouts. MFMA A[i][kk]: lane i + m * (kk / perLane),
// element kk % perLane; B[kk][j]: lane j + n * (kk / perLane). WMMA A[i][kk]:
// lanes i and i + 16, element kk; B[kk][j]: lanes j and j + 16. D[i][j]:
// MFMA 32x32 lane j + 32 * ((i / 4) % 2), register 4 * (i / 8) + i % 4;
// 16x16 lane j + 16 * (i / 4), register i % 4; WMMA lane j + 16 * (i % 2),
// register i / 2.
std::vector<std::pair<unsigned, unsigned>> placeA(const Case &c, unsigned i, unsigned kk) {
  if (c.wmma) return {{i, kk}, {i + 16, kk}};
  return {{i + c.m * (kk / perLane(c)), kk % perLane(c)}};
}
std::vector<std::pair<unsigned, unsigned>> placeB(const Case &c, unsigned kk, unsigned j) {
  if (c.wmma) return {{j, kk}, {j + 16, kk}};
  return {{j + c.n * (kk / perLane(c)), kk % perLane(c)}};
}
std::pair<unsigned, unsigned> placeD(const Case &c, unsigned i, unsigned j) {
  if (c.wmma) return {j + 16 * (i % 2), i / 2};
  if (c.m == 32) return {j + 32 * ((i / 4) % 2), 4 * (i / 8) + i % 4};
  return {j + 16 * (i / 4), i % 4};
}

// Small integers: every product and sum is exact in f32 (and in f16/bf16).
int8_t randomValue(std::mt19937 &gen) { return int8_t(std::uniform_int_distribution<int>(-8, 8)(gen)); }

void putValue(std::vector<uint8_t> &bytes, size_t at, In in, int v, bool ocp = false) {
  switch (in) {
  case In::Fp8:
  case In::Bf8: { // sign, exponent (bias 7/15 OCP, 8/16 FNUZ), 3 or 2 mantissa bits: exact for |v| <= 8
    const unsigned mantissaBits = in == In::Fp8 ? 3 : 2, bias = (in == In::Fp8 ? 7 : 15) + (ocp ? 0 : 1);
    uint8_t q = 0;
    if (v != 0) {
      unsigned a = unsigned(std::abs(v)), e = 31 - unsigned(__builtin_clz(a));
      q = uint8_t(((e + bias) << mantissaBits) | (((a << mantissaBits) >> e) & ((1u << mantissaBits) - 1)));
      if (v < 0) q |= 0x80;
    }
    bytes[at] = q;
    break;
  }
  case In::F16: { // a small integer is exact in f16: sign, exponent, 10-bit mantissa
    uint16_t h = 0;
    if (v != 0) {
      unsigned a = unsigned(std::abs(v)), e = 31 - unsigned(__builtin_clz(a));
      h = uint16_t(((e + 15) << 10) | ((a << (10 - e)) & 1023));
      if (v < 0) h |= 0x8000;
    }
    std::memcpy(&bytes[at], &h, 2);
    break;
  }
  case In::BF16: {
    float f = float(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    uint16_t h = uint16_t(u >> 16); // exact for small integers
    std::memcpy(&bytes[at], &h, 2);
    break;
  }
  case In::F32: {
    float f = float(v);
    std::memcpy(&bytes[at], &f, 4);
    break;
  }
  case In::I8: bytes[at] = uint8_t(int8_t(v)); break;
  }
}

std::string kernelIR(const Case &c) {
  std::string a = c.operandType, acc = c.accType, name = c.intrinsic;
  bool iu8 = std::string(name).find("iu8") != std::string::npos;
  std::string call = iu8 ? "call " + acc + " @" + name + "(i1 true, " + a + " %va, i1 true, " + a + " %vb, " + acc +
                               " %vc, i1 false)"
                     : c.wmma ? "call " + acc + " @" + name + "(" + a + " %va, " + a + " %vb, " + acc + " %vc)"
                              : "call " + acc + " @" + name + "(" + a + " %va, " + a + " %vb, " + acc +
                                    " %vc, i32 0, i32 0, i32 0)";
  std::string decl = iu8 ? "declare " + acc + " @" + name + "(i1 immarg, " + a + ", i1 immarg, " + a + ", " + acc +
                               ", i1 immarg)\n"
                     : c.wmma ? "declare " + acc + " @" + name + "(" + a + ", " + a + ", " + acc + ")\n"
                              : "declare " + acc + " @" + name + "(" + a + ", " + a + ", " + acc +
                                    ", i32 immarg, i32 immarg, i32 immarg)\n";
  return "declare i32 @llvm.amdgcn.workitem.id.x()\n" + decl +
         "define amdgpu_kernel void @matrix(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, "
         "ptr addrspace(1) %d) {\n"
         "  %lane = call i32 @llvm.amdgcn.workitem.id.x()\n"
         "  %l = zext i32 %lane to i64\n"
         "  %pa = getelementptr " + a + ", ptr addrspace(1) %a, i64 %l\n"
         "  %va = load " + a + ", ptr addrspace(1) %pa\n"
         "  %pb = getelementptr " + a + ", ptr addrspace(1) %b, i64 %l\n"
         "  %vb = load " + a + ", ptr addrspace(1) %pb\n"
         "  %pc = getelementptr " + acc + ", ptr addrspace(1) %c, i64 %l\n"
         "  %vc = load " + acc + ", ptr addrspace(1) %pc\n"
         "  %vd = " + call + "\n"
         "  %pd = getelementptr " + acc + ", ptr addrspace(1) %d, i64 %l\n"
         "  store " + acc + " %vd, ptr addrspace(1) %pd\n"
         "  ret void\n}\n";
}

void runCase(const Case &c, unsigned seed) {
  CAPTURE(c.intrinsic);
  Device dev = Device::emulator(c.arch);
  const unsigned wave = waveOf(c), lanes = wave, elems = perLane(c), regs = c.m * c.n / wave;
  std::mt19937 gen(seed);
  std::vector<int> A(c.m * c.k), B(c.k * c.n), C(c.m * c.n);
  for (int &v : A) v = randomValue(gen);
  for (int &v : B) v = randomValue(gen);
  for (int &v : C) v = randomValue(gen) * 16;
  const bool intAcc = c.in == In::I8;
  std::vector<uint8_t> a(size_t(lanes) * elems * inBytes(c.in)), b(size_t(lanes) * elems * inBytes(inOfB(c))),
      cBytes(size_t(lanes) * regs * 4);
  for (unsigned i = 0; i < c.m; ++i)
    for (unsigned kk = 0; kk < c.k; ++kk)
      for (auto [lane, e] : placeA(c, i, kk))
        putValue(a, (size_t(lane) * elems + e) * inBytes(c.in), c.in, A[i * c.k + kk], isOcp(c));
  for (unsigned kk = 0; kk < c.k; ++kk)
    for (unsigned j = 0; j < c.n; ++j)
      for (auto [lane, e] : placeB(c, kk, j))
        putValue(b, (size_t(lane) * elems + e) * inBytes(inOfB(c)), inOfB(c), B[kk * c.n + j], isOcp(c));
  for (unsigned i = 0; i < c.m; ++i)
    for (unsigned j = 0; j < c.n; ++j) {
      auto [lane, r] = placeD(c, i, j);
      putValue(cBytes, (size_t(lane) * regs + r) * 4, intAcc ? In::F32 : In::F32, 0);
      if (intAcc) {
        int32_t v = C[i * c.n + j];
        std::memcpy(&cBytes[(size_t(lane) * regs + r) * 4], &v, 4);
      } else {
        float v = float(C[i * c.n + j]);
        std::memcpy(&cBytes[(size_t(lane) * regs + r) * 4], &v, 4);
      }
    }
  auto ba = dev.upload(a), bb = dev.upload(b), bc = dev.upload(cBytes);
  auto bd = dev.upload(std::vector<uint8_t>(cBytes.size(), 0xAB));
  CompiledKernel k = testing::kernelFromIR("matrix", kernelIR(c), std::vector<TraceArg>(4, {TraceArg::Pointer, DType::I8}));
  k.waveSize = wave;
  auto loaded = dev.impl().load(k);
  std::vector<uint8_t> args(32);
  void *ptrs[4] = {ba.devicePtr(), bb.devicePtr(), bc.devicePtr(), bd.devicePtr()};
  std::memcpy(args.data(), ptrs, 32);
  dev.impl().launch(*loaded, {1, 1, 1}, wave, args.data(), args.size());
  std::vector<uint8_t> d = bd.download();
  size_t wrong = 0;
  for (unsigned i = 0; i < c.m; ++i)
    for (unsigned j = 0; j < c.n; ++j) {
      int64_t want = C[i * c.n + j];
      for (unsigned kk = 0; kk < c.k; ++kk) want += int64_t(A[i * c.k + kk]) * B[kk * c.n + j];
      auto [lane, r] = placeD(c, i, j);
      double got;
      if (intAcc) {
        int32_t v;
        std::memcpy(&v, &d[(size_t(lane) * regs + r) * 4], 4);
        got = v;
      } else {
        float v;
        std::memcpy(&v, &d[(size_t(lane) * regs + r) * 4], 4);
        got = v;
      }
      wrong += got != double(want); // small integers: exact in every accumulator type
    }
  CHECK(wrong == 0);
}

const Case kCases[] = {
    {"gfx942", "llvm.amdgcn.mfma.f32.32x32x8f16", false, 32, 32, 8, In::F16, "<4 x half>", "<16 x float>"},
    {"gfx942", "llvm.amdgcn.mfma.f32.16x16x16f16", false, 16, 16, 16, In::F16, "<4 x half>", "<4 x float>"},
    {"gfx942", "llvm.amdgcn.mfma.f32.32x32x8bf16.1k", false, 32, 32, 8, In::BF16, "<4 x i16>", "<16 x float>"},
    {"gfx942", "llvm.amdgcn.mfma.f32.16x16x16bf16.1k", false, 16, 16, 16, In::BF16, "<4 x i16>", "<4 x float>"},
    {"gfx90a", "llvm.amdgcn.mfma.i32.32x32x8i8", false, 32, 32, 8, In::I8, "i32", "<16 x i32>"},
    {"gfx90a", "llvm.amdgcn.mfma.i32.16x16x16i8", false, 16, 16, 16, In::I8, "i32", "<4 x i32>"},
    {"gfx942", "llvm.amdgcn.mfma.i32.32x32x16.i8", false, 32, 32, 16, In::I8, "i64", "<16 x i32>"},
    {"gfx942", "llvm.amdgcn.mfma.i32.16x16x32.i8", false, 16, 16, 32, In::I8, "i64", "<4 x i32>"},
    {"gfx942", "llvm.amdgcn.mfma.f32.32x32x2f32", false, 32, 32, 2, In::F32, "float", "<16 x float>"},
    {"gfx942", "llvm.amdgcn.mfma.f32.16x16x4f32", false, 16, 16, 4, In::F32, "float", "<4 x float>"},
    {"gfx950", "llvm.amdgcn.mfma.f32.32x32x16.f16", false, 32, 32, 16, In::F16, "<8 x half>", "<16 x float>"},
    {"gfx950", "llvm.amdgcn.mfma.f32.16x16x32.f16", false, 16, 16, 32, In::F16, "<8 x half>", "<4 x float>"},
    {"gfx950", "llvm.amdgcn.mfma.f32.32x32x16.bf16", false, 32, 32, 16, In::BF16, "<8 x bfloat>", "<16 x float>"},
    {"gfx950", "llvm.amdgcn.mfma.f32.16x16x32.bf16", false, 16, 16, 32, In::BF16, "<8 x bfloat>", "<4 x float>"},
    {"gfx950", "llvm.amdgcn.mfma.i32.32x32x32.i8", false, 32, 32, 32, In::I8, "<4 x i32>", "<16 x i32>"},
    {"gfx950", "llvm.amdgcn.mfma.i32.16x16x64.i8", false, 16, 16, 64, In::I8, "<4 x i32>", "<4 x i32>"},
    {"gfx1100", "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16", true, 16, 16, 16, In::F16, "<16 x half>", "<8 x float>"},
    {"gfx1100", "llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16", true, 16, 16, 16, In::BF16, "<16 x i16>", "<8 x float>"},
    {"gfx1100", "llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v4i32", true, 16, 16, 16, In::I8, "<4 x i32>", "<8 x i32>"},
    // 8-bit floats: FNUZ on gfx942, OCP on gfx950 (the same intrinsics).
    {"gfx942", "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8", false, 32, 32, 16, In::Fp8, "i64", "<16 x float>"},
    {"gfx942", "llvm.amdgcn.mfma.f32.32x32x16.fp8.bf8", false, 32, 32, 16, In::Fp8, "i64", "<16 x float>", int(In::Bf8)},
    {"gfx942", "llvm.amdgcn.mfma.f32.32x32x16.bf8.fp8", false, 32, 32, 16, In::Bf8, "i64", "<16 x float>", int(In::Fp8)},
    {"gfx942", "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8", false, 32, 32, 16, In::Bf8, "i64", "<16 x float>"},
    {"gfx942", "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8", false, 16, 16, 32, In::Fp8, "i64", "<4 x float>"},
    {"gfx942", "llvm.amdgcn.mfma.f32.16x16x32.bf8.fp8", false, 16, 16, 32, In::Bf8, "i64", "<4 x float>", int(In::Fp8)},
    {"gfx950", "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8", false, 32, 32, 16, In::Fp8, "i64", "<16 x float>"},
    {"gfx950", "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8", false, 32, 32, 16, In::Bf8, "i64", "<16 x float>"},
    {"gfx950", "llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8", false, 16, 16, 32, In::Fp8, "i64", "<4 x float>", int(In::Bf8)},
    {"gfx950", "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8", false, 16, 16, 32, In::Bf8, "i64", "<4 x float>"},
};

} // namespace

TEST_CASE("emulator: every MFMA and WMMA instruction the compiler may emit computes C + A * B") {
  unsigned seed = 1;
  for (const Case &c : kCases) runCase(c, seed++);
}

TEST_CASE("emulator: an MFMA with a broadcast modifier (cbsz) is refused with a message") {
  Device dev = Device::emulator("gfx942");
  std::string ir = "declare i32 @llvm.amdgcn.workitem.id.x()\n"
                   "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, <4 x float>, i32 "
                   "immarg, i32 immarg, i32 immarg)\n"
                   "define amdgpu_kernel void @bcast(ptr addrspace(1) %d) {\n"
                   "  %v = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> zeroinitializer, <4 x half> "
                   "zeroinitializer, <4 x float> zeroinitializer, i32 1, i32 0, i32 0)\n"
                   "  store <4 x float> %v, ptr addrspace(1) %d\n  ret void\n}\n";
  CompiledKernel k = testing::kernelFromIR("bcast", ir, {{TraceArg::Pointer, DType::F32}});
  CHECK_THROWS_WITH_AS(dev.impl().load(k), doctest::Contains("cbsz = abid = blgp = 0 only (cbsz is 1)"), Error);
}

namespace {
// An MFMA (16x16x16 f16, zero operands) that lanes below `lanes` execute;
// the others meet their wave at a wave barrier instead.
std::string partialMfmaIR(unsigned lanes) {
  return "declare i32 @llvm.amdgcn.workitem.id.x()\n"
         "declare void @llvm.amdgcn.wave.barrier()\n"
         "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, <4 x float>, i32 immarg, i32 "
         "immarg, i32 immarg)\n"
         "define amdgpu_kernel void @partial(ptr addrspace(1) %d) {\n"
         "  %lane = call i32 @llvm.amdgcn.workitem.id.x()\n"
         "  %in = icmp ult i32 %lane, " + std::to_string(lanes) + "\n"
         "  br i1 %in, label %mfma, label %other\n"
         "mfma:\n"
         "  %v = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> zeroinitializer, <4 x half> "
         "zeroinitializer, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)\n"
         "  %l = zext i32 %lane to i64\n"
         "  %p = getelementptr <4 x float>, ptr addrspace(1) %d, i64 %l\n"
         "  store <4 x float> %v, ptr addrspace(1) %p\n"
         "  ret void\n"
         "other:\n"
         "  call void @llvm.amdgcn.wave.barrier()\n"
         "  ret void\n}\n";
}

void launchPartial(unsigned mfmaLanes, uint32_t blockSize) {
  Device dev = Device::emulator("gfx942");
  auto d = dev.upload(std::vector<float>(4 * 64, 0.0f));
  CompiledKernel k = testing::kernelFromIR("partial", partialMfmaIR(mfmaLanes), {{TraceArg::Pointer, DType::F32}});
  auto loaded = dev.impl().load(k);
  void *ptr = d.devicePtr();
  std::vector<uint8_t> args(8);
  std::memcpy(args.data(), &ptr, 8);
  dev.impl().launch(*loaded, {1, 1, 1}, blockSize, args.data(), args.size());
}
} // namespace

// The wave's last lane to arrive computes the whole wave's D: a wave whose
// lanes did not all reach the instruction (some met elsewhere), or a partial
// last wave, is an error, not a product of other lanes' stale registers.
TEST_CASE("emulator: an MFMA reached by part of a wave, or in a partial wave, is an error") {
  CHECK_NOTHROW(launchPartial(64, 64));
  CHECK_THROWS_WITH_AS(launchPartial(32, 64), doctest::Contains("was reached by only part of a wave"), Error);
  CHECK_THROWS_WITH_AS(launchPartial(64, 32), doctest::Contains("needs a full wave"), Error);
}
