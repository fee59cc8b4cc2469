// The launch fast path's own work (bind arguments, build the key, pack the
// kernarg bytes) must not touch the heap. Counts allocations on this thread.
#include "dsl_test_util.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <new>

namespace {
thread_local size_t allocations = 0;
} // namespace

void *operator new(size_t size) {
  ++allocations;
  if (void *p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

using namespace tessel;
using dsltest::attrOf;
using dsltest::isOp;

namespace {
void scale(Ptr<f32> x, Ptr<f32> out, i32 n, f32 factor, Const<int> BLOCK, Const<bool> MASKED, Const<float> BIAS) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  if (MASKED) store(out + offs, load(x + offs, mask) * factor + float(BIAS), mask);
  else store(out + offs, load(x + offs) * factor + float(BIAS));
}
} // namespace

TEST_CASE("key and kernarg packing allocate nothing") {
  auto k = jit<scale>();
  float *p = reinterpret_cast<float *>(uintptr_t{0x4000});
  (void)k.key({}, p, p, 100, 2.0f, 256, true, 0.5f); // warm up anything lazy
  size_t before = allocations;
  detail::KernelKey key = k.key({.num_warps = 2}, p, p, 100, 2.0f, 256, true, 0.5f);
  auto bytes = k.kernarg(p, p, 100, 2.0f, 256, true, 0.5f);
  size_t after = allocations;
  CHECK(after == before);
  CHECK(bytes.size() == 24);
  REQUIRE(key.size == 8); // 4 runtime + 3 constants + num_warps
  CHECK(key.words[4] == 256);
  CHECK(key.words[5] == 1);
  CHECK(key.words[6] == std::bit_cast<uint64_t>(0.5));
  CHECK(key.words[7] == (2 | uint64_t(1) << 32)); // num_warps, num_stages
  // The allocation counter itself works.
  size_t mark = allocations;
  ::operator delete(::operator new(16)); // a call, which unlike a new-expression cannot be elided
  CHECK(allocations == mark + 1);
}

TEST_CASE("constants shape the trace; runtime floats are Float args") {
  auto k = jit<scale>();
  float *p = reinterpret_cast<float *>(uintptr_t{0x4000});
  Trace masked = k.trace(p, p, 100, 2.0f, 256, true, 0.5f).trace;
  Trace unmasked = k.trace(p, p, 100, 2.0f, 256, false, 0.5f).trace;
  CHECK(masked.args.size() == 4);
  CHECK(masked.args[3].kind == TraceArg::Float);
  CHECK(masked.fingerprint() != unmasked.fingerprint());
  int maskedLoads = 0;
  for (const TraceNode &n : unmasked.nodes)
    if (isOp(n, "tessel.load")) maskedLoads += n.operands.size() > 1;
  CHECK(maskedLoads == 0);
}
