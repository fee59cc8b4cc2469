// The random programs' promises: the bound (and error) of every node's
// values, recomputed from its operands' (see random_programs_test.cpp).
#include "random_programs.hpp"

#include <algorithm>
#include <cmath>

namespace rp {

// A result bound over the limit: i32 wraps (with intops), others are rejected.
bool fitsIn(const Program &p, Node &n) {
  if (n.dt == Dt::I32 && p.has(kIntOps)) {
    n.bound = std::min(n.bound, kWide);
    return true;
  }
  if (n.dt == Dt::I64) return n.bound < 1e15;
  return n.bound <= exactLimit(n.dt);
}

// Iterations of k = lo, lo + step, ... while k < hi.
static int64_t tripsOf(int64_t lo, int64_t hi, int64_t step) { return hi <= lo ? 0 : (hi - lo + step - 1) / step; }

// The bound (and err) of a loop, branch, dot, sort or atomic node from its
// operands'; false when the node breaks a promise (inexact where it must be
// exact, too many iterations, a result past the exact range).
bool controlBounds(const Program &p, Node &n) {
  auto B = [&](int o) { return o >= 0 ? p.nodes[o].bound : std::fabs(n.lit); };
  auto exact = [&](int o) { return o < 0 || p.nodes[o].err == 0; };
  n.err = 0;
  switch (n.op) {
  case Op::Loop: {
    if (!exact(n.a) || !exact(n.b) || !exact(n.c)) return false;
    double hiMax = n.hi + (n.c >= 0 ? B(n.c) : 0);
    int64_t trips = tripsOf(n.lo, int64_t(hiMax), n.step);
    if (trips > (n.kind == kLoopDot ? 4 : 8)) return false;
    double kmax = std::max(std::fabs(double(n.lo)), std::fabs(hiMax));
    double ba = B(n.a);
    switch (n.kind) {
    case kLoopAxpy: n.bound = ba + double(trips) * kmax * B(n.b); break;
    case kLoopMax: n.bound = std::max(ba, B(n.b) + kmax); break;
    case kLoopLoad: n.bound = ba + double(trips) * (p.inputs[n.input].wide ? kWide : 8); break;
    default: n.bound = ba + double(trips) * double(p.inputs[n.input].shape[1]) * 64; break;
    }
    if (n.kind == kLoopDot && n.bound > kBoundLimit) return false;
    return fitsIn(p, n);
  }
  case Op::Nest: return nestBounds(p, n);
  case Op::If:
    if (!exact(n.b) || !exact(n.c)) return false;
    n.bound = std::max(B(n.b), B(n.c)) + std::fabs(n.lit);
    return fitsIn(p, n);
  case Op::Dot:
    if (!exact(n.a) || !exact(n.b) || !exact(n.c)) return false;
    n.bound = double(p.nodes[n.a].shape[1]) * B(n.a) * B(n.b) + (n.c >= 0 ? B(n.c) : 0);
    return n.bound <= kBoundLimit;
  case Op::Sort: n.bound = B(n.a), n.err = p.nodes[n.a].err; return true;
  case Op::SortPayload:
    if (!exact(n.a)) return false;
    n.bound = std::max(B(n.b), n.c >= 0 ? std::fabs(n.lit) : 0.0);
    n.err = p.nodes[n.b].err;
    return true;
  case Op::ArgSort: case Op::TopK: {
    const Node &A = p.nodes[n.a];
    int axis = n.axis < 0 ? n.axis + int(A.shape.size()) : n.axis;
    if (n.op == Op::TopK && n.kind == 0) {
      n.bound = A.bound, n.err = A.err;
      return true;
    }
    n.bound = std::max(double(A.shape[axis]), std::fabs(n.lit));
    return exact(n.a);
  }
  default: { // Atomic
    if (!exact(n.a) || !exact(n.b)) return false;
    n.bound = 1;
    if (n.dt == Dt::F32 && n.kind == kAtomicAdd)
      return 20 + B(n.b) * double(numel(n.shape)) * p.gx * p.gy <= kBoundLimit;
    return true;
  }
  }
}

// Recomputes the bound and err of every node from its operands (as the
// generator does) and says whether the program still keeps the generator's
// promises: the shrinker's edits can break them (a bypassed node may have had
// a smaller bound), and a broken promise is a test bug, not a compiler one.
bool consistent(Program &p) {
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
    case Op::Loop: case Op::If: case Op::Dot: case Op::Sort: case Op::SortPayload: case Op::ArgSort: case Op::TopK:
    case Op::Atomic: case Op::Nest:
      if (!controlBounds(p, n)) return false;
      break;
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
    if (n.op != Op::Cast && n.op != Op::Full && n.op != Op::Input && n.op != Op::ScalarLoad && !fitsIn(p, n))
      return false;
  }
  return true;
}

} // namespace rp
