// Every trace-time error a user can cause: a tessel::Error whose message
// starts with the user's file:line, then the op and the problem.
#include "dsl_test_util.hpp"

#include <doctest/doctest.h>

using namespace tessel;
using dsltest::at;
using dsltest::errorOf;
using dsltest::traceBody;

TEST_CASE("incompatible shapes name both shapes") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto a = zeros<f32>({4, 8});
      auto b = zeros<f32>({8, 4});
      line = __LINE__ + 1;
      auto c = a + b;
      (void)c;
    });
  });
  CHECK(msg == at(__FILE__, line) + "add: shapes [4, 8] and [8, 4] are not broadcast-compatible");

  msg = errorOf([&] {
    traceBody([&] {
      auto a = arange(0, 4);
      line = __LINE__ + 1;
      auto c = a < arange(0, 8);
      (void)c;
    });
  });
  CHECK(msg == at(__FILE__, line) + "cmp_lt: shapes [4] and [8] are not broadcast-compatible");

  msg = errorOf([&] {
    traceBody([&] {
      auto a = zeros<f32>({4});
      line = __LINE__ + 1;
      auto c = maximum(a, zeros<f32>({2}));
      (void)c;
    });
  });
  CHECK(msg == at(__FILE__, line) + "maximum: shapes [4] and [2] are not broadcast-compatible");
}

TEST_CASE("arange needs a power-of-two length") {
  int line = __LINE__ + 1;
  std::string msg = errorOf([] { traceBody([] { arange(0, 100); }); });
  CHECK(msg == at(__FILE__, line) + "arange: length hi - lo = 100 (arange(0, 100)) must be a power of two > 0");
  line = __LINE__ + 1;
  msg = errorOf([] { traceBody([] { arange(8, 8); }); });
  CHECK(msg == at(__FILE__, line) + "arange: length hi - lo = 0 (arange(8, 8)) must be a power of two > 0");
}

TEST_CASE("tile shapes: at most 2^20 elements, however the tile is made") {
  int line = __LINE__ + 1;
  std::string msg = errorOf([] { traceBody([] { zeros<f32>({65536, 65536}); }); });
  CHECK(msg == at(__FILE__, line) + "zeros: shape [65536, 65536] has 2^32 elements; a tile holds at most "
                                    "2^20 = 1048576 (split the work over more programs)");
  line = __LINE__ + 1;
  msg = errorOf([] { traceBody([] { full({int64_t(1) << 40, int64_t(1) << 40}, 1.0f); }); });
  CHECK(msg == at(__FILE__, line) + "full: shape [1099511627776, 1099511627776] has 2^80 elements; a tile holds "
                                    "at most 2^20 = 1048576 (split the work over more programs)");
  line = __LINE__ + 1;
  msg = errorOf([] { traceBody([] { arange(0, 1 << 21); }); });
  CHECK(msg == at(__FILE__, line) + "arange: shape [2097152] has 2^21 elements; a tile holds at most "
                                    "2^20 = 1048576 (split the work over more programs)");
  int64_t n = 2048;
  line = __LINE__ + 1;
  msg = errorOf([&] { traceBody([&] { expand_dims(arange(0, n), 1) + expand_dims(arange(0, n), 0); }); });
  CHECK(msg == at(__FILE__, line) + "add: shape [2048, 2048] has 2^22 elements; a tile holds at most "
                                    "2^20 = 1048576 (split the work over more programs)");
  line = __LINE__ + 1;
  msg = errorOf([] { traceBody([] { join(arange(0, 1 << 20), arange(0, 1 << 20)); }); });
  CHECK(msg.find("join: shape [1048576, 2] has 2^21 elements") != std::string::npos);
  // The limit itself is fine.
  CHECK(errorOf([] { traceBody([] { zeros<f32>({1024, 1024}); }); }) == "<no error>");
  CHECK(errorOf([] { traceBody([] { arange(0, 1 << 20); }); }) == "<no error>");
}

TEST_CASE("tile shapes: powers of two, at most 4-D") {
  int line = __LINE__ + 1;
  std::string msg = errorOf([] { traceBody([] { zeros<f32>({4, 6}); }); });
  CHECK(msg == at(__FILE__, line) +
                   "zeros: dimension 6 of shape [4, 6] is not a power of two (tile dimensions must be powers of two)");
  line = __LINE__ + 1;
  msg = errorOf([] { traceBody([] { full({2, 2, 2, 2, 2}, 1.0f); }); });
  CHECK(msg == at(__FILE__, line) + "full: rank-5 tiles are not supported (at most 4-D); shape [2, 2, 2, 2, 2]");
  CHECK(errorOf([] { traceBody([] { full({2, 2, 2, 2}, 1.0f); }); }) == "<no error>");
  msg = errorOf([&] {
    traceBody([&] {
      auto t = zeros<f32>({2, 2, 2, 2});
      line = __LINE__ + 1;
      expand_dims(t, 0);
    });
  });
  CHECK(msg == at(__FILE__, line) +
        "expand_dims: rank-5 tiles are not supported (at most 4-D); shape [1, 2, 2, 2, 2]");
  msg = errorOf([&] {
    traceBody([&] {
      auto t = arange(0, 4);
      line = __LINE__ + 1;
      expand_dims(t, 2);
    });
  });
  CHECK(msg == at(__FILE__, line) + "expand_dims: axis 2 is out of range for a rank-1 tile (valid: -2 to 1)");
  msg = errorOf([&] {
    traceBody([&] {
      auto t = arange(0, 4);
      line = __LINE__ + 1;
      broadcast_to(t, {4, 8});
    });
  });
  CHECK(msg == at(__FILE__, line) + "broadcast_to: shape [4] does not broadcast to [4, 8]");
}

TEST_CASE("leaf ops outside a trace") {
  int line = __LINE__ + 1;
  std::string msg = errorOf([] { program_id(0); });
  CHECK(msg == at(__FILE__, line) +
                   "program_id: called outside a kernel trace (tile ops run only while jit/Kernel traces a kernel)");
  line = __LINE__ + 1;
  msg = errorOf([] { arange(0, 4); });
  CHECK(msg.starts_with(at(__FILE__, line) + "arange: called outside a kernel trace"));
  line = __LINE__ + 1;
  msg = errorOf([] { zeros<f32>({4}); });
  CHECK(msg.starts_with(at(__FILE__, line) + "zeros: called outside a kernel trace"));
}

TEST_CASE("program_id axis range") {
  int line = __LINE__ + 1;
  std::string msg = errorOf([] { traceBody([] { num_programs(3); }); });
  CHECK(msg == at(__FILE__, line) + "num_programs: axis 3 is out of range (0, 1 or 2)");
}

TEST_CASE("values of two traces do not mix; tiles die with their trace") {
  int line = 0;
  std::string msg = errorOf([&] {
    detail::TraceContext first("first");
    detail::TraceScope firstScope(first);
    auto a = arange(0, 4);
    detail::TraceContext second("second");
    detail::TraceScope secondScope(second);
    auto b = arange(0, 4);
    line = __LINE__ + 1;
    auto c = a + b;
    (void)c;
  });
  CHECK(msg == at(__FILE__, line) + "add: combines tiles of two different traces");

  i32 escaped;
  traceBody([&] { escaped = arange(0, 4); });
  line = __LINE__ + 1;
  msg = errorOf([&] { traceBody([&] { auto c = escaped * 2; (void)c; }); });
  CHECK(msg == at(__FILE__, line) +
                   "mul: uses a tile of a trace that has ended (tiles live only while their kernel is traced)");

  i32 empty;
  line = __LINE__ + 1;
  msg = errorOf([&] { traceBody([&] { auto c = arange(0, 4) - empty; (void)c; }); });
  CHECK(msg == at(__FILE__, line) + "sub: uses an empty tile (default-constructed and never assigned)");
}

TEST_CASE("literals must fit the tile's element type") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto small = cast<int8_t>(arange(0, 4));
      line = __LINE__ + 1;
      auto c = small + 300;
      (void)c;
    });
  });
  CHECK(msg == at(__FILE__, line) + "add: literal 300 does not fit in i8");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      auto c = arange(0, 4) * 5'000'000'000LL;
      (void)c;
    });
  });
  CHECK(msg == at(__FILE__, line) + "mul: literal 5000000000 does not fit in i32");
  msg = errorOf([&] {
    traceBody([&] {
      auto wide = cast<int64_t>(arange(0, 4));
      line = __LINE__ + 1;
      auto c = wide + UINT64_MAX;
      (void)c;
    });
  });
  CHECK(msg == at(__FILE__, line) + "add: literal above INT64_MAX does not fit in i64");
}

TEST_CASE("store: values and masks follow the pointers' shape") {
  int line = 0;
  auto k = jit(+[](Ptr<f32> out) {
    auto offs = arange(0, 4);
    store(out + offs, zeros<f32>({8}));
  }, "bad_store");
  std::string msg = errorOf([&] { k.trace(static_cast<float *>(nullptr)); });
  line = __LINE__ - 3;
  CHECK(msg == at(__FILE__, line) + "store: the value of shape [8] does not broadcast to the pointers' shape [4]");

  auto k2 = jit(+[](Ptr<f32> out) {
    store(out, 1.0f, arange(0, 4) < 2); // a scalar pointer with a tile mask
  }, "bad_store_mask");
  line = __LINE__ - 2;
  msg = errorOf([&] { k2.trace(static_cast<float *>(nullptr)); });
  CHECK(msg == at(__FILE__, line) + "store: the mask of shape [4] does not broadcast to the pointers' shape []");
}

TEST_CASE("atomics: values, compared values and masks follow the pointers' shape; no atomics in a combine") {
  auto k = jit(+[](Ptr<f32> out) {
    auto offs = arange(0, 4);
    atomic_add(out + offs, zeros<f32>({8}));
  }, "bad_atomic");
  int line = __LINE__ - 2;
  std::string msg = errorOf([&] { k.trace(static_cast<float *>(nullptr)); });
  CHECK(msg == at(__FILE__, line) + "atomic_add: the value of shape [8] does not broadcast to the pointers' shape [4]");

  auto k2 = jit(+[](Ptr<int32_t> out) {
    atomic_cas(out, 0, 1, arange(0, 4) < 2); // a scalar pointer with a tile mask
  }, "bad_cas_mask");
  line = __LINE__ - 2;
  msg = errorOf([&] { k2.trace(static_cast<int32_t *>(nullptr)); });
  CHECK(msg == at(__FILE__, line) + "atomic_cas: the mask of shape [4] does not broadcast to the pointers' shape []");

  auto k3 = jit(+[](Ptr<int32_t> out) {
    auto x = arange(0, 4);
    auto r = reduce(x, 0, [&](i32 a, i32 b) {
      atomic_add(out, a);
      return a + b;
    });
    store(out, r);
  }, "atomic_in_combine");
  line = __LINE__ - 5;
  msg = errorOf([&] { k3.trace(static_cast<int32_t *>(nullptr)); });
  CHECK(msg == at(__FILE__, line) +
                   "atomic_add: a combine function may only use its arguments (and literals), not tiles from outside it");
}

TEST_CASE("sort and topk: payload shapes, scalars, axes and k are checked at their line") {
  auto k1 = jit(+[](Ptr<f32> out) {
    auto [a, b] = sort(cast<f32>(arange(0, 8)), arange(0, 4));
    store(out + arange(0, 8), a);
    (void)b;
  }, "bad_payload");
  int line = __LINE__ - 4;
  std::string msg = errorOf([&] { k1.trace(static_cast<float *>(nullptr)); });
  CHECK(msg == at(__FILE__, line) + "sort: payload 1 has shape [4], the keys [8]");

  auto k2 = jit(+[](Ptr<f32> out) {
    auto [v, i] = topk(cast<f32>(arange(0, 8)), 9);
    store(out + arange(0, 8), v);
    (void)i;
  }, "bad_k");
  line = __LINE__ - 4;
  msg = errorOf([&] { k2.trace(static_cast<float *>(nullptr)); });
  CHECK(msg == at(__FILE__, line) + "topk: k = 9 is out of range: the axis has 8 elements");

  auto k3 = jit(+[](Ptr<f32> out) {
    auto s = sort(cast<f32>(arange(0, 8)), {.axis = 1});
    store(out + arange(0, 8), s);
  }, "bad_axis");
  line = __LINE__ - 3;
  msg = errorOf([&] { k3.trace(static_cast<float *>(nullptr)); });
  CHECK(msg.find(at(__FILE__, line) + "sort: axis 1") == 0);

  auto k4 = jit(+[](Ptr<f32> out) {
    auto s = sort(load(out));
    store(out, s);
  }, "scalar_sort");
  line = __LINE__ - 3;
  msg = errorOf([&] { k4.trace(static_cast<float *>(nullptr)); });
  CHECK(msg == at(__FILE__, line) + "sort: sorts tiles, not scalars");
}

TEST_CASE("arange bounds, fill values, and shapes of unusable tiles") {
  int line = __LINE__ + 1;
  std::string msg = errorOf([] { traceBody([] { arange(int64_t{1} << 31, (int64_t{1} << 31) + 4); }); });
  CHECK(msg == at(__FILE__, line) + "arange: bounds [2147483648, 2147483652) do not fit in i32");

  msg = errorOf([&] {
    traceBody([&] {
      auto t = arange(0, 4);
      line = __LINE__ + 1;
      full({4}, t);
    });
  });
  CHECK(msg == at(__FILE__, line) + "full: the fill value must be a scalar, not a tile of shape [4]");

  f32 empty;
  line = __LINE__ + 1;
  msg = errorOf([&] { (void)empty.shape(); });
  CHECK(msg == at(__FILE__, line) + "shape: uses an empty tile (default-constructed and never assigned)");

  i32 escaped;
  traceBody([&] { escaped = arange(0, 4); });
  line = __LINE__ + 1;
  msg = errorOf([&] { (void)escaped.rank(); });
  CHECK(msg == at(__FILE__, line) +
                   "rank: uses a tile of a trace that has ended (tiles live only while their kernel is traced)");
}
