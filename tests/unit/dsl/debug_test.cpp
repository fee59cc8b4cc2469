// device_print / device_assert as traced (tessel.print, tessel.device_assert
// with their text), static_print's output and static_check's error.
#include "dsl_test_util.hpp"
#include "../stderr_of.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace tessel;
using dsltest::at;
using dsltest::errorOf;
using dsltest::isOp;
using dsltest::traceBody;

namespace {

// What `run()` writes to stderr (fd 2, through a file).
template <class Fn> std::string stderrOf(Fn run) {
  return testing::stderrOf("/tmp/tessel-static-print-" + std::to_string(getpid()), run);
}

std::string textAttr(const TraceNode &n, const char *name) {
  for (const TraceAttr &a : n.attrs)
    if (a.name == name && a.kind == TraceAttr::String)
      return a.text;
  return "<none>";
}

const TraceNode *findOp(const Trace &t, const char *name) {
  for (const TraceNode &n : t.nodes)
    if (isOp(n, name))
      return &n;
  return nullptr;
}

} // namespace

TEST_CASE("device_print records its operands and Triton's normalized prefix") {
  Trace t = traceBody([] {
    auto x = arange(0, 16);
    device_print("x", x, cast<float>(x));
    device_print(" y: ", x);
    device_print("hi");
  });
  std::vector<const TraceNode *> prints;
  for (const TraceNode &n : t.nodes)
    if (isOp(n, "tessel.print"))
      prints.push_back(&n);
  REQUIRE(prints.size() == 3);
  CHECK(prints[0]->operands.size() == 2);
  CHECK(textAttr(*prints[0], "prefix") == " x: ");
  CHECK(textAttr(*prints[1], "prefix") == " y: ");
  CHECK(prints[2]->operands.empty());
  CHECK(textAttr(*prints[2], "prefix") == "hi"); // two characters or less stay as written
}

TEST_CASE("device_assert records its condition and message; the fingerprint sees the text") {
  auto traceWith = [](const char *message) {
    return traceBody([&] { device_assert(arange(0, 8) < 5, message); });
  };
  Trace a = traceWith("small"), b = traceWith("tiny");
  const TraceNode *op = findOp(a, "tessel.device_assert");
  REQUIRE(op != nullptr);
  CHECK(textAttr(*op, "message") == "small");
  CHECK(a.fingerprint() != b.fingerprint());
}

TEST_CASE("device_print and device_assert refuse text that is not printable ASCII, naming the line") {
  int line = __LINE__ + 1;
  std::string msg = errorOf([] { traceBody([] { device_print("a\nb", arange(0, 4)); }); });
  CHECK(msg == at(__FILE__, line) +
                   "device_print: the prefix must be printable ASCII (no newlines, tabs or other control characters); "
                   "'a\nb' is not");
  line = __LINE__ + 1;
  msg = errorOf([] { traceBody([] { device_assert(arange(0, 4) < 2, "tab\there"); }); });
  CHECK(msg.starts_with(at(__FILE__, line) + "device_assert: the message must be printable ASCII"));
}

TEST_CASE("device_print and device_assert are errors inside a combine function") {
  int line = __LINE__ + 4;
  std::string msg = errorOf([&] {
    traceBody([&] {
      reduce(arange(0, 8), 0, [](i32 a, i32 b) {
        device_print("a", a);
        return a + b;
      });
    });
  });
  CHECK(msg == at(__FILE__, line) + "device_print: cannot be used inside a combine function");
}

TEST_CASE("static_print writes shapes, element types and constants to stderr as the trace is recorded") {
  int line = 0;
  const std::string out = stderrOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({4, 8});
      Const<int> BLOCK = 64;
      line = __LINE__ + 1;
      static_print("BLOCK =", BLOCK, "x:", x, i32(arange(0, 16)), full({}, 7), 2.5, true);
    });
  });
  CHECK(out == at(__FILE__, line) + "static_print: BLOCK = 64 x: f32[4, 8] = 0 i32[16] i32[] = 7 2.5 true\n");
}

TEST_CASE("static_check: a false condition is an Error with the line and message") {
  int line = __LINE__ + 1;
  std::string msg = errorOf([] { static_check(64 % 48 == 0, "BLOCK must be a multiple of 48"); });
  CHECK(msg == at(__FILE__, line) + "static_check failed: BLOCK must be a multiple of 48");
  CHECK(errorOf([] { static_check(true, "fine"); }) == "<no error>");
  line = __LINE__ + 1;
  msg = errorOf([] { static_check(false); });
  CHECK(msg == at(__FILE__, line) + "static_check failed");
}
