// Vector add through tessel as a program outside the tree sees it: the
// public headers and tessel::tessel only. Exits nonzero when a result differs
// from the host's sum.
#include "vector_add.hpp"

// tessel::tessel must not put MLIR or LLVM on a program's include path.
#if __has_include(<mlir/IR/MLIRContext.h>) || __has_include(<llvm/Support/raw_ostream.h>)
#error "MLIR or LLVM headers are on the include path of a tessel program"
#endif

#include <cstdio>
#include <vector>

using namespace tessel;

int main() {
  const int n = 5000, BLOCK = 256; // n is not a multiple of BLOCK: the mask matters
  Device dev = Device::open();
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) {
    hx[i] = 0.25f * float(i);
    hy[i] = 1.0f - 0.5f * float(i % 7);
  }
  Buffer<float> x = dev.upload(hx), y = dev.upload(hy);
  Buffer<float> out = dev.upload(std::vector<float>(n, -1.0f));
  auto add = jit<vector_add>();
  add.launch(dev, {cdiv(n, BLOCK)}, {.num_warps = 4}, x, y, out, n, BLOCK);

  std::vector<float> got = out.download();
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += got[i] != hx[i] + hy[i];
  std::printf("consumer on %s: %d of %d elements wrong\n", dev.name().c_str(), wrong, n);
  return wrong ? 1 : 0;
}
