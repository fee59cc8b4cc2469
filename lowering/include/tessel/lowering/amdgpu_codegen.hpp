// AMDGPU code generation for a finished kernel module: optimize, emit the
// object, link the .hsaco with lld in process. The assembly text is a second
// code generation of the same optimized module (the same instructions: a
// test assembles it back to the same .text), made only when asked for.
#pragma once

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/target.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tessel {

// Sets triple (amdgcn-amd-amdhsa), data layout, code object version and the
// mode its functions run in ("amdgpu-ieee"="false": the IEEE bit clear) on a
// kernel module about to be generated for `target`.
void configureModuleForTarget(llvm::Module &module, const TargetFacts &target);

// Asks the backend for `waves` waves per SIMD on the module's kernels
// ("amdgpu-waves-per-eu", LaunchOptions::waves_per_eu): register allocation
// and scheduling then aim at that occupancy's share of the register file.
void requestWavesPerEu(llvm::Module &module, unsigned waves);

// A target machine for `target` (the AMDGPU backend, initialized once):
// code generation's, and the emulator's source of the target's rules (which
// values diverge across a wave). Throws tessel::Error when LLVM has none.
std::unique_ptr<llvm::TargetMachine> makeAmdgpuTargetMachine(const TargetFacts &target);

struct AmdgpuCode {
  std::vector<uint8_t> hsaco;       // linked code object (ELF, one kernel descriptor per kernel)
  uint32_t privateSegmentBytes = 0; // scratch per thread: registers spilled (tessel allocates none)
  KernelResources resources;        // registers and spills of the kernel (its metadata note)
  CompileTimes times;               // optimize, codegen and link filled in
};

// Whether the module computes on values narrower than 32 bits (8- and 16-bit
// integers, half, bfloat; not i1), which LLVM's SLP vectorizer packs into
// v_pk_*_f16 / v_pk_*_u16 and byte permutes: the optimizer runs SLP only
// then (packed f32 the lowering emits itself). A narrow constant operand
// computes nothing: every buffer resource (llvm.amdgcn.make.buffer.rsrc)
// takes an i16 stride, which turned SLP on for every kernel with buffer
// accesses (6% of the optimizer's time, 0.12 s of 1.96 s, on issue 34's
// memory workload of 8000 ops, for the same module).
bool computesOnNarrowValues(const llvm::Module &module);

// Runs clang's O3 module pipeline for `machine` over `module` (linked and
// internalized), less the passes that act only on what our kernel modules
// never hold (optimizer.cpp's kSkippedPasses), with SLP only where
// computesOnNarrowValues.
void optimizeKernel(llvm::Module &module, llvm::TargetMachine &machine);

// The AMDGPU machine scheduler is quadratic in a scheduling region's length
// (memory dependence chains, the uses of one register), so an unrolled
// program of N ops cost N^1.5 and more in code generation (issue 34). Code
// generation bounds the regions: a basic block longer than kLongBlock
// instructions (PHIs and the terminator aside) gets a scheduling boundary,
// llvm.amdgcn.sched.barrier(0) (no instruction, no semantics), after every
// kSchedulingRegion instructions or kSchedulingRegionAccesses memory
// accesses (loads, stores, atomics, memory intrinsics) since the last one,
// whichever comes first, none where less than half a region (by either
// measure) is left to the block's end. Normal kernels' blocks (a few hundred
// instructions; matmul's K loop ~280) are untouched. Returns how many it
// inserted.
//
// The accesses' bound: the pre-RA scheduler's memory dependences are
// quadratic in a region's accesses (each store is checked against every
// earlier access, each load against every earlier store, through alias
// analysis; a kernel's pointers may alias, so most pairs get an edge): 64%
// of the machine schedulers' instructions on issue 34's memory workload,
// ~180 buffer accesses a 512-instruction region. 64 is about what the
// hardware's counter of outstanding vector memory accesses holds (vmcnt: 6
// bits, at most 63 in flight, on gfx9 and gfx11, where stores count apart in
// vscnt, also 6 bits), so a longer region could not keep many more of them in
// flight anyway (the count also takes LDS accesses, which lgkmcnt tracks).
inline constexpr unsigned kLongBlock = 2048;
inline constexpr unsigned kSchedulingRegion = 512;
inline constexpr unsigned kSchedulingRegionAccesses = 64;
unsigned boundSchedulingRegions(llvm::Module &module);

// Every raw buffer load and store of a kernel takes soffset 0 (the offset
// is all in voffset), which the backend makes one `s_mov_b32 0` that SI Fold
// Operands then folds into each use, checking each fold against the list of
// those made before: quadratic in the uses (2.5 s of code generation for the
// 64000 buffer accesses of 16000 traced loads and stores; issue 34). In a
// block longer than kLongBlock each run of scheduling regions (above) takes
// its zero from its own `s_mov_b32 sN, 0` (inline assembly, which nothing
// folds: one scalar instruction a run); a run ends at the first boundary
// after its zero has kZeroOffsetUses uses (three regions of
// kSchedulingRegionAccesses, about what one region of kSchedulingRegion
// instructions held; a zero a region cost 41 more s_mov on gfx942's memory
// workload of 1000 ops, 94 on gfx1100's).
// The same zero in a register: what a lane reads or writes, a masked lane's
// out-of-range offset included, does not change. Normal kernels' blocks are
// untouched. Returns how many zeros it made.
inline constexpr unsigned kZeroOffsetUses = 3 * kSchedulingRegionAccesses;
unsigned giveRegionsTheirOwnZeroOffset(llvm::Module &module);

// A pipelined K loop computes the current tile's products, then (after a
// workgroup barrier) stores the next tile, loaded from global memory this
// iteration, into LDS. LLVM's post-RA scheduler, which sees MFMA chains
// stall, hoists the barrier and the stores above most of the products, so
// the stores wait on the global loads with little work between (gfx942
// B^T matmul: 6 of 32 MFMAs before them, 334 mca cycles against Triton's
// 316). boundStagedStores puts a scheduling boundary,
// llvm.amdgcn.sched.barrier(0), after the first quarter of the MFMAs in
// each such block (at least kStagedStoresMinMatrix MFMAs, a workgroup
// barrier after them, LDS stores after it; no check that the block is a
// loop's: any block of that shape is the same trade), and moves the values
// only instructions after it use (the later MFMAs' LDS operand loads and
// their packing, address arithmetic; not global loads, which are issued
// early on purpose) below the boundary, so the first quarter holds no more
// registers than before. Measured over the matmul
// comparison (gfx942, gfx950), a quarter was best of 1/4 .. 3/4: a half
// put gfx950's bf16 library matmul at 1.07x Triton's cycles. Left alone:
// operands of 8-bit elements (packed in i32/i64; fp8 matmul went from 3
// waves to 2 on gfx942) and WMMA (gfx1100 spilled 4x more). Returns how
// many it inserted.
inline constexpr unsigned kStagedStoresMinMatrix = 8;
unsigned boundStagedStores(llvm::Module &module);

// A K loop whose tiles load straight into LDS (gfx950) waits for its slot's
// loads and a workgroup barrier, then issues the next tiles' loads, then
// reads and multiplies: a load has the rest of the iteration to land in
// before the next wait only if it issues right after the barrier. LLVM
// computes the loads' offsets, masks and LDS pointers (M0) after the
// barrier, and its scheduler sinks the loads below the LDS reads and the
// first products (gfx950 fp8 matmul, 8 waves: 108-109 mca cycles against
// Triton's 90). boundDirectLoads moves what those loads compute after the
// barrier above the barrier's wait, and puts scheduling boundaries
// (llvm.amdgcn.sched.barrier(0)) before the wait and after the last load,
// in each block with a workgroup barrier followed by loads to LDS (only
// side-effect-free instructions between). Returns how many blocks it
// changed.
unsigned boundDirectLoads(llvm::Module &module);

// A phi of two or three bytes (<2 x i8>: a pipelined loop's scale tile of
// bytes, 2 a lane, loaded behind the pipeliner's branch) becomes a phi of one
// integer of its bits, bitcast on each edge and back after it. The AMDGPU
// backend splits a <2 x i8> phi into a register a byte: the pair's high byte
// is shifted out right after its load (a wait for the load at once) and
// shifted back before its 16-bit LDS store (gfx950 dot_scaled matmul, 4
// waves: 164 -> 142 llvm-mca cycles an iteration, Triton 142; 140 -> 138
// VGPRs). The lowering passes such bytes as an i32 (packByteBlockArguments),
// but InstCombine narrows that phi back to <2 x i8>: this runs after the
// optimizer. <4 x i8> the backend carries as one word already. Returns how
// many phis it changed.
inline constexpr unsigned kBytesPerCarriedWord = 4;
unsigned carryBytePairsAsWords(llvm::Module &module);

// On targets with TargetFacts::fmaMixAdds (gfx1100): an f32 fadd or fsub
// (or one of <N x float>, as the SLP vectorizer pairs a loaded vector's
// elements) of an fpext from half, in the fpext's block, whose every use is
// such an add, becomes llvm.fma(the fpext, 1.0, the other operand) (a
// subtracted operand negated by fneg), the 1.0 behind llvm.arithmetic.fence
// made once at the function's entry (and splat there for vectors: N SGPRs
// for an N-wide splat), so that LLVM 22's instruction selection makes
// each one V_FMA_MIX_F32 reading the f16 where it lies (a high half
// through op_sel) and drops the conversion (gfx1100 layer norm: Triton's
// newer LLVM selects the add itself; the fence keeps the DAG combiner from
// folding the fma back into an fadd). Exact: the multiplied operand is
// always the widened half or its negation, so x * 1.0 is x (signed zeros,
// infinities and NaN included) and the fma rounds x + y once, as the add
// does; x - y is x + -y. A widened half is never an f32 denormal (f16's
// smallest, 2^-24, is normal in f32), so only the added operand meets the
// f32 denormal mode, as in v_add_f32 (LLVM selects the fma form of the mix
// with f32 denormals kept; the older mad form only when they are flushed).
// LLVM's own add pattern (PR 160151) computed A - B the wrong way round at
// first (fixed by PRs 180168/180169): mixed_adds_test.cpp checks each
// rewrite's operands. Runs after the optimizer, which sees the adds as adds.
// Returns how many it rewrote.
unsigned addWidenedHalvesAsFmaMix(llvm::Module &module);

// `module` is the kernel module both executors start from; it is not
// modified (work happens on a clone). Calls to __ocml_* functions are linked
// from the ROCm device libraries. Throws tessel::Error on failure, including
// when the linked code object still has undefined symbols.
AmdgpuCode generateAmdgpuCode(const llvm::Module &module, const TargetFacts &target);
// The same of a module the caller is done with, without the clone.
// `verified`: the caller ran LLVM's verifier on it (as translating MLIR to
// LLVM IR does), so it is not run again.
AmdgpuCode generateAmdgpuCode(std::unique_ptr<llvm::Module> module, const TargetFacts &target,
                              bool verified = false);

// The assembly of what generateAmdgpuCode makes of `module` (or of the
// module's bytes, CompiledKernel::llvmModule: bitcode or LLVM IR text).
std::string generateAmdgpuAssembly(const llvm::Module &module, const TargetFacts &target);
std::string generateAmdgpuAssembly(const std::string &llvmModule, const TargetFacts &target);

// The LLVM IR text of a module's bytes (bitcode is read and printed; text
// is returned as it is).
std::string llvmIRText(const std::string &llvmModule);

// Lets kernel.llvmIR() and kernel.assembly() make their texts from
// kernel.llvmModule (for kernel.arch) when first asked; a text already made
// stays. compileTrace does this, and so does the disk cache.
void makeTextsOnDemand(CompiledKernel &kernel);

// The registers and spills the code object's metadata note gives its
// kernel `name` (all zero when it has none); privateSegmentBytes from the
// kernel descriptor.
KernelResources kernelResources(const std::vector<uint8_t> &hsaco, const std::string &name);

// Assembly text -> .hsaco: the MC assembler (as `clang -c kernel.s`) and lld.
std::vector<uint8_t> hsacoFromAssembly(const std::string &assembly, const TargetFacts &target);

} // namespace tessel
