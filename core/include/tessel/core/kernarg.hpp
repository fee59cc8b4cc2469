// The kernarg segment: where each runtime argument of a kernel sits. This is
// the one statement of the AMDGPU rule; the compiler (kernargLayout, carried in
// CompiledKernel) and the launch side (Kernel<Params...>::kKernargs, which
// packs the bytes on the stack) both lay arguments out with layOutKernargs.
#pragma once

#include "tessel/core/trace.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tessel {

// Bytes one argument takes: pointers 8, scalars their width, i1 one byte.
constexpr uint32_t kernargBytes(const TraceArg &arg) {
  return arg.kind == TraceArg::Pointer ? 8 : (dtypeBits(arg.dtype) + 7) / 8;
}

// Lays `args` out in order, each at its natural alignment (its size): calls
// place(index, offset, size) per argument and returns the segment's total bytes.
template <class Place> constexpr uint32_t layOutKernargs(std::span<const TraceArg> args, Place &&place) {
  uint32_t end = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    uint32_t size = kernargBytes(args[i]);
    end = (end + size - 1) / size * size;
    place(i, end, size);
    end += size;
  }
  return end;
}

// A layout of N arguments known at compile time (Kernel<Params...>::kKernargs).
template <size_t N> struct KernargPlan {
  std::array<uint32_t, N> offsets{};
  std::array<uint32_t, N> sizes{};
  uint32_t totalBytes = 0;
};

template <size_t N> constexpr KernargPlan<N> kernargPlan(const std::array<TraceArg, N> &args) {
  KernargPlan<N> plan;
  plan.totalBytes = layOutKernargs(args, [&](size_t i, uint32_t offset, uint32_t size) {
    plan.offsets[i] = offset;
    plan.sizes[i] = size;
  });
  return plan;
}

// A layout of a trace's arguments (every Trace::args entry, specialized or not).
struct KernargLayout {
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> sizes;
  uint32_t totalBytes = 0;
  bool operator==(const KernargLayout &) const = default;
};

// constexpr too, so a test can compare it with kernargPlan at compile time.
constexpr KernargLayout kernargLayout(const std::vector<TraceArg> &args) {
  KernargLayout layout;
  layout.totalBytes = layOutKernargs(args, [&](size_t, uint32_t offset, uint32_t size) {
    layout.offsets.push_back(offset);
    layout.sizes.push_back(size);
  });
  return layout;
}

} // namespace tessel
