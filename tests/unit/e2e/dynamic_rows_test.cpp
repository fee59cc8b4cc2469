// A kernel over [M, 14336] f16 with a dynamic row count M that the caller
// promises is a multiple of 128 (LESSONS.md, first row): one compile serves
// every valid M, and the loads and stores move 128 bits at a time.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

using namespace tessel;
using namespace e2e;

namespace {

constexpr int kCols = 14336;

// out = x * scale + 1, tile by tile.
void scale_rows(Ptr<f16> x, Ptr<f16> out, i32 M, f32 scale, Const<int> BM, Const<int> BN) {
  assume(M % 128 == 0);
  auto rows = program_id(0) * BM + arange(0, BM);
  auto cols = program_id(1) * BN + arange(0, BN);
  auto offs = expand_dims(rows, 1) * kCols + expand_dims(cols, 0);
  auto mask = expand_dims(rows < M, 1);
  auto v = cast<float>(load(x + offs, mask));
  store(out + offs, cast<half>(v * scale + 1.0f), mask);
}

} // namespace

TEST_CASE("[M, 14336] f16 with assume(M % 128 == 0) compiles once and runs for several M") {
  auto kernel = jit<scale_rows>();
  const int BM = 16, BN = 512;
  for (int M : {128, 384, 256}) {
    INFO("M = " << M);
    size_t n = size_t(M) * kCols;
    std::vector<half> hx(n);
    auto values = randomFloats(n, -4, 4);
    for (size_t i = 0; i < n; ++i)
      hx[i] = half(values[i]);
    auto x = emulator().upload(hx);
    auto out = poisoned<half>(n);
    float scale = 0.5f;
    kernel.launch(emulator(), {uint32_t(M / BM), uint32_t(kCols / BN)}, {.num_warps = 4}, x, out, M,
                  scale, BM, BN);
    auto got = out.download();
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i)
      wrong += got[i].bits != half(float(hx[i]) * scale + 1.0f).bits;
    CHECK(wrong == 0);
  }
  CHECK(kernel.runtime()->stats().compiles + kernel.runtime()->stats().diskHits == 1);
  const CompiledKernel &k = *kernel.runtime()->lastKernel();
  CHECK(contains(k.tileIR, "tessel.divisibility = 128"));
  // 16-byte accesses, buffer or global (the lowering picks the instruction).
  CHECK(std::regex_search(k.assembly(), std::regex("(buffer|global)_load_dwordx4")));
  CHECK(std::regex_search(k.assembly(), std::regex("(buffer|global)_store_dwordx4")));
}

namespace {

// f16 rows widened to f32: the f16 loads and the f32 stores each move 16
// bytes per instruction (8 halves in, 2 x 4 floats out).
void widen_rows(Ptr<f16> x, Ptr<f32> out, i32 M, Const<int> BM, Const<int> BN) {
  auto rows = program_id(0) * BM + arange(0, BM);
  auto cols = program_id(1) * BN + arange(0, BN);
  auto offs = expand_dims(rows, 1) * kCols + expand_dims(cols, 0);
  auto mask = expand_dims(rows < M, 1);
  store(out + offs, cast<float>(load(x + offs, mask)), mask);
}

// The same walk flattened: offsets rebuilt as (i / 14336) * 14336 + i % 14336.
void widen_flat(Ptr<f16> x, Ptr<f32> out, i32 total, Const<int> BLOCK) {
  auto i = program_id(0) * BLOCK + arange(0, BLOCK);
  auto offs = (i / kCols) * kCols + i % kCols;
  auto mask = i < total;
  store(out + offs, cast<float>(load(x + offs, mask)), mask);
}

template <class Launch> void checkWiden(const char *what, Launch &&launch, const CompiledKernel *(*last)()) {
  INFO(what);
  const int M = 7;
  const size_t n = size_t(M) * kCols;
  std::vector<half> hx(n);
  auto values = randomFloats(n, -100, 100);
  for (size_t i = 0; i < n; ++i)
    hx[i] = half(values[i]);
  auto x = emulator().upload(hx);
  auto out = poisoned<float>(n);
  launch(x, out, M);
  auto got = out.download();
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i)
    wrong += got[i] != float(hx[i]);
  CHECK(wrong == 0);
  const CompiledKernel &k = *last();
  CAPTURE(k.assembly().substr(0, 0));
  // 16-byte accesses, buffer or global (the lowering picks the instruction).
  CHECK(std::regex_search(k.assembly(), std::regex("(buffer|global)_load_dwordx4")));
  CHECK(std::regex_search(k.assembly(), std::regex("(buffer|global)_store_dwordx4")));
  for (const char *narrow : {"_load_dwordx2", "_load_ushort", "_store_dword ", "_load_dword "}) {
    CAPTURE(narrow);
    CHECK_FALSE(contains(k.assembly(), std::string("global") + narrow));
    CHECK_FALSE(contains(k.assembly(), std::string("buffer") + narrow));
  }
}

} // namespace

TEST_CASE("gfx942: an f16 -> f32 row kernel over [M, 14336] moves 16 bytes per access, 2-D and flattened with / and %") {
  static auto rows = jit<widen_rows>();
  static auto flat = jit<widen_flat>();
  checkWiden(
      "2-D", [](auto &x, auto &out, int M) {
        rows.launch(emulator(), {uint32_t(cdiv(M, 16)), uint32_t(kCols / 512)}, {.num_warps = 4}, x, out, M, 16, 512);
      },
      [] { return rows.runtime()->lastKernel(); });
  checkWiden(
      "flattened", [](auto &x, auto &out, int M) {
        flat.launch(emulator(), {uint32_t(cdiv(M * kCols, 2048))}, {.num_warps = 4}, x, out, M * kCols, 2048);
      },
      [] { return flat.runtime()->lastKernel(); });
}
