// The random programs' model: shapes, names, listings, fingerprints and error
// bounds (see random_programs_test.cpp).
#include "random_programs.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>

using namespace tessel;

namespace rp {

int64_t numel(const Dims &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::optional<Dims> broadcastDims(Dims a, Dims b) {
  while (a.size() < b.size()) a.insert(a.begin(), 1);
  while (b.size() < a.size()) b.insert(b.begin(), 1);
  Dims r(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) return std::nullopt;
    r[i] = std::max(a[i], b[i]);
  }
  return r;
}

bool broadcastsTo(const Dims &from, const Dims &to) {
  auto r = broadcastDims(from, to);
  return r && *r == to;
}

const char *opName(Op op) {
  switch (op) {
  case Op::Input: return "load";
  case Op::Iota: return "arange";
  case Op::Full: return "full";
  case Op::Add: return "+";
  case Op::Sub: return "-";
  case Op::Mul: return "*";
  case Op::Min: return "minimum";
  case Op::Max: return "maximum";
  case Op::And: return "&";
  case Op::Or: return "|";
  case Op::Xor: return "^";
  case Op::Lt: return "<";
  case Op::Le: return "<=";
  case Op::Eq: return "==";
  case Op::Ne: return "!=";
  case Op::Gt: return ">";
  case Op::Ge: return ">=";
  case Op::Neg: return "-";
  case Op::Abs: return "abs";
  case Op::Cast: return "cast";
  case Op::Where: return "where";
  case Op::ExpandDims: return "expand_dims";
  case Op::BroadcastTo: return "broadcast_to";
  case Op::Trans: return "trans";
  case Op::Reshape: return "reshape";
  case Op::Join: return "join";
  case Op::Split: return "split";
  case Op::Sum: return "sum";
  case Op::RMax: return "max";
  case Op::RMin: return "min";
  case Op::ArgMax: return "argmax";
  case Op::ArgMin: return "argmin";
  case Op::Cumsum: return "cumsum";
  case Op::Div: return "/";
  case Op::Mod: return "%";
  case Op::Shl: return "<<";
  case Op::Shr: return ">>";
  case Op::Exp: return "exp";
  case Op::Log: return "log";
  case Op::Sqrt: return "sqrt";
  case Op::Sin: return "sin";
  case Op::Fma: return "fma";
  case Op::ProgramId: return "program_id";
  case Op::NumPrograms: return "num_programs";
  case Op::ScalarLoad: return "load";
  case Op::Loop: return "loop";
  case Op::If: return "if_";
  case Op::Dot: return "dot";
  case Op::Sort: return "sort";
  case Op::SortPayload: return "sort";
  case Op::ArgSort: return "argsort";
  case Op::TopK: return "topk";
  case Op::Atomic: return "atomic";
  case Op::Nest: return "nest";
  }
  return "?";
}

// The type a sum or cumsum of `d` returns (see dsl/include/tessel/reduce.hpp).
Dt sumDt(Dt d) {
  switch (d) {
  case Dt::Bool: case Dt::I8: case Dt::I16: return Dt::I32;
  case Dt::F16: case Dt::BF16: return Dt::F32;
  default: return d;
  }
}

const char *dtName(Dt dt) {
  switch (dt) {
  case Dt::F32: return "f32";
  case Dt::I32: return "i32";
  case Dt::Bool: return "i1";
  case Dt::F16: return "f16";
  case Dt::BF16: return "bf16";
  case Dt::I8: return "i8";
  case Dt::I16: return "i16";
  case Dt::I64: return "i64";
  }
  return "?";
}
const char *cppName(Dt dt) {
  switch (dt) {
  case Dt::F32: return "float";
  case Dt::I32: return "int32_t";
  case Dt::Bool: return "bool";
  case Dt::F16: return "half";
  case Dt::BF16: return "bfloat16";
  case Dt::I8: return "int8_t";
  case Dt::I16: return "int16_t";
  case Dt::I64: return "int64_t";
  }
  return "?";
}
// The letter of a buffer name: xf0, xi1, oh0, ...
const char *bufLetter(Dt dt) {
  switch (dt) {
  case Dt::F32: return "f";
  case Dt::F16: return "h";
  case Dt::BF16: return "b";
  case Dt::I8: return "c";
  case Dt::I16: return "s";
  case Dt::I64: return "l";
  default: return "i";
  }
}

std::string dimsText(const Dims &s) {
  std::string t = "{";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "}";
}

std::string litText(Dt dt, double v) {
  if (dt == Dt::Bool) return v != 0 ? "true" : "false";
  std::string t = std::to_string(int64_t(v));
  return isFloatDt(dt) ? t + ".0f" : t;
}

std::string maskText(int kind, const char *m, const char *n, int mv, int nv, size_t rank) {
  std::string rows = std::string("rows < ") + m + "(" + std::to_string(mv) + ")";
  std::string cols = std::string("cols < ") + n + "(" + std::to_string(nv) + ")";
  if (rank < 2) return kind == 0 ? "no mask" : cols;
  switch (kind) {
  case 1: return rows + " & " + cols;
  case 2: return cols;
  case 3: return rows;
  default: return "no mask";
  }
}

// Global extents (with the grid) of an input and of an output's array.
int64_t globalRows(const Program &p, const Dims &s) { return s.size() == 2 ? p.gx * s[0] : 1; }
int64_t globalColsIn(const Program &p, const InputSpec &in) {
  if (in.shape.size() == 2) return p.gy * in.shape[1];
  return (in.axis == 0 ? p.gx : p.gy) * in.shape[0];
}
int64_t globalColsOut(const Program &p, const Dims &s, int so) {
  if (s.empty()) return int64_t(p.gx) * p.gy + so;
  if (s.size() == 2) return p.gy * s[1];
  return int64_t(p.gx) * p.gy * s[0];
}
size_t inputSize(const Program &p, const InputSpec &in) { return size_t(globalRows(p, in.shape)) * size_t(p.ldx); }

static const char *atomicName(int kind) {
  static const char *names[] = {"atomic_add", "atomic_max", "atomic_min", "atomic_and",
                                "atomic_or",  "atomic_xor", "atomic_umax", "atomic_umin"};
  return names[kind];
}

// The (nearly) DSL code of a loop, branch, dot, sort or atomic node.
static std::string controlText(const Program &p, const Node &n) {
  auto ref = [](int i) { return "v" + std::to_string(i); };
  std::ostringstream o;
  auto validText = [&] {
    if (n.c < 0) return std::string();
    return ", .valid = " + ref(n.c) + "}) (past each line's valid count: " + litText(n.dt, n.lit) + ")";
  };
  switch (n.op) {
  case Op::Loop: {
    std::string hi = std::to_string(n.hi) + (n.c >= 0 ? " + " + ref(n.c) : "");
    std::string k = "cast<" + std::string(cppName(n.dt)) + ">(k)";
    o << "acc = " << (n.a >= 0 ? ref(n.a) : "full(" + dimsText(n.shape) + ", " + litText(n.dt, n.lit) + ")") << "; "
      << (n.flag ? "while_ (k = " + std::to_string(n.lo) + "; k < " + hi + "; k += " + std::to_string(n.step) + ")"
                 : "for_range(" + std::to_string(n.lo) + ", " + hi + ", " + std::to_string(n.step) + ", k)")
      << " { ";
    switch (n.kind) {
    case kLoopAxpy: o << "acc = acc + " << k << " * " << ref(n.b); break;
    case kLoopMax: o << "acc = maximum(acc, " << ref(n.b) << " + " << k << ")"; break;
    case kLoopLoad:
      o << "acc = acc + load(x" << bufLetter(n.dt) << n.input << " + offs" << dimsText(n.shape)
        << " shifted by k " << (n.shape.size() == 2 ? "rows" : "elements") << ", in bounds, 0)";
      break;
    default:
      o << "acc = dot(load(x" << bufLetter(n.inDt) << n.input << " [M, K] at cols + k), load(x" << bufLetter(n.inDt)
        << n.input2 << (n.transB ? " transposed" : "") << " [K, N] at rows + k), acc) (masked, 0)";
      break;
    }
    o << " }; acc";
    break;
  }
  case Op::Nest:
    o << "acc = " << (n.a >= 0 ? ref(n.a) : "full(" + dimsText(n.shape) + ", " + litText(n.dt, n.lit) + ")")
      << ", s = 0, done = false, b = " << ref(n.b) << (n.c >= 0 ? ", c = " + ref(n.c) : std::string()) << "; "
      << nestText(n.stmts) << "acc + s + done";
    break;
  case Op::If:
    o << "r = " << ref(n.c) << "; if_(" << ref(n.a) << ") { r = " << ref(n.b) << " + " << litText(n.dt, n.lit)
      << "; }";
    if (n.flag) o << " else { r = r - " << litText(n.dt, n.lit) << "; }";
    o << " r";
    break;
  case Op::Dot:
    o << "dot(" << ref(n.a) << ", " << (n.transB ? "trans(" + ref(n.b) + ")" : ref(n.b))
      << (n.c >= 0 ? ", " + ref(n.c) : std::string()) << ")";
    break;
  case Op::Sort:
    o << "sort(" << ref(n.a) << ", {.axis = " << n.axis << ", .descending = " << n.flag << "})";
    break;
  case Op::SortPayload:
    o << "std::get<1>(sort(" << ref(n.a) << ", " << ref(n.b) << ", {.axis = " << n.axis
      << ", .descending = " << n.flag << ", .stable = true" << (n.c >= 0 ? validText() : std::string("}))"));
    break;
  case Op::ArgSort:
    o << "argsort(" << ref(n.a) << ", {.axis = " << n.axis << ", .descending = " << n.flag << ", .stable = true"
      << (n.c >= 0 ? validText() : std::string("})"));
    break;
  case Op::TopK:
    o << "std::get<" << (n.kind ? 1 : 0) << ">(topk" << (n.kind == 2 ? "<int64_t>" : "") << "(" << ref(n.a) << ", "
      << n.k << ", {.axis = " << n.axis << ", .largest = " << n.flag << "}))";
    break;
  default: {
    static const char *sems[] = {"relaxed", "acquire", "release", "acq_rel"};
    static const char *scopes[] = {"wavefront", "workgroup", "agent", "system"};
    o << atomicName(n.kind) << "(a" << bufLetter(n.dt) << " + " << regionOf(p, int(&n - p.nodes.data())) * kRegion
      << " + (" << ref(n.a) << " & " << kRegion - 1 << "), " << (n.b >= 0 ? ref(n.b) : litText(n.dt, n.lit)) << ", "
      << (n.c >= 0 ? ref(n.c) : "true") << ", {" << sems[n.order / 4] << ", " << scopes[n.order % 4]
      << "}) (old values unused)";
    break;
  }
  }
  return o.str();
}

// The program as (nearly) DSL code, one line per node.
std::string listing(const Program &p) {
  std::ostringstream o;
  o << "seed " << p.seed << ": Device::emulator(\"" << p.arch << "\"), num_warps " << p.warps
    << ", ldx " << p.ldx << ", ldo " << p.ldo;
  if (p.features != 0) {
    char f[16];
    std::snprintf(f, sizeof f, "0x%x", p.features);
    o << ", features " << f << ", grid {" << p.gx << ", " << p.gy << "}";
    if (p.stages > 1) o << ", num_stages " << p.stages;
    if (p.grid()) o << " (tiles at rows p0 * R, cols p1 * C; 1-D outputs at (p0 * num_programs(1) + p1) * L)";
  }
  o << "\n";
  auto ref = [&](int i) { return "v" + std::to_string(i); };
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const Node &n = p.nodes[i];
    o << "  auto v" << i << " = ";
    switch (n.op) {
    case Op::Input: {
      const InputSpec &in = p.inputs[n.input];
      std::string k = std::to_string(n.input);
      o << "load(x" << bufLetter(in.dt) << k << " + offs" << dimsText(in.shape);
      if (p.grid() && in.shape.size() == 1) o << " at program_id(" << in.axis << ")";
      o << ", " << maskText(in.maskKind, ("m" + k).c_str(), ("n" + k).c_str(), in.m, in.n, in.shape.size())
        << ", other " << in.other << (in.wide ? ", wide data" : "") << ")";
      break;
    }
    case Op::Iota: o << "arange(0, " << n.shape[0] << ")"; break;
    case Op::Full: o << "full(" << dimsText(n.shape) << ", " << litText(n.dt, n.lit) << ")"; break;
    case Op::Neg: o << "-" << ref(n.a); break;
    case Op::Abs: o << "abs(" << ref(n.a) << ")"; break;
    case Op::Cast: o << "cast<" << cppName(n.dt) << ">(" << ref(n.a) << ")"; break;
    case Op::Where: {
      Dt vt = n.dt;
      o << "where(" << ref(n.a) << ", " << (n.b < 0 ? litText(vt, n.lit) : ref(n.b)) << ", "
        << (n.c < 0 ? litText(vt, n.lit) : ref(n.c)) << ")";
      break;
    }
    case Op::ExpandDims: o << "expand_dims(" << ref(n.a) << ", " << n.axis << ")"; break;
    case Op::BroadcastTo: o << "broadcast_to(" << ref(n.a) << ", " << dimsText(n.shape) << ")"; break;
    case Op::Trans: o << "trans(" << ref(n.a) << ")"; break;
    case Op::Reshape: o << "reshape(" << ref(n.a) << ", " << dimsText(n.shape) << ")"; break;
    case Op::Join: o << "join(" << ref(n.a) << ", " << ref(n.b) << ")"; break;
    case Op::Split: o << "std::get<" << n.flag << ">(split(" << ref(n.a) << "))"; break;
    case Op::Sum: case Op::RMax: case Op::RMin: case Op::ArgMax: case Op::ArgMin:
      o << opName(n.op) << "(" << ref(n.a) << ", " << n.axis << (n.flag ? ", /*keep_dims*/ true" : "") << ")";
      break;
    case Op::Cumsum:
      o << "cumsum(" << ref(n.a) << ", " << n.axis << (n.flag ? ", /*reverse*/ true" : "") << ")";
      break;
    case Op::Exp: o << "exp(" << ref(n.a) << ")"; break;
    case Op::Log: o << "log(abs(" << ref(n.a) << ") + 1.0f)"; break;
    case Op::Sqrt: o << "sqrt(abs(" << ref(n.a) << "))"; break;
    case Op::Sin: o << "sin(" << ref(n.a) << ")"; break;
    case Op::Fma:
      o << "fma(" << ref(n.a) << ", " << ref(n.b) << ", " << (n.c < 0 ? litText(Dt::F32, n.lit) : ref(n.c)) << ")";
      break;
    case Op::ProgramId: o << "program_id(" << n.axis << ")"; break;
    case Op::NumPrograms: o << "num_programs(" << n.axis << ")"; break;
    case Op::ScalarLoad: {
      const InputSpec &in = p.inputs[n.input];
      std::string k = std::to_string(n.input);
      std::string off = n.flag ? "(program_id(0) + " + std::to_string(int64_t(n.lit)) + ")"
                               : std::to_string(int64_t(n.lit));
      o << "load(x" << bufLetter(in.dt) << k << " + " << off;
      if (n.litLeft) o << ", " << off << " < n" << k << "(" << in.n << "), " << in.other;
      o << ")";
      break;
    }
    case Op::Loop: case Op::If: case Op::Dot: case Op::Sort: case Op::SortPayload: case Op::ArgSort: case Op::TopK:
    case Op::Atomic: case Op::Nest:
      o << controlText(p, n);
      break;
    default: { // binary operators
      Dt ot = p.nodes[n.a].dt;
      std::string l = n.b < 0 && n.litLeft ? litText(ot, n.lit) : ref(n.a);
      std::string r = n.b < 0 ? (n.litLeft ? ref(n.a) : litText(ot, n.lit)) : ref(n.b);
      if (isShift(n.op) && (n.b >= 0 || n.litLeft)) r = "(" + r + " & 31)";
      if (n.op == Op::Min || n.op == Op::Max) o << opName(n.op) << "(" << l << ", " << r << ")";
      else o << l << " " << opName(n.op) << " " << r;
    }
    }
    o << ";  // " << dtName(n.dt) << dimsText(n.shape) << " |v| <= " << n.bound;
    if (n.err > 0) o << ", err <= " << n.err;
    o << "\n";
  }
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const OutputSpec &out = p.outputs[k];
    const Node &n = p.nodes[out.node];
    std::string ks = std::to_string(k);
    o << "  store(o" << bufLetter(n.dt) << k << " + ";
    if (n.shape.empty() && !p.grid() && out.so == 0 && out.maskKind == 0) {
      o << "offs{}, v" << out.node << ", no mask";
    } else if (n.shape.empty()) {
      o << (p.grid() ? "(p0 * num_programs(1) + p1 + " : "(") << out.so << "), v" << out.node << ", "
        << (out.maskKind ? "offset < no" + ks + "(" + std::to_string(out.n) + ")" : std::string("no mask"));
    } else {
      o << "offs" << dimsText(n.shape) << ", v" << out.node << ", "
        << maskText(out.maskKind, ("mo" + ks).c_str(), ("no" + ks).c_str(), out.m, out.n, n.shape.size());
    }
    o << ");\n";
  }
  return o.str();
}

// Every field that changes the kernel, hashed: the key the kernel is found by.
uint64_t fingerprint(const Program &p) {
  std::ostringstream o;
  o << p.arch << ' ' << p.warps << ' ' << p.ldx << ' ' << p.ldo << ' ' << p.features << ' ' << p.gx << ' ' << p.gy
    << ';' << p.stages << ';';
  for (const InputSpec &in : p.inputs)
    o << int(in.dt) << dimsText(in.shape) << in.maskKind << ',' << in.m << ',' << in.n << ',' << in.other << ','
      << in.axis << ',' << in.wide << ';';
  for (const Node &n : p.nodes)
    o << int(n.op) << ',' << int(n.dt) << dimsText(n.shape) << n.a << ',' << n.b << ',' << n.c << ',' << n.lit
      << ',' << n.litLeft << ',' << n.axis << ',' << n.flag << ',' << n.input << ',' << n.lo << ',' << n.hi << ','
      << n.step << ',' << n.kind << ',' << n.k << ',' << n.order << ',' << n.input2 << ',' << int(n.inDt) << ','
      << n.transB << nestKey(n.stmts) << ';';
  for (const OutputSpec &out : p.outputs)
    o << out.node << ',' << out.maskKind << ',' << out.m << ',' << out.n << ',' << out.so << ';';
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : o.str()) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// Error of a float result of magnitude <= bound computed from inexact
// operands: `propagated` plus one f32 rounding.
double withRounding(double propagated, double bound) {
  return propagated > 0 ? propagated + bound * kF32Round : 0;
}
// Error added by rounding to f16 / bf16 (half an ulp, and f16 subnormals).
double narrowRounding(Dt to, double bound) {
  if (to == Dt::F16) return bound / 2048 + 1.0 / (1 << 24);
  if (to == Dt::BF16) return bound / 256;
  return 0;
}

// Whether `from` values (bound, err) may be cast to `to` with a predictable
// result.
bool castOk(Dt from, double bound, double err, Dt to) {
  if (from == to) return false;
  if (err > 0) return to == Dt::F32 || ((to == Dt::F16 || to == Dt::BF16) && bound + err < kF16Max / 2);
  if (isFloatDt(to) && isIntDt(from) && bound > kBoundLimit) return false; // not exact in f32
  if (to == Dt::F16 && bound > kF16Max / 2) return false;                 // would round to inf
  if (isFloatDt(from) && to == Dt::I8 && bound > 127) return false;       // fptosi out of range
  if (isFloatDt(from) && to == Dt::I16 && bound > 32767) return false;
  return true;
}
double castBound(Dt to, double bound) {
  switch (to) {
  case Dt::Bool: return 1;
  case Dt::I8: return std::min(bound, 128.0);
  case Dt::I16: return std::min(bound, 32768.0);
  case Dt::I32: return std::min(bound, kWide);
  case Dt::F16: case Dt::BF16: return bound * (1 + 1.0 / 128);
  default: return bound;
  }
}


} // namespace rp
