// Reductions and scans: one tessel.reduce / tessel.scan node per call, the
// combine traced once into its region (RegionArgs, body, tessel.yield), a
// multi-input op's results read through Result nodes.
#include "dsl_test_util.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <tuple>

using namespace tessel;
using dsltest::attrOf;
using dsltest::isOp;
using dsltest::nodesById;
using dsltest::traceBody;
using enum TraceOp;

namespace {

// The index of the first top-level node that is the generic op `name` (or -1).
int32_t find(const std::vector<TraceNode> &nodes, const std::string &name) {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (isOp(nodes[i], name)) return static_cast<int32_t>(i);
  return -1;
}

// Each node's op name (generic ops) or kind.
std::vector<std::string> kindsOf(const TraceRegion &nodes) {
  std::vector<std::string> kinds;
  for (const TraceNode &n : nodes) kinds.push_back(n.op == Op ? n.name : traceOpName(n.op));
  return kinds;
}

// The value id of `n` in `t`.
int32_t idOf(const Trace &t, const TraceNode &n) {
  std::vector<const TraceNode *> all = nodesById(t);
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i] == &n) return static_cast<int32_t>(i);
  return -1;
}

bool hasCompare(const TraceRegion &nodes, const char *name, int64_t predicate) {
  for (const TraceNode &n : nodes)
    if (isOp(n, name) && attrOf(n, "predicate") == predicate) return true;
  return false;
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
    // ConstFloat (id 0), the region's nodes (ids 1-4), tessel.reduce (id 5)
    REQUIRE(t.nodes.size() == 2);
    const TraceNode &red = t.nodes[1];
    CHECK(isOp(red, "tessel.reduce"));
    CHECK(idOf(t, red) == 5);
    CHECK(attrOf(red, "axis") == (axis < 0 ? axis + 2 : axis));
    CHECK(red.operands == std::vector<int32_t>{0});
    CHECK(red.dtype == DType::F32);
    CHECK(red.shape == expected);
    CHECK(red.results == 1);
    REQUIRE(red.regions.size() == 1);
    const TraceRegion &r = red.regions[0];
    CHECK(kindsOf(r) == std::vector<std::string>{"RegionArg", "RegionArg", "arith.addf", "tessel.yield"});
    CHECK(r[0].i0 == 0);
    CHECK(r[1].i0 == 1);
    CHECK(r[0].shape.empty());
    CHECK(r[0].dtype == DType::F32);
    CHECK(r[2].operands == std::vector<int32_t>{1, 2});
    CHECK(r[3].operands == std::vector<int32_t>{3});
    CHECK(r[3].results == 0);
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
  std::vector<const TraceNode *> byId = nodesById(t);
  const TraceNode &last = t.nodes.back();
  CHECK(isOp(last, "tessel.expand_dims"));
  CHECK(attrOf(last, "axis") == 0);
  CHECK(isOp(*byId[last.operands[0]], "tessel.reduce"));
  CHECK(byId[last.operands[0]]->shape == Shape{8});
  int32_t sumReduce = find(t.nodes, "tessel.reduce");
  REQUIRE(sumReduce >= 0);
  CHECK(t.nodes[sumReduce].shape.empty()); // sum of the 1-D arange
}

TEST_CASE("built-in combines: max/min are NaN-propagating; xor_sum; narrow ints sum as i32") {
  auto combineOp = [](const Trace &t) { return t.nodes[find(t.nodes, "tessel.reduce")].regions[0][2].name; };
  CHECK(combineOp(traceBody([] { max(zeros<f32>({8}), 0); })) == "arith.maximumf");
  CHECK(combineOp(traceBody([] { min(zeros<f32>({8}), 0); })) == "arith.minimumf");
  CHECK(combineOp(traceBody([] { max(arange(0, 8), 0); })) == "arith.maxsi");
  CHECK(combineOp(traceBody([] { xor_sum(arange(0, 8), 0); })) == "arith.xori");
  Trace t = traceBody([] {
    auto s = sum(cast<int8_t>(arange(0, 8)), 0);
    static_assert(std::is_same_v<decltype(s), i32>);
    auto b = sum(arange(0, 8) < 3, 0);
    static_assert(std::is_same_v<decltype(b), i32>);
  });
  std::vector<const TraceNode *> byId = nodesById(t);
  int32_t red = find(t.nodes, "tessel.reduce");
  CHECK(t.nodes[red].dtype == DType::I32);
  CHECK(isOp(*byId[t.nodes[red].operands[0]], "arith.extsi"));
  CHECK(isOp(*byId[t.nodes.back().operands[0]], "arith.extui")); // bools count as 1
  // f16 and bf16 sums accumulate in f32.
  Trace h = traceBody([] {
    auto s = sum(zeros<half>({8}), 0);
    static_assert(std::is_same_v<decltype(s), f32>);
    auto c = cumsum(zeros<bfloat16>({8}), 0);
    static_assert(std::is_same_v<decltype(c), f32>);
  });
  int32_t hred = find(h.nodes, "tessel.reduce");
  CHECK(h.nodes[hred].dtype == DType::F32);
  CHECK(isOp(*nodesById(h)[h.nodes[hred].operands[0]], "arith.extf"));
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
  const TraceNode &red = t.nodes[find(t.nodes, "tessel.reduce")];
  const TraceRegion &r = red.regions[0];
  // ids: x 0; a 1, b 2, 2.0f 3, b * 2 4, a + 4 5, yield 6
  REQUIRE(kindsOf(r) == std::vector<std::string>{"RegionArg", "RegionArg", "ConstFloat", "arith.mulf", "arith.addf",
                                                 "tessel.yield"});
  CHECK(r[2].f == 2.0);
  CHECK(r[3].operands == std::vector<int32_t>{2, 3});
  CHECK(r[4].operands == std::vector<int32_t>{1, 4});
  CHECK(r[4].loc.line == static_cast<uint32_t>(line));
  CHECK(r[5].operands == std::vector<int32_t>{5});
}

TEST_CASE("argmax: a two-input reduce over (value, index) picking the first largest") {
  Trace t = traceBody([] {
    auto x = zeros<f32>({4, 8});
    auto i = argmax(x, 1);
    static_assert(std::is_same_v<decltype(i), i32>);
    CHECK(i.shape() == Shape{4});
  });
  std::vector<const TraceNode *> byId = nodesById(t);
  int32_t at = find(t.nodes, "tessel.reduce");
  REQUIRE(at >= 0);
  const TraceNode &red = t.nodes[at];
  const int32_t id = idOf(t, red);
  CHECK(attrOf(red, "axis") == 1);
  CHECK(red.results == 2);
  CHECK(red.resultTypes == std::vector<TraceType>{{DType::F32, false, {4}}, {DType::I32, false, {4}}});
  REQUIRE(red.operands.size() == 2);
  CHECK(byId[red.operands[0]]->dtype == DType::F32);
  // The index tile: arange along axis 1, expanded and broadcast to [4, 8].
  const TraceNode &index = *byId[red.operands[1]];
  CHECK(isOp(index, "tessel.broadcast"));
  CHECK(index.shape == Shape{4, 8});
  CHECK(index.dtype == DType::I32);
  const TraceNode &expanded = *byId[index.operands[0]];
  CHECK(isOp(expanded, "tessel.expand_dims"));
  CHECK(attrOf(expanded, "axis") == 0);
  CHECK(isOp(*byId[expanded.operands[0]], "tessel.make_range"));
  CHECK(byId[expanded.operands[0]]->shape == Shape{8});

  // Region: (v0, i0, v1, i1), then the body, then tessel.yield(value, index).
  const TraceRegion &r = red.regions[0];
  const int32_t base = idOf(t, r[0]); // v0's id; i0, v1, i1 follow
  REQUIRE(r.size() > 5);
  for (int k = 0; k < 4; ++k) {
    CHECK(r[k].op == RegionArg);
    CHECK(r[k].i0 == k);
    CHECK(r[k].shape.empty());
  }
  CHECK(r[0].dtype == DType::F32);
  CHECK(r[1].dtype == DType::I32);
  CHECK(r[2].dtype == DType::F32);
  CHECK(r[3].dtype == DType::I32);
  CHECK(isOp(r[4], "arith.cmpf"));
  CHECK(attrOf(r[4], "predicate") == 2);                                  // ogt: next > accumulated
  CHECK(r[4].operands == std::vector<int32_t>{base + 2, base});
  for (size_t k = 4; k + 1 < r.size(); ++k) {
    CHECK(r[k].op != RegionArg);
    CHECK(r[k].shape.empty());
    for (int32_t o : r[k].operands) {
      CHECK(o >= base); // only the region's own values
      CHECK(o < idOf(t, r[k]));
    }
  }
  const TraceNode &yield = r.back();
  REQUIRE(isOp(yield, "tessel.yield"));
  REQUIRE(yield.operands.size() == 2);
  const TraceNode &value = *byId[yield.operands[0]];
  const TraceNode &idx = *byId[yield.operands[1]];
  CHECK(isOp(value, "arith.select"));
  CHECK(value.dtype == DType::F32);
  CHECK(isOp(idx, "arith.select"));
  CHECK(idx.dtype == DType::I32);
  CHECK(idx.operands[0] == value.operands[0]); // one decision picks both
  CHECK(idx.operands[1] == base + 3);          // the next index ...
  CHECK(idx.operands[2] == base + 1);          // ... or the accumulated one
  // The tie rule: i1 < i0.
  bool hasTieBreak = false;
  for (const TraceNode &n : r)
    hasTieBreak |= isOp(n, "arith.cmpi") && attrOf(n, "predicate") == 2 &&
                   n.operands == std::vector<int32_t>{base + 3, base + 1};
  CHECK(hasTieBreak);
  CHECK(hasCompare(r, "arith.cmpf", 13)); // floats: NaN (x != x) counts as the largest

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
  std::vector<const TraceNode *> byId = nodesById(t);
  const TraceNode &red = t.nodes[find(t.nodes, "tessel.reduce")];
  CHECK(attrOf(red, "axis") == 0);
  const TraceNode &index = *byId[red.operands[1]];
  CHECK(isOp(index, "tessel.broadcast"));
  CHECK(isOp(*byId[index.operands[0]], "tessel.expand_dims"));
  CHECK(byId[index.operands[0]]->shape == Shape{4, 1});
  CHECK(isOp(red.regions[0][4], "arith.cmpi"));
  CHECK(attrOf(red.regions[0][4], "predicate") == 2); // slt
  CHECK_FALSE(hasCompare(red.regions[0], "arith.cmpi", 1)); // no NaN checks for integers
  // keep_dims expands only the index (Result 1); the value result stays unread.
  const TraceNode &last = t.nodes.back();
  CHECK(isOp(last, "tessel.expand_dims"));
  CHECK(byId[last.operands[0]]->op == Result);
  CHECK(byId[last.operands[0]]->i0 == 1);
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
  const TraceNode &red = t.nodes[find(t.nodes, "tessel.reduce")];
  const TraceRegion &r = red.regions[0];
  // ids: v 0, w 1; a0 2, b0 3, a1 4, b1 5, a0 + a1 6, b0 + b1 7, yield 8
  REQUIRE(kindsOf(r) == std::vector<std::string>{"RegionArg", "RegionArg", "RegionArg", "RegionArg", "arith.addf",
                                                 "arith.addi", "tessel.yield"});
  CHECK(r[4].operands == std::vector<int32_t>{2, 4});
  CHECK(r[5].operands == std::vector<int32_t>{3, 5});
  CHECK(r[5].dtype == DType::I32);
  CHECK(r[6].operands == std::vector<int32_t>{6, 7});
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
  REQUIRE(t.nodes.size() == 2);
  const TraceNode &scan = t.nodes[1];
  CHECK(isOp(scan, "tessel.scan"));
  CHECK(attrOf(scan, "axis") == 1);
  CHECK(attrOf(scan, "reverse") == 1);
  CHECK(scan.shape == Shape{4, 8});
  CHECK(kindsOf(scan.regions[0]) == std::vector<std::string>{"RegionArg", "RegionArg", "arith.addf", "tessel.yield"});

  Trace p = traceBody([] { cumprod(arange(0, 8), -1); });
  const TraceNode &prod = p.nodes[find(p.nodes, "tessel.scan")];
  CHECK(attrOf(prod, "axis") == 0);
  CHECK(attrOf(prod, "reverse") == 0);
  CHECK(prod.regions[0][2].name == "arith.muli");

  Trace u = traceBody([] {
    auto [m, i] = associative_scan(std::tuple{zeros<f32>({8}), arange(0, 8)}, 0,
                                   [](f32 a0, i32 b0, f32 a1, i32 b1) {
                                     auto take = a1 > a0;
                                     return std::tuple{where(take, a1, a0), where(take, b1, b0)};
                                   });
    CHECK(m.shape() == Shape{8});
    CHECK(i.shape() == Shape{8});
  });
  const TraceNode &s2 = u.nodes[find(u.nodes, "tessel.scan")];
  CHECK(s2.operands.size() == 2);
  CHECK(s2.regions[0].back().operands.size() == 2);
  CHECK(u.nodes.back().op == Result);
  CHECK(u.nodes.back().i0 == 1);
}

TEST_CASE("the fingerprint hashes the region and the axis") {
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
    for (TraceNode &n : t->nodes) n.regions.clear();
  CHECK(a.fingerprint() == b.fingerprint());

  // One call site, two axes of a square tile: same shapes, different kernels.
  auto along = [](int axis) { return traceBody([&] { sum(zeros<f32>({8, 8}), axis); }); };
  CHECK(along(0).fingerprint() != along(1).fingerprint());
  CHECK(along(0).fingerprint() == along(0).fingerprint());
}
