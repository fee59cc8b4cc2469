// traceOpName and Trace::fingerprint.
#include "tessel/core/trace.hpp"

#include <cstring>

namespace tessel {

const char *traceOpName(TraceOp op) {
  switch (op) {
  case TraceOp::Arg: return "Arg";
  case TraceOp::ConstInt: return "ConstInt";
  case TraceOp::ConstFloat: return "ConstFloat";
  case TraceOp::Op: return "Op";
  case TraceOp::Result: return "Result";
  case TraceOp::RegionArg: return "RegionArg";
  }
  return "?";
}

namespace {
// FNV-1a, 64 bit: stable across runs and builds (unlike std::hash).
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void *p, size_t n) {
    auto *c = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= c[i];
      h *= 1099511628211ull;
    }
  }
  template <class T> void pod(const T &v) { bytes(&v, sizeof(T)); }
  void str(const char *s) {
    size_t n = s ? std::strlen(s) : 0;
    pod(n);
    bytes(s, n);
  }
};
void hashNodes(Fnv &f, const std::vector<TraceNode> &nodes) {
  f.pod(nodes.size());
  for (const TraceNode &n : nodes) {
    f.pod(n.op);
    f.pod(n.id);
    f.pod(n.dtype);
    f.pod(n.isPtr);
    f.pod(n.shape.size());
    for (int64_t d : n.shape) f.pod(d);
    f.pod(n.operands.size());
    for (int32_t o : n.operands) f.pod(o);
    f.pod(n.i0);
    f.pod(n.f);
    f.str(n.name.c_str());
    f.pod(n.results);
    f.pod(n.resultTypes.size());
    for (const TraceType &t : n.resultTypes) {
      f.pod(t.dtype);
      f.pod(t.isPtr);
      f.pod(t.shape.size());
      for (int64_t d : t.shape) f.pod(d);
    }
    f.pod(n.attrs.size());
    for (const TraceAttr &a : n.attrs) {
      f.pod(a.kind);
      f.str(a.name.c_str());
      f.pod(a.value);
      f.pod(a.values.size());
      for (int64_t v : a.values) f.pod(v);
      f.str(a.text.c_str());
    }
    f.pod(n.regions.size());
    for (const TraceRegion &r : n.regions) hashNodes(f, r);
    // Locations appear in diagnostics, so they are part of what a compiled
    // kernel depends on -- except an argument's, which is where jit() was
    // called: the same kernel jitted in two places is one kernel.
    if (n.op == TraceOp::Arg)
      continue;
    f.str(n.loc.file);
    f.pod(n.loc.line);
    f.pod(n.loc.column);
  }
}

} // namespace

uint64_t Trace::fingerprint() const {
  Fnv f;
  f.str(kernelName.c_str());
  f.pod(args.size());
  for (const TraceArg &a : args) {
    f.pod(a.kind);
    f.pod(a.dtype);
  }
  hashNodes(f, nodes);
  return f.h;
}

} // namespace tessel
