// The target table: facts per target and the error for an unknown one.
#include "tessel/lowering/target.hpp"
#include "tessel/core/error.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace tessel;

TEST_CASE("target table holds the facts of each supported target") {
  struct Expected {
    const char *arch;
    unsigned waveSize, ldsBytes, isaVersion;
    const char *feature;
    MatrixCore matrixKind;
    bool packedF32; // v_pk_add/mul/fma_f32: CDNA2 and on, not RDNA3
  };
  const Expected expected[] = {
      {"gfx90a", 64, 65536, 9010, "+wavefrontsize64", MatrixCore::Mfma, true},
      {"gfx942", 64, 65536, 9402, "+wavefrontsize64", MatrixCore::Mfma, true},
      {"gfx950", 64, 163840, 9500, "+wavefrontsize64", MatrixCore::Mfma, true},
      {"gfx1100", 32, 65536, 11000, "+wavefrontsize32", MatrixCore::Wmma, false},
  };
  for (const Expected &e : expected) {
    CAPTURE(e.arch);
    const TargetFacts *target = lookupTarget(e.arch);
    REQUIRE(target != nullptr);
    CHECK(std::string(target->arch) == e.arch);
    CHECK(target->waveSize == e.waveSize);
    CHECK(target->ldsBytes == e.ldsBytes);
    CHECK(target->maxWorkgroupSize == 1024);
    CHECK(target->isaVersion == e.isaVersion);
    CHECK(std::string(target->features).find(e.feature) != std::string::npos);
    CHECK(target->packedF32 == e.packedF32);
    REQUIRE(!target->matrixInstrs.empty());
    for (const MatrixInstr &i : target->matrixInstrs)
      CHECK(i.kind == e.matrixKind);
    CHECK(&requireTarget(e.arch) == target);
  }
  CHECK(supportedTargets() == std::vector<std::string>{"gfx90a", "gfx942", "gfx950", "gfx1100"});
}

TEST_CASE("an unknown target is nullptr from lookup and an Error listing the supported ones") {
  CHECK(lookupTarget("gfx1200") == nullptr);
  CHECK(lookupTarget("") == nullptr);
  CHECK(lookupTarget("gfx94") == nullptr);
  std::string message;
  try {
    requireTarget("gfx1200");
  } catch (const Error &error) {
    message = error.what();
  }
  CAPTURE(message);
  CHECK(message.find("gfx1200") != std::string::npos);
  for (const char *arch : {"gfx90a", "gfx942", "gfx950", "gfx1100"})
    CHECK(message.find(arch) != std::string::npos);
}

TEST_CASE("matrix-core instructions per target and element type") {
  auto shapes = [](const char *arch, DType operand, DType accumulator) {
    std::vector<std::string> out;
    for (const MatrixInstr &i : requireTarget(arch).matrixInstrsFor(operand, accumulator))
      out.push_back(std::to_string(i.m) + "x" + std::to_string(i.n) + "x" + std::to_string(i.k));
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(shapes("gfx90a", DType::F16, DType::F32) == V{"32x32x8", "16x16x16"});
  CHECK(shapes("gfx942", DType::F16, DType::F32) == V{"32x32x8", "16x16x16"});
  CHECK(shapes("gfx950", DType::F16, DType::F32) == V{"32x32x16", "16x16x32", "32x32x8", "16x16x16"});
  CHECK(shapes("gfx1100", DType::F16, DType::F32) == V{"16x16x16"});
  CHECK(shapes("gfx90a", DType::I8, DType::I32) == V{"32x32x8", "16x16x16"});
  CHECK(shapes("gfx942", DType::I8, DType::I32) == V{"32x32x16", "16x16x32"});
  CHECK(shapes("gfx950", DType::I8, DType::I32) == V{"32x32x32", "16x16x64"});
  CHECK(shapes("gfx942", DType::BF16, DType::F32) == V{"32x32x8", "16x16x16"});
  CHECK(shapes("gfx942", DType::F32, DType::F32) == V{"32x32x2", "16x16x4"});
  // No matrix instruction takes i8 into f32, or f64 at all in the table.
  CHECK(shapes("gfx942", DType::I8, DType::F32).empty());
  CHECK(shapes("gfx1100", DType::F32, DType::F32).empty());
  // 8-bit floats: gfx942's MFMAs take the FNUZ formats, gfx950's the OCP ones.
  CHECK(shapes("gfx942", DType::F8E4M3FNUZ, DType::F32) == V{"32x32x16", "16x16x32"});
  CHECK(shapes("gfx942", DType::F8E5M2FNUZ, DType::F32) == V{"32x32x16", "16x16x32"});
  // gfx950: the f8f6f4 forms first (a K they divide), then the 16-deep ones.
  CHECK(shapes("gfx950", DType::F8E4M3FN, DType::F32) == V{"32x32x64", "16x16x128", "32x32x16", "16x16x32"});
  CHECK(shapes("gfx950", DType::F8E5M2, DType::F32) == V{"32x32x64", "16x16x128", "32x32x16", "16x16x32"});
  CHECK(shapes("gfx942", DType::F8E4M3FN, DType::F32).empty());
  CHECK(shapes("gfx950", DType::F8E4M3FNUZ, DType::F32).empty());
  CHECK(shapes("gfx90a", DType::F8E4M3FNUZ, DType::F32).empty());
  CHECK(shapes("gfx1100", DType::F8E4M3FN, DType::F32).empty());
}

TEST_CASE("8-bit float matrix instructions: the mixes, the family each target takes, gfx1100 through f16") {
  auto intrinsics = [](const char *arch, DType a, DType b) {
    std::vector<std::string> out;
    for (const MatrixInstr &i : requireTarget(arch).matrixInstrsFor(a, b, DType::F32))
      out.push_back(i.intrinsic);
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(intrinsics("gfx942", DType::F8E4M3FNUZ, DType::F8E5M2FNUZ) ==
        V{"llvm.amdgcn.mfma.f32.32x32x16.fp8.bf8", "llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8"});
  CHECK(intrinsics("gfx942", DType::F8E5M2FNUZ, DType::F8E4M3FNUZ) ==
        V{"llvm.amdgcn.mfma.f32.32x32x16.bf8.fp8", "llvm.amdgcn.mfma.f32.16x16x32.bf8.fp8"});
  // gfx950's f8f6f4 MFMAs: one intrinsic for every mix (the formats are its
  // operands), 32 bytes a lane in runs of 16.
  const char *x64 = "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4", *x128 = "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4";
  CHECK(intrinsics("gfx950", DType::F8E5M2, DType::F8E5M2) ==
        V{x64, x128, "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8", "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8"});
  CHECK(intrinsics("gfx950", DType::F8E4M3FN, DType::F8E4M3FN) ==
        V{x64, x128, "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8", "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8"});
  CHECK(intrinsics("gfx950", DType::F8E4M3FN, DType::F8E5M2) ==
        V{x64, x128, "llvm.amdgcn.mfma.f32.32x32x16.fp8.bf8", "llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8"});
  for (const MatrixInstr &i : requireTarget("gfx950").matrixInstrsFor(DType::F8E5M2, DType::F8E4M3FN, DType::F32)) {
    const bool deep = i.k == 64 || i.k == 128;
    CHECK(i.formatOperands == deep);
    CHECK(i.kRun == (deep ? 16u : 0u));
  }
  CHECK(intrinsics("gfx950", DType::F8E4M3FN, DType::F8E5M2FNUZ).empty());
  // The same-type form still finds the same-type rows only.
  CHECK(requireTarget("gfx942").matrixInstrsFor(DType::F8E5M2FNUZ, DType::F32).size() == 2);
  CHECK(requireTarget("gfx90a").fp8MatrixFamily() == Fp8Family::None);
  CHECK(requireTarget("gfx942").fp8MatrixFamily() == Fp8Family::Fnuz);
  CHECK(requireTarget("gfx950").fp8MatrixFamily() == Fp8Family::Ocp);
  CHECK(requireTarget("gfx1100").fp8MatrixFamily() == Fp8Family::None);
  for (const std::string &arch : supportedTargets())
    CHECK(requireTarget(arch).fp8DotThroughF16 == (arch == "gfx1100"));
}

TEST_CASE("occupancy: waves per SIMD from registers, wave slots, barriers and LDS") {
  const TargetFacts &gfx942 = requireTarget("gfx942"), &gfx950 = requireTarget("gfx950"),
                    &gfx1100 = requireTarget("gfx1100");
  auto regs = [](unsigned vgprs, unsigned sgprs = 32) {
    KernelResources r;
    r.vgprs = vgprs;
    r.sgprs = sgprs;
    return r;
  };
  // CDNA3: 512 registers per lane in granules of 8, 8 slots, 4 SIMDs.
  Occupancy o = occupancyOf(gfx942, regs(256), 256, 0);
  CHECK(o.registerWaves == 2);
  CHECK(o.wavesPerSimd == 2);
  CHECK(std::string(o.limiter) == "VGPRs");
  CHECK(occupancyOf(gfx942, regs(176), 256, 0).registerWaves == 2); // 176 -> 176: 512 / 176 = 2
  CHECK(occupancyOf(gfx942, regs(170), 256, 0).registerWaves == 2); // rounded up to 176
  CHECK(occupancyOf(gfx942, regs(168), 256, 0).registerWaves == 3);
  CHECK(occupancyOf(gfx942, regs(110), 256, 0).registerWaves == 4); // 112
  o = occupancyOf(gfx942, regs(24), 256, 0);
  CHECK(o.wavesPerSimd == 8);
  CHECK(std::string(o.limiter) == "wave slots");
  // SGPRs past 100 leave 7 waves on gfx9.
  o = occupancyOf(gfx942, regs(24, 104), 256, 0);
  CHECK(o.registerWaves == 7);
  CHECK(std::string(o.limiter) == "SGPRs");
  // LDS: 64 KiB per CU on gfx942, whole workgroups of 4 waves over 4 SIMDs.
  o = occupancyOf(gfx942, regs(64), 256, 40000);
  CHECK(o.ldsWorkgroups == 1);
  CHECK(o.wavesPerSimd == 1);
  CHECK(std::string(o.limiter) == "LDS");
  o = occupancyOf(gfx950, regs(64), 256, 40000); // 160 KiB: 4 workgroups
  CHECK(o.ldsWorkgroups == 4);
  CHECK(o.wavesPerSimd == 4);
  // One wave per workgroup: 16 workgroups per CU by barriers do not bind it.
  CHECK(occupancyOf(gfx942, regs(24), 64, 0).wavesPerSimd == 8);
  // Workgroups of 2 waves over 4 SIMDs with 40000 bytes of LDS: one, half a wave per SIMD.
  CHECK(occupancyOf(gfx942, regs(24), 128, 40000).wavesPerSimd == 0.5);
  // RDNA3 wave32: 1536 VGPRs in granules of 24, 16 slots, 128 KiB per WGP.
  CHECK(occupancyOf(gfx1100, regs(100), 256, 0).registerWaves == 12); // 120
  CHECK(occupancyOf(gfx1100, regs(24), 256, 0).registerWaves == 16);
  CHECK(occupancyOf(gfx1100, regs(24), 256, 40000).ldsWorkgroups == 3);
  // The registers that allow a number of waves.
  CHECK(registersForWaves(gfx942, 3) == 168);
  CHECK(registersForWaves(gfx942, 2) == 256);
  CHECK(registersForWaves(gfx1100, 12) == 120);
}

TEST_CASE("occupancy: the waves by registers that hold one more whole workgroup") {
  const TargetFacts &gfx942 = requireTarget("gfx942");
  // 8-wave workgroups, two waves a SIMD each: 7 waves by registers hold 3
  // workgroups (6 a SIMD), 8 hold 4; 6 hold 3 as well.
  CHECK(wavesForAnotherWorkgroup(gfx942, 7, 512) == 8);
  CHECK(wavesForAnotherWorkgroup(gfx942, 6, 512) == 8);
  CHECK(wavesForAnotherWorkgroup(gfx942, 4, 512) == 6);
  // 4-wave workgroups (one a SIMD) and smaller ones: one more wave.
  CHECK(wavesForAnotherWorkgroup(gfx942, 4, 256) == 5);
  CHECK(wavesForAnotherWorkgroup(gfx942, 2, 128) == 3);
  CHECK(wavesForAnotherWorkgroup(gfx942, 3, 64) == 4);
  // What it asks for does give another workgroup.
  KernelResources r;
  r.vgprs = 72;
  r.sgprs = 32;
  const Occupancy seven = occupancyOf(gfx942, r, 512, 16384);
  CHECK(seven.registerWaves == 7);
  CHECK(seven.wavesPerSimd == 6);
  r.vgprs = registersForWaves(gfx942, wavesForAnotherWorkgroup(gfx942, seven.registerWaves, 512));
  CHECK(r.vgprs == 64);
  CHECK(occupancyOf(gfx942, r, 512, 16384).wavesPerSimd == 8);
}

TEST_CASE("8-bit float conversion instructions per target") {
  using enum DType;
  // gfx942 (CDNA3) converts the FNUZ formats, gfx950 (CDNA4) OCP's; gfx90a
  // and gfx1100 have no such instructions.
  CHECK(requireTarget("gfx942").convertsFp8(F8E4M3FNUZ));
  CHECK(requireTarget("gfx942").convertsFp8(F8E5M2FNUZ));
  CHECK_FALSE(requireTarget("gfx942").convertsFp8(F8E4M3FN));
  CHECK_FALSE(requireTarget("gfx942").convertsFp8(F8E5M2));
  CHECK(requireTarget("gfx950").convertsFp8(F8E4M3FN));
  CHECK(requireTarget("gfx950").convertsFp8(F8E5M2));
  CHECK_FALSE(requireTarget("gfx950").convertsFp8(F8E4M3FNUZ));
  for (const char *arch : {"gfx90a", "gfx1100"})
    for (DType t : {F8E4M3FN, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ})
      CHECK_FALSE(requireTarget(arch).convertsFp8(t));
  CHECK_FALSE(requireTarget("gfx942").convertsFp8(F16));
}
