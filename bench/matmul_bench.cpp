// Matrix multiply blocks on the matrix cores: what the compiled main loop is
// made of, per target, and the cold compile time. Prints numbers; asserts
// nothing.
//
//   build/bench/bench-matmul
//
// For each target: MFMA instructions in the code object against the count
// the block needs (BM * BN * BK / instruction size / waves, per K step),
// LDS reads and writes by width, global loads by width, VGPRs, spills and
// LDS bytes against the plan; and for each LDS access in the K loop, the
// cycles a wave spends on it in the bank model (Layouts.h: 32 banks of 4
// bytes) against the conflict-free count.
//
// Then the main loop of matmul in the two forms users write
// (matmul_forms.hpp: Triton's tutorial 03 line by line, with strides and
// carried pointer tiles, and tessel's tutorial 03) and of kernels::matmul
// (strides, unit ones specialized to 1), 128x128x64 f16, 4 waves,
// num_stages 2, on gfx942 and gfx950: instructions in one pass over the
// loop, matrix instructions, global loads by width, LDS accesses, barriers,
// v_mov copies, exec-mask branches, registers and the waves per SIMD they
// allow. `bench-matmul --forms [DIR]` prints only these, and writes each
// loop's text to DIR/<form>.<arch>.s when given (for llvm-mca).
#include "matmul_forms.hpp"

#include <tessel/kernels/matmul.hpp>
#include <tessel/tessel.hpp>

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/lowering/compile.hpp"

#include "tessel/Dialect/Tessel/IR/Layouts.h"

#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

using namespace tessel;
using Clock = std::chrono::steady_clock;

namespace {

void matmul(Ptr<half> a, Ptr<half> b, Ptr<float> c, i32 M, i32 N, i32 K, Const<int> BM, Const<int> BN,
            Const<int> BK) {
  auto rows = program_id(0) * BM + arange(0, BM);
  auto cols = program_id(1) * BN + arange(0, BN);
  auto ks = arange(0, BK);
  auto acc = zeros<float>({BM, BN});
  for_range(0, K, BK, [&](i32 k) {
    auto ka = k + ks;
    auto ta = load(a + expand_dims(rows, 1) * K + expand_dims(ka, 0));
    auto tb = load(b + expand_dims(ka, 1) * N + expand_dims(cols, 0));
    acc = dot(ta, tb, acc);
  });
  store(c + expand_dims(rows, 1) * N + expand_dims(cols, 0), acc);
}

bool contains(const std::string &text, const char *what) { return text.find(what) != std::string::npos; }

// A kernel descriptor field (".name N") or, with `colon`, a metadata
// field (".name: N").
long field(const std::string &text, const std::string &name, bool colon = false) {
  std::smatch m;
  std::regex re("\\." + name + (colon ? ":" : "") + "\\s+(\\d+)");
  return std::regex_search(text, m, re) ? std::stol(m[1].str()) : -1;
}

// Each LDS access in the K loop of `tileIR`: which, and its cycles per wave
// against the conflict-free count.
std::string ldsBanks(const std::string &tileIR) {
  using namespace mlir;
  using namespace mlir::tessel;
  MLIRContext ctx;
  ctx.loadDialect<TesselDialect, func::FuncDialect, arith::ArithDialect, math::MathDialect, scf::SCFDialect,
                  ub::UBDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(tileIR, &ctx);
  if (!module)
    return "(tile IR did not parse)";
  std::string out;
  auto add = [&](const char *what, RankedTensorType type, const LdsStaging &plan, int64_t vec) {
    LdsCycles c = ldsAccessCycles(type, plan, vec);
    std::string shape;
    for (int64_t d : type.getShape())
      shape += std::to_string(d) + "x";
    std::string staging = plan.swizzled() ? " swizzle " + std::to_string(plan.unit) + "/" + std::to_string(plan.perPhase) +
                                                "/" + std::to_string(plan.maxPhase)
                                          : " pad " + std::to_string(plan.pad);
    out += std::string(out.empty() ? "" : ", ") + what + " " + shape.substr(0, shape.size() - 1) + staging + " " +
           std::to_string(vec * ldsElementBytes(type)) + "B: " +
           std::to_string(c.cycles) + "/" + std::to_string(c.conflictFree);
  };
  module->walk([&](Operation *op) {
    if (!op->getParentOfType<scf::ForOp>())
      return;
    if (auto store = dyn_cast<LocalStoreOp>(op)) {
      auto type = cast<RankedTensorType>(store.getSrc().getType());
      LdsStaging plan = ldsAccessPlan(store.getBuffer().getType(), type);
      add("write", type, plan, plan.writeVec);
    } else if (auto load = dyn_cast<LocalLoadOp>(op)) {
      LdsStaging plan = ldsAccessPlan(load.getBuffer().getType(), load.getType());
      add("read", load.getType(), plan, plan.readVec);
    } else if (auto convert = dyn_cast<ConvertLayoutOp>(op); convert && !isRegisterRenaming(convert)) {
      auto src = cast<RankedTensorType>(convert.getSrc().getType());
      LdsStaging plan = planLdsStaging(src, convert.getType());
      add("convert write", src, plan, plan.writeVec);
      add("convert read", convert.getType(), plan, plan.readVec);
    }
  });
  return out;
}

// The main loop of each matmul form, per target (see the top).
void printMainLoops(Device &dev, const char *loopDir) {
  const int M = 4096, N = 4096, K = 4096, BM = 128, BN = 128, BK = 64, GROUP_M = 8;
  auto a = dev.alloc<half>(16), b = dev.alloc<half>(16);
  auto c16 = dev.alloc<half>(16);
  auto c32 = dev.alloc<float>(16);
  auto triton = jit<bench::triton_matmul<>>();
  auto tutorial = jit<bench::tutorial_matmul<>>();
  std::printf("\nmain loop, %dx%dx%d f16 blocks, 4 waves, num_stages 2, M = N = K = %d (one pass over the loop's "
              "blocks):\n",
              BM, BN, BK, M);
  for (const char *arch : {"gfx942", "gfx950"}) {
    for (const char *form : {"triton", "tutorial", "library"}) {
      const std::string which = form;
      detail::TraceRequest request =
          which == "triton"     ? triton.trace(a, b, c16, M, N, K, K, 1, N, 1, N, 1, BM, BN, BK, GROUP_M)
          : which == "tutorial" ? tutorial.trace(a, b, c32, M, N, K, BM, BN, BK, GROUP_M)
                                : kernels::matmulKernel<half>().trace(a, b, c16, c16, M, N, K, K, 1, N, 1, N, 1, 0, 0,
                                                                      0, BM, BN, BK, GROUP_M, 0, 0);
      CompiledKernel k = compileTrace(request.trace, request.spec, {arch, 4, 5, 2});
      const std::string &s = k.assembly();
      const std::string loop = bench::mainLoop(s);
      const bench::LoopMakeUp m = bench::loopMakeUp(loop);
      // Registers, LDS and waves per SIMD as the occupancy remark counts them.
      const KernelUsage u = usageOf(k);
      std::printf("  %s %-8s instructions %zu, MFMA %zu, global loads 128/64/32/16-bit %zu/%zu/%zu/%zu, LDS reads %zu "
                  "writes %zu, s_barrier %zu, v_mov %zu, exec branches %zu; VGPR+AGPR %u (AGPRs %u), LDS %u bytes "
                  "(%.1f waves/SIMD, limited by %s), spills %u\n",
                  arch, form, m.instructions, m.matrix, m.globalLoads128, m.globalLoads64, m.globalLoads32,
                  m.globalLoads16, m.ldsReads, m.ldsWrites, m.barriers, m.vmovs, m.execBranches, u.vgprs, u.agprs,
                  u.ldsBytes, u.wavesPerSimd, u.limiter.c_str(), u.spills);
      if (loopDir)
        std::ofstream(std::string(loopDir) + "/" + form + "." + arch + ".s") << loop << "\n";
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  const bool formsOnly = argc >= 2 && std::string(argv[1]) == "--forms";
  const char *loopDir = formsOnly && argc == 3 ? argv[2] : nullptr;
  const int BM = 128, BN = 128, BK = 64;
  const unsigned warps = 4;
  Device dev = Device::emulator("gfx942"); // only for buffers to trace with
  auto a = dev.alloc<half>(16), b = dev.alloc<half>(16);
  auto c = dev.alloc<float>(16);
  auto kernel = jit<matmul>();
  if (!formsOnly)
    std::printf("matmul blocks of f16 -> f32, %u waves, K = 4096 (512x512 C)\n", warps);
  struct Run {
    const char *arch;
    unsigned stages;
    int bm, bn, bk;
  };
  // gfx1100's waves are 32 lanes: a 128x128 block would hold 128 accumulators
  // and 256 operand registers per lane, so it gets 64x64. num_stages 3 keeps
  // two slots of each operand in LDS: 128x128x64 would need 73728 bytes of
  // gfx942's 65536, so it runs with BK = 32.
  std::vector<Run> runs{Run{"gfx90a", 1, BM, BN, BK},  Run{"gfx942", 1, BM, BN, BK},  Run{"gfx942", 2, BM, BN, BK},
                        Run{"gfx942", 3, BM, BN, 32},  Run{"gfx950", 1, BM, BN, BK},  Run{"gfx950", 2, BM, BN, BK},
                        Run{"gfx1100", 1, 64, 64, BK}, Run{"gfx1100", 2, 64, 64, BK}};
  if (formsOnly)
    runs.clear();
  for (auto [arch, stages, bm, bn, bk] : runs) {
    detail::TraceRequest request = kernel.trace(a, b, c, 512, 512, 4096, bm, bn, bk);
    std::vector<double> times;
    CompiledKernel k;
    for (int i = 0; i < 3; ++i) {
      auto t0 = Clock::now();
      k = compileTrace(request.trace, request.spec, {arch, warps, 5, stages});
      times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    const std::string &s = k.assembly();
    size_t mfma = bench::countMatches(s, R"(\bv_(mfma|wmma)_\w+)");
    // One instruction covers 32x32x8 (or 16x16x16, WMMA's too) = 8192 (4096) products.
    size_t perInstr = contains(k.tileIR, "instrShape = [32, 32]") ? 32 * 32 * 8 : 16 * 16 * 16;
    if (contains(k.tileIR, "x16.f16") || contains(s, "v_mfma_f32_32x32x16")) perInstr *= 2;
    std::printf("%s, %dx%dx%d, num_stages %u: cold compile %.1f ms (median of 3); MFMA/WMMA %zu in the code object, "
                "%zu per K step needed; s_barrier %zu; "
                "ds_read b128/b64/read2_b64/b32/u16 %zu/%zu/%zu/%zu/%zu, ds_write b128/b64/write2_b64/b32/write2_b32/b16 %zu/%zu/%zu/%zu/%zu/%zu; "
                "global_load dwordx4/x2/dword/ushort %zu/%zu/%zu/%zu; VGPRs %ld, AGPRs %ld, spills %ld, LDS %ld bytes "
                "(plan %u)\n  LDS in the K loop, cycles per wave / conflict-free: %s\n",
                arch, bm, bn, bk, stages, times[1], mfma, size_t(bm) * bn * bk / perInstr / warps,
                bench::countMatches(s, R"(\bs_barrier\b)"),
                // gfx9 and gfx11 spell the same accesses differently.
                bench::countMatches(s, R"(ds_(read|load)_b128)"), bench::countMatches(s, R"(ds_(read|load)_b64)"),
                bench::countMatches(s, R"(ds_(read|load)2(st64)?_b64)"), bench::countMatches(s, R"(ds_(read|load)_b32)"),
                bench::countMatches(s, R"(ds_(read_u16|load_u16))"), bench::countMatches(s, R"(ds_(write|store)_b128)"),
                bench::countMatches(s, R"(ds_(write|store)_b64)"), bench::countMatches(s, R"(ds_(write2(st64)?|store_2addr(_stride64)?)_b64)"),
                bench::countMatches(s, R"(ds_(write|store)_b32)"), bench::countMatches(s, R"(ds_(write2(st64)?|store_2addr(_stride64)?)_b32)"),
                bench::countMatches(s, R"(ds_(write|store)_b16)"), bench::countMatches(s, R"(global_load_(dwordx4|b128))"),
                bench::countMatches(s, R"(global_load_(dwordx2|b64))"), bench::countMatches(s, R"(global_load_(dword|b32)\b)"),
                bench::countMatches(s, R"(global_load_(ushort|u16))"),
                // (The metadata's counts: the descriptor's next_free_vgpr can
                // round past them.)
                field(s, "vgpr_count", true), std::max(0L, field(s, "agpr_count", true)),
                field(s, "amdhsa_private_segment_fixed_size"),
                field(s, "amdhsa_group_segment_fixed_size"), unsigned(k.ldsBytes), ldsBanks(k.tileIR).c_str());
  }
  printMainLoops(dev, loopDir);
  return 0;
}
