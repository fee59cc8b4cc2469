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
#else
  int r = 0; // CASE 0 compiles: the harness itself works
#endif
  (void)r;
}
