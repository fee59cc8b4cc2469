// max / min reductions of floats (NaN-propagating, -0 < +0) across the
// lanes of a wave, on every target: gfx950 combines with v_maximum3_f32 /
// v_minimum3_f32; the others combine NaN-ignoring and carry a NaN flag
// (ReduceOpToLLVM's NanFlagged). A NaN in any one element, in every column
// in turn, must make its row's max and min NaN; signed zeros must order.
#include "e2e_common.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <cmath>

using namespace tessel;
using namespace e2e;

namespace {

// Each row's max and min of a [ROWS, C] tile, one wave per program.
template <class T> void row_max_min(Ptr<T> in, Ptr<T> out, Const<int> ROWS, Const<int> C) {
  auto rows = arange(0, ROWS);
  auto x = load(in + expand_dims(rows, 1) * C + expand_dims(arange(0, C), 0));
  store(out + rows * 2, max(x, 1));
  store(out + rows * 2 + 1, min(x, 1));
}

// Each column's max and min of a [R, 8] tile over `warps` waves: the
// reduction crosses lanes and then waves through LDS.
void col_max_min(Ptr<f32> in, Ptr<f32> out, Const<int> R) {
  auto cols = arange(0, 8);
  auto x = load(in + expand_dims(arange(0, R), 1) * 8 + expand_dims(cols, 0));
  store(out + cols * 2, max(x, 0));
  store(out + cols * 2 + 1, min(x, 0));
}

// The row's max and min as maximumf / minimumf define them, in double.
std::pair<double, double> extremes(const std::vector<double> &row) {
  double hi = -INFINITY, lo = INFINITY;
  for (double v : row) {
    if (std::isnan(v))
      return {NAN, NAN};
    if (v > hi || (v == 0 && hi == 0 && !std::signbit(v)))
      hi = v;
    if (v < lo || (v == 0 && lo == 0 && std::signbit(v)))
      lo = v;
  }
  return {hi, lo};
}

template <class T> void check(const char *arch, int rows, int C) {
  INFO(arch << ": " << rows << " x " << C << (std::is_same_v<T, float> ? " f32" : " f16"));
  Device dev = Device::emulator(arch);
  auto kernel = jit<row_max_min<T>>();
  auto run = [&](const std::vector<T> &host) {
    auto in = dev.upload(host);
    auto out = dev.upload(std::vector<T>(size_t(rows) * 2, T(12345.0f)));
    kernel.launch(dev, {1}, {.num_warps = 1}, in, out, rows, C);
    std::vector<T> got = out.download();
    int wrong = 0;
    for (int r = 0; r < rows; ++r) {
      std::vector<double> row;
      for (int c = 0; c < C; ++c)
        row.push_back(double(float(host[size_t(r) * C + c])));
      auto [hi, lo] = extremes(row);
      for (auto [want, have] : {std::pair{hi, got[size_t(r) * 2]}, std::pair{lo, got[size_t(r) * 2 + 1]}}) {
        const double h = double(float(have));
        const bool ok = std::isnan(want) ? std::isnan(h) : (h == want && std::signbit(h) == std::signbit(want));
        wrong += !ok;
      }
    }
    return wrong;
  };
  const T nan = T(std::nanf(""));
  std::vector<float> random = randomFloats(size_t(rows) * C, -50, 50);
  std::vector<T> base(random.size());
  for (size_t i = 0; i < base.size(); ++i)
    base[i] = T(random[i]);
  CHECK(run(base) == 0);
  // One NaN, in every column in turn (row c % rows), the other rows clean.
  int wrong = 0;
  for (int c = 0; c < C; ++c) {
    std::vector<T> host = base;
    host[size_t(c % rows) * C + c] = nan;
    wrong += run(host);
  }
  CHECK(wrong == 0);
  // Signed zeros: rows of -0 with one +0 (in every column in turn), rows of
  // +0 with one -0; -inf rows with a NaN at the end.
  wrong = 0;
  for (int c = 0; c < C; c += 3) {
    std::vector<T> host(base.size());
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < C; ++k) {
        const bool odd = k == (c + r) % C;
        host[size_t(r) * C + k] = r % 3 == 2 ? (k == C - 1 ? nan : T(-INFINITY))
                                  : r % 2 ? T(odd ? -0.0f : 0.0f)
                                          : T(odd ? 0.0f : -0.0f);
      }
    wrong += run(host);
  }
  CHECK(wrong == 0);
  // Which combine the target used: one instruction on gfx950; elsewhere no
  // ordered compare (the maximumf expansion's), unordered ones for the flag.
  const std::string asm_ = kernel.runtime()->lastKernel()->assembly();
  if (std::string(arch) == "gfx950") {
    CHECK(contains(asm_, std::is_same_v<T, float> ? "v_maximum3_f32" : "maximum3_f16"));
  } else {
    CHECK_FALSE(contains(asm_, "v_cmp_o_"));
    CHECK(contains(asm_, "v_cmp_u_"));
  }
}

} // namespace

// Across waves: the flag puts the NaN back before the exchange through LDS,
// so a NaN in any wave's part reaches every column's result.
TEST_CASE("max / min reductions across waves: a NaN in any wave's part gives NaN") {
  const int R = 512;
  for (const char *name : {"gfx942", "gfx1100"}) {
    const std::string arch = name;
    INFO(arch);
    Device dev = Device::emulator(arch);
    auto kernel = jit<col_max_min>();
    std::vector<float> base = randomFloats(size_t(R) * 8, -50, 50);
    int wrong = 0, launches = 0;
    for (int r = 0; r < R; r += 37) {
      std::vector<float> host = base;
      host[size_t(r) * 8 + r % 8] = std::nanf(""); // column r % 8, row r: every wave in turn
      auto in = dev.upload(host);
      auto out = dev.upload(std::vector<float>(16, 12345.0f));
      kernel.launch(dev, {1}, {.num_warps = 4}, in, out, R);
      std::vector<float> got = out.download();
      for (int c = 0; c < 8; ++c) {
        std::vector<double> col;
        for (int k = 0; k < R; ++k)
          col.push_back(host[size_t(k) * 8 + c]);
        auto [hi, lo] = extremes(col);
        for (auto [want, have] : {std::pair{hi, got[size_t(c) * 2]}, std::pair{lo, got[size_t(c) * 2 + 1]}})
          wrong += std::isnan(want) ? !std::isnan(have) : double(have) != want;
      }
      ++launches;
    }
    CHECK(launches == 14);
    CHECK(wrong == 0);
  }
}

TEST_CASE("max / min reductions across lanes: a NaN anywhere gives NaN, -0 < +0, every target") {
  for (const char *arch : {"gfx90a", "gfx942", "gfx950", "gfx1100"}) {
    check<float>(arch, 8, 64);
    check<float>(arch, 1, 256); // the whole wave along the row (gfx9: row broadcasts)
    check<half>(arch, 4, 128);
  }
}
