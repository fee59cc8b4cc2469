// Tiles of 8-bit elements (int8_t and the 8-bit floats) carried through
// for_range, if_ and while_: the lowering carries them across branches as
// 32-bit words of four registers (packByteBlockArguments), so every byte must
// come back to its element. The inputs give each position its own byte, so a
// swapped byte within a word, or a word given to another register, shows;
// sizes are odd (masked edges), outputs poisoned, and each kernel runs on a
// wave64 and a wave32 target with one and four waves (a thread's share of the
// tile differs with each).
#include "e2e_common.hpp"

using namespace tessel;
using namespace e2e;

namespace {

constexpr int kRows = 16, kCols = 64;

template <class T> Buffer<T> poisonedOn(Device &dev, size_t n) {
  std::vector<T> junk(n);
  std::memset(static_cast<void *>(junk.data()), 0xA5, n * sizeof(T));
  return dev.upload(junk);
}

int8_t wrap(int v) { return int8_t(uint8_t(v & 0xFF)); }

// An int8 tile through a loop whose body branches, a while_, and an if_;
// then a row maximum, a row sum (in i32), a sort along rows and masked stores.
void int8_carried(Ptr<int8_t> x, Ptr<int8_t> y, Ptr<int8_t> out, Ptr<int8_t> rowmax, Ptr<int32_t> rowsum,
                  Ptr<int8_t> sorted, i32 rows, i32 cols, i32 steps) {
  auto r = expand_dims(arange(0, kRows), 1);
  auto c = expand_dims(arange(0, kCols), 0);
  auto offs = r * cols + c;
  auto m = (r < rows) & (c < cols);
  auto t = load(x + offs, m, full<int8_t>({kRows, kCols}, -7)); // masked-off elements read -7
  auto u = load(y + offs, m);
  for_range(0, steps, [&](i32 k) {
    if_(k % 3 == 0, [&] { t = where((offs + k) % 2 == 0, t + u, t - cast<int8_t>(k)); }, [&] { t = t ^ u; });
    u = u + cast<int8_t>(offs % 5);
  });
  auto i = full({}, 3);
  while_([&] { return i > 0; }, [&] {
    t = t + cast<int8_t>(r * i);
    i = i - 1;
  });
  if_(steps > 2, [&] { t = -t; });
  store(out + offs, t, m);
  auto rowIdx = arange(0, kRows);
  store(rowmax + rowIdx, max(where(m, t, int8_t(-128)), 1), rowIdx < rows);
  store(rowsum + rowIdx, sum(cast<int32_t>(where(m, t, int8_t(0))), 1), rowIdx < rows);
  store(sorted + offs, sort(where(m, t, int8_t(127)), {.axis = 1}), m);
}

struct Int8Outputs {
  std::vector<int8_t> out, rowmax, sorted;
  std::vector<int32_t> rowsum;
};

Int8Outputs int8Reference(const std::vector<int8_t> &x, const std::vector<int8_t> &y, int rows, int cols, int steps) {
  std::vector<int8_t> t(kRows * kCols), u(kRows * kCols);
  auto at = [&](int i, int j) { return i * kCols + j; };
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kCols; ++j) {
      const bool in = i < rows && j < cols;
      t[at(i, j)] = in ? x[i * cols + j] : int8_t(-7);
      u[at(i, j)] = in ? y[i * cols + j] : int8_t(0); // masked off without `other`: never read below
    }
  for (int k = 0; k < steps; ++k)
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < kCols; ++j) {
        const int o = i * cols + j;
        int8_t &e = t[at(i, j)];
        const int8_t v = u[at(i, j)];
        if (k % 3 == 0)
          e = (o + k) % 2 == 0 ? wrap(e + v) : wrap(e - wrap(k));
        else
          e = int8_t(e ^ v);
        u[at(i, j)] = wrap(v + wrap(o % 5));
      }
  for (int s = 3; s > 0; --s)
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < kCols; ++j) t[at(i, j)] = wrap(t[at(i, j)] + wrap(i * s));
  if (steps > 2)
    for (int8_t &e : t) e = wrap(-e);
  Int8Outputs ref;
  ref.out.assign(size_t(rows) * cols, 0);
  ref.sorted.assign(size_t(rows) * cols, 0);
  for (int i = 0; i < rows; ++i) {
    std::vector<int8_t> row;
    int sum = 0, best = -128;
    for (int j = 0; j < cols; ++j) {
      const int8_t e = t[at(i, j)];
      ref.out[i * cols + j] = e;
      row.push_back(e);
      sum += e;
      best = std::max(best, int(e));
    }
    std::sort(row.begin(), row.end());
    std::copy(row.begin(), row.end(), ref.sorted.begin() + i * cols);
    ref.rowmax.push_back(int8_t(best));
    ref.rowsum.push_back(sum);
  }
  return ref;
}

// An 8-bit float tile through a loop that swaps it with another by where,
// reloads one in a branch (the software pipeliner's prefetch shape), and is
// cast to f32 after the loop.
template <class F>
void fp8_carried(Ptr<F> a, Ptr<F> b, Ptr<F> out, Ptr<float> outf, i32 rows, i32 cols, i32 steps) {
  auto r = expand_dims(arange(0, kRows), 1);
  auto c = expand_dims(arange(0, kCols), 0);
  auto offs = r * cols + c;
  auto m = (r < rows) & (c < cols);
  auto p = load(a + offs, m, zeros<F>({kRows, kCols}));
  auto q = load(b + offs, m, zeros<F>({kRows, kCols}));
  for_range(0, steps, [&](i32 k) {
    auto keep = p;
    p = where((offs + k) % 3 == 0, q, p);
    q = keep;
    if_(k % 2 == 1, [&] { q = load(b + offs, m & (c >= k), p); });
  });
  store(out + offs, p, m);
  store(outf + offs, cast<float>(q), m);
}

template <class F> struct Fp8Outputs {
  std::vector<uint8_t> out, q;
};

template <class F>
Fp8Outputs<F> fp8Reference(const std::vector<F> &a, const std::vector<F> &b, int rows, int cols, int steps) {
  std::vector<uint8_t> p(kRows * kCols), q(kRows * kCols);
  auto at = [&](int i, int j) { return i * kCols + j; };
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kCols; ++j) {
      const bool in = i < rows && j < cols;
      p[at(i, j)] = in ? a[i * cols + j].bits : 0;
      q[at(i, j)] = in ? b[i * cols + j].bits : 0;
    }
  for (int k = 0; k < steps; ++k)
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < kCols; ++j) {
        const uint8_t keep = p[at(i, j)];
        if ((i * cols + j + k) % 3 == 0) p[at(i, j)] = q[at(i, j)];
        q[at(i, j)] = keep;
        if (k % 2 == 1) q[at(i, j)] = i < rows && j < cols && j >= k ? b[i * cols + j].bits : p[at(i, j)];
      }
  Fp8Outputs<F> ref;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      ref.out.push_back(p[at(i, j)]);
      ref.q.push_back(q[at(i, j)]);
    }
  return ref;
}

// Each position its own byte: neighbours in a word differ in every case.
template <class T> std::vector<T> distinctBytes(size_t n, unsigned mul, unsigned add) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t bits = uint8_t(i * mul + add + i / 256);
    if constexpr (std::is_same_v<T, int8_t>)
      v[i] = int8_t(bits);
    else
      v[i] = T::fromBits(bits);
  }
  return v;
}

void checkInt8(const char *arch, unsigned numWarps, int rows, int cols, int steps) {
  INFO(arch << ", " << numWarps << " waves, " << rows << " x " << cols << ", " << steps << " steps");
  Device dev = Device::emulator(arch);
  const size_t n = size_t(rows) * cols;
  auto x = distinctBytes<int8_t>(n, 37, 11), y = distinctBytes<int8_t>(n, 13, 5);
  auto dx = dev.upload(x), dy = dev.upload(y);
  auto out = poisonedOn<int8_t>(dev, n), sorted = poisonedOn<int8_t>(dev, n);
  auto rowmax = poisonedOn<int8_t>(dev, kRows);
  auto rowsum = poisonedOn<int32_t>(dev, kRows);
  jit<int8_carried>().launch(dev, {1}, {.num_warps = numWarps}, dx, dy, out, rowmax, rowsum, sorted, rows, cols, steps);
  Int8Outputs ref = int8Reference(x, y, rows, cols, steps);
  auto got = out.download(), gotSorted = sorted.download(), gotMax = rowmax.download();
  auto gotSum = rowsum.download();
  size_t wrong = 0, wrongSorted = 0, wrongRows = 0;
  for (size_t k = 0; k < n; ++k) {
    wrong += got[k] != ref.out[k];
    wrongSorted += gotSorted[k] != ref.sorted[k];
  }
  for (int i = 0; i < rows; ++i) wrongRows += (gotMax[i] != ref.rowmax[i]) + (gotSum[i] != ref.rowsum[i]);
  CHECK(wrong == 0);
  CHECK(wrongSorted == 0);
  CHECK(wrongRows == 0);
  // Past the rows: untouched (the poison's bytes).
  CHECK(uint8_t(gotMax[rows]) == 0xA5);
}

template <class F> void checkFp8(const char *arch, unsigned numWarps, int rows, int cols, int steps) {
  INFO(arch << ", " << numWarps << " waves, " << rows << " x " << cols << ", " << steps << " steps");
  Device dev = Device::emulator(arch);
  const size_t n = size_t(rows) * cols;
  auto a = distinctBytes<F>(n, 37, 11), b = distinctBytes<F>(n, 13, 5);
  auto da = dev.upload(a), db = dev.upload(b);
  auto out = poisonedOn<F>(dev, n);
  auto outf = poisonedOn<float>(dev, n);
  jit<fp8_carried<F>>().launch(dev, {1}, {.num_warps = numWarps}, da, db, out, outf, rows, cols, steps);
  Fp8Outputs<F> ref = fp8Reference(a, b, rows, cols, steps);
  auto got = out.download();
  auto gotf = outf.download();
  size_t wrong = 0, wrongCast = 0;
  for (size_t k = 0; k < n; ++k) {
    wrong += got[k].bits != ref.out[k];
    const float want = float(F::fromBits(ref.q[k]));
    wrongCast += std::isnan(want) ? !std::isnan(gotf[k]) : gotf[k] != want;
  }
  CHECK(wrong == 0);
  CHECK(wrongCast == 0);
}

} // namespace

TEST_CASE("byte carry: int8 tiles through for_range, if_ and while_, then max, sum, sort and masked stores") {
  for (const char *arch : {"gfx942", "gfx1100"})
    for (unsigned numWarps : {1u, 4u}) {
      checkInt8(arch, numWarps, 13, 61, 7);
      checkInt8(arch, numWarps, 9, 37, 2); // the if_ after the loops not taken
    }
}

TEST_CASE("byte carry: 8-bit float tiles swapped, reloaded in a branch and cast after a loop") {
  for (unsigned numWarps : {1u, 4u}) {
    checkFp8<float8_e4m3fnuz>("gfx942", numWarps, 13, 61, 9);
    checkFp8<float8_e5m2>("gfx1100", numWarps, 11, 45, 6);
  }
}
