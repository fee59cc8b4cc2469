// Hand-written HIP reference: layer norm forward over the rows of an M x N
// f32 matrix with contiguous rows (row stride N), N fixed at compile time,
// as PyTorch's layer_norm over the last dimension:
//   mean = sum(x) / N,  var = sum((x - mean)^2) / N  (biased),
//   rstd = 1 / sqrt(var + eps),  y = (x - mean) * rstd * weight + bias,
// with mean[r] and rstd[r] written per row.
// One row per workgroup of THREADS lanes (grid = M workgroups): each lane
// holds N / THREADS elements in registers (float4 loads and stores; N must
// be a multiple of 4 * THREADS), two reductions (the mean, then the squared
// deviations, so E[x^2] - E[x]^2 cannot cancel) by DPP within each wave and
// through LDS across waves (one barrier each); 1 / N is a compile-time
// constant and rstd one v_rsq_f32 (1 ulp) per row.
//
// Kernel (the problem scripts/codegen-table.py compares with tessel):
//   ref_layer_norm_8192_f32  N = 8192, 512 lanes (tessel: 8 waves of 64 / 16 of 32)
#include "hip_shim.hpp"

namespace {

template <int N, int THREADS>
REF_INLINE void layerNormRow(const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ weight,
                             const float *__restrict__ bias, float *__restrict__ mean, float *__restrict__ rstd,
                             float eps) {
  static_assert(N % (4 * THREADS) == 0, "this kernel takes rows of whole float4 steps");
  constexpr int WAVES = THREADS / ref::kWaveSize;
  constexpr int STEPS = N / (4 * THREADS);
  constexpr int PER = 4 * STEPS;
  constexpr float kInvN = 1.0f / N;
  __shared__ float redMean[WAVES], redVar[WAVES];

  const unsigned t = ref::threadIdx_x();
  const unsigned row = ref::blockIdx_x();
  const float *src = x + row * unsigned(N);  // 32-bit offsets: M * N < 2^31
  float *dst = y + row * unsigned(N);

  // Element s * 4 * THREADS + 4 * t + k of the row is v[4 * s + k].
  float v[PER];
#pragma unroll
  for (int s = 0; s < STEPS; ++s) {
    const float4v a = *reinterpret_cast<const float4v *>(src + s * 4 * THREADS + 4 * t);
#pragma unroll
    for (int k = 0; k < 4; ++k)
      v[4 * s + k] = a[k];
  }

  float sum = v[0];
#pragma unroll
  for (int i = 1; i < PER; ++i)
    sum += v[i];
  const float mu = ref::blockReduce<ref::Sum, WAVES>(sum, redMean) * kInvN;

#pragma unroll
  for (int i = 0; i < PER; ++i)
    v[i] -= mu;
  float sq = v[0] * v[0];
#pragma unroll
  for (int i = 1; i < PER; ++i)
    sq = __builtin_fmaf(v[i], v[i], sq);
  const float var = ref::blockReduce<ref::Sum, WAVES>(sq, redVar) * kInvN;
  const float rs = ref::rsqrt(var + eps);

#pragma unroll
  for (int s = 0; s < STEPS; ++s) {
    const unsigned col = s * 4 * THREADS + 4 * t;
    const float4v w = *reinterpret_cast<const float4v *>(weight + col);
    const float4v b = *reinterpret_cast<const float4v *>(bias + col);
    float4v out;
#pragma unroll
    for (int k = 0; k < 4; ++k)
      out[k] = __builtin_fmaf(v[4 * s + k] * rs, w[k], b[k]);
    *reinterpret_cast<float4v *>(dst + col) = out;
  }
  if (t == 0) {
    mean[row] = mu;
    rstd[row] = rs;
  }
}

} // namespace

extern "C" __global__ REF_WORKGROUP_SIZE(512) void ref_layer_norm_8192_f32(
    const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ weight,
    const float *__restrict__ bias, float *__restrict__ mean, float *__restrict__ rstd, float eps) {
  layerNormRow<8192, 512>(x, y, weight, bias, mean, rstd, eps);
}
