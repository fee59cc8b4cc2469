// Where a memory access's bytes lie for each lane of a wave, as far as the
// IR says: what lets the lockstep pass (emulator_lockstep.cpp) see that two
// accesses of different lanes cannot touch the same byte, so no meeting of
// the wave needs to order them. Internal to tessel_devices.
#pragma once

#include <llvm/Analysis/CycleAnalysis.h>
#include <llvm/Analysis/UniformityAnalysis.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Instruction.h>

#include <cstdint>
#include <map>
#include <optional>

namespace tessel::emu {

// Lane l of a wave touches [offset(l), offset(l) + bytes) from `base` (a
// pointer or a buffer resource every lane holds alike), with
// offset(l) = laneStride * l + sum(coefficient * value over `uniform`) + constant,
// the values in `uniform` alike in every lane of the wave.
struct LaneAddress {
  const llvm::Value *base = nullptr;
  int64_t laneStride = 0, constant = 0;
  std::map<const llvm::Value *, int64_t> uniform;
  uint64_t bytes = 0;
};

// The lane address of a load, store or buffer load/store, or nothing when
// the IR does not say it in that form. `isUniform` is LLVM's uniformity
// analysis with the AMDGPU target's rules; lanes run in waves of `waveSize`
// consecutive work-items (x). A value computed in a cycle (a loop) that
// does not hold the access is not followed: a lane leaves the loop on its
// own trip, so a value alike in the wave inside the loop need not be after
// it (LLVM's uniformity calls it uniform at its definition).
std::optional<LaneAddress> laneAddressOf(llvm::Instruction &access, const llvm::DataLayout &layout,
                                         const llvm::UniformityInfo &uniformity, const llvm::CycleInfo &cycles,
                                         unsigned waveSize);

// Whether `v` is computed in a cycle that does not hold `at`: its value
// there is each lane's from its own last trip.
bool leavesCycle(const llvm::Value *v, const llvm::BasicBlock *at, const llvm::CycleInfo &cycles);

// Whether lanes l1 != l2 of one wave could have a byte in common, lane l1
// accessing `a` and lane l2 `b`.
bool mayOverlapAcrossLanes(const LaneAddress &a, const LaneAddress &b, unsigned waveSize);

} // namespace tessel::emu
