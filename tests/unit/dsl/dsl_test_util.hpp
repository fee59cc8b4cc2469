// Helpers for the DSL tests: trace a body without a kernel, catch messages.
#pragma once

#include <tessel/tessel.hpp>

#include "../error_of.hpp"

#include <string>
#include <vector>

namespace dsltest {

// Runs `body` inside an open trace and returns what it recorded.
template <class F> tessel::Trace traceBody(F &&body) {
  tessel::detail::TraceContext ctx("test");
  tessel::detail::TraceScope scope(ctx);
  body();
  return ctx.take();
}

using testutil::errorOf; // the message of the tessel::Error a call throws, or "<no error>"

// True when `n` is the generic op (TraceOp::Op) named `name`.
inline bool isOp(const tessel::TraceNode &n, const std::string &name) {
  return n.op == tessel::TraceOp::Op && n.name == name;
}
// The value of integer attribute `name` of a generic op (-1 when absent).
inline int64_t attrOf(const tessel::TraceNode &n, const std::string &name) {
  for (const tessel::TraceAttr &a : n.attrs)
    if (a.name == name)
      return a.value;
  return -1;
}
inline std::vector<int64_t> attrListOf(const tessel::TraceNode &n, const std::string &name) {
  for (const tessel::TraceAttr &a : n.attrs)
    if (a.name == name)
      return a.values;
  return {};
}

// Every node of a trace by value id.
inline void collectById(const std::vector<tessel::TraceNode> &nodes, std::vector<const tessel::TraceNode *> &out) {
  for (const tessel::TraceNode &n : nodes) {
    for (const tessel::TraceRegion &r : n.regions)
      collectById(r, out);
    if (out.size() <= static_cast<size_t>(n.id))
      out.resize(static_cast<size_t>(n.id) + 1, nullptr);
    out[static_cast<size_t>(n.id)] = &n;
  }
}
inline std::vector<const tessel::TraceNode *> nodesById(const tessel::Trace &t) {
  std::vector<const tessel::TraceNode *> out;
  collectById(t.nodes, out);
  return out;
}

// "file:line: " as trace-time errors start.
inline std::string at(const char *file, int line) { return std::string(file) + ":" + std::to_string(line) + ": "; }

} // namespace dsltest
