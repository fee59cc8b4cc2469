// for_range: one scf.for node whose body is traced once; the tiles the body
// touches from outside are carried; and the trace-time errors of loops.
#include "dsl_test_util.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tessel;
using dsltest::at;
using dsltest::errorOf;
using dsltest::isOp;
using dsltest::nodesById;
using dsltest::traceBody;
using enum TraceOp;

namespace {

const TraceNode *findOp(const std::vector<TraceNode> &nodes, const std::string &name) {
  for (const TraceNode &n : nodes)
    if (isOp(n, name)) return &n;
  return nullptr;
}

} // namespace

TEST_CASE("a carried accumulator: init, block argument, yield and result") {
  int32_t accInit = -1, step = -1;
  Trace t = traceBody([&] {
    auto acc = zeros<f32>({8});
    accInit = acc.ref().id;
    auto n = program_id(0);
    for_range(0, n, 2, [&](i32 k) { acc = acc + cast<float>(k); });
    sum(acc, 0);
  });
  std::vector<const TraceNode *> byId = nodesById(t);
  const TraceNode *loop = findOp(t.nodes, "scf.for");
  REQUIRE(loop);
  REQUIRE(loop->operands.size() == 4); // lo, hi, step, acc
  CHECK(byId[loop->operands[0]]->op == ConstInt);
  CHECK(isOp(*byId[loop->operands[1]], "tessel.program_id"));
  step = loop->operands[2];
  CHECK(byId[step]->i0 == 2);
  CHECK(loop->operands[3] == accInit);
  CHECK(loop->results == 1);
  CHECK(loop->shape == Shape{8});
  CHECK(loop->dtype == DType::F32);
  REQUIRE(loop->regions.size() == 1);
  const TraceRegion &body = loop->regions[0];
  CHECK(body[0].op == RegionArg); // the induction variable
  CHECK(body[0].i0 == 0);
  CHECK(body[0].dtype == DType::I32);
  CHECK(body[0].shape.empty());
  const TraceNode &yield = body.back();
  REQUIRE(isOp(yield, "scf.yield"));
  REQUIRE(yield.operands.size() == 1);
  const TraceNode &add = *byId[yield.operands[0]];
  CHECK(isOp(add, "arith.addf"));
  const TraceNode &arg = *byId[add.operands[0]]; // acc inside the body: the block argument
  CHECK(arg.op == RegionArg);
  CHECK(arg.i0 == 1);
  CHECK(arg.shape == Shape{8});
  // After the loop acc is the loop's result.
  const TraceNode &red = t.nodes.back();
  REQUIRE(isOp(red, "tessel.reduce"));
  CHECK(red.operands[0] == loop->id);
}

TEST_CASE("every tile the body touches is carried, each variable on its own") {
  Trace t = traceBody([&] {
    auto acc = zeros<int32_t>({4});
    auto old = acc;              // a second variable holding the same value
    auto scale = full({4}, 3);   // only read in the body
    i32 written = zeros<int32_t>({4});
    for_range(0, 8, [&](i32 k) {
      written = old;             // assigned, its old value never read
      acc = acc * scale + k;
    });
    auto r = acc + old + written + scale;
    (void)r;
  });
  std::vector<const TraceNode *> byId = nodesById(t);
  const TraceNode *loop = findOp(t.nodes, "scf.for");
  REQUIRE(loop);
  // old, written, acc, scale in the order the body touched them.
  REQUIRE(loop->results == 4);
  REQUIRE(loop->resultTypes.size() == 4);
  const TraceNode &yield = loop->regions[0].back();
  REQUIRE(yield.operands.size() == 4);
  const TraceRegion &body = loop->regions[0];
  std::vector<int32_t> args;
  for (const TraceNode &n : body)
    if (n.op == RegionArg) args.push_back(n.id);
  REQUIRE(args.size() == 5); // k, then the carried four
  CHECK(yield.operands[0] == args[1]);                      // old: unchanged
  CHECK(yield.operands[1] == args[1]);                      // written: old's value
  CHECK(isOp(*byId[yield.operands[2]], "arith.addi"));      // acc: the new value
  CHECK(yield.operands[3] == args[4]);                      // scale: unchanged
  // After the loop each variable reads its own result.
  int results = 0;
  for (const TraceNode &n : t.nodes)
    if (n.op == Result && n.operands[0] == loop->id) ++results;
  CHECK(results == 4);
}

TEST_CASE("nested loops carry through both; a loop may carry nothing") {
  Trace t = traceBody([&] {
    auto acc = zeros<f32>({4});
    for_range(0, 3, [&](i32 i) {
      for_range(0, i, [&](i32) { acc = acc + 1.0f; });
    });
    sum(acc, 0);
    for_range(0, 5, [&](i32 k) { assume(k >= 0); });
  });
  std::vector<const TraceNode *> byId = nodesById(t);
  const TraceNode *outer = findOp(t.nodes, "scf.for");
  REQUIRE(outer);
  REQUIRE(outer->results == 1);
  const TraceNode *inner = findOp(outer->regions[0], "scf.for");
  REQUIRE(inner);
  // The inner loop starts from the outer loop's block argument and its
  // bound is the outer induction variable.
  CHECK(byId[inner->operands[3]]->op == RegionArg);
  CHECK(byId[inner->operands[3]]->i0 == 1);
  CHECK(inner->operands[1] == outer->regions[0][0].id);
  // The outer loop yields the inner loop's result.
  CHECK(outer->regions[0].back().operands == std::vector<int32_t>{inner->id});
  const TraceNode &empty = t.nodes.back();
  REQUIRE(isOp(empty, "scf.for"));
  CHECK(empty.results == 0);
  CHECK(empty.operands.size() == 3);
}

TEST_CASE("loop errors name the line") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto acc = zeros<f32>({8});
      line = __LINE__ + 1;
      for_range(0, 4, [&](i32) { acc = broadcast_to(expand_dims(acc, 0), {2, 8}); });
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "for_range: a tile carried through the loop has shape [8] before it and [2, 8] at the end of "
                   "the body; a variable assigned in the loop must keep its shape");

  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      for_range(0, 4, 0, [&](i32) {});
    });
  });
  CHECK(msg == at(__FILE__, line) + "for_range: the step must not be 0 (the loop counts from lo towards hi, hi "
                                    "excluded)");

  msg = errorOf([&] {
    traceBody([&] {
      i32 last;
      for_range(0, 4, [&](i32 k) { last = k; });
      line = __LINE__ + 1;
      auto next = last + 1;
      (void)next;
    });
  });
  CHECK(msg == at(__FILE__, line) + "add: uses a tile made inside a loop body after the loop; give its variable a "
                                    "value before the loop, so that the loop carries it");

  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      for_range(0, arange(0, 4), [&](i32) {});
    });
  });
  CHECK(msg == at(__FILE__, line) + "for_range: the loop's end must be a scalar, not a tile of shape [4]");

  msg = errorOf([&] {
    traceBody([&] {
      reduce(zeros<f32>({8}), 0, [&](auto a, auto b) {
        line = __LINE__ + 1;
        for_range(0, 4, [&](i32) {});
        return a + b;
      });
    });
  });
  CHECK(msg == at(__FILE__, line) + "for_range: cannot be used inside a combine function");
}

TEST_CASE("if_: assigned tiles are the results; both sides start from the values before it") {
  Trace t = traceBody([&] {
    auto a = zeros<int32_t>({4});
    auto b = full({}, 1);
    auto c = full({}, 2);
    if_(program_id(0) > 0, [&] { a = a + 1; b = b * 2; }, [&] { c = b + 5; });
    auto r = a + b + c;
    (void)r;
  });
  std::vector<const TraceNode *> byId = nodesById(t);
  const TraceNode *branch = findOp(t.nodes, "scf.if");
  REQUIRE(branch);
  CHECK(branch->operands.size() == 1);
  CHECK(byId[branch->operands[0]]->dtype == DType::I1);
  REQUIRE(branch->results == 3); // a, b, c in first-assignment order
  REQUIRE(branch->regions.size() == 2);
  const TraceNode &thenYield = branch->regions[0].back(), &elseYield = branch->regions[1].back();
  REQUIRE(isOp(thenYield, "scf.yield"));
  REQUIRE(isOp(elseYield, "scf.yield"));
  REQUIRE(thenYield.operands.size() == 3);
  REQUIRE(elseYield.operands.size() == 3);
  CHECK(isOp(*byId[thenYield.operands[0]], "arith.addi"));  // a + 1
  CHECK(isOp(*byId[thenYield.operands[1]], "arith.muli"));  // b * 2
  CHECK(byId[thenYield.operands[2]]->op == ConstInt);       // c untouched: 2
  CHECK(byId[elseYield.operands[0]]->op == ConstInt);       // a untouched: zeros
  CHECK(byId[elseYield.operands[1]]->op == ConstInt);       // b untouched: 1
  const TraceNode &elseC = *byId[elseYield.operands[2]];
  REQUIRE(isOp(elseC, "arith.addi"));                      // c = b + 5, b as before the if_
  CHECK(byId[elseC.operands[0]]->op == ConstInt);
  CHECK(byId[elseC.operands[0]]->i0 == 1);
}

TEST_CASE("if_ errors name the line") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto a = zeros<f32>({8});
      line = __LINE__ + 1;
      if_(program_id(0) > 0, [&] { a = broadcast_to(expand_dims(a, 0), {2, 8}); });
    });
  });
  CHECK(msg == at(__FILE__, line) + "if_: a tile assigned in a branch has shape [8] before the if_ and [2, 8] after "
                                    "the branch; a variable assigned in a branch must keep its shape");

  msg = errorOf([&] {
    traceBody([&] {
      f32 made;
      if_(program_id(0) > 0, [&] { made = zeros<f32>({8}); });
      line = __LINE__ + 1;
      auto next = made + 1.0f;
      (void)next;
    });
  });
  CHECK(msg == at(__FILE__, line) + "add: uses a tile made inside a branch of if_ after it; give its variable a "
                                    "value before the if_, so that the if_ returns it");

  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      if_(arange(0, 4) > 1, [&] {});
    });
  });
  CHECK(msg == at(__FILE__, line) + "if_: the condition must be a scalar bool, not a tile of shape [4] (use "
                                    "where(...) to choose elementwise)");
}

TEST_CASE("while_: the condition and the body carry the same tiles, in one order") {
  Trace t = traceBody([&] {
    auto i = full({}, 0);
    auto acc = zeros<f32>({8});
    auto n = program_id(0);
    while_([&] { return i < n; }, [&] {
      acc = acc + 1.0f; // touched first by the body
      i = i + 1;
    });
    sum(acc, 0);
  });
  std::vector<const TraceNode *> byId = nodesById(t);
  const TraceNode *loop = findOp(t.nodes, "scf.while");
  REQUIRE(loop);
  // i and n (seen by the condition; n only read, which the canonicalizer
  // drops), then acc (first touched by the body).
  REQUIRE(loop->results == 3);
  REQUIRE(loop->operands.size() == 3);
  CHECK(loop->resultTypes[0].shape.empty());
  CHECK(loop->resultTypes[2].shape == Shape{8});
  REQUIRE(loop->regions.size() == 2);
  const TraceRegion &before = loop->regions[0], &after = loop->regions[1];
  const TraceNode &condition = before.back();
  REQUIRE(isOp(condition, "scf.condition"));
  REQUIRE(condition.operands.size() == 4); // the bool, then the three forwarded values
  CHECK(isOp(*byId[condition.operands[0]], "arith.cmpi"));
  std::vector<int32_t> beforeArgs, afterArgs;
  for (const TraceNode &n : before)
    if (n.op == RegionArg) beforeArgs.push_back(n.id);
  for (const TraceNode &n : after)
    if (n.op == RegionArg) afterArgs.push_back(n.id);
  CHECK(beforeArgs.size() == 3);
  CHECK(afterArgs.size() == 3);
  CHECK(std::vector<int32_t>(condition.operands.begin() + 1, condition.operands.end()) == beforeArgs);
  const TraceNode &yield = after.back();
  REQUIRE(isOp(yield, "scf.yield"));
  REQUIRE(yield.operands.size() == 3);
  CHECK(isOp(*byId[yield.operands[0]], "arith.addi")); // i + 1
  CHECK(yield.operands[1] == afterArgs[1]);            // n, unchanged
  CHECK(isOp(*byId[yield.operands[2]], "arith.addf")); // acc + 1
}

TEST_CASE("while_ errors name the line") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto acc = zeros<f32>({8});
      auto i = full({}, 0);
      line = __LINE__ + 1;
      while_([&] { return i < 3; }, [&] { acc = reshape(broadcast_to(expand_dims(acc, 0), {2, 8}), {16}); });
    });
  });
  CHECK(msg == at(__FILE__, line) + "while_: a tile carried through the loop has shape [8] before it and [16] at the "
                                    "end of the body; a variable assigned in the loop must keep its shape");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      while_([&] { return arange(0, 4) < 2; }, [&] {});
    });
  });
  CHECK(msg == at(__FILE__, line) + "while_: the condition must be a scalar bool, not a tile of shape [4]");
}
