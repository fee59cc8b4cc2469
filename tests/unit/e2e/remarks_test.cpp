// Performance remarks (CompiledKernel::remarks, TESSEL_REMARKS=1): known
// kernels get the remarks they should, at their lines, and no others.
#include "e2e_common.hpp"
#include "../scoped_env.hpp"
#include "remarks_helper.hpp"

#include "tessel/core/compiled_kernel.hpp"

#include <algorithm>
#include <regex>

using namespace tessel;
using namespace e2e;

namespace {

// Lines of the kernels below, recorded while they are traced.
int gStridedLoadLine = 0, gLoopConvertLine = 0, gCarriedLoadLine = 0, gMaskedLoadLine = 0;

std::vector<Remark> remarksOf(const CompiledKernel &k, RemarkKind kind) {
  std::vector<Remark> out;
  for (const Remark &r : k.remarks)
    if (r.kind == kind)
      out.push_back(r);
  return out;
}

// 256 halves at a runtime stride: contiguity unknown, one element at a time.
void strided_load(Ptr<half> x, Ptr<half> out, i32 stride) {
  auto offs = arange(0, 2048);
  gStridedLoadLine = __LINE__ + 1;
  auto v = load(x + offs * stride);
  store(out + offs, v);
}

// The same without the stride: contiguous, 8 halves (128 bits) per access.
void contiguous_load(Ptr<half> x, Ptr<half> out) {
  auto offs = arange(0, 2048);
  store(out + offs, load(x + offs));
}

} // namespace

TEST_CASE("remarks: a strided load cannot vectorize, a contiguous f16 load moves 128 bits") {
  auto strided = jit<strided_load>();
  auto contiguous = jit<contiguous_load>();
  auto hx = std::vector<half>(2048 * 3);
  auto x = emulator().upload(hx);
  auto out = emulator().alloc<half>(2048);
  strided.launch(emulator(), {1}, {.num_warps = 4}, x, out, 3);
  contiguous.launch(emulator(), {1}, {.num_warps = 4}, x, out);

  const CompiledKernel &s = *strided.runtime()->lastKernel();
  CAPTURE(describeRemarks(s));
  std::vector<Remark> narrow = remarksOf(s, RemarkKind::NarrowAccess);
  REQUIRE(narrow.size() == 1); // the load; the store to out + offs is contiguous
  CHECK(narrow[0].line == unsigned(gStridedLoadLine));
  CHECK(narrow[0].file.ends_with("remarks_test.cpp"));
  CHECK(contains(narrow[0].message, "moves 16 bits per thread"));
  CHECK(contains(narrow[0].message, "contiguous only in runs of 1"));
  CHECK(contains(narrow[0].message, "assume(stride == 1)"));

  const CompiledKernel &c = *contiguous.runtime()->lastKernel();
  CAPTURE(describeRemarks(c));
  CHECK(remarksOf(c, RemarkKind::NarrowAccess).empty());
  CHECK(contains(c.tileIR, "vec = 8")); // what the remark's absence rests on
  // Every kernel gets its occupancy, once.
  CHECK(remarksOf(c, RemarkKind::Occupancy).size() == 1);
  CHECK(remarksOf(s, RemarkKind::Occupancy).size() == 1);
}

namespace {

// A bound not known to be a multiple of 4: the mask changes within a vector.
void masked_copy(Ptr<float> x, Ptr<float> out, i32 n) {
  auto offs = program_id(0) * 1024 + arange(0, 1024);
  gMaskedLoadLine = __LINE__ + 1;
  auto v = load(x + offs, offs < n, 0.0f);
  store(out + offs, v, offs < n);
}

} // namespace

TEST_CASE("remarks: a mask whose bound is not known a multiple of the vector; one divisible by 16 is") {
  auto kernel = jit<masked_copy>();
  auto x = emulator().upload(randomFloats(2048));
  auto out = emulator().alloc<float>(2048);
  kernel.launch(emulator(), {2}, {.num_warps = 4}, x, out, 1001);
  const CompiledKernel &odd = *kernel.runtime()->lastKernel();
  CAPTURE(describeRemarks(odd));
  std::vector<Remark> narrow = remarksOf(odd, RemarkKind::NarrowAccess);
  REQUIRE(narrow.size() == 2); // the load and the store
  CHECK(narrow[0].line == unsigned(gMaskedLoadLine));
  CHECK(narrow[1].line == unsigned(gMaskedLoadLine + 1));
  CHECK(contains(narrow[0].message, "load of 1024 moves 32 bits"));
  CHECK(contains(narrow[0].message, "assume(n % 4 == 0)"));
  CHECK(contains(narrow[1].message, "store of 1024"));

  kernel.launch(emulator(), {2}, {.num_warps = 4}, x, out, 1024);
  const CompiledKernel &even = *kernel.runtime()->lastKernel();
  CAPTURE(describeRemarks(even));
  CHECK(remarksOf(even, RemarkKind::NarrowAccess).empty());
}

namespace {

// A transpose in a loop: each iteration's tile goes through LDS to be
// stored along the other dimension.
void transpose_in_loop(Ptr<float> x, Ptr<float> out, Const<bool> LOOP) {
  auto r = arange(0, 64), c = arange(0, 64);
  auto body = [&](auto i) {
    auto t = load(x + i * 4096 + expand_dims(r, 1) * 64 + expand_dims(c, 0));
    gLoopConvertLine = __LINE__ + 1;
    store(out + i * 4096 + expand_dims(c, 1) * 64 + expand_dims(r, 0), trans(t));
  };
  if (LOOP)
    for_range(0, 4, body);
  else
    body(0);
}

} // namespace

namespace {

int gPidLine = 0, gWrapLine = 0, gWrappedLoadLine = 0;

// Tutorial 03's `(pid_n * BN + arange) % N` with a pid_n of unknown sign
// (a quotient by an argument): a signed remainder of a negative value
// breaks runs, so the load is not vectorized unless ASSUME says pid_n >= 0.
// `+ N` keeps the offsets in [0, 2N) for negative dividends too.
void wrapped_columns(Ptr<float> x, Ptr<float> out, i32 N, i32 groups, Const<bool> ASSUME) {
  gPidLine = __LINE__ + 1;
  auto pid_n = program_id(0) / groups;
  if (ASSUME)
    assume(pid_n >= 0);
  gWrapLine = __LINE__ + 1;
  auto offs = (pid_n * 1024 + arange(0, 1024)) % N + N;
  gWrappedLoadLine = __LINE__ + 1;
  auto v = load(x + offs);
  store(out + program_id(0) * 1024 + arange(0, 1024), v);
}

// What wrapped_columns writes: C's truncating remainder.
std::vector<float> wrappedReference(const std::vector<float> &x, int programs, int n, int groups) {
  std::vector<float> out(size_t(programs) * 1024);
  for (int p = 0; p < programs; ++p)
    for (int i = 0; i < 1024; ++i)
      out[size_t(p) * 1024 + i] = x[size_t((p / groups * 1024 + i) % n + n)];
  return out;
}

} // namespace

TEST_CASE("remarks: a signed % of a value of unknown sign names the % and the scalar to assume() >= 0") {
  auto kernel = jit<wrapped_columns>();
  constexpr int kN = 48, kPrograms = 3;
  const std::vector<float> hx = randomFloats(2 * kN);
  auto x = emulator().upload(hx);
  for (int groups : {1, -1}) { // -1: negative dividends, runs broken at multiples of N
    CAPTURE(groups);
    auto out = poisoned<float>(kPrograms * 1024);
    kernel.launch(emulator(), {kPrograms}, {.num_warps = 4}, x, out, kN, groups, false);
    CHECK(out.download() == wrappedReference(hx, kPrograms, kN, groups));
  }
  const CompiledKernel &unknown = *kernel.runtime()->lastKernel();
  CAPTURE(describeRemarks(unknown));
  std::vector<Remark> narrow = remarksOf(unknown, RemarkKind::NarrowAccess);
  REQUIRE(narrow.size() == 1); // the load; the store's offsets are contiguous
  CHECK(narrow[0].line == unsigned(gWrappedLoadLine));
  CHECK(contains(narrow[0].message, "contiguous only in runs of 1 element"));
  CHECK(contains(narrow[0].message, "a signed % at line " + std::to_string(gWrapLine)));
  CHECK(contains(narrow[0].message, "assume(v >= 0) for the scalar made at line " + std::to_string(gPidLine)));
  CHECK(!contains(narrow[0].message, "stride"));

  // groups = 2, not 1: a 1 is specialized to a constant, and program_id / 1
  // is known >= 0 without the assume.
  auto out = poisoned<float>(kPrograms * 1024);
  kernel.launch(emulator(), {kPrograms}, {.num_warps = 4}, x, out, kN, 2, false);
  CHECK(out.download() == wrappedReference(hx, kPrograms, kN, 2));
  CHECK(remarksOf(*kernel.runtime()->lastKernel(), RemarkKind::NarrowAccess).size() == 1);
  out = poisoned<float>(kPrograms * 1024);
  kernel.launch(emulator(), {kPrograms}, {.num_warps = 4}, x, out, kN, 2, true);
  CHECK(out.download() == wrappedReference(hx, kPrograms, kN, 2));
  const CompiledKernel &assumed = *kernel.runtime()->lastKernel();
  CAPTURE(describeRemarks(assumed));
  CHECK(remarksOf(assumed, RemarkKind::NarrowAccess).empty());
  CHECK(contains(assumed.tileIR, "vec = 4"));
}

namespace {

int gQuotientLine = 0, gLoopLine = 0, gCarriedLine = 0, gIndirectLoadLine = 0;

// A signed % by an N that 16 does not divide: runs stay short whatever the
// sign, so no assume() is offered (the stride-1 advice instead).
void wrapped_by_odd(Ptr<float> x, Ptr<float> out, i32 N, i32 groups) {
  auto offs = ((program_id(0) / groups) * 1024 + arange(0, 1024)) % N + N;
  store(out + program_id(0) * 1024 + arange(0, 1024), load(x + offs));
}

// The dividend is a runtime argument (after a Const<>, which the trace's
// arguments do not count): the remark names it.
void wrapped_from_argument(Ptr<float> x, Ptr<float> out, Const<int> BLOCK, i32 N, i32 start) {
  auto offs = (start + arange(0, BLOCK)) % N + N;
  store(out + arange(0, BLOCK), load(x + offs));
}

// The dividend is a loop's counter from a start of unknown sign.
void wrapped_in_loop(Ptr<float> x, Ptr<float> out, i32 N, i32 first) {
  gLoopLine = __LINE__ + 1;
  for_range(first, first + 2, [&](i32 i) {
    auto offs = (i * 1024 + arange(0, 1024)) % N + N;
    store(out + (i - first) * 1024 + arange(0, 1024), load(x + offs));
  });
}

// A signed / whose quotient would be constant over 4 elements: (f / 4) * 4
// + f % 4 is f for f >= 0, broken for negative f.
void quotient_rows(Ptr<float> x, Ptr<float> out, i32 groups) {
  auto f = (program_id(0) / groups) * 1024 + arange(0, 1024);
  gQuotientLine = __LINE__ + 1;
  auto offs = (f / 4) * 4 + arange(0, 1024) % 4 + 4096;
  store(out + program_id(0) * 1024 + arange(0, 1024), load(x + offs));
}

// Offsets loaded from memory at an index wrapped by a signed %: the
// access's runs are the loaded values', whatever the index's sign.
// (The table's own load is blamed on the %, rightly.)
void indirect_rows(Ptr<float> x, Ptr<int32_t> table, Ptr<float> out, i32 N, i32 groups) {
  auto index = ((program_id(0) / groups) * 1024 + arange(0, 1024)) % N + N;
  auto rows = load(table + index);
  gIndirectLoadLine = __LINE__ + 1;
  auto v = load(x + rows);
  store(out + program_id(0) * 1024 + arange(0, 1024), v);
}

// The dividend is a scalar the loop carries, from an argument of unknown sign.
void wrapped_carried(Ptr<float> x, Ptr<float> out, i32 N, i32 first) {
  i32 start = first * 1024;
  gCarriedLine = __LINE__ + 1;
  for_range(0, 2, [&](i32 i) {
    auto offs = (start + arange(0, 1024)) % N + N;
    store(out + i * 1024 + arange(0, 1024), load(x + offs));
    start = start + 1024;
  });
}

// The % in a helper of another file.
void wrapped_by_helper(Ptr<float> x, Ptr<float> out, i32 N, i32 groups) {
  auto offs = remarks_helper::wrapped((program_id(0) / groups) * 1024 + arange(0, 1024), N) + N;
  store(out + program_id(0) * 1024 + arange(0, 1024), load(x + offs));
}

std::string narrowMessage(const CompiledKernel &k) {
  std::vector<Remark> narrow = remarksOf(k, RemarkKind::NarrowAccess);
  return narrow.empty() ? std::string() : narrow[0].message;
}

} // namespace

TEST_CASE("remarks: a signed % or / is named only where a known sign would keep the runs, with the scalar to assume") {
  const std::vector<float> hx = randomFloats(8192);
  auto x = emulator().upload(hx);
  auto out = emulator().alloc<float>(4 * 1024);
  {
    auto k = jit<wrapped_by_odd>();
    k.launch(emulator(), {2}, {.num_warps = 4}, x, out, 1000, 2);
    const std::string message = narrowMessage(*k.runtime()->lastKernel());
    CAPTURE(message);
    CHECK(contains(message, "contiguous only in runs of"));
    CHECK(!contains(message, "signed %"));
  }
  {
    auto k = jit<wrapped_from_argument>();
    k.launch(emulator(), {1}, {.num_warps = 4}, x, out, 1024, 48, 32); // a start 16 divides: runs of 16 were it >= 0
    const std::string message = narrowMessage(*k.runtime()->lastKernel());
    CAPTURE(message);
    CHECK(contains(message, "assume(v >= 0) for the kernel's runtime argument 3 (from 0, not counting Const<> "
                            "arguments)"));
  }
  {
    auto k = jit<wrapped_in_loop>();
    k.launch(emulator(), {1}, {.num_warps = 4}, x, out, 48, 3); // not 1: a 1 is a constant, known >= 0
    const std::string message = narrowMessage(*k.runtime()->lastKernel());
    CAPTURE(message);
    CHECK(contains(message, "assume(v >= 0) for the counter of the loop at line " + std::to_string(gLoopLine)));
  }
  {
    auto table = emulator().upload(std::vector<int32_t>(8192, 7));
    auto k = jit<indirect_rows>();
    k.launch(emulator(), {2}, {.num_warps = 4}, x, table, out, 48, 2);
    const CompiledKernel &compiled = *k.runtime()->lastKernel();
    CAPTURE(describeRemarks(compiled));
    bool found = false;
    for (const Remark &r : remarksOf(compiled, RemarkKind::NarrowAccess))
      if (r.line == unsigned(gIndirectLoadLine)) {
        found = true;
        CHECK(contains(r.message, "contiguous only in runs of"));
        CHECK(!contains(r.message, "signed %"));
      }
    CHECK(found);
  }
  {
    auto k = jit<wrapped_carried>();
    k.launch(emulator(), {1}, {.num_warps = 4}, x, out, 48, 3);
    const std::string message = narrowMessage(*k.runtime()->lastKernel());
    CAPTURE(message);
    CHECK(contains(message, "assume(v >= 0) for a value the loop at line " + std::to_string(gCarriedLine) +
                            " carries"));
  }
  {
    auto k = jit<quotient_rows>();
    k.launch(emulator(), {2}, {.num_warps = 4}, x, out, 2);
    const std::string message = narrowMessage(*k.runtime()->lastKernel());
    CAPTURE(message);
    CHECK(contains(message, "a signed / at line " + std::to_string(gQuotientLine)));
  }
  {
    auto k = jit<wrapped_by_helper>();
    k.launch(emulator(), {2}, {.num_warps = 4}, x, out, 48, 2);
    const std::string message = narrowMessage(*k.runtime()->lastKernel());
    CAPTURE(message);
    CHECK(contains(message, "a signed % at "));
    CHECK(contains(message, "remarks_helper.hpp:" + std::to_string(remarks_helper::gHelperWrapLine)));
  }
}

TEST_CASE("remarks: a conversion through LDS inside a loop, not outside one") {
  auto kernel = jit<transpose_in_loop>();
  auto x = emulator().upload(randomFloats(4 * 4096));
  auto out = emulator().alloc<float>(4 * 4096);
  kernel.launch(emulator(), {1}, {.num_warps = 4}, x, out, true);
  const CompiledKernel &looped = *kernel.runtime()->lastKernel();
  CAPTURE(describeRemarks(looped));
  std::vector<Remark> inLoop = remarksOf(looped, RemarkKind::LdsInLoop);
  REQUIRE(!inLoop.empty());
  CHECK(contains(inLoop[0].message, "moves through LDS every iteration"));
  CHECK(inLoop[0].line >= unsigned(gLoopConvertLine - 2));
  CHECK(inLoop[0].line <= unsigned(gLoopConvertLine));

  kernel.launch(emulator(), {1}, {.num_warps = 4}, x, out, false);
  const CompiledKernel &straight = *kernel.runtime()->lastKernel();
  CAPTURE(describeRemarks(straight));
  CHECK(contains(straight.tileIR, "lds_offset")); // it still goes through LDS, once
  CHECK(remarksOf(straight, RemarkKind::LdsInLoop).empty());
}

namespace {

// Triton's form, pointer tiles carried by the loop, but moved by a step
// read from memory each iteration: the pipeliner cannot compute the next
// iteration's address ahead of the loads (a step the loop computes, it can).
void carried_matmul(Ptr<half> a_ptr, Ptr<half> b_ptr, Ptr<float> c_ptr, Ptr<int> steps, i32 K) {
  auto offs_m = arange(0, 64), offs_n = arange(0, 64), offs_k = arange(0, 32);
  auto a_ptrs = a_ptr + expand_dims(offs_m, 1) * K + expand_dims(offs_k, 0);
  auto b_ptrs = b_ptr + expand_dims(offs_k, 1) * 64 + expand_dims(offs_n, 0);
  auto acc = zeros<float>({64, 64});
  for_range(0, cdiv(K, 32), [&](i32 i) {
    gCarriedLoadLine = __LINE__ + 1;
    auto a = load(a_ptrs);
    auto b = load(b_ptrs);
    acc = dot(a, b, acc);
    auto step = load(steps + i);
    a_ptrs += step;
    b_ptrs += step * 64;
  });
  store(c_ptr + expand_dims(offs_m, 1) * 64 + expand_dims(offs_n, 0), acc);
}

// Waves per SIMD of a gfx942 kernel, from its assembly's metadata, by the
// CDNA3 rules (512 registers per lane in granules of 8, 8 slots, 64 KiB LDS
// per CU shared by whole workgroups over 4 SIMDs).
double cdna3Waves(const CompiledKernel &k, unsigned &vgprs) {
  std::smatch m;
  const std::string &s = k.assembly();
  REQUIRE(std::regex_search(s, m, std::regex(R"(\.vgpr_count:\s+(\d+))")));
  vgprs = unsigned(std::stoul(m[1]));
  const unsigned granules = (vgprs + 7) / 8 * 8;
  unsigned perSimd = std::min(8u, 512u / granules);
  const unsigned waves = k.blockSize / 64;
  unsigned workgroups = perSimd * 4 / waves;
  if (k.ldsBytes)
    workgroups = std::min(workgroups, 65536u / k.ldsBytes);
  return std::min(8.0, double(workgroups) * waves / 4);
}

} // namespace

TEST_CASE("remarks: loads through carried pointers are not pipelined; occupancy of a gfx942 matmul") {
  Device dev = Device::emulator("gfx942");
  const int K = 64;
  auto a = dev.upload(std::vector<half>(64 * K)), b = dev.upload(std::vector<half>(K * 64));
  auto c = dev.alloc<float>(64 * 64);
  auto steps = dev.upload(std::vector<int>(K / 32, 32));
  auto kernel = jit<carried_matmul>();
  kernel.launch(dev, {1}, {.num_warps = 4, .num_stages = 2}, a, b, c, steps, K);
  const CompiledKernel &k = *kernel.runtime()->lastKernel();
  CAPTURE(describeRemarks(k));
  std::vector<Remark> late = remarksOf(k, RemarkKind::NotPipelined);
  REQUIRE(late.size() == 2); // a and b
  CHECK(late[0].line == unsigned(gCarriedLoadLine));
  CHECK(late[1].line == unsigned(gCarriedLoadLine + 1));
  CHECK(contains(late[0].message, "num_stages = 2"));
  CHECK(contains(late[0].message, "a pointer the loop carries"));

  std::vector<Remark> occupancy = remarksOf(k, RemarkKind::Occupancy);
  REQUIRE(occupancy.size() == 1);
  unsigned vgprs = 0;
  const double waves = cdna3Waves(k, vgprs);
  char expected[64];
  std::snprintf(expected, sizeof expected, "%g %s per SIMD (of 8)", waves, waves == 1 ? "wave" : "waves");
  CHECK(occupancy[0].message.starts_with(expected));
  CHECK(contains(occupancy[0].message, std::to_string(vgprs) + " VGPRs"));
  CHECK(contains(occupancy[0].message, std::to_string(k.ldsBytes) + " bytes of LDS"));
  CHECK(occupancy[0].file.ends_with("remarks_test.cpp"));

  // With num_stages 1 nothing is to be pipelined: the operands' trip through
  // LDS is what the remark names instead.
  kernel.launch(dev, {1}, {.num_warps = 4, .num_stages = 1}, a, b, c, steps, K);
  const CompiledKernel &one = *kernel.runtime()->lastKernel();
  CAPTURE(describeRemarks(one));
  CHECK(remarksOf(one, RemarkKind::NotPipelined).empty());
  std::vector<Remark> operands = remarksOf(one, RemarkKind::LdsInLoop);
  REQUIRE(operands.size() == 2);
  CHECK(contains(operands[0].message, "num_stages = 2 or more"));
}

namespace {

// 512 floats per thread, all live until their sum is known: they spill.
void spilling_scale(Ptr<float> x, Ptr<float> out) {
  auto offs = arange(0, 32768);
  auto v = load(x + offs);
  store(out + offs, v * sum(v, 0));
}

} // namespace

TEST_CASE("remarks: spills, with the code object's counts; none for a small kernel") {
  auto kernel = jit<spilling_scale>();
  auto x = emulator().upload(std::vector<float>(32768, 1.0f));
  auto out = emulator().alloc<float>(32768);
  std::string warned = stderrOf(std::string(TESSEL_BINARY_DIR) + "/remarks-spill.txt", [&] {
    kernel.launch(emulator(), {1}, {.num_warps = 1}, x, out);
  });
  CHECK(contains(warned, "spills")); // the compile's warning, beside the remark
  const CompiledKernel &k = *kernel.runtime()->lastKernel();
  CAPTURE(describeRemarks(k));
  std::vector<Remark> spills = remarksOf(k, RemarkKind::Spill);
  REQUIRE(spills.size() == 1);
  std::smatch m;
  REQUIRE(std::regex_search(spills[0].message, m, std::regex(R"((\d+) VGPRs and (\d+) SGPRs spill \((\d+) bytes)")));
  CHECK(std::stoul(m[1]) > 0);
  CHECK(std::stoul(m[3]) >= 4 * std::stoul(m[1])); // a spilled VGPR takes 4 bytes of scratch per thread
  CHECK(contains(k.assembly(), ".vgpr_spill_count: " + m[1].str()));
  CHECK(contains(spills[0].message, "smaller block or more warps"));
  CHECK(spills[0].file.ends_with("remarks_test.cpp"));
  CHECK(contains(k.assembly(), ".private_segment_fixed_size: " + m[3].str()));

  auto small = jit<contiguous_load>();
  auto hx = emulator().upload(std::vector<half>(2048));
  auto hout = emulator().alloc<half>(2048);
  small.launch(emulator(), {1}, {.num_warps = 4}, hx, hout);
  CHECK(remarksOf(*small.runtime()->lastKernel(), RemarkKind::Spill).empty());
}

TEST_CASE("TESSEL_REMARKS=1 prints each kernel's remarks once, with their lines; unset, nothing") {
  auto kernel = jit<strided_load>();
  auto x = emulator().upload(std::vector<half>(2048 * 5));
  auto out = emulator().alloc<half>(2048);
  std::string printed;
  {
    testing::ScopedEnv remarks("TESSEL_REMARKS", "1");
    printed = stderrOf(std::string(TESSEL_BINARY_DIR) + "/remarks-log.txt", [&] {
      kernel.launch(emulator(), {1}, {.num_warps = 2}, x, out, 5);
    });
  }
  CAPTURE(printed);
  CHECK(contains(printed, "tessel: remarks for kernel 'strided_load' on " +
                              kernel.runtime()->lastKernel()->arch + ":\n"));
  CHECK(contains(printed, "remarks_test.cpp:" + std::to_string(gStridedLoadLine) +
                              ": remark: [narrow-access] load of 2048 moves 16 bits"));
  CHECK(contains(printed, "remark: [occupancy] "));
  CHECK(printed == describeRemarks(*kernel.runtime()->lastKernel()));
  // A second launch comes from memory: nothing printed again.
  testing::ScopedEnv remarks("TESSEL_REMARKS", "1");
  const std::string again = stderrOf(std::string(TESSEL_BINARY_DIR) + "/remarks-log-2.txt", [&] {
    kernel.launch(emulator(), {1}, {.num_warps = 2}, x, out, 5);
  });
  CHECK(again.empty());
}

TEST_CASE("without TESSEL_REMARKS a compile prints no remarks") {
  auto kernel = jit<strided_load>();
  auto x = emulator().upload(std::vector<half>(2048 * 7));
  auto out = emulator().alloc<half>(2048);
  testing::ScopedEnv remarks("TESSEL_REMARKS", nullptr);
  testing::ScopedEnv always("TESSEL_ALWAYS_COMPILE", "1");
  const std::string printed = stderrOf(std::string(TESSEL_BINARY_DIR) + "/remarks-log-3.txt", [&] {
    kernel.launch(emulator(), {1}, {.num_warps = 1}, x, out, 7);
  });
  CHECK_FALSE(kernel.runtime()->lastKernel()->remarks.empty()); // there are some to print
  CHECK_FALSE(contains(printed, "remark"));
}
