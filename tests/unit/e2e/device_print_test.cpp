// device_print and device_assert on the emulator: the kernel module calls
// the ROCm device library's printf functions (as the code object does) and
// the emulator services them. Printed lines are captured from stdout and
// compared, as a set, with what the host expects (programs and threads print
// in no fixed order); a failed device_assert is the launch's tessel::Error.
#include "e2e_common.hpp"

#include <algorithm>
#include <map>
#include <set>

using namespace tessel;
using namespace e2e;

namespace {

// What `run()` writes to standard output (fd 1, through a file). The
// tessel::Error it throws goes to `error` when given (else it fails the test).
template <class Fn> std::string stdoutOf(const std::string &file, Fn run, std::string *errorOut = nullptr) {
  std::string error;
  std::string printed = testing::outputOf(1, file, [&] {
    try {
      run();
    } catch (const Error &e) {
      error = e.what();
    }
  });
  if (errorOut)
    *errorOut = error;
  else
    REQUIRE_MESSAGE(error.empty(), error);
  return printed;
}

std::vector<std::string> linesOf(const std::string &text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// The first line where two sorted lists differ, for a failure's message.
std::string firstDifference(const std::vector<std::string> &got, const std::vector<std::string> &expected) {
  for (size_t i = 0; i < std::max(got.size(), expected.size()); ++i) {
    const std::string a = i < got.size() ? got[i] : "<none>", b = i < expected.size() ? expected[i] : "<none>";
    if (a != b)
      return "line " + std::to_string(i) + ": printed '" + a + "', expected '" + b + "' (" +
             std::to_string(got.size()) + " lines printed, " + std::to_string(expected.size()) + " expected)";
  }
  return "";
}

std::string printf1(const char *format, auto... args) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

std::string tempFile(const char *name) { return std::string("/tmp/tessel-device-print-") + name + "-" + std::to_string(getpid()); }

// ---- kernels ----

// x, or -1 past n: every element of a 1-D tile, masked.
void print_masked(Ptr<f32> x, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  device_print("x", load(x + offs, mask, -1.0f));
}

// A 2-D [ROWS, COLS] tile of i32 and its f16 copy, two operands.
void print_2d(Ptr<i32> x, i32 rows, i32 cols, Const<int> ROWS, Const<int> COLS) {
  auto r = expand_dims(arange(0, ROWS), 1);
  auto c = expand_dims(arange(0, COLS), 0);
  auto mask = (r < rows) & (c < cols);
  auto v = load(x + r * cols + c, mask, 0);
  device_print("v=", v, cast<half>(v)); // Triton makes the prefix " v=: "
}

// Scalars of several types, once per program.
void print_scalars(Ptr<i64> x, Ptr<bfloat16> y, i32 n) {
  auto big = load(x);
  auto flag = n > 3;
  device_print("scalars", big, load(y), flag, n, cast<int8_t>(n - 12), cast<double>(n) * 0.5);
  device_print("hello");
}

// Inside a loop and a branch: the sum so far each step, from program 1 only,
// and a check of each step's tile.
constexpr unsigned kLoopAssertLine = __LINE__ + 7;
void print_in_loop(Ptr<i32> x, i32 steps, Const<int> BLOCK) {
  auto total = zeros<i32>({BLOCK});
  for_range(0, steps, [&](i32 k) {
    auto v = load(x + k * BLOCK + arange(0, BLOCK));
    total = total + v;
    if_(program_id(0) == 1, [&] { device_print("k", k, sum(total, 0)); });
    device_assert(v != 13, "no 13");
  });
}

// Values below 100 where the mask holds.
constexpr unsigned kAssertLine = __LINE__ + 5;
void check_small(Ptr<i32> x, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask, 0);
  device_assert(v < 100, "values below 100");
  store(x + offs, v + 1, mask);
}

constexpr unsigned kAssert2dLine = __LINE__ + 5;
void check_2d(Ptr<f32> x, i32 cols, Const<int> ROWS, Const<int> COLS) {
  auto r = expand_dims(arange(0, ROWS), 1);
  auto c = expand_dims(arange(0, COLS), 0);
  auto v = load(x + r * cols + c, c < cols, 0.0f);
  device_assert(v == v, "no NaN");
}

} // namespace

TEST_CASE("device_print prints every element once with Triton's pid/idx format, masked values as loaded "
          "(gfx942 wave64 and gfx1100 wave32, odd n)") {
  const int n = 77, BLOCK = 64;
  auto host = randomFloats(n);
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    auto x = dev.upload(host);
    auto kernel = jit<print_masked>();
    // 4 waves over 64 elements: most threads hold replicas, which print nothing.
    const std::string out = stdoutOf(tempFile("masked"), [&] { kernel.launch(dev, {2}, {.num_warps = 4}, x, n, BLOCK); });
    std::vector<std::string> expected;
    for (int pid = 0; pid < 2; ++pid)
      for (int i = 0; i < BLOCK; ++i) {
        const int g = pid * BLOCK + i;
        const double value = g < n ? double(host[size_t(g)]) : -1.0;
        expected.push_back(printf1("pid (%d, 0, 0) idx (%2d) x: %f", pid, i, value));
      }
    std::sort(expected.begin(), expected.end());
    CHECK_MESSAGE(linesOf(out) == expected, firstDifference(linesOf(out), expected));
  }
}

TEST_CASE("device_print of two 2-D tiles (i32 and f16, [8, 16] holding a 5 x 13 region): one line per element "
          "and operand, indices padded per dim") {
  const int rows = 5, cols = 13, ROWS = 8, COLS = 16;
  auto host = randomInts<int32_t>(size_t(rows * cols), -500, 500);
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    auto x = dev.upload(host);
    auto kernel = jit<print_2d>();
    const std::string out =
        stdoutOf(tempFile("2d"), [&] { kernel.launch(dev, {1}, {.num_warps = 2}, x, rows, cols, ROWS, COLS); });
    std::vector<std::string> expected;
    for (int r = 0; r < ROWS; ++r)
      for (int c = 0; c < COLS; ++c) {
        const int v = r < rows && c < cols ? host[size_t(r * cols + c)] : 0;
        expected.push_back(printf1("pid (0, 0, 0) idx (%1d, %2d) v=: (operand 0) %d", r, c, v));
        // |v| <= 500 is exact in f16.
        expected.push_back(printf1("pid (0, 0, 0) idx (%1d, %2d) v=: (operand 1) %f", r, c, double(v)));
      }
    std::sort(expected.begin(), expected.end());
    CHECK_MESSAGE(linesOf(out) == expected, firstDifference(linesOf(out), expected));
  }
}

TEST_CASE("device_print of scalars (i64, bf16, bool, i32, i8, f64) prints once per program; with no value, one line per "
          "program") {
  Device dev = emulator();
  std::vector<int64_t> big{int64_t(1) << 40};
  std::vector<bfloat16> y{bfloat16(1.5f)};
  auto bx = dev.upload(big);
  auto by = dev.upload(y);
  auto kernel = jit<print_scalars>();
  const std::string out = stdoutOf(tempFile("scalars"), [&] { kernel.launch(dev, {3}, {.num_warps = 2}, bx, by, 9); });
  std::vector<std::string> expected;
  for (int pid = 0; pid < 3; ++pid) {
    expected.push_back(printf1("pid (%d, 0, 0) idx () scalars: (operand 0) 1099511627776", pid));
    expected.push_back(printf1("pid (%d, 0, 0) idx () scalars: (operand 1) 1.500000", pid));
    expected.push_back(printf1("pid (%d, 0, 0) idx () scalars: (operand 2) 1", pid));
    expected.push_back(printf1("pid (%d, 0, 0) idx () scalars: (operand 3) 9", pid));
    expected.push_back(printf1("pid (%d, 0, 0) idx () scalars: (operand 4) -3", pid)); // i8, sign-extended
    expected.push_back(printf1("pid (%d, 0, 0) idx () scalars: (operand 5) 4.500000", pid));
    expected.push_back(printf1("pid (%d, 0, 0) hello", pid));
  }
  std::sort(expected.begin(), expected.end());
  CHECK_MESSAGE(linesOf(out) == expected, firstDifference(linesOf(out), expected));
}

TEST_CASE("device_assert: a false element stops the launch with an Error naming the line, program and element; "
          "compiled out without LaunchOptions::debug") {
  const int n = 150, BLOCK = 64;
  std::vector<int32_t> host(n, 7);
  host[77] = 500; // program 1, element 13
  for (const char *arch : {"gfx942", "gfx1100"}) {
    CAPTURE(arch);
    Device dev = Device::emulator(arch);
    auto x = dev.upload(host);
    auto kernel = jit<check_small>();
    const std::string error = testutil::errorOf([&] { kernel.launch(dev, {3}, {.num_warps = 2, .debug = true}, x, n, BLOCK); });
    const std::string expected = std::string(__FILE__) + ":" + std::to_string(kAssertLine) +
                                 ": device_assert failed: values below 100: pid (1, 0, 0) idx (13)";
    CHECK_MESSAGE(error.find(expected) != std::string::npos, error);
    // Without debug the check is gone: the kernel runs to the end.
    auto y = dev.upload(host);
    kernel.launch(dev, {3}, {.num_warps = 2}, y, n, BLOCK);
    std::vector<int32_t> back(n);
    back = y.download();
    CHECK(back[77] == 501);
    CHECK(back[0] == 8);
    // Two specializations, two code objects: only the debug one traps.
    CHECK(kernel.stats().compiles + kernel.stats().diskHits == 2);
    CHECK(kernel.lastCompiled()->llvmIR().find("__ockl_fprintf_stderr_begin") == std::string::npos);
    CHECK(kernel.key(LaunchOptions{.debug = true}, y, n, BLOCK) != kernel.key(LaunchOptions{}, y, n, BLOCK));
    // A passing debug launch changes nothing else.
    std::vector<int32_t> fine(n, 1);
    auto z = dev.upload(fine);
    kernel.launch(dev, {3}, {.num_warps = 2, .debug = true}, z, n, BLOCK);
    back = z.download();
    CHECK(back[149] == 2);
  }
}

TEST_CASE("device_assert on a 2-D tile names the row and column") {
  const int cols = 21, ROWS = 4, COLS = 32;
  std::vector<float> host(size_t(ROWS * cols), 1.0f);
  host[size_t(2 * cols + 19)] = std::nanf("");
  auto x = emulator().upload(host);
  auto kernel = jit<check_2d>();
  const std::string error =
      testutil::errorOf([&] { kernel.launch(emulator(), {1}, {.num_warps = 1, .debug = true}, x, cols, ROWS, COLS); });
  CHECK_MESSAGE(error.find(":" + std::to_string(kAssert2dLine) + ": device_assert failed: no NaN: pid (0, 0, 0) idx (2, 19)") !=
                    std::string::npos,
                error);
  CHECK(error.find("launching check_2d") != std::string::npos);
}

TEST_CASE("device_print and device_assert inside a loop and a branch") {
  const int steps = 5, BLOCK = 32;
  std::vector<int32_t> host = randomInts<int32_t>(size_t(steps * BLOCK), 0, 9);
  auto x = emulator().upload(host);
  auto kernel = jit<print_in_loop>();
  const std::string out =
      stdoutOf(tempFile("loop"), [&] { kernel.launch(emulator(), {2}, {.num_warps = 2, .debug = true}, x, steps, BLOCK); });
  std::vector<std::string> expected;
  int total = 0;
  for (int k = 0; k < steps; ++k) {
    for (int i = 0; i < BLOCK; ++i)
      total += host[size_t(k * BLOCK + i)];
    expected.push_back(printf1("pid (1, 0, 0) idx () k: (operand 0) %d", k));
    expected.push_back(printf1("pid (1, 0, 0) idx () k: (operand 1) %d", total));
  }
  std::sort(expected.begin(), expected.end());
  CHECK_MESSAGE(linesOf(out) == expected, firstDifference(linesOf(out), expected));
  // Step 3, element 30 fails in every program: the first program (in launch
  // order) is reported, however the host threads run them.
  host[size_t(3 * BLOCK + 30)] = 13;
  auto y = emulator().upload(host);
  std::string error;
  stdoutOf(tempFile("loop2"), [&] { kernel.launch(emulator(), {6}, {.num_warps = 2, .debug = true}, y, steps, BLOCK); },
           &error);
  CHECK_MESSAGE(error.ends_with(std::string(__FILE__) + ":" + std::to_string(kLoopAssertLine) +
                                ": device_assert failed: no 13: pid (0, 0, 0) idx (30)"),
                error);
}
