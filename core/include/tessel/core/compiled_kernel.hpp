// Every artifact of one compiled kernel: what the compiler produces, the disk
// cache stores and the devices load. Plain data, no MLIR or LLVM types.
#pragma once

#include "tessel/core/kernarg.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

struct CompiledKernel {
  std::string name;           // kernel symbol in the module and the code object
  std::string tileIR;         // tessel dialect after specialization (text)
  std::string llvmIR;         // the kernel module both executors start from
  std::string assembly;       // AMDGPU assembly of the code object
  std::vector<uint8_t> hsaco; // linked code object
  uint32_t ldsBytes = 0;      // planned workgroup memory
  uint32_t blockSize = 0;     // threads per workgroup (numWarps * waveSize)
  uint32_t waveSize = 0;
  KernargLayout kernargs;
};

} // namespace tessel
