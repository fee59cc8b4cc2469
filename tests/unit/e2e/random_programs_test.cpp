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
//   loop    device loops carrying a tile: for_range or while_ from a literal
//           to a literal or a scalar node (data-dependent trip counts, zero
//           included), step 1..3, bodies acc + k * b, maximum(acc, b + k) or
//           acc + a load shifted by k rows (masked to the input); if_ with
//           and without an else on a scalar condition; nests of if_ /
//           for_range (negative steps too) / while_ up to three deep that
//           carry a tile, a scalar and an early-exit flag, their conditions
//           on carried values, loop counters, reductions and scalar nodes
//   dot     dot(a, b[, acc]) of f32 / f16 / bf16 / i8 tiles (casts inserted)
//           with b sometimes trans(...), and matmul loops: acc = dot(A_k,
//           B_k, acc) with A and B loaded at k (B sometimes read transposed,
//           down the columns of an [R, C] input), num_stages 1..3
//   sort    sort, sort with a payload (stable, sometimes with `valid`; past
//           each line's valid count the kernel writes a literal), argsort,
//           topk values / i32 / i64 indices, along either axis, ascending or
//           descending
//   atomic  atomic_add/max/min (i32, f32) and and/or/xor/umax/umin (i32)
//           at (index & 63) in a region of its own, masked or not, every
//           memory order and scope; the regions' final contents are compared
//           (the returned old values depend on the order and are not used)
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

#include "random_programs.hpp"

#include <chrono>
#include "../scoped_env.hpp"

#include <climits>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <sstream>

using namespace tessel;
using namespace rp;

namespace {

// ---------------------------------------------------------------------------
// Running and checking one program

Device &deviceFor(const std::string &arch) {
  static Device gfx942 = Device::emulator("gfx942");
  static Device gfx1100 = Device::emulator("gfx1100");
  return arch == "gfx942" ? gfx942 : gfx1100;
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

// Whether runProgram runs each program in wave form where it can, then as
// fibers, and compares the bytes; how many ran in wave form.
bool gComparePaths = false;
size_t gWaveLaunches = 0;

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
  Buffer<int32_t> ai = dev.upload(atomicInitI(p));
  Buffer<float> af = dev.upload(atomicInitF(p));
  auto in = [&](size_t k) { return k < p.inputs.size() ? p.inputs[k] : p.inputs[0]; };
  auto outM = [&](size_t k) { return k < p.outputs.size() ? p.outputs[k].m : 1; };
  auto outN = [&](size_t k) { return k < p.outputs.size() ? p.outputs[k].n : 1; };
  auto launchInto = [&](std::vector<Buffer<float>> &of, std::vector<Buffer<int32_t>> &oi,
                        std::vector<Buffer<half>> &oh, std::vector<Buffer<bfloat16>> &ob, Buffer<int32_t> &ai,
                        Buffer<float> &af) {
    kernel().launch(dev, {uint32_t(p.gx), uint32_t(p.gy)}, {.num_warps = p.warps, .num_stages = p.stages}, xf[0],
                    xf[1], xf[2], xi[0], xi[1], xi[2], xh[0], xh[1], xh[2], xb[0], xb[1], xb[2], xc[0], xc[1], xc[2],
                    xs[0], xs[1], xs[2], xl[0], xl[1], xl[2], of[0], oi[0], oh[0], ob[0], of[1], oi[1], oh[1], ob[1],
                    ai, af, in(0).m,
                    in(0).n, in(1).m, in(1).n, in(2).m, in(2).n, outM(0), outN(0), outM(1), outN(1), p.ldx, p.ldo,
                    id);
  };
  try {
    if (gComparePaths) {
      // Wave form where it covers the program (it starts as fibers unless asked).
      std::string why;
      try {
        tessel::testing::ScopedEnv waves("TESSEL_EMULATOR_PATH", "waves");
        launchInto(of, oi, oh, ob, ai, af);
        ++gWaveLaunches;
      } catch (const std::exception &e) {
        why = e.what();
      }
      if (!why.empty()) {
        if (why.find("cannot run as waves") == std::string::npos)
          throw std::runtime_error(why);
        launchInto(of, oi, oh, ob, ai, af);
      }
    } else {
      launchInto(of, oi, oh, ob, ai, af);
    }
  } catch (const std::exception &e) {
    return std::string("the kernel failed to compile or run: ") + e.what() + "\n";
  }
  if (gComparePaths) {
    // The emulator's other form (a fiber per thread instead of a wave per
    // call) must leave every output byte the same.
    std::vector<Buffer<float>> of2;
    std::vector<Buffer<int32_t>> oi2;
    std::vector<Buffer<half>> oh2;
    std::vector<Buffer<bfloat16>> ob2;
    for (size_t k = 0; k < 2; ++k) {
      of2.push_back(poisonedOn<float>(dev, sizes[k]));
      oi2.push_back(poisonedOn<int32_t>(dev, sizes[k]));
      oh2.push_back(poisonedOn<half>(dev, sizes[k]));
      ob2.push_back(poisonedOn<bfloat16>(dev, sizes[k]));
    }
    Buffer<int32_t> ai2 = dev.upload(atomicInitI(p));
    Buffer<float> af2 = dev.upload(atomicInitF(p));
    try {
      tessel::testing::ScopedEnv fibers("TESSEL_EMULATOR_PATH", "fibers");
      launchInto(of2, oi2, oh2, ob2, ai2, af2);
    } catch (const std::exception &e) {
      return std::string("the kernel failed to run as fibers: ") + e.what() + "\n";
    }
    auto same = [](auto &a, auto &b) {
      auto x = a.download(), y = b.download();
      return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0;
    };
    for (size_t k = 0; k < 2; ++k)
      if (!same(of[k], of2[k]) || !same(oi[k], oi2[k]) || !same(oh[k], oh2[k]) || !same(ob[k], ob2[k]))
        return "output " + std::to_string(k) + " differs between the emulator's wave and fiber forms\n";
    if (!same(ai, ai2) || !same(af, af2))
      return "the atomic regions differ between the emulator's wave and fiber forms\n";
  }
  std::vector<std::vector<HostTile>> want; // per program, p0-major
  std::vector<int32_t> wantI = atomicInitI(p);
  std::vector<float> wantF = atomicInitF(p);
  for (int p0 = 0; p0 < p.gx; ++p0)
    for (int p1 = 0; p1 < p.gy; ++p1) {
      want.push_back(evaluate(p, d, p0, p1));
      applyAtomics(p, want.back(), wantI, wantF);
    }
  std::ostringstream o;
  size_t wrong = 0;
  auto report = [&](const std::string &line) {
    if (++wrong <= 8) o << "  " << line << "\n";
  };
  // The atomic regions hold what every program's updates leave, in any order.
  std::vector<int32_t> gotI = ai.download();
  std::vector<float> gotF = af.download();
  for (size_t e = 0; e < gotI.size(); ++e) {
    if (gotI[e] != wantI[e])
      report("ai[" + std::to_string(e) + "] = " + std::to_string(gotI[e]) + ", want " + std::to_string(wantI[e]) +
             " (region " + std::to_string(e / kRegion) + ")");
    if (gotF[e] != wantF[e])
      report("af[" + std::to_string(e) + "] = " + std::to_string(gotF[e]) + ", want " + std::to_string(wantF[e]) +
             " (region " + std::to_string(e / kRegion) + ")");
  }
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
// Removes nodes no output needs and renumbers.
Program prune(const Program &p) {
  std::vector<bool> live(p.nodes.size(), false);
  for (const OutputSpec &out : p.outputs) live[out.node] = true;
  for (size_t k = 0; k < p.nodes.size(); ++k) live[k] = live[k] || p.nodes[k].op == Op::Atomic; // side effects
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
    // Drop an atomic (its side effect), or pipelining.
    for (size_t k = 0; k < p.nodes.size(); ++k)
      if (p.nodes[k].op == Op::Atomic) {
        Program q = p;
        q.nodes[k].op = Op::Full; // a harmless constant of the same type and shape
        q.nodes[k].a = q.nodes[k].b = q.nodes[k].c = -1;
        candidates.push_back(prune(q));
      }
    if (p.stages > 1) {
      Program q = p;
      q.stages = 1;
      candidates.push_back(q);
    }
    // Drop one statement of a nest (and what it holds).
    for (size_t k = 0; k < p.nodes.size(); ++k)
      if (p.nodes[k].op == Op::Nest)
        for (int at = 0; at < nestSize(p.nodes[k].stmts); ++at) {
          Program q = p;
          q.nodes[k].stmts = nestWithout(p.nodes[k].stmts, at);
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
    // gfx1100, where f32 dots are multiply-adds on a blocked accumulator:
    // cumsum(x, 0) beside dot(x + y, x + y) failed to compile ("a scan needs
    // one contiguous chunk per thread ... compiler bug": the scan's group had
    // the dot's layout); an f32 dot's result starting the accumulator of an
    // f16 (WMMA) dot loop was an error ("this dot's accumulator is also
    // another dot's, in another layout"); [32, 64] x [64, 32] f32 dots on two
    // waves needed 1024 registers per thread (all threads of a wave along N).
    {13, 0x3c0},
    {88, 0x3c0},
    {465, 0x3c0},
    {660, 0x3c0},
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


// The emulator runs a kernel in wave form (a wave per call, lanes as host
// vectors) where it can, else as a fiber per thread: both must give the same
// bytes. Programs with every feature, each run both ways.
TEST_CASE("random programs give the same bytes in the emulator's wave and fiber forms") {
  gComparePaths = true;
  const uint64_t count = envNumber("TESSEL_RANDOM_PATH_PROGRAMS", 40), first = envNumber("TESSEL_RANDOM_FIRST", 1);
  size_t failures = 0;
  for (uint64_t seed = first; seed < first + count; ++seed)
    failures += !checkCase({seed, kAllFeatures}, false);
  gComparePaths = false;
  MESSAGE(gWaveLaunches << " of " << count << " programs ran in wave form");
  CHECK(failures == 0);
  CHECK(gWaveLaunches >= count / 2); // the comparison means something
}
