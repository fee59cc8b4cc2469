// The random program generator (see random_programs_test.cpp).
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
      if (p.nodes[i].op == Op::Atomic || !ok(p.nodes[i])) continue; // a statement, no value
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

  bool fits(Node &n) { return fitsIn(p, n); }

  Program generate() {
    p.arch = chance(0.5) ? "gfx942" : "gfx1100";
    p.warps = 1u << uniform(0, 3);
    int er, ec;
    do {
      er = uniform(0, 7);
      ec = uniform(0, 7);
    } while (er + ec > 11);
    if (has(kDot) && chance(0.6)) { // tiles a dot takes: both extents >= 16
      er = uniform(4, 7);
      ec = uniform(4, 11 - er);
    }
    if (has(kLoop | kDot)) p.stages = unsigned(uniform(1, 3));
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
    std::vector<int> values; // nodes with a value (not atomics)
    for (int i = 0; i < int(p.nodes.size()); ++i)
      if (p.nodes[i].op != Op::Atomic) values.push_back(i);
    std::vector<int> outs{storable(values.back())};
    if (chance(0.5)) outs.push_back(storable(values[uniform(0, int(values.size()) - 1)]));
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
    if (has(kLoop)) weights.insert(weights.end(), {{Op::Loop, 7}, {Op::If, 3}, {Op::Nest, 5}});
    if (has(kDot)) weights.insert(weights.end(), {{Op::Dot, 5}, {Op::Loop, 3}});
    if (has(kSort))
      weights.insert(weights.end(), {{Op::Sort, 3}, {Op::SortPayload, 3}, {Op::ArgSort, 2}, {Op::TopK, 3}});
    if (has(kAtomic)) weights.insert(weights.end(), {{Op::Atomic, 5}});
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
    case Op::Loop: return loop(R, C);
    case Op::If: {
      int a = choose([](const Node &n) { return n.dt == Dt::Bool && n.shape.empty(); });
      int b = choose([](const Node &n) { return arithDt(n.dt) && n.err == 0; });
      if (a < 0 || b < 0) return false;
      const Node &Bn = p.nodes[b];
      int c = choose([&](const Node &m) { return m.dt == Bn.dt && m.shape == Bn.shape && m.err == 0; });
      Node n{op, Bn.dt, Bn.shape, a, b, c};
      n.lit = smallLit(n.dt);
      n.flag = chance(0.5);
      if (!controlBounds(p, n)) return false;
      add(n);
      return true;
    }
    case Op::Nest: return nest();
    case Op::Dot: return dot();
    case Op::Sort: case Op::SortPayload: case Op::ArgSort: case Op::TopK: return sort(op);
    case Op::Atomic: return atomic();
    default: return false;
    }
  }

  // A tile that may be sorted: rank >= 1, at most kMaxSort elements.
  static constexpr int64_t kMaxSort = 1024;
  static bool sortable(const Node &n) {
    return !n.shape.empty() && n.dt != Dt::Bool && numel(n.shape) <= kMaxSort;
  }

  bool sort(Op op) {
    bool needExact = op != Op::Sort;
    int a = choose([&](const Node &n) { return sortable(n) && (!needExact || n.err == 0); });
    if (a < 0) return false;
    const Node &A = p.nodes[a];
    Node n{op, A.dt, A.shape, a};
    int rank = int(A.shape.size());
    n.axis = uniform(0, rank - 1);
    int at = n.axis;
    if (chance(0.3)) n.axis -= rank;
    n.flag = chance(0.5);
    if (op == Op::SortPayload) {
      n.b = choose([&](const Node &m) { return m.shape == A.shape; });
      n.dt = p.nodes[n.b].dt;
    }
    if (op == Op::ArgSort) n.dt = Dt::I32;
    if ((op == Op::SortPayload || op == Op::ArgSort) && chance(0.4)) {
      n.c = choose([&](const Node &m) { return m.dt == Dt::Bool && m.shape == A.shape; });
      n.lit = smallLit(n.dt);
    }
    if (op == Op::TopK) {
      n.k = uniform(1, int(A.shape[at]));
      n.kind = uniform(0, 2);
      if (n.kind == 2 && !has(kNarrow)) n.kind = 1;
      n.dt = n.kind == 0 ? A.dt : n.kind == 1 ? Dt::I32 : Dt::I64;
      int64_t kk = 1;
      while (kk < n.k) kk *= 2;
      n.shape[at] = kk;
    }
    if (!controlBounds(p, n)) return false;
    add(n);
    return true;
  }

  // A node usable as a dot operand of type `to`: `node` itself, or a cast of it.
  int asDotInput(int node, Dt to) {
    const Node &n = p.nodes[node];
    if (n.dt == to) return node;
    if (n.err > 0 || !castOk(n.dt, n.bound, 0, to) || n.bound > exactLimit(to)) return -1;
    if (to == Dt::I8 && n.bound > 127) return -1;
    Node c{Op::Cast, to, n.shape, node};
    c.bound = castBound(to, n.bound);
    return add(c);
  }

  // A dot no matrix instruction takes (f32 on gfx1100) runs as
  // multiply-adds, each thread holding whole K rows of A and columns of B for
  // its rows and columns of the result: a documented limit is that each
  // operand fits in 256 registers, so rows * cols * K^2 <= 256^2.
  bool fmaFits(Dt in, int64_t M, int64_t N, int64_t K) const {
    if (!(p.arch == "gfx1100" && in == Dt::F32)) return true;
    int64_t perThread = std::max<int64_t>(1, M * N / (32 * int64_t(p.warps)));
    return perThread * K * K <= 256 * 256;
  }

  bool dot() {
    auto twoD = [](const Node &n) { return n.shape.size() == 2 && n.shape[0] >= 16 && n.shape[1] >= 16; };
    std::vector<Dt> types{Dt::F32, Dt::F16, Dt::BF16};
    if (has(kNarrow)) types.push_back(Dt::I8);
    Dt in = pick(types);
    int a = choose([&](const Node &n) { return twoD(n) && n.err == 0 && n.dt != Dt::Bool; });
    if (a < 0) return false;
    int64_t M = p.nodes[a].shape[0], K = p.nodes[a].shape[1];
    bool transB = chance(0.4);
    int b = choose([&](const Node &n) {
      if (!twoD(n) || n.err > 0 || n.dt == Dt::Bool) return false;
      int64_t k = transB ? n.shape[1] : n.shape[0], nn = transB ? n.shape[0] : n.shape[1];
      return k == K && M * nn <= kMaxElems;
    });
    if (b < 0) return false;
    int64_t N = transB ? p.nodes[b].shape[0] : p.nodes[b].shape[1];
    a = asDotInput(a, in);
    if (a < 0) return false;
    b = asDotInput(b, in);
    if (b < 0) return false;
    if (!fmaFits(in, M, N, K)) return false;
    Dt acc = in == Dt::I8 ? Dt::I32 : Dt::F32;
    Node n{Op::Dot, acc, {M, N}, a, b};
    n.transB = transB;
    if (chance(0.5))
      n.c = choose([&](const Node &m) { return m.dt == acc && m.shape == n.shape && m.err == 0; });
    if (!controlBounds(p, n)) return false;
    add(n);
    return true;
  }

  bool loop(int64_t R, int64_t C) {
    Node n{Op::Loop};
    n.step = uniform(1, 3);
    n.flag = chance(0.3);
    // With dot, a third of the loops are matmul loops (all of them without kLoop).
    if (has(kDot) && (!has(kLoop) || chance(0.33))) n.kind = kLoopDot;
    else n.kind = pick(std::vector<int>{kLoopAxpy, kLoopMax, kLoopLoad});
    // Loads shift forwards only (k >= 0), so they stay in their buffers.
    n.lo = n.kind >= kLoopLoad ? uniform(0, 2) : uniform(-2, 2);
    n.hi = uniform(-1, 6);
    if (chance(0.5)) {
      n.c = choose([](const Node &m) { return m.dt == Dt::I32 && m.shape.empty() && m.err == 0 && m.bound <= 8; });
      if (n.c >= 0) n.hi -= 2;
    }
    switch (n.kind) {
    case kLoopAxpy: case kLoopMax: {
      int b = choose([](const Node &m) { return arithDt(m.dt) && m.err == 0; });
      if (b < 0) return false;
      const Node &Bn = p.nodes[b];
      n.b = b;
      n.dt = Bn.dt;
      n.shape = Bn.shape;
      if (chance(0.5) && Bn.shape.size() < 2) n.shape.insert(n.shape.begin(), chance(0.5) ? R : 1);
      if (numel(n.shape) > kMaxElems) return false;
      n.a = chance(0.3) ? -1 : choose([&](const Node &m) { return m.dt == n.dt && m.shape == n.shape && m.err == 0; });
      break;
    }
    case kLoopLoad: {
      n.input = uniform(0, int(p.inputs.size()) - 1);
      const InputSpec &in = p.inputs[n.input];
      if (!arithDt(in.dt)) return false;
      n.dt = in.dt;
      n.shape = in.shape;
      n.a = chance(0.3) ? -1 : choose([&](const Node &m) { return m.dt == n.dt && m.shape == n.shape && m.err == 0; });
      break;
    }
    default: { // kLoopDot: A [R, C] from a 2-D input, B [C, R] from a [C, R] input or an [R, C] one transposed
      if (R < 16 || C < 16 || R * R > kMaxElems) return false;
      std::vector<int> as, bs;
      for (int k = 0; k < int(p.inputs.size()); ++k) {
        if (p.inputs[k].shape == Dims{R, C}) as.push_back(k), bs.push_back(k);
        if (p.inputs[k].shape == Dims{C, R} && R != C) bs.push_back(k);
      }
      if (as.empty()) return false;
      n.input = pick(as);
      n.input2 = pick(bs);
      n.transB = p.inputs[n.input2].shape == Dims{R, C} && (R != C || chance(0.5));
      std::vector<Dt> types{Dt::F32, Dt::F16, Dt::BF16};
      if (has(kNarrow)) types.push_back(Dt::I8);
      n.inDt = pick(types);
      if (!fmaFits(n.inDt, R, R, C)) return false;
      n.dt = n.inDt == Dt::I8 ? Dt::I32 : Dt::F32;
      n.shape = {R, R};
      n.a = chance(0.4) ? -1 : choose([&](const Node &m) { return m.dt == n.dt && m.shape == n.shape && m.err == 0; });
      break;
    }
    }
    if (n.a < 0) n.lit = n.dt == Dt::Bool ? 0 : smallLit(n.dt);
    if (!controlBounds(p, n)) return false;
    add(n);
    return true;
  }

  // Nested control flow carrying a tile (b's type and shape), a scalar and
  // a flag (see Stmt); conditions and bounds may read the scalar c.
  bool nest() {
    int b = choose([](const Node &m) { return (m.dt == Dt::F32 || m.dt == Dt::I32) && m.err == 0; });
    if (b < 0) return false;
    const Node &Bn = p.nodes[b];
    Node n{Op::Nest, Bn.dt, Bn.shape};
    n.b = b;
    n.a = chance(0.3) ? -1 : choose([&](const Node &m) { return m.dt == n.dt && m.shape == n.shape && m.err == 0; });
    if (n.a < 0) n.lit = smallLit(n.dt);
    if (chance(0.6))
      n.c = choose([](const Node &m) { return m.dt == Dt::I32 && m.shape.empty() && m.err == 0 && m.bound <= 8; });
    n.stmts = drawNest(rng, n.c >= 0);
    if (!controlBounds(p, n)) return false;
    add(n);
    return true;
  }

  bool atomic() {
    if (regionOf(p, int(p.nodes.size())) >= kRegions) return false;
    int a = choose([](const Node &m) { return m.dt == Dt::I32 && m.err == 0 && numel(m.shape) <= kMaxElems; });
    if (a < 0) return false;
    const Node &A = p.nodes[a];
    Node n{Op::Atomic, chance(0.6) ? Dt::I32 : Dt::F32, A.shape, a};
    n.kind = n.dt == Dt::I32 ? uniform(0, 7) : uniform(0, 2);
    if (chance(0.7)) n.b = choose([&](const Node &m) { return m.dt == n.dt && m.err == 0 && broadcastsTo(m.shape, A.shape); });
    if (n.b < 0) n.lit = smallLit(n.dt);
    if (chance(0.5)) n.c = choose([&](const Node &m) { return m.dt == Dt::Bool && broadcastsTo(m.shape, A.shape); });
    n.order = uniform(0, 3) * 4 + uniform(0, 3);
    if (!controlBounds(p, n)) return false;
    add(n);
    return true;
  }
};

Program generate(uint64_t seed, unsigned features) { return Gen(seed, features).generate(); }

} // namespace rp
