// lld in process, in memory (lld_link.cpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace tessel {

// The .hsaco lld links from one AMDGPU relocatable object (ld.lld -shared).
// Creates no file: needs no temporary directory and stays within a
// file-size limit. Throws tessel::Error when lld fails.
std::vector<uint8_t> linkHsaco(std::string_view object);

} // namespace tessel
