// umulhi and the random generators as traced: what they record, and the
// errors a user can make that only tracing can see.
#include "dsl_test_util.hpp"

#include <doctest/doctest.h>

using namespace tessel;
using dsltest::at;
using dsltest::errorOf;
using dsltest::isOp;
using dsltest::traceBody;

TEST_CASE("umulhi records arith.mului_extended and reads its high result") {
  int line = 0;
  Trace t = traceBody([&] {
    auto x = arange(0, 8);
    line = __LINE__ + 1;
    auto h = umulhi(x, 0xCD9E8D57u); // an unsigned literal: its bits, as i32
    (void)h;
  });
  const TraceNode *product = nullptr;
  for (const TraceNode &n : t.nodes)
    if (isOp(n, "arith.mului_extended"))
      product = &n;
  REQUIRE(product != nullptr);
  CHECK(product->results == 2);
  CHECK(product->resultTypes == std::vector<TraceType>(2, TraceType{DType::I32, false, {8}}));
  CHECK(product->loc.line == unsigned(line));
  const TraceNode &high = t.nodes.back();
  CHECK(high.op == TraceOp::Result);
  CHECK(high.i0 == 1);
  CHECK(high.operands == std::vector<int32_t>{product->id});
  // The literal became a constant with the unsigned value's bits.
  bool literal = false;
  for (const TraceNode &n : t.nodes)
    literal |= n.op == TraceOp::ConstInt && n.i0 == int32_t(0xCD9E8D57u);
  CHECK(literal);
}

TEST_CASE("umulhi's literal must fit its element type") {
  int line = __LINE__ + 1;
  std::string msg = errorOf([] { traceBody([] { (void)umulhi(arange(0, 4), int64_t(5000000000)); }); });
  CHECK(msg == at(__FILE__, line) + "umulhi: literal 5000000000 does not fit in i32");
}

TEST_CASE("a random seed is one scalar for the whole tile") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto seeds = arange(0, 4);
      line = __LINE__ + 1;
      (void)rand(seeds, arange(0, 4));
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "rand: the seed must be a scalar (one seed for the whole tile), not a tile of shape [4]");
}

TEST_CASE("n_rounds is 1 to 16") {
  for (int rounds : {0, -1, 17}) {
    CAPTURE(rounds);
    int line = __LINE__ + 1;
    std::string msg = errorOf([&] { traceBody([&] { (void)randint4x(7, arange(0, 4), rounds); }); });
    CHECK(msg == at(__FILE__, line) + "randint4x: n_rounds = " + std::to_string(rounds) +
                     " is out of range: Philox4x32 takes 1 to 16 rounds (10 is the standard)");
  }
  // 1 and 16 trace.
  CHECK(errorOf([] { traceBody([] { (void)randn(7, arange(0, 4), 1); }); }) == "<no error>");
  CHECK(errorOf([] { traceBody([] { (void)randn4x(7, arange(0, 4), 16); }); }) == "<no error>");
}

TEST_CASE("random generators keep the offsets' shape, for 2-D and scalar offsets") {
  traceBody([] {
    auto offs = expand_dims(arange(0, 4), 1) * 8 + expand_dims(arange(0, 8), 0);
    auto [a, b, c, d] = randint4x(int64_t(-1), offs, 1); // round 1 leaves words 0 and 1 scalars: broadcast
    for (const i32 &w : {a, b, c, d})
      CHECK(w.shape() == Shape{4, 8});
    auto [e, f, g, h] = randint4x(cast<int64_t>(program_id(0)), offs, 1); // scalar key words: broadcast
    for (const i32 &w : {e, f, g, h})
      CHECK(w.shape() == Shape{4, 8});
    CHECK(rand(3, cast<int64_t>(offs)).shape() == Shape{4, 8});
    CHECK(randn(program_id(0), program_id(1)).shape() == Shape{});
  });
}
