// The kernels of the ahead-of-time test's generator (a tessel-compile built
// from these registrations and tessel_compile_main).
#include <tessel/aot.hpp>

using namespace tessel;

void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}
TESSEL_AOT_KERNEL(vector_add, "x", "y", "out", "n", "BLOCK");
