// Hand-written HIP reference: out[i] = x[i] + y[i] for i < n (f32), the
// problem of bench/vector_add_bench.cpp: 1024 elements per workgroup of 4
// waves (256 lanes on wave64, 128 on wave32), so grid = n / 1024 rounded up.
// Each lane adds 1024 / lanes elements as float4 accesses, lanes adjacent
// (coalesced), at 32-bit byte offsets from the arrays' scalar bases.
// Preconditions: n is a positive multiple of 4 (tessel's specialization
// knows the bench's n = 98432 is a multiple of 16), so a float4 is wholly in
// or wholly out of range, and n < 2^30. Loads read a clamped, always valid
// address so they need no branch; stores are guarded.
//
// Kernel (the problem scripts/codegen-table.py compares with tessel):
//   ref_vector_add_f32
#include "hip_shim.hpp"

namespace {

constexpr int kBlock = 1024;                      // elements per workgroup
constexpr int kThreads = 4 * ref::kWaveSize;      // tessel's num_warps = 4
constexpr int kSteps = kBlock / (4 * kThreads);   // float4s per lane

} // namespace

extern "C" __global__ REF_WORKGROUP_SIZE(kThreads) void ref_vector_add_f32(const float *__restrict__ x,
                                                                           const float *__restrict__ y,
                                                                           float *__restrict__ out, unsigned n) {
  // Byte offsets in 32 bits (n < 2^30): the loads and stores take the
  // scalar base plus a 32-bit vector offset (global_load saddr + voffset).
  const unsigned base = ref::blockIdx_x() * kBlock + 4 * ref::threadIdx_x();
  float4v a[kSteps], b[kSteps];
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const unsigned i = base + s * 4 * kThreads;
    const unsigned safe = i < n ? i : n - 4;
    a[s] = *ref::atByte<float4v>(x, 4 * safe);
    b[s] = *ref::atByte<float4v>(y, 4 * safe);
  }
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const unsigned i = base + s * 4 * kThreads;
    if (i < n)
      *ref::atByte<float4v>(out, 4 * i) = a[s] + b[s];
  }
}
