// Shape changes (reshape, permute, trans, join, split) and the facts a
// kernel gives the analyses (assume, multiple_of, max_contiguous).
#include "dsl_test_util.hpp"

#include <doctest/doctest.h>

using namespace tessel;
using dsltest::attrListOf;
using dsltest::attrOf;
using dsltest::isOp;
using dsltest::traceBody;
using enum TraceOp;

TEST_CASE("reshape keeps the elements; the same shape adds nothing") {
  Trace t = traceBody([] {
    auto x = zeros<f32>({4, 8});
    auto flat = reshape(x, {32});
    CHECK(flat.shape() == Shape{32});
    auto back = reshape(flat, {2, 16});
    CHECK(back.shape() == Shape{2, 16});
    auto same = reshape(back, {2, 16});
    CHECK(same.ref().id == back.ref().id);
  });
  REQUIRE(t.nodes.size() == 3);
  CHECK(isOp(t.nodes[1], "tessel.reshape"));
  CHECK(t.nodes[1].shape == Shape{32});
  CHECK(t.nodes[1].operands == std::vector<int32_t>{0});
  CHECK(isOp(t.nodes[2], "tessel.reshape"));
  CHECK(t.nodes[2].shape == Shape{2, 16});
}

TEST_CASE("permute and trans record the permutation as the order attribute") {
  Trace t = traceBody([] {
    auto x = zeros<f32>({4, 8});
    auto p = permute(x, {1, 0});
    CHECK(p.shape() == Shape{8, 4});
    auto tr = trans(p);
    CHECK(tr.shape() == Shape{4, 8});
    auto id = permute(x, {0, 1}); // the identity adds nothing
    CHECK(id.ref().id == x.ref().id);
  });
  REQUIRE(t.nodes.size() >= 3);
  CHECK(isOp(t.nodes[1], "tessel.permute"));
  CHECK(attrListOf(t.nodes[1], "order") == std::vector<int64_t>{1, 0});
  CHECK(t.nodes[1].shape == Shape{8, 4});
  CHECK(isOp(t.nodes[2], "tessel.permute"));
  CHECK(attrListOf(t.nodes[2], "order") == std::vector<int64_t>{1, 0});
  CHECK(t.nodes[2].operands == std::vector<int32_t>{1});
}

TEST_CASE("join adds a last dim of 2; split takes it apart") {
  Trace t = traceBody([] {
    auto a = arange(0, 8);
    auto b = arange(8, 16);
    auto j = join(a, b);
    CHECK(j.shape() == Shape{8, 2});
    auto [lo, hi] = split(j);
    CHECK(lo.shape() == Shape{8});
    CHECK(hi.shape() == Shape{8});
    auto pair = join(program_id(0), program_id(1));
    CHECK(pair.shape() == Shape{2});
    auto [x, y] = split(pair);
    CHECK(x.rank() == 0);
    (void)y;
  });
  const TraceNode &join0 = t.nodes[2];
  CHECK(isOp(join0, "tessel.join"));
  CHECK(join0.operands == std::vector<int32_t>{0, 1});
  CHECK(join0.dtype == DType::I32);
  CHECK(isOp(t.nodes[3], "tessel.split"));
  CHECK(attrOf(t.nodes[3], "half") == 0);
  CHECK(t.nodes[3].operands == std::vector<int32_t>{2});
  CHECK(isOp(t.nodes[4], "tessel.split"));
  CHECK(attrOf(t.nodes[4], "half") == 1);
  CHECK(t.nodes[4].shape == Shape{8});
}

TEST_CASE("assume, multiple_of and max_contiguous record their facts") {
  auto k = jit(+[](Ptr<f32> x, i32 n) {
    assume(n % 128 == 0);
    assume(n >= 128);
    auto offs = max_contiguous(multiple_of(program_id(0) * 128 + arange(0, 128), 128), 128);
    store(x + offs, 1.0f, offs < n);
  }, "hints");
  Trace t = k.trace(static_cast<float *>(nullptr), 256).trace;
  std::vector<const TraceNode *> assumes;
  for (const TraceNode &n : t.nodes)
    if (isOp(n, "tessel.assume")) assumes.push_back(&n);
  REQUIRE(assumes.size() == 2);
  CHECK(assumes[0]->operands.size() == 1);
  CHECK(isOp(t.nodes[assumes[0]->operands[0]], "arith.cmpi"));
  CHECK(attrOf(t.nodes[assumes[0]->operands[0]], "predicate") == 0); // eq
  CHECK(attrOf(t.nodes[assumes[1]->operands[0]], "predicate") == 5); // sge
  CHECK(assumes[0]->shape.empty());

  const TraceNode *mult = nullptr, *contig = nullptr;
  for (const TraceNode &n : t.nodes) {
    if (n.op == Op && n.name == "tessel.multiple_of") mult = &n;
    if (n.op == Op && n.name == "tessel.max_contiguous") contig = &n;
  }
  REQUIRE(mult);
  REQUIRE(contig);
  CHECK(mult->attrs == std::vector<TraceAttr>{{TraceAttr::I64, "divisor", 128, {}}});
  CHECK(mult->shape == Shape{128});
  CHECK(mult->dtype == DType::I32);
  CHECK(isOp(t.nodes[mult->operands[0]], "arith.addi"));
  CHECK(contig->attrs == std::vector<TraceAttr>{{TraceAttr::I64, "count", 128, {}}});
  CHECK(contig->shape == Shape{128});
  CHECK(&t.nodes[contig->operands[0]] == mult);
}
