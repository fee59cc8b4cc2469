// Reductions and scans along every axis of 2-D tiles, with masked edges, on
// wave64 (gfx942) and wave32 (gfx1100) targets.
#include "e2e_common.hpp"

#include <sstream>

using namespace tessel;
using namespace e2e;

namespace {

enum ReduceKind { kSum, kMax, kMin, kArgmax, kArgmin, kXorSum, kCumsum, kCumsumRev, kCumprod };
const char *kindName[] = {"sum", "max", "min", "argmax", "argmin", "xor_sum", "cumsum",
                          "cumsum reverse", "cumprod"};

// x is R x C (row stride C); the R x C tile is masked to rows < M, cols < N
// (masked elements read `fill`). Reductions write one value per line along
// the other axis; scans write the tile.
void reduce_2d(Ptr<f32> x, Ptr<f32> out, Ptr<i32> idx, i32 M, i32 N, f32 fill, Const<int> R,
               Const<int> C, Const<int> AXIS, Const<int> KIND) {
  auto rows = arange(0, R), cols = arange(0, C);
  auto offs = expand_dims(rows, 1) * C + expand_dims(cols, 0);
  auto mask = expand_dims(rows < M, 1) & expand_dims(cols < N, 0);
  auto v = load(x + offs, mask, fill);
  auto lineOffs = AXIS == 0 ? cols : rows;
  switch (int(KIND)) {
  case kSum: store(out + lineOffs, sum(v, AXIS)); break;
  case kMax: store(out + lineOffs, max(v, AXIS)); break;
  case kMin: store(out + lineOffs, min(v, AXIS)); break;
  case kArgmax: store(idx + lineOffs, argmax(v, AXIS)); break;
  case kArgmin: store(idx + lineOffs, argmin(v, AXIS)); break;
  case kXorSum: store(idx + lineOffs, xor_sum(cast<int32_t>(v), AXIS)); break;
  case kCumsum: store(out + offs, cumsum(v, AXIS)); break;
  case kCumsumRev: store(out + offs, cumsum(v, AXIS, true)); break;
  default: store(out + offs, cumprod(v, AXIS)); break;
  }
}

struct TileCase {
  int R, C, M, N, warps;
};

// `assembly`: when given, receives the kernel's code.
void checkReduce(Device &dev, int kind, int axis, TileCase s, std::string *assembly = nullptr) {
  INFO(kindName[kind]);
  INFO("axis " << axis << ", tile " << s.R << "x" << s.C << ", valid " << s.M << "x" << s.N
               << ", warps " << s.warps << ", " << dev.arch());
  auto kernel = jit<reduce_2d>();
  bool product = kind == kCumprod;
  size_t elems = size_t(s.R) * s.C;
  // Integers in [-8, 8] (or near 1 for products): sums are exact in f32 and
  // ties for argmax are common.
  std::vector<float> hx(elems);
  for (size_t i = 0; i < elems; ++i)
    hx[i] = product ? 1.0f + float(randomInts<int>(1, -2, 2)[0]) / 16.0f
                    : float(randomInts<int>(1, -8, 8)[0]);
  float fill = kind == kMax || kind == kArgmax ? -1e30f
               : kind == kMin || kind == kArgmin ? 1e30f
               : product ? 1.0f : 0.0f;
  auto x = dev.upload(hx);
  size_t lines = axis == 0 ? s.C : s.R;
  bool isScan = kind >= kCumsum;
  auto out = poisoned<float>(isScan ? elems : lines);
  auto idx = poisoned<int32_t>(lines);
  kernel.launch(dev, {1}, {.num_warps = unsigned(s.warps)}, x, out, idx, s.M, s.N, fill, s.R,
                s.C, axis, kind);
  if (assembly)
    *assembly = kernel.runtime()->lastKernel()->assembly();
  auto at = [&](int r, int c) { return r < s.M && c < s.N ? double(hx[size_t(r) * s.C + c]) : double(fill); };
  int other = axis == 0 ? s.C : s.R, along = axis == 0 ? s.R : s.C;
  auto elem = [&](int line, int k) { return axis == 0 ? at(k, line) : at(line, k); };
  size_t wrong = 0;
  if (isScan) {
    auto got = out.download();
    for (int line = 0; line < other; ++line) {
      double acc = product ? 1 : 0;
      for (int j = 0; j < along; ++j) {
        int k = kind == kCumsumRev ? along - 1 - j : j;
        acc = product ? acc * elem(line, k) : acc + elem(line, k);
        size_t pos = axis == 0 ? size_t(k) * s.C + line : size_t(line) * s.C + k;
        wrong += relError(got[pos], acc, 1.0) > 1e-5;
      }
    }
  } else if (kind == kArgmax || kind == kArgmin || kind == kXorSum) {
    auto got = idx.download();
    for (int line = 0; line < other; ++line) {
      int best = 0, x = 0;
      for (int k = 0; k < along; ++k) {
        double v = elem(line, k), b = elem(line, best);
        if ((kind == kArgmax && v > b) || (kind == kArgmin && v < b))
          best = k;
        x ^= int32_t(v);
      }
      wrong += got[line] != (kind == kXorSum ? x : best);
    }
  } else {
    auto got = out.download();
    for (int line = 0; line < other; ++line) {
      double acc = elem(line, 0);
      for (int k = 1; k < along; ++k)
        acc = kind == kSum ? acc + elem(line, k)
              : kind == kMax ? std::max(acc, elem(line, k))
                             : std::min(acc, elem(line, k));
      wrong += got[line] != float(acc);
    }
  }
  CHECK(wrong == 0);
}

const TileCase kShapes[] = {
    {1, 64, 1, 37, 1},   {16, 16, 13, 11, 1}, {32, 64, 31, 50, 4},
    {64, 32, 64, 32, 2}, {8, 256, 5, 200, 4}, {128, 8, 100, 7, 8},
};

} // namespace

TEST_CASE("reductions along each axis, gfx942 (wave64)") {
  Device dev = Device::emulator("gfx942");
  for (int kind : {kSum, kMax, kMin, kArgmax, kArgmin, kXorSum})
    for (int axis : {0, 1})
      for (TileCase s : kShapes)
        checkReduce(dev, kind, axis, s);
}

TEST_CASE("reductions along each axis, gfx1100 (wave32)") {
  Device dev = Device::emulator("gfx1100");
  for (int kind : {kSum, kMax, kArgmin})
    for (int axis : {0, 1})
      for (TileCase s : kShapes)
        checkReduce(dev, kind, axis, s);
}

// A butterfly over all 32 lanes of a wave32 target: the step between the two
// rows of 16 is one v_permlanex16 (a VALU instruction), not a ds_bpermute
// through the LDS hardware. Here every lane of a row holds the same value by
// then; the gfx1100 reductions along each axis above (lines whose 16-lane
// step comes first) and the gfx1100 sorts are what catch wrong selects.
// No lane reads the instruction's old value, to which its destination is
// tied: with the source as old value, the source needs a copy (a v_mov)
// before each exchange and the instruction reads and writes one register.
TEST_CASE("wave32 reductions exchange rows of 16 with v_permlanex16") {
  Device dev = Device::emulator("gfx1100");
  for (int kind : {kSum, kArgmin}) {
    std::string s;
    checkReduce(dev, kind, 1, {4, 64, 3, 61, 1}, &s);
    CHECK(contains(s, "v_permlanex16_b32"));
    CHECK_FALSE(contains(s, "ds_bpermute"));
    std::istringstream in(s);
    std::string line;
    int exchanges = 0;
    while (std::getline(in, line)) {
      const size_t at = line.find("v_permlanex16_b32 ");
      if (at == std::string::npos)
        continue;
      ++exchanges;
      const size_t dest = at + 18, comma = line.find(", ", dest), src = comma + 2;
      INFO(line);
      CHECK(line.substr(dest, comma - dest) != line.substr(src, line.find(',', src) - src));
    }
    CHECK(exchanges > 0);
  }
}

TEST_CASE("scans along each axis, forward and reverse") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    Device dev = Device::emulator(arch);
    for (int kind : {kCumsum, kCumsumRev, kCumprod})
      for (int axis : {0, 1})
        for (TileCase s : kShapes)
          checkReduce(dev, kind, axis, s);
  }
}

namespace {
// xor_sum of a bool tile is a bool tile (Triton's tl.xor_sum on int1): true
// where a line holds an odd number of trues. Masked-off elements read false.
void parity_2d(Ptr<i1> x, Ptr<i1> byRow, Ptr<i1> byCol, Ptr<i1> total, i32 M, i32 N, Const<int> R,
               Const<int> C) {
  auto rows = arange(0, R), cols = arange(0, C);
  auto offs = expand_dims(rows, 1) * C + expand_dims(cols, 0);
  auto mask = expand_dims(rows < M, 1) & expand_dims(cols < N, 0);
  auto v = load(x + offs, mask, false);
  i1 rowParity = xor_sum(v, 1);
  store(byRow + rows, rowParity);
  store(byCol + expand_dims(cols, 0), xor_sum(v, 0, /*keep_dims=*/true)); // [1, C]
  store(total, xor_sum(xor_sum(v, 0), 0));                                // a scalar
}
} // namespace

TEST_CASE("xor_sum of bool tiles is their parity along each axis (Buffer<bool> from std::vector<bool>)") {
  for (const char *arch : {"gfx942", "gfx1100"}) {
    Device dev = Device::emulator(arch);
    for (TileCase s : {TileCase{1, 64, 1, 37, 1}, TileCase{16, 16, 13, 11, 1}, TileCase{32, 64, 31, 50, 4},
                       TileCase{8, 256, 5, 200, 4}}) {
      INFO(std::string(arch) << ": tile " << s.R << "x" << s.C << ", valid " << s.M << "x" << s.N << ", warps " << s.warps);
      std::vector<bool> hx(size_t(s.R) * s.C);
      for (size_t k = 0; k < hx.size(); ++k)
        hx[k] = randomInts<int>(1, 0, 2)[0] == 0;
      auto x = dev.upload(hx);
      // Poison: a byte the kernel leaves unwritten is neither 0 nor 1.
      auto byRow = poisoned<uint8_t>(s.R), byCol = poisoned<uint8_t>(s.C), total = poisoned<uint8_t>(1);
      auto asBool = [](Buffer<uint8_t> &b) { return reinterpret_cast<bool *>(b.devicePtr()); };
      jit<parity_2d>().launch(dev, {1}, {.num_warps = unsigned(s.warps)}, x, asBool(byRow), asBool(byCol),
                              asBool(total), s.M, s.N, s.R, s.C);
      auto in = [&](int r, int c) { return r < s.M && c < s.N && hx[size_t(r) * s.C + c]; };
      size_t wrong = 0;
      bool all = false;
      auto rowsGot = byRow.download(), colsGot = byCol.download();
      for (int r = 0; r < s.R; ++r) {
        bool p = false;
        for (int c = 0; c < s.C; ++c)
          p ^= in(r, c);
        wrong += rowsGot[r] != uint8_t(p);
        all ^= p;
      }
      for (int c = 0; c < s.C; ++c) {
        bool p = false;
        for (int r = 0; r < s.R; ++r)
          p ^= in(r, c);
        wrong += colsGot[c] != uint8_t(p);
      }
      CHECK(wrong == 0);
      CHECK(total.download()[0] == uint8_t(all));
    }
  }
}
