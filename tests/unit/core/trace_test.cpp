// The trace's fingerprint: what the cache key hashes of a trace.
#include "tessel/core/trace.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace tessel;

namespace {

Trace smallTrace() {
  Trace t;
  t.kernelName = "k";
  t.args = {{TraceArg::Pointer, DType::F32}, {TraceArg::Int, DType::I32}};
  t.nodes.push_back({.op = TraceOp::Arg, .dtype = DType::F32, .isPtr = true, .loc = {"a.cpp", 1, 1}});
  t.nodes.push_back({.op = TraceOp::Arg, .dtype = DType::I32, .i0 = 1, .loc = {"a.cpp", 1, 1}});
  TraceNode range{.op = TraceOp::Op, .dtype = DType::I32, .shape = {64}, .loc = {"a.cpp", 2, 5}};
  range.name = "tessel.make_range";
  range.attrs = {{TraceAttr::I32, "start", 0, {}}, {TraceAttr::I32, "end", 64, {}}};
  t.nodes.push_back(std::move(range));
  return t;
}

} // namespace

TEST_CASE("the fingerprint hashes ops, shapes and non-argument locations") {
  const Trace base = smallTrace();
  CHECK(smallTrace().fingerprint() == base.fingerprint());

  Trace shape = smallTrace();
  shape.nodes[2].shape = {128};
  CHECK(shape.fingerprint() != base.fingerprint());

  Trace line = smallTrace();
  line.nodes[2].loc.line = 3;
  CHECK(line.fingerprint() != base.fingerprint());

  // The file name's text counts, not where it is stored.
  std::string file = "a.cpp";
  Trace copy = smallTrace();
  copy.nodes[2].loc.file = file.c_str();
  CHECK(copy.fingerprint() == base.fingerprint());

  // An argument's location is where jit() was called: not part of the kernel.
  Trace argLoc = smallTrace();
  argLoc.nodes[0].loc = {"b.cpp", 9, 9};
  CHECK(argLoc.fingerprint() == base.fingerprint());
}

TEST_CASE("op names") {
  CHECK(std::string(traceOpName(TraceOp::RegionArg)) == "RegionArg");
  CHECK(std::string(traceOpName(TraceOp::Op)) == "Op");
}

TEST_CASE("a generic op's name, attributes and result count are part of the fingerprint") {
  auto withOp = [](std::string name, int64_t axis, uint8_t results) {
    Trace t = smallTrace();
    TraceNode n{.op = TraceOp::Op, .dtype = DType::I32, .loc = {"a.cpp", 3, 1}};
    n.name = std::move(name);
    n.attrs = {{TraceAttr::I32, "axis", axis, {}}};
    n.results = results;
    t.nodes.push_back(std::move(n));
    return t;
  };
  const Trace base = withOp("tessel.program_id", 0, 1);
  CHECK(withOp("tessel.program_id", 0, 1).fingerprint() == base.fingerprint());
  CHECK(withOp("tessel.num_programs", 0, 1).fingerprint() != base.fingerprint());
  CHECK(withOp("tessel.program_id", 1, 1).fingerprint() != base.fingerprint());
  CHECK(withOp("tessel.program_id", 0, 0).fingerprint() != base.fingerprint());
}

TEST_CASE("a generic op's regions and result types are part of the fingerprint") {
  auto withReduce = [](tessel::DType combineType, std::vector<int64_t> secondShape, const char *combine) {
    Trace t = smallTrace();
    TraceNode red{.op = TraceOp::Op, .dtype = DType::I32, .operands = {2, 2}, .loc = {"a.cpp", 4, 1}};
    red.name = "tessel.reduce";
    red.results = 2;
    red.resultTypes = {{DType::I32, false, {}}, {DType::I32, false, std::move(secondShape)}};
    TraceRegion body;
    for (int64_t k = 0; k < 4; ++k)
      body.push_back({.op = TraceOp::RegionArg, .dtype = combineType, .i0 = k, .loc = {"a.cpp", 4, 1}});
    TraceNode add{.op = TraceOp::Op, .dtype = combineType, .operands = {3, 5}, .loc = {"a.cpp", 4, 1}};
    add.name = combine;
    body.push_back(std::move(add));
    red.regions.push_back(std::move(body));
    t.nodes.push_back(std::move(red));
    return t;
  };
  const Trace base = withReduce(DType::I32, {}, "arith.addi");
  CHECK(withReduce(DType::I32, {}, "arith.addi").fingerprint() == base.fingerprint());
  CHECK(withReduce(DType::I32, {}, "arith.muli").fingerprint() != base.fingerprint());
  CHECK(withReduce(DType::I64, {}, "arith.addi").fingerprint() != base.fingerprint());
  CHECK(withReduce(DType::I32, {1}, "arith.addi").fingerprint() != base.fingerprint());
}
