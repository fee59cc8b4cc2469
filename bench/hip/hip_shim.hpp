// The few HIP runtime-header definitions the reference kernels use, so that
// they compile with clang alone (-nogpuinc -nogpulib: no ROCm install):
// kernel and memory-space qualifiers, thread and block ids, the workgroup
// barrier, and the wave-level helpers (DPP moves, lane reads) the
// reductions are built from. Device code only.
#pragma once

#if !defined(__HIP__) || !defined(__AMDGCN__)
#error "bench/hip: compile as HIP device code, e.g. clang++ -x hip --cuda-device-only --offload-arch=gfx942 -nogpuinc -nogpulib"
#endif

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
// Exactly THREADS lanes per workgroup (HIP's __launch_bounds__(T) says at
// most T; tessel's kernels state the exact size, so the references do too).
#define REF_WORKGROUP_SIZE(threads) __attribute__((amdgpu_flat_work_group_size(threads, threads)))
#define REF_INLINE __device__ inline __attribute__((always_inline))

// float4 as a clang vector (HIP's float4 is a struct around one).
typedef float float4v __attribute__((ext_vector_type(4)));

namespace ref {

// Lanes per wave this file is being compiled for: 64 on gfx9 (CDNA), 32 on
// gfx10+ (RDNA, whose HIP default is wave32).
#if defined(__GFX9__)
inline constexpr int kWaveSize = 64;
#else
inline constexpr int kWaveSize = 32;
#endif

REF_INLINE unsigned threadIdx_x() { return __builtin_amdgcn_workitem_id_x(); }
REF_INLINE unsigned blockIdx_x() { return __builtin_amdgcn_workgroup_id_x(); }
REF_INLINE unsigned waveId() { return threadIdx_x() / kWaveSize; }

// The T at `bytes` bytes past p: a 32-bit byte offset the compiler can keep
// in one VGPR next to p's scalar base (global_load v, voffset, s[base]).
template <class T> REF_INLINE const T *atByte(const float *p, unsigned bytes) {
  return reinterpret_cast<const T *>(reinterpret_cast<const char *>(p) + bytes);
}
template <class T> REF_INLINE T *atByte(float *p, unsigned bytes) {
  return reinterpret_cast<T *>(reinterpret_cast<char *>(p) + bytes);
}

// The workgroup barrier of the reductions: LDS writes before it are visible
// to every lane after it. HIP's __syncthreads() also orders global memory
// (on gfx1100 in WGP mode that invalidates the L0 cache, buffer_gl0_inv);
// the kernels only exchange values through LDS, so the fences name LDS alone.
REF_INLINE void syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup", "local");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup", "local");
}

// A relaxed workgroup-scope atomic store: every lane of a wave may store the
// same (wave-uniform) value to one LDS word without a data race or a branch;
// it is an ordinary ds_write.
REF_INLINE void storeShared(float *p, float v) {
  __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
}

// DPP controls (AMD ISA, "DPP_CTRL"): quad permutes, mirrors within a row
// of 16 lanes, and (gfx9 only) broadcasts of a row's last lane to the next rows.
inline constexpr int kQuadPerm1032 = 0xB1;  // quad_perm:[1,0,3,2]: lane ^ 1
inline constexpr int kQuadPerm2301 = 0x4E;  // quad_perm:[2,3,0,1]: lane ^ 2
inline constexpr int kRowHalfMirror = 0x141; // lane 7 - i within each 8
inline constexpr int kRowMirror = 0x140;     // lane 15 - i within each 16
inline constexpr int kRowBcast15 = 0x142;    // lane 15 of each row to the next row
inline constexpr int kRowBcast31 = 0x143;    // lane 31 to rows 2 and 3

// `old` where the DPP source lane is disabled by rowMask, else v from the lane DPP selects.
template <int ctrl, int rowMask = 0xF>
REF_INLINE float dpp(float old, float v) {
  return __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(__builtin_bit_cast(int, old),
                                                               __builtin_bit_cast(int, v), ctrl, rowMask, 0xF,
                                                               false));
}

// The hardware's instructions, one each: v_readlane_b32, v_exp_f32 (2^x;
// results below 2^-126 flush to 0), v_rcp_f32 and v_rsq_f32 (about 1 ulp).
// With REF_EMULATOR (bench-hip-reference-check runs the kernels' LLVM IR on
// tessel's CPU emulator, which has DPP and ds_bpermute but not these
// intrinsics) they are spelled in portable terms of the same meaning.
#if !defined(REF_EMULATOR)
REF_INLINE float readLane(float v, int lane) {
  return __builtin_bit_cast(float, __builtin_amdgcn_readlane(__builtin_bit_cast(int, v), lane));
}
REF_INLINE float exp2(float x) { return __builtin_amdgcn_exp2f(x); }
REF_INLINE float rcp(float x) { return __builtin_amdgcn_rcpf(x); }
REF_INLINE float rsqrt(float x) { return __builtin_amdgcn_rsqf(x); }
#else
// ds_bpermute reads lane (address / 4) mod the wave size; a constant address
// would be folded back into readlane, so it carries a multiple of the wave.
REF_INLINE float readLane(float v, int lane) {
  const int address = 4 * (lane + int(threadIdx_x()) * kWaveSize);
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(address, __builtin_bit_cast(int, v)));
}
REF_INLINE float exp2(float x) { return __builtin_exp2f(x); }
REF_INLINE float rcp(float x) { return 1.0f / x; }
REF_INLINE float rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }
#endif

struct Sum {
  static constexpr float identity = 0.0f;
  REF_INLINE static float apply(float a, float b) { return a + b; }
};
struct Max {
  static constexpr float identity = -__builtin_inff();
  REF_INLINE static float apply(float a, float b) { return __builtin_fmaxf(a, b); }
};

// The reduction of v over the wave, as a wave-uniform value: four DPP steps
// reduce each row of 16 lanes (every lane of the row gets the row's value);
// the rows then combine: on wave64 by two row broadcasts and a read of lane
// 63, on wave32 by reading lanes 0 and 16.
template <class Op> REF_INLINE float waveReduce(float v) {
  v = Op::apply(v, dpp<kQuadPerm1032>(Op::identity, v));
  v = Op::apply(v, dpp<kQuadPerm2301>(Op::identity, v));
  v = Op::apply(v, dpp<kRowHalfMirror>(Op::identity, v));
  v = Op::apply(v, dpp<kRowMirror>(Op::identity, v));
  if constexpr (kWaveSize == 64) {
    // gfx9 row broadcasts: rows 1 and 3 add row 0's and row 2's value, then
    // rows 2 and 3 add lane 31's (rows 0 + 1): lane 63 holds the wave's.
    v = Op::apply(v, dpp<kRowBcast15, 0xA>(Op::identity, v));
    v = Op::apply(v, dpp<kRowBcast31, 0xC>(Op::identity, v));
    return readLane(v, 63);
  } else {
    return Op::apply(readLane(v, 0), readLane(v, 16));
  }
}

// The reduction of v over the workgroup's WAVES waves, in every lane: each
// wave reduces by DPP, writes its value to scratch[wave], one barrier, and
// every lane combines the WAVES values (LDS broadcast reads). scratch must
// not be written again before every lane has read it (the kernels give each
// reduction its own scratch, so one barrier per reduction suffices).
template <class Op, int WAVES> REF_INLINE float blockReduce(float v, float *scratch) {
  storeShared(&scratch[waveId()], waveReduce<Op>(v));
  syncthreads();
  float p[WAVES];
#pragma unroll
  for (int w = 0; w < WAVES; ++w)
    p[w] = scratch[w];
  // A tree, not a chain: log2(WAVES) dependent steps.
#pragma unroll
  for (int step = 1; step < WAVES; step *= 2)
#pragma unroll
    for (int w = 0; w + step < WAVES; w += 2 * step)
      p[w] = Op::apply(p[w], p[w + step]);
  return p[0];
}

} // namespace ref
