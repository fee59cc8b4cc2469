// Trace-time errors of reductions, scans, shape changes and hints: each a
// tessel::Error starting with the user's file:line and the op's name.
#include "dsl_test_util.hpp"

#include <doctest/doctest.h>

#include <tuple>

using namespace tessel;
using dsltest::at;
using dsltest::errorOf;
using dsltest::traceBody;

TEST_CASE("reductions and scans: axis out of range, scalar inputs") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({4, 8});
      line = __LINE__ + 1;
      sum(x, 2);
    });
  });
  CHECK(msg == at(__FILE__, line) + "sum: axis 2 is out of range for a rank-2 tile (valid: -2 to 1)");
  msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({4, 8});
      line = __LINE__ + 1;
      argmax(x, -3);
    });
  });
  CHECK(msg == at(__FILE__, line) + "argmax: axis -3 is out of range for a rank-2 tile (valid: -2 to 1)");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      cumsum(arange(0, 8), 1, true);
    });
  });
  CHECK(msg == at(__FILE__, line) + "cumsum: axis 1 is out of range for a rank-1 tile (valid: -1 to 0)");
  msg = errorOf([&] {
    traceBody([&] {
      auto s = program_id(0);
      line = __LINE__ + 1;
      reduce(s, 0, [](auto a, auto b) { return a + b; });
    });
  });
  CHECK(msg == at(__FILE__, line) + "reduce: needs a tile with at least one dimension, not a scalar");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      argmin(program_id(0), 0);
    });
  });
  CHECK(msg == at(__FILE__, line) + "argmin: needs a tile with at least one dimension, not a scalar");
}

TEST_CASE("multi-input reductions need inputs of one shape") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto a = zeros<f32>({8});
      auto b = arange(0, 4);
      line = __LINE__ + 1;
      reduce(std::tuple{a, b}, 0, [](f32 a0, i32 b0, f32 a1, i32 b1) { return std::tuple{a0 + a1, b0 + b1}; });
    });
  });
  CHECK(msg == at(__FILE__, line) + "reduce: the inputs' shapes differ: input 0 is [8], input 1 is [4]");
  msg = errorOf([&] {
    traceBody([&] {
      auto a = zeros<f32>({8});
      line = __LINE__ + 1;
      associative_scan(std::tuple{a, zeros<f32>({2, 8})}, 0, [](f32 a0, f32 b0, f32 a1, f32 b1) {
        return std::tuple{a0 + a1, b0 + b1};
      });
    });
  });
  CHECK(msg == at(__FILE__, line) + "associative_scan: the inputs' shapes differ: input 0 is [8], input 1 is [2, 8]");
}

TEST_CASE("a combine function may only use its arguments and literals") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({8});
      auto scale = zeros<f32>({});
      reduce(x, 0, [&](auto a, auto b) {
        line = __LINE__ + 1;
        return a + b * scale;
      });
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "mul: a combine function may only use its arguments (and literals), not tiles from outside it");

  msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({8});
      line = __LINE__ + 1;
      reduce(x, 0, [&](auto, auto) { return x; }); // returns a captured tile as it is
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "reduce: a combine function may only use its arguments (and literals), not tiles from outside it");

  msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({8});
      line = __LINE__ + 1;
      reduce(x, 0, [&](auto, auto) { return f32(); });
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "reduce: the combine function returned an empty tile (default-constructed and never assigned)");
}

TEST_CASE("inside a combine function values are scalars and leaf ops are unavailable") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      reduce(zeros<f32>({8}), 0, [&](auto a, auto b) {
        line = __LINE__ + 1;
        auto wide = full({4}, a);
        return a + b + sum(wide, 0);
      });
    });
  });
  CHECK(msg == at(__FILE__, line) + "full: a combine function works on scalars; this would make a tile of shape [4]");
  msg = errorOf([&] {
    traceBody([&] {
      reduce(zeros<f32>({8}), 0, [&](auto a, auto b) {
        line = __LINE__ + 1;
        auto [x, y] = split(join(a, b));
        return x + y;
      });
    });
  });
  CHECK(msg == at(__FILE__, line) + "join: a combine function works on scalars; this would make a tile of shape [2]");
  msg = errorOf([&] {
    traceBody([&] {
      cumsum(zeros<f32>({8}), 0); // fine
      associative_scan(zeros<f32>({8}), 0, [&](auto a, auto b) {
        line = __LINE__ + 1;
        return a + b + cast<float>(program_id(0));
      });
    });
  });
  CHECK(msg == at(__FILE__, line) + "program_id: cannot be used inside a combine function");
  msg = errorOf([&] {
    traceBody([&] {
      reduce(arange(0, 8), 0, [&](auto a, auto b) {
        line = __LINE__ + 1;
        return a + sum(arange(0, 4), 0) + b;
      });
    });
  });
  CHECK(msg == at(__FILE__, line) + "arange: cannot be used inside a combine function");
  msg = errorOf([&] {
    traceBody([&] {
      reduce(arange(0, 8), 0, [&](auto a, auto b) {
        line = __LINE__ + 1;
        return sum(expand_dims(a, 0), 0) + b;
      });
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "expand_dims: a combine function works on scalars; this would make a tile of shape [1]");
}

TEST_CASE("reshape errors") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({4, 8});
      line = __LINE__ + 1;
      reshape(x, {16});
    });
  });
  CHECK(msg == at(__FILE__, line) + "reshape: cannot reshape [4, 8] (32 elements) to [16] (16 elements)");
  msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({4, 8});
      line = __LINE__ + 1;
      reshape(x, {2, 2, 2, 2, 2});
    });
  });
  CHECK(msg == at(__FILE__, line) + "reshape: rank-5 tiles are not supported (at most 4-D); shape [2, 2, 2, 2, 2]");
  msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({4, 8});
      line = __LINE__ + 1;
      reshape(x, {3, 4});
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "reshape: dimension 3 of shape [3, 4] is not a power of two (tile dimensions must be powers of two)");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      reshape(program_id(0), {1});
    });
  });
  CHECK(msg == at(__FILE__, line) + "reshape: the operand is a scalar; make a tile of it with full(shape, value)");
  msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({1});
      line = __LINE__ + 1;
      reshape(x, {});
    });
  });
  CHECK(msg == at(__FILE__, line) + "reshape: cannot reshape to a scalar (shape []); use a reduction such as sum");
}

TEST_CASE("permute, trans, join and split errors") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({4, 8});
      line = __LINE__ + 1;
      permute(x, {0, 0});
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "permute: dims [0, 0] are not a permutation of the 2 dimensions of shape [4, 8] (each of 0..1 once)");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      permute(arange(0, 8), {1, 0});
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "permute: dims [1, 0] are not a permutation of the 1 dimensions of shape [8] (each of 0..0 once)");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      trans(arange(0, 8));
    });
  });
  CHECK(msg == at(__FILE__, line) + "trans: needs a 2-D tile, not shape [8] (use permute for other ranks)");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      join(arange(0, 8), arange(0, 4));
    });
  });
  CHECK(msg == at(__FILE__, line) + "join: the tiles' shapes differ: [8] and [4] (join needs one shape)");
  msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({2, 4, 8, 2});
      line = __LINE__ + 1;
      join(x, x);
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "join: joining tiles of shape [2, 4, 8, 2] would make the rank-5 tile [2, 4, 8, 2, 2]; tiles have "
                   "at most 4 dimensions");
  msg = errorOf([&] {
    traceBody([&] {
      auto x = zeros<f32>({2, 8});
      line = __LINE__ + 1;
      split(x);
    });
  });
  CHECK(msg == at(__FILE__, line) + "split: the last dimension must be 2, not shape [2, 8] (split undoes join)");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      split(program_id(0));
    });
  });
  CHECK(msg == at(__FILE__, line) + "split: the last dimension must be 2, not shape [] (split undoes join)");
}

TEST_CASE("hint errors") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      assume(arange(0, 8) < 4);
    });
  });
  CHECK(msg == at(__FILE__, line) + "assume: the condition must be a scalar bool, not a tile of shape [8]");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      multiple_of(program_id(0) * 12, 12);
    });
  });
  CHECK(msg == at(__FILE__, line) + "multiple_of: the divisor 12 must be a power of two > 0");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      max_contiguous(arange(0, 8), 3);
    });
  });
  CHECK(msg == at(__FILE__, line) + "max_contiguous: the run length 3 must be a power of two > 0");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      max_contiguous(arange(0, 8), 16);
    });
  });
  CHECK(msg == at(__FILE__, line) + "max_contiguous: the run length 16 exceeds the last dimension of shape [8]");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      max_contiguous(program_id(0), 1);
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "max_contiguous: needs a tile, not a scalar (runs are along the last dimension)");
  msg = errorOf([&] {
    traceBody([&] {
      line = __LINE__ + 1;
      multiple_of(program_id(0) * 16, 16);
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "multiple_of: needs a tile of offsets, not a scalar; for a scalar n say assume(n % 16 == 0)");
}

TEST_CASE("hints inside a combine function are errors") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      reduce(arange(0, 8), 0, [&](auto a, auto b) {
        line = __LINE__ + 1;
        assume(a >= 0);
        return a + b;
      });
    });
  });
  CHECK(msg == at(__FILE__, line) + "assume: cannot be used inside a combine function");
  msg = errorOf([&] {
    traceBody([&] {
      reduce(arange(0, 8), 0, [&](auto a, auto b) {
        line = __LINE__ + 1;
        return multiple_of(a, 4) + b;
      });
    });
  });
  CHECK(msg == at(__FILE__, line) + "multiple_of: cannot be used inside a combine function");
  msg = errorOf([&] {
    traceBody([&] {
      associative_scan(arange(0, 8), 0, [&](auto a, auto b) {
        line = __LINE__ + 1;
        return max_contiguous(a, 1) + b;
      });
    });
  });
  CHECK(msg == at(__FILE__, line) + "max_contiguous: cannot be used inside a combine function");
}

TEST_CASE("a tile made inside a combine function cannot leave it") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      f32 leaked;
      reduce(zeros<f32>({8}), 0, [&](auto a, auto b) {
        leaked = a * b;
        return a + b;
      });
      line = __LINE__ + 1;
      auto use = leaked + 1.0f;
      (void)use;
    });
  });
  CHECK(msg == at(__FILE__, line) + "add: uses a tile made inside a combine function outside of it");
}

TEST_CASE("dot errors name the line") {
  int line = 0;
  std::string msg = errorOf([&] {
    traceBody([&] {
      auto a = zeros<f16>({32, 16}), b = zeros<f16>({32, 32});
      line = __LINE__ + 1;
      dot(a, b);
    });
  });
  CHECK(msg == at(__FILE__, line) +
                   "dot: the inner dimensions differ: a is [32, 16] and b is [32, 32] (a [M, K] times b [K, N])");
  // Blocks below the matrix instructions' tile are dots too (Triton's 2x2x16,
  // [B, 1, K] x [B, K, N]).
  msg = errorOf([&] {
    traceBody([&] {
      dot(zeros<f16>({8, 16}), zeros<f16>({16, 32}));
      dot(zeros<f16>({2, 16}), zeros<f16>({16, 2}));
      dot(zeros<int8_t>({4, 1, 8}), zeros<int8_t>({4, 8, 16}));
      dot(zeros<float>({1, 1}), zeros<float>({1, 1}));
    });
  });
  CHECK(msg == "<no error>");
  msg = errorOf([&] {
    traceBody([&] {
      auto a = zeros<f16>({16, 16}), b = zeros<f16>({16, 32});
      auto acc = zeros<float>({32, 32});
      line = __LINE__ + 1;
      dot(a, b, acc);
    });
  });
  CHECK(msg == at(__FILE__, line) + "dot: the accumulator must be [M, N] = [16, 32], not [32, 32]");
  msg = errorOf([&] {
    traceBody([&] {
      auto a = zeros<f16>({16}), b = zeros<f16>({16, 32});
      line = __LINE__ + 1;
      dot(a, b);
    });
  });
  CHECK(msg == at(__FILE__, line) + "dot: takes 2-D tiles [M, K] and [K, N] (or batched [B, M, K] and [B, K, N]), not "
                                    "[16] and [16, 32]");
}
