// Hand-written HIP reference: row-wise softmax of an M x N f32 matrix with
// contiguous rows (row stride N), N fixed at compile time:
//   out[r, :] = exp(x - max(x)) / sum(exp(x - max(x))),  x = in[r, :].
// One row per workgroup of THREADS lanes (grid = M workgroups): each lane
// holds ceil(N / THREADS) elements in registers (float4 loads and stores
// when N is a multiple of 4 * THREADS), max and sum are reduced by DPP
// within each wave and through LDS across waves (one barrier each),
// exp(z) = exp2(z * log2(e)) on v_exp_f32 (results below 2^-126 flush to 0,
// which a softmax sum of at least 1 cannot see), and the row is scaled by
// one reciprocal (v_rcp_f32, 1 ulp) of its sum.
//
// Kernels (the problems scripts/codegen-table.py compares with tessel):
//   ref_softmax_781_f32   N = 781,  128 lanes (tessel: 2 waves of 64 / 4 of 32)
//   ref_softmax_4096_f32  N = 4096, 512 lanes (tessel: 8 waves of 64 / 16 of 32)
#include "hip_shim.hpp"

namespace {

constexpr float kLog2E = 1.44269504088896340736f;

template <int N, int THREADS>
REF_INLINE void softmaxRow(const float *__restrict__ in, float *__restrict__ out) {
  constexpr int WAVES = THREADS / ref::kWaveSize;
  constexpr int VEC = (N % (4 * THREADS) == 0) ? 4 : 1;  // floats per access
  constexpr int STEPS = (N + VEC * THREADS - 1) / (VEC * THREADS);
  constexpr int PER = STEPS * VEC;                       // elements per lane
  constexpr bool EXACT = N % (VEC * THREADS) == 0;       // no partial step
  __shared__ float redMax[WAVES], redSum[WAVES];

  const unsigned t = ref::threadIdx_x();
  const float *src = in + ref::blockIdx_x() * unsigned(N);  // 32-bit offsets: M * N < 2^31
  float *dst = out + ref::blockIdx_x() * unsigned(N);

  // Element s * VEC * THREADS + t * VEC + k of the row is x[s * VEC + k].
  float x[PER];
#pragma unroll
  for (int s = 0; s < STEPS; ++s) {
    const unsigned col = s * VEC * THREADS + t * VEC;
    if constexpr (VEC == 4) {
      const float4v v = *reinterpret_cast<const float4v *>(src + col);
#pragma unroll
      for (int k = 0; k < 4; ++k)
        x[s * 4 + k] = v[k];
    } else if (EXACT || s + 1 < STEPS) {
      x[s] = src[col];
    } else {
      // The last, partial step: an in-bounds address for every lane (no
      // branch), -inf past the row's end (it never wins the max, exp2 gives 0).
      const float v = src[col < unsigned(N) ? col : unsigned(N - 1)];
      x[s] = col < unsigned(N) ? v : -__builtin_inff();
    }
  }

  float m = x[0];
#pragma unroll
  for (int i = 1; i < PER; ++i)
    m = __builtin_fmaxf(m, x[i]);
  m = ref::blockReduce<ref::Max, WAVES>(m, redMax);

  // exp2((x - m) * log2e) as one fma per element.
  const float mScaled = m * kLog2E;
#pragma unroll
  for (int i = 0; i < PER; ++i)
    x[i] = ref::exp2(__builtin_fmaf(x[i], kLog2E, -mScaled));
  float sum = x[0];
#pragma unroll
  for (int i = 1; i < PER; ++i)
    sum += x[i];
  sum = ref::blockReduce<ref::Sum, WAVES>(sum, redSum);
  const float inv = ref::rcp(sum);

#pragma unroll
  for (int s = 0; s < STEPS; ++s) {
    const unsigned col = s * VEC * THREADS + t * VEC;
    if constexpr (VEC == 4) {
      float4v v;
#pragma unroll
      for (int k = 0; k < 4; ++k)
        v[k] = x[s * 4 + k] * inv;
      *reinterpret_cast<float4v *>(dst + col) = v;
    } else if (EXACT || s + 1 < STEPS || col < unsigned(N)) {
      dst[col] = x[s] * inv;
    }
  }
}

} // namespace

extern "C" __global__ REF_WORKGROUP_SIZE(128) void ref_softmax_781_f32(const float *__restrict__ in,
                                                                        float *__restrict__ out) {
  softmaxRow<781, 128>(in, out);
}

extern "C" __global__ REF_WORKGROUP_SIZE(512) void ref_softmax_4096_f32(const float *__restrict__ in,
                                                                         float *__restrict__ out) {
  softmaxRow<4096, 512>(in, out);
}
