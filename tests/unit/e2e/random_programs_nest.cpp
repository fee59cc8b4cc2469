// Nest nodes of the random programs: bodies of if_ / for_range / while_
// nested up to three deep, carrying a tile, a scalar and a flag (see Stmt).
// What is drawn here, the host evaluation and the bounds; the kernel side
// is in random_programs_kernel.cpp.
#include "random_programs.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace rp {

namespace {

constexpr int kMaxDepth = 3;
constexpr int kMaxStmts = 12;
// Executions of all statements of one Nest (a loop's body counts per trip).
constexpr double kMaxExecutions = 200;

struct Drawer {
  std::mt19937 &rng;
  bool hasC;
  int count = 0;

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool chance(double q) { return std::uniform_real_distribution<double>(0, 1)(rng) < q; }

  std::vector<Stmt> block(int depth, int loops, bool mayBeEmpty) {
    std::vector<Stmt> out;
    int n = mayBeEmpty && chance(0.2) ? 0 : uniform(1, 3);
    for (int i = 0; i < n && count < kMaxStmts; ++i) out.push_back(stmt(depth, loops));
    return out;
  }

  Stmt stmt(int depth, int loops) {
    ++count;
    Stmt s;
    int r = uniform(0, depth >= kMaxDepth ? 5 : 11);
    if (r <= 2) {
      s.kind = Stmt::AddAcc;
      s.lit = uniform(-3, 3);
      if (loops > 0 && chance(0.6)) s.k = uniform(0, loops - 1);
      s.useB = chance(0.3);
    } else if (r <= 4) {
      s.kind = Stmt::AddS;
      s.lit = uniform(0, 3);
    } else if (r == 5) {
      s.kind = Stmt::SetDone;
      s.lit = uniform(0, 6);
    } else if (r <= 8) {
      s.kind = Stmt::If;
      std::vector<int> conds{0, 2, 4};
      if (loops > 0) conds.push_back(1);
      if (hasC) conds.push_back(3);
      s.cond = conds[size_t(uniform(0, int(conds.size()) - 1))];
      s.lit = s.cond == 1 ? uniform(-1, 1) : uniform(-2, 5);
      if (s.cond == 1) s.k = uniform(0, loops - 1);
      s.hasElse = chance(0.5);
      s.body = block(depth + 1, loops, s.hasElse);
      if (s.hasElse) s.orelse = block(depth + 1, loops, true);
    } else if (r <= 10) {
      s.kind = Stmt::For;
      const int steps[] = {1, 1, 2, -1, -2};
      s.step = steps[uniform(0, 4)];
      if (s.step > 0) {
        s.lo = uniform(-2, 1);
        s.hiFromC = hasC && chance(0.4);
        s.hi = s.hiFromC ? uniform(-2, 0) : s.lo + uniform(-1, 4);
      } else {
        s.lo = uniform(0, 3);
        s.hi = s.lo - uniform(-1, 4);
      }
      s.body = block(depth + 1, loops + 1, false);
    } else {
      s.kind = Stmt::While;
      s.lit = uniform(0, 3);
      s.body = block(depth + 1, loops, true);
    }
    return s;
  }
};

// Iterations of Python's range(lo, hi, step).
int64_t trips(int64_t lo, int64_t hi, int64_t step) {
  if (step > 0) return hi <= lo ? 0 : (hi - lo + step - 1) / step;
  return hi >= lo ? 0 : (lo - hi - step - 1) / -step;
}

// Worst cases over a body run `times` times: what it adds to |acc| and to s,
// and how many statements it executes.
struct Reach {
  double acc = 0, s = 0, executions = 0;
};

void reach(const std::vector<Stmt> &stmts, double times, std::vector<double> &kmax, double b, double c, Reach &r) {
  for (const Stmt &s : stmts) {
    r.executions += times;
    switch (s.kind) {
    case Stmt::AddAcc:
      r.acc += times * (std::fabs(double(s.lit)) + (s.k >= 0 ? kmax[size_t(s.k)] : 0) + (s.useB ? b : 0));
      break;
    case Stmt::AddS: r.s += times * s.lit; break;
    case Stmt::SetDone: break;
    case Stmt::If:
      reach(s.body, times, kmax, b, c, r);
      reach(s.orelse, times, kmax, b, c, r);
      break;
    case Stmt::For: {
      double hiMax = s.hi + (s.hiFromC ? c : 0);
      double n = double(trips(s.lo, int64_t(hiMax), s.step));
      kmax.push_back(std::max(std::fabs(double(s.lo)), std::fabs(hiMax)) + 2);
      reach(s.body, times * n, kmax, b, c, r);
      kmax.pop_back();
      break;
    }
    case Stmt::While: {
      // s never decreases and the body adds at least 1: at most lit trips.
      double n = std::max(0, s.lit);
      reach(s.body, times * n, kmax, b, c, r);
      r.s += times * n;
      break;
    }
    }
  }
}

double wrapIn(Dt dt, double x) { return dt == Dt::I32 ? double(int32_t(uint32_t(int64_t(x)))) : x; }

struct Machine {
  const Node &n;
  const HostTile *b;
  double c;
  HostTile &acc;
  int64_t s = 0;
  bool done = false;
  std::vector<int64_t> ks;

  bool holds(const Stmt &st) const {
    switch (st.cond) {
    case 0: return s > st.lit;
    case 1: return ks[size_t(st.k)] % 2 == st.lit;
    case 2: return !done;
    case 3: return c > st.lit;
    default: return *std::max_element(acc.v.begin(), acc.v.end()) > st.lit;
    }
  }

  void run(const std::vector<Stmt> &stmts) {
    for (const Stmt &st : stmts) {
      switch (st.kind) {
      case Stmt::AddAcc:
        for (size_t f = 0; f < acc.v.size(); ++f) {
          double x = acc.v[f] + st.lit;
          if (st.k >= 0) x += double(ks[size_t(st.k)]);
          if (st.useB) x += b->v[f];
          acc.v[f] = wrapIn(n.dt, x);
        }
        break;
      case Stmt::AddS: s += st.lit; break;
      case Stmt::SetDone: done = done || s > st.lit; break;
      case Stmt::If: run(holds(st) ? st.body : st.orelse); break;
      case Stmt::For: {
        int64_t hi = st.hi + (st.hiFromC ? int64_t(c) : 0);
        for (int64_t k = st.lo; st.step > 0 ? k < hi : k > hi; k += st.step) {
          ks.push_back(k);
          run(st.body);
          ks.pop_back();
        }
        break;
      }
      case Stmt::While:
        while (s < st.lit && !done) {
          run(st.body);
          s += 1;
        }
        break;
      }
    }
  }
};

void text(const std::vector<Stmt> &stmts, std::ostringstream &o) {
  auto k = [](int depth) { return "k" + std::to_string(depth); };
  for (const Stmt &s : stmts) {
    switch (s.kind) {
    case Stmt::AddAcc:
      o << "acc = acc + " << s.lit << (s.k >= 0 ? " + " + k(s.k) : "") << (s.useB ? " + b" : "") << "; ";
      break;
    case Stmt::AddS: o << "s = s + " << s.lit << "; "; break;
    case Stmt::SetDone: o << "done = done | (s > " << s.lit << "); "; break;
    case Stmt::If: {
      const char *conds[] = {"s > ", "", "!done", "c > ", "max(acc) > "};
      o << "if_(";
      if (s.cond == 1) o << k(s.k) << " % 2 == " << s.lit;
      else o << conds[s.cond] << (s.cond == 2 ? "" : std::to_string(s.lit));
      o << ", { ";
      text(s.body, o);
      o << "}";
      if (s.hasElse) {
        o << ", { ";
        text(s.orelse, o);
        o << "}";
      }
      o << "); ";
      break;
    }
    case Stmt::For:
      o << "for_range(" << s.lo << ", " << s.hi << (s.hiFromC ? " + c" : "") << ", " << s.step << ", k) { ";
      text(s.body, o);
      o << "} ";
      break;
    case Stmt::While:
      o << "while_(s < " << s.lit << " & !done) { ";
      text(s.body, o);
      o << "s = s + 1; } ";
      break;
    }
  }
}

void key(const std::vector<Stmt> &stmts, std::ostringstream &o) {
  o << '[';
  for (const Stmt &s : stmts) {
    o << int(s.kind) << ',' << s.lit << ',' << s.k << ',' << s.useB << ',' << s.cond << ',' << s.hasElse << ','
      << s.lo << ',' << s.hi << ',' << s.step << ',' << s.hiFromC;
    key(s.body, o);
    key(s.orelse, o);
  }
  o << ']';
}

// Copies `stmts` without the statement numbered `index` (pre-order), counting down `index`.
std::vector<Stmt> without(const std::vector<Stmt> &stmts, int &index) {
  std::vector<Stmt> out;
  for (const Stmt &s : stmts) {
    if (index-- == 0) continue;
    Stmt copy = s;
    copy.body = without(s.body, index);
    copy.orelse = without(s.orelse, index);
    out.push_back(std::move(copy));
  }
  return out;
}

// Whether every loop variable a statement names is that of an enclosing
// loop, and c is read only when the node has one.
bool wellFormed(const std::vector<Stmt> &stmts, int loops, bool hasC) {
  for (const Stmt &s : stmts) {
    if ((s.kind == Stmt::AddAcc || (s.kind == Stmt::If && s.cond == 1)) && s.k >= loops) return false;
    if (!hasC && ((s.kind == Stmt::If && s.cond == 3) || s.hiFromC)) return false;
    if (!wellFormed(s.body, loops + (s.kind == Stmt::For), hasC) || !wellFormed(s.orelse, loops, hasC)) return false;
  }
  return true;
}

} // namespace

std::vector<Stmt> drawNest(std::mt19937 &rng, bool hasC) {
  Drawer d{rng, hasC};
  return d.block(0, 0, false);
}

bool nestBounds(const Program &p, Node &n) {
  auto exact = [&](int o) { return o < 0 || p.nodes[o].err == 0; };
  if (!exact(n.a) || !exact(n.b) || !exact(n.c) || !wellFormed(n.stmts, 0, n.c >= 0)) return false;
  std::vector<double> kmax;
  Reach r;
  double b = n.b >= 0 ? p.nodes[n.b].bound : 0, c = n.c >= 0 ? p.nodes[n.c].bound : 0;
  reach(n.stmts, 1, kmax, b, c, r);
  if (r.executions > kMaxExecutions) return false;
  n.err = 0;
  n.bound = (n.a >= 0 ? p.nodes[n.a].bound : std::fabs(n.lit)) + r.acc + r.s + 1;
  return fitsIn(p, n);
}

void evaluateNest(const Node &n, const HostTile *a, const HostTile *b, double c, HostTile &r) {
  if (a) r.v = a->v;
  else std::fill(r.v.begin(), r.v.end(), n.lit);
  Machine m{n, b, c, r};
  m.run(n.stmts);
  for (double &x : r.v) x = wrapIn(n.dt, x + double(m.s) + (m.done ? 1 : 0));
}

std::string nestText(const std::vector<Stmt> &stmts) {
  std::ostringstream o;
  text(stmts, o);
  return o.str();
}

std::string nestKey(const std::vector<Stmt> &stmts) {
  std::ostringstream o;
  key(stmts, o);
  return o.str();
}

int nestSize(const std::vector<Stmt> &stmts) {
  int n = 0;
  for (const Stmt &s : stmts) n += 1 + nestSize(s.body) + nestSize(s.orelse);
  return n;
}

std::vector<Stmt> nestWithout(const std::vector<Stmt> &stmts, int index) { return without(stmts, index); }

} // namespace rp
