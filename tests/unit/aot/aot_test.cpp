// tessel-compile's driver: what it generates for registered kernels, and its
// errors for bad kernels, constants, specializations and arguments. The
// generated launcher is built and launched in tests/aot (aot-vector-add).
#include "aot_driver.hpp"

#include "tessel/aot.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace tessel;
using namespace tessel::aot;

namespace {

void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}
TESSEL_AOT_KERNEL(vector_add, "x", "y", "out", "n", "BLOCK");

// Unnamed parameters, a float and an i64 scalar, a float and a bool constant.
void axpb(Ptr<f32> x, f32 a, i64 n, Const<float> B, Const<bool> NEGATE) {
  auto offs = program_id(0) * 256 + arange(0, 256);
  auto mask = cast<int64_t>(offs) < n;
  auto v = load(x + offs, mask) * a + B;
  store(x + offs, NEGATE ? -v : v, mask);
}
TESSEL_AOT_KERNEL(axpb);

void two_names(Ptr<f32> x, i32 n) { store(x + arange(0, 64), 0.0f, arange(0, 64) < n); }
TESSEL_AOT_KERNEL(two_names, "x"); // one name for two parameters

// A parameter named as the launcher's own: refused.
void clash(Ptr<f32> x, i32 n) { store(x + arange(0, 64), 1.0f, arange(0, 64) < n); }
TESSEL_AOT_KERNEL(clash, "x", "stream");

void same_names(Ptr<f32> x, i32 n) { store(x + arange(0, 64), 1.0f, arange(0, 64) < n); }
TESSEL_AOT_KERNEL(same_names, "x", "x");

// No runtime parameters at all; a bool one.
void nothing(Const<int> N) { (void)N; }
TESSEL_AOT_KERNEL(nothing, "N");
void with_flag(Ptr<f32> x, i1 flag) { (void)flag; store(x + arange(0, 64), 1.0f); }
TESSEL_AOT_KERNEL(with_flag, "x", "flag");

void twice(Ptr<f32> x) { store(x + arange(0, 64), 1.0f); }
TESSEL_AOT_KERNEL(twice);
TESSEL_AOT_KERNEL(twice);

std::string text(const GeneratedFile &f) { return std::string(f.bytes.begin(), f.bytes.end()); }

const GeneratedFile &file(const std::vector<GeneratedFile> &files, const std::string &name) {
  auto it = std::find_if(files.begin(), files.end(), [&](const GeneratedFile &f) { return f.name == name; });
  REQUIRE_MESSAGE(it != files.end(), name);
  return *it;
}

DriverOptions options(std::vector<std::string> args) {
  args.insert(args.end(), {"-o", "unused"});
  return parseArguments(args);
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

} // namespace

TEST_CASE("tessel-compile: vector_add for two archs and two specializations") {
  auto files = generate(options({"--kernel", "vector_add", "--const", "BLOCK=1024", "--arch", "gfx942,gfx1100",
                                 "--spec", "x,x,x,x", "--spec", "16,16,16,1"}));
  REQUIRE(files.size() == 6);
  const std::string header = text(file(files, "vector_add.hpp"));
  CHECK(contains(header, "hipError_t vector_add(dim3 grid, hipStream_t stream, const float *x, const float *y, "
                         "const float *out, int32_t n);"));
  CHECK(contains(header, "hipError_t vector_add_unload();"));
  CHECK(contains(header, "namespace tessel_aot {"));
  CHECK(contains(header, "vector_add with BLOCK = 1024, 4 warps; for gfx942, gfx1100"));
  const std::string source = text(file(files, "vector_add.cpp"));
  // The most specialized variant first, per arch; block sizes per wave size.
  const size_t special942 = source.find("{\"gfx942\", kImage0, \"vector_add__16_16_16_1\", 256, {4, 4, 4, 1}}");
  const size_t special1100 = source.find("{\"gfx1100\", kImage1, \"vector_add__16_16_16_1\", 128, {4, 4, 4, 1}}");
  const size_t general942 = source.find("{\"gfx942\", kImage2, \"vector_add__x_x_x_x\", 256, {0, 0, 0, 0}}");
  const size_t general1100 = source.find("{\"gfx1100\", kImage3, \"vector_add__x_x_x_x\", 128, {0, 0, 0, 0}}");
  CHECK(special942 != std::string::npos);
  CHECK(special1100 != std::string::npos);
  CHECK(general942 != std::string::npos);
  CHECK(general1100 != std::string::npos);
  // The kernarg layout of core/kernarg.hpp: three pointers, then n.
  CHECK(contains(source, "std::memcpy(tessel_args + 16, &tessel_address, 8);"));
  CHECK(contains(source, "std::memcpy(tessel_args + 24, &n, 4);"));
  CHECK(contains(source, "tessel_launch_variant(tessel_grid, tessel_stream, tessel_actual, tessel_args, 28);"));
  // Each code object is an AMDGPU ELF whose symbol names its specialization.
  for (const char *name : {"vector_add.gfx942.16_16_16_1.hsaco", "vector_add.gfx1100.16_16_16_1.hsaco",
                           "vector_add.gfx942.x_x_x_x.hsaco", "vector_add.gfx1100.x_x_x_x.hsaco"}) {
    CAPTURE(name);
    const std::string object = text(file(files, name));
    REQUIRE(object.size() > 64);
    CHECK(object.substr(0, 4) == "\x7f" "ELF");
    CHECK(uint8_t(object[18]) == 224); // EM_AMDGPU
    CHECK(contains(object, contains(name, "x_x") ? "vector_add__x_x_x_x.kd" : "vector_add__16_16_16_1.kd"));
  }
}

TEST_CASE("tessel-compile: default names, scalar types, float and bool constants, options") {
  auto files = generate(options({"--kernel", "axpb", "--const", "arg3=0.5", "--const", "arg4=true", "--name",
                                 "axpb_neg", "--namespace", "my::kernels", "--num-warps", "2", "--arch", "gfx90a"}));
  REQUIRE(files.size() == 3);
  const std::string header = text(file(files, "axpb_neg.hpp"));
  CHECK(contains(header, "hipError_t axpb_neg(dim3 grid, hipStream_t stream, const float *arg0, float arg1, "
                         "int64_t arg2);"));
  CHECK(contains(header, "namespace my::kernels {"));
  CHECK(contains(header, "axpb with arg3 = 0.5, arg4 = true, 2 warps; for gfx90a; specializations (x,x,x)"));
  const std::string source = text(file(files, "axpb_neg.cpp"));
  CHECK(contains(source, "\"axpb_neg__x_x_x\", 128, {0, 0, 0}}"));
  // f32 at 8, the i64 at 16 (its natural alignment).
  CHECK(contains(source, "std::memcpy(tessel_args + 8, &arg1, 4);"));
  CHECK(contains(source, "std::memcpy(tessel_args + 16, &arg2, 8);"));
  CHECK(contains(listKernels(), "axpb(Ptr<f32> arg0, f32 arg1, i64 arg2, Const<float> arg3, Const<bool> arg4)"));
  CHECK(contains(listKernels(), "vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int32_t> BLOCK)"));
  auto fused = generate(options({"--kernel", "axpb", "--const", "arg3=0.5", "--const", "arg4=true", "--fast-math",
                                 "--fp-fusion"}));
  CHECK(contains(text(file(fused, "axpb.hpp")), "4 warps, fast math, fp fusion; for gfx942"));
  // --waves-per-eu: the request reaches the code object's register budget
  // (a header line says it) and is checked against the target.
  auto asked = generate(options({"--kernel", "axpb", "--const", "arg3=0.5", "--const", "arg4=true",
                                 "--waves-per-eu", "4"}));
  CHECK(contains(text(file(asked, "axpb.hpp")), "4 warps, waves_per_eu 4; for gfx942"));
  CHECK_THROWS_WITH_AS(generate(options({"--kernel", "axpb", "--const", "arg3=0.5", "--const", "arg4=true",
                                         "--waves-per-eu", "9"})),
                       doctest::Contains("waves_per_eu must be 0 (no request) or 1 to 8, the wave slots of a SIMD "
                                         "on gfx942; got 9"),
                       Error);
}

TEST_CASE("tessel-compile: a kernel without runtime parameters, and bool parameters") {
  auto files = generate(options({"--kernel", "nothing", "--const", "N=3"}));
  REQUIRE(files.size() == 3);
  CHECK(file(files, "nothing.gfx942.none.hsaco").bytes.size() > 64);
  CHECK(contains(text(file(files, "nothing.hpp")), "hipError_t nothing(dim3 grid, hipStream_t stream);"));
  CHECK(contains(text(file(files, "nothing.cpp")), "\"nothing__none\""));
  auto flag = generate(options({"--kernel", "with_flag", "--spec", "16,x"}));
  CHECK(contains(text(file(flag, "with_flag.hpp")), "const float *x, bool flag);"));
  CHECK(contains(text(file(flag, "with_flag.cpp")), "std::memcpy(tessel_args + 8, &flag, 1);"));
}

TEST_CASE("tessel-compile: errors name the problem") {
  auto fails = [](std::vector<std::string> args, const std::string &message) {
    CAPTURE(message);
    CHECK_THROWS_WITH_AS(generate(options(args)), doctest::Contains(message.c_str()), Error);
  };
  fails({"--kernel", "nope"}, "no kernel 'nope' is registered (registered: vector_add, axpb, two_names, clash, same_names, nothing, with_flag, twice");
  fails({"--kernel", "vector_add"}, "vector_add: no value for the constant 'BLOCK' (Const<int32_t>): --const BLOCK=VALUE");
  fails({"--kernel", "vector_add", "--const", "BLOCK=64", "--const", "BLOCKS=2"},
        "--const BLOCKS=2: vector_add has no Const parameter 'BLOCKS'");
  fails({"--kernel", "vector_add", "--const", "BLOCK=6x"}, "vector_add: argument 4 (Const<int32_t>) = '6x' is not an integer");
  fails({"--kernel", "vector_add", "--const", "BLOCK=3000000000"},
        "vector_add: argument 4 (Const<int32_t>) = 3000000000 is out of range for int32_t");
  fails({"--kernel", "axpb", "--const", "arg3=1", "--const", "arg4=2"},
        "axpb: argument 4 (Const<bool>) = 2 is out of range for bool");
  fails({"--kernel", "vector_add", "--const", "BLOCK=64", "--spec", "16,16,16"},
        "--spec 16,16,16: 3 entries for vector_add's 4 runtime parameters");
  fails({"--kernel", "vector_add", "--const", "BLOCK=64", "--spec", "1,x,x,x"},
        "--spec 1,x,x,x: '1' for vector_add's parameter 'x' (Ptr<f32>): only integer arguments specialize on equalling 1");
  fails({"--kernel", "vector_add", "--const", "BLOCK=64", "--spec", "x,x,x,8"},
        "'8' for vector_add's parameter 'n' (i32): a specialization is 16");
  fails({"--kernel", "axpb", "--const", "arg3=1", "--const", "arg4=0", "--spec", "x,16,x"},
        "'16' for axpb's parameter 'arg1' (f32): a float argument takes only x");
  fails({"--kernel", "vector_add", "--const", "BLOCK=64", "--spec", "x,x,x,x", "--spec", "x,x,x,-"},
        "--spec x,x,x,- is given twice");
  fails({"--kernel", "two_names"}, "TESSEL_AOT_KERNEL(two_names, ...) names 1 parameters; two_names has 2");
  fails({"--kernel", "clash"}, "clash's parameter name 'stream' cannot name a launcher parameter");
  fails({"--kernel", "same_names"}, "same_names names two parameters 'x'");
  fails({"--kernel", "with_flag", "--spec", "x,1"}, "'1' for with_flag's parameter 'flag' (i1): a bool argument takes only x");
  fails({"--kernel", "twice"}, "kernel 'twice' is registered twice (TESSEL_AOT_KERNEL at ");
  // A kernel's own trace-time error keeps the kernel's line.
  fails({"--kernel", "vector_add", "--const", "BLOCK=100"}, "aot_test.cpp:");

  auto badArgs = [](std::vector<std::string> args, const std::string &message) {
    CAPTURE(message);
    CHECK_THROWS_WITH_AS(parseArguments(args), doctest::Contains(message.c_str()), Error);
  };
  badArgs({"--kernel", "vector_add"}, "-o DIR is required");
  badArgs({"-o", "d"}, "--kernel NAME is required");
  badArgs({"--kernel", "vector_add", "-o", "d", "--arch", "gfx803"}, "gfx803");
  badArgs({"--kernel", "vector_add", "-o", "d", "--name", "2add"}, "--name '2add' is not a C++ identifier");
  badArgs({"--kernel", "vector_add", "-o", "d", "--num-warps", "four"}, "--num-warps takes a positive integer, not 'four'");
  badArgs({"--kernel", "vector_add", "-o", "d", "--frobnicate"}, "unknown argument '--frobnicate'");
  badArgs({"--kernel", "vector_add", "-o"}, "-o needs a value");
  badArgs({"--kernel", "vector_add", "-o", "d", "--namespace", "a:b"}, "--namespace 'a:b' is not a C++ namespace name");
  badArgs({"--kernel", "vector_add", "-o", "d", "--namespace", ""}, "--namespace '' is not a C++ namespace name");
  badArgs({"--kernel", "vector_add", "-o", "d", "--name", "tessel_x"}, "--name 'tessel_x' is not a C++ identifier of its own");
}
