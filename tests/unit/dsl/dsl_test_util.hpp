// Helpers for the DSL tests: trace a body without a kernel, catch messages.
#pragma once

#include <tessel/tessel.hpp>

#include <string>

namespace dsltest {

// Runs `body` inside an open trace and returns what it recorded.
template <class F> tessel::Trace traceBody(F &&body) {
  tessel::detail::TraceContext ctx("test");
  tessel::detail::TraceScope scope(ctx);
  body();
  return ctx.take();
}

// The message of the tessel::Error `f` throws, or "<no error>".
template <class F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const tessel::Error &e) {
    return e.what();
  }
  return "<no error>";
}

// "file:line: " as trace-time errors start.
inline std::string at(const char *file, int line) { return std::string(file) + ":" + std::to_string(line) + ": "; }

} // namespace dsltest
