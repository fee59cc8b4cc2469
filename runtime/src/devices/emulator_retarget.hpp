// Retargeting an AMDGPU kernel module to the host, so the emulator executes
// the very module that becomes the code object. Internal to tessel_devices.
#pragma once

#include "emulator_sanitizer.hpp"

#include "tessel/core/error.hpp"
#include "tessel/core/kernarg.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class CallInst;
class Function;
class Module;
class DataLayout;
class IRBuilderBase;
class Type;
class StringRef;
class TargetMachine;
class Value;
} // namespace llvm

namespace tessel::emu {

// The function the emulator calls once per thread: void(const void *kernarg).
inline constexpr const char *kEntryName = "tessel_emu_entry";
// A module flag (an MDString) naming the target the module was compiled for,
// which the device sets before retargeting; a function's "target-cpu"
// attribute (handwritten modules) takes precedence.
inline constexpr const char *kArchFlag = "tessel.arch";

// The target `fn` was compiled for: its "target-cpu", else the module's
// kArchFlag (compiled kernel modules carry no target-cpu); empty when
// neither says.
std::string kernelArch(const llvm::Function &fn);

struct RetargetedKernel {
  uint32_t ldsBytes = 0;     // static LDS the module's addrspace(3) globals need
  uint32_t kernargBytes = 0; // bytes of kernarg the entry reads
  bool needsFibers = false;  // has barriers or cross-lane ops (in wave form: barriers)
  std::vector<AccessSite> sites; // the checked accesses, by the index their check passes
};

// Rewrites `module` (triple amdgcn-amd-amdhsa) in place into a host module
// with an entry kEntryName that reads the parameters of kernel `kernelName`
// from a kernarg buffer laid out as `kernargs` (computed from the signature
// when empty), its global and LDS accesses checked as `sanitize` asks.
// Throws tessel::Error naming what the emulator cannot run. `device` is the
// AMDGPU target the module was made for (its rules say which branches
// diverge: insertLockstepMeetings). With `waveForm` (a wave size) the entry
// runs a whole wave of that many lanes (buildWaveKernel; it throws
// WaveUnsupported for a kernel the wave form does not cover, and the module
// is then to be dropped); without, one thread.
RetargetedKernel retargetForHost(llvm::Module &module, const std::string &kernelName,
                                 const KernargLayout &kernargs, const llvm::DataLayout &hostLayout,
                                 const std::string &hostTriple, SanitizeMode sanitize,
                                 llvm::TargetMachine &device, unsigned waveForm = 0);

// Makes the lanes of a wave access memory in the GPU's order: a wave barrier
// wherever an access follows a store, or a store follows a load, since the
// wave last met, in uniform control flow (emulator_lockstep.cpp). Runs on the
// AMDGPU module, before retargeting; first replaces a readfirstlane or
// readlane of a uniform value by the value (no meeting). Returns how many
// meetings it placed.
unsigned insertLockstepMeetings(llvm::Module &module, const std::string &kernelName,
                                llvm::TargetMachine &device);

// An MFMA or WMMA call's instruction (matrixInstructionId), flags (as
// tessel_emu_matrix takes them) and A, B, C operands. Only the forms the
// compiler emits are accepted: cbsz = abid = blgp = 0 (for the f8f6f4 forms
// cbsz and blgp are A's and B's formats, E4M3, E5M2 or E2M1, and, unless both are
// constant zero, each lane's A and B scale registers in scaleA and scaleB,
// else null), no clamp; else an Error naming what is not.
struct MatrixOperands {
  int id = -1;
  uint32_t flags = 0;
  llvm::Value *a = nullptr, *b = nullptr, *c = nullptr;
  llvm::Value *scaleA = nullptr, *scaleB = nullptr;
};
MatrixOperands matrixOperands(llvm::CallInst &call);

// Whether a call of the AMDGPU intrinsic `name` waits for its whole wave in
// the emulator (barriers, cross-lane operations, matrix instructions).
bool synchronizesWave(llvm::StringRef name);

// A call to tessel_emu_check_global/_lds before every global and LDS access
// (none when `mode` is Off); the module's debug information is dropped.
// Returns each check's site (emulator_instrument.cpp).
std::vector<AccessSite> instrumentMemoryAccesses(llvm::Module &module, SanitizeMode mode);

// fptosi / fptoui (poison for NaN and out-of-range values in LLVM, 0x80000000
// on x86) as the AMDGPU code computes them: saturating conversions, NaN -> 0,
// in the widths and sequences the AMDGPU backend lowers each to
// (emulator_float_to_int.cpp). Runs on the AMDGPU module, before
// buildWaveKernel, which widens the saturating conversions lane by lane.
void rewriteFloatToInt(llvm::Module &module);

// After the host's optimization: stores of half and bfloat values store the
// i16 bits of the loads, extracts, inserts, shuffles and selects that moved
// them, so the host's legalization through f32 cannot quiet a signalling
// NaN the kernel only moves (emulator_half_bits.cpp).
void moveHalvesAsBits(llvm::Module &module);

// Whether `t` is half or bfloat, or a vector of them.
bool isHalfLike(llvm::Type *t);
// `scalar` with the shape of `like`: a vector of as many elements, or scalar.
llvm::Type *shaped(llvm::Type *scalar, llvm::Type *like);

// Buffer instructions as the ISA defines them (emulator_buffer.cpp): each
// call becomes range-checked plain loads / stores.
void rewriteBufferLoad(llvm::CallInst &call, llvm::Module &module);
void rewriteBufferStore(llvm::CallInst &call, llvm::Module &module);
void rewriteBufferLoadToLds(llvm::CallInst &call, llvm::Module &module);
void rewriteBufferResource(llvm::CallInst &call, llvm::Module &module);
// What both forms' buffer accesses share (emulator_buffer.cpp; the wave form's
// in emulator_wave_ops.cpp): the make.buffer.rsrc call a raw.ptr.buffer
// load, store or load to LDS accesses, checked raw (stride 0) with soffset 0,
// else an Error naming what is not; the components a transfer of `type`
// moves, {count, bytes each}: whole dwords, or one byte or short; and whether
// a component of `size` bytes at byte offset `at` (i64, or a vector of them,
// `numRecords` alike) is in range by the rule of `fn`'s target.
llvm::CallInst &rawBufferResource(llvm::CallInst &access);
std::pair<unsigned, unsigned> bufferComponents(const llvm::DataLayout &layout, llvm::Type *type);
llvm::Value *bufferComponentInRange(llvm::IRBuilderBase &b, const llvm::Function &fn, llvm::Value *at, unsigned size,
                                    llvm::Value *numRecords);

} // namespace tessel::emu
