// traceOpName and Trace::fingerprint.
#include "tessel/core/trace.hpp"

#include <cstring>

namespace tessel {

const char *traceOpName(TraceOp op) {
  switch (op) {
#define TESSEL_OP_NAME(name) case TraceOp::name: return #name;
    TESSEL_OP_NAME(Arg) TESSEL_OP_NAME(ConstInt) TESSEL_OP_NAME(ConstFloat)
    TESSEL_OP_NAME(Op)
   
    TESSEL_OP_NAME(Add) TESSEL_OP_NAME(Sub) TESSEL_OP_NAME(Mul) TESSEL_OP_NAME(Div)
    TESSEL_OP_NAME(Rem) TESSEL_OP_NAME(Min) TESSEL_OP_NAME(Max) TESSEL_OP_NAME(And)
    TESSEL_OP_NAME(Or) TESSEL_OP_NAME(Xor) TESSEL_OP_NAME(Shl) TESSEL_OP_NAME(Shr)
    TESSEL_OP_NAME(CmpEq) TESSEL_OP_NAME(CmpNe) TESSEL_OP_NAME(CmpLt) TESSEL_OP_NAME(CmpLe)
    TESSEL_OP_NAME(CmpGt) TESSEL_OP_NAME(CmpGe) TESSEL_OP_NAME(Neg) TESSEL_OP_NAME(Not)
    TESSEL_OP_NAME(Exp) TESSEL_OP_NAME(Exp2) TESSEL_OP_NAME(Log) TESSEL_OP_NAME(Log2)
    TESSEL_OP_NAME(Sqrt) TESSEL_OP_NAME(Rsqrt) TESSEL_OP_NAME(Abs) TESSEL_OP_NAME(Floor)
    TESSEL_OP_NAME(Ceil) TESSEL_OP_NAME(Sin) TESSEL_OP_NAME(Cos) TESSEL_OP_NAME(Fma)
    TESSEL_OP_NAME(Where) TESSEL_OP_NAME(Cast)
   
    TESSEL_OP_NAME(Reduce) TESSEL_OP_NAME(Scan)
    TESSEL_OP_NAME(Result) TESSEL_OP_NAME(RegionArg) TESSEL_OP_NAME(Yield)
#undef TESSEL_OP_NAME
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
    f.pod(n.dtype);
    f.pod(n.isPtr);
    f.pod(n.shape.size());
    for (int64_t d : n.shape) f.pod(d);
    f.pod(n.operands.size());
    for (int32_t o : n.operands) f.pod(o);
    f.pod(n.i0);
    f.pod(n.i1);
    f.pod(n.f);
    f.pod(n.ints.size());
    for (int64_t v : n.ints) f.pod(v);
    hashNodes(f, n.region);
    f.str(n.name.c_str());
    f.pod(n.results);
    f.pod(n.attrs.size());
    for (const TraceAttr &a : n.attrs) {
      f.pod(a.kind);
      f.str(a.name.c_str());
      f.pod(a.value);
      f.pod(a.values.size());
      for (int64_t v : a.values) f.pod(v);
    }
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
