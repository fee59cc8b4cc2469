// Generic trace ops (TraceOp::Op) are built by their MLIR name and checked by
// the op's verifier: a malformed one is a tessel::Error with its line, never
// a crash.
#include "e2e_common.hpp"

#include "../error_text.hpp"
#include "../scoped_env.hpp"
#include "tessel/lowering/compile.hpp"

using namespace tessel;

namespace {

// Gives the nodes of a hand-written trace their ids: a region's nodes before
// the op that owns them, as the tracer would for these traces.
void number(std::vector<TraceNode> &nodes, int32_t &next) {
  for (TraceNode &n : nodes) {
    for (TraceRegion &r : n.regions)
      number(r, next);
    n.id = next++;
  }
}
Trace numbered(Trace t) {
  int32_t next = 0;
  number(t.nodes, next);
  return t;
}

Trace traceWith(TraceNode op) {
  Trace t;
  t.kernelName = "generic";
  t.args = {{TraceArg::Pointer, DType::I32}};
  t.nodes.push_back({.op = TraceOp::Arg, .dtype = DType::I32, .isPtr = true});
  op.loc = {"kernel.cpp", 7, 3};
  t.nodes.push_back(std::move(op));
  return t;
}

std::string compileError(const Trace &t) {
  try {
    compileTrace(numbered(t), Specialization{}, CompileOptions{});
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("a generic op compiles by its name") {
  TraceNode pid{.op = TraceOp::Op, .dtype = DType::I32};
  pid.name = "tessel.program_id";
  pid.attrs = {{TraceAttr::I32, "axis", 2, {}}};
  Trace t = traceWith(pid);
  TraceNode store{.op = TraceOp::Op, .dtype = DType::I32, .operands = {0, 1}}; // *p = program_id(2)
  store.name = "tessel.store";
  store.results = 0;
  t.nodes.push_back(std::move(store));
  CompiledKernel k = compileTrace(numbered(t), Specialization{}, CompileOptions{});
  CHECK(k.tileIR.find("tessel.program_id 2") != std::string::npos);
  CHECK(k.llvmIR().find("llvm.amdgcn.workgroup.id.z") != std::string::npos);
}

TEST_CASE("a generic op no dialect defines is an error naming it and the line") {
  TraceNode bad{.op = TraceOp::Op, .dtype = DType::I32};
  bad.name = "tessel.no_such_op";
  std::string message = compileError(traceWith(bad));
  CAPTURE(message);
  CHECK(message.find("kernel.cpp:7") != std::string::npos);
  CHECK(message.find("no operation named 'tessel.no_such_op'") != std::string::npos);
}

// A node MLIR's verifier rejects is a tracer bug: the user sees an internal
// compiler error at the node's line, never the verifier's text (which
// TESSEL_LOG=internal prints).
TEST_CASE("a generic op its verifier rejects is an internal error at its line, without MLIR's text") {
  tessel_test::AllowCompilerText allow;
  const int before = tessel_test::compilerTextAllowed;
  TraceNode bad{.op = TraceOp::Op, .dtype = DType::I32};
  bad.name = "tessel.program_id";
  bad.attrs = {{TraceAttr::I32, "axis", 5, {}}}; // axes are 0, 1, 2
  std::string message = compileError(traceWith(bad));
  CAPTURE(message);
  CHECK(message.find("kernel.cpp:7: tessel: internal compiler error in importing the trace (a bug in tessel, not in "
                     "your kernel; TESSEL_LOG=internal prints the compiler's message)") != std::string::npos);
  CHECK(message.find("tessel.program_id") == std::string::npos);
  CHECK(message.find("axis") == std::string::npos);

  TraceNode noAttr{.op = TraceOp::Op, .dtype = DType::I32};
  noAttr.name = "tessel.num_programs"; // its axis attribute missing
  message = compileError(traceWith(noAttr));
  CAPTURE(message);
  CHECK(message.find("kernel.cpp:7: tessel: internal compiler error in importing the trace") != std::string::npos);

  // A select of two pointers typed as a select of floats (what where() on
  // pointers traced before it chose pointers).
  {
    tessel::testing::ScopedEnv log("TESSEL_LOG", "internal");
    Trace t = traceWith(TraceNode{.op = TraceOp::ConstInt, .dtype = DType::I1, .i0 = 1});
    TraceNode select{.op = TraceOp::Op, .dtype = DType::F32, .operands = {1, 0, 0}};
    select.name = "arith.select";
    select.loc = {"kernel.cpp", 8, 3};
    t.nodes.push_back(select);
    std::string err = e2e::stderrOf(std::string(TESSEL_BINARY_DIR) + "/generic-op-internal.txt", [&] { message = compileError(t); });
    CAPTURE(message);
    CAPTURE(err);
    CHECK(message.find("kernel.cpp:8: tessel: internal compiler error in importing the trace") != std::string::npos);
    CHECK(message.find("failed to verify") == std::string::npos);
    CHECK(err.find("'arith.select' op failed to verify") != std::string::npos);
  }
  CHECK(tessel_test::compilerTextAllowed == before + 3);
}

// The importer throws from deep inside MLIR-built code: the exception must
// unwind through it (a zero-length function placed at the importer's address
// once hid its unwind table, and every malformed trace ended in
// std::terminate).
TEST_CASE("a malformed trace is an error at its line, not a crash") {
  TraceNode dangling{.op = TraceOp::Op, .dtype = DType::I32, .operands = {0, 42}};
  dangling.name = "tessel.store";
  dangling.results = 0;
  std::string message = compileError(traceWith(dangling));
  CAPTURE(message);
  CHECK(message.find("kernel.cpp:7") != std::string::npos);
  CHECK(message.find("malformed trace: operand 1 is missing") != std::string::npos);

  TraceNode arg{.op = TraceOp::Arg, .dtype = DType::I32, .i0 = 3}; // the kernel has one argument
  message = compileError(traceWith(arg));
  CAPTURE(message);
  CHECK(message.find("argument index out of range") != std::string::npos);

  TraceNode blockArg{.op = TraceOp::RegionArg, .dtype = DType::I32}; // in the kernel body, not a region
  message = compileError(traceWith(blockArg));
  CAPTURE(message);
  CHECK(message.find("kernel.cpp:7: RegionArg: malformed trace: a region argument out of place") !=
        std::string::npos);

  TraceNode multi{.op = TraceOp::Op, .dtype = DType::I32, .operands = {}};
  multi.name = "tessel.program_id";
  multi.results = 2; // and no result types
  message = compileError(traceWith(multi));
  CAPTURE(message);
  CHECK(message.find("the op's result types are missing") != std::string::npos);

  Trace twice = numbered(traceWith(TraceNode{.op = TraceOp::Arg, .dtype = DType::I32, .isPtr = true}));
  twice.nodes[1].id = 0; // the first argument's id again
  try {
    compileTrace(twice, Specialization{}, CompileOptions{});
    message = "";
  } catch (const Error &e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(message.find("malformed trace: value id 0 is out of range or used twice") != std::string::npos);
}

// A region is imported before its op, its values numbered first: a reduce
// written by hand as the tracer would record it compiles.
TEST_CASE("a generic op with a region and several results compiles") {
  Trace t;
  t.kernelName = "by_hand";
  t.args = {{TraceArg::Pointer, DType::I32}};
  SourceLoc loc{"kernel.cpp", 9, 1};
  t.nodes.push_back({.op = TraceOp::Arg, .dtype = DType::I32, .isPtr = true});        // 0
  TraceNode range{.op = TraceOp::Op, .dtype = DType::I32, .shape = {64}, .loc = loc};  // 1
  range.name = "tessel.make_range";
  range.attrs = {{TraceAttr::I32, "start", 0, {}}, {TraceAttr::I32, "end", 64, {}}};
  t.nodes.push_back(range);
  TraceNode red{.op = TraceOp::Op, .dtype = DType::I32, .operands = {1, 1}, .loc = loc}; // 8
  red.name = "tessel.reduce";
  red.results = 2;
  red.resultTypes = {{DType::I32, false, {}}, {DType::I32, false, {}}};
  red.attrs = {{TraceAttr::I32, "axis", 0, {}}};
  TraceRegion body;
  for (int64_t k = 0; k < 4; ++k) // 2..5
    body.push_back({.op = TraceOp::RegionArg, .dtype = DType::I32, .i0 = k, .loc = loc});
  TraceNode add{.op = TraceOp::Op, .dtype = DType::I32, .operands = {2, 4}, .loc = loc}; // 6: sum
  add.name = "arith.addi";
  body.push_back(add);
  TraceNode yield{.op = TraceOp::Op, .dtype = DType::I32, .operands = {6, 5}, .loc = loc}; // 7: (sum, last)
  yield.name = "tessel.yield";
  yield.results = 0;
  body.push_back(yield);
  red.regions.push_back(body);
  t.nodes.push_back(red);
  t.nodes.push_back({.op = TraceOp::Result, .dtype = DType::I32, .operands = {8}, .i0 = 0, .loc = loc}); // 9
  TraceNode store{.op = TraceOp::Op, .dtype = DType::I32, .operands = {0, 9}, .loc = loc};
  store.name = "tessel.store";
  store.results = 0;
  t.nodes.push_back(store);
  CompiledKernel k = compileTrace(numbered(t), Specialization{}, CompileOptions{});
  CHECK(k.tileIR.find("tessel.reduce") != std::string::npos);
  CHECK(k.tileIR.find("arith.addi") != std::string::npos);

  // The store reads result 0, the region's sum of 0..63 (result 1 would be 63).
  auto out = e2e::emulator().upload(std::vector<int32_t>{-1});
  auto loaded = e2e::emulator().impl().load(k);
  int32_t *arg = out.devicePtr();
  e2e::emulator().impl().launch(*loaded, {1, 1, 1}, k.blockSize, &arg, sizeof arg);
  CHECK(out.download()[0] == 64 * 63 / 2);
}
