// Reductions and scans: one Reduce/Scan node per call, the combine traced
// once into its region (RegionArgs, body, Yield), results read through
// Result nodes.
#include "dsl_test_util.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <tuple>

using namespace tessel;
using dsltest::attrListOf;
using dsltest::attrOf;
using dsltest::isOp;
using dsltest::traceBody;
using enum TraceOp;

namespace {

// The id of the first node with `op` (or -1).
int32_t find(const std::vector<TraceNode> &nodes, TraceOp op) {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].op == op) return static_cast<int32_t>(i);
  return -1;
}

std::vector<TraceOp> opsOf(const std::vector<TraceNode> &nodes) {
  std::vector<TraceOp> ops;
  for (const TraceNode &n : nodes) ops.push_back(n.op);
  return ops;
}

} // namespace

TEST_CASE("sum along each axis of a 2-D tile") {
  for (int axis : {0, 1, -1, -2}) {
    CAPTURE(axis);
    Shape expected = (axis == 0 || axis == -2) ? Shape{8} : Shape{4};
    Trace t = traceBody([&] {
      auto x = zeros<f32>({4, 8});
      auto s = sum(x, axis);
      CHECK(s.shape() == expected);
    });
    // ConstFloat, Reduce, Result
    REQUIRE(t.nodes.size() == 3);
    const TraceNode &red = t.nodes[1];
    CHECK(red.op == Reduce);
    CHECK(red.i0 == (axis < 0 ? axis + 2 : axis));
    CHECK(red.operands == std::vector<int32_t>{0});
    CHECK(red.dtype == DType::F32);
    CHECK(red.shape == expected);
    CHECK(opsOf(red.region) == std::vector<TraceOp>{RegionArg, RegionArg, Add, Yield});
    CHECK(red.region[0].i0 == 0);
    CHECK(red.region[1].i0 == 1);
    CHECK(red.region[0].shape.empty());
    CHECK(red.region[0].dtype == DType::F32);
    CHECK(red.region[2].operands == std::vector<int32_t>{0, 1});
    CHECK(red.region[3].operands == std::vector<int32_t>{2});
    const TraceNode &res = t.nodes[2];
    CHECK(res.op == Result);
    CHECK(res.i0 == 0);
    CHECK(res.operands == std::vector<int32_t>{1});
    CHECK(res.shape == expected);
  }
}

TEST_CASE("a 1-D reduction is a scalar; keep_dims keeps the axis with size 1") {
  Trace t = traceBody([] {
    auto v = arange(0, 16);
    CHECK(sum(v, 0).rank() == 0);
    auto kept = max(cast<float>(v), 0, /*keep_dims=*/true);
    CHECK(kept.shape() == Shape{1});
    auto grid = zeros<f32>({4, 8});
    CHECK(min(grid, 1, true).shape() == Shape{4, 1});
    CHECK(min(grid, 0, true).shape() == Shape{1, 8});
  });
  const TraceNode &last = t.nodes.back();
  CHECK(isOp(last, "tessel.expand_dims"));
  CHECK(attrOf(last, "axis") == 0);
  CHECK(t.nodes[last.operands[0]].op == Result);
  CHECK(t.nodes[last.operands[0]].shape == Shape{8});
  int32_t maxReduce = find(t.nodes, Reduce);
  REQUIRE(maxReduce >= 0);
  CHECK(t.nodes[maxReduce].shape.empty()); // sum of the 1-D arange
}

TEST_CASE("built-in combines: max/min are NaN-propagating Max/Min; xor_sum; narrow ints sum as i32") {
  auto combineOp = [](const Trace &t) { return t.nodes[find(t.nodes, Reduce)].region[2].op; };
  CHECK(combineOp(traceBody([] { max(zeros<f32>({8}), 0); })) == Max);
  CHECK(combineOp(traceBody([] { min(zeros<f32>({8}), 0); })) == Min);
  CHECK(combineOp(traceBody([] { xor_sum(arange(0, 8), 0); })) == Xor);
  Trace t = traceBody([] {
    auto s = sum(cast<int8_t>(arange(0, 8)), 0);
    static_assert(std::is_same_v<decltype(s), i32>);
    auto b = sum(arange(0, 8) < 3, 0);
    static_assert(std::is_same_v<decltype(b), i32>);
  });
  int32_t red = find(t.nodes, Reduce);
  CHECK(t.nodes[red].dtype == DType::I32);
  CHECK(t.nodes[t.nodes[red].operands[0]].op == Cast);
  // f16 and bf16 sums accumulate in f32.
  Trace h = traceBody([] {
    auto s = sum(zeros<half>({8}), 0);
    static_assert(std::is_same_v<decltype(s), f32>);
    auto c = cumsum(zeros<bfloat16>({8}), 0);
    static_assert(std::is_same_v<decltype(c), f32>);
  });
  int32_t hred = find(h.nodes, Reduce);
  CHECK(h.nodes[hred].dtype == DType::F32);
  CHECK(h.nodes[h.nodes[hred].operands[0]].op == Cast);
}

TEST_CASE("a user combine: literals are constants in the region; lines are the user's") {
  int line = 0;
  Trace t = traceBody([&] {
    auto x = zeros<f32>({4, 8});
    auto r = reduce(x, 1, [&](auto a, f32 b) {
      line = __LINE__ + 1;
      return a + b * 2.0f;
    });
    CHECK(r.shape() == Shape{4});
  });
  const TraceNode &red = t.nodes[find(t.nodes, Reduce)];
  // RegionArg, RegionArg, ConstFloat, Mul, Add, Yield
  REQUIRE(opsOf(red.region) == std::vector<TraceOp>{RegionArg, RegionArg, ConstFloat, Mul, Add, Yield});
  CHECK(red.region[2].f == 2.0);
  CHECK(red.region[3].operands == std::vector<int32_t>{1, 2});
  CHECK(red.region[4].operands == std::vector<int32_t>{0, 3});
  CHECK(red.region[4].loc.line == static_cast<uint32_t>(line));
  CHECK(red.region[5].operands == std::vector<int32_t>{4});
}

TEST_CASE("argmax: a two-input reduce over (value, index) picking the first largest") {
  Trace t = traceBody([] {
    auto x = zeros<f32>({4, 8});
    auto i = argmax(x, 1);
    static_assert(std::is_same_v<decltype(i), i32>);
    CHECK(i.shape() == Shape{4});
  });
  int32_t id = find(t.nodes, Reduce);
  REQUIRE(id >= 0);
  const TraceNode &red = t.nodes[id];
  CHECK(red.i0 == 1);
  REQUIRE(red.operands.size() == 2);
  CHECK(t.nodes[red.operands[0]].dtype == DType::F32);
  // The index tile: arange along axis 1, expanded and broadcast to [4, 8].
  const TraceNode &index = t.nodes[red.operands[1]];
  CHECK(isOp(index, "tessel.broadcast"));
  CHECK(index.shape == Shape{4, 8});
  CHECK(index.dtype == DType::I32);
  const TraceNode &expanded = t.nodes[index.operands[0]];
  CHECK(isOp(expanded, "tessel.expand_dims"));
  CHECK(attrOf(expanded, "axis") == 0);
  CHECK(isOp(t.nodes[expanded.operands[0]], "tessel.make_range"));
  CHECK(t.nodes[expanded.operands[0]].shape == Shape{8});

  // Region: (v0, i0, v1, i1), then the body, then Yield(value, index).
  REQUIRE(red.region.size() > 5);
  for (int k = 0; k < 4; ++k) {
    CHECK(red.region[k].op == RegionArg);
    CHECK(red.region[k].i0 == k);
    CHECK(red.region[k].shape.empty());
  }
  CHECK(red.region[0].dtype == DType::F32);
  CHECK(red.region[1].dtype == DType::I32);
  CHECK(red.region[2].dtype == DType::F32);
  CHECK(red.region[3].dtype == DType::I32);
  CHECK(red.region[4].op == CmpGt);
  CHECK(red.region[4].operands == std::vector<int32_t>{2, 0}); // next > accumulated
  for (size_t k = 4; k + 1 < red.region.size(); ++k) {
    CHECK(red.region[k].op != RegionArg);
    CHECK(red.region[k].op != Yield);
    CHECK(red.region[k].shape.empty());
    for (int32_t o : red.region[k].operands) CHECK(o < static_cast<int32_t>(k));
  }
  const TraceNode &yield = red.region.back();
  REQUIRE(yield.op == Yield);
  REQUIRE(yield.operands.size() == 2);
  const TraceNode &value = red.region[yield.operands[0]];
  const TraceNode &idx = red.region[yield.operands[1]];
  CHECK(value.op == Where);
  CHECK(value.dtype == DType::F32);
  CHECK(idx.op == Where);
  CHECK(idx.dtype == DType::I32);
  CHECK(idx.operands[0] == value.operands[0]); // one decision picks both
  CHECK(idx.operands[1] == 3);                 // the next index ...
  CHECK(idx.operands[2] == 1);                 // ... or the accumulated one
  // The tie rule: i1 < i0.
  bool hasTieBreak = false;
  for (const TraceNode &n : red.region)
    hasTieBreak |= n.op == CmpLt && n.operands == std::vector<int32_t>{3, 1};
  CHECK(hasTieBreak);
  CHECK(find(red.region, CmpNe) >= 0); // floats: NaN counts as the largest

  // The answer is Result 1 (the index).
  const TraceNode &last = t.nodes.back();
  CHECK(last.op == Result);
  CHECK(last.i0 == 1);
  CHECK(last.dtype == DType::I32);
  CHECK(last.operands == std::vector<int32_t>{id});
}

TEST_CASE("argmin along axis 0, integer input, keep_dims") {
  Trace t = traceBody([] {
    auto i = argmin(arange(0, 8) + zeros<int32_t>({4, 8}), 0, true);
    CHECK(i.shape() == Shape{1, 8});
  });
  const TraceNode &red = t.nodes[find(t.nodes, Reduce)];
  CHECK(red.i0 == 0);
  const TraceNode &index = t.nodes[red.operands[1]];
  CHECK(isOp(index, "tessel.broadcast"));
  CHECK(isOp(t.nodes[index.operands[0]], "tessel.expand_dims"));
  CHECK(t.nodes[index.operands[0]].shape == Shape{4, 1});
  CHECK(red.region[4].op == CmpLt);
  CHECK(find(red.region, CmpNe) == -1); // no NaN checks for integers
  // keep_dims expands only the index (Result 1); the value result stays unread.
  const TraceNode &last = t.nodes.back();
  CHECK(isOp(last, "tessel.expand_dims"));
  CHECK(t.nodes[last.operands[0]].op == Result);
  CHECK(t.nodes[last.operands[0]].i0 == 1);
  CHECK(t.nodes[t.nodes.size() - 3].op == Result);
  CHECK(t.nodes[t.nodes.size() - 3].i0 == 0);
}

TEST_CASE("multi-input reduce: combine gets (a0, b0, a1, b1) and returns a tuple") {
  Trace t = traceBody([] {
    auto v = zeros<f32>({16});
    auto w = arange(0, 16);
    auto [s, c] = reduce(std::tuple{v, w}, 0, [](f32 a0, i32 b0, f32 a1, i32 b1) {
      return std::tuple{a0 + a1, b0 + b1};
    });
    CHECK(s.rank() == 0);
    CHECK(c.rank() == 0);
  });
  const TraceNode &red = t.nodes[find(t.nodes, Reduce)];
  REQUIRE(opsOf(red.region) == std::vector<TraceOp>{RegionArg, RegionArg, RegionArg, RegionArg, Add, Add, Yield});
  CHECK(red.region[4].operands == std::vector<int32_t>{0, 2});
  CHECK(red.region[5].operands == std::vector<int32_t>{1, 3});
  CHECK(red.region[5].dtype == DType::I32);
  CHECK(red.region[6].operands == std::vector<int32_t>{4, 5});
  CHECK(t.nodes[t.nodes.size() - 2].op == Result);
  CHECK(t.nodes[t.nodes.size() - 2].i0 == 0);
  CHECK(t.nodes.back().i0 == 1);
  CHECK(t.nodes.back().dtype == DType::I32);
}

TEST_CASE("scans: cumsum reverse, cumprod, associative_scan keep the shape") {
  Trace t = traceBody([] {
    auto x = zeros<f32>({4, 8});
    auto c = cumsum(x, 1, /*reverse=*/true);
    CHECK(c.shape() == Shape{4, 8});
  });
  REQUIRE(t.nodes.size() == 3);
  const TraceNode &scan = t.nodes[1];
  CHECK(scan.op == Scan);
  CHECK(scan.i0 == 1);
  CHECK(scan.i1 == 1);
  CHECK(scan.shape == Shape{4, 8});
  CHECK(opsOf(scan.region) == std::vector<TraceOp>{RegionArg, RegionArg, Add, Yield});
  CHECK(t.nodes[2].op == Result);
  CHECK(t.nodes[2].shape == Shape{4, 8});

  Trace p = traceBody([] { cumprod(arange(0, 8), -1); });
  const TraceNode &prod = p.nodes[find(p.nodes, Scan)];
  CHECK(prod.i0 == 0);
  CHECK(prod.i1 == 0);
  CHECK(prod.region[2].op == Mul);

  Trace u = traceBody([] {
    auto [m, i] = associative_scan(std::tuple{zeros<f32>({8}), arange(0, 8)}, 0,
                                   [](f32 a0, i32 b0, f32 a1, i32 b1) {
                                     auto take = a1 > a0;
                                     return std::tuple{where(take, a1, a0), where(take, b1, b0)};
                                   });
    CHECK(m.shape() == Shape{8});
    CHECK(i.shape() == Shape{8});
  });
  const TraceNode &s2 = u.nodes[find(u.nodes, Scan)];
  CHECK(s2.operands.size() == 2);
  CHECK(s2.region.back().operands.size() == 2);
  CHECK(u.nodes.back().op == Result);
  CHECK(u.nodes.back().i0 == 1);
}

TEST_CASE("the fingerprint hashes the region: sum and max of one tile differ") {
  Trace s = traceBody([] { sum(zeros<f32>({4, 8}), 1); });
  Trace m = traceBody([] { max(zeros<f32>({4, 8}), 1); });
  CHECK(s.fingerprint() != m.fingerprint());

  // One call site, two combines: only the regions differ.
  auto body = [](bool useMax) {
    std::function<f32(f32, f32)> combine = [](f32 a, f32 b) { return a + b; };
    if (useMax) combine = [](f32 a, f32 b) { return maximum(a, b); };
    return traceBody([&] { reduce(zeros<f32>({4, 8}), 1, combine); });
  };
  Trace a = body(false), b = body(true);
  CHECK(a.fingerprint() != b.fingerprint());
  CHECK(a.fingerprint() == body(false).fingerprint());
  for (Trace *t : {&a, &b})
    for (TraceNode &n : t->nodes) n.region.clear();
  CHECK(a.fingerprint() == b.fingerprint());
}
