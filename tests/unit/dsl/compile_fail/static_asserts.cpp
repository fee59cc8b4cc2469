// Compile-time errors of the DSL: each CASE must fail to compile with the
// message that tells the user what to do (see static_asserts.cmake).
#include <tessel/tessel.hpp>
using namespace tessel;

void kernel(Ptr<f32> x, i32 n) {
  auto i = arange(0, 4);
  auto f = cast<f32>(i);
#if CASE == 1
  auto r = f + i; // element types differ
#elif CASE == 2
  auto r = i + 1.5; // floating literal with an integer tile
#elif CASE == 3
  auto r = f & f; // bitwise on floats
#elif CASE == 4
  auto r = exp(i); // math on integers
#elif CASE == 5
  auto r = f << 2; // shift on floats
#elif CASE == 6
  int r = 0;
  store(x + i, i); // value type differs from the pointee
#elif CASE == 7
  auto r = x + f; // pointer + float offsets
#elif CASE == 8
  auto r = maximum(f, i);
#elif CASE == 9
  auto r = load(x + i, i); // mask is not bool
#elif CASE == 10
  int r = 0;
  jit<kernel>().trace(static_cast<float *>(nullptr)); // one argument short
#elif CASE == 11
  auto r = -(i < 3); // arithmetic on bool
#elif CASE == 12
  auto r = reduce(f, 0, [](f32 a) { return a; }); // one parameter
#elif CASE == 13
  auto r = reduce(f, 0, [](auto a, auto b) { return a < b; }); // returns bool
#elif CASE == 14
  auto r = reduce(std::tuple{f, i}, 0, [](f32 a0, i32, f32, i32) { return a0; }); // not a tuple
#elif CASE == 15
  auto r = reduce(std::tuple{f, i}, 0, [](f32 a0, i32, f32, i32) { return std::tuple{a0}; });
#elif CASE == 16
  auto r = reduce(std::tuple{f, i}, 0, [](f32 a0, i32 b0, f32, i32) { return std::tuple{b0, a0}; });
#elif CASE == 17
  auto r = reduce(x + i, 0, [](auto a, auto) { return a; }); // pointers
#elif CASE == 18
  auto r = join(f, i);
#elif CASE == 19
  int r = 0;
  assume(n); // not a bool
#elif CASE == 20
  auto r = multiple_of(f, 16);
#elif CASE == 21
  auto r = sum(x + i, 0);
#elif CASE == 22
  auto r = xor_sum(f, 0);
#elif CASE == 23
  auto r = argmax(i < 2, 0);
#elif CASE == 24
  auto r = max(i < 2, 0);
#elif CASE == 25
  int r = 0;
  for_range(0, n, 4, [&](i32 k) {
    if (k < n) // a C++ condition on a traced value
      r = 1;
  });
#elif CASE == 26
  int r = 0;
  for_range(0, n, 4, [&](f32 k) { (void)k; }); // the induction variable is an i32
#elif CASE == 27
  int r = 0;
  for_range(0, f, 4, [&](i32) {}); // a float bound
#elif CASE == 28
  auto r = dot(i, i); // int32 tiles
#elif CASE == 29
  auto h = cast<half>(f);
  auto acc = zeros<half>({4, 4});
  auto r = dot(h, h, acc); // a half accumulator
#elif CASE == 30
  auto r = atomic_and(x + i, f); // bitwise atomic on floats
#elif CASE == 31
  auto r = atomic_add(x + i, i); // an int value through float pointers
#elif CASE == 32
  auto r = rand(7, f); // float offsets
#elif CASE == 33
  auto r = randn(1.5, i); // a float seed
#elif CASE == 34
  auto r = randint(cast<float>(n), i); // a float seed tile
#elif CASE == 35
  auto r = umulhi(f, f); // floats
#elif CASE == 36
  auto r = umulhi(i, cast<int64_t>(i)); // widths differ
#elif CASE == 37
  auto r = where(true, 1, 2); // no tile: no shape for the result
#elif CASE == 38
  auto r = where(i < 2, true, 1); // a bool and a number
#elif CASE == 39
  auto r = pow(i, 2); // integers
#elif CASE == 40
  auto r = sigmoid(i); // integers
#elif CASE == 41
  auto r = atan2(f, cast<double>(f)); // f32 and f64
#elif CASE == 42
  auto q = cast<float8_e4m3fn>(f);
  auto r = q + q; // 8-bit floats take no arithmetic
#elif CASE == 43
  auto q = cast<float8_e5m2fnuz>(f);
  auto r = q < q; // nor comparisons
#elif CASE == 44
  auto r = cast<float8_e4m3fnuz>(i); // integers go through float
#elif CASE == 45
  auto r = sum(cast<float8_e5m2>(f), 0); // nor reductions
#elif CASE == 46
  auto a = reshape(cast<float8_e4m3fn>(cast<f32>(arange(0, 256))), {16, 16});
  auto b = reshape(cast<float8_e5m2fnuz>(cast<f32>(arange(0, 256))), {16, 16});
  auto r = dot(a, b); // OCP with FNUZ: no target's matrix cores take both
#elif CASE == 47
  auto a = reshape(cast<f16>(cast<f32>(arange(0, 256))), {16, 16});
  auto r = dot(a, reshape(cast<f32>(arange(0, 256)), {16, 16})); // half with float
#elif CASE == 48
  auto a = reshape(cast<float8_e4m3fnuz>(cast<f32>(arange(0, 256))), {16, 16});
  auto r = dot(a, reshape(cast<f16>(cast<f32>(arange(0, 256))), {16, 16})); // 8-bit float with half
#elif CASE == 49
  auto a = reshape(cast<float8_e4m3fnuz>(cast<f32>(arange(0, 256))), {16, 16});
  auto acc = reshape(cast<f16>(cast<f32>(arange(0, 256))), {16, 16});
  auto r = dot(a, a, acc); // 8-bit floats accumulate in float
#elif CASE == 50
  device_print("n", 5); // a number, not a tile
  int r = 0;
#elif CASE == 51
  static_print("shape", std::vector<int>{4}); // not a printable kind
  int r = 0;
#else
  int r = 0; // CASE 0 compiles: the harness itself works
#endif
  (void)r;
}
