// The random programs of random_programs_test.cpp: their data structures and
// what the generator, the host evaluation, the kernel and the runner share.
// See random_programs_test.cpp for what a program is and how it is checked.
#pragma once

#include "e2e_common.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rp {

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
  // Control flow, matrix products, sorting and atomics (see LoopKind etc.).
  Loop,                                      // a device loop carrying `a` (see LoopKind)
  If,                                        // r = c; if_(a) r = b + lit [else r = r - lit]
  Dot,                                       // dot(a, b [transposed if flag], c or zeros)
  Sort,                                      // sort(a, {axis, descending = flag})
  SortPayload,                               // the payload b of sort(a, b, {stable, valid = c})
  ArgSort,                                   // argsort(a, {stable, valid = c})
  TopK,                                      // topk(a, k) values or indices (see kind)
  Atomic,                                    // atomic_<kind>(region + (a & 63), b, c): a statement
  Nest,                                      // nested if_ / for_range / while_ carrying three variables (see Stmt)
};

// What a Loop's body does with its carried tile `acc` (initially node a, or
// full(lit) when a < 0) at induction variable k:
enum LoopKind : int {
  kLoopAxpy = 0,     // acc = acc + cast(k) * b
  kLoopMax = 1,      // acc = maximum(acc, b + cast(k))
  kLoopLoad = 2,     // acc = acc + load(x<input> shifted by k rows (2-D) or elements (1-D), masked)
  kLoopDot = 3,      // acc = dot(A_k, B_k, acc): the matmul loop (see random_programs_test.cpp)
};

// Atomic kinds (on i32 regions unless noted).
enum AtomicKind : int { kAtomicAdd, kAtomicMax, kAtomicMin, kAtomicAnd, kAtomicOr, kAtomicXor, kAtomicUmax, kAtomicUmin };

// A statement of a Nest node's body. The body carries three variables:
// acc (the node's type and shape; node a, or full(lit)), s (a scalar i32,
// 0 before) and done (a scalar bool, false before); the node's value is
// acc + s + done after the outermost statements. Loops push their k.
struct Stmt {
  enum Kind : uint8_t { AddAcc, AddS, SetDone, If, For, While } kind = AddAcc;
  int lit = 0;         // AddAcc/AddS: added; SetDone: done |= s > lit; If: compared; While: s < lit
  int k = -1;          // AddAcc: also + k of the enclosing loop at this depth; If (cond 1): that loop's k
  bool useB = false;   // AddAcc: also + node b
  int cond = 0;        // If: 0 s > lit, 1 k % 2 == lit, 2 !done, 3 c > lit, 4 max(acc) > lit
  bool hasElse = false;
  int lo = 0, hi = 0, step = 1; // For: for_range(lo, hi (+ c if hiFromC), step, k)
  bool hiFromC = false;
  std::vector<Stmt> body, orelse; // If: then / else; For, While: the body (While adds s += 1 after it)
};

enum Feature : unsigned {
  kGrid = 1, kIntOps = 2, kHalf = 4, kMath = 8, kScalar = 16, kNarrow = 32,
  kLoop = 64, kDot = 128, kSort = 256, kAtomic = 512,
  kAllFeatures = 1023,
};

// Atomics update regions of kRegion elements of the buffers ai (i32) and af
// (f32), one region per atomic node in program order, at most kRegions.
constexpr int kRegion = 64;
constexpr int kRegions = 4;

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
  // Loop: k = lo, lo + step, ... while k < hi (+ the scalar node c if c >= 0);
  // flag: a while_ loop rather than for_range.
  int lo = 0, hi = 0, step = 1;
  int kind = 0;    // Loop: LoopKind; Atomic: AtomicKind; TopK: 0 values, 1 i32 indices, 2 i64 indices
  int k = 0;       // TopK's k
  int order = 0;   // Atomic: sem * 4 + scope
  int input2 = -1;       // kLoopDot: B's input (A's is `input`)
  Dt inDt = Dt::F32;     // kLoopDot: the type A and B are loaded as
  bool transB = false;   // kLoopDot: B loaded transposed from an [R, C] input
  std::vector<Stmt> stmts; // Nest: the body
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
  unsigned stages = 1; // LaunchOptions::num_stages
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

// Shapes and element types.
int64_t numel(const Dims &s);
std::optional<Dims> broadcastDims(Dims a, Dims b);
bool broadcastsTo(const Dims &from, const Dims &to);
const char *opName(Op op);
inline bool isBinary(Op op) { return (op >= Op::Add && op <= Op::Ge) || (op >= Op::Div && op <= Op::Shr); }
inline bool isCompare(Op op) { return op >= Op::Lt && op <= Op::Ge; }
inline bool isReduce(Op op) { return op >= Op::Sum && op <= Op::ArgMin; }
inline bool isShift(Op op) { return op == Op::Shl || op == Op::Shr; }
inline bool isFloatDt(Dt d) { return d == Dt::F32 || d == Dt::F16 || d == Dt::BF16; }
inline bool isIntDt(Dt d) { return d == Dt::I32 || d == Dt::I8 || d == Dt::I16 || d == Dt::I64; }
inline bool storableDt(Dt d) { return d == Dt::F32 || d == Dt::I32 || d == Dt::F16 || d == Dt::BF16; }
// Arithmetic (+ - * neg abs) is allowed on these; f16/bf16 only while exact.
inline bool arithDt(Dt d) { return d == Dt::F32 || d == Dt::I32 || d == Dt::F16 || d == Dt::BF16; }
// Integers up to this magnitude are exact results of arithmetic in `d`.
inline double exactLimit(Dt d) { return d == Dt::F16 ? 2048 : d == Dt::BF16 ? 256 : kBoundLimit; }
Dt sumDt(Dt d);
const char *dtName(Dt dt);
const char *cppName(Dt dt);
const char *bufLetter(Dt dt);
std::string dimsText(const Dims &s);
std::string litText(Dt dt, double v);
std::string maskText(int kind, const char *m, const char *n, int mv, int nv, size_t rank);

// Global extents (with the grid) of an input and of an output's array.
int64_t globalRows(const Program &p, const Dims &s);
int64_t globalColsIn(const Program &p, const InputSpec &in);
int64_t globalColsOut(const Program &p, const Dims &s, int so);
size_t inputSize(const Program &p, const InputSpec &in);

// The program as (nearly) DSL code, one line per node.
std::string listing(const Program &p);
// Every field that changes the kernel, hashed: the key the kernel is found by.
uint64_t fingerprint(const Program &p);

// Error bounds (see random_programs_test.cpp).
double withRounding(double propagated, double bound);
double narrowRounding(Dt to, double bound);
bool castOk(Dt from, double bound, double err, Dt to);
double castBound(Dt to, double bound);

// The generator (random_programs_gen.cpp).
unsigned featuresOf(uint64_t seed);
Program generate(uint64_t seed, unsigned features);

// Bounds (random_programs_bounds.cpp). Whether a result's bound is in the
// exact range of its type (i32 wraps with intops: its bound is clamped).
bool fitsIn(const Program &p, Node &n);
// The bound (and err) of a loop, branch, dot, sort or atomic node from its
// operands'; false when the node breaks a promise.
bool controlBounds(const Program &p, Node &n);
// Recomputes every node's bound and err; false when the program no longer
// keeps the generator's promises (after a shrinking edit).
bool consistent(Program &p);

// The host reference (random_programs_host.cpp): doubles (exact for these
// values), bools as 0 / 1, integers wrapped to their width like the GPU's.
struct HostTile {
  Dims shape;
  std::vector<double> v;
};

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

HostData makeInputs(const Program &p);
// The atomic regions' initial contents (kRegions * kRegion each).
std::vector<int32_t> atomicInitI(const Program &p);
std::vector<float> atomicInitF(const Program &p);
// Applies program (p0, p1)'s atomics (node values `t`) to the regions.
void applyAtomics(const Program &p, const std::vector<HostTile> &t, std::vector<int32_t> &ai, std::vector<float> &af);
// The dtype an atomic region holds (I32 or F32) and the node's region.
int regionOf(const Program &p, int node);
// The values of every node in program instance (p0, p1).
std::vector<HostTile> evaluate(const Program &p, const HostData &d, int p0 = 0, int p1 = 0);

// Nested control flow (random_programs_nest.cpp): a random body for a Nest
// node whose init is `a`, addend `b` and scalar `c` (any may be -1); its
// bound from its operands' (false past a promise); its host value; its text
// (listing) and key (fingerprint).
std::vector<Stmt> drawNest(std::mt19937 &rng, bool hasC);
bool nestBounds(const Program &p, Node &n);
void evaluateNest(const Node &n, const HostTile *a, const HostTile *b, double c, HostTile &r);
std::string nestText(const std::vector<Stmt> &stmts);
std::string nestKey(const std::vector<Stmt> &stmts);
// The number of statements in a body, and the body without its statement
// number `index` (pre-order): the shrinker's steps.
int nestSize(const std::vector<Stmt> &stmts);
std::vector<Stmt> nestWithout(const std::vector<Stmt> &stmts, int index);

// The kernel (random_programs_kernel.cpp): interprets the program registered
// under `id` at trace time.
std::map<uint64_t, Program> &registry();
void random_program(tessel::Ptr<tessel::f32> xf0, tessel::Ptr<tessel::f32> xf1, tessel::Ptr<tessel::f32> xf2,
                    tessel::Ptr<tessel::i32> xi0, tessel::Ptr<tessel::i32> xi1, tessel::Ptr<tessel::i32> xi2,
                    tessel::Ptr<tessel::f16> xh0, tessel::Ptr<tessel::f16> xh1, tessel::Ptr<tessel::f16> xh2,
                    tessel::Ptr<tessel::bf16> xb0, tessel::Ptr<tessel::bf16> xb1, tessel::Ptr<tessel::bf16> xb2,
                    tessel::Ptr<tessel::i8> xc0, tessel::Ptr<tessel::i8> xc1, tessel::Ptr<tessel::i8> xc2,
                    tessel::Ptr<tessel::i16> xs0, tessel::Ptr<tessel::i16> xs1, tessel::Ptr<tessel::i16> xs2,
                    tessel::Ptr<tessel::i64> xl0, tessel::Ptr<tessel::i64> xl1, tessel::Ptr<tessel::i64> xl2,
                    tessel::Ptr<tessel::f32> of0, tessel::Ptr<tessel::i32> oi0, tessel::Ptr<tessel::f16> oh0,
                    tessel::Ptr<tessel::bf16> ob0, tessel::Ptr<tessel::f32> of1, tessel::Ptr<tessel::i32> oi1,
                    tessel::Ptr<tessel::f16> oh1, tessel::Ptr<tessel::bf16> ob1, tessel::Ptr<tessel::i32> ai,
                    tessel::Ptr<tessel::f32> af, tessel::i32 m0, tessel::i32 n0,
                    tessel::i32 m1, tessel::i32 n1, tessel::i32 m2, tessel::i32 n2, tessel::i32 mo0, tessel::i32 no0,
                    tessel::i32 mo1, tessel::i32 no1, tessel::i32 ldx, tessel::i32 ldo, tessel::Const<uint64_t> id);
using RandomKernel = decltype(tessel::jit<random_program>());
RandomKernel &kernel();

} // namespace rp
