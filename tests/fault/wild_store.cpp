// A kernel that writes through a wild pointer, run on the emulator with the
// sanitizer off (TESSEL_SANITIZE=off): the process dies as with any segfault,
// after the emulator names the kernel and the workgroup (checked by the ctest
// that runs this program).
#include <tessel/tessel.hpp>

using namespace tessel;

namespace {
void wild_store(Ptr<f32> out) {
  auto offs = program_id(0) * 64 + arange(0, 64);
  store(out + offs, cast<float>(offs));
}
} // namespace

int main() {
  Device dev = Device::emulator("gfx942");
  // Not a device allocation: a non-null address nothing is mapped at.
  auto *wild = reinterpret_cast<float *>(uintptr_t(0x10) << 40);
  jit<wild_store>().launch(dev, {3}, {.num_warps = 1}, wild);
  return 0; // not reached
}
