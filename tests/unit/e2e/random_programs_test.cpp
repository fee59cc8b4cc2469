// Differential random testing of the compiler: many small random block
// programs, each run on the emulator and compared element by element with an
// independent host evaluation of the same program.
//
// A program is a plain data structure (a DAG of tile ops over 2-3 masked
// input tiles, see `Program`) drawn from a seeded std::mt19937. One kernel,
// `random_program`, interprets it at trace time: the DSL is C++, so a loop
// over the nodes builds the tiles. The kernel finds its program in a registry
// under a Const<uint64_t> that is a hash of the program's full contents, so
// each program is its own specialization (and a shrunk program is another).
//
// Values are small integers and every node carries a bound on its magnitude
// that the generator keeps under 2^22 for floats, so f32 arithmetic is exact
// in any order and the comparison is exact. i32 arithmetic is compared
// exactly too: the host wraps it to 32 bits like the GPU.
//
// Each seed also draws a set of *features* (a bit mask, see `Feature`) that
// widen what the program may contain; with none the program is the classic
// one (bit for bit what this test drew before features existed):
//   grid    several workgroups: inputs and outputs are global arrays, each
//           program's tiles sit at program_id(0) (rows) / program_id(1)
//           (columns), masks cut the edges; 1-D and scalar outputs go to
//           program_id(0) * num_programs(1) + program_id(1); program_id and
//           num_programs also appear as scalar values
//   intops  i32 `/` `%` (divisors from data and literals, zero included;
//           INT32_MIN dividends), `<<` `>>` (amounts 0..31: a literal or
//           `y & 31`), inputs holding INT32_MIN / INT32_MAX / -1 / 0, and i32
//           results that wrap
//   half    f16 and bf16 inputs, outputs and casts (exact small integers;
//           sums accumulate in f32)
//   math    exp, log(|x| + 1), sqrt(|x|), sin on f32 and fma (see below)
//   scalar  scalar loads `load(x + s)` (s a literal or program_id(0) + lit,
//           sometimes masked by `s < n`), scalar stores at a scalar offset
//           (sometimes masked), `where` with scalar conditions
//   narrow  i8, i16 and i64 inputs and casts to them (truncating)
//
// Transcendentals are inexact, so a node also carries `err`, a bound on the
// absolute difference between the GPU's value and the host's double-precision
// value. exp/log/sqrt/sin start at err = kMathRel * (their magnitude bound)
// with kMathRel = 2^-18 (about 32 f32 ulps); +, -, *, fma, sums and casts to
// f16/bf16 then propagate it (first-order error terms plus one f32 rounding
// per operation, 2^-24 of the magnitude). Inexact values never reach an op
// that is discontinuous (compare, argmax, cast to int or bool, where's
// condition, `/`), so a tolerance is always meaningful; exact nodes (err = 0)
// are still compared exactly.
//
// Environment:
//   TESSEL_RANDOM_PROGRAMS=N   run N programs instead of the default
//   TESSEL_RANDOM_FIRST=S      first seed of the run (default 1)
//   TESSEL_RANDOM_SEED=S       run only seed S and print its listing
//   TESSEL_RANDOM_FEATURES=F   use feature mask F (e.g. 0 or 0x3f) for every
//                              seed instead of the one each seed draws
//   TESSEL_RANDOM_SHRINK=0     do not shrink failing programs
// A failure prints the seed and features, the program (as DSL code), the
// shrunk program and the first wrong elements; it reproduces from those alone.
#include "e2e_common.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

using namespace tessel;
using namespace e2e;

namespace {

// ---------------------------------------------------------------------------
// Programs

enum class Dt : uint8_t { F32, I32, Bool, F16, BF16, I8, I16, I64 };
enum class Op : uint8_t {
  Input, Iota, Full,
  Add, Sub, Mul, Min, Max, And, Or, Xor,     // binary, broadcasting
  Lt, Le, Eq, Ne, Gt, Ge,                    // compare -> bool
  Neg, Abs, Cast, Where,
  ExpandDims, BroadcastTo, Trans, Reshape, Join, Split,
  Sum, RMax, RMin, ArgMax, ArgMin, Cumsum,   // along `axis`
  // Feature ops (after the classic ones, whose numbers do not change).
  Div, Mod, Shl, Shr,                        // binary, i32; a tile shift amount is `b & 31`
  Exp, Log, Sqrt, Sin,                       // f32: exp(a), log(|a| + 1), sqrt(|a|), sin(a)
  Fma,                                       // fma(a, b, c); c < 0 = the literal
  ProgramId, NumPrograms,                    // scalar i32 along `axis`
  ScalarLoad,                                // load(x<input> + lit (+ program_id(0) if flag)),
                                             // masked by `offset < n<input>` if litLeft
};

enum Feature : unsigned {
  kGrid = 1, kIntOps = 2, kHalf = 4, kMath = 8, kScalar = 16, kNarrow = 32,
  kAllFeatures = 63,
};

using Dims = std::vector<int64_t>;

struct Node {
  Op op;
  Dt dt;
  Dims shape;
  int a = -1, b = -1, c = -1; // operands; -1 in a binary's b (or where's b/c) = the literal
  double lit = 0;             // literal operand, Full's value
  bool litLeft = false;       // binary: `lit op a` rather than `a op lit`
  int axis = 0;
  bool flag = false;          // reductions: keep_dims; cumsum: reverse
  int input = -1;             // Input: which input
  double bound = 0;           // |value| <= bound for every element
  double err = 0;             // |GPU value - host value| <= err (0: exact)
};

// A masked input tile: shape [R, C] at row stride ldx, or [L] contiguous.
// maskKind: 0 none, 1 rows < m and cols < n, 2 cols < n only, 3 rows < m only.
// With a grid, rows and columns are global: the tile of program (p0, p1)
// starts at row p0 * R and column p1 * C (a 1-D one at p<axis> * L).
struct InputSpec {
  Dt dt;
  Dims shape;
  int maskKind;
  int m, n;
  int other; // the value masked-off elements read
  int axis = 0;      // 1-D with a grid: which program_id offsets the tile
  bool wide = false; // i32 data with INT32_MIN, INT32_MAX, -1 and 0 mixed in
};

// An output: node `node` stored at row stride ldo (2-D) with a mask of the
// same kinds as the inputs'. A scalar output goes to offset
// program_id(0) * num_programs(1) + program_id(1) + so, masked by
// `offset < n` when maskKind is 1.
struct OutputSpec {
  int node;
  int maskKind;
  int m, n;
  int so = 0;
};

struct Program {
  uint64_t seed = 0;
  unsigned features = 0;
  std::string arch;
  unsigned warps = 4;
  int ldx = 1, ldo = 1;
  int gx = 1, gy = 1; // the grid (programs along axes 0 and 1)
  std::vector<InputSpec> inputs;
  std::vector<Node> nodes;
  std::vector<OutputSpec> outputs;

  bool has(unsigned f) const { return (features & f) != 0; }
  bool grid() const { return has(kGrid); }
};

constexpr double kBoundLimit = double(1 << 22);
constexpr double kWide = 2147483648.0; // the bound of any i32
constexpr int64_t kMaxElems = 2048;
// Relative accuracy asked of exp, log, sqrt and sin (about 32 f32 ulps).
constexpr double kMathRel = 1.0 / (1 << 18);
constexpr double kF32Round = 1.0 / (1 << 24); // f32 unit roundoff
constexpr double kF16Max = 65504;

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
  }
  return "?";
}

bool isBinary(Op op) { return (op >= Op::Add && op <= Op::Ge) || (op >= Op::Div && op <= Op::Shr); }
bool isCompare(Op op) { return op >= Op::Lt && op <= Op::Ge; }
bool isReduce(Op op) { return op >= Op::Sum && op <= Op::ArgMin; }
bool isShift(Op op) { return op == Op::Shl || op == Op::Shr; }
bool isFloatDt(Dt d) { return d == Dt::F32 || d == Dt::F16 || d == Dt::BF16; }
bool isIntDt(Dt d) { return d == Dt::I32 || d == Dt::I8 || d == Dt::I16 || d == Dt::I64; }
bool storableDt(Dt d) { return d == Dt::F32 || d == Dt::I32 || d == Dt::F16 || d == Dt::BF16; }
// Arithmetic (+ - * neg abs) is allowed on these; f16/bf16 only while exact.
bool arithDt(Dt d) { return d == Dt::F32 || d == Dt::I32 || d == Dt::F16 || d == Dt::BF16; }
// Integers up to this magnitude are exact results of arithmetic in `d`.
double exactLimit(Dt d) { return d == Dt::F16 ? 2048 : d == Dt::BF16 ? 256 : kBoundLimit; }
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

// The program as (nearly) DSL code, one line per node.
std::string listing(const Program &p) {
  std::ostringstream o;
  o << "seed " << p.seed << ": Device::emulator(\"" << p.arch << "\"), num_warps " << p.warps
    << ", ldx " << p.ldx << ", ldo " << p.ldo;
  if (p.features != 0) {
    char f[16];
    std::snprintf(f, sizeof f, "0x%x", p.features);
    o << ", features " << f << ", grid {" << p.gx << ", " << p.gy << "}";
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
    << ';';
  for (const InputSpec &in : p.inputs)
    o << int(in.dt) << dimsText(in.shape) << in.maskKind << ',' << in.m << ',' << in.n << ',' << in.other << ','
      << in.axis << ',' << in.wide << ';';
  for (const Node &n : p.nodes)
    o << int(n.op) << ',' << int(n.dt) << dimsText(n.shape) << n.a << ',' << n.b << ',' << n.c << ',' << n.lit
      << ',' << n.litLeft << ',' << n.axis << ',' << n.flag << ',' << n.input << ';';
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

// ---------------------------------------------------------------------------
// The generator

// The features a seed draws: a quarter of the seeds none (classic programs),
// the others each feature with probability 1/2.
unsigned featuresOf(uint64_t seed) {
  std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), 0xfea7u};
  std::mt19937 r(seq);
  if (r() % 4 == 0) return 0;
  unsigned f = 0;
  for (unsigned bit = 1; bit <= kAllFeatures; bit <<= 1)
    if (r() % 2) f |= bit;
  return f;
}

struct Gen {
  std::mt19937 rng;
  Program p;
  std::vector<int> uses;

  Gen(uint64_t seed, unsigned features) {
    std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), 0x7e55e1u};
    rng.seed(seq);
    p.seed = seed;
    p.features = features;
  }

  bool has(unsigned f) const { return p.has(f); }
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool chance(double q) { return std::uniform_real_distribution<double>(0, 1)(rng) < q; }
  template <class T> const T &pick(const std::vector<T> &v) { return v[uniform(0, int(v.size()) - 1)]; }

  // An extent for a dimension of size d: mostly inside (not a power of two
  // when it can be), sometimes exactly d or past it.
  int extent(int64_t d) {
    if (chance(0.15)) return int(d) + uniform(0, 5);
    if (d <= 2) return int(d) == 1 ? 1 : uniform(1, 2);
    int e;
    do e = uniform(1, int(d) - 1);
    while ((e & (e - 1)) == 0 && chance(0.8));
    return e;
  }

  int add(Node n) {
    if (n.a >= 0) ++uses[n.a];
    if (n.b >= 0) ++uses[n.b];
    if (n.c >= 0) ++uses[n.c];
    p.nodes.push_back(std::move(n));
    uses.push_back(0);
    return int(p.nodes.size()) - 1;
  }

  // An operand among nodes satisfying `ok`: mostly unused or recent ones.
  int choose(const std::function<bool(const Node &)> &ok) {
    std::vector<int> all, unused, recent;
    int n = int(p.nodes.size());
    for (int i = 0; i < n; ++i) {
      if (!ok(p.nodes[i])) continue;
      all.push_back(i);
      if (uses[i] == 0) unused.push_back(i);
      if (i >= n - 4) recent.push_back(i);
    }
    if (all.empty()) return -1;
    if (!unused.empty() && chance(0.5)) return pick(unused);
    if (!recent.empty() && chance(0.5)) return pick(recent);
    return pick(all);
  }

  double smallLit(Dt dt) {
    if (dt == Dt::Bool) return uniform(0, 1);
    return uniform(-4, 4);
  }

  // A result bound over the limit: i32 wraps (with intops), others are rejected.
  bool fits(Node &n) {
    if (n.dt == Dt::I32 && has(kIntOps)) {
      n.bound = std::min(n.bound, kWide);
      return true;
    }
    if (n.dt == Dt::I64) return n.bound < 1e15;
    return n.bound <= exactLimit(n.dt);
  }

  Program generate() {
    p.arch = chance(0.5) ? "gfx942" : "gfx1100";
    p.warps = 1u << uniform(0, 3);
    int er, ec;
    do {
      er = uniform(0, 7);
      ec = uniform(0, 7);
    } while (er + ec > 11);
    int64_t R = int64_t(1) << er, C = int64_t(1) << ec;
    int numInputs = uniform(2, 3);
    if (has(kGrid)) {
      p.gx = uniform(1, 3);
      p.gy = uniform(1, 3);
    }
    int64_t maxCols = 1;
    for (int k = 0; k < numInputs; ++k) {
      InputSpec in;
      in.dt = chance(0.75) ? Dt::F32 : Dt::I32;
      if (has(kHalf | kNarrow) && chance(0.4)) {
        std::vector<Dt> more;
        if (has(kHalf)) more.insert(more.end(), {Dt::F16, Dt::BF16});
        if (has(kNarrow)) more.insert(more.end(), {Dt::I8, Dt::I16, Dt::I64});
        in.dt = pick(more);
      }
      switch (uniform(0, 6)) {
      case 0: case 1: case 2: in.shape = {R, C}; break;
      case 3: case 4: in.shape = {C}; break;
      case 5: in.shape = {R}; break;
      default: in.shape = {C, R}; break;
      }
      if (has(kGrid) && in.shape.size() == 1) in.axis = uniform(0, 1);
      in.maskKind = in.shape.size() == 2 ? uniform(0, 3) : uniform(0, 1) * 2;
      in.m = in.shape.size() == 2 ? extent(globalRows(p, in.shape)) : 1;
      in.n = extent(globalColsIn(p, in));
      in.other = uniform(-3, 3);
      if (has(kIntOps) && in.dt == Dt::I32) in.wide = chance(0.3);
      maxCols = std::max(maxCols, globalColsIn(p, in));
      p.inputs.push_back(in);
      Node n{Op::Input, in.dt, in.shape};
      n.input = k;
      n.bound = in.wide ? kWide : 8;
      add(n);
    }
    switch (uniform(0, 3)) {
    case 0: p.ldx = int(maxCols); break;
    case 1: p.ldx = int((maxCols + 15) / 16 * 16); break;
    default: p.ldx = int(maxCols) + uniform(1, 7); break;
    }
    int ops = uniform(3, 14);
    for (int made = 0, tries = 0; made < ops && tries < 400; ++tries)
      made += step(R, C);
    // Outputs: the last node and sometimes another; bools and the narrow and
    // wide integers are stored as i32.
    auto storable = [&](int i) {
      if (storableDt(p.nodes[i].dt)) return i;
      Node n{Op::Cast, Dt::I32, p.nodes[i].shape, i};
      n.bound = castBound(Dt::I32, p.nodes[i].bound);
      return add(n);
    };
    std::vector<int> outs{storable(int(p.nodes.size()) - 1)};
    if (chance(0.5)) outs.push_back(storable(uniform(0, int(p.nodes.size()) - 2)));
    int64_t maxOutCols = 1;
    for (int o : outs) {
      const Node &n = p.nodes[o];
      OutputSpec out{o, 0, 1, 1};
      if (!n.shape.empty()) {
        out.maskKind = n.shape.size() == 2 ? uniform(0, 3) : uniform(0, 1) * 2;
        out.m = n.shape.size() == 2 ? extent(globalRows(p, n.shape)) : 1;
        out.n = extent(globalColsOut(p, n.shape, 0));
        maxOutCols = std::max(maxOutCols, globalColsOut(p, n.shape, 0));
      } else if (has(kScalar)) {
        out.so = uniform(0, 3);
        out.maskKind = uniform(0, 1);
        out.n = extent(globalColsOut(p, n.shape, out.so));
      }
      p.outputs.push_back(out);
    }
    p.ldo = chance(0.3) ? int((maxOutCols + 15) / 16 * 16) : int(maxOutCols) + uniform(0, 5);
    return p;
  }

  // Adds one random node; false when the drawn op did not fit.
  bool step(int64_t R, int64_t C) {
    std::vector<std::pair<Op, int>> weights = {
        {Op::Add, 10}, {Op::Sub, 6}, {Op::Mul, 6}, {Op::Min, 4}, {Op::Max, 4}, {Op::And, 2}, {Op::Or, 2},
        {Op::Xor, 2}, {Op::Lt, 2}, {Op::Le, 1}, {Op::Eq, 1}, {Op::Ne, 1}, {Op::Gt, 2}, {Op::Ge, 1},
        {Op::Neg, 2}, {Op::Abs, 2}, {Op::Cast, 5}, {Op::Where, 7}, {Op::Iota, 2}, {Op::Full, 2},
        {Op::ExpandDims, 7}, {Op::BroadcastTo, 3}, {Op::Trans, 5}, {Op::Reshape, 3}, {Op::Sum, 7},
        {Op::RMax, 3}, {Op::RMin, 2}, {Op::ArgMax, 2}, {Op::ArgMin, 2}, {Op::Cumsum, 6}, {Op::Join, 2},
        {Op::Split, 2}};
    if (has(kIntOps)) weights.insert(weights.end(), {{Op::Div, 6}, {Op::Mod, 6}, {Op::Shl, 3}, {Op::Shr, 3}});
    if (has(kMath))
      weights.insert(weights.end(), {{Op::Exp, 3}, {Op::Log, 3}, {Op::Sqrt, 3}, {Op::Sin, 3}, {Op::Fma, 5}});
    if (has(kGrid)) weights.insert(weights.end(), {{Op::ProgramId, 3}, {Op::NumPrograms, 1}});
    if (has(kScalar)) weights.insert(weights.end(), {{Op::ScalarLoad, 5}});
    int total = 0;
    for (auto &[op, w] : weights) total += w;
    int r = uniform(0, total - 1);
    Op op = Op::Add;
    for (auto &[o, w] : weights) {
      if (r < w) { op = o; break; }
      r -= w;
    }
    auto numeric = [](const Node &n) { return arithDt(n.dt); };
    auto exactF32 = [](const Node &n) { return n.dt == Dt::F32 && n.err == 0; };

    if (isBinary(op)) {
      bool bitwise = op == Op::And || op == Op::Or || op == Op::Xor;
      bool intOnly = op == Op::Div || op == Op::Mod || isShift(op);
      bool arith = op == Op::Add || op == Op::Sub || op == Op::Mul;
      // Compares need exact operands; f16/bf16 arithmetic too (it is exact).
      auto operandOk = [&](const Node &n) {
        if (bitwise) return n.dt == Dt::I32 || n.dt == Dt::Bool;
        if (intOnly) return n.dt == Dt::I32;
        if (n.dt == Dt::Bool) return false;
        if (isCompare(op)) return n.err == 0;
        if (arith) return arithDt(n.dt) && (n.dt == Dt::F32 || n.err == 0);
        return true; // min, max
      };
      int a = choose(operandOk);
      if (a < 0) return false;
      Node n{op, isCompare(op) ? Dt::Bool : p.nodes[a].dt};
      const Node &A = p.nodes[a];
      n.a = a;
      int b = -1;
      if (!chance(0.2))
        b = choose([&](const Node &m) {
          auto s = broadcastDims(A.shape, m.shape);
          return m.dt == A.dt && operandOk(m) && s && numel(*s) <= kMaxElems;
        });
      double bb, eb = 0;
      if (b < 0) {
        n.lit = smallLit(A.dt);
        n.litLeft = chance(0.4);
        n.shape = A.shape;
        if ((op == Op::Div || op == Op::Mod) && chance(0.3)) n.litLeft = true, n.lit = INT32_MIN;
        if (isShift(op) && !n.litLeft) n.lit = uniform(0, 31);
        bb = std::fabs(n.lit);
      } else {
        n.b = b;
        n.shape = *broadcastDims(A.shape, p.nodes[b].shape);
        bb = p.nodes[b].bound;
        eb = p.nodes[b].err;
      }
      double ba = A.bound, ea = A.err;
      // The dividend / shifted value's bound.
      double bx = n.b < 0 && n.litLeft ? bb : ba;
      switch (op) {
      case Op::Add: case Op::Sub: n.bound = ba + bb; n.err = ea + eb; break;
      case Op::Mul: n.bound = ba * bb; n.err = ea * bb + eb * ba + ea * eb; break;
      case Op::Min: case Op::Max: n.bound = std::max(ba, bb); n.err = std::max(ea, eb); break;
      case Op::And: case Op::Or: case Op::Xor: n.bound = A.dt == Dt::Bool ? 1 : 2 * std::max(ba, bb) + 1; break;
      case Op::Div: case Op::Mod: n.bound = std::max(bx, 1.0); break;
      case Op::Shl: n.bound = n.b < 0 && !n.litLeft ? ba * std::ldexp(1.0, int(n.lit)) : bx * kWide; break;
      case Op::Shr: n.bound = bx; break;
      default: n.bound = 1; break;
      }
      if (n.err > 0) {
        n.err = withRounding(n.err, n.bound);
        n.bound += n.err;
      }
      if (!fits(n)) return false;
      add(n);
      return true;
    }
    switch (op) {
    case Op::Neg: case Op::Abs: {
      int a = choose([&](const Node &n) {
        return numeric(n) && (n.dt == Dt::F32 || n.err == 0) && (op == Op::Neg || n.bound <= kBoundLimit);
      });
      if (a < 0) return false;
      Node n{op, p.nodes[a].dt, p.nodes[a].shape, a};
      n.bound = p.nodes[a].bound;
      n.err = p.nodes[a].err;
      add(n);
      return true;
    }
    case Op::Cast: {
      int a = choose([&](const Node &n) { return n.err == 0 || isFloatDt(n.dt); });
      if (a < 0) return false;
      const Node &A = p.nodes[a];
      std::vector<Dt> to;
      std::vector<Dt> all{Dt::F32, Dt::I32, Dt::Bool};
      if (has(kHalf)) all.insert(all.end(), {Dt::F16, Dt::BF16});
      if (has(kNarrow)) all.insert(all.end(), {Dt::I8, Dt::I16, Dt::I64});
      for (Dt d : all)
        if (castOk(A.dt, A.bound, A.err, d)) to.push_back(d);
      if (to.empty()) return false;
      Node n{op, pick(to), A.shape, a};
      n.bound = castBound(n.dt, A.bound);
      n.err = A.err > 0 ? A.err + narrowRounding(n.dt, A.bound) : 0;
      add(n);
      return true;
    }
    case Op::Where: {
      // With scalars, the condition is often a scalar.
      bool scalarCond = has(kScalar) && chance(0.4);
      int c = choose([&](const Node &n) { return n.dt == Dt::Bool && (!scalarCond || n.shape.empty()); });
      if (c < 0 && scalarCond) c = choose([](const Node &n) { return n.dt == Dt::Bool; });
      if (c < 0) return false;
      const Node &Cn = p.nodes[c];
      int x = choose([&](const Node &m) {
        auto s = broadcastDims(Cn.shape, m.shape);
        return m.dt != Dt::Bool && s && numel(*s) <= kMaxElems;
      });
      if (x < 0) return false;
      Dims s = *broadcastDims(Cn.shape, p.nodes[x].shape);
      int y = -1;
      if (!chance(0.25))
        y = choose([&](const Node &m) {
          auto t = broadcastDims(s, m.shape);
          return m.dt == p.nodes[x].dt && t && numel(*t) <= kMaxElems;
        });
      Node n{op, p.nodes[x].dt};
      n.a = c;
      double by, ey = 0;
      if (y < 0) {
        n.lit = smallLit(n.dt);
        by = std::fabs(n.lit);
        n.shape = s;
        if (chance(0.5)) n.b = x, n.c = -1;
        else n.b = -1, n.c = x;
      } else {
        n.b = x;
        n.c = y;
        n.shape = *broadcastDims(s, p.nodes[y].shape);
        by = p.nodes[y].bound;
        ey = p.nodes[y].err;
      }
      n.bound = std::max(p.nodes[x].bound, by);
      n.err = std::max(p.nodes[x].err, ey);
      add(n);
      return true;
    }
    case Op::Iota: {
      Node n{op, Dt::I32, {chance(0.5) ? R : C}};
      n.bound = double(n.shape[0]);
      add(n);
      return true;
    }
    case Op::Full: {
      Dims s;
      switch (uniform(0, 3)) {
      case 0: s = {R, C}; break;
      case 1: s = {C}; break;
      case 2: s = {}; break;
      default: s = p.nodes[uniform(0, int(p.nodes.size()) - 1)].shape; break;
      }
      Node n{op, chance(0.6) ? Dt::F32 : Dt::I32, s};
      n.lit = smallLit(n.dt);
      n.bound = std::fabs(n.lit);
      if (has(kIntOps) && n.dt == Dt::I32 && chance(0.15)) n.lit = INT32_MIN, n.bound = kWide;
      if (has(kHalf) && n.dt == Dt::F32 && chance(0.3)) n.dt = chance(0.5) ? Dt::F16 : Dt::BF16;
      add(n);
      return true;
    }
    case Op::ExpandDims: {
      int a = choose([](const Node &n) { return n.shape.size() < 2; });
      if (a < 0) return false;
      Node n{op, p.nodes[a].dt, p.nodes[a].shape, a};
      n.axis = p.nodes[a].shape.empty() ? 0 : uniform(0, 1);
      if (chance(0.2)) n.axis -= int(n.shape.size()) + 1; // negative axis
      int at = n.axis < 0 ? n.axis + int(n.shape.size()) + 1 : n.axis;
      n.shape.insert(n.shape.begin() + at, 1);
      n.bound = p.nodes[a].bound;
      n.err = p.nodes[a].err;
      add(n);
      return true;
    }
    case Op::BroadcastTo: {
      int a = choose([](const Node &n) {
        return n.shape.size() < 2 || n.shape[0] == 1 || n.shape[1] == 1;
      });
      if (a < 0) return false;
      Dims s = p.nodes[a].shape;
      if (s.size() < 2 && chance(0.7)) s.insert(s.begin(), 1);
      for (int64_t &d : s)
        if (d == 1) d = int64_t(1) << uniform(0, 7);
      if (numel(s) > kMaxElems || !broadcastsTo(p.nodes[a].shape, s)) return false;
      Node n{op, p.nodes[a].dt, s, a};
      n.bound = p.nodes[a].bound;
      n.err = p.nodes[a].err;
      add(n);
      return true;
    }
    case Op::Trans: {
      int a = choose([](const Node &n) { return n.shape.size() == 2; });
      if (a < 0) return false;
      Node n{op, p.nodes[a].dt, {p.nodes[a].shape[1], p.nodes[a].shape[0]}, a};
      n.bound = p.nodes[a].bound;
      n.err = p.nodes[a].err;
      add(n);
      return true;
    }
    case Op::Reshape: {
      int a = choose([](const Node &n) { return !n.shape.empty(); });
      if (a < 0) return false;
      int64_t total = numel(p.nodes[a].shape);
      int lg = 0;
      while ((int64_t(1) << lg) < total) ++lg;
      Dims s;
      if (chance(0.3)) s = {total};
      else {
        int r0 = uniform(0, lg);
        s = {int64_t(1) << r0, int64_t(1) << (lg - r0)};
      }
      Node n{op, p.nodes[a].dt, s, a};
      n.bound = p.nodes[a].bound;
      n.err = p.nodes[a].err;
      add(n);
      return true;
    }
    case Op::Join: {
      int a = choose([](const Node &n) { return n.shape.size() < 2; });
      if (a < 0) return false;
      const Node &A = p.nodes[a];
      int b = choose([&](const Node &m) { return m.dt == A.dt && m.shape == A.shape; });
      Node n{op, A.dt, A.shape, a, b};
      n.shape.push_back(2);
      n.bound = std::max(A.bound, p.nodes[b].bound);
      n.err = std::max(A.err, p.nodes[b].err);
      add(n);
      return true;
    }
    case Op::Split: {
      int a = choose([](const Node &n) { return !n.shape.empty() && n.shape.back() == 2; });
      if (a < 0) return false;
      Node n{op, p.nodes[a].dt, p.nodes[a].shape, a};
      n.shape.pop_back();
      n.flag = chance(0.5);
      n.bound = p.nodes[a].bound;
      n.err = p.nodes[a].err;
      add(n);
      return true;
    }
    case Op::Sum: case Op::RMax: case Op::RMin: case Op::ArgMax: case Op::ArgMin: case Op::Cumsum: {
      bool boolOk = op == Op::Sum || op == Op::Cumsum;
      bool exactOnly = op == Op::ArgMax || op == Op::ArgMin;
      int a = choose([&](const Node &n) {
        return !n.shape.empty() && (boolOk || n.dt != Dt::Bool) && (!exactOnly || n.err == 0);
      });
      if (a < 0) return false;
      const Node &A = p.nodes[a];
      Node n{op, boolOk ? sumDt(A.dt) : A.dt, A.shape, a};
      int rank = int(A.shape.size());
      n.axis = uniform(0, rank - 1);
      int64_t len = A.shape[n.axis];
      if (chance(0.2)) n.axis -= rank; // negative axis
      n.flag = op == Op::Cumsum ? chance(0.4) : chance(0.7);
      int at = n.axis < 0 ? n.axis + rank : n.axis;
      if (op == Op::ArgMax || op == Op::ArgMin) n.dt = Dt::I32;
      if (op != Op::Cumsum) {
        if (n.flag) n.shape[at] = 1;
        else n.shape.erase(n.shape.begin() + at);
      }
      switch (op) {
      case Op::Sum: case Op::Cumsum:
        n.bound = A.bound * double(len);
        n.err = A.err > 0 ? double(len) * (A.err + n.bound * kF32Round) : 0;
        n.bound += n.err;
        break;
      case Op::ArgMax: case Op::ArgMin: n.bound = double(len); break;
      default: n.bound = A.bound; n.err = A.err; break;
      }
      if (!fits(n)) return false;
      add(n);
      return true;
    }
    case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Sin: {
      int a = choose([&](const Node &n) { return exactF32(n) && (op != Op::Exp || n.bound <= 12); });
      if (a < 0) return false;
      Node n{op, Dt::F32, p.nodes[a].shape, a};
      double x = p.nodes[a].bound;
      double mag = op == Op::Exp ? std::exp(x) : op == Op::Log ? std::log(x + 1) : op == Op::Sqrt ? std::sqrt(x) : 1;
      n.err = kMathRel * std::max(mag, 1e-30);
      n.bound = mag + n.err;
      add(n);
      return true;
    }
    case Op::Fma: {
      auto f32 = [](const Node &n) { return n.dt == Dt::F32; };
      int a = choose(f32);
      if (a < 0) return false;
      const Node &A = p.nodes[a];
      int b = choose([&](const Node &m) {
        auto s = broadcastDims(A.shape, m.shape);
        return m.dt == Dt::F32 && s && numel(*s) <= kMaxElems;
      });
      Dims s = *broadcastDims(A.shape, p.nodes[b].shape);
      int c = chance(0.3) ? -1 : choose([&](const Node &m) {
        auto t = broadcastDims(s, m.shape);
        return m.dt == Dt::F32 && t && numel(*t) <= kMaxElems;
      });
      Node n{op, Dt::F32, s, a, b, c};
      const Node &B = p.nodes[b];
      double bc = 0, ec = 0;
      if (c < 0) {
        n.lit = smallLit(Dt::F32);
        bc = std::fabs(n.lit);
      } else {
        n.shape = *broadcastDims(s, p.nodes[c].shape);
        bc = p.nodes[c].bound;
        ec = p.nodes[c].err;
      }
      n.bound = A.bound * B.bound + bc;
      n.err = withRounding(A.err * B.bound + B.err * A.bound + A.err * B.err + ec, n.bound);
      n.bound += n.err;
      if (n.bound > kBoundLimit) return false;
      add(n);
      return true;
    }
    case Op::ProgramId: case Op::NumPrograms: {
      Node n{op, Dt::I32, {}};
      n.axis = uniform(0, 1);
      n.bound = 4;
      add(n);
      return true;
    }
    case Op::ScalarLoad: {
      Node n{op, Dt::F32, {}};
      n.input = uniform(0, int(p.inputs.size()) - 1);
      const InputSpec &in = p.inputs[n.input];
      n.dt = in.dt;
      n.flag = has(kGrid) && chance(0.6);
      int64_t last = int64_t(inputSize(p, in)) - 1 - (n.flag ? p.gx - 1 : 0);
      if (last < 0) n.flag = false, last = int64_t(inputSize(p, in)) - 1;
      n.lit = uniform(0, int(last));
      n.litLeft = chance(0.3);
      n.bound = in.wide ? kWide : 8;
      add(n);
      return true;
    }
    default: return false;
    }
  }
};

Program generate(uint64_t seed, unsigned features) { return Gen(seed, features).generate(); }

// ---------------------------------------------------------------------------
// The host reference: doubles (exact for these values), bools as 0 / 1,
// integers wrapped to their width like the GPU's; inexact (err > 0) nodes
// hold the double-precision value.

struct HostTile {
  Dims shape;
  std::vector<double> v;
};

// Element of `t` that broadcasts to index (i, j) of a result of rank `rank`.
double at(const HostTile &t, size_t rank, int64_t i, int64_t j) {
  if (t.shape.empty()) return t.v[0];
  if (t.shape.size() == 1) {
    int64_t k = rank == 2 ? j : i;
    return t.v[t.shape[0] == 1 ? 0 : k];
  }
  return t.v[(t.shape[0] == 1 ? 0 : i) * t.shape[1] + (t.shape[1] == 1 ? 0 : j)];
}

// Calls f(i, j, flat) over a shape (rank 0: one element; rank 1: i varies).
template <class F> void forEach(const Dims &s, F &&f) {
  if (s.empty()) return f(0, 0, 0);
  if (s.size() == 1) {
    for (int64_t i = 0; i < s[0]; ++i) f(i, 0, i);
    return;
  }
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j) f(i, j, i * s[1] + j);
}

struct HostData {
  std::vector<std::vector<float>> xf;   // per input (rows x ldx)
  std::vector<std::vector<int32_t>> xi; // the same values, and for wide inputs the extremes
};

HostData makeInputs(const Program &p) {
  std::seed_seq seq{uint32_t(p.seed), uint32_t(p.seed >> 32), 0xda7au};
  std::mt19937 rng(seq);
  std::uniform_int_distribution<int> val(-8, 8);
  HostData d;
  for (const InputSpec &in : p.inputs) {
    size_t size = inputSize(p, in);
    std::vector<float> f(size);
    std::vector<int32_t> i(size);
    for (size_t k = 0; k < size; ++k) f[k] = float(i[k] = val(rng));
    if (in.wide)
      for (int32_t &x : i) {
        switch (rng() % 8) {
        case 0: x = INT32_MIN; break;
        case 1: x = INT32_MAX; break;
        case 2: x = -1; break;
        case 3: x = 0; break;
        default: break;
        }
      }
    d.xf.push_back(std::move(f));
    d.xi.push_back(std::move(i));
  }
  return d;
}

double wrapTo(Dt dt, double x) {
  switch (dt) {
  case Dt::I32: return double(int32_t(uint32_t(uint64_t(int64_t(x)))));
  case Dt::I8: return double(int8_t(uint8_t(uint64_t(int64_t(x)))));
  case Dt::I16: return double(int16_t(uint16_t(uint64_t(int64_t(x)))));
  default: return x;
  }
}

// An exact int64 wrapped to i32.
double w32(int64_t x) { return double(int32_t(uint32_t(uint64_t(x)))); }

// cast<to>(x) for x of type `from`.
double castHost(Dt from, Dt to, double x) {
  switch (to) {
  case Dt::Bool: return double(x != 0);
  case Dt::F32: return double(float(x));
  case Dt::F16: return double(float(half(float(x))));
  case Dt::BF16: return double(float(bfloat16(float(x))));
  case Dt::I64: return std::trunc(x);
  default: return isFloatDt(from) ? std::trunc(x) : wrapTo(to, x);
  }
}

double inputValue(const Program &p, const HostData &d, int k, size_t off) {
  return isFloatDt(p.inputs[k].dt) ? double(d.xf[k][off]) : double(d.xi[k][off]);
}

// The values of every node in program instance (p0, p1).
std::vector<HostTile> evaluate(const Program &p, const HostData &d, int p0 = 0, int p1 = 0) {
  std::vector<HostTile> t(p.nodes.size());
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const Node &n = p.nodes[k];
    HostTile &r = t[k];
    r.shape = n.shape;
    r.v.assign(size_t(numel(n.shape)), 0);
    size_t rank = n.shape.size();
    switch (n.op) {
    case Op::Input: {
      const InputSpec &in = p.inputs[n.input];
      bool two = in.shape.size() == 2;
      int64_t row0 = two ? int64_t(p0) * in.shape[0] : 0;
      int64_t col0 = two ? int64_t(p1) * in.shape[1] : int64_t(in.axis == 0 ? p0 : p1) * in.shape[0];
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) {
        int64_t row = row0 + (two ? i : 0), col = col0 + (two ? j : i);
        bool ok = true;
        if (two && (in.maskKind == 1 || in.maskKind == 3)) ok &= row < in.m;
        if (in.maskKind == 1 || in.maskKind == 2) ok &= col < in.n;
        size_t off = size_t(row) * p.ldx + size_t(col);
        r.v[f] = ok ? inputValue(p, d, n.input, off) : double(in.other);
      });
      break;
    }
    case Op::ScalarLoad: {
      const InputSpec &in = p.inputs[n.input];
      int64_t off = int64_t(n.lit) + (n.flag ? p0 : 0);
      r.v[0] = n.litLeft && !(off < in.n) ? double(in.other) : inputValue(p, d, n.input, size_t(off));
      break;
    }
    case Op::ProgramId: r.v[0] = n.axis == 0 ? p0 : p1; break;
    case Op::NumPrograms: r.v[0] = n.axis == 0 ? p.gx : p.gy; break;
    case Op::Iota: forEach(n.shape, [&](int64_t i, int64_t, int64_t f) { r.v[f] = double(i); }); break;
    case Op::Full: std::fill(r.v.begin(), r.v.end(), n.lit); break;
    case Op::Neg: case Op::Abs: case Op::Cast:
      for (size_t f = 0; f < r.v.size(); ++f) {
        double x = t[n.a].v[f];
        r.v[f] = n.op == Op::Neg ? wrapTo(n.dt, -x) : n.op == Op::Abs ? std::fabs(x)
               : castHost(p.nodes[n.a].dt, n.dt, x);
      }
      break;
    case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Sin:
      for (size_t f = 0; f < r.v.size(); ++f) {
        double x = t[n.a].v[f];
        r.v[f] = n.op == Op::Exp ? std::exp(x) : n.op == Op::Log ? std::log(std::fabs(x) + 1)
               : n.op == Op::Sqrt ? std::sqrt(std::fabs(x)) : std::sin(x);
      }
      break;
    case Op::Fma:
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) {
        double z = n.c < 0 ? n.lit : at(t[n.c], rank, i, j);
        r.v[f] = at(t[n.a], rank, i, j) * at(t[n.b], rank, i, j) + z;
      });
      break;
    case Op::Where:
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) {
        double x = n.b < 0 ? n.lit : at(t[n.b], rank, i, j);
        double y = n.c < 0 ? n.lit : at(t[n.c], rank, i, j);
        r.v[f] = at(t[n.a], rank, i, j) != 0 ? x : y;
      });
      break;
    case Op::ExpandDims: case Op::Reshape: r.v = t[n.a].v; break;
    case Op::Join:
      for (size_t f = 0; f < r.v.size(); ++f) r.v[f] = t[f % 2 ? n.b : n.a].v[f / 2];
      break;
    case Op::Split:
      for (size_t f = 0; f < r.v.size(); ++f) r.v[f] = t[n.a].v[2 * f + n.flag];
      break;
    case Op::BroadcastTo:
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) { r.v[f] = at(t[n.a], rank, i, j); });
      break;
    case Op::Trans:
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) { r.v[f] = t[n.a].v[j * n.shape[0] + i]; });
      break;
    case Op::Sum: case Op::RMax: case Op::RMin: case Op::ArgMax: case Op::ArgMin: case Op::Cumsum: {
      const HostTile &A = t[n.a];
      int arank = int(A.shape.size());
      int axis = n.axis < 0 ? n.axis + arank : n.axis;
      int64_t len = A.shape[axis];
      // Lines along `axis`: start index and stride in A's row-major data.
      int64_t stride = arank == 2 && axis == 0 ? A.shape[1] : 1;
      int64_t lines = numel(A.shape) / len;
      for (int64_t line = 0; line < lines; ++line) {
        int64_t start = arank == 2 && axis == 0 ? line : line * len;
        if (n.op == Op::Cumsum) {
          double acc = 0;
          for (int64_t s = 0; s < len; ++s) {
            int64_t e = n.flag ? len - 1 - s : s;
            acc += A.v[start + e * stride];
            r.v[start + e * stride] = wrapTo(n.dt, acc);
          }
          continue;
        }
        double best = A.v[start];
        int64_t bestAt = 0;
        double acc = 0;
        for (int64_t e = 0; e < len; ++e) {
          double x = A.v[start + e * stride];
          acc += x;
          bool better = (n.op == Op::RMax || n.op == Op::ArgMax) ? x > best : x < best;
          if (better) best = x, bestAt = e;
        }
        // Reduced tiles are laid out in line order either way.
        r.v[line] = n.op == Op::Sum ? wrapTo(n.dt, acc)
                  : (n.op == Op::ArgMax || n.op == Op::ArgMin) ? double(bestAt) : best;
      }
      break;
    }
    default: { // binary
      const HostTile &A = t[n.a];
      Dt ot = p.nodes[n.a].dt;
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) {
        double x = at(A, rank, i, j);
        double y = n.b < 0 ? n.lit : at(t[n.b], rank, i, j);
        if (n.b < 0 && n.litLeft) std::swap(x, y);
        auto xi = int32_t(x), yi = int32_t(y);
        int64_t xl = int64_t(x), yl = int64_t(y);
        double v = 0;
        switch (n.op) {
        case Op::Add: v = ot == Dt::I32 ? w32(xl + yl) : x + y; break;
        case Op::Sub: v = ot == Dt::I32 ? w32(xl - yl) : x - y; break;
        case Op::Mul: v = ot == Dt::I32 ? w32(xl * yl) : x * y; break;
        case Op::Min: v = std::min(x, y); break;
        case Op::Max: v = std::max(x, y); break;
        case Op::And: v = double(xi & yi); break;
        case Op::Or: v = double(xi | yi); break;
        case Op::Xor: v = double(xi ^ yi); break;
        case Op::Lt: v = x < y; break;
        case Op::Le: v = x <= y; break;
        case Op::Eq: v = x == y; break;
        case Op::Ne: v = x != y; break;
        case Op::Gt: v = x > y; break;
        case Op::Ge: v = x >= y; break;
        // The compiler's definitions: x / 0 = -1, x % 0 = x, MIN / -1 = MIN, MIN % -1 = 0.
        case Op::Div: v = yi == 0 ? -1 : (xi == INT32_MIN && yi == -1) ? double(INT32_MIN) : double(xi / yi); break;
        case Op::Mod: v = yi == 0 ? xi : yi == -1 ? 0 : double(xi % yi); break;
        case Op::Shl: v = w32(xl * (int64_t(1) << (yi & 31))); break;
        case Op::Shr: v = double(xi >> (yi & 31)); break;
        default: break;
        }
        r.v[f] = isCompare(n.op) ? v : wrapTo(n.dt, v);
      });
    }
    }
  }
  return t;
}

// ---------------------------------------------------------------------------
// The kernel: interprets the program registered under `id` at trace time.

std::map<uint64_t, Program> &registry() {
  static std::map<uint64_t, Program> programs;
  return programs;
}

struct V {
  Dt dt = Dt::F32;
  f32 f;
  i32 i;
  i1 b;
  f16 h;
  bf16 bh;
  i8 c;
  i16 s;
  i64 l;
};
V wrap(const f32 &t) { V v; v.dt = Dt::F32; v.f = t; return v; }
V wrap(const i32 &t) { V v; v.dt = Dt::I32; v.i = t; return v; }
V wrap(const i1 &t) { V v; v.dt = Dt::Bool; v.b = t; return v; }
V wrap(const f16 &t) { V v; v.dt = Dt::F16; v.h = t; return v; }
V wrap(const bf16 &t) { V v; v.dt = Dt::BF16; v.bh = t; return v; }
V wrap(const i8 &t) { V v; v.dt = Dt::I8; v.c = t; return v; }
V wrap(const i16 &t) { V v; v.dt = Dt::I16; v.s = t; return v; }
V wrap(const i64 &t) { V v; v.dt = Dt::I64; v.l = t; return v; }
V wrap(const V &v) { return v; }
template <class E> Tile<E> get(const V &v) {
  if constexpr (std::is_same_v<E, float>) return v.f;
  else if constexpr (std::is_same_v<E, int32_t>) return v.i;
  else if constexpr (std::is_same_v<E, half>) return v.h;
  else if constexpr (std::is_same_v<E, bfloat16>) return v.bh;
  else if constexpr (std::is_same_v<E, int8_t>) return v.c;
  else if constexpr (std::is_same_v<E, int16_t>) return v.s;
  else if constexpr (std::is_same_v<E, int64_t>) return v.l;
  else return v.b;
}

[[noreturn]] void generatorBug(const char *what) { throw std::logic_error(std::string("random program: ") + what); }

template <class F> V dispatch(Dt dt, F &&f) {
  switch (dt) {
  case Dt::F32: return wrap(f(std::type_identity<float>{}));
  case Dt::I32: return wrap(f(std::type_identity<int32_t>{}));
  case Dt::F16: return wrap(f(std::type_identity<half>{}));
  case Dt::BF16: return wrap(f(std::type_identity<bfloat16>{}));
  case Dt::I8: return wrap(f(std::type_identity<int8_t>{}));
  case Dt::I16: return wrap(f(std::type_identity<int16_t>{}));
  case Dt::I64: return wrap(f(std::type_identity<int64_t>{}));
  default: return wrap(f(std::type_identity<bool>{}));
  }
}

// A C++ literal standing for `v` next to a tile of element type E.
template <class E> auto literal(double v) {
  if constexpr (std::is_same_v<E, bool>) return v != 0;
  else if constexpr (detail::is_float_elem<E>) return float(v);
  else if constexpr (std::is_same_v<E, int64_t>) return int64_t(v);
  else return int(v);
}

template <class E> constexpr bool kIsFloat = detail::is_float_elem<E>;

template <class E, class X, class Y> Tile<E> arith(Op op, const X &x, const Y &y) {
  if constexpr (std::is_same_v<E, bool>) {
    switch (op) {
    case Op::And: return x & y;
    case Op::Or: return x | y;
    case Op::Xor: return x ^ y;
    default: generatorBug("arithmetic on bool");
    }
  } else {
    switch (op) {
    case Op::Add: return x + y;
    case Op::Sub: return x - y;
    case Op::Mul: return x * y;
    case Op::Min: return minimum(x, y);
    case Op::Max: return maximum(x, y);
    default: break;
    }
    if constexpr (std::is_same_v<E, int32_t>) {
      switch (op) {
      case Op::And: return x & y;
      case Op::Or: return x | y;
      case Op::Xor: return x ^ y;
      case Op::Div: return x / y;
      case Op::Mod: return x % y;
      // A tile amount is masked to 0..31 (a literal one is drawn in range).
      case Op::Shl:
        if constexpr (detail::is_tile_v<Y>) return x << (y & 31);
        else return x << y;
      case Op::Shr:
        if constexpr (detail::is_tile_v<Y>) return x >> (y & 31);
        else return x >> y;
      default: break;
      }
    }
    generatorBug("bad arithmetic op");
  }
}

template <class X, class Y> i1 compare(Op op, const X &x, const Y &y) {
  switch (op) {
  case Op::Lt: return x < y;
  case Op::Le: return x <= y;
  case Op::Eq: return x == y;
  case Op::Ne: return x != y;
  case Op::Gt: return x > y;
  case Op::Ge: return x >= y;
  default: generatorBug("bad compare op");
  }
}

template <class E> V castTo(Dt to, const Tile<E> &x) {
  switch (to) {
  case Dt::F32: return wrap(cast<float>(x));
  case Dt::I32: return wrap(cast<int32_t>(x));
  case Dt::F16: return wrap(cast<half>(x));
  case Dt::BF16: return wrap(cast<bfloat16>(x));
  case Dt::I8: return wrap(cast<int8_t>(x));
  case Dt::I16: return wrap(cast<int16_t>(x));
  case Dt::I64: return wrap(cast<int64_t>(x));
  default: return wrap(cast<bool>(x));
  }
}

struct InPtrs {
  Ptr<f32> f;
  Ptr<i32> i;
  Ptr<f16> h;
  Ptr<bf16> b;
  Ptr<i8> c;
  Ptr<i16> s;
  Ptr<i64> l;
};

// Calls f(pointer) with the pointer of type `dt`.
template <class F> V withPtr(const InPtrs &x, Dt dt, F &&f) {
  switch (dt) {
  case Dt::F32: return wrap(f(x.f));
  case Dt::I32: return wrap(f(x.i));
  case Dt::F16: return wrap(f(x.h));
  case Dt::BF16: return wrap(f(x.b));
  case Dt::I8: return wrap(f(x.c));
  case Dt::I16: return wrap(f(x.s));
  case Dt::I64: return wrap(f(x.l));
  default: generatorBug("no bool inputs");
  }
}

void random_program(Ptr<f32> xf0, Ptr<f32> xf1, Ptr<f32> xf2, Ptr<i32> xi0, Ptr<i32> xi1, Ptr<i32> xi2,
                    Ptr<f16> xh0, Ptr<f16> xh1, Ptr<f16> xh2, Ptr<bf16> xb0, Ptr<bf16> xb1, Ptr<bf16> xb2,
                    Ptr<i8> xc0, Ptr<i8> xc1, Ptr<i8> xc2, Ptr<i16> xs0, Ptr<i16> xs1, Ptr<i16> xs2,
                    Ptr<i64> xl0, Ptr<i64> xl1, Ptr<i64> xl2, Ptr<f32> of0, Ptr<i32> oi0, Ptr<f16> oh0,
                    Ptr<bf16> ob0, Ptr<f32> of1, Ptr<i32> oi1, Ptr<f16> oh1, Ptr<bf16> ob1, i32 m0, i32 n0, i32 m1,
                    i32 n1, i32 m2, i32 n2, i32 mo0, i32 no0, i32 mo1, i32 no1, i32 ldx, i32 ldo,
                    Const<uint64_t> id) {
  const Program &p = registry().at(id);
  InPtrs x[3] = {{xf0, xi0, xh0, xb0, xc0, xs0, xl0},
                 {xf1, xi1, xh1, xb1, xc1, xs1, xl1},
                 {xf2, xi2, xh2, xb2, xc2, xs2, xl2}};
  i32 ms[3] = {m0, m1, m2}, ns[3] = {n0, n1, n2};
  Ptr<f32> of[2] = {of0, of1};
  Ptr<i32> oi[2] = {oi0, oi1};
  Ptr<f16> oh[2] = {oh0, oh1};
  Ptr<bf16> ob[2] = {ob0, ob1};
  i32 mo[2] = {mo0, mo1}, no[2] = {no0, no1};

  // Global row and column indices of this program's [R, C] or [L] tile:
  // rows start at program_id(0) * R, columns at program_id(1) * C; a 1-D
  // tile at `base1d`. Without a grid, the tile starts at 0.
  auto rowIdx = [&](int64_t rows) {
    if (!p.grid()) return arange(0, int(rows));
    return program_id(0) * int(rows) + arange(0, int(rows));
  };
  auto colIdx = [&](int64_t cols) {
    if (!p.grid()) return arange(0, int(cols));
    return program_id(1) * int(cols) + arange(0, int(cols));
  };
  auto linearPid = [&]() { return program_id(0) * num_programs(1) + program_id(1); };
  // Offsets and mask of a [R, C] tile (row stride ld) or a [L] tile whose
  // global indices are `idx1d`.
  auto offsets2 = [&](const Dims &s, const i32 &ld) {
    return expand_dims(rowIdx(s[0]), 1) * ld + expand_dims(colIdx(s[1]), 0);
  };
  auto mask2 = [&](const Dims &s, int kind, const i32 &m, const i32 &n) {
    auto rows = expand_dims(rowIdx(s[0]) < m, 1);
    auto cols = expand_dims(colIdx(s[1]) < n, 0);
    return kind == 1 ? rows & cols : kind == 2 ? cols : rows;
  };

  std::vector<V> v;
  for (const Node &n : p.nodes) {
    switch (n.op) {
    case Op::Input: {
      const InputSpec &in = p.inputs[n.input];
      v.push_back(withPtr(x[n.input], in.dt, [&](const auto &ptr) {
        using E = typename std::remove_cvref_t<decltype(load(ptr))>::element_type;
        auto lit = literal<E>(in.other);
        if (in.shape.size() == 2) {
          auto ptrs = ptr + offsets2(in.shape, ldx);
          if (in.maskKind == 0) return load(ptrs);
          return load(ptrs, mask2(in.shape, in.maskKind, ms[n.input], ns[n.input]), lit);
        }
        int len = int(in.shape[0]);
        i32 idx = !p.grid() ? arange(0, len) : program_id(in.axis) * len + arange(0, len);
        if (in.maskKind == 0) return load(ptr + idx);
        return load(ptr + idx, idx < ns[n.input], lit);
      }));
      break;
    }
    case Op::ScalarLoad: {
      const InputSpec &in = p.inputs[n.input];
      v.push_back(withPtr(x[n.input], in.dt, [&](const auto &ptr) {
        using E = typename std::remove_cvref_t<decltype(load(ptr))>::element_type;
        i32 off = n.flag ? program_id(0) + int(n.lit) : full({}, int(n.lit));
        if (!n.litLeft) return n.flag ? load(ptr + off) : load(ptr + int(n.lit));
        return load(ptr + off, off < ns[n.input], literal<E>(in.other));
      }));
      break;
    }
    case Op::ProgramId: v.push_back(wrap(program_id(n.axis))); break;
    case Op::NumPrograms: v.push_back(wrap(num_programs(n.axis))); break;
    case Op::Iota: v.push_back(wrap(arange(0, int(n.shape[0])))); break;
    case Op::Full:
      v.push_back(dispatch(n.dt, [&](auto tag) {
        using E = typename decltype(tag)::type;
        if constexpr (std::is_same_v<E, bool>) return full(n.shape, n.lit != 0);
        else return full<E>(n.shape, literal<E>(n.lit));
      }));
      break;
    case Op::Neg: case Op::Abs:
      v.push_back(dispatch(n.dt, [&](auto tag) {
        using E = typename decltype(tag)::type;
        if constexpr (std::is_same_v<E, bool>) {
          generatorBug("neg/abs of bool");
          return get<E>(v[n.a]);
        } else return n.op == Op::Neg ? -get<E>(v[n.a]) : abs(get<E>(v[n.a]));
      }));
      break;
    case Op::Cast:
      v.push_back(dispatch(v[n.a].dt, [&](auto tag) {
        using E = typename decltype(tag)::type;
        // One result type per instantiation: go through the V.
        return castTo(n.dt, get<E>(v[n.a]));
      }));
      break;
    case Op::Exp: v.push_back(wrap(exp(v[n.a].f))); break;
    case Op::Log: v.push_back(wrap(log(abs(v[n.a].f) + 1.0f))); break;
    case Op::Sqrt: v.push_back(wrap(sqrt(abs(v[n.a].f)))); break;
    case Op::Sin: v.push_back(wrap(sin(v[n.a].f))); break;
    case Op::Fma:
      if (n.c < 0) v.push_back(wrap(fma(v[n.a].f, v[n.b].f, float(n.lit))));
      else v.push_back(wrap(fma(v[n.a].f, v[n.b].f, v[n.c].f)));
      break;
    case Op::Where:
      v.push_back(dispatch(n.dt, [&](auto tag) {
        using E = typename decltype(tag)::type;
        i1 c = v[n.a].b;
        if (n.b < 0) return where(c, literal<E>(n.lit), get<E>(v[n.c]));
        if (n.c < 0) return where(c, get<E>(v[n.b]), literal<E>(n.lit));
        return where(c, get<E>(v[n.b]), get<E>(v[n.c]));
      }));
      break;
    case Op::ExpandDims: case Op::BroadcastTo: case Op::Trans: case Op::Reshape: case Op::Join: case Op::Split:
      v.push_back(dispatch(n.dt, [&](auto tag) {
        using E = typename decltype(tag)::type;
        Tile<E> t = get<E>(v[n.a]);
        switch (n.op) {
        case Op::Join: return join(t, get<E>(v[n.b]));
        case Op::Split: return n.flag ? split(t).second : split(t).first;
        case Op::ExpandDims: return expand_dims(t, n.axis);
        case Op::BroadcastTo: return broadcast_to(t, n.shape);
        case Op::Trans: return trans(t);
        default: return reshape(t, n.shape);
        }
      }));
      break;
    case Op::Sum: case Op::Cumsum: case Op::RMax: case Op::RMin: case Op::ArgMax: case Op::ArgMin:
      v.push_back(dispatch(v[n.a].dt, [&](auto tag) {
        using E = typename decltype(tag)::type;
        Tile<E> t = get<E>(v[n.a]);
        if (n.op == Op::Sum) return wrap(sum(t, n.axis, n.flag));
        if (n.op == Op::Cumsum) return wrap(cumsum(t, n.axis, n.flag));
        if constexpr (std::is_same_v<E, bool>) {
          generatorBug("max/min/argmax of bool");
          return V{};
        } else {
          switch (n.op) {
          case Op::RMax: return wrap(max(t, n.axis, n.flag));
          case Op::RMin: return wrap(min(t, n.axis, n.flag));
          case Op::ArgMax: return wrap(argmax(t, n.axis, n.flag));
          default: return wrap(argmin(t, n.axis, n.flag));
          }
        }
      }));
      break;
    default: { // binary
      Dt ot = v[n.a].dt;
      V r = dispatch(ot, [&](auto tag) {
        using E = typename decltype(tag)::type;
        Tile<E> a = get<E>(v[n.a]);
        V out;
        if (n.b >= 0) {
          Tile<E> b = get<E>(v[n.b]);
          out = isCompare(n.op) ? wrap(compare(n.op, a, b)) : wrap(arith<E>(n.op, a, b));
        } else if (n.litLeft) {
          auto b = literal<E>(n.lit);
          out = isCompare(n.op) ? wrap(compare(n.op, b, a)) : wrap(arith<E>(n.op, b, a));
        } else {
          auto b = literal<E>(n.lit);
          out = isCompare(n.op) ? wrap(compare(n.op, a, b)) : wrap(arith<E>(n.op, a, b));
        }
        return out;
      });
      v.push_back(r);
    }
    }
    if (v.back().dt != n.dt) generatorBug("dtype mismatch");
  }

  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const OutputSpec &out = p.outputs[k];
    const Node &n = p.nodes[out.node];
    auto put = [&](const auto &base, const auto &value) {
      if (n.shape.empty()) {
        if (!p.grid() && out.so == 0 && out.maskKind == 0) return store(base, value);
        i32 off = p.grid() ? linearPid() + out.so : full({}, out.so);
        if (out.maskKind == 0) return store(base + off, value);
        return store(base + off, value, off < no[k]);
      }
      if (n.shape.size() == 2) {
        auto ptrs = base + offsets2(n.shape, ldo);
        if (out.maskKind == 0) return store(ptrs, value);
        return store(ptrs, value, mask2(n.shape, out.maskKind, mo[k], no[k]));
      }
      int len = int(n.shape[0]);
      i32 idx = !p.grid() ? arange(0, len) : linearPid() * len + arange(0, len);
      if (out.maskKind == 0) return store(base + idx, value);
      store(base + idx, value, idx < no[k]);
    };
    switch (n.dt) {
    case Dt::F32: put(of[k], v[out.node].f); break;
    case Dt::I32: put(oi[k], v[out.node].i); break;
    case Dt::F16: put(oh[k], v[out.node].h); break;
    case Dt::BF16: put(ob[k], v[out.node].bh); break;
    default: generatorBug("output type");
    }
  }
}

// ---------------------------------------------------------------------------
// Running and checking one program

Device &deviceFor(const std::string &arch) {
  static Device gfx942 = Device::emulator("gfx942");
  static Device gfx1100 = Device::emulator("gfx1100");
  return arch == "gfx942" ? gfx942 : gfx1100;
}

auto &kernel() {
  static auto k = jit<random_program>();
  return k;
}

// Where element (i, j) of program (p0, p1)'s output of shape s lands, and
// whether it is stored.
struct Slot {
  size_t off;
  bool stored;
};
Slot slotOf(const Program &p, const OutputSpec &out, const Dims &s, int p0, int p1, int64_t i, int64_t j) {
  int64_t lin = int64_t(p0) * p.gy + p1;
  if (s.empty()) {
    int64_t off = lin + out.so;
    return {size_t(off), out.maskKind == 0 || off < out.n};
  }
  if (s.size() == 1) {
    int64_t g = lin * s[0] + i;
    return {size_t(g), out.maskKind == 0 || g < out.n};
  }
  int64_t row = int64_t(p0) * s[0] + i, col = int64_t(p1) * s[1] + j;
  bool ok = true;
  if (out.maskKind == 1 || out.maskKind == 3) ok &= row < out.m;
  if (out.maskKind == 1 || out.maskKind == 2) ok &= col < out.n;
  return {size_t(row) * p.ldo + size_t(col), ok};
}

size_t outputSize(const Program &p, const Dims &s, int so) {
  return size_t(globalRows(p, s) + 1) * size_t(p.ldo) + size_t(globalColsOut(p, s, so)) + 8;
}

template <class T, class F> std::vector<T> convert(const std::vector<F> &v) {
  std::vector<T> r(v.size());
  for (size_t k = 0; k < v.size(); ++k) r[k] = T(v[k]);
  return r;
}

template <class T> Buffer<T> poisonedOn(Device &dev, size_t n) {
  std::vector<T> junk(n);
  std::memset(static_cast<void *>(junk.data()), 0xA5, n * sizeof(T));
  return dev.upload(junk);
}

// Whether every byte of `x` is the poison 0xA5.
template <class T> bool isPoison(const T &x) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &x, sizeof(T));
  for (unsigned char c : b)
    if (c != 0xA5) return false;
  return true;
}

// The largest |GPU - host| / err seen on an inexact element, and how many
// inexact elements were compared: how much of the tolerance is used.
double worstTolerance = 0;
uint64_t inexactChecked = 0;

// Runs `p`; empty when every element matches, else what went wrong.
std::string runProgram(const Program &p) {
  uint64_t id = fingerprint(p);
  registry()[id] = p;
  Device &dev = deviceFor(p.arch);
  HostData d = makeInputs(p);
  std::vector<Buffer<float>> xf;
  std::vector<Buffer<int32_t>> xi;
  std::vector<Buffer<half>> xh;
  std::vector<Buffer<bfloat16>> xb;
  std::vector<Buffer<int8_t>> xc;
  std::vector<Buffer<int16_t>> xs;
  std::vector<Buffer<int64_t>> xl;
  for (size_t k = 0; k < 3; ++k) {
    size_t i = std::min(k, p.inputs.size() - 1); // unused slots alias input 0..n-1
    xf.push_back(dev.upload(d.xf[i]));
    xi.push_back(dev.upload(d.xi[i]));
    xh.push_back(dev.upload(convert<half>(d.xf[i])));
    xb.push_back(dev.upload(convert<bfloat16>(d.xf[i])));
    xc.push_back(dev.upload(convert<int8_t>(d.xi[i])));
    xs.push_back(dev.upload(convert<int16_t>(d.xi[i])));
    xl.push_back(dev.upload(convert<int64_t>(d.xi[i])));
  }
  std::vector<Buffer<float>> of;
  std::vector<Buffer<int32_t>> oi;
  std::vector<Buffer<half>> oh;
  std::vector<Buffer<bfloat16>> ob;
  std::vector<size_t> sizes;
  for (size_t k = 0; k < 2; ++k) {
    bool real = k < p.outputs.size();
    Dims s = real ? p.nodes[p.outputs[k].node].shape : Dims{};
    sizes.push_back(outputSize(p, s, real ? p.outputs[k].so : 0));
    of.push_back(poisonedOn<float>(dev, sizes[k]));
    oi.push_back(poisonedOn<int32_t>(dev, sizes[k]));
    oh.push_back(poisonedOn<half>(dev, sizes[k]));
    ob.push_back(poisonedOn<bfloat16>(dev, sizes[k]));
  }
  auto in = [&](size_t k) { return k < p.inputs.size() ? p.inputs[k] : p.inputs[0]; };
  auto outM = [&](size_t k) { return k < p.outputs.size() ? p.outputs[k].m : 1; };
  auto outN = [&](size_t k) { return k < p.outputs.size() ? p.outputs[k].n : 1; };
  try {
    kernel().launch(dev, {uint32_t(p.gx), uint32_t(p.gy)}, {.num_warps = p.warps}, xf[0], xf[1], xf[2], xi[0],
                    xi[1], xi[2], xh[0], xh[1], xh[2], xb[0], xb[1], xb[2], xc[0], xc[1], xc[2], xs[0], xs[1],
                    xs[2], xl[0], xl[1], xl[2], of[0], oi[0], oh[0], ob[0], of[1], oi[1], oh[1], ob[1], in(0).m,
                    in(0).n, in(1).m, in(1).n, in(2).m, in(2).n, outM(0), outN(0), outM(1), outN(1), p.ldx, p.ldo,
                    id);
  } catch (const std::exception &e) {
    return std::string("the kernel failed to compile or run: ") + e.what() + "\n";
  }
  std::vector<std::vector<HostTile>> want; // per program, p0-major
  for (int p0 = 0; p0 < p.gx; ++p0)
    for (int p1 = 0; p1 < p.gy; ++p1) want.push_back(evaluate(p, d, p0, p1));
  std::ostringstream o;
  size_t wrong = 0;
  auto report = [&](const std::string &line) {
    if (++wrong <= 8) o << "  " << line << "\n";
  };
  for (size_t k = 0; k < 2; ++k) {
    std::vector<float> gf = of[k].download();
    std::vector<int32_t> gi = oi[k].download();
    std::vector<half> gh = oh[k].download();
    std::vector<bfloat16> gb = ob[k].download();
    std::vector<bool> written(sizes[k], false);
    Dt dt = Dt::Bool; // no buffer written
    if (k < p.outputs.size()) {
      const OutputSpec &out = p.outputs[k];
      const Node &n = p.nodes[out.node];
      dt = n.dt;
      for (int p0 = 0; p0 < p.gx; ++p0)
        for (int p1 = 0; p1 < p.gy; ++p1) {
          const HostTile &w = want[size_t(p0) * p.gy + p1][out.node];
          forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) {
            Slot s = slotOf(p, out, n.shape, p0, p1, i, j);
            if (!s.stored) return;
            if (s.off >= sizes[k]) {
              report("out" + std::to_string(k) + " slot outside the buffer (test bug)");
              return;
            }
            written[s.off] = true;
            double got = dt == Dt::F32 ? double(gf[s.off]) : dt == Dt::I32 ? double(gi[s.off])
                       : dt == Dt::F16 ? double(float(gh[s.off])) : double(float(gb[s.off]));
            bool ok = n.err > 0 ? std::fabs(got - w.v[f]) <= n.err : got == w.v[f];
            if (n.err > 0 && ok) {
              ++inexactChecked;
              worstTolerance = std::max(worstTolerance, std::fabs(got - w.v[f]) / n.err);
            }
            if (!ok) {
              std::ostringstream l;
              l.precision(9);
              l << "out" << k << " (v" << out.node << ")";
              if (p.gx * p.gy > 1) l << " program (" << p0 << ", " << p1 << ")";
              l << " [" << i;
              if (n.shape.size() == 2) l << ", " << j;
              l << "] = " << got << ", want " << w.v[f];
              if (n.err > 0) l << " (+- " << n.err << ")";
              report(l.str());
            }
          });
        }
    }
    for (size_t e = 0; e < sizes[k]; ++e) {
      auto check = [&](const char *name, Dt mine, bool poisoned) {
        if ((!written[e] || dt != mine) && !poisoned)
          report(std::string(name) + std::to_string(k) + " word " + std::to_string(e) +
                 " was written (should stay poisoned)");
      };
      check("of", Dt::F32, isPoison(gf[e]));
      check("oi", Dt::I32, isPoison(gi[e]));
      check("oh", Dt::F16, isPoison(gh[e]));
      check("ob", Dt::BF16, isPoison(gb[e]));
    }
  }
  if (wrong == 0) return "";
  return std::to_string(wrong) + " wrong elements, the first:\n" + o.str();
}

// Recomputes the bound and err of every node from its operands (as the
// generator does) and says whether the program still keeps the generator's
// promises: the shrinker's edits can break them (a bypassed node may have had
// a smaller bound), and a broken promise is a test bug, not a compiler one.
bool consistent(Program &p) {
  Gen g(p.seed, p.features); // for fits() and the features
  g.p.features = p.features;
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    Node &n = p.nodes[k];
    auto B = [&](int o) { return o >= 0 ? p.nodes[o].bound : std::fabs(n.lit); };
    auto E = [&](int o) { return o >= 0 ? p.nodes[o].err : 0.0; };
    auto exact = [&](int o) { return o < 0 || p.nodes[o].err == 0; };
    double ba = B(n.a), ea = E(n.a);
    switch (n.op) {
    case Op::Input: case Op::ScalarLoad: case Op::Iota: case Op::Full: case Op::ProgramId: case Op::NumPrograms:
      break;
    case Op::Neg: case Op::Abs: case Op::ExpandDims: case Op::BroadcastTo: case Op::Trans: case Op::Reshape:
    case Op::Split: case Op::RMax: case Op::RMin:
      n.bound = ba, n.err = ea;
      if (n.op == Op::Abs && n.bound > kBoundLimit) return false;
      break;
    case Op::Join: case Op::Where: {
      int x = n.op == Op::Join ? n.a : n.b, y = n.op == Op::Join ? n.b : n.c;
      n.bound = std::max(B(x), B(y));
      n.err = std::max(E(x), E(y));
      if (n.op == Op::Where && !exact(n.a)) return false;
      break;
    }
    case Op::Cast:
      if (!castOk(p.nodes[n.a].dt, ba, ea, n.dt)) return false;
      n.bound = castBound(n.dt, ba);
      n.err = ea > 0 ? ea + narrowRounding(n.dt, ba) : 0;
      break;
    case Op::ArgMax: case Op::ArgMin:
      if (!exact(n.a)) return false;
      break;
    case Op::Sum: case Op::Cumsum: {
      const Node &A = p.nodes[n.a];
      int axis = n.axis < 0 ? n.axis + int(A.shape.size()) : n.axis;
      double len = double(A.shape[axis]);
      n.bound = ba * len;
      n.err = ea > 0 ? len * (ea + n.bound * kF32Round) : 0;
      n.bound += n.err;
      break;
    }
    case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Sin: {
      if (!exact(n.a) || (n.op == Op::Exp && ba > 12)) return false;
      double mag = n.op == Op::Exp ? std::exp(ba) : n.op == Op::Log ? std::log(ba + 1) : n.op == Op::Sqrt ? std::sqrt(ba) : 1;
      n.err = kMathRel * std::max(mag, 1e-30);
      n.bound = mag + n.err;
      break;
    }
    case Op::Fma: {
      double bb = B(n.b), eb = E(n.b);
      n.bound = ba * bb + B(n.c);
      n.err = withRounding(ea * bb + eb * ba + ea * eb + E(n.c), n.bound);
      n.bound += n.err;
      if (n.bound > kBoundLimit) return false;
      break;
    }
    default: { // binary
      double bb = B(n.b), eb = E(n.b);
      if (n.b < 0 && n.litLeft) std::swap(ba, bb), std::swap(ea, eb); // ba: the left operand's
      if (isCompare(n.op) && (!exact(n.a) || !exact(n.b))) return false;
      if (n.dt != Dt::F32 && n.dt != Dt::Bool && (!exact(n.a) || !exact(n.b))) return false;
      switch (n.op) {
      case Op::Add: case Op::Sub: n.bound = ba + bb; n.err = ea + eb; break;
      case Op::Mul: n.bound = ba * bb; n.err = ea * bb + eb * ba + ea * eb; break;
      case Op::Min: case Op::Max: n.bound = std::max(ba, bb); n.err = std::max(ea, eb); break;
      case Op::And: case Op::Or: case Op::Xor: n.bound = n.dt == Dt::Bool ? 1 : 2 * std::max(ba, bb) + 1; break;
      case Op::Div: case Op::Mod: n.bound = std::max(ba, 1.0); break;
      case Op::Shl: n.bound = n.b < 0 && !n.litLeft ? ba * std::ldexp(1.0, int(n.lit)) : ba * kWide; break;
      case Op::Shr: n.bound = ba; break;
      default: n.bound = 1; break;
      }
      if (n.err > 0) {
        n.err = withRounding(n.err, n.bound);
        n.bound += n.err;
      }
      if (isCompare(n.op)) n.dt = Dt::Bool, n.bound = 1;
      break;
    }
    }
    if (n.op != Op::Cast && n.op != Op::Full && n.op != Op::Input && n.op != Op::ScalarLoad && !g.fits(n))
      return false;
  }
  return true;
}

// Removes nodes no output needs and renumbers.
Program prune(const Program &p) {
  std::vector<bool> live(p.nodes.size(), false);
  for (const OutputSpec &out : p.outputs) live[out.node] = true;
  for (size_t k = p.nodes.size(); k-- > 0;)
    if (live[k])
      for (int o : {p.nodes[k].a, p.nodes[k].b, p.nodes[k].c})
        if (o >= 0) live[o] = true;
  Program q = p;
  q.nodes.clear();
  std::vector<int> map(p.nodes.size(), -1);
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    if (!live[k]) continue;
    Node n = p.nodes[k];
    for (int *o : {&n.a, &n.b, &n.c})
      if (*o >= 0) *o = map[*o];
    map[k] = int(q.nodes.size());
    q.nodes.push_back(n);
  }
  for (OutputSpec &out : q.outputs) out.node = map[out.node];
  return q;
}

// Greedy shrinking: keeps any simplification that still fails.
Program shrink(Program p) {
  // A candidate must fail the same way: the same compile error, or wrong values.
  auto kind = [](const std::string &problem) {
    if (problem.empty()) return std::string();
    if (problem.rfind("the kernel failed", 0) != 0) return std::string("wrong values");
    size_t at = problem.find(".cpp:");
    at = at == std::string::npos ? 0 : problem.find(": ", at);
    return problem.substr(at == std::string::npos ? 0 : at);
  };
  const std::string original = kind(runProgram(p));
  auto fails = [&](const Program &q) { return kind(runProgram(q)) == original; };
  for (bool progress = true; progress;) {
    progress = false;
    std::vector<Program> candidates{prune(p)}; // dead nodes are traced too
    if (p.outputs.size() > 1)
      for (size_t k = 0; k < p.outputs.size(); ++k) {
        Program q = p;
        q.outputs.erase(q.outputs.begin() + k);
        candidates.push_back(prune(q));
      }
    for (size_t k = 0; k < p.outputs.size(); ++k) {
      // Store an operand of the output node instead (a storable type, any shape).
      const Node &n = p.nodes[p.outputs[k].node];
      for (int o : {n.a, n.b, n.c}) {
        if (o < 0 || !storableDt(p.nodes[o].dt)) continue;
        Program q = p;
        OutputSpec &out = q.outputs[k];
        out.node = o;
        const Dims &s = p.nodes[o].shape;
        if (s.size() < 2 && out.maskKind % 2 == 1) out.maskKind = s.empty() ? 0 : 2;
        if (!s.empty()) out.so = 0;
        out.m = int(std::min<int64_t>(out.m, globalRows(p, s)));
        out.n = int(std::min<int64_t>(out.n, globalColsOut(p, s, out.so)));
        if (!s.empty()) q.ldo = std::max<int>(q.ldo, int(globalColsOut(p, s, 0)));
        candidates.push_back(prune(q));
      }
      if (p.outputs[k].maskKind != 0) {
        Program q = p;
        q.outputs[k].maskKind = 0;
        candidates.push_back(q);
      }
    }
    // Bypass a node: its users read one of its operands of the same dtype and shape.
    for (size_t k = 0; k < p.nodes.size(); ++k)
      for (int o : {p.nodes[k].a, p.nodes[k].b, p.nodes[k].c}) {
        if (o < 0 || p.nodes[o].dt != p.nodes[k].dt || p.nodes[o].shape != p.nodes[k].shape) continue;
        Program q = p;
        for (Node &n : q.nodes)
          for (int *u : {&n.a, &n.b, &n.c})
            if (*u == int(k)) *u = o;
        for (OutputSpec &out : q.outputs)
          if (out.node == int(k)) out.node = o;
        candidates.push_back(prune(q));
      }
    for (size_t k = 0; k < p.inputs.size(); ++k)
      if (p.inputs[k].maskKind != 0) {
        Program q = p;
        q.inputs[k].maskKind = 0;
        candidates.push_back(q);
      }
    if (p.warps > 1) {
      Program q = p;
      q.warps = 1;
      candidates.push_back(q);
      q.warps = p.warps / 2;
      candidates.push_back(q);
    }
    // A smaller grid (masks and scalar offsets stay in their buffers).
    for (int axis = 0; axis < 2; ++axis)
      if ((axis == 0 ? p.gx : p.gy) > 1) {
        Program q = p;
        (axis == 0 ? q.gx : q.gy) = 1;
        candidates.push_back(q);
      }
    for (Program &q : candidates) {
      if (q.nodes.size() > p.nodes.size() || fingerprint(q) == fingerprint(p) || !consistent(q)) continue;
      if (fails(q)) {
        p = q;
        progress = true;
        break;
      }
    }
  }
  return p;
}

uint64_t envNumber(const char *name, uint64_t fallback) {
  const char *s = std::getenv(name);
  return s && *s ? std::strtoull(s, nullptr, 0) : fallback;
}

// A seed and the features it runs with.
struct Case {
  uint64_t seed;
  unsigned features;
};

std::string caseText(const Case &c) {
  char f[16];
  std::snprintf(f, sizeof f, "0x%x", c.features);
  return "TESSEL_RANDOM_SEED=" + std::to_string(c.seed) + " TESSEL_RANDOM_FEATURES=" + f;
}

// Checks one case; on failure prints a reproducible report and fails the test.
bool checkCase(const Case &c, bool verbose) {
  Program p = generate(c.seed, c.features);
  if (verbose) MESSAGE(listing(p));
  std::string problem = runProgram(p);
  if (problem.empty()) return true;
  std::string msg = "random program failed (rerun: " + caseText(c) + ")\n" + listing(p) + problem;
  if (envNumber("TESSEL_RANDOM_SHRINK", 1) != 0) {
    Program small = shrink(p);
    msg += "shrunk to:\n" + listing(small) + runProgram(small);
  }
  FAIL_CHECK(msg);
  return false;
}

// Cases that found compiler bugs: always run.
const Case kRegressionCases[] = {
    // Rank-0 tiles through shape ops: the DSL accepts them, the importer emits
    // tessel.expand_dims / join / split on a scalar (not a ranked tensor) and
    // the verifier rejects the module.
    {276, 0},  // argmax(1-D, 0, keep_dims=true): expand_dims of the scalar result
    {1408, 0}, // sum of a 1-D tile with keep_dims=true
    {2531, 0}, // expand_dims(scalar, 0)
    {67, 0},   // join(scalar, scalar)
    {1757, 0}, // split of a {2} tile: two scalars
    // join of two 1-D tiles in different layouts (a reduction's slice layout
    // and a load's blocked one): no convert_layout is inserted and the
    // verifier says "'tessel.join' op requires all operands to have the same type".
    {1991, 0}, // join(load{16}, min(load{16,16}, 0))
    {1564, 0}, // join(min(expand_dims(v, 1) + v, 0), v)
    // Layout assignment: a [16, 128] load reshaped to [2048, 1] and stored,
    // next to max(load [16, 128], -1, keep_dims) -> [16, 1] stored, fails to
    // compile with "this tile ([2048, 1] f32) needs 1024 registers per thread"
    // (num_warps 4, gfx942: 8 elements per thread would do). Either half
    // alone compiles; the element type of the max's input does not matter.
    {30081, 0x20},
};

} // namespace

TEST_CASE("random programs match a host evaluation") {
  const char *forced = std::getenv("TESSEL_RANDOM_FEATURES");
  auto featuresFor = [&](uint64_t seed) {
    return forced && *forced ? unsigned(std::strtoul(forced, nullptr, 0)) & kAllFeatures : featuresOf(seed);
  };
  if (uint64_t only = envNumber("TESSEL_RANDOM_SEED", 0)) {
    checkCase({only, featuresFor(only)}, true);
    return;
  }
  for (const Case &c : kRegressionCases)
    checkCase(c, false);
  uint64_t count = envNumber("TESSEL_RANDOM_PROGRAMS", 250), first = envNumber("TESSEL_RANDOM_FIRST", 1);
  size_t failures = 0;
  auto start = std::chrono::steady_clock::now();
  for (uint64_t seed = first; seed < first + count; ++seed)
    failures += !checkCase({seed, featuresFor(seed)}, false);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(count << " random programs from seed " << first << " in " << secs << " s, " << failures << " failed; "
                << inexactChecked << " inexact elements used at most " << worstTolerance << " of their tolerance");
}
