// compileTrace: the whole compiler as one linear script, in the spirit of
// Halide's Lower.cpp: import the trace, run the passes (listed in order in
// buildTesselPipeline below), translate to LLVM IR, generate AMDGPU code.
// TESSEL_DUMP=1 prints the IR between the stages; TESSEL_PRINT_AFTER_ALL=1
// prints the module after every pass (MLIR's IR printing).
#include "Dump.h"
#include "Remarks.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/core/environment.hpp"
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/pipeline.hpp"

#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>

namespace tessel {

std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::tessel::TesselDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::scf::SCFDialect, mlir::LLVM::LLVMDialect,
                  mlir::ROCDL::ROCDLDialect, mlir::ub::UBDialect>();
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerROCDLDialectTranslation(registry);
  auto ctx = std::make_unique<mlir::MLIRContext>(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx->loadAllAvailableDialects();
  // Errors speak of the user's C++ line; the IR of the op is noise to them.
  ctx->printOpOnDiagnostic(false);
  return ctx;
}

namespace {

// "file:line: " for a location that came from the user's C++.
std::string whereOf(mlir::Location loc) {
  std::string line = mlir::tessel::sourceLineText(loc);
  return line.empty() ? line : line + ": ";
}

// Collects MLIR diagnostics as the text of a tessel::Error. Errors meant for
// the kernel's author (emitUserError) are shown as they are; any other is a
// compiler bug, reported as one at the user's line without MLIR's text
// (TESSEL_LOG=internal prints that text).
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext &ctx)
      : handler_(&ctx, [this](mlir::Diagnostic &d) {
          if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
            return mlir::success();
          const bool user = mlir::tessel::isUserError(d);
          std::string &text = user ? message_ : internal_;
          if (!user && internal_.empty())
            internalWhere_ = whereOf(d.getLocation());
          if (!text.empty())
            text += "\n";
          text += whereOf(d.getLocation()) + d.str();
          for (mlir::Diagnostic &note : d.getNotes())
            text += "\n  " + whereOf(note.getLocation()) + "note: " + note.str();
          return mlir::success();
        }) {}
  [[noreturn]] void fail(const std::string &stage) {
    if (!message_.empty())
      throw Error(message_);
    if (!internal_.empty() && environmentLists("TESSEL_LOG", "internal"))
      std::fprintf(stderr, "tessel: internal error in %s:\n%s\n", stage.c_str(), internal_.c_str());
    throw Error(internalWhere_ + "tessel: internal compiler error in " + stage +
                " (a bug in tessel, not in your kernel; TESSEL_LOG=internal prints the compiler's message)");
  }

private:
  std::string message_, internal_, internalWhere_;
  mlir::ScopedDiagnosticHandler handler_;
};

std::string printed(mlir::ModuleOp op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op.print(os);
  return s;
}
std::string printed(const llvm::Module &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

bool printAfterAllRequested() { return environmentFlag("TESSEL_PRINT_AFTER_ALL"); }

// Verifying the module after every pass was a twentieth of a compile, and
// verifying what the passes made once a fiftieth (the LLVM dialect module
// the last passes leave is the largest). A compile verifies the imported
// trace (what the user's program made) and, as clang does, leaves the
// passes' result to LLVM's verifier, which runs on the translated module
// before any optimization; TESSEL_VERIFY_EACH=1 verifies after every pass,
// naming the pass that broke the IR (the test suites run with it).
bool verifyEachRequested() { return environmentFlag("TESSEL_VERIFY_EACH"); }

// Keeps the tile IR as the last tile-level pass left it (what the user's
// program became: layouts, vector widths, the LDS plan), and names the pass
// that failed. A kept pass manager keeps its observer: each run says where
// its results go (watch) and forgets them after (stop).
class PipelineObserver : public mlir::PassInstrumentation {
public:
  void watch(std::string &tileIR, std::vector<Remark> &remarks, std::string &failedPass) {
    tileIR_ = &tileIR;
    remarks_ = &remarks;
    failedPass_ = &failedPass;
  }
  void stop() {
    tileIR_ = failedPass_ = nullptr;
    remarks_ = nullptr;
  }
  void runBeforePass(mlir::Pass *, mlir::Operation *) override { passStarts_.push_back(Clock::now()); }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    addPassTime(pass);
    if (tileIR_ && pass->getArgument() == kLastTileLevelPass)
      if (auto module = mlir::dyn_cast<mlir::ModuleOp>(op)) {
        *tileIR_ = printed(module);
        *remarks_ = collectTileRemarks(module); // layouts, vec and LDS offsets are final here
      }
  }
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *) override {
    addPassTime(pass);
    if (failedPass_)
      *failedPass_ = pass->getArgument().str();
  }
  static constexpr const char *kLastTileLevelPass = "tessel-plan-lds";

  // The run's per-pass times (a pass that runs twice summed), slowest
  // first, the first CompileTimes::kSlowestPasses; forgets them.
  std::vector<CompileTimes::PassTime> takeSlowestPasses() {
    std::vector<CompileTimes::PassTime> all = std::move(passTimes_);
    passTimes_.clear();
    passStarts_.clear();
    std::sort(all.begin(), all.end(), [](const auto &a, const auto &b) { return a.ms > b.ms; });
    if (all.size() > CompileTimes::kSlowestPasses)
      all.resize(CompileTimes::kSlowestPasses);
    return all;
  }

private:
  using Clock = std::chrono::steady_clock;
  void addPassTime(mlir::Pass *pass) {
    if (passStarts_.empty())
      return;
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - passStarts_.back()).count();
    passStarts_.pop_back();
    llvm::StringRef name = pass->getArgument();
    for (CompileTimes::PassTime &p : passTimes_)
      if (p.pass == name) {
        p.ms += ms;
        return;
      }
    passTimes_.push_back({name.str(), ms});
  }
  std::string *tileIR_ = nullptr, *failedPass_ = nullptr;
  std::vector<Remark> *remarks_ = nullptr;
  std::vector<Clock::time_point> passStarts_; // a stack: passes may nest
  std::vector<CompileTimes::PassTime> passTimes_;
};

// buildTesselPipeline's passes over one context, with their observer.
struct Pipeline {
  Pipeline(mlir::MLIRContext *ctx, bool printAfterAll, bool verifyEach)
      : passes(ctx), verifyEach(verifyEach) {
    buildTesselPipeline(passes);
    passes.enableVerifier(verifyEach);
    auto watching = std::make_unique<PipelineObserver>();
    observer = watching.get();
    passes.addInstrumentation(std::move(watching));
    if (printAfterAll)
      passes.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                              [](mlir::Pass *, mlir::Operation *) { return true; },
                              /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  }
  // Runs the passes over `module`; the tile IR goes to `tileIR`, its
  // remarks to `remarks`, the name of a pass that fails to `failedPass`.
  mlir::LogicalResult run(mlir::ModuleOp module, std::string &tileIR, std::vector<Remark> &remarks,
                          std::string &failedPass) {
    observer->watch(tileIR, remarks, failedPass);
    auto stopWatching = llvm::make_scope_exit([&] { observer->stop(); });
    return passes.run(module);
  }
  std::vector<CompileTimes::PassTime> takeSlowestPasses() { return observer->takeSlowestPasses(); }
  mlir::PassManager passes;
  PipelineObserver *observer; // owned by `passes`
  const bool verifyEach;
};

// The MLIR context compiles on this thread work in, and the pass manager
// over it. Creating a context (registering and loading every dialect) costs
// about a millisecond, a tenth of a small kernel's compile, so a thread keeps
// its context for the next compile. So it does the pass manager: building it
// anew initializes every pass again (the canonicalizer's patterns of every
// dialect), ~3% of a compile; a kept one runs each pass's initialize() once
// (MLIR skips it while the context's dialects and the pipeline are those it
// was initialized for), and a pass keeps nothing else from one run to the
// next (the test "compiles on one thread give what fresh threads give").
// What a context uniques (types, attributes, locations) is never freed, so
// both are replaced after kCompilesPerContext compiles, and after a compile
// that failed (threw). A compile that starts while another runs on this
// thread (none does today) gets a context and passes of its own.
class ContextLease {
public:
  ContextLease() {
    Slot &slot = slot_();
    if (slot.busy) {
      own_ = makeContext();
      ctx_ = own_.get();
      return;
    }
    if (!slot.context || slot.uses >= kCompilesPerContext) {
      slot.pipeline.reset();
      slot.context = makeContext();
      slot.uses = 0;
    }
    ++slot.uses;
    slot.busy = true;
    ctx_ = slot.context.get();
  }
  ~ContextLease() {
    ownPipeline_.reset(); // before any context it runs over
    if (own_)
      return;
    Slot &slot = slot_();
    slot.busy = false;
    if (std::uncaught_exceptions() > exceptionsAtStart_) { // the compile failed: the next starts afresh
      slot.pipeline.reset();
      slot.context.reset();
    }
  }
  ContextLease(const ContextLease &) = delete;
  ContextLease &operator=(const ContextLease &) = delete;
  mlir::MLIRContext &operator*() const { return *ctx_; }
  mlir::MLIRContext *get() const { return ctx_; }

  // The passes over this context (made on first use). Asking for IR
  // printing after every pass (a debugging aid) gets a fresh pipeline; the
  // kept one follows TESSEL_VERIFY_EACH as it is now.
  Pipeline &pipeline() {
    const bool printAfterAll = printAfterAllRequested(), verifyEach = verifyEachRequested();
    std::unique_ptr<Pipeline> &kept = own_ || printAfterAll ? ownPipeline_ : slot_().pipeline;
    if (!kept || kept->verifyEach != verifyEach)
      kept = std::make_unique<Pipeline>(ctx_, printAfterAll, verifyEach);
    return *kept;
  }

private:
  static constexpr unsigned kCompilesPerContext = 64;
  struct Slot {
    // Declared first: destroyed after the pipeline made over it.
    std::unique_ptr<mlir::MLIRContext> context;
    std::unique_ptr<Pipeline> pipeline;
    unsigned uses = 0;
    bool busy = false;
  };
  static Slot &slot_() {
    thread_local Slot slot;
    return slot;
  }
  std::unique_ptr<mlir::MLIRContext> own_;
  std::unique_ptr<Pipeline> ownPipeline_;
  mlir::MLIRContext *ctx_ = nullptr;
  int exceptionsAtStart_ = std::uncaught_exceptions();
};

// tessel never allocates private memory, so a private segment in the code
// object is registers spilled to scratch: slow, so say so, with the kernel's
// line and what to change.
// The kernel's first line in the user's C++ (its first traced op).
const TraceNode *firstLineOf(const Trace &trace) {
  for (const TraceNode &n : trace.nodes)
    if (n.op != TraceOp::Arg && n.loc.file && *n.loc.file)
      return &n;
  return nullptr;
}

// Whether the kernel calls the device library's printf (device_print, and
// device_assert when compiled in): the hostcall behind it is a call with a
// stack frame, which is private segment without any register spilled.
bool callsPrintf(const std::vector<TraceNode> &nodes, bool debug) {
  for (const TraceNode &n : nodes) {
    if (n.op == TraceOp::Op && (n.name == "tessel.print" || (debug && n.name == "tessel.device_assert")))
      return true;
    for (const TraceRegion &r : n.regions)
      if (callsPrintf(r, debug))
        return true;
  }
  return false;
}

void warnAboutSpills(const Trace &trace, const TargetFacts &target, uint32_t bytes) {
  if (bytes == 0)
    return;
  std::string where;
  if (const TraceNode *n = firstLineOf(trace))
    where = std::string(n->loc.file) + ":" + std::to_string(n->loc.line) + ": ";
  std::fprintf(stderr,
               "%stessel: warning: kernel '%s' spills %u bytes of registers per thread to "
               "scratch memory on %s; use a smaller block or more warps (num_warps)\n",
               where.c_str(), trace.kernelName.c_str(), bytes, target.arch);
}

// Line tables: every op of a kernel keeps the user's C++ file and line in the
// LLVM IR (!dbg), so the emulator's sanitizer can name the line of a bad
// access. Ops from another file than the kernel's get a lexical block of
// their file. The AMDGPU code generation strips them (generateAmdgpuCode).
void attachLineTables(mlir::ModuleOp module) {
  using namespace mlir;
  MLIRContext *ctx = module.getContext();
  auto fileAttr = [&](StringRef path) { return LLVM::DIFileAttr::get(ctx, path, ""); };
  for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
    if (func.isExternal())
      continue;
    FileLineColLoc where = fileLineOf(func.getLoc());
    func.walk([&](Operation *op) {
      if (!where)
        where = fileLineOf(op->getLoc());
    });
    if (!where)
      continue;
    LLVM::DIFileAttr file = fileAttr(where.getFilename());
    auto unit = LLVM::DICompileUnitAttr::get(DistinctAttr::create(UnitAttr::get(ctx)),
                                             llvm::dwarf::DW_LANG_C_plus_plus_17, file,
                                             StringAttr::get(ctx, "tessel"), /*isOptimized=*/true,
                                             LLVM::DIEmissionKind::LineTablesOnly);
    auto program = LLVM::DISubprogramAttr::get(
        ctx, DistinctAttr::create(UnitAttr::get(ctx)), unit, file, func.getNameAttr(), func.getNameAttr(),
        file, where.getLine(), where.getLine(),
        LLVM::DISubprogramFlags::Definition | LLVM::DISubprogramFlags::Optimized,
        LLVM::DISubroutineTypeAttr::get(ctx, llvm::dwarf::DW_CC_normal, {}), {}, {});
    func->setLoc(FusedLoc::get(ctx, {func.getLoc()}, program));
    llvm::DenseMap<StringAttr, LLVM::DILexicalBlockFileAttr> otherFiles;
    func.walk([&](Operation *op) {
      if (op == func.getOperation())
        return;
      FileLineColLoc line = fileLineOf(op->getLoc());
      if (!line) {
        op->setLoc(FusedLoc::get(ctx, {where}, program));
        return;
      }
      if (line.getFilename() == where.getFilename()) {
        op->setLoc(FusedLoc::get(ctx, {line}, program));
        return;
      }
      LLVM::DILexicalBlockFileAttr &block = otherFiles[line.getFilename()];
      if (!block)
        block = LLVM::DILexicalBlockFileAttr::get(ctx, program, fileAttr(line.getFilename()), 0);
      op->setLoc(FusedLoc::get(ctx, {line}, block));
    });
  }
}

// LLVM's machine scheduler and register allocator settle for the occupancy
// their first schedule reaches, even where a schedule a few registers
// smaller gives a SIMD another wave: the comparison bench's dot_scaled
// matmul on gfx950, as its bf16 decomposition (fp8_dot_test.cpp), takes 180
// VGPRs (2 waves a SIMD); asked for 3
// (amdgpu-waves-per-eu), 168 without spills. When the registers alone limit the kernel and it is within
// kOccupancyMargin registers of the next step (one more workgroup a CU),
// the module is compiled once more, asking for it; the answer is kept only
// when it has no spills and more waves. `bitcode` (the kernel module) then
// carries the request, so its assembly made later is this code's.
constexpr unsigned kOccupancyMargin = 16;

bool retryForOccupancy(std::string &bitcode, const TargetFacts &target, AmdgpuCode &code, unsigned blockSize,
                       unsigned ldsBytes) {
  const KernelResources &first = code.resources;
  if (first.vgprSpills || first.sgprSpills || code.privateSegmentBytes)
    return false;
  const Occupancy now = occupancyOf(target, first, blockSize, ldsBytes);
  if (std::string_view(now.limiter) != "VGPRs")
    return false;
  const unsigned want = wavesForAnotherWorkgroup(target, now.registerWaves, blockSize);
  if (want > target.waveSlots || first.vgprs > registersForWaves(target, want) + kOccupancyMargin)
    return false;
  KernelResources fewer = first; // what the request would give, if LDS and barriers let it
  fewer.vgprs = registersForWaves(target, want);
  if (occupancyOf(target, fewer, blockSize, ldsBytes).wavesPerSimd <= now.wavesPerSimd)
    return false;
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "kernel"), context);
  if (!module) {
    llvm::consumeError(module.takeError());
    return false;
  }
  requestWavesPerEu(**module, want);
  std::string asked;
  {
    llvm::raw_string_ostream os(asked);
    llvm::WriteBitcodeToFile(**module, os);
  }
  AmdgpuCode retried = generateAmdgpuCode(std::move(*module), target, /*verified=*/true);
  retried.times.optimize += code.times.optimize;
  retried.times.codegen += code.times.codegen;
  retried.times.link += code.times.link;
  code.times = retried.times; // both attempts count
  const KernelResources &second = retried.resources;
  if (second.vgprSpills || second.sgprSpills || retried.privateSegmentBytes ||
      occupancyOf(target, second, blockSize, ldsBytes).wavesPerSimd <= now.wavesPerSimd)
    return false;
  code = std::move(retried);
  bitcode = std::move(asked);
  return true;
}

} // namespace

// Every pass, in order. tessel-opt's --tessel-lower-to-llvm runs this list.
void buildTesselPipeline(mlir::OpPassManager &pm) {
  using namespace mlir;
  using namespace mlir::tessel;
  // Specialize for the call: arguments equal to 1 become constants.
  pm.addPass(createTesselSpecialize());
  // Simplify: fold what specialization made constant, share equal values.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // LaunchOptions::fast_math: division by a broadcast value multiplies by
  // its reciprocal; other float divisions are the fast kind.
  pm.addPass(createTesselFastMath());
  // LaunchOptions::fp_fusion: a * b + c as one fma (after fast_math, whose
  // reciprocal products fuse too).
  pm.addPass(createTesselFuseFma());
  // An assume() the call's own arguments make false is an error here.
  pm.addPass(createTesselCheckAssumptions());
  // A dot on 8-bit floats the target's matrix cores do not take is an error
  // naming the formats they do, or widens its operands to f16 (gfx1100).
  pm.addPass(createTesselLegalizeDots());
  // Comparisons integer ranges decide (assume(n >= C), loop bounds, aranges)
  // become constants; masks that are always true disappear.
  pm.addPass(createTesselFoldCompares());
  // Pointer tiles a loop moves by uniform amounts: a carried scalar offset
  // from their init instead (an argument plus offsets: buffer accesses).
  pm.addPass(createTesselCarryOffsets());
  // Every tile gets a layout over the workgroup's threads (axis analysis
  // picks vector widths); conversions where a tile is needed in two.
  pm.addPass(createTesselAssignLayouts());
  // Share the values layout assignment rematerialized per user (the buffer
  // pass matches a mask's index tile with the pointer's by identity).
  pm.addPass(createCSEPass());
  // A conversion of a tile made before a loop happens once, before it.
  pm.addPass(createTesselHoistConversions());
  // Global accesses with offsets that fit in 31 bits become a scalar base
  // plus 32-bit offsets: buffer instructions where the hardware's range
  // check can be the mask (no branches), saddr-form global ones otherwise.
  pm.addPass(createTesselUseBufferOps());
  // Share the bounds it made per access (max(n, 0), one per access to the
  // same n) so the lowering builds one buffer resource for them, and drop
  // the masks and pointer tiles the accesses no longer read.
  pm.addPass(createCSEPass());
  // With num_stages = s >= 2, loads feeding a dot in a loop fetch the
  // operands s - 1 iterations ahead while this one computes; operands wait
  // in LDS (s - 1 slots), one barrier per iteration.
  pm.addPass(createTesselPipelineLoops());
  // Every LDS buffer gets an offset; the total is checked against the target.
  pm.addPass(createTesselPlanLds()); // (PipelineObserver keeps the tile IR here)
  // Convert to LLVM: each thread's share of every tile, as LLVM dialect.
  pm.addPass(createTesselConvertToLLVM());
  // Fold and drop what the patterns left unused, which keeps the module
  // LLVM translates and optimizes small. Not the region simplification
  // (merging identical blocks, dropping dead block arguments): LLVM's
  // SimplifyCFG does that anyway, and here it was a fifth of the pass.
  GreedyRewriteConfig cleanup;
  cleanup.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  pm.addPass(createCanonicalizerPass(cleanup));
}

void registerTesselPipelines() {
  mlir::PassPipelineRegistration<>("tessel-lower-to-llvm",
                                   "Every pass from tile-level IR to per-thread LLVM dialect",
                                   [](mlir::OpPassManager &pm) { buildTesselPipeline(pm); });
}

CompiledKernel compileTrace(const Trace &trace, const Specialization &spec,
                            const CompileOptions &options) {
  const TargetFacts &target = requireTarget(options.arch);
  if (options.numWarps == 0 || (options.numWarps & (options.numWarps - 1)) ||
      uint64_t(options.numWarps) * target.waveSize > target.maxWorkgroupSize)
    throw Error("num_warps must be a power of two with num_warps * " +
                std::to_string(target.waveSize) + " <= " +
                std::to_string(target.maxWorkgroupSize) + " threads on " + target.arch +
                "; got " + std::to_string(options.numWarps));
  if (trace.kernelName.empty())
    throw Error("a kernel needs a name");
  if (options.codeObjectVersion < 4 || options.codeObjectVersion > 6)
    throw Error("code object version " + std::to_string(options.codeObjectVersion) +
                " is not one of 4, 5, 6");
  if (options.wavesPerEu > target.waveSlots)
    throw Error("kernel '" + trace.kernelName + "': waves_per_eu must be 0 (no request) or 1 to " +
                std::to_string(target.waveSlots) + ", the wave slots of a SIMD on " + target.arch + "; got " +
                std::to_string(options.wavesPerEu));

  const CompileDumps dumps(trace, spec, options); // TESSEL_DUMP, TESSEL_DUMP_DIR
  StageClock clock;
  auto lap = [&] { return clock.lap(); };
  CompileTimes times;
  ContextLease ctx;
  DiagnosticCollector diags(*ctx);
  times.context = lap();

  // 1-4: the trace to a code object; `late`: tessel-pipeline-loops' late
  // staged loads (the second try below).
  struct Attempt {
    std::string tileIR, llvmDialect, llvmModule;
    std::vector<Remark> remarks;
    uint32_t ldsBytes = 0;
    bool lateApplies = false;
    AmdgpuCode code;
  };
  auto attempt = [&](bool late) {
    Attempt a;
    // 1. The trace as tile-level IR.
    mlir::OwningOpRef<mlir::ModuleOp> module = importTrace(*ctx, trace, spec, target, options.numWarps);
    if (!module || mlir::failed(mlir::verify(*module)))
      diags.fail("importing the trace");
    auto &dialect = mlir::tessel::tesselDialect(ctx.get());
    const mlir::UnitAttr unit = mlir::UnitAttr::get(ctx.get());
    if (options.fastMath)
      dialect.getFastMathAttrHelper().setAttr(*module, unit);
    if (options.fpFusion)
      dialect.getFpFusionAttrHelper().setAttr(*module, unit);
    if (options.debug)
      dialect.getDebugAttrHelper().setAttr(*module, unit);
    if (options.directToLds)
      dialect.getDirectToLdsAttrHelper().setAttr(*module, unit);
    else if (options.noDirectToLds)
      dialect.getNoDirectToLdsAttrHelper().setAttr(*module, unit);
    if (options.numStages > 1)
      dialect.getNumStagesAttrHelper().setAttr(
          *module, mlir::Builder(ctx.get()).getI32IntegerAttr(int32_t(options.numStages)));
    if (late)
      dialect.getLateStagedLoadsAttrHelper().setAttr(*module, unit);
    times.import += lap();

    // 2. The passes (buildTesselPipeline): tile-level IR to per-thread LLVM dialect.
    {
      std::string failedPass;
      if (mlir::failed(ctx.pipeline().run(*module, a.tileIR, a.remarks, failedPass)))
        diags.fail("the pass '" + failedPass + "'");
      times.slowestPasses = ctx.pipeline().takeSlowestPasses();
    }
    if (dumps.wants(DumpItem::LlvmDialect))
      a.llvmDialect = printed(module.get());
    times.passes += lap();
    if (auto lds = dialect.getLdsBytesAttrHelper().getAttr(*module))
      a.ldsBytes = lds.getInt();
    a.lateApplies = dialect.getLateStagedLoadsApplyAttrHelper().isAttrPresent(*module);

    // 3. The kernel module both executors start from, with the user's lines.
    attachLineTables(*module);
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule = mlir::translateModuleToLLVMIR(*module, llvmContext, trace.kernelName);
    if (!llvmModule)
      diags.fail("translation to LLVM IR");
    configureModuleForTarget(*llvmModule, target);
    if (options.wavesPerEu)
      requestWavesPerEu(*llvmModule, options.wavesPerEu);
    // generateAmdgpuCode keeps the version the module already names.
    llvmModule->setModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", options.codeObjectVersion * 100);
    // Bitcode: the text (printed for a dump, else when llvmIR() is asked)
    // took three times as long to write.
    {
      llvm::raw_string_ostream bitcode(a.llvmModule);
      llvm::WriteBitcodeToFile(*llvmModule, bitcode);
    }
    times.translate += lap();

    // 4. AMDGPU code object. The dumps come after the retry for occupancy,
    // from the bitcode it keeps (its waves-per-eu request included), so they
    // show the code the kernel runs.
    a.code = generateAmdgpuCode(std::move(llvmModule), target, /*verified=*/true); // (translation)
    if (!options.wavesPerEu)
      retryForOccupancy(a.llvmModule, target, a.code, options.numWarps * target.waveSize, a.ldsBytes);
    lap(); // (code generation keeps its own times)
    return a;
  };
  Attempt first = attempt(false);
  // A pipelined loop's code that spills is compiled again with the loads
  // of the staged tiles but the first placed after the products
  // (tessel-pipeline-loops' late staged loads), and kept when it spills
  // fewer VGPRs, no more SGPRs, at no fewer waves a SIMD. LLVM's code
  // generation may put the loads back before the products; the registers
  // come out allocated otherwise (gfx1100 B^T matmul at 4 waves: 256 VGPRs
  // and one reload an iteration on the first try, none on the second). Both
  // tries' code generation count in the times; a second try that fails (a
  // compiler bug) leaves the first (TESSEL_LOG=internal says why).
  CompileTimes discarded;
  if (first.lateApplies && first.code.resources.vgprSpills + first.code.resources.sgprSpills > 0) {
    std::optional<Attempt> second;
    try {
      second = attempt(true);
    } catch (const Error &e) {
      if (environmentLists("TESSEL_LOG", "internal"))
        std::fprintf(stderr, "tessel: the second compile of '%s' (late staged loads) failed; the first is kept: %s\n",
                     trace.kernelName.c_str(), e.what());
    }
    const auto waves = [&](const Attempt &a) {
      return occupancyOf(target, a.code.resources, options.numWarps * target.waveSize, a.ldsBytes).wavesPerSimd;
    };
    if (second) {
      const KernelResources &was = first.code.resources, &now = second->code.resources;
      const bool better = now.vgprSpills < was.vgprSpills && now.sgprSpills <= was.sgprSpills &&
                          waves(*second) >= waves(first);
      discarded = better ? first.code.times : second->code.times;
      if (better)
        first = std::move(*second);
    }
  }
  CompiledKernel out;
  out.name = trace.kernelName;
  out.tileIR = std::move(first.tileIR);
  out.remarks = std::move(first.remarks);
  out.llvmModule = std::move(first.llvmModule);
  if (dumps.wants(DumpItem::Tile))
    dumps.write(DumpItem::Tile, out.tileIR);
  if (dumps.wants(DumpItem::LlvmDialect))
    dumps.write(DumpItem::LlvmDialect, first.llvmDialect);
  const uint32_t ldsBytes = first.ldsBytes;
  AmdgpuCode code = std::move(first.code);
  std::string assembly;
  if (dumps.wants(DumpItem::Llvm) || dumps.wants(DumpItem::Asm)) {
    llvm::LLVMContext dumpContext;
    llvm::Expected<std::unique_ptr<llvm::Module>> kept =
        llvm::parseBitcodeFile(llvm::MemoryBufferRef(out.llvmModule, "kernel"), dumpContext);
    if (!kept)
      throw Error("tessel: internal error: the kernel's bitcode does not read back: " +
                  llvm::toString(kept.takeError()));
    if (dumps.wants(DumpItem::Llvm)) {
      out.setLlvmIR(printed(**kept));
      dumps.write(DumpItem::Llvm, out.llvmIR());
    }
    if (dumps.wants(DumpItem::Asm))
      assembly = generateAmdgpuAssembly(**kept, target);
  }
  times.optimize = code.times.optimize + discarded.optimize;
  times.codegen = code.times.codegen + discarded.codegen;
  times.link = code.times.link + discarded.link;
  if (callsPrintf(trace.nodes, options.debug) && !code.resources.vgprSpills && !code.resources.sgprSpills)
    code.resources.privateSegmentBytes = code.privateSegmentBytes = 0; // the printf call's frame, not spills
  warnAboutSpills(trace, target, code.privateSegmentBytes);
  sortRemarks(out.remarks); // then the kernel's own, at its first line
  {
    const TraceNode *first = firstLineOf(trace);
    addCodeObjectRemarks(out.remarks, target, code.resources, options.numWarps * target.waveSize, ldsBytes,
                         first ? first->loc.file : "", first ? first->loc.line : 0);
  }
  out.arch = target.arch;
  out.hsaco = std::move(code.hsaco);
  // The texts only when asked for: a dump now, anyone else later.
  if (dumps.wants(DumpItem::Asm)) {
    out.setAssembly(std::move(assembly));
    dumps.write(DumpItem::Asm, out.assembly());
  }
  makeTextsOnDemand(out); // the ones not made yet
  out.ldsBytes = ldsBytes;
  out.waveSize = target.waveSize;
  out.blockSize = options.numWarps * target.waveSize;
  out.kernargs = kernargLayout(trace.args);
  out.times = times;
  return out;
}

const char *compilerIdentity() {
  static std::string identity = [] {
    std::string id = std::string("tessel ") + TESSEL_GIT_REV + " llvm " LLVM_VERSION_STRING;
    // The binary that holds this compiler: a rebuilt compiler never reuses
    // an older one's cache entries.
    Dl_info info;
    struct stat st;
    if (dladdr(reinterpret_cast<void *>(&compileTrace), &info) && info.dli_fname &&
        stat(info.dli_fname, &st) == 0)
      id += " bin " + std::to_string(st.st_size) + "-" + std::to_string(st.st_mtime);
    // The device library linked into code objects: an upgrade rebuilds them.
    if (stat(TESSEL_DEVICE_LIBS_DIR "/ocml.bc", &st) == 0)
      id += " ocml " + std::to_string(st.st_size) + "-" + std::to_string(st.st_mtime);
    return id;
  }();
  return identity.c_str();
}

} // namespace tessel
