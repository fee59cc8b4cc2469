// Tutorial 07: non-maximum suppression.
//
// An object detector proposes boxes with scores; many overlap the same
// object. Greedy NMS keeps the best-scoring box, drops every box that
// overlaps it by more than an IoU threshold, and repeats with the next box
// still kept. It is the kernel compilers got wrong on AMD (a sort of six
// scores that became a `malloc` in the code object): here one workgroup
// sorts the scores with their indices in registers and across lanes, builds
// the IoU matrix of all pairs as one tile, and suppresses greedily, with no
// memory but its inputs and outputs.
//
// Build and run: scripts/tutorial.sh 07-non-max-suppression

#include <tessel/tessel.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

using namespace tessel;

// --- 1. The block program ----------------------------------------------------
//
// boxes: n rows of (center x, center y, width, height); scores: n floats.
// keep: n int64 slots, in score order: the index of each kept box, -1 where
// the box at that rank was suppressed. BLOCK >= n is the tile width (a power
// of two); the padding sorts last and is never kept.
void nms(Ptr<f32> boxes, Ptr<f32> scores, Ptr<int64_t> keep, i32 n, f32 threshold, Const<int> BLOCK) {
  auto offs = arange(0, BLOCK);
  auto inside = offs < n;

  // 1. Sort the scores, largest first, carrying each box's index. stable:
  // equal scores keep the order of their boxes.
  auto s = load(scores + offs, inside, -std::numeric_limits<float>::infinity());
  auto [sorted, order] = sort(s, offs, {.descending = true, .stable = true});
  (void)sorted;

  // 2. The boxes in score order (a gather from global memory through the
  // sorted indices), as corners, and their areas.
  auto field = [&](int c) { return load(boxes + order * 4 + c, inside, 0.0f); };
  auto cx = field(0), cy = field(1), w = field(2), h = field(3);
  auto x1 = cx - w * 0.5f, y1 = cy - h * 0.5f, x2 = cx + w * 0.5f, y2 = cy + h * 0.5f;
  auto area = w * h;

  // 3. IoU of every pair, a [BLOCK, BLOCK] tile: row i is box i (by rank),
  // column j box j; expand_dims + broadcasting make the pairs.
  auto rowOf = [](const Tile<float> &v) { return expand_dims(v, 1); };
  auto colOf = [](const Tile<float> &v) { return expand_dims(v, 0); };
  auto iw = maximum(minimum(rowOf(x2), colOf(x2)) - maximum(rowOf(x1), colOf(x1)), 0.0f);
  auto ih = maximum(minimum(rowOf(y2), colOf(y2)) - maximum(rowOf(y1), colOf(y1)), 0.0f);
  auto inter = iw * ih;
  auto iou = inter / maximum(rowOf(area) + colOf(area) - inter, 1e-12f);

  // 4. Greedy: walking the ranks, a box still kept suppresses every later
  // box it overlaps by more than the threshold. BLOCK is a trace-time
  // constant, so this C++ loop unrolls while tracing (BLOCK steps).
  auto kept = inside;
  auto rank = expand_dims(offs, 1);
  for (int i = 0; i < BLOCK; ++i) {
    auto stillKept = sum(where(offs == i, cast<int32_t>(kept), 0), 0) > 0;  // a scalar
    auto overlap = sum(where(rank == i, iou, 0.0f), 0);                     // row i, [BLOCK]
    kept = kept & !(stillKept & (overlap > threshold) & (offs > i));
  }
  store(keep + offs, where(kept, cast<int64_t>(order), int64_t(-1)), inside);
}

// --- 2. The same on the host, written independently ---------------------------
std::vector<int64_t> hostNms(const std::vector<float> &boxes, const std::vector<float> &scores, float threshold) {
  const size_t n = scores.size();
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  auto corner = [&](int64_t b, int c) {
    float center = boxes[size_t(b) * 4 + c % 2], size = boxes[size_t(b) * 4 + 2 + c % 2];
    return c < 2 ? center - size / 2 : center + size / 2;
  };
  auto iou = [&](int64_t a, int64_t b) {
    double iw = std::max(0.0, double(std::min(corner(a, 2), corner(b, 2))) - std::max(corner(a, 0), corner(b, 0)));
    double ih = std::max(0.0, double(std::min(corner(a, 3), corner(b, 3))) - std::max(corner(a, 1), corner(b, 1)));
    double areaA = double(boxes[size_t(a) * 4 + 2]) * boxes[size_t(a) * 4 + 3];
    double areaB = double(boxes[size_t(b) * 4 + 2]) * boxes[size_t(b) * 4 + 3];
    return iw * ih / (areaA + areaB - iw * ih);
  };
  std::vector<int64_t> result(n, -1);
  std::vector<bool> suppressed(n, false);
  for (size_t r = 0; r < n; ++r) {
    if (suppressed[r])
      continue;
    result[r] = order[r];
    for (size_t later = r + 1; later < n; ++later)
      if (iou(order[r], order[later]) > threshold)
        suppressed[later] = true;
  }
  return result;
}

int main() {
  Device dev = Device::open();
  std::printf("device: %s\n", dev.name().c_str());
  auto kernel = jit<nms>();
  const float threshold = 0.5f;
  int failures = 0;

  // --- 3. Six boxes, [1, 6, 4] in center-point format ------------------------
  // Two objects, each found three times, the duplicates slightly shifted;
  // two scores tie.
  std::vector<float> boxes{10, 10, 8, 8,   10.5f, 10, 8, 8,  30, 30, 6, 6,
                           11, 10.5f, 8, 8, 30.5f, 29.5f, 6, 6, 29, 31, 6, 6};
  std::vector<float> scores{0.9f, 0.8f, 0.75f, 0.8f, 0.95f, 0.3f};
  auto keep = dev.alloc<int64_t>(6);
  kernel.launch(dev, {1}, {.num_warps = 1}, dev.upload(boxes), dev.upload(scores), keep, 6, threshold, 8);
  auto got = keep.download();
  auto want = hostNms(boxes, scores, threshold);
  std::printf("6 boxes, IoU > %.2f suppressed; kept, by score:", threshold);
  for (int64_t k : got)
    if (k >= 0)
      std::printf(" %lld", (long long)k);
  std::printf("  (%s)\n", got == want ? "matches the host" : "MISMATCH");
  failures += got != want;

  // --- 4. Random crowds: 50 boxes in a 64-wide tile ----------------------------
  std::mt19937 gen(6);
  std::uniform_real_distribution<float> pos(0, 16), size(2, 12), score(0, 1);
  for (int trial = 0; trial < 5; ++trial) {
    const int n = 50;
    std::vector<float> b(size_t(n) * 4), s(static_cast<size_t>(n), 0.0f);
    for (int i = 0; i < n; ++i) {
      b[size_t(i) * 4] = pos(gen), b[size_t(i) * 4 + 1] = pos(gen);
      b[size_t(i) * 4 + 2] = size(gen), b[size_t(i) * 4 + 3] = size(gen);
      s[size_t(i)] = score(gen);
    }
    auto out = dev.alloc<int64_t>(n);
    kernel.launch(dev, {1}, {.num_warps = 2}, dev.upload(b), dev.upload(s), out, n, threshold, 64);
    auto g = out.download();
    auto w = hostNms(b, s, threshold);
    size_t kept = size_t(std::count_if(w.begin(), w.end(), [](int64_t k) { return k >= 0; }));
    std::printf("%d boxes: %zu kept (%s)\n", n, kept, g == w ? "matches the host" : "MISMATCH");
    failures += g != w;
  }
  const LaunchStats stats = kernel.stats();
  std::printf("kernels compiled: %llu, loaded from the disk cache: %llu\n", (unsigned long long)stats.compiles,
              (unsigned long long)stats.diskHits);
  return failures ? 1 : 0;
}
