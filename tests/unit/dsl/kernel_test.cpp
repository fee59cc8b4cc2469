// The kernel object: argument binding, specialization bits, the key, the
// kernarg bytes, and the trace fingerprint.
#include "dsl_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tessel;
using dsltest::at;
using dsltest::errorOf;

namespace {

void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

// Same body as vector_add, on other lines: only the locations differ.
void vector_add_elsewhere(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

// Every kind of runtime parameter, in an order that needs padding.
void mixed(Ptr<f16> a, i8 b, i64 c, f32 d, Const<int> K, i1 e, f16 f, Ptr<int32_t> g, i16 h, bf16 i, f64 j) {
  store(a + arange(0, K), cast<half>(full({K}, d)));
  store(g, cast<int32_t>(b) + cast<int32_t>(c) + cast<int32_t>(e) + cast<int32_t>(h) + cast<int32_t>(f) +
               cast<int32_t>(i) + cast<int32_t>(j));
}

float *fakeAddress(uintptr_t a) { return reinterpret_cast<float *>(a); }

} // namespace

TEST_CASE("specialization bits: int == 1, int % 16 == 0, pointer 16-byte aligned") {
  auto add = jit<vector_add>();
  float *aligned = fakeAddress(0x10000), *misaligned = fakeAddress(0x10004);

  auto spec = add.trace(aligned, misaligned, aligned, 1, 256).spec;
  REQUIRE(spec.args.size() == 4);
  CHECK(spec.args[0].aligned16);
  CHECK(!spec.args[1].aligned16);
  CHECK(spec.args[2].aligned16);
  CHECK(spec.args[3].equalsOne);
  CHECK(!spec.args[3].divisibleBy16);

  spec = add.trace(aligned, aligned, aligned, 32, 256).spec;
  CHECK(!spec.args[3].equalsOne);
  CHECK(spec.args[3].divisibleBy16);

  spec = add.trace(aligned, aligned, aligned, 33, 256).spec;
  CHECK(spec.args[3] == ArgSpecialization{});
  CHECK(!spec.args[3].aligned16);
}

TEST_CASE("specialization bits: a Buffer of at most 2^31 - 2 bytes is within2GiB, a raw address never") {
  auto add = jit<vector_add>();
  Device dev = Device::emulator("gfx942");
  auto small = dev.alloc<float>(100);
  float *raw = fakeAddress(0x10000);
  auto spec = add.trace(small, raw, small, 7, 256).spec;
  CHECK(spec.args[0].within2GiB);
  CHECK_FALSE(spec.args[1].within2GiB); // its extent is unknown
  CHECK(spec.args[2].within2GiB);
  CHECK_FALSE(spec.args[3].within2GiB);
  CHECK(kMaxBufferBytes == 2147483646u);
  // At the edge (the emulator's memory is not touched: no page is committed).
  auto largest = dev.alloc<float>(kMaxBufferBytes / sizeof(float));
  auto tooLarge = dev.alloc<float>(kMaxBufferBytes / sizeof(float) + 1); // 2^31 bytes
  spec = add.trace(largest, tooLarge, small, 7, 256).spec;
  CHECK(spec.args[0].within2GiB);
  CHECK_FALSE(spec.args[1].within2GiB);
}

TEST_CASE("the key: spec bits per runtime arg, then constants, then num_warps and num_stages") {
  auto add = jit<vector_add>();
  float *aligned = fakeAddress(0x10000), *misaligned = fakeAddress(0x10004);
  detail::KernelKey k = add.key({.num_warps = 8}, aligned, misaligned, aligned, 32, 1024);
  REQUIRE(k.size == 6);
  CHECK(k.words[0] == detail::kAligned16);
  CHECK(k.words[1] == 0);
  CHECK(k.words[2] == detail::kAligned16);
  CHECK(k.words[3] == detail::kDivisibleBy16);
  CHECK(k.words[4] == 1024);
  CHECK(k.words[5] == (8 | uint64_t(1) << 32)); // num_warps 8, num_stages 1
  CHECK(add.key({.num_warps = 8, .num_stages = 2}, aligned, misaligned, aligned, 32, 1024).words[5] ==
        (8 | uint64_t(2) << 32));

  CHECK(add.key({}, aligned, aligned, aligned, 1, 1024).words[3] == detail::kEqualsOne);
  CHECK(add.key({}, aligned, aligned, aligned, 33, 1024).words[3] == 0);
  CHECK(add.key({}, aligned, aligned, aligned, 33, 1024).words[5] == (4 | uint64_t(1) << 32)); // the defaults

  // Values that specialize alike share a key; a constant changes it.
  auto words = [](const detail::KernelKey &key) {
    return std::vector<uint64_t>(key.words.begin(), key.words.begin() + key.size);
  };
  CHECK(words(add.key({}, aligned, aligned, aligned, 48, 1024)) ==
        words(add.key({}, aligned, aligned, aligned, 4096, 1024)));
  CHECK(words(add.key({}, aligned, aligned, aligned, 48, 1024)) !=
        words(add.key({}, aligned, aligned, aligned, 48, 512)));
}

TEST_CASE("compile-time kernarg offsets equal kernargLayout()") {
  auto k = jit<mixed>();
  using K = decltype(k);
  half *a = reinterpret_cast<half *>(uintptr_t{0x2000});
  int32_t *g = reinterpret_cast<int32_t *>(uintptr_t{0x3008});
  auto req = k.trace(a, int8_t{-3}, int64_t{1} << 40, 2.5, 16, true, 1.5f, g, 300, 0.75f, 2.0);
  REQUIRE(req.trace.args.size() == 10);
  KernargLayout layout = kernargLayout(req.trace.args);
  REQUIRE(layout.offsets.size() == K::kNumRuntimeArgs);
  for (size_t i = 0; i < K::kNumRuntimeArgs; ++i) {
    CHECK(K::kKernargs.offsets[i] == layout.offsets[i]);
    CHECK(K::kKernargs.sizes[i] == layout.sizes[i]);
  }
  CHECK(K::kKernargs.totalBytes == layout.totalBytes);
  // a@0 b@8 c@16 d@24 e@28 f@30 g@32 h@40 i@42 j@48
  CHECK(std::vector<uint32_t>(K::kKernargs.offsets.begin(), K::kKernargs.offsets.end()) ==
        std::vector<uint32_t>{0, 8, 16, 24, 28, 30, 32, 40, 42, 48});
  CHECK(K::kKernargs.totalBytes == 56);
  static_assert(decltype(jit<vector_add>())::kKernargs.totalBytes == 28);
  // One rule lays out both sides: the trace hands the compiler exactly the
  // kernel's runtime arguments, and the compiler's kernargLayout(), evaluated
  // at compile time on them, is kKernargs.
  CHECK(std::equal(req.trace.args.begin(), req.trace.args.end(), K::kRuntimeArgs.begin(), K::kRuntimeArgs.end()));
  static_assert([] {
    KernargLayout l = kernargLayout(std::vector<TraceArg>(K::kRuntimeArgs.begin(), K::kRuntimeArgs.end()));
    return std::ranges::equal(l.offsets, K::kKernargs.offsets) && std::ranges::equal(l.sizes, K::kKernargs.sizes) &&
           l.totalBytes == K::kKernargs.totalBytes;
  }());

  // The packed bytes hold each value at its offset.
  auto bytes = k.kernarg(a, int8_t{-3}, int64_t{1} << 40, 2.5, 16, true, 1.5f, g, 300, 0.75f, 2.0);
  auto read = [&]<class T>(size_t argIndex, T) {
    T v;
    std::memcpy(&v, bytes.data() + K::kKernargs.offsets[argIndex], sizeof v);
    return v;
  };
  CHECK(read(0, uint64_t{}) == 0x2000);
  CHECK(read(1, int8_t{}) == -3);
  CHECK(read(2, int64_t{}) == int64_t{1} << 40);
  CHECK(read(3, float{}) == 2.5f);
  CHECK(read(4, uint8_t{}) == 1);
  CHECK(read(5, uint16_t{}) == half(1.5f).bits);
  CHECK(read(6, uint64_t{}) == 0x3008);
  CHECK(read(7, int16_t{}) == 300);
  CHECK(read(8, uint16_t{}) == bfloat16(0.75f).bits);
  CHECK(read(9, double{}) == 2.0);

  // Arg kinds and dtypes follow the parameter types.
  CHECK(req.trace.args[0].kind == TraceArg::Pointer);
  CHECK(req.trace.args[0].dtype == DType::F16);
  CHECK(req.trace.args[3].kind == TraceArg::Float);
  CHECK(req.trace.args[4].kind == TraceArg::Int);
  CHECK(req.trace.args[4].dtype == DType::I1);
  CHECK(req.trace.args[9].dtype == DType::F64);
  CHECK(req.spec.args[6].aligned16 == false); // 0x3008
  CHECK(req.spec.args[0].aligned16 == true);
}

TEST_CASE("integer arguments are range-checked and name their index") {
  auto add = jit<vector_add>();
  float *p = fakeAddress(0x100);
  CHECK(errorOf([&] { add.trace(p, p, p, 5'000'000'000LL, 256); }) ==
        "vector_add: argument 3 (i32) = 5000000000 is out of range for i32");
  CHECK(errorOf([&] { add.key({}, p, p, p, -5'000'000'000LL, 256); }) ==
        "vector_add: argument 3 (i32) = -5000000000 is out of range for i32");
  CHECK(errorOf([&] { add.trace(p, p, p, uint32_t{3'000'000'000u}, 256); }) ==
        "vector_add: argument 3 (i32) = 3000000000 is out of range for i32");
  CHECK(errorOf([&] { add.trace(p, p, p, size_t{7}, 256); }) == "<no error>");
}

namespace {
void fill_i8(Ptr<i8> out, Const<int8_t> V) { store(out + arange(0, 16), full<int8_t>({16}, V)); }
void scaled(Ptr<f32> out, Const<float> S, Const<unsigned> U) { store(out + arange(0, 16), zeros<float>({16}) + S); }
} // namespace

TEST_CASE("trace-time constants are range-checked like runtime arguments, and integers stay integers") {
  auto add = jit<vector_add>();
  float *p = fakeAddress(0x100);
  CHECK(errorOf([&] { add.key({}, p, p, p, 1, (1LL << 32) + 256); }) ==
        "vector_add: argument 4 (Const<int32_t>) = 4294967552 is out of range for int32_t");
  CHECK(errorOf([&] { add.trace(p, p, p, 1, (1LL << 32) + 256); }) ==
        "vector_add: argument 4 (Const<int32_t>) = 4294967552 is out of range for int32_t");
  CHECK(errorOf([&] { add.key({}, p, p, p, 1, 64.9); }) ==
        "vector_add: argument 4 (Const<int32_t>) = 64.9 is not an integer, which Const<int32_t> needs");
  CHECK(errorOf([&] { add.key({}, p, p, p, 1, 3e10); }) ==
        "vector_add: argument 4 (Const<int32_t>) = 30000000000 is out of range for int32_t");
  CHECK(errorOf([&] { add.key({}, p, p, p, 1, NAN); }).find("is not an integer") != std::string::npos);
  CHECK(errorOf([&] { add.key({}, p, p, p, 1, 64.0); }) == "<no error>");
  CHECK(add.key({}, p, p, p, 1, 64.0).words[4] == 64);
  CHECK(errorOf([&] { add.key({}, p, p, p, 1, uint64_t{256}); }) == "<no error>");

  auto fill = jit<fill_i8>();
  int8_t *q = reinterpret_cast<int8_t *>(fakeAddress(0x200));
  CHECK(errorOf([&] { fill.trace(q, 300); }) == "fill_i8: argument 1 (Const<int8_t>) = 300 is out of range for int8_t");
  CHECK(errorOf([&] { fill.trace(q, -129); }) == "fill_i8: argument 1 (Const<int8_t>) = -129 is out of range for int8_t");
  CHECK(errorOf([&] { fill.trace(q, -128); }) == "<no error>");
  CHECK(errorOf([&] { fill.trace(q, true); }) == "<no error>");

  auto sc = jit<scaled>();
  CHECK(errorOf([&] { sc.key({}, p, 0.1, 7); }) == "<no error>"); // a float constant takes any number
  CHECK(errorOf([&] { sc.key({}, p, 1, -1); }) ==
        "scaled: argument 2 (Const<uint32_t>) = -1 is out of range for uint32_t");
}

TEST_CASE("fingerprint: stable per call, changes with constants and source lines") {
  auto add = jit(vector_add, "va");
  auto other = jit(vector_add_elsewhere, "va");
  float *p = fakeAddress(0x100);
  uint64_t first = add.trace(p, p, p, 100, 256).trace.fingerprint();
  CHECK(add.trace(p, p, p, 100, 256).trace.fingerprint() == first);
  CHECK(add.trace(p, p, p, 7, 256).trace.fingerprint() == first); // runtime values are not in the trace
  CHECK(add.trace(p, p, p, 100, 512).trace.fingerprint() != first);
  Trace here = add.trace(p, p, p, 100, 256).trace;
  Trace there = other.trace(p, p, p, 100, 256).trace;
  REQUIRE(here.nodes.size() == there.nodes.size());
  CHECK(here.fingerprint() != there.fingerprint()); // same ops, other lines
  // Where jit() is called does not matter: the same kernel jitted twice is one kernel.
  auto again = jit(vector_add, "va");
  CHECK(again.trace(p, p, p, 100, 256).trace.fingerprint() == first);
}

TEST_CASE("kernel names") {
  CHECK(jit<mixed>().name() == "mixed");
  CHECK(detail::kernelNameFromSignature("auto tessel::jit() [Fn = &(anonymous namespace)::vector_add]") ==
        "vector_add");
  CHECK(detail::kernelNameFromSignature("auto tessel::jit(std::source_location) [with auto Fn = ns::inner::bar]") ==
        "bar");
  CHECK(detail::kernelNameFromSignature("auto tessel::jit() [Fn = &ns::foo<float, 4>]") == "foo_float_4");
  int line = __LINE__ + 1;
  std::string msg = errorOf([] { jit(vector_add, "vector add"); });
  CHECK(msg == at(__FILE__, line) +
                   "jit: kernel name 'vector add' is not a C identifier (letters, digits, _; not starting with a digit)");
  CHECK(errorOf([] { jit(vector_add, ""); }).find("is not a C identifier") != std::string::npos);
  CHECK(errorOf([] { jit(vector_add, "9lives"); }).find("is not a C identifier") != std::string::npos);
  // Names of tessel's own and the device libraries' symbols are reserved.
  line = __LINE__ + 1;
  msg = errorOf([] { jit(vector_add, "__ocml_sin_f32"); });
  CHECK(msg == at(__FILE__, line) + "jit: kernel name '__ocml_sin_f32' is reserved: names starting with '__' "
                                    "belong to the compiler and the device libraries; choose another name");
  msg = errorOf([] { jit(vector_add, "tessel_emu_entry"); });
  CHECK(msg.find("kernel name 'tessel_emu_entry' is reserved: names starting with 'tessel_emu_' belong to "
                 "tessel's emulator") != std::string::npos);
  CHECK(errorOf([] { jit(vector_add, "_private_ok"); }) == "<no error>");
  CHECK(errorOf([] { jit(vector_add, "tessel_kernel"); }) == "<no error>");
}

TEST_CASE("launch without a Device needs a Buffer argument") {
  auto add = jit<vector_add>();
  float *p = fakeAddress(0x100);
  CHECK(errorOf([&] { add.deviceOfArguments(p, p, p, 4, 256); }) ==
        "vector_add: launch without a Device takes the device from the first Buffer argument, and there is "
        "none; pass the Device first");
}

TEST_CASE("a grid from int values: {m}, {m, n}; out of range it says so at launch") {
  int m = 5, n = 3;
  Dim3 a{m};
  CHECK((a.x == 5 && a.y == 1 && a.z == 1));
  Dim3 b{m, n};
  CHECK((b.x == 5 && b.y == 3 && b.z == 1));
  Dim3 c{size_t{7}, int16_t{2}, 4u};
  CHECK((c.x == 7 && c.y == 2 && c.z == 4 && !c.outOfRange()));
  CHECK(c.rangeProblem().empty());
  static_assert(Dim3{4, 2}.y == 2 && Dim3{}.z == 1);
  Dim3 negative{-1, 2, 3};
  CHECK(negative.outOfRange());
  CHECK(negative.x == 0); // a dimension no device launches
  CHECK(negative.rangeProblem() == "the grid {-1, 2, 3} has a negative dimension; each of x, y, z must be at least 1");
  Dim3 large{uint64_t{1} << 40, m};
  CHECK(large.rangeProblem() ==
        "the grid {1099511627776, 5, 1} has a dimension above 4294967295 (grid dimensions are uint32_t)");
  CHECK(Dim3{UINT64_MAX}.rangeProblem().starts_with("the grid {18446744073709551615, 1, 1} has a dimension above"));
}

TEST_CASE("host cdiv for grids") {
  static_assert(cdiv(1000, 256) == 4);
  static_assert(cdiv(1024, 256) == 4);
  static_assert(cdiv(0, 256) == 0);
  static_assert(cdiv(size_t{1} << 20, 1024u) == 1024);
  Dim3 grid{cdiv(1000, 256)}; // no narrowing from a runtime int
  CHECK(grid.x == 4);
  int n = 1000;
  Dim3 runtimeGrid{cdiv(n, 256), cdiv(n, 1000)};
  CHECK(runtimeGrid.x == 4);
  CHECK(runtimeGrid.y == 1);
  // Host errors name the caller's line.
  auto line = [](int n) { return std::string(__FILE__) + ":" + std::to_string(n) + ": "; };
  int at;
  std::string msg;
  CHECK(errorOf([] { (void)cdiv(-1, 4); }) == line(__LINE__) + "cdiv(-1, 4): needs a >= 0 and b > 0");
  CHECK(errorOf([] { (void)cdiv(4, 0); }) == line(__LINE__) + "cdiv(4, 0): needs a >= 0 and b > 0");
  at = __LINE__ + 1;
  msg = errorOf([] { (void)cdiv(int64_t{1} << 40, 2); });
  CHECK(msg == line(at) + "cdiv(1099511627776, 2) = 549755813888 does not fit a grid dimension (uint32_t)");
}
