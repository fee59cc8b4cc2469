// The host reference of the random programs (see random_programs_test.cpp).
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
// The host reference: doubles (exact for these values), bools as 0 / 1,
// integers wrapped to their width like the GPU's; inexact (err > 0) nodes
// hold the double-precision value.


// Element of `t` that broadcasts to index (i, j) of a result of rank `rank`.
static double at(const HostTile &t, size_t rank, int64_t i, int64_t j) {
  if (t.shape.empty()) return t.v[0];
  if (t.shape.size() == 1) {
    int64_t k = rank == 2 ? j : i;
    return t.v[t.shape[0] == 1 ? 0 : k];
  }
  return t.v[(t.shape[0] == 1 ? 0 : i) * t.shape[1] + (t.shape[1] == 1 ? 0 : j)];
}



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

static double wrapTo(Dt dt, double x) {
  switch (dt) {
  case Dt::I32: return double(int32_t(uint32_t(uint64_t(int64_t(x)))));
  case Dt::I8: return double(int8_t(uint8_t(uint64_t(int64_t(x)))));
  case Dt::I16: return double(int16_t(uint16_t(uint64_t(int64_t(x)))));
  default: return x;
  }
}

// An exact int64 wrapped to i32.
static double w32(int64_t x) { return double(int32_t(uint32_t(uint64_t(x)))); }

// cast<to>(x) for x of type `from`.
static double castHost(Dt from, Dt to, double x) {
  switch (to) {
  case Dt::Bool: return double(x != 0);
  case Dt::F32: return double(float(x));
  case Dt::F16: return double(float(half(float(x))));
  case Dt::BF16: return double(float(bfloat16(float(x))));
  case Dt::I64: return std::trunc(x);
  default: return isFloatDt(from) ? std::trunc(x) : wrapTo(to, x);
  }
}

static double inputValue(const Program &p, const HostData &d, int k, size_t off) {
  return isFloatDt(p.inputs[k].dt) ? double(d.xf[k][off]) : double(d.xi[k][off]);
}

// i32 arithmetic wraps; the other types' values stay exact (bounded).
static double arithIn(Dt dt, double x) { return dt == Dt::I32 ? w32(int64_t(x)) : x; }

// Element (i, j) (or i of a 1-D tile) of input k's tile in program (p0, p1)
// shifted by `shift` rows (2-D) or elements (1-D) and `colShift` columns,
// read as `view`; 0 outside the input's extents (the kernel masks those).
static double shiftedInput(const Program &p, const HostData &d, int k, Dt view, int p0, int p1, int64_t i,
                           int64_t j, int64_t shift, int64_t colShift) {
  const InputSpec &in = p.inputs[k];
  bool two = in.shape.size() == 2;
  int64_t limR = std::min<int64_t>(in.m, globalRows(p, in.shape));
  int64_t limC = std::min<int64_t>(in.n, globalColsIn(p, in));
  int64_t row = two ? int64_t(p0) * in.shape[0] + i + shift : 0;
  int64_t col = two ? int64_t(p1) * in.shape[1] + j + colShift
                    : int64_t(in.axis == 0 ? p0 : p1) * in.shape[0] + i + shift;
  if (row < 0 || col < 0 || (two && row >= limR) || col >= limC) return 0;
  size_t off = size_t(row) * p.ldx + size_t(col);
  if (view == Dt::I8) return double(int8_t(d.xi[k][off]));
  if (isFloatDt(view)) return double(d.xf[k][off]);
  return double(d.xi[k][off]);
}

// The lines of a tile of shape `s` along `axis`: start, stride, length.
struct Line {
  int64_t start, stride, len;
};
static std::vector<Line> linesOf(const Dims &s, int axis) {
  std::vector<Line> lines;
  if (s.size() == 1) return {{0, 1, s[0]}};
  if (axis == 0)
    for (int64_t c = 0; c < s[1]; ++c) lines.push_back({c, s[1], s[0]});
  else
    for (int64_t r = 0; r < s[0]; ++r) lines.push_back({r * s[1], 1, s[1]});
  return lines;
}

// Positions 0..len-1 of a line ordered by key (stable: ties keep their
// order), descending if asked; with `valid`, the valid ones first.
static std::vector<int64_t> sortedOrder(const std::vector<double> &keys, bool descending,
                                        const std::vector<bool> *valid = nullptr) {
  std::vector<int64_t> idx(keys.size());
  for (size_t e = 0; e < idx.size(); ++e) idx[e] = int64_t(e);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t x, int64_t y) {
    if (valid && (*valid)[x] != (*valid)[y]) return bool((*valid)[x]);
    return descending ? keys[x] > keys[y] : keys[x] < keys[y];
  });
  return idx;
}

static int normAxis(int axis, size_t rank) { return axis < 0 ? axis + int(rank) : axis; }

// The value of a Loop node in program (p0, p1).
static void evaluateLoop(const Program &p, const HostData &d, const std::vector<HostTile> &t, const Node &n,
                         HostTile &acc, int p0, int p1) {
  if (n.a >= 0) acc.v = t[n.a].v;
  else std::fill(acc.v.begin(), acc.v.end(), n.lit);
  int64_t hi = n.hi + (n.c >= 0 ? int64_t(t[n.c].v[0]) : 0);
  size_t rank = n.shape.size();
  for (int64_t k = n.lo; k < hi; k += n.step) {
    switch (n.kind) {
    case kLoopAxpy:
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) {
        acc.v[f] = arithIn(n.dt, acc.v[f] + arithIn(n.dt, double(k) * at(t[n.b], rank, i, j)));
      });
      break;
    case kLoopMax:
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) {
        acc.v[f] = std::max(acc.v[f], arithIn(n.dt, at(t[n.b], rank, i, j) + double(k)));
      });
      break;
    case kLoopLoad:
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) {
        acc.v[f] = arithIn(n.dt, acc.v[f] + shiftedInput(p, d, n.input, n.dt, p0, p1, i, j, k, 0));
      });
      break;
    default: { // kLoopDot: [M, K] x [K, N], K = A's columns
      int64_t K = p.inputs[n.input].shape[1];
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) {
        double s = 0;
        for (int64_t kk = 0; kk < K; ++kk) {
          double a = shiftedInput(p, d, n.input, n.inDt, p0, p1, i, kk, 0, k);
          double b = n.transB ? shiftedInput(p, d, n.input2, n.inDt, p0, p1, j, kk, 0, k)
                              : shiftedInput(p, d, n.input2, n.inDt, p0, p1, kk, j, k, 0);
          s += a * b;
        }
        acc.v[f] = arithIn(n.dt, acc.v[f] + s);
      });
      break;
    }
    }
  }
}

// The value of a sort, argsort or topk node.
static void evaluateSort(const std::vector<HostTile> &t, const Node &n, HostTile &r) {
  const HostTile &A = t[n.a];
  int axis = normAxis(n.axis, A.shape.size());
  std::vector<Line> in = linesOf(A.shape, axis), out = linesOf(n.shape, axis);
  for (size_t l = 0; l < in.size(); ++l) {
    std::vector<double> keys(size_t(in[l].len));
    std::vector<bool> valid(keys.size(), true);
    for (int64_t e = 0; e < in[l].len; ++e) {
      keys[e] = A.v[in[l].start + e * in[l].stride];
      if (n.c >= 0) valid[e] = t[n.c].v[in[l].start + e * in[l].stride] != 0;
    }
    // TopK's flag is `largest`: descending.
    std::vector<int64_t> order = sortedOrder(keys, n.flag, n.c >= 0 ? &valid : nullptr);
    int64_t count = 0;
    for (bool v : valid) count += v;
    for (int64_t e = 0; e < out[l].len; ++e) {
      int64_t from = order[e];
      double x;
      switch (n.op) {
      case Op::Sort: x = keys[from]; break;
      case Op::SortPayload: x = t[n.b].v[in[l].start + from * in[l].stride]; break;
      case Op::ArgSort: x = double(from); break;
      default: x = n.kind == 0 ? keys[from] : double(from); break; // TopK
      }
      if ((n.op == Op::SortPayload || n.op == Op::ArgSort) && n.c >= 0 && e >= count) x = n.lit;
      r.v[out[l].start + e * out[l].stride] = x;
    }
  }
}

int regionOf(const Program &p, int node) {
  int r = 0;
  for (int q = 0; q < node; ++q) r += p.nodes[q].op == Op::Atomic;
  return r;
}

static std::vector<int32_t> atomicInit(const Program &p) {
  std::seed_seq seq{uint32_t(p.seed), uint32_t(p.seed >> 32), 0xa70bu};
  std::mt19937 rng(seq);
  std::vector<int32_t> v(size_t(kRegions) * kRegion);
  for (int32_t &x : v) x = int32_t(rng() % 41) - 20;
  return v;
}
std::vector<int32_t> atomicInitI(const Program &p) { return atomicInit(p); }
std::vector<float> atomicInitF(const Program &p) {
  std::vector<int32_t> i = atomicInit(p);
  std::vector<float> f(i.size());
  for (size_t e = 0; e < i.size(); ++e) f[e] = float(i[(e * 7 + 3) % i.size()]);
  return f;
}

void applyAtomics(const Program &p, const std::vector<HostTile> &t, std::vector<int32_t> &ai,
                  std::vector<float> &af) {
  for (size_t q = 0; q < p.nodes.size(); ++q) {
    const Node &n = p.nodes[q];
    if (n.op != Op::Atomic) continue;
    size_t base = size_t(regionOf(p, int(q))) * kRegion, rank = n.shape.size();
    forEach(n.shape, [&](int64_t i, int64_t j, int64_t) {
      if (n.c >= 0 && at(t[n.c], rank, i, j) == 0) return;
      size_t slot = base + size_t(int32_t(at(t[n.a], rank, i, j)) & (kRegion - 1));
      double v = n.b >= 0 ? at(t[n.b], rank, i, j) : n.lit;
      if (n.dt == Dt::F32) {
        float &m = af[slot], x = float(v);
        m = n.kind == kAtomicAdd ? m + x : n.kind == kAtomicMax ? std::max(m, x) : std::min(m, x);
        return;
      }
      int32_t &m = ai[slot], x = int32_t(int64_t(v));
      uint32_t um = uint32_t(m), ux = uint32_t(x);
      switch (n.kind) {
      case kAtomicAdd: m = int32_t(um + ux); break;
      case kAtomicMax: m = std::max(m, x); break;
      case kAtomicMin: m = std::min(m, x); break;
      case kAtomicAnd: m &= x; break;
      case kAtomicOr: m |= x; break;
      case kAtomicXor: m ^= x; break;
      case kAtomicUmax: m = int32_t(std::max(um, ux)); break;
      default: m = int32_t(std::min(um, ux)); break;
      }
    });
  }
}

// The values of every node in program instance (p0, p1).
std::vector<HostTile> evaluate(const Program &p, const HostData &d, int p0, int p1) {
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
    case Op::Loop: evaluateLoop(p, d, t, n, r, p0, p1); break;
    case Op::Nest:
      evaluateNest(n, n.a >= 0 ? &t[n.a] : nullptr, &t[n.b], n.c >= 0 ? t[n.c].v[0] : 0, r);
      break;
    case Op::If:
      for (size_t f = 0; f < r.v.size(); ++f)
        r.v[f] = t[n.a].v[0] != 0 ? arithIn(n.dt, t[n.b].v[f] + n.lit)
                                  : n.flag ? arithIn(n.dt, t[n.c].v[f] - n.lit) : t[n.c].v[f];
      break;
    case Op::Dot: {
      const HostTile &A = t[n.a], &B = t[n.b];
      int64_t K = A.shape[1];
      forEach(n.shape, [&](int64_t i, int64_t j, int64_t f) {
        double s = n.c >= 0 ? t[n.c].v[f] : 0;
        for (int64_t kk = 0; kk < K; ++kk)
          s += A.v[i * K + kk] * (n.transB ? B.v[j * K + kk] : B.v[kk * n.shape[1] + j]);
        r.v[f] = arithIn(n.dt, s);
      });
      break;
    }
    case Op::Sort: case Op::SortPayload: case Op::ArgSort: case Op::TopK: evaluateSort(t, n, r); break;
    case Op::Atomic: break; // a statement (applyAtomics)
    case Op::Sum: case Op::RMax: case Op::RMin: case Op::ArgMax: case Op::ArgMin: case Op::Cumsum: {
      const HostTile &A = t[n.a];
      std::vector<Line> lines = linesOf(A.shape, normAxis(n.axis, A.shape.size()));
      for (size_t line = 0; line < lines.size(); ++line) {
        const int64_t start = lines[line].start, stride = lines[line].stride, len = lines[line].len;
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

} // namespace rp
