// The one table of AMDGPU targets tessel supports (DESIGN principle 6).
#include "tessel/lowering/target.hpp"

#include "tessel/core/error.hpp"

#include <algorithm>
#include <array>

namespace tessel {
namespace {

constexpr unsigned kLds64KiB = 64 * 1024;
constexpr unsigned kMaxWorkgroup = 1024;

using enum DType;
constexpr MatrixCore kMfma = MatrixCore::Mfma, kWmma = MatrixCore::Wmma;

// CDNA2 (gfx90a): MFMA with 4-deep f16, bf16 (_1k) and i8 steps.
constexpr MatrixInstr kGfx90aMatrix[] = {
    {kMfma, F16, F32, 32, 32, 8, "llvm.amdgcn.mfma.f32.32x32x8f16"},
    {kMfma, F16, F32, 16, 16, 16, "llvm.amdgcn.mfma.f32.16x16x16f16"},
    {kMfma, BF16, F32, 32, 32, 8, "llvm.amdgcn.mfma.f32.32x32x8bf16.1k"},
    {kMfma, BF16, F32, 16, 16, 16, "llvm.amdgcn.mfma.f32.16x16x16bf16.1k"},
    {kMfma, I8, I32, 32, 32, 8, "llvm.amdgcn.mfma.i32.32x32x8i8"},
    {kMfma, I8, I32, 16, 16, 16, "llvm.amdgcn.mfma.i32.16x16x16i8"},
    {kMfma, F32, F32, 32, 32, 2, "llvm.amdgcn.mfma.f32.32x32x2f32"},
    {kMfma, F32, F32, 16, 16, 4, "llvm.amdgcn.mfma.f32.16x16x4f32"},
};
// CDNA3 (gfx942): i8 steps twice as deep (the 8-deep ones are gone).
constexpr MatrixInstr kGfx942Matrix[] = {
    {kMfma, F16, F32, 32, 32, 8, "llvm.amdgcn.mfma.f32.32x32x8f16"},
    {kMfma, F16, F32, 16, 16, 16, "llvm.amdgcn.mfma.f32.16x16x16f16"},
    {kMfma, BF16, F32, 32, 32, 8, "llvm.amdgcn.mfma.f32.32x32x8bf16.1k"},
    {kMfma, BF16, F32, 16, 16, 16, "llvm.amdgcn.mfma.f32.16x16x16bf16.1k"},
    {kMfma, I8, I32, 32, 32, 16, "llvm.amdgcn.mfma.i32.32x32x16.i8"},
    {kMfma, I8, I32, 16, 16, 32, "llvm.amdgcn.mfma.i32.16x16x32.i8"},
    {kMfma, F32, F32, 32, 32, 2, "llvm.amdgcn.mfma.f32.32x32x2f32"},
    {kMfma, F32, F32, 16, 16, 4, "llvm.amdgcn.mfma.f32.16x16x4f32"},
    // 8-bit floats (FNUZ): E4M3 is "fp8", E5M2 "bf8"; A and B in any mix.
    {kMfma, F8E4M3FNUZ, F32, 32, 32, 16, "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8", F8E4M3FNUZ},
    {kMfma, F8E4M3FNUZ, F32, 32, 32, 16, "llvm.amdgcn.mfma.f32.32x32x16.fp8.bf8", F8E5M2FNUZ},
    {kMfma, F8E5M2FNUZ, F32, 32, 32, 16, "llvm.amdgcn.mfma.f32.32x32x16.bf8.fp8", F8E4M3FNUZ},
    {kMfma, F8E5M2FNUZ, F32, 32, 32, 16, "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8", F8E5M2FNUZ},
    {kMfma, F8E4M3FNUZ, F32, 16, 16, 32, "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8", F8E4M3FNUZ},
    {kMfma, F8E4M3FNUZ, F32, 16, 16, 32, "llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8", F8E5M2FNUZ},
    {kMfma, F8E5M2FNUZ, F32, 16, 16, 32, "llvm.amdgcn.mfma.f32.16x16x32.bf8.fp8", F8E4M3FNUZ},
    {kMfma, F8E5M2FNUZ, F32, 16, 16, 32, "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8", F8E5M2FNUZ},
};
// CDNA4 (gfx950): f16, bf16 and i8 steps twice as deep again.
constexpr const char *kF8f6f4x64 = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4";
constexpr const char *kF8f6f4x128 = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4";
constexpr MatrixInstr kGfx950Matrix[] = {
    {kMfma, F16, F32, 32, 32, 16, "llvm.amdgcn.mfma.f32.32x32x16.f16"},
    {kMfma, F16, F32, 16, 16, 32, "llvm.amdgcn.mfma.f32.16x16x32.f16"},
    {kMfma, F16, F32, 32, 32, 8, "llvm.amdgcn.mfma.f32.32x32x8f16"},
    {kMfma, F16, F32, 16, 16, 16, "llvm.amdgcn.mfma.f32.16x16x16f16"},
    {kMfma, BF16, F32, 32, 32, 16, "llvm.amdgcn.mfma.f32.32x32x16.bf16"},
    {kMfma, BF16, F32, 16, 16, 32, "llvm.amdgcn.mfma.f32.16x16x32.bf16"},
    {kMfma, I8, I32, 32, 32, 32, "llvm.amdgcn.mfma.i32.32x32x32.i8"},
    {kMfma, I8, I32, 16, 16, 64, "llvm.amdgcn.mfma.i32.16x16x64.i8"},
    {kMfma, F32, F32, 32, 32, 2, "llvm.amdgcn.mfma.f32.32x32x2f32"},
    {kMfma, F32, F32, 16, 16, 4, "llvm.amdgcn.mfma.f32.16x16x4f32"},
    // 8-bit floats (OCP) four times as deep (CDNA4's f8f6f4 MFMAs, 32 bytes a
    // lane as two runs of 16): A's and B's formats are operands, so one
    // intrinsic serves every mix. Before the 16-deep ones: a K they do not
    // divide falls to those.
    {kMfma, F8E4M3FN, F32, 32, 32, 64, kF8f6f4x64, F8E4M3FN, 16, true},
    {kMfma, F8E4M3FN, F32, 32, 32, 64, kF8f6f4x64, F8E5M2, 16, true},
    {kMfma, F8E5M2, F32, 32, 32, 64, kF8f6f4x64, F8E4M3FN, 16, true},
    {kMfma, F8E5M2, F32, 32, 32, 64, kF8f6f4x64, F8E5M2, 16, true},
    {kMfma, F8E4M3FN, F32, 16, 16, 128, kF8f6f4x128, F8E4M3FN, 16, true},
    {kMfma, F8E4M3FN, F32, 16, 16, 128, kF8f6f4x128, F8E5M2, 16, true},
    {kMfma, F8E5M2, F32, 16, 16, 128, kF8f6f4x128, F8E4M3FN, 16, true},
    {kMfma, F8E5M2, F32, 16, 16, 128, kF8f6f4x128, F8E5M2, 16, true},
    // 8-bit floats (OCP: gfx950's same instructions read OCP's formats): E4M3 is "fp8", E5M2 "bf8"; A and B in any mix.
    {kMfma, F8E4M3FN, F32, 32, 32, 16, "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8", F8E4M3FN},
    {kMfma, F8E4M3FN, F32, 32, 32, 16, "llvm.amdgcn.mfma.f32.32x32x16.fp8.bf8", F8E5M2},
    {kMfma, F8E5M2, F32, 32, 32, 16, "llvm.amdgcn.mfma.f32.32x32x16.bf8.fp8", F8E4M3FN},
    {kMfma, F8E5M2, F32, 32, 32, 16, "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8", F8E5M2},
    {kMfma, F8E4M3FN, F32, 16, 16, 32, "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8", F8E4M3FN},
    {kMfma, F8E4M3FN, F32, 16, 16, 32, "llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8", F8E5M2},
    {kMfma, F8E5M2, F32, 16, 16, 32, "llvm.amdgcn.mfma.f32.16x16x32.bf8.fp8", F8E4M3FN},
    {kMfma, F8E5M2, F32, 16, 16, 32, "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8", F8E5M2},
};
// RDNA3 (gfx1100): WMMA, 16x16x16 per wave of 32.
constexpr MatrixInstr kGfx1100Matrix[] = {
    {kWmma, F16, F32, 16, 16, 16, "llvm.amdgcn.wmma.f32.16x16x16.f16"},
    {kWmma, BF16, F32, 16, 16, 16, "llvm.amdgcn.wmma.f32.16x16x16.bf16"},
    {kWmma, I8, I32, 16, 16, 16, "llvm.amdgcn.wmma.i32.16x16x16.iu8"},
};

// Raw buffer resource dword 3. gfx9: NUM_FORMAT 7 (float) at bits 14:12,
// DATA_FORMAT 4 (32) at bits 18:15. gfx11: the same format bits, bit 24, and
// OOB_SELECT = 3 at bits 29:28 (raw: out of range when offset + size >
// num_records). The values MLIR's AMDGPU-to-ROCDL conversion uses.
constexpr uint32_t kGfx9BufferFlags = 0x00027000;
constexpr uint32_t kGfx11BufferFlags = 0x31027000;

// gfx1100 compiles without LLVM's 16-bit register halves (-real-true16, on by
// default since LLVM 20): with them, the halves a matmul's B tile gathers
// along K for its LDS writes were v_mov_b16 into the loaded registers'
// halves, and the register allocator copied the next tile's loads out of
// their registers right after issuing them, waiting for memory in the loop
// (128x128x64 f16 at 8 waves: 1047 against 406 llvm-mca cycles, the 16
// halves packed by v_perm_b32 instead).
constexpr const char *kGfx1100Features = "+wavefrontsize32,-real-true16";

// isaVersion follows the oclc_isa_version_<gfx>.bc convention: major*1000 +
// minor*100 + stepping, with the hex stepping of gfx90a ('a' = 10) spelled 10.
constexpr std::array<TargetFacts, 4> kTargets = {{
    {"gfx90a", 64, kLds64KiB, kMaxWorkgroup, 9010, "+wavefrontsize64", kGfx90aMatrix, kGfx9BufferFlags, false, true, true,
     512, 8, 8, 4, 16, kLds64KiB, true, 4, 64, Fp8Family::None, false, 4},
    {"gfx942", 64, kLds64KiB, kMaxWorkgroup, 9402, "+wavefrontsize64", kGfx942Matrix, kGfx9BufferFlags, false, true, true,
     512, 8, 8, 4, 16, kLds64KiB, true, 4, 64, Fp8Family::Fnuz, false, 4},
    {"gfx950", 64, 160 * 1024, kMaxWorkgroup, 9500, "+wavefrontsize64", kGfx950Matrix, kGfx9BufferFlags, false, true, true,
     512, 8, 8, 4, 16, 160 * 1024, true, 4, 64, Fp8Family::Ocp, false, 16, /*ldsTransposeReads=*/true,
     /*minimumMaximum=*/true},
    {"gfx1100", 32, kLds64KiB, kMaxWorkgroup, 11000, kGfx1100Features, kGfx1100Matrix, kGfx11BufferFlags, true, false, false,
     1536, 24, 16, 4, 32, 128 * 1024, false, 1, 32, Fp8Family::None, /*fp8DotThroughF16=*/true, 0,
     /*ldsTransposeReads=*/false, /*minimumMaximum=*/false, /*fmaMixAdds=*/true},
}};

} // namespace

std::vector<MatrixInstr> TargetFacts::matrixInstrsFor(DType operand, DType accumulator) const {
  return matrixInstrsFor(operand, operand, accumulator);
}

std::vector<MatrixInstr> TargetFacts::matrixInstrsFor(DType a, DType b, DType accumulator) const {
  std::vector<MatrixInstr> out;
  for (const MatrixInstr &i : matrixInstrs)
    if (i.operand == a && i.operandB == b && i.accumulator == accumulator)
      out.push_back(i);
  return out;
}

Fp8Family TargetFacts::fp8MatrixFamily() const {
  for (const MatrixInstr &i : matrixInstrs)
    if (isFloat8(i.operand))
      return i.operand == F8E4M3FNUZ || i.operand == F8E5M2FNUZ ? Fp8Family::Fnuz : Fp8Family::Ocp;
  return Fp8Family::None;
}

bool TargetFacts::convertsFp8(DType t) const {
  switch (fp8Conversions) {
  case Fp8Family::Fnuz: return t == F8E4M3FNUZ || t == F8E5M2FNUZ;
  case Fp8Family::Ocp: return t == F8E4M3FN || t == F8E5M2;
  case Fp8Family::None: return false;
  }
  return false;
}

namespace {
// gfx8+ (LLVM's getOccupancyWithNumSGPRs): waves per SIMD that many SGPRs allow.
unsigned sgprWaves(unsigned sgprs) { return sgprs <= 80 ? 10 : sgprs <= 88 ? 9 : sgprs <= 100 ? 8 : 7; }
unsigned roundUp(unsigned v, unsigned granule) { return (v + granule - 1) / granule * granule; }
} // namespace

Occupancy occupancyOf(const TargetFacts &target, const KernelResources &resources, unsigned blockSize,
                      unsigned ldsBytes) {
  Occupancy out;
  const unsigned regs = roundUp(std::max(1u, resources.vgprs), target.registerGranule);
  out.registerWaves = target.waveSlots;
  const char *registerLimiter = "wave slots";
  if (unsigned w = target.registersPerLane / regs; w < out.registerWaves) {
    out.registerWaves = w;
    registerLimiter = "VGPRs";
  }
  if (target.sgprLimited)
    if (unsigned w = sgprWaves(resources.sgprs); w < out.registerWaves) {
      out.registerWaves = w;
      registerLimiter = "SGPRs";
    }
  // Whole workgroups: their waves spread over the CU's SIMDs.
  const unsigned wavesPerWorkgroup = std::max(1u, (blockSize + target.waveSize - 1) / target.waveSize);
  unsigned workgroups = out.registerWaves * target.simdsPerCu / wavesPerWorkgroup;
  out.limiter = registerLimiter;
  if (wavesPerWorkgroup > 1 && target.workgroupsPerCu < workgroups) {
    workgroups = target.workgroupsPerCu;
    out.limiter = "barriers";
  }
  if (ldsBytes) {
    out.ldsWorkgroups = target.ldsPerCu / ldsBytes;
    if (out.ldsWorkgroups < workgroups) {
      workgroups = out.ldsWorkgroups;
      out.limiter = "LDS";
    }
  }
  out.wavesPerSimd = std::min<double>(double(workgroups) * wavesPerWorkgroup / target.simdsPerCu,
                                      target.waveSlots);
  return out;
}

unsigned registersForWaves(const TargetFacts &target, unsigned waves) {
  if (waves == 0)
    return target.registersPerLane;
  return target.registersPerLane / waves / target.registerGranule * target.registerGranule;
}

unsigned wavesForAnotherWorkgroup(const TargetFacts &target, unsigned registerWaves, unsigned blockSize) {
  const unsigned wavesPerWorkgroup = std::max(1u, (blockSize + target.waveSize - 1) / target.waveSize);
  const unsigned workgroups = registerWaves * target.simdsPerCu / wavesPerWorkgroup;
  return ((workgroups + 1) * wavesPerWorkgroup + target.simdsPerCu - 1) / target.simdsPerCu;
}

const TargetFacts *lookupTarget(std::string_view arch) {
  for (const TargetFacts &target : kTargets)
    if (arch == target.arch)
      return &target;
  return nullptr;
}

const TargetFacts &requireTarget(std::string_view arch) {
  if (const TargetFacts *target = lookupTarget(arch))
    return *target;
  std::string message = "unsupported AMDGPU target '" + std::string(arch) +
                        "'; tessel supports: ";
  bool first = true;
  for (const TargetFacts &target : kTargets) {
    message += first ? "" : ", ";
    message += target.arch;
    first = false;
  }
  throw Error(message);
}

std::vector<std::string> supportedTargets() {
  std::vector<std::string> names;
  names.reserve(kTargets.size());
  for (const TargetFacts &target : kTargets)
    names.emplace_back(target.arch);
  return names;
}

} // namespace tessel
