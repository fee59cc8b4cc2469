// The trace of vector_add: the nodes, their wiring, and the argument list.
#include <tessel/tessel.hpp>

#include <doctest/doctest.h>

using namespace tessel;

namespace {

void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

} // namespace

#include "dsl_test_util.hpp" // below the kernel: the test checks its line numbers
using dsltest::attrOf;
using dsltest::isOp;

TEST_CASE("vector_add traces to the expected nodes") {
  auto add = jit<vector_add>();
  CHECK(add.name() == "vector_add");
  float *fake = reinterpret_cast<float *>(uintptr_t{0x1000});
  detail::TraceRequest req = add.trace(fake, fake, fake, 1000, 256);
  const Trace &t = req.trace;
  CHECK(t.kernelName == "vector_add");

  REQUIRE(t.args.size() == 4); // BLOCK is a constant, not an argument
  for (int i = 0; i < 3; ++i) {
    CHECK(t.args[i].kind == TraceArg::Pointer);
    CHECK(t.args[i].dtype == DType::F32);
  }
  CHECK(t.args[3].kind == TraceArg::Int);
  CHECK(t.args[3].dtype == DType::I32);

  // Walk the graph from the store: C++ leaves the evaluation order of
  // operands unspecified (gcc and clang differ), so node order may too.
  using enum TraceOp;
  const auto &n = t.nodes;
  CHECK(n.size() == 22);
  for (int i = 0; i < 4; ++i) {
    CHECK(n[i].op == Arg);
    CHECK(n[i].i0 == i);
    CHECK(n[i].shape.empty());
  }
  CHECK(n[0].isPtr);
  CHECK(!n[3].isPtr);
  const TraceNode &store = n.back();
  REQUIRE(isOp(store, "tessel.store"));
  REQUIRE(store.operands.size() == 3);
  CHECK(store.shape == Shape{256});
  const TraceNode &outPtrs = n[store.operands[0]];
  const TraceNode &sum = n[store.operands[1]];
  const TraceNode &mask = n[store.operands[2]];

  // mask = offs < n: CmpLt(offs, Splat(Arg 3)) -> i1[256]
  REQUIRE(isOp(mask, "arith.cmpi"));
  CHECK(attrOf(mask, "predicate") == 2); // slt
  CHECK(mask.dtype == DType::I1);
  CHECK(mask.shape == Shape{256});
  const TraceNode &offs = n[mask.operands[0]];
  const TraceNode &nSplat = n[mask.operands[1]];
  CHECK(isOp(nSplat, "tessel.splat"));
  CHECK(nSplat.operands == std::vector<int32_t>{3});
  CHECK(nSplat.shape == Shape{256});

  // offs = Add(Splat(Mul(tessel.program_id 0, ConstInt 256)), tessel.make_range(0, 256))
  REQUIRE(isOp(offs, "arith.addi"));
  CHECK(offs.dtype == DType::I32);
  const TraceNode &startSplat = n[offs.operands[0]];
  const TraceNode &range = n[offs.operands[1]];
  REQUIRE(isOp(startSplat, "tessel.splat"));
  CHECK(isOp(range, "tessel.make_range"));
  CHECK(attrOf(range, "start") == 0);
  CHECK(attrOf(range, "end") == 256);
  CHECK(range.shape == Shape{256});
  const TraceNode &start = n[startSplat.operands[0]];
  REQUIRE(isOp(start, "arith.muli"));
  CHECK(start.shape.empty()); // scalar * scalar stays scalar
  CHECK(n[start.operands[0]].op == Op);
  CHECK(n[start.operands[0]].name == "tessel.program_id");
  CHECK(n[start.operands[0]].attrs == std::vector<TraceAttr>{{TraceAttr::I32, "axis", 0, {}}});
  CHECK(n[start.operands[1]].op == ConstInt);
  CHECK(n[start.operands[1]].i0 == 256);
  CHECK(n[start.operands[1]].dtype == DType::I32);

  // out + offs = tessel.addptr(Splat(Arg 2), offs)
  REQUIRE(isOp(outPtrs, "tessel.addptr"));
  CHECK(outPtrs.isPtr);
  CHECK(outPtrs.dtype == DType::F32);
  CHECK(outPtrs.shape == Shape{256});
  CHECK(isOp(n[outPtrs.operands[0]], "tessel.splat"));
  CHECK(n[outPtrs.operands[0]].isPtr);
  CHECK(n[outPtrs.operands[0]].operands == std::vector<int32_t>{2});
  CHECK(&n[outPtrs.operands[1]] == &offs);

  // sum = Add(Load(x + offs, mask), Load(y + offs, mask))
  REQUIRE(isOp(sum, "arith.addf"));
  CHECK(sum.dtype == DType::F32);
  for (int side = 0; side < 2; ++side) {
    const TraceNode &ld = n[sum.operands[side]];
    REQUIRE(isOp(ld, "tessel.load"));
    CHECK(ld.operands.size() == 2);
    CHECK(ld.dtype == DType::F32);
    CHECK(!ld.isPtr);
    CHECK(ld.shape == Shape{256});
    CHECK(&n[ld.operands[1]] == &mask);
    const TraceNode &ptrs = n[ld.operands[0]];
    REQUIRE(isOp(ptrs, "tessel.addptr"));
    CHECK(n[n[ptrs.operands[0]].operands[0]].i0 == side); // x then y
    CHECK(&n[ptrs.operands[1]] == &offs);
  }
  for (size_t i = 0; i < n.size(); ++i)
    for (int32_t o : n[i].operands) CHECK(o < static_cast<int32_t>(i)); // operands precede users
  for (const TraceNode &node : n) {
    CHECK(std::string(node.loc.file).find("trace_vector_add_test.cpp") != std::string::npos);
    CHECK(node.loc.line > 0);
  }
  CHECK(store.loc.line == 13); // the store's line in this file
}

TEST_CASE("jit with an explicit name") {
  auto add = jit(vector_add, "my_add");
  CHECK(add.name() == "my_add");
  CHECK(add.trace(static_cast<float *>(nullptr), static_cast<float *>(nullptr), static_cast<float *>(nullptr), 4,
                  64)
            .trace.kernelName == "my_add");
  auto viaAddress = jit<&vector_add>();
  CHECK(viaAddress.name() == "vector_add");
}
