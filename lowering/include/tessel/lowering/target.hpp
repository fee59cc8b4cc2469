// Facts about the AMDGPU targets tessel compiles for, in one table
// (DESIGN principle 6: targets are data).
#pragma once

#include "tessel/core/dtype.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

// The family of 8-bit float formats a target's instructions work in.
enum class Fp8Family : uint8_t { None, Fnuz, Ocp };

// One matrix-core instruction: D[m x n] = A[m x k] * B[k x n] + C per wave,
// A of `operand` elements, B of `operandB` (the same but for the 8-bit float
// mixes: v_mfma_f32_16x16x32_fp8_bf8 takes E4M3 A and E5M2 B), C and D of
// `accumulator`.
enum class MatrixCore : uint8_t { Mfma, Wmma };
struct MatrixInstr {
  MatrixCore kind;
  DType operand, accumulator;
  unsigned m, n, k;
  const char *intrinsic; // the LLVM intrinsic, "llvm.amdgcn.mfma.f32.32x32x8f16"
  DType operandB = operand;
  // The runs of consecutive K a lane holds of its k / (64 / m) (0: one run).
  // gfx950's f8f6f4 MFMAs read 8-bit floats as two runs of 16 a lane, the
  // lane groups' runs between (CDNA4: 32x32x64 lane group g holds K
  // g * 16 + [0, 16) and 32 + g * 16 + [0, 16)).
  unsigned kRun = 0;
  // gfx950's f8f6f4 MFMAs: one intrinsic (llvm.amdgcn.mfma.scale.*.f8f6f4,
  // zero scales: LLVM selects the unscaled instruction) whose cbsz and blgp
  // operands name A's and B's formats (0 E4M3, 1 E5M2).
  bool formatOperands = false;
};

struct TargetFacts {
  const char *arch;            // "gfx942"
  unsigned waveSize;           // 64 (gfx9) or 32 (gfx11)
  unsigned ldsBytes;           // workgroup memory per workgroup
  unsigned maxWorkgroupSize;   // threads per workgroup
  unsigned isaVersion;         // e.g. 9402, for __oclc_ISA_version
  const char *features;        // LLVM target features string ("+wavefrontsize64", ...)
  std::span<const MatrixInstr> matrixInstrs; // the matrix-core instructions, largest first
  // Dword 3 of a raw buffer resource (format and out-of-range mode): masked
  // global accesses whose offsets are known to fit in 31 bits use buffer
  // instructions (a masked-off lane reads 0 and writes nothing, no branch).
  // 0: the target takes no buffer instructions; masked accesses branch.
  // gfx9: range check offset >= num_records per dword; gfx11: OOB_SELECT 3,
  // offset + size > num_records per dword (the ISA's "range checking").
  uint32_t bufferResourceFlags;
  // V_PERMLANEX16_B32 (gfx10 on): every lane reads a lane of the other row of
  // 16 in one VALU instruction, so a butterfly's distance-16 step needs no
  // ds_bpermute (LDS hardware, an address per lane, a wait).
  bool permlaneX16;
  // DPP row_bcast:15 / row_bcast:31 (gfx8 and gfx9 only): the last lane of a
  // row of 16 (of 32) goes to the rows after it, so a reduction over all of a
  // wave64's lanes ends in lane 63 in two VALU steps, read out by v_readlane.
  bool dppRowBroadcast;
  // V_PK_ADD_F32 / V_PK_MUL_F32 / V_PK_FMA_F32 (gfx90a, gfx942, gfx950): one
  // VALU instruction does an f32 add, multiply or fma on two pairs of
  // registers. The elementwise and reduce lowerings emit <2 x float> ops for them.
  bool packedF32;
  // The occupancy model (one place; scripts/codegen-table.py mirrors it):
  // per lane, the register file a SIMD shares among its waves (CDNA: 512
  // VGPRs + AGPRs in granules of 8; RDNA3 wave32: 1536 in granules of 24),
  // the wave slots per SIMD, SIMDs per CU (WGP on RDNA3), the workgroups a
  // CU holds at once (barriers) and the LDS a CU shares among them.
  unsigned registersPerLane;
  unsigned registerGranule;
  unsigned waveSlots;
  unsigned simdsPerCu;
  unsigned workgroupsPerCu;
  unsigned ldsPerCu;
  bool sgprLimited; // gfx9: SGPRs can limit waves too
  // Costs that choose how a layout conversion moves data between lanes
  // (an in-wave shuffle or a trip through LDS), in cycles of one wave:
  // a VALU instruction (CDNA: 64 lanes on a 16-wide SIMD, 4; RDNA3 wave32,
  // 1), and what a workgroup barrier after LDS writes costs (the writes'
  // latency it waits for; rough). LDS accesses and ds_bpermute are counted
  // by bytes: 128 a cycle.
  unsigned valuCycles;
  unsigned barrierCycles;
  // Which 8-bit float formats V_CVT_PK_FP8_F32 / V_CVT_F32_FP8 (E4M3) and
  // V_CVT_PK_BF8_F32 / V_CVT_F32_BF8 (E5M2) convert: gfx942 the FNUZ
  // formats, gfx950 the OCP ones; None: no such instructions (the lowering
  // converts with integer operations, as for a format the target does not take).
  Fp8Family fp8Conversions = Fp8Family::None;

  // A dot on 8-bit floats where the matrix cores take no 8-bit float format
  // at all: true, its operands widen to f16 (exact) and the f16 instructions
  // run it (gfx1100's WMMA); false, it is an error naming the targets that
  // take them (gfx90a: an f16 dot is what the user should write).
  bool fp8DotThroughF16 = false;

  // Whether the conversion instructions take the 8-bit float format `t`.
  bool convertsFp8(DType t) const;

  // Bytes a lane's buffer/global load can write straight into LDS
  // (`buffer_load ... lds`: lane l's bytes land at M0 + offset + l * width,
  // no registers): 4 on gfx90a/gfx942, 16 on gfx950 (CDNA4's dwordx3/x4
  // forms), 0 on gfx1100. Staging uses them from 16 bytes on (a dword a
  // lane takes four times the instructions and breaks 16-byte LDS reads;
  // Triton uses them on gfx950 only, too).
  unsigned directLdsLoadBytes = 0;

  // DS_READ_B64_TR_B8 / DS_READ_B64_TR_B16 (gfx950; CDNA4 ISA 11.4): each
  // lane reads 8 bytes at its own LDS address and every group of 16 lanes
  // transposes them, so a tile kept in LDS along one dim reaches registers
  // that run along another (B stored [K, N] row-major, read K-contiguous
  // for the matrix cores) in 8-byte reads (ldsTransposedRead).
  bool ldsTransposeReads = false;

  // V_MAXIMUM3_F32 / V_MINIMUM3_F32 (gfx950): LLVM's llvm.maximum /
  // llvm.minimum (a NaN wins) in one instruction; elsewhere a max, an
  // ordered compare and a select of a NaN constant.
  bool minimumMaximum = false;

  // V_FMA_MIX_F32 reads each source as f16 or f32 (op_sel_hi; op_sel picks
  // a register's high half), so an f32 add or subtract of a widened f16 is
  // one instruction with no conversion. LLVM 22 selects it for an fma only
  // (the add and subtract patterns came later: llvm-project PR 160151): the
  // backend writes such adds as an fma by a 1.0 it cannot see through
  // (addWidenedHalvesAsFmaMix, amdgpu_codegen.hpp). On for gfx1100: the 1.0
  // takes one of the two scalar reads an instruction has from gfx10 on.
  // Off on gfx9 (which has the instruction too): one scalar read, so a
  // scalar addend would be copied to a VGPR, and packed f32 adds do two
  // elements an instruction anyway.
  bool fmaMixAdds = false;

  // The instructions for `operand` inputs accumulating in `accumulator`
  // (the dot lowering picks among them); empty when the target has none.
  std::vector<MatrixInstr> matrixInstrsFor(DType operand, DType accumulator) const;
  // The same for A of `a` and B of `b` elements (8-bit float mixes).
  std::vector<MatrixInstr> matrixInstrsFor(DType a, DType b, DType accumulator) const;
  // The 8-bit float family whose dots the matrix cores take (None: none).
  Fp8Family fp8MatrixFamily() const;
};

// What a kernel's code object says it uses (its metadata note).
struct KernelResources {
  unsigned vgprs = 0; // .vgpr_count: on gfx90a+ VGPRs (aligned to 4) plus AGPRs
  unsigned agprs = 0;
  unsigned sgprs = 0;
  unsigned vgprSpills = 0, sgprSpills = 0;
  uint32_t privateSegmentBytes = 0; // scratch per thread (tessel allocates none: spills)
};

// Waves of one kernel resident per SIMD, and what limits them.
struct Occupancy {
  double wavesPerSimd = 0;  // whole workgroups over the CU's SIMDs (may be fractional)
  unsigned registerWaves = 0; // per SIMD by registers alone (VGPRs, SGPRs, slots)
  unsigned ldsWorkgroups = 0; // per CU by LDS alone (0: the kernel uses none)
  const char *limiter = "";   // "wave slots", "VGPRs", "SGPRs", "barriers", "LDS"
};
Occupancy occupancyOf(const TargetFacts &target, const KernelResources &resources,
                      unsigned blockSize, unsigned ldsBytes);
// The most registers (VGPRs + AGPRs) per lane that allow `waves` per SIMD.
unsigned registersForWaves(const TargetFacts &target, unsigned waves);
// The fewest waves a SIMD, by registers, that hold one more whole workgroup
// of `blockSize` threads a CU than `registerWaves` do: 8-wave workgroups on
// a 4-SIMD CU at 7 hold 3 (6 waves a SIMD), so 8 (not 9: two waves a SIMD
// more than 7); 4-wave ones at 4, 5.
unsigned wavesForAnotherWorkgroup(const TargetFacts &target, unsigned registerWaves, unsigned blockSize);

// nullptr when `arch` is not one tessel supports.
const TargetFacts *lookupTarget(std::string_view arch);
// Throws tessel::Error listing the supported targets when `arch` is unknown.
const TargetFacts &requireTarget(std::string_view arch);
std::vector<std::string> supportedTargets();

} // namespace tessel
