// The emulator's wave form (issue 35): the kernel function rewritten to run
// every lane of one wave in a single call, its lane values as host vectors.
// Internal to tessel_devices.
#pragma once

#include "emulator_sanitizer.hpp"

#include <stdexcept>
#include <string>

namespace llvm {
class Function;
class IRBuilderBase;
class Value;
} // namespace llvm

namespace tessel::emu {

// Why a kernel cannot run in wave form: it runs as one fiber per lane.
struct WaveUnsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The name of the sanitizer's check of a wave-form access: its last operand
// holds the access's kind (AccessSite::Kind) until instrumentMemoryAccesses
// gives it its site.
inline constexpr const char *kLaneCheckName = "tessel_emu_check_lanes";
// Metadata on the wave form's own whole-wave loads and stores, whose lanes
// kLaneCheckName already checked: the sanitizer's instrumentation leaves
// them alone (checked again as one range, lanes running into a neighbouring
// buffer read as out of bounds).
inline constexpr const char *kLanesCheckedMetadata = "tessel.emu.lanes_checked";

// Rewrites `kernel` (an AMDGPU kernel after insertLockstepMeetings, before
// its intrinsics are retargeted) in place into its wave form for waves of
// `waveSize` lanes: called once per wave, with llvm.amdgcn.workitem.id.x
// giving the wave's first thread. Values the same in every lane stay scalar;
// the others become vectors of waveSize lanes (a per-lane <n x T> becomes
// <waveSize*n x T>, lane by lane). Branches on wave-uniform values stay
// branches; an `if` on a lane value with a single block of its own runs
// masked. Memory accesses of lane values become gathers and scatters in lane
// order (contiguous ones vector loads and stores), cross-lane operations
// vector shuffles from the ISA's definitions, calls without a vector form a
// loop over the lanes. Every lane executes an instruction before any lane
// executes the next, so within the wave the lockstep pass's meetings order
// nothing; they stay as the points where, with several waves in a
// workgroup, a wave's fiber yields to the next (waves interleave as the
// fibers' do).
//
// Throws WaveUnsupported for what the wave form does not cover (the module
// is then to be dropped): other divergent control flow, private memory,
// compare-and-swap, printf and traps, the races sanitizer, lane values wider
// than 8192 bits a wave. TESSEL_DEBUG_WAVE_DUMP=path writes each wave
// kernel made to path0, path1, ...
void buildWaveKernel(llvm::Function &kernel, unsigned waveSize, SanitizeMode sanitize);

// The lane a DPP control `ctrl` (GFX9 rules) reads for lane `lane` of a wave
// of `waveSize` lanes: -1 when out of bounds, -2 for a control the emulator
// does not know (emulator_runtime.cpp; the fibers' DPP reads the same).
int64_t dppSourceLane(uint32_t lane, uint32_t ctrl, uint32_t waveSize);
// V_PERMLANEX16_B32's source lane for `lane` (RDNA3 ISA).
uint32_t permlaneX16SourceLane(uint32_t lane, uint32_t sel1, uint32_t sel2);

} // namespace tessel::emu
