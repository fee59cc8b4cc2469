// Broadcasting and the nodes the tracer inserts so elementwise operands agree.
#include "dsl_test_util.hpp"

#include <doctest/doctest.h>

using namespace tessel;
using dsltest::attrOf;
using dsltest::isOp;
using dsltest::traceBody;
using enum TraceOp;

TEST_CASE("scalar op scalar stays scalar; scalar op tile splats") {
  Trace t = traceBody([] {
    auto s = program_id(0) + 1;
    CHECK(s.rank() == 0);
    auto v = s + arange(0, 8);
    CHECK(v.shape() == Shape{8});
  });
  // tessel.program_id, ConstInt, arith.addi, make_range, splat, arith.addi (clang order; check by wiring)
  REQUIRE(t.nodes.size() == 6);
  const TraceNode &scalarAdd = t.nodes[2];
  CHECK(isOp(scalarAdd, "arith.addi"));
  CHECK(scalarAdd.shape.empty());
  const TraceNode &tileAdd = t.nodes.back();
  CHECK(isOp(tileAdd, "arith.addi"));
  const TraceNode &splat = t.nodes[tileAdd.operands[0]];
  CHECK(isOp(splat, "tessel.splat"));
  CHECK(splat.shape == Shape{8});
  CHECK(splat.operands == std::vector<int32_t>{2});
}

TEST_CASE("lower rank gets leading ExpandDims(0), then Broadcast") {
  Trace t = traceBody([] {
    auto row = zeros<f32>({4});
    auto grid = zeros<float>({8, 4});
    auto sum = row + grid;
    CHECK(sum.shape() == Shape{8, 4});
  });
  const TraceNode &sum = t.nodes.back();
  REQUIRE(isOp(sum, "arith.addf"));
  const TraceNode &grown = t.nodes[sum.operands[0]];
  CHECK(isOp(grown, "tessel.broadcast"));
  CHECK(grown.shape == Shape{8, 4});
  const TraceNode &expanded = t.nodes[grown.operands[0]];
  CHECK(isOp(expanded, "tessel.expand_dims"));
  CHECK(attrOf(expanded, "axis") == 0);
  CHECK(expanded.shape == Shape{1, 4});
  CHECK(t.nodes[expanded.operands[0]].op == ConstFloat);
  CHECK(t.nodes[expanded.operands[0]].shape == Shape{4}); // zeros is a filled constant
  CHECK(t.nodes[sum.operands[1]].shape == Shape{8, 4});   // already the result shape: untouched
}

TEST_CASE("size-1 dims grow on both sides") {
  Trace t = traceBody([] {
    auto col = expand_dims(arange(0, 4), 1);  // [4, 1]
    auto row = expand_dims(arange(0, 8), -2); // [1, 8]
    CHECK(col.shape() == Shape{4, 1});
    CHECK(row.shape() == Shape{1, 8});
    auto prod = col * row;
    CHECK(prod.shape() == Shape{4, 8});
  });
  const TraceNode &mul = t.nodes.back();
  REQUIRE(isOp(mul, "arith.muli"));
  for (int side = 0; side < 2; ++side) {
    const TraceNode &b = t.nodes[mul.operands[side]];
    CHECK(isOp(b, "tessel.broadcast"));
    CHECK(b.shape == Shape{4, 8});
    CHECK(isOp(t.nodes[b.operands[0]], "tessel.expand_dims"));
  }
  CHECK(attrOf(t.nodes[t.nodes[mul.operands[0]].operands[0]], "axis") == 1);
  CHECK(attrOf(t.nodes[t.nodes[mul.operands[1]].operands[0]], "axis") == 0); // -2 on a 1-D tile is axis 0
}

TEST_CASE("literals become constants of the tile's element type") {
  Trace t = traceBody([] {
    auto x = zeros<f16>({16});
    auto y = x * 2;     // int literal with a float tile
    auto z = 0.5 + y;   // literal on the left
    auto i = arange(0, 16) << 2;
    (void)z;
    (void)i;
  });
  // Find the Mul and check its constant.
  bool sawMul = false, sawShl = false;
  for (const TraceNode &n : t.nodes) {
    if (isOp(n, "arith.mulf")) {
      sawMul = true;
      const TraceNode &splat = t.nodes[n.operands[1]];
      CHECK(isOp(splat, "tessel.splat"));
      CHECK(splat.dtype == DType::F16);
      const TraceNode &c = t.nodes[splat.operands[0]];
      CHECK(c.op == ConstFloat);
      CHECK(c.dtype == DType::F16);
      CHECK(c.f == 2.0);
      CHECK(c.shape.empty());
    }
    if (isOp(n, "arith.shli")) {
      sawShl = true;
      CHECK(n.dtype == DType::I32);
      CHECK(t.nodes[t.nodes[n.operands[1]].operands[0]].i0 == 2);
    }
    if (isOp(n, "arith.addf")) {
      CHECK(isOp(t.nodes[n.operands[0]], "tessel.splat")); // 0.5 splatted on the left
      CHECK(t.nodes[t.nodes[n.operands[0]].operands[0]].f == 0.5);
    }
  }
  CHECK(sawMul);
  CHECK(sawShl);
}

TEST_CASE("load and store bring masks, others and values to the pointers' shape") {
  auto k = jit(+[](Ptr<f32> in, Ptr<f32> out, i32 n) {
    auto rows = expand_dims(arange(0, 4), 1) * 8; // [4, 1]
    auto cols = expand_dims(arange(0, 8), 0);     // [1, 8]
    auto offs = rows + cols;                      // [4, 8]
    auto colMask = cols < n;                      // [1, 8]
    auto v = load(in + offs, colMask, 1.5f);
    CHECK(v.shape() == Shape{4, 8});
    store(out + offs, 0.0f, colMask);
  }, "masks");
  Trace tr = k.trace(static_cast<float *>(nullptr), static_cast<float *>(nullptr), 8).trace;
  const TraceNode *load = nullptr, *store = nullptr;
  for (const TraceNode &n : tr.nodes) {
    if (isOp(n, "tessel.load")) load = &n;
    if (isOp(n, "tessel.store")) store = &n;
  }
  REQUIRE(load);
  REQUIRE(store);
  CHECK(load->operands.size() == 3);
  REQUIRE(load->operands.size() == 3);
  CHECK(isOp(tr.nodes[load->operands[1]], "tessel.broadcast")); // mask [1, 8] -> [4, 8]
  CHECK(tr.nodes[load->operands[1]].shape == Shape{4, 8});
  CHECK(tr.nodes[load->operands[1]].dtype == DType::I1);
  CHECK(isOp(tr.nodes[load->operands[2]], "tessel.splat")); // other 1.5 -> [4, 8] f32
  CHECK(tr.nodes[load->operands[2]].dtype == DType::F32);
  CHECK(tr.nodes[tr.nodes[load->operands[2]].operands[0]].f == 1.5);
  REQUIRE(store->operands.size() == 3);
  CHECK(isOp(tr.nodes[store->operands[1]], "tessel.splat"));
  CHECK(tr.nodes[store->operands[1]].shape == Shape{4, 8});
  CHECK(tr.nodes[store->operands[2]].shape == Shape{4, 8});
}

TEST_CASE("where, fma, min/max, casts and math record their nodes") {
  Trace t = traceBody([] {
    auto x = cast<f32>(arange(0, 32));
    CHECK(x.rank() == 1);
    auto same = cast<float>(x); // no node for a cast to the same type
    CHECK(same.ref().id == x.ref().id);
    auto pos = where(x > 3.0f, x, 0.0f);
    auto m = maximum(minimum(pos, 10.0f), 1);
    auto e = exp(m) + log2(sqrt(abs(m))) + fma(m, 2.0f, x);
    auto b = cast<bool>(e);
    auto notB = ~b;
    auto h = cast<half>(e);
    auto r = rsqrt(cast<f32>(h)) + floor(x) + ceil(x) + sin(x) + cos(x) + exp2(x) + log(x);
    auto ids = cdiv(arange(0, 32), 4);
    auto rem = ids % 3;
    auto neg = -rem;
    (void)notB;
    (void)r;
    (void)neg;
  });
  auto count = [&](const char *name) {
    int c = 0;
    for (const TraceNode &n : t.nodes) c += isOp(n, name);
    return c;
  };
  // The tracer picks each op for its element type.
  CHECK(count("arith.sitofp") == 1); // cast<f32>(i32)
  CHECK(count("arith.cmpf") == 2);   // x > 3 and cast<bool>(f32): e != 0
  CHECK(count("arith.truncf") == 1); // cast<half>(f32)
  CHECK(count("arith.extf") == 1);   // cast<f32>(f16)
  CHECK(count("arith.select") == 1);
  CHECK(count("arith.minimumf") == 1);
  CHECK(count("arith.maximumf") == 1);
  CHECK(count("math.fma") == 1);
  CHECK(count("arith.xori") == 1);   // ~b
  CHECK(count("arith.remsi") == 1);
  CHECK(count("arith.subi") == 2);   // -rem is 0 - rem; cdiv = (a + b - 1) / b
  CHECK(count("arith.divsi") == 1);
  for (const char *name : {"math.exp", "math.log2", "math.sqrt", "math.absf", "math.rsqrt", "math.floor",
                           "math.ceil", "math.sin", "math.cos", "math.exp2", "math.log"})
    CHECK(count(name) == 1);
  for (const TraceNode &n : t.nodes) {
    if (isOp(n, "arith.select")) {
      CHECK(t.nodes[n.operands[0]].dtype == DType::I1);
      CHECK(isOp(t.nodes[n.operands[2]], "tessel.splat"));
      CHECK(n.shape == Shape{32});
    }
    if (isOp(n, "math.fma")) CHECK(n.dtype == DType::F32);
    if (isOp(n, "arith.truncf")) CHECK(t.nodes[n.operands[0]].dtype == DType::F32);
    if (isOp(n, "arith.cmpf")) CHECK(n.dtype == DType::I1);
  }
}

TEST_CASE("math on f16 and bf16 runs in f32; comparisons name their predicate") {
  Trace t = traceBody([] {
    auto h = zeros<f16>({8});
    auto e = exp(h);
    auto b = cast<bf16>(h); // f16 -> bf16 through f32
    auto lt = arange(0, 8) < 3;
    auto ne = h != h;
    (void)e;
    (void)b;
    (void)lt;
    (void)ne;
  });
  int exps = 0, cmps = 0;
  for (const TraceNode &n : t.nodes) {
    if (isOp(n, "math.exp")) {
      ++exps;
      CHECK(n.dtype == DType::F32);
      CHECK(isOp(t.nodes[n.operands[0]], "arith.extf"));
    }
    if (isOp(n, "arith.truncf") && n.dtype == DType::BF16)
      CHECK(isOp(t.nodes[n.operands[0]], "arith.extf"));
    if (isOp(n, "arith.cmpi")) {
      ++cmps;
      CHECK(attrOf(n, "predicate") == 2); // slt
    }
    if (isOp(n, "arith.cmpf")) {
      ++cmps;
      CHECK(attrOf(n, "predicate") == 13); // une: true for NaN, as C's !=
    }
  }
  CHECK(exps == 1);
  CHECK(cmps == 2);
}

TEST_CASE("full, zeros, broadcast_to, num_programs") {
  Trace t = traceBody([] {
    auto a = full({2, 8}, 7);
    static_assert(std::is_same_v<decltype(a), i32>);
    auto b = full<f64>({4}, 1);
    auto c = full({16}, num_programs(1)); // a scalar tile splatted
    auto d = broadcast_to(arange(0, 8), {4, 8});
    CHECK(a.shape() == Shape{2, 8});
    CHECK(b.shape() == Shape{4});
    CHECK(c.shape() == Shape{16});
    CHECK(d.shape() == Shape{4, 8});
    auto z = zeros<bool>({4});
    CHECK((z | true).shape() == Shape{4});
  });
  CHECK(t.nodes[0].op == ConstInt);
  CHECK(t.nodes[0].i0 == 7);
  CHECK(t.nodes[0].shape == Shape{2, 8});
  CHECK(t.nodes[1].op == ConstFloat);
  CHECK(t.nodes[1].dtype == DType::F64);
  CHECK(t.nodes[2].op == Op);
  CHECK(t.nodes[2].name == "tessel.num_programs");
  CHECK(t.nodes[2].attrs == std::vector<TraceAttr>{{TraceAttr::I32, "axis", 1, {}}});
  CHECK(isOp(t.nodes[3], "tessel.splat"));
}
