// compileTrace: the whole compiler as one linear script, in the spirit of
// Halide's Lower.cpp. Each stage is one call; TESSEL_DUMP=1 prints the IR
// after each.
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/pipeline.hpp"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace tessel {

std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::tessel::TesselDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::LLVM::LLVMDialect, mlir::ROCDL::ROCDLDialect>();
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
  if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
    return file.getFilename().str() + ":" + std::to_string(file.getLine()) + ": ";
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location inner : fused.getLocations())
      if (std::string w = whereOf(inner); !w.empty())
        return w;
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc))
    return whereOf(name.getChildLoc());
  return "";
}

// Collects MLIR diagnostics as the text of a tessel::Error.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext &ctx)
      : handler_(&ctx, [this](mlir::Diagnostic &d) {
          if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
            return mlir::success();
          if (!message_.empty())
            message_ += "\n";
          message_ += whereOf(d.getLocation()) + d.str();
          for (mlir::Diagnostic &note : d.getNotes())
            message_ += "\n  " + whereOf(note.getLocation()) + "note: " + note.str();
          return mlir::success();
        }) {}
  [[noreturn]] void fail(const std::string &stage) {
    throw Error(message_.empty() ? "tessel: " + stage + " failed" : message_);
  }

private:
  std::string message_;
  mlir::ScopedDiagnosticHandler handler_;
};

bool dumpRequested() {
  const char *v = std::getenv("TESSEL_DUMP");
  return v && *v && std::string(v) != "0";
}

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

void runPasses(mlir::ModuleOp module, DiagnosticCollector &diags, const char *stage,
               llvm::function_ref<void(mlir::PassManager &)> build) {
  mlir::PassManager pm(module.getContext());
  build(pm);
  if (mlir::failed(pm.run(module)))
    diags.fail(stage);
  if (dumpRequested())
    std::fprintf(stderr, "// ----- tessel: after %s -----\n%s\n", stage, printed(module).c_str());
}

// tessel never allocates private memory, so a private segment in the code
// object is registers spilled to scratch: slow, so say so, with the kernel's
// line and what to change.
void warnAboutSpills(const Trace &trace, const TargetInfo &target, const std::string &assembly) {
  const std::string field = ".amdhsa_private_segment_fixed_size ";
  size_t at = assembly.find(field);
  if (at == std::string::npos)
    return;
  long bytes = std::strtol(assembly.c_str() + at + field.size(), nullptr, 10);
  if (bytes <= 0)
    return;
  std::string where;
  for (const TraceNode &n : trace.nodes)
    if (n.op != TraceOp::Arg && n.loc.file && *n.loc.file) {
      where = std::string(n.loc.file) + ":" + std::to_string(n.loc.line) + ": ";
      break;
    }
  std::fprintf(stderr,
               "%stessel: warning: kernel '%s' spills %ld bytes of registers per thread to "
               "scratch memory on %s; use a smaller block or more warps (num_warps)\n",
               where.c_str(), trace.kernelName.c_str(), bytes, target.arch);
}

} // namespace

CompiledKernel compileTrace(const Trace &trace, const Specialization &spec,
                            const CompileOptions &options) {
  const TargetInfo &target = requireTarget(options.arch);
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

  std::unique_ptr<mlir::MLIRContext> ctx = makeContext();
  DiagnosticCollector diags(*ctx);

  // 1. The trace as tile-level IR.
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importTrace(*ctx, trace, spec, target, options.numWarps);
  if (mlir::failed(mlir::verify(*module)))
    diags.fail("importing the trace");

  // 2. Specialize for this call, simplify, assign layouts.
  runPasses(*module, diags, "specialization, layouts and the LDS plan",
            [](mlir::PassManager &pm) { mlir::tessel::addTileLevelPasses(pm); });
  CompiledKernel out;
  out.name = trace.kernelName;
  out.tileIR = printed(module.get());
  uint32_t ldsBytes = 0;
  if (auto lds = (*module)->getAttrOfType<mlir::IntegerAttr>("tessel.lds_bytes"))
    ldsBytes = lds.getInt();

  // 3. Distribute over threads: per-thread LLVM dialect.
  runPasses(*module, diags, "distribution to threads",
            [](mlir::PassManager &pm) { mlir::tessel::addDistributionPasses(pm); });

  // 4. The kernel module both executors start from.
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(*module, llvmContext, trace.kernelName);
  if (!llvmModule)
    diags.fail("translation to LLVM IR");
  configureModuleForTarget(*llvmModule, target);
  // generateAmdgpuCode keeps the version the module already names.
  llvmModule->setModuleFlag(llvm::Module::Error, "amdhsa_code_object_version",
                            options.codeObjectVersion * 100);
  out.llvmIR = printed(*llvmModule);

  // 5. AMDGPU code object.
  if (dumpRequested())
    std::fprintf(stderr, "// ----- tessel: the kernel module (LLVM IR) -----\n%s\n",
                 out.llvmIR.c_str());
  AmdgpuCode code = generateAmdgpuCode(*llvmModule, target);
  if (dumpRequested())
    std::fprintf(stderr, "// ----- tessel: AMDGPU assembly (%s) -----\n%s\n", target.arch,
                 code.assembly.c_str());
  warnAboutSpills(trace, target, code.assembly);
  out.hsaco = std::move(code.hsaco);
  out.assembly = std::move(code.assembly);
  out.ldsBytes = ldsBytes;
  out.waveSize = target.waveSize;
  out.blockSize = options.numWarps * target.waveSize;
  out.kernargs = kernargLayout(trace.args);
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
