// The matrix-core instructions on the emulator: MFMA (CDNA, wave64) and WMMA
// (RDNA3, wave32), from the lane layouts AMD documents for them. Written
// from the ISA guides (CDNA3 "Matrix fused multiply-add", RDNA3 "Wave matrix
// multiply accumulate") and checked against AMD's matrix instruction
// calculator (github.com/ROCm/amd_matrix_instruction_calculator,
// --matrix-layout), not from the compiler's layout code: a mistake both made
// would pass every end-to-end test.
//
// Every lane of a wave calls tessel_emu_matrix with pointers to its A, B and
// C registers (stored to memory by the retargeted code) and where to put D;
// the last lane to arrive computes the whole wave's D registers from the
// wave's operands, and the lanes meet (once) before anyone reads its D.
#include "emulator_runtime.hpp"

#include "tessel/core/error.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tessel::emu {
namespace {

// Same: B's elements are A's. Fp8 (E4M3) and Bf8 (E5M2) are FNUZ on gfx942
// and OCP on gfx950, as the caller's flags say. Fp4 (E2M1, the f8f6f4 MFMAs'
// format 4): two a byte, element e the byte e / 2's low (e even) or high
// nibble.
enum class Elem : uint8_t { Same, F16, BF16, F32, I8, U8, Fp8, Bf8, Fp4 };

struct MatrixInstruction {
  const char *name; // the LLVM intrinsic (WMMA, f8f6f4: without its type suffixes)
  bool wmma;
  unsigned m, n, k;
  Elem in; // A's elements (and B's, unless inB says otherwise)
  bool intAcc;
  Elem inB = Elem::Same;
  // CDNA4's f8f6f4 MFMAs: A's and B's formats are the caller's flags (the
  // intrinsic's cbsz and blgp); an 8-bit operand's 32 bytes a lane are runs
  // of 16 K, an FP4 one's 32 nibbles consecutive K.
  bool f8f6f4 = false;
};

// The instructions tessel's target table lists (lowering/lib/Backend/target.cpp).
constexpr std::array<MatrixInstruction, 29> kInstructions{{
    {"llvm.amdgcn.mfma.f32.32x32x8f16", false, 32, 32, 8, Elem::F16, false},
    {"llvm.amdgcn.mfma.f32.16x16x16f16", false, 16, 16, 16, Elem::F16, false},
    {"llvm.amdgcn.mfma.f32.32x32x8bf16.1k", false, 32, 32, 8, Elem::BF16, false},
    {"llvm.amdgcn.mfma.f32.16x16x16bf16.1k", false, 16, 16, 16, Elem::BF16, false},
    {"llvm.amdgcn.mfma.i32.32x32x8i8", false, 32, 32, 8, Elem::I8, true},
    {"llvm.amdgcn.mfma.i32.16x16x16i8", false, 16, 16, 16, Elem::I8, true},
    {"llvm.amdgcn.mfma.i32.32x32x16.i8", false, 32, 32, 16, Elem::I8, true},
    {"llvm.amdgcn.mfma.i32.16x16x32.i8", false, 16, 16, 32, Elem::I8, true},
    {"llvm.amdgcn.mfma.f32.32x32x2f32", false, 32, 32, 2, Elem::F32, false},
    {"llvm.amdgcn.mfma.f32.16x16x4f32", false, 16, 16, 4, Elem::F32, false},
    {"llvm.amdgcn.mfma.f32.32x32x16.f16", false, 32, 32, 16, Elem::F16, false},
    {"llvm.amdgcn.mfma.f32.16x16x32.f16", false, 16, 16, 32, Elem::F16, false},
    {"llvm.amdgcn.mfma.f32.32x32x16.bf16", false, 32, 32, 16, Elem::BF16, false},
    {"llvm.amdgcn.mfma.f32.16x16x32.bf16", false, 16, 16, 32, Elem::BF16, false},
    {"llvm.amdgcn.mfma.i32.32x32x32.i8", false, 32, 32, 32, Elem::I8, true},
    {"llvm.amdgcn.mfma.i32.16x16x64.i8", false, 16, 16, 64, Elem::I8, true},
    {"llvm.amdgcn.wmma.f32.16x16x16.f16", true, 16, 16, 16, Elem::F16, false},
    {"llvm.amdgcn.wmma.f32.16x16x16.bf16", true, 16, 16, 16, Elem::BF16, false},
    {"llvm.amdgcn.wmma.i32.16x16x16.iu8", true, 16, 16, 16, Elem::I8, true},
    // gfx942 / gfx950 8-bit floats (A and B: 8 per lane, as i8's 32x32x16),
    // f32 accumulation; the dot lowering does not emit them yet.
    {"llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8", false, 32, 32, 16, Elem::Fp8, false, Elem::Fp8},
    {"llvm.amdgcn.mfma.f32.32x32x16.fp8.bf8", false, 32, 32, 16, Elem::Fp8, false, Elem::Bf8},
    {"llvm.amdgcn.mfma.f32.32x32x16.bf8.fp8", false, 32, 32, 16, Elem::Bf8, false, Elem::Fp8},
    {"llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8", false, 32, 32, 16, Elem::Bf8, false, Elem::Bf8},
    {"llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8", false, 16, 16, 32, Elem::Fp8, false, Elem::Fp8},
    {"llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8", false, 16, 16, 32, Elem::Fp8, false, Elem::Bf8},
    {"llvm.amdgcn.mfma.f32.16x16x32.bf8.fp8", false, 16, 16, 32, Elem::Bf8, false, Elem::Fp8},
    {"llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8", false, 16, 16, 32, Elem::Bf8, false, Elem::Bf8},
    // gfx950 (CDNA4) V_MFMA_F32_32X32X64_F8F6F4 / 16X16X128 on 8-bit floats:
    // the intrinsic is LLVM's scaled form; constant zero scales are the
    // unscaled instruction (as LLVM's instruction selection makes it), other
    // scales V_MFMA_SCALE_F32_* (scaleOf, below).
    {"llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4", false, 32, 32, 64, Elem::Same, false, Elem::Same, true},
    {"llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4", false, 16, 16, 128, Elem::Same, false, Elem::Same, true},
}};

unsigned elemBytes(Elem e) {
  return e == Elem::F32 ? 4 : (e == Elem::I8 || e == Elem::U8 || e == Elem::Fp8 || e == Elem::Bf8) ? 1 : 2;
}

// f16 -> double, exact: a normal half's bits placed in a float's (no libm
// scaling: this runs for every element a matrix instruction reads).
double halfValue(uint16_t h) {
  const uint32_t exp = (h >> 10) & 31u, man = h & 1023u;
  if (exp == 0 || exp == 31) { // subnormal (man * 2^-24), infinity, NaN
    const double v = exp == 0 ? double(man) * 0x1p-24 : man ? double(NAN) : double(INFINITY);
    return (h & 0x8000) ? -v : v;
  }
  return double(std::bit_cast<float>((uint32_t(h & 0x8000u) << 16) | ((exp + 112u) << 23) | (man << 13)));
}

// An OCP E2M1 code (sign, 2 exponent bits of bias 1, 1 mantissa bit; no
// infinity or NaN): +-0, 0.5, 1, 1.5, 2, 3, 4, 6.
double e2m1Value(unsigned nibble) {
  const unsigned exp = (nibble >> 1) & 3u, man = nibble & 1u;
  const double magnitude = exp == 0 ? 0.5 * man : std::ldexp(1.0 + 0.5 * man, int(exp) - 1);
  return (nibble & 8u) ? -magnitude : magnitude;
}

double element(const uint8_t *base, unsigned index, Elem e, bool ocp) {
  if (e == Elem::Fp4)
    return e2m1Value((base[index / 2] >> (4 * (index % 2))) & 15u);
  const uint8_t *p = base + size_t(index) * elemBytes(e);
  switch (e) {
  case Elem::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfValue(h);
  }
  case Elem::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return double(std::bit_cast<float>(uint32_t(h) << 16));
  }
  case Elem::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return double(f);
  }
  case Elem::I8: return double(int8_t(*p));
  case Elem::U8: return double(*p);
  case Elem::Fp8: return double(convertFromFp8(*p, ocp ? Fp8Encoding::E4M3Ocp : Fp8Encoding::E4M3Fnuz));
  case Elem::Bf8: return double(convertFromFp8(*p, ocp ? Fp8Encoding::E5M2Ocp : Fp8Encoding::E5M2Fnuz));
  case Elem::Fp4:
  case Elem::Same: break;
  }
  return 0;
}

// Where the documented layouts put matrix elements, as (lane, element of
// that lane's operand).
//   MFMA A (m x k): row i, column kk in lane i + m * (kk / kPerLane),
//     element kk % kPerLane, with kPerLane = k / (64 / m) (4 halves for
//     32x32x8f16); B (k x n) likewise with the column for the row.
//   MFMA D: 32x32: lane j + 32 * ((i / 4) % 2), register 4 * (i / 8) + i % 4;
//     16x16: lane j + 16 * (i / 4), register i % 4.
//   WMMA (wave32) A: row i in lane i (and i + 16), element kk; B: column j in
//     lane j (and j + 16), element kk; D (32-bit): lane j + 16 * (i % 2),
//     register i / 2.
//   f8f6f4 (CDNA4, 8-bit floats: 32 bytes a lane in 8 VGPRs): row i of A
//     in lane i + m * g, g < 64 / m a lane group; byte e of the lane holds
//     K = 16 * (64 / m) * (e / 16) + 16 * g + e % 16: the first 4 VGPRs the
//     groups' runs of 16 through K < 16 * (64 / m), the last 4 the next
//     ones (AMD's CDNA3/CDNA4 matrix core guide draws 32x32x64: lane 0
//     holds A[0][0..15] and A[0][32..47], lane 32 A[0][16..31] and
//     A[0][48..63]); B's column j likewise.
//   f8f6f4 on FP4 (E2M1: 32 nibbles a lane in its first 4 VGPRs): row i of
//     A in lane i + m * g holds K 32 g + [0, 32), consecutive, element e
//     (nibble e % 2 of byte e / 2, low first) K 32 g + e (the guide's FP4
//     figure for 32x32x64: lane 0 holds A[0][0..31], lane 32 A[0][32..63],
//     B's column j alike; the 16x16x128 form's four lane groups likewise).
//     The operand is 4 VGPRs; a larger one's registers past the 4th are
//     not read.
struct Placement {
  unsigned lane, index;
};
Placement placeOperand(const MatrixInstruction &mi, unsigned rowOrColumn, unsigned kk, unsigned mn, bool fp4) {
  const unsigned groups = 64 / mn;
  if (mi.f8f6f4 && fp4)
    return {rowOrColumn + mn * (kk / 32), kk % 32};
  if (mi.f8f6f4) {
    const unsigned run = 16, span = run * groups;
    return {rowOrColumn + mn * ((kk % span) / run), run * (kk / span) + kk % run};
  }
  const unsigned perLane = mi.k / groups;
  return {rowOrColumn + mn * (kk / perLane), kk % perLane};
}
Placement placeA(const MatrixInstruction &mi, unsigned i, unsigned kk, bool fp4) {
  if (mi.wmma) return {i, kk};
  return placeOperand(mi, i, kk, mi.m, fp4);
}
Placement placeB(const MatrixInstruction &mi, unsigned kk, unsigned j, bool fp4) {
  if (mi.wmma) return {j, kk};
  return placeOperand(mi, j, kk, mi.n, fp4);
}
// The (row, column) of register r of lane l of D.
std::pair<unsigned, unsigned> elementOfD(const MatrixInstruction &mi, unsigned lane, unsigned r) {
  if (mi.wmma) return {2 * r + lane / 16, lane % 16};
  if (mi.m == 32) return {8 * (r / 4) + 4 * (lane / 32) + r % 4, lane % 32};
  return {4 * (lane / 16) + r, lane % 16};
}

// The placements of every element of one instruction, computed once: A's
// and B's (lane, element) in row-major order of the dense matrix (a4, b4:
// an f8f6f4 operand's on FP4), and for each (lane, register) of D its
// element i * n + j.
struct Placements {
  std::vector<Placement> a, b, a4, b4;
  std::vector<uint32_t> d;
};
const Placements &placementsOf(const MatrixInstruction &mi) {
  static const std::vector<Placements> all = [] {
    std::vector<Placements> made;
    for (const MatrixInstruction &x : kInstructions) {
      Placements p;
      for (bool fp4 : {false, true}) {
        if (fp4 && !x.f8f6f4)
          break;
        for (unsigned i = 0; i < x.m; ++i)
          for (unsigned kk = 0; kk < x.k; ++kk)
            (fp4 ? p.a4 : p.a).push_back(placeA(x, i, kk, fp4));
        for (unsigned kk = 0; kk < x.k; ++kk)
          for (unsigned j = 0; j < x.n; ++j)
            (fp4 ? p.b4 : p.b).push_back(placeB(x, kk, j, fp4));
      }
      const unsigned wave = x.wmma ? 32 : 64, registers = x.m * x.n / wave;
      for (unsigned lane = 0; lane < wave; ++lane)
        for (unsigned r = 0; r < registers; ++r) {
          auto [i, j] = elementOfD(x, lane, r);
          p.d.push_back(i * x.n + j);
        }
      made.push_back(std::move(p));
    }
    return made;
  }();
  return all[size_t(&mi - kInstructions.data())];
}

// One lane's registers: A, B and C to read, D to write; the f8f6f4 MFMAs'
// A and B scale registers.
struct Operands {
  const uint8_t *a, *b, *c;
  uint8_t *d;
  uint32_t scaleA = 0, scaleB = 0;
};

// V_MFMA_SCALE_F32_32X32X64_F8F6F4 / 16X16X128 (CDNA4): every 32 of K of a
// row of A (a column of B) has one E8M0 scale, 2^(s - 127) (s = 255: NaN),
// applied to that block's products before they join the sum. The scale of
// row i (column j) and K block g is byte `select` (the intrinsic's opsel
// operand) of the scale register of lane i + m * g (j + n * g): 32x32x64
// takes K blocks 0 and 1 from lanes 0-31 and 32-63, 16x16x128 blocks 0-3
// from the four groups of 16 lanes. Independent of how A's and B's bytes
// sit in the lanes (a lane of an 8-bit float holds K from two blocks).
// Sources: AMD's "Matrix Core Programming on AMD CDNA3 and CDNA4" (ROCm
// blog, 2025: a 32x2 scale matrix of A, one element a lane, E8M0 bias 127,
// scales applied to the block's dot product before accumulation) and the
// lane mapping Triton's AMD backend gives its scale operands
// (chooseScaledMfmaScaleLayout: lanes run along rows, lane bit 5 (32x32)
// or bits 4-5 (16x16) along K blocks), with which its MX tests pass on
// gfx950.
double scaleOf(uint32_t reg, unsigned select) {
  const unsigned s = (reg >> (8 * select)) & 255u;
  return s == 255 ? double(NAN) : std::ldexp(1.0, int(s) - 127);
}

// D[i][j] += A[i][k] * B[k][j], each element adding its products in order of
// k. Eight columns at a time stay in registers across k; the innermost loop
// runs along them (vectorizable). Products are exact (f16, bf16, fp8, fp4 and f32
// inputs multiply exactly in double; integers in int64), so the host's
// vector instructions, with or without FMA, give the same sums.
template <class Acc>
[[gnu::always_inline]] inline void accumulateBody(const Acc *A, const Acc *B, Acc *D, unsigned m, unsigned n,
                                                  unsigned k) {
  constexpr unsigned kCols = 8;
  for (unsigned i = 0; i < m; ++i) {
    Acc *row = D + size_t(i) * n;
    const Acc *aRow = A + size_t(i) * k;
    unsigned j0 = 0;
    for (; j0 + kCols <= n; j0 += kCols) {
      Acc acc[kCols];
      for (unsigned j = 0; j < kCols; ++j)
        acc[j] = row[j0 + j];
      for (unsigned kk = 0; kk < k; ++kk) {
        const Acc a = aRow[kk];
        const Acc *b = B + size_t(kk) * n + j0;
        for (unsigned j = 0; j < kCols; ++j)
          acc[j] += a * b[j];
      }
      for (unsigned j = 0; j < kCols; ++j)
        row[j0 + j] = acc[j];
    }
    for (; j0 < n; ++j0)
      for (unsigned kk = 0; kk < k; ++kk)
        row[j0] += aRow[kk] * B[size_t(kk) * n + j0];
  }
}
#if defined(__x86_64__)
#define TESSEL_EMU_VECTOR_CLONES [[gnu::target_clones("avx2", "default")]]
#else
#define TESSEL_EMU_VECTOR_CLONES
#endif
TESSEL_EMU_VECTOR_CLONES void accumulateDouble(const double *A, const double *B, double *D, unsigned m, unsigned n,
                                               unsigned k) {
  accumulateBody(A, B, D, m, n, k);
}
TESSEL_EMU_VECTOR_CLONES void accumulateInt(const int64_t *A, const int64_t *B, int64_t *D, unsigned m, unsigned n,
                                            unsigned k) {
  accumulateBody(A, B, D, m, n, k);
}
#undef TESSEL_EMU_VECTOR_CLONES
template <class Acc> void accumulate(const Acc *A, const Acc *B, Acc *D, unsigned m, unsigned n, unsigned k) {
  if constexpr (std::is_same_v<Acc, double>)
    accumulateDouble(A, B, D, m, n, k);
  else
    accumulateInt(A, B, D, m, n, k);
}

// D = A * B + C for a whole wave, by the wave's last lane to arrive while
// the others wait at the meeting (their registers in memory, unchanging):
// A and B are decoded once into dense matrices, then every element of D
// sums its products in order of k, starting from C, as each lane did for
// its own registers before. `Acc` is double for float accumulation
// (products of the inputs are exact in double; the sum is rounded to f32
// once), int64_t for integer accumulation (wrapped to 32 bits as the
// hardware does).
// `scales` (f8f6f4 with scales): each element of A and B is multiplied by
// its block's scale as it is decoded (exact: a power of two, in double's
// range), so every product carries both scales and the sums are as before.
struct ScaleSelects {
  unsigned a, b;
};
template <class Acc>
void multiplyWave(const MatrixInstruction &mi, Elem inA, Elem inB, bool ocp, const Operands *const *lanes,
                  unsigned wave, std::optional<ScaleSelects> scales = std::nullopt) {
  thread_local std::vector<Acc> A, B, D;
  A.resize(size_t(mi.m) * mi.k);
  B.resize(size_t(mi.k) * mi.n);
  D.resize(size_t(mi.m) * mi.n);
  const Placements &at = placementsOf(mi);
  const std::vector<Placement> &pa = inA == Elem::Fp4 ? at.a4 : at.a, &pb = inB == Elem::Fp4 ? at.b4 : at.b;
  for (size_t e = 0; e < A.size(); ++e)
    A[e] = Acc(element(lanes[pa[e].lane]->a, pa[e].index, inA, ocp));
  for (size_t e = 0; e < B.size(); ++e)
    B[e] = Acc(element(lanes[pb[e].lane]->b, pb[e].index, inB, ocp));
  if constexpr (std::is_same_v<Acc, double>)
    if (scales)
      for (unsigned kk = 0; kk < mi.k; ++kk) {
        const unsigned block = kk / 32;
        for (unsigned i = 0; i < mi.m; ++i)
          A[size_t(i) * mi.k + kk] *= scaleOf(lanes[i + mi.m * block]->scaleA, scales->a);
        for (unsigned j = 0; j < mi.n; ++j)
          B[size_t(kk) * mi.n + j] *= scaleOf(lanes[j + mi.n * block]->scaleB, scales->b);
      }
  const unsigned registers = mi.m * mi.n / wave;
  for (unsigned lane = 0; lane < wave; ++lane)
    for (unsigned r = 0; r < registers; ++r) {
      const unsigned ij = at.d[size_t(lane) * registers + r];
      if constexpr (std::is_same_v<Acc, double>) {
        float cv;
        std::memcpy(&cv, lanes[lane]->c + 4 * r, 4);
        D[ij] = cv;
      } else {
        int32_t cv;
        std::memcpy(&cv, lanes[lane]->c + 4 * r, 4);
        D[ij] = cv;
      }
    }
  accumulate(A.data(), B.data(), D.data(), mi.m, mi.n, mi.k);
  for (unsigned lane = 0; lane < wave; ++lane)
    for (unsigned r = 0; r < registers; ++r) {
      const Acc sum = D[at.d[size_t(lane) * registers + r]];
      if constexpr (std::is_same_v<Acc, double>) {
        const float out = float(sum);
        std::memcpy(lanes[lane]->d + 4 * r, &out, 4);
      } else {
        const int32_t out = int32_t(uint32_t(uint64_t(sum))); // wraps as the 32-bit hardware does
        std::memcpy(lanes[lane]->d + 4 * r, &out, 4);
      }
    }
}

} // namespace

int matrixInstructionId(std::string_view intrinsic) {
  for (size_t i = 0; i < kInstructions.size(); ++i) {
    std::string_view name = kInstructions[i].name;
    bool overloaded = kInstructions[i].wmma || kInstructions[i].f8f6f4;
    if (intrinsic == name ||
        (overloaded && intrinsic.starts_with(name) && intrinsic.size() > name.size() && intrinsic[name.size()] == '.'))
      return int(i);
  }
  return -1;
}

unsigned matrixWaveSize(int id) { return kInstructions[size_t(id)].wmma ? 32 : 64; }

bool matrixFormatOperands(int id) { return kInstructions[size_t(id)].f8f6f4; }


// The element types of an instruction's A and B for `flags` (below) and the
// product, shared by the fiber and wave forms.
void multiplyWaveAs(const MatrixInstruction &mi, uint32_t flags, const Operands *const *lanes, uint32_t wave) {
  // 0 E4M3, 1 E5M2, 4 E2M1 (matrixOperands refuses FP6's 2 and 3).
  auto format = [](uint32_t code) { return code == 0 ? Elem::Fp8 : code == 1 ? Elem::Bf8 : Elem::Fp4; };
  const Elem inA = mi.f8f6f4 ? format((flags >> 3) & 7) : (mi.in == Elem::I8 && (flags & 1)) ? Elem::U8 : mi.in;
  const Elem inB = mi.f8f6f4 ? format((flags >> 6) & 7)
                   : mi.inB != Elem::Same ? mi.inB
                   : (mi.in == Elem::I8 && (flags & 2)) ? Elem::U8
                                                         : mi.in;
  const bool ocp = flags & 4;
  std::optional<ScaleSelects> scales;
  if (mi.f8f6f4 && (flags >> 9 & 1))
    scales = ScaleSelects{(flags >> 10) & 3, (flags >> 12) & 3};
  if (mi.intAcc)
    multiplyWave<int64_t>(mi, inA, inB, ocp, lanes, wave);
  else
    multiplyWave<double>(mi, inA, inB, ocp, lanes, wave, scales);
}

// flags: bit 0, A is unsigned; bit 1, B is unsigned (WMMA iu8's sign
// operands); bit 2, 8-bit floats are OCP's (gfx950), else FNUZ (gfx942);
// bits 3-5 and 6-8, an f8f6f4 MFMA's A and B formats (0 E4M3, 1 E5M2,
// 4 E2M1);
// bit 9, it takes scales (V_MFMA_SCALE_*), bits 10-11 and 12-13 the bytes
// of A's and B's scale registers it reads.
void matrixMultiply(int id, uint32_t flags, const void *a, const void *b, const void *c, void *d, uint32_t scaleA,
                    uint32_t scaleB) {
  const MatrixInstruction &mi = kInstructions[size_t(id)];
  FiberWorkgroup &wg = currentWorkgroup();
  const uint32_t wave = wg.waveSize();
  if (wave != (mi.wmma ? 32u : 64u))
    wg.fail(std::string(mi.name) + " needs a wave of " + (mi.wmma ? "32" : "64") + " lanes, not " +
            std::to_string(wave));
  const uint32_t lane = wg.currentLane(), waveBase = lane - lane % wave;
  if (wg.blockSize() - waveBase < wave)
    wg.fail(std::string(mi.name) + " needs a full wave; the workgroup's last wave has " +
            std::to_string(wg.blockSize() - waveBase) + " of " + std::to_string(wave) + " lanes");
  Operands mine{static_cast<const uint8_t *>(a), static_cast<const uint8_t *>(b), static_cast<const uint8_t *>(c),
                static_cast<uint8_t *>(d), scaleA, scaleB};
  const uint32_t meeting = wg.waveSyncsPassed(lane);
  uint64_t *slots = wg.exchangeSlots(lane);
  slots[lane] = reinterpret_cast<uint64_t>(&mine);
  if (wg.lastToArrive(lane)) {
    const Operands *lanes[64];
    for (unsigned l = 0; l < wave; ++l)
      lanes[l] = reinterpret_cast<const Operands *>(slots[waveBase + l]);
    multiplyWaveAs(mi, flags, lanes, wave);
  }
  wg.waveSync(); // every lane's D is written when the wave meets
  if (!wg.stepCompleted(lane, meeting))
    wg.fail(std::string(mi.name) + " was reached by only part of a wave");
}

// The wave form's (emulator_wave.hpp): every lane's registers side by side,
// lane l's A at a + l * aBytes (and so on); the wave is complete by
// construction.
void matrixMultiplyWave(int id, uint32_t flags, const uint8_t *a, const uint8_t *b, const uint8_t *c, uint8_t *d,
                        uint32_t aBytes, uint32_t bBytes, uint32_t cBytes, uint32_t dBytes, uint32_t wave,
                        const uint32_t *scaleA, const uint32_t *scaleB) {
  const MatrixInstruction &mi = kInstructions[size_t(id)];
  Operands operands[64];
  const Operands *lanes[64];
  for (unsigned l = 0; l < wave; ++l) {
    operands[l] = Operands{a + size_t(l) * aBytes, b + size_t(l) * bBytes, c + size_t(l) * cBytes, d + size_t(l) * dBytes,
                           scaleA ? scaleA[l] : 0u, scaleB ? scaleB[l] : 0u};
    lanes[l] = &operands[l];
  }
  multiplyWaveAs(mi, flags, lanes, wave);
}

} // namespace tessel::emu

extern "C" void tessel_emu_matrix_wave(int32_t id, uint32_t flags, const void *a, const void *b, const void *c,
                                       void *d, uint32_t aBytes, uint32_t bBytes, uint32_t cBytes, uint32_t dBytes,
                                       uint32_t wave, const uint32_t *scaleA, const uint32_t *scaleB) {
  tessel::emu::matrixMultiplyWave(id, flags, static_cast<const uint8_t *>(a), static_cast<const uint8_t *>(b),
                                  static_cast<const uint8_t *>(c), static_cast<uint8_t *>(d), aBytes, bBytes, cBytes,
                                  dBytes, wave, scaleA, scaleB);
}

extern "C" void tessel_emu_matrix(int32_t id, uint32_t flags, const void *a, const void *b, const void *c, void *d,
                                  uint32_t scaleA, uint32_t scaleB) {
  tessel::emu::matrixMultiply(id, flags, a, b, c, d, scaleA, scaleB);
}
