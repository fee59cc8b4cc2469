// The emulator as a sanitizer (TESSEL_SANITIZE, default memory): global
// accesses outside every live buffer are reported with the op's C++ line, the
// workgroup, the thread, the address and the nearest buffer, and do not
// happen; the launch throws and the process goes on.
#include "e2e_common.hpp"

using namespace tessel;
using namespace e2e;

namespace {

// Reads x[start + i] for i < count and writes out[start + i]: a start below
// 0 or a count past the end is the user's bug.
constexpr int kLoadLine = __LINE__ + 4;
constexpr int kStoreLine = __LINE__ + 4;
void shifted_copy(Ptr<f32> x, Ptr<f32> out, i32 start, i32 count) {
  auto offs = program_id(0) * 256 + arange(0, 256);
  auto v = load(x + start + offs, offs < count, 0.0f);
  store(out + start + offs, v * 2.0f, offs < count);
}

// Fills out[0, count) with 1: a count larger than the buffer writes into the
// memory after it.
constexpr int kFillLine = __LINE__ + 3;
void fill(Ptr<f32> out, i32 count) {
  auto offs = program_id(0) * 128 + arange(0, 128);
  store(out + offs, full<float>({128}, 1.0f), offs < count);
}

std::string launchError(auto &&launch) {
  try {
    launch();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

std::string line(int n) { return "sanitizer_test.cpp:" + std::to_string(n); }

} // namespace

TEST_CASE("sanitizer: a load one element past the end is reported with its line, and its thread stores nothing") {
  const int n = 1000;
  auto x = emulator().upload(randomFloats(n));
  auto out = poisoned<float>(n + 1); // the output has room: only the read is wrong
  auto before = out.download();
  std::string msg = launchError([&] { jit<shifted_copy>().launch(emulator(), {4}, {}, x, out, 0, n + 1); });
  CAPTURE(msg);
  CHECK(contains(msg, "the emulator's sanitizer stopped kernel 'shifted_copy'"));
  CHECK(contains(msg, "global load out of bounds at "));
  CHECK(contains(msg, line(kLoadLine) + " (workgroup"));
  CHECK(contains(msg, "workgroup (3, 0, 0), thread "));
  // x holds 4000 bytes; element 1000 is right after them.
  CHECK(contains(msg, "4 bytes at 0x"));
  CHECK(contains(msg, "; it starts right after the end of the buffer of 4000 bytes at 0x"));
  // The launch names where it was called from, as every launch error does.
  CHECK(contains(msg, "sanitizer_test.cpp:"));
  // The thread that read x[1000] stopped before its store to out[1000].
  CHECK(contains(msg, "thread 232)"));
  auto after = out.download();
  CHECK(std::memcmp(&after[size_t(n)], &before[size_t(n)], 4) == 0);
}

TEST_CASE("sanitizer: a read before the start of a buffer is reported") {
  auto x = emulator().upload(randomFloats(512));
  auto out = poisoned<float>(512);
  std::string msg = launchError([&] { jit<shifted_copy>().launch(emulator(), {1}, {}, x, out, -3, 256); });
  CAPTURE(msg);
  CHECK(contains(msg, "global load out of bounds at "));
  CHECK(contains(msg, line(kLoadLine) + " (workgroup"));
  CHECK(contains(msg, "workgroup (0, 0, 0), thread 0)"));
  CHECK(contains(msg, "; it ends 8 bytes before the start of the buffer of 2048 bytes at 0x"));
}

TEST_CASE("sanitizer: a store 256 elements past the end does not reach the next buffer") {
  auto out = emulator().upload(std::vector<float>(1000, 0.0f));
  auto neighbour = emulator().upload(std::vector<float>(1000, 7.0f));
  std::string msg = launchError([&] { jit<fill>().launch(emulator(), {10}, {}, out, 1256); });
  CAPTURE(msg);
  CHECK(contains(msg, "global store out of bounds at "));
  CHECK(contains(msg, line(kFillLine) + " (workgroup"));
  // Workgroups run in parallel: the first store reported may be any of the
  // out-of-bounds ones, past `out`'s end or short of the neighbour's start.
  CHECK(std::regex_search(msg, std::regex("; it (starts (right after|[0-9]+ bytes past) the end|ends (right|[0-9]+ "
                                          "bytes) before the start) of the buffer of 4000 bytes at 0x")));
  CHECK(neighbour.download() == std::vector<float>(1000, 7.0f));
  // Whatever part of the launch ran before the report wrote inside `out` only.
  for (float v : out.download())
    CHECK((v == 0.0f || v == 1.0f));
}

TEST_CASE("sanitizer: a store through a pointer into no buffer is reported; the device goes on working") {
  auto x = emulator().upload(randomFloats(256));
  auto *wild = reinterpret_cast<float *>(uintptr_t(0x10) << 40);
  std::string msg = launchError([&] {
    jit<shifted_copy>().launch(emulator(), {1}, {}, x.devicePtr(), wild, 0, 256);
  });
  CAPTURE(msg);
  CHECK(contains(msg, "global store out of bounds at "));
  CHECK(contains(msg, line(kStoreLine) + " (workgroup"));
  CHECK(contains(msg, "at 0x100000000000; it is in no buffer (the nearest is "));
  // The same kernel with valid buffers runs cleanly afterwards.
  auto out = poisoned<float>(256);
  jit<shifted_copy>().launch(emulator(), {1}, {}, x, out, 0, 256);
  auto hx = x.download(), got = out.download();
  for (size_t i = 0; i < 256; ++i)
    CHECK(got[i] == hx[i] * 2.0f);
}

TEST_CASE("sanitizer: masked-off lanes past the end are not accesses") {
  const int n = 1001; // not a multiple of the block: the last block is masked
  auto x = emulator().upload(randomFloats(n));
  auto out = poisoned<float>(n);
  jit<shifted_copy>().launch(emulator(), {4}, {}, x, out, 0, n);
  auto hx = x.download(), got = out.download();
  size_t bad = 0;
  for (size_t i = 0; i < size_t(n); ++i)
    bad += got[i] != hx[i] * 2.0f;
  CHECK(bad == 0);
}
