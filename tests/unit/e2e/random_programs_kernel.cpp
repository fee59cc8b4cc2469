// The random programs' kernel: one block program that interprets, at trace
// time, the program registered under its Const id (see random_programs_test.cpp).
#include "random_programs.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <random>
#include <sstream>
#include <optional>
#include <stdexcept>
#include <tuple>

using namespace tessel;

namespace rp {

// ---------------------------------------------------------------------------
// The kernel: interprets the program registered under `id` at trace time.

std::map<uint64_t, Program> &registry() {
  static std::map<uint64_t, Program> programs;
  return programs;
}

namespace {

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

template <class E> Ptr<E> ptrOf(const InPtrs &x) {
  if constexpr (std::is_same_v<E, float>) return x.f;
  else if constexpr (std::is_same_v<E, int32_t>) return x.i;
  else if constexpr (std::is_same_v<E, half>) return x.h;
  else if constexpr (std::is_same_v<E, bfloat16>) return x.b;
  else if constexpr (std::is_same_v<E, int8_t>) return x.c;
  else if constexpr (std::is_same_v<E, int16_t>) return x.s;
  else return x.l;
}

template <class E>
constexpr bool kArith = std::is_same_v<E, float> || std::is_same_v<E, int32_t> || std::is_same_v<E, half> ||
                        std::is_same_v<E, bfloat16>;

// A Nest node's body run at trace time: device if_ / for_range / while_
// nested as the statements say, carrying acc, s and done (see Stmt).
template <class E> struct NestRun {
  const Node &n;
  const std::vector<V> &v;
  Tile<E> acc;
  i32 s = full({}, 0);
  i1 done = full({}, false);
  // The enclosing loops' k. A deque: growing it never moves a Tile (moving
  // one reads it, and a read in a loop body carries the old object, not the
  // moved-to one, through that loop).
  std::deque<i32> ks;

  i1 holds(const Stmt &st) {
    switch (st.cond) {
    case 0: return s > st.lit;
    case 1: return ks[size_t(st.k)] % 2 == st.lit;
    case 2: return !done;
    case 3: return v[n.c].i > st.lit;
    default: {
      Tile<E> m = acc;
      while (m.rank() > 0) m = max(m, 0);
      return m > literal<E>(st.lit);
    }
    }
  }

  void run(const std::vector<Stmt> &stmts) {
    for (const Stmt &st : stmts) {
      switch (st.kind) {
      case Stmt::AddAcc:
        acc = acc + literal<E>(st.lit);
        if (st.k >= 0) acc = acc + cast<E>(ks[size_t(st.k)]);
        if (st.useB) acc = acc + get<E>(v[n.b]);
        break;
      case Stmt::AddS: s = s + st.lit; break;
      case Stmt::SetDone: done = done | (s > st.lit); break;
      case Stmt::If:
        if (st.hasElse) if_(holds(st), [&] { run(st.body); }, [&] { run(st.orelse); });
        else if_(holds(st), [&] { run(st.body); });
        break;
      case Stmt::For: {
        auto body = [&](i32 k) {
          ks.push_back(k);
          run(st.body);
          ks.pop_back();
        };
        if (st.hiFromC) for_range(st.lo, v[n.c].i + st.hi, st.step, body);
        else for_range(st.lo, st.hi, st.step, body);
        break;
      }
      case Stmt::While:
        while_([&] { return (s < st.lit) & !done; }, [&] {
          run(st.body);
          s = s + 1;
        });
        break;
      }
    }
  }
};

} // namespace

void random_program(Ptr<f32> xf0, Ptr<f32> xf1, Ptr<f32> xf2, Ptr<i32> xi0, Ptr<i32> xi1, Ptr<i32> xi2,
                    Ptr<f16> xh0, Ptr<f16> xh1, Ptr<f16> xh2, Ptr<bf16> xb0, Ptr<bf16> xb1, Ptr<bf16> xb2,
                    Ptr<i8> xc0, Ptr<i8> xc1, Ptr<i8> xc2, Ptr<i16> xs0, Ptr<i16> xs1, Ptr<i16> xs2,
                    Ptr<i64> xl0, Ptr<i64> xl1, Ptr<i64> xl2, Ptr<f32> of0, Ptr<i32> oi0, Ptr<f16> oh0,
                    Ptr<bf16> ob0, Ptr<f32> of1, Ptr<i32> oi1, Ptr<f16> oh1, Ptr<bf16> ob1, Ptr<i32> ai,
                    Ptr<f32> af, i32 m0, i32 n0, i32 m1,
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

  // Input k's tile shifted by `rs` rows (2-D) or elements (1-D) and `cs`
  // columns, read as E, 0 outside the input's extents. Transposed: the
  // [C, R] tile whose (kk, j) is the [R, C] input's (j, kk), read down its
  // columns.
  auto shiftedLoad = [&]<class E>(std::type_identity<E>, int k, const std::optional<i32> &rs,
                                  const std::optional<i32> &cs, bool transposed) -> Tile<E> {
    const InputSpec &in = p.inputs[k];
    Ptr<E> ptr = ptrOf<E>(x[k]);
    int limC = int(std::min<int64_t>(in.n, globalColsIn(p, in)));
    if (in.shape.size() == 1) {
      int len = int(in.shape[0]);
      i32 idx = !p.grid() ? arange(0, len) : program_id(in.axis) * len + arange(0, len);
      if (rs) idx = idx + *rs;
      return load(ptr + idx, idx < limC, literal<E>(0));
    }
    int limR = int(std::min<int64_t>(in.m, globalRows(p, in.shape)));
    i32 rows = rowIdx(in.shape[0]), cols = colIdx(in.shape[1]);
    if (rs) rows = rows + *rs;
    if (cs) cols = cols + *cs;
    if (!transposed) {
      auto ok = expand_dims(rows < limR, 1) & expand_dims(cols < limC, 0);
      return load(ptr + expand_dims(rows, 1) * ldx + expand_dims(cols, 0), ok, literal<E>(0));
    }
    auto ok = expand_dims(cols < limC, 1) & expand_dims(rows < limR, 0);
    return load(ptr + expand_dims(rows, 0) * ldx + expand_dims(cols, 1), ok, literal<E>(0));
  };

  std::vector<V> v;

  // One step of a matmul loop: acc + A_k B_k, A and B loaded as n.inDt.
  auto dotStep = [&]<class Acc>(const Node &n, const Tile<Acc> &acc, const i32 &k) -> Tile<Acc> {
    auto step = [&]<class In>(std::type_identity<In> in) -> Tile<Acc> {
      if constexpr (std::is_same_v<detail::dot_acc_t<In>, Acc>) {
        Tile<In> a = shiftedLoad(in, n.input, std::nullopt, k, false);
        Tile<In> b = n.transB ? shiftedLoad(in, n.input2, std::nullopt, k, true)
                              : shiftedLoad(in, n.input2, k, std::nullopt, false);
        return dot(a, b, acc);
      } else {
        generatorBug("dot accumulator type");
      }
    };
    switch (n.inDt) {
    case Dt::F32: return step(std::type_identity<float>{});
    case Dt::F16: return step(std::type_identity<half>{});
    case Dt::BF16: return step(std::type_identity<bfloat16>{});
    default: return step(std::type_identity<int8_t>{});
    }
  };

  // Past each line's count of valid elements, a sorted tile holds n.lit.
  auto padPastValid = [&]<class P>(const Node &n, const Tile<P> &sorted) -> Tile<P> {
    if (n.c < 0) return sorted;
    const Dims &s = p.nodes[n.a].shape;
    int rank = int(s.size()), axis = n.axis < 0 ? n.axis + rank : n.axis;
    i32 count = sum(v[n.c].b, n.axis, true);
    i32 line = arange(0, int(s[axis]));
    i32 pos = rank == 1 ? line : expand_dims(line, axis == 0 ? 1 : 0);
    return where(pos < count, sorted, literal<P>(n.lit));
  };

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
    case Op::Loop:
      v.push_back(dispatch(n.dt, [&](auto tag) {
        using E = typename decltype(tag)::type;
        if constexpr (!kArith<E>) {
          generatorBug("a loop over a non-arithmetic type");
          return get<E>(v[0]);
        } else {
          Tile<E> acc = n.a >= 0 ? get<E>(v[n.a]) : full<E>(n.shape, literal<E>(n.lit));
          auto body = [&](const i32 &k) {
            switch (n.kind) {
            case kLoopAxpy: acc = acc + cast<E>(k) * get<E>(v[n.b]); break;
            case kLoopMax: acc = maximum(acc, get<E>(v[n.b]) + cast<E>(k)); break;
            case kLoopLoad: acc = acc + shiftedLoad(std::type_identity<E>{}, n.input, k, std::nullopt, false); break;
            default:
              if constexpr (std::is_same_v<E, float> || std::is_same_v<E, int32_t>) acc = dotStep(n, acc, k);
              else generatorBug("a matmul loop accumulating in a 16-bit type");
              break;
            }
          };
          if (n.flag) {
            i32 k = full({}, n.lo);
            while_([&] { return n.c >= 0 ? k < v[n.c].i + n.hi : k < n.hi; },
                   [&] {
                     body(k);
                     k = k + n.step;
                   });
          } else if (n.c >= 0) {
            for_range(n.lo, v[n.c].i + n.hi, n.step, body);
          } else {
            for_range(n.lo, n.hi, n.step, body);
          }
          return acc;
        }
      }));
      break;
    case Op::Nest:
      v.push_back(dispatch(n.dt, [&](auto tag) {
        using E = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<E, float> && !std::is_same_v<E, int32_t>) {
          generatorBug("a nest over a type other than f32 and i32");
          return get<E>(v[0]);
        } else {
          NestRun<E> r{n, v, n.a >= 0 ? get<E>(v[n.a]) : full<E>(n.shape, literal<E>(n.lit))};
          r.run(n.stmts);
          return r.acc + cast<E>(r.s) + cast<E>(r.done);
        }
      }));
      break;
    case Op::If:
      v.push_back(dispatch(n.dt, [&](auto tag) {
        using E = typename decltype(tag)::type;
        Tile<E> r = get<E>(v[n.c]);
        if constexpr (!kArith<E>) {
          generatorBug("if_ over a non-arithmetic type");
        } else {
          i1 c = v[n.a].b;
          auto then = [&] { r = get<E>(v[n.b]) + literal<E>(n.lit); };
          if (n.flag) if_(c, then, [&] { r = r - literal<E>(n.lit); });
          else if_(c, then);
        }
        return r;
      }));
      break;
    case Op::Dot:
      v.push_back(dispatch(v[n.a].dt, [&](auto tag) -> V {
        using In = typename decltype(tag)::type;
        if constexpr (std::is_void_v<detail::dot_acc_t<In>>) {
          generatorBug("dot of a type dot does not take");
        } else {
          using Acc = detail::dot_acc_t<In>;
          Tile<In> a = get<In>(v[n.a]);
          Tile<In> b = n.transB ? trans(get<In>(v[n.b])) : get<In>(v[n.b]);
          if (n.c >= 0) return wrap(dot(a, b, get<Acc>(v[n.c])));
          return wrap(dot(a, b));
        }
      }));
      break;
    case Op::Sort: case Op::SortPayload: case Op::ArgSort: case Op::TopK:
      v.push_back(dispatch(v[n.a].dt, [&](auto tag) -> V {
        using K = typename decltype(tag)::type;
        if constexpr (std::is_same_v<K, bool>) {
          generatorBug("sort of bool keys");
        } else {
          Tile<K> keys = get<K>(v[n.a]);
          SortOptions o{.axis = n.axis, .descending = n.flag, .stable = n.op != Op::Sort};
          if (n.c >= 0) o.valid = v[n.c].b;
          switch (n.op) {
          case Op::Sort: return wrap(sort(keys, o));
          case Op::ArgSort: return wrap(padPastValid(n, argsort(keys, o)));
          case Op::SortPayload:
            return dispatch(n.dt, [&](auto ptag) {
              using P = typename decltype(ptag)::type;
              return padPastValid(n, std::get<1>(sort(keys, get<P>(v[n.b]), o)));
            });
          default: {
            TopkOptions t{.axis = n.axis, .largest = n.flag};
            if (n.kind == 0) return wrap(std::get<0>(topk(keys, n.k, t)));
            if (n.kind == 1) return wrap(std::get<1>(topk(keys, n.k, t)));
            return wrap(std::get<1>(topk<int64_t>(keys, n.k, t)));
          }
          }
        }
      }));
      break;
    case Op::Atomic: {
      int region = regionOf(p, int(&n - p.nodes.data()));
      i32 slot = (v[n.a].i & (kRegion - 1)) + region * kRegion;
      AtomicOrder order{MemSem(n.order / 4), MemScope(n.order % 4)};
      auto apply = [&]<class E>(std::type_identity<E>, Ptr<E> base) -> V {
        auto ptrs = base + slot;
        auto go = [&](const auto &value) -> Tile<E> {
#define RP_ATOMIC(FN) return n.c >= 0 ? FN(ptrs, value, v[n.c].b, order) : FN(ptrs, value, order)
          switch (n.kind) {
          case kAtomicAdd: RP_ATOMIC(atomic_add);
          case kAtomicMax: RP_ATOMIC(atomic_max);
          case kAtomicMin: RP_ATOMIC(atomic_min);
          default: break;
          }
          if constexpr (std::is_same_v<E, int32_t>) {
            switch (n.kind) {
            case kAtomicAnd: RP_ATOMIC(atomic_and);
            case kAtomicOr: RP_ATOMIC(atomic_or);
            case kAtomicXor: RP_ATOMIC(atomic_xor);
            case kAtomicUmax: RP_ATOMIC(atomic_umax);
            default: RP_ATOMIC(atomic_umin);
            }
          }
#undef RP_ATOMIC
          generatorBug("atomic kind");
        };
        if (n.b >= 0) return wrap(go(get<E>(v[n.b])));
        return wrap(go(literal<E>(n.lit)));
      };
      v.push_back(n.dt == Dt::I32 ? apply(std::type_identity<int32_t>{}, ai) : apply(std::type_identity<float>{}, af));
      break;
    }
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

RandomKernel &kernel() {
  static auto k = jit<random_program>();
  return k;
}

} // namespace rp
