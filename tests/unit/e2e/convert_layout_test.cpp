// Layout conversions whose elements all stay in their wave: in-wave shuffles
// (ds_bpermute; v_permlanex16 on gfx1100), no LDS. Integer-valued inputs
// make every result exact, so a wrong lane or register shows as a wrong
// value; odd sizes mask the edges.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

using namespace tessel;
using namespace e2e;

namespace {

// O = cast<half>(A @ B) @ C in one block: the first dot's result is the
// second's A operand (attention's P).
void dot_chain(Ptr<half> a, Ptr<half> b, Ptr<half> c, Ptr<float> o, i32 M, i32 K, i32 J, i32 N, Const<int> BM,
               Const<int> BK, Const<int> BJ, Const<int> BN) {
  auto rm = arange(0, BM), rk = arange(0, BK), rj = arange(0, BJ), rn = arange(0, BN);
  auto ta = load(a + expand_dims(rm, 1) * K + expand_dims(rk, 0), expand_dims(rm < M, 1) & expand_dims(rk < K, 0), 0);
  auto tb = load(b + expand_dims(rk, 1) * J + expand_dims(rj, 0), expand_dims(rk < K, 1) & expand_dims(rj < J, 0), 0);
  auto tc = load(c + expand_dims(rj, 1) * N + expand_dims(rn, 0), expand_dims(rj < J, 1) & expand_dims(rn < N, 0), 0);
  auto p = dot(ta, tb);
  store(o + expand_dims(rm, 1) * N + expand_dims(rn, 0), dot(cast<half>(p), tc),
        expand_dims(rm < M, 1) & expand_dims(rn < N, 0));
}

// y = x^T and z[i][j] = x[0][i] + x[0][j]: a transpose and a row used as a
// column, within one wave when the block runs one.
void in_wave_moves(Ptr<float> x, Ptr<float> y, Ptr<float> z, i32 R, i32 C, Const<int> BR, Const<int> BC) {
  auto r = arange(0, BR), c = arange(0, BC);
  auto v = load(x + expand_dims(r, 1) * C + expand_dims(c, 0), expand_dims(r < R, 1) & expand_dims(c < C, 0), 0.0f);
  store(y + expand_dims(c, 1) * R + expand_dims(r, 0), trans(v), expand_dims(c < C, 1) & expand_dims(r < R, 0));
  auto row = load(x + c, c < C, 0.0f);
  store(z + expand_dims(c, 1) * C + expand_dims(c, 0), expand_dims(row, 1) + expand_dims(row, 0),
        expand_dims(c < C, 1) & expand_dims(c < C, 0));
}

std::vector<half> smallInts(size_t n) {
  std::vector<half> v;
  for (int x : randomInts<int>(n, -3, 3))
    v.push_back(half(float(x)));
  return v;
}

} // namespace

TEST_CASE("a dot's result to the next dot's A operand in-wave: exact at odd sizes, wave32 and wave64") {
  struct Case {
    const char *arch;
    unsigned warps;
    int M, K, J, N, BM, BK, BJ, BN;
  };
  const Case cases[] = {
      {"gfx1100", 2, 29, 23, 27, 13, 32, 32, 32, 16}, {"gfx1100", 4, 61, 17, 45, 30, 64, 32, 64, 32},
      {"gfx1100", 1, 16, 16, 16, 16, 16, 16, 16, 16}, {"gfx942", 4, 125, 23, 61, 30, 128, 32, 64, 32},
      {"gfx950", 2, 57, 31, 29, 19, 64, 32, 32, 32},
  };
  for (const Case &k : cases) {
    INFO(k.arch << " " << k.warps << " warps, " << k.M << "x" << k.K << "x" << k.J << "x" << k.N);
    Device dev = Device::emulator(k.arch);
    auto ha = smallInts(size_t(k.M) * k.K), hb = smallInts(size_t(k.K) * k.J), hc = smallInts(size_t(k.J) * k.N);
    auto a = dev.upload(ha), b = dev.upload(hb), c = dev.upload(hc);
    auto o = dev.upload(std::vector<float>(size_t(k.M) * k.N, std::nanf("")));
    auto kernel = jit<dot_chain>();
    kernel.launch(dev, {1}, {.num_warps = k.warps}, a, b, c, o, k.M, k.K, k.J, k.N, k.BM, k.BK, k.BJ, k.BN);
    auto got = o.download();
    size_t wrong = 0;
    for (int i = 0; i < k.M; ++i)
      for (int n = 0; n < k.N; ++n) {
        double want = 0;
        for (int j = 0; j < k.J; ++j) {
          double p = 0;
          for (int q = 0; q < k.K; ++q)
            p += double(float(ha[size_t(i) * k.K + q])) * double(float(hb[size_t(q) * k.J + j]));
          want += p * double(float(hc[size_t(j) * k.N + n]));
        }
        wrong += double(got[size_t(i) * k.N + n]) != want;
      }
    CHECK(wrong == 0);
    // On gfx1100 P swaps rows of 16 lanes (v_permlanex16, no LDS for it).
    if (std::string(k.arch) == "gfx1100")
      CHECK(contains(kernel.runtime()->lastKernel()->llvmIR(), "llvm.amdgcn.permlanex16"));
  }
}

TEST_CASE("transposes and a row used as a column in one wave: ds_bpermute, no LDS, exact at odd sizes") {
  struct Case {
    const char *arch;
    int R, C, BR, BC;
  };
  for (const Case &k : {Case{"gfx942", 13, 7, 16, 8}, Case{"gfx942", 5, 29, 8, 32}, Case{"gfx1100", 13, 7, 16, 8},
                        Case{"gfx1100", 3, 31, 4, 32}, Case{"gfx950", 9, 15, 16, 16}}) {
    INFO(k.arch << " " << k.R << "x" << k.C << " in " << k.BR << "x" << k.BC);
    Device dev = Device::emulator(k.arch);
    auto hx = randomFloats(size_t(k.R) * k.C);
    auto x = dev.upload(hx);
    auto y = dev.upload(std::vector<float>(size_t(k.R) * k.C, std::nanf(""))),
         z = dev.upload(std::vector<float>(size_t(k.C) * k.C, std::nanf("")));
    auto kernel = jit<in_wave_moves>();
    kernel.launch(dev, {1}, {.num_warps = 1}, x, y, z, k.R, k.C, k.BR, k.BC);
    auto gy = y.download(), gz = z.download();
    size_t wrong = 0;
    for (int i = 0; i < k.R; ++i)
      for (int j = 0; j < k.C; ++j)
        wrong += gy[size_t(j) * k.R + i] != hx[size_t(i) * k.C + j];
    for (int i = 0; i < k.C; ++i)
      for (int j = 0; j < k.C; ++j)
        wrong += gz[size_t(i) * k.C + j] != hx[i] + hx[j];
    CHECK(wrong == 0);
    const CompiledKernel &compiled = *kernel.runtime()->lastKernel();
    CHECK(contains(compiled.tileIR, "tessel.convert_layout"));
    CHECK(compiled.ldsBytes == 0);
    CHECK(contains(compiled.llvmIR(), "llvm.amdgcn.ds.bpermute"));
  }
}
