// LLVM IR kernel module -> optimized AMDGPU object -> .hsaco (lld in process);
// the assembly text by a second code generation, only when asked.
#include "tessel/lowering/amdgpu_codegen.hpp"

#include "tessel/core/error.hpp"

#include "lld_link.hpp"

#include <llvm/ADT/SmallString.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/MCAsmBackend.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCCodeEmitter.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCObjectFileInfo.h>
#include <llvm/MC/MCObjectWriter.h>
#include <llvm/MC/MCParser/MCAsmParser.h>
#include <llvm/MC/MCParser/MCTargetAsmParser.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCStreamer.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/IPO/Internalize.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

// Only the AMDGPU backend is needed; declared here so no other target is pulled in.
extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
void LLVMInitializeAMDGPUAsmParser();
}

namespace tessel {
namespace {

constexpr const char *kAmdgpuTriple = "amdgcn-amd-amdhsa";
constexpr const char *kCodeObjectVersionFlag = "amdhsa_code_object_version";
// Code object v5: what the ROCm runtimes we may meet load (LLVM 22 defaults to v6).
constexpr unsigned kCodeObjectVersion = 500;

void initializeAmdgpuOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
  });
}

} // namespace

std::unique_ptr<llvm::TargetMachine> makeAmdgpuTargetMachine(const TargetFacts &target) {
  initializeAmdgpuOnce();
  llvm::Triple triple(kAmdgpuTriple);
  std::string error;
  const llvm::Target *amdgpu = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!amdgpu)
    throw Error("the AMDGPU backend is not available in this LLVM build: " + error);
  std::unique_ptr<llvm::TargetMachine> machine(amdgpu->createTargetMachine(
      triple, target.arch, target.features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    throw Error(std::string("LLVM cannot create a target machine for ") + target.arch);
  return machine;
}

namespace {

// A thread's code generator for one target: its target machine and the pass
// pipeline that writes an object, each made on the thread's first compile
// for the target and kept. The machine builds its subtarget (register and
// instruction tables) on first use, ~1.5 ms of every compile when it is not
// kept; building the ~200 code generation passes and tearing them down again
// is ~1.8 ms of another (measured over vector add, softmax and layer norm on
// gfx942, compiled in turn 100 times). Running one pipeline over many
// modules is supported by LLVM (llc -compile-twice does it) and every run
// writes the object it would write fresh (the test "a thread's kept code
// generation pipeline writes what a fresh one writes" compiles kernels again
// after others and compares the bytes). What passes remember per function
// (AMDGPUPerfHintAnalysis's costs) is kept in ValueMaps keyed by the
// function, whose entries go when the module is freed. Not shared between
// threads.
class CodeGenerator {
public:
  explicit CodeGenerator(const TargetFacts &target) : machine_(makeAmdgpuTargetMachine(target)) {}
  // stream_ points into object_: the generator stays where it was made.
  CodeGenerator(const CodeGenerator &) = delete;
  CodeGenerator &operator=(const CodeGenerator &) = delete;

  llvm::TargetMachine &machine() { return *machine_; }

  // The object of `module`.
  std::string emitObject(llvm::Module &module) {
    if (!passes_) {
      stream_ = std::make_unique<llvm::raw_svector_ostream>(object_);
      passes_ = std::make_unique<llvm::legacy::PassManager>();
      if (machine_->addPassesToEmitFile(*passes_, *stream_, nullptr,
                                        llvm::CodeGenFileType::ObjectFile)) {
        passes_.reset();
        throw Error("the AMDGPU backend cannot emit an object file");
      }
    }
    object_.clear();
    passes_->run(module);
    std::string out(object_.str());
    object_.clear();
    return out;
  }

  // After a run that reported errors: the next compile builds a fresh
  // pipeline rather than trusting the state a failed run left.
  void dropPipeline() {
    passes_.reset();
    stream_.reset();
  }

private:
  // Declared first: destroyed after the passes that point to it.
  std::unique_ptr<llvm::TargetMachine> machine_;
  llvm::SmallString<0> object_;
  std::unique_ptr<llvm::raw_svector_ostream> stream_;
  std::unique_ptr<llvm::legacy::PassManager> passes_;
};

CodeGenerator &generatorFor(const TargetFacts &target) {
  thread_local std::map<std::string, std::unique_ptr<CodeGenerator>, std::less<>> generators;
  std::string key = std::string(target.arch) + ":" + target.features;
  std::unique_ptr<CodeGenerator> &generator = generators[key];
  if (!generator)
    generator = std::make_unique<CodeGenerator>(target);
  return *generator;
}

// Computing the data layout needs a TargetMachine; remember it per target.
// The thread's code generator lends its machine (the compile that asks
// generates code on this thread next): a machine made for the layout alone
// was 1.6 M instructions of a process's first compile.
std::string dataLayoutFor(const TargetFacts &target) {
  static std::mutex mutex;
  static std::map<std::string, std::string, std::less<>> layouts;
  std::lock_guard lock(mutex);
  auto found = layouts.find(target.arch);
  if (found != layouts.end())
    return found->second;
  std::string layout = generatorFor(target).machine().createDataLayout().getStringRepresentation();
  layouts.emplace(target.arch, layout);
  return layout;
}

void setTripleAndDataLayout(llvm::Module &module, const TargetFacts &target) {
  module.setTargetTriple(llvm::Triple(kAmdgpuTriple));
  module.setDataLayout(dataLayoutFor(target));
}

// Collects error diagnostics of the caller's LLVMContext while we generate code
// (the default handler would exit the process), and restores its handler after.
class ScopedDiagnostics {
public:
  explicit ScopedDiagnostics(llvm::LLVMContext &context)
      : context_(context), previous_(context.getDiagnosticHandler()) {
    context_.setDiagnosticHandler(std::make_unique<Collector>(errors_));
  }
  ~ScopedDiagnostics() { context_.setDiagnosticHandler(std::move(previous_)); }
  ScopedDiagnostics(const ScopedDiagnostics &) = delete;
  ScopedDiagnostics &operator=(const ScopedDiagnostics &) = delete;

  bool hasErrors() const { return !errors_.empty(); }
  const std::string &errors() const { return errors_; }

private:
  struct Collector : llvm::DiagnosticHandler {
    explicit Collector(std::string &errors) : errors(errors) {}
    bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
      if (info.getSeverity() == llvm::DS_Error) {
        llvm::raw_string_ostream stream(errors);
        llvm::DiagnosticPrinterRawOStream printer(stream);
        info.print(printer);
        stream << "\n";
      }
      return true; // handled: never print or exit
    }
    std::string &errors;
  };

  llvm::LLVMContext &context_;
  std::unique_ptr<llvm::DiagnosticHandler> previous_;
  std::string errors_;
};

// The ROCm device libraries tessel links where called: ocml (math) and
// ockl (printf through the hostcall buffer: device_print, device_assert).
struct DeviceLibrary {
  const char *prefix; // of the functions it defines
  const char *path;
};
const DeviceLibrary kOcml{"__ocml_", TESSEL_DEVICE_LIBS_DIR "/ocml.bc"};
const DeviceLibrary kOckl{"__ockl_", TESSEL_DEVICE_LIBS_DIR "/ockl.bc"};

// Read once; a failed read throws and is retried on the next call.
const llvm::MemoryBuffer &readLibrary(const char *path) {
  auto read = [path] {
    auto file = llvm::MemoryBuffer::getFile(path);
    if (!file)
      throw Error(std::string("cannot read the ROCm device library ") + path + ": " +
                  file.getError().message() + " (install rocm-device-libs)");
    return std::move(*file);
  };
  if (path == kOcml.path) {
    static const std::unique_ptr<llvm::MemoryBuffer> ocml = read();
    return *ocml;
  }
  static const std::unique_ptr<llvm::MemoryBuffer> ockl = read();
  return *ockl;
}

bool calls(const llvm::Module &module, const DeviceLibrary &library) {
  for (const llvm::Function &function : module)
    if (function.isDeclaration() && function.getName().starts_with(library.prefix))
      return true;
  return false;
}

void linkLibrary(llvm::Module &module, const DeviceLibrary &which, const ScopedDiagnostics &diagnostics) {
  auto library = llvm::getLazyBitcodeModule(readLibrary(which.path).getMemBufferRef(), module.getContext());
  if (!library)
    throw Error(std::string("cannot parse ") + which.path + ": " + llvm::toString(library.takeError()));
  // The 5.2 bitcode carries an older layout string; ours is a superset of it.
  (*library)->setDataLayout(module.getDataLayout());
  (*library)->setTargetTriple(module.getTargetTriple());
  if (llvm::Linker::linkModules(module, std::move(*library), llvm::Linker::LinkOnlyNeeded))
    throw Error(std::string("linking ") + which.path + " failed: " + diagnostics.errors());
  for (const llvm::Function &function : module)
    if (function.isDeclaration() && function.getName().starts_with(which.prefix))
      throw Error("the ROCm device library " + std::string(which.path) + " has no " +
                  function.getName().str() + "; this is a tessel compiler bug");
}

// The control constants ocml reads, defined here so no per-ISA oclc_*.bc is needed
// (rocm-device-libs 5.2 ships none for gfx942, gfx950, gfx1100).
void defineOclcControls(llvm::Module &module, const TargetFacts &target) {
  // ockl finds the hostcall buffer among the hidden arguments where the
  // code object version puts it (v4: the fourth, v5 and later: the eleventh).
  uint64_t abiVersion = 500;
  if (auto *flag = llvm::mdconst::extract_or_null<llvm::ConstantInt>(module.getModuleFlag(kCodeObjectVersionFlag)))
    abiVersion = flag->getZExtValue() < 500 ? 400 : 500;
  const std::pair<const char *, uint64_t> controls[] = {
      {"__oclc_ISA_version", target.isaVersion},
      {"__oclc_wavefrontsize64", target.waveSize == 64 ? 1 : 0},
      {"__oclc_finite_only_opt", 0},
      {"__oclc_unsafe_math_opt", 0},
      {"__oclc_daz_opt", 0},
      {"__oclc_correctly_rounded_sqrt32", 1},
      {"__oclc_ABI_version", abiVersion},
  };
  for (const auto &[name, value] : controls) {
    llvm::GlobalVariable *control = module.getGlobalVariable(name, /*AllowInternal=*/true);
    if (!control || !control->isDeclaration())
      continue;
    auto *type = llvm::dyn_cast<llvm::IntegerType>(control->getValueType());
    if (!type)
      throw Error(std::string("unexpected type of ") + name + " in the ROCm device library");
    control->setInitializer(llvm::ConstantInt::get(type, value));
    control->setConstant(true);
    control->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

// Every function of the kernel (ocml's too: a callee whose mode differs from
// its caller's is not inlined) runs with the mode register's IEEE bit clear,
// as graphics shaders do. What changes is signaling NaNs alone: with the bit
// set, arithmetic quiets an sNaN operand and v_max_f32 / v_min_f32 return a
// quiet NaN for one, so LLVM must quiet both operands of every llvm.maxnum /
// minnum it cannot prove canonical (v_max_f32 vN, vM, vM; two per step of a
// max reduction over DPP or ds_bpermute, whose results it cannot see
// through). With the bit clear, v_max_f32 / v_min_f32 return the other
// operand for any NaN, quiet or signaling (IEEE 754-2019 maximumNumber /
// minimumNumber; llvm-project #139145 tests them as llvm.maximumnum), which is what
// fmax/fmin/nanmax/nanmin promise, in one instruction that DPP can feed
// directly (v_max_f32_dpp). A NaN from an sNaN input may keep its signaling
// bit (still a NaN; the user guide says so). maximum/minimum (NaN-
// propagating) compare and select either way. clang accepts
// -mno-amdgpu-ieee only with -fno-honor-nans (reviews.llvm.org/D77013);
// tessel promises nothing of signaling NaNs but that they are NaNs, and
// "a NaN loses to a number" holds for both kinds with the bit clear.
// Triton keeps the bit set and pays the quieting.
void runWithoutIeeeMode(llvm::Module &module) {
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      function.addFnAttr("amdgpu-ieee", "false");
}

bool isKernel(const llvm::GlobalValue &value) {
  const auto *function = llvm::dyn_cast<llvm::Function>(&value);
  return function && function->getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL;
}

} // namespace

namespace {

std::string emitAssemblyText(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw Error("the AMDGPU backend cannot emit assembly");
  passes.run(module);
  return std::string(buffer.str());
}

// The object of assembly text `text` (what `machine` printed): the MC
// assembler, as `clang -c kernel.s` would run it. Much cheaper than running
// code generation a second time for the object.
std::string assemble(const std::string &text, llvm::TargetMachine &machine) {
  const llvm::Target &target = machine.getTarget();
  const llvm::Triple &triple = machine.getTargetTriple();
  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCRegisterInfo> registers(target.createMCRegInfo(triple));
  std::unique_ptr<llvm::MCAsmInfo> asmInfo(target.createMCAsmInfo(*registers, triple, options));
  std::unique_ptr<llvm::MCInstrInfo> instructions(target.createMCInstrInfo());
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target.createMCSubtargetInfo(triple, machine.getTargetCPU(), machine.getTargetFeatureString()));
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "kernel.s"), llvm::SMLoc());
  std::string messages;
  sources.setDiagHandler(
      [](const llvm::SMDiagnostic &d, void *out) {
        llvm::raw_string_ostream os(*static_cast<std::string *>(out));
        d.print("tessel", os, /*ShowColors=*/false);
      },
      &messages);
  llvm::MCContext context(triple, asmInfo.get(), registers.get(), subtarget.get(), &sources, &options);
  std::unique_ptr<llvm::MCObjectFileInfo> files(target.createMCObjectFileInfo(context, /*PIC=*/true));
  context.setObjectFileInfo(files.get());
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  std::unique_ptr<llvm::MCAsmBackend> backend(target.createMCAsmBackend(*subtarget, *registers, options));
  std::unique_ptr<llvm::MCObjectWriter> writer = backend->createObjectWriter(stream);
  std::unique_ptr<llvm::MCCodeEmitter> emitter(target.createMCCodeEmitter(*instructions, context));
  std::unique_ptr<llvm::MCStreamer> streamer(target.createMCObjectStreamer(
      triple, context, std::move(backend), std::move(writer), std::move(emitter), *subtarget));
  std::unique_ptr<llvm::MCAsmParser> parser(llvm::createMCAsmParser(sources, context, *streamer, *asmInfo));
  std::unique_ptr<llvm::MCTargetAsmParser> targetParser(
      target.createMCAsmParser(*subtarget, *parser, *instructions, options));
  if (!targetParser)
    throw Error("the AMDGPU assembler is not available (a tessel build problem)");
  parser->setTargetParser(*targetParser);
  if (parser->Run(/*NoInitialTextSection=*/false))
    throw Error("assembling the AMDGPU kernel failed (a tessel compiler bug): " + messages);
  streamer->finish();
  return std::string(buffer.str());
}

// The largest private_segment_fixed_size of the code object's kernel
// descriptors (<name>.kd: bytes 4..7 of the 64-byte amdhsa descriptor).
uint32_t largestPrivateSegment(const llvm::object::ObjectFile &object) {
  uint32_t largest = 0;
  for (const llvm::object::SymbolRef &symbol : object.symbols()) {
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    llvm::Expected<uint64_t> address = symbol.getAddress();
    llvm::Expected<llvm::object::section_iterator> section = symbol.getSection();
    if (!name || !address || !section || !name->ends_with(".kd") || *section == object.section_end()) {
      if (!name)
        llvm::consumeError(name.takeError());
      if (!address)
        llvm::consumeError(address.takeError());
      if (!section)
        llvm::consumeError(section.takeError());
      continue;
    }
    llvm::Expected<llvm::StringRef> contents = (*section)->getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    uint64_t at = *address - (*section)->getAddress() + 4;
    if (at + 4 > contents->size())
      continue;
    uint32_t value;
    std::memcpy(&value, contents->data() + at, 4);
    largest = std::max(largest, value);
  }
  return largest;
}

// A kernel may not depend on anything outside its code object (no malloc, no
// libm): throws when a symbol is undefined. Returns the scratch bytes per
// thread (largestPrivateSegment).
uint32_t checkCodeObject(const std::vector<uint8_t> &hsaco, const TargetFacts &target) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(hsaco.data()), hsaco.size());
  auto object = llvm::object::ObjectFile::createELFObjectFile(
      llvm::MemoryBufferRef(bytes, "kernel.hsaco"));
  if (!object)
    throw Error("lld produced an unreadable code object: " +
                llvm::toString(object.takeError()));
  std::set<std::string> undefined;
  auto collect = [&](const llvm::object::SymbolRef &symbol) {
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    if (!flags) {
      llvm::consumeError(flags.takeError());
      return;
    }
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined))
      return;
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      return;
    }
    if (!name->empty())
      undefined.insert(name->str());
  };
  for (const llvm::object::SymbolRef &symbol : (*object)->symbols())
    collect(symbol);
  if (auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(object->get()))
    for (const llvm::object::SymbolRef &symbol : elf->getDynamicSymbolIterators())
      collect(symbol);
  if (undefined.empty())
    return largestPrivateSegment(**object);
  std::string names;
  for (const std::string &name : undefined)
    names += (names.empty() ? "" : ", ") + name;
  throw Error(std::string("the ") + target.arch + " code object has undefined symbol(s): " +
              names +
              ". A kernel must not call external functions (heap allocation, libm); "
              "this is a tessel compiler bug");
}

} // namespace

void configureModuleForTarget(llvm::Module &module, const TargetFacts &target) {
  setTripleAndDataLayout(module, target);
  module.setModuleFlag(llvm::Module::Error, kCodeObjectVersionFlag,
                       llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                           llvm::Type::getInt32Ty(module.getContext()), kCodeObjectVersion)));
  // The kernel module states the mode it runs in (the code object's
  // functions get it again once ocml is linked).
  runWithoutIeeeMode(module);
}

void requestWavesPerEu(llvm::Module &module, unsigned waves) {
  for (llvm::Function &function : module)
    if (isKernel(function))
      function.addFnAttr("amdgpu-waves-per-eu", std::to_string(waves));
}

namespace {

// The kernel module `module` optimized for `target`, with the ROCm device
// library linked where called.
struct OptimizedKernel {
  // `verified`: the caller ran LLVM's verifier on the module already.
  OptimizedKernel(std::unique_ptr<llvm::Module> module, const TargetFacts &target, bool verified = false)
      : diagnostics(module->getContext()), generator(generatorFor(target)), kernel(std::move(module)) {
    // The kernel module's line tables are for the emulator's reports; the
    // code object is generated without them.
    llvm::StripDebugInfo(*kernel);
    std::string verifierMessages;
    llvm::raw_string_ostream verifierStream(verifierMessages);
    if (!verified && llvm::verifyModule(*kernel, &verifierStream))
      throw Error("invalid kernel module handed to the AMDGPU backend (a tessel compiler bug): " +
                  verifierMessages);
    setTripleAndDataLayout(*kernel, target);
    // Keep a code object version the caller chose (the HIP device may pick one).
    if (!kernel->getModuleFlag(kCodeObjectVersionFlag))
      configureModuleForTarget(*kernel, target);
    if (calls(*kernel, kOcml))
      linkLibrary(*kernel, kOcml, diagnostics);
    if (calls(*kernel, kOckl))
      linkLibrary(*kernel, kOckl, diagnostics);
    defineOclcControls(*kernel, target);
    runWithoutIeeeMode(*kernel); // ocml's functions, linked just now
    llvm::internalizeModule(*kernel, isKernel);
    optimizeKernel(*kernel, generator.machine());
    carryBytePairsAsWords(*kernel);
    if (target.fmaMixAdds)
      addWidenedHalvesAsFmaMix(*kernel);
    boundSchedulingRegions(*kernel);
    boundStagedStores(*kernel);
    boundDirectLoads(*kernel);
    // Last: the two above take any call for a write, the zeros' asm included.
    giveRegionsTheirOwnZeroOffset(*kernel);
  }

  // Code generation to an object (the thread's kept pipeline) or to
  // assembly text (a pipeline of its own: only dumps and tools ask).
  std::string emitObject(const TargetFacts &target) {
    std::string out = generator.emitObject(*kernel);
    if (diagnostics.hasErrors())
      generator.dropPipeline();
    throwOnErrors(target);
    return out;
  }
  std::string emitAssembly(const TargetFacts &target) {
    std::string out = emitAssemblyText(*kernel, generator.machine());
    throwOnErrors(target);
    return out;
  }

  void throwOnErrors(const TargetFacts &target) const {
    if (diagnostics.hasErrors())
      throw Error(std::string("AMDGPU code generation for ") + target.arch + " failed: " + diagnostics.errors());
  }

  // The module lives in the caller's context; keep its diagnostics from exiting the process.
  ScopedDiagnostics diagnostics;
  CodeGenerator &generator;
  std::unique_ptr<llvm::Module> kernel;
};

} // namespace

AmdgpuCode generateAmdgpuCode(const llvm::Module &module, const TargetFacts &target) {
  return generateAmdgpuCode(llvm::CloneModule(module), target);
}

AmdgpuCode generateAmdgpuCode(std::unique_ptr<llvm::Module> module, const TargetFacts &target,
                              bool verified) {
  StageClock clock;
  AmdgpuCode code;
  OptimizedKernel kernel(std::move(module), target, verified);
  code.times.optimize = clock.lap();
  std::string object = kernel.emitObject(target);
  code.times.codegen = clock.lap();
  code.hsaco = linkHsaco(object);
  code.privateSegmentBytes = checkCodeObject(code.hsaco, target);
  code.times.link = clock.lap();
  code.resources = kernelResources(code.hsaco, ""); // one kernel per code object
  return code;
}

std::string generateAmdgpuAssembly(const llvm::Module &module, const TargetFacts &target) {
  OptimizedKernel kernel(llvm::CloneModule(module), target);
  return kernel.emitAssembly(target);
}

namespace {
// The kernel module of `bytes` (bitcode, or LLVM IR text), read into
// `context`; `purpose` says in an error what it was read for.
std::unique_ptr<llvm::Module> readKernelModule(const std::string &bytes, llvm::LLVMContext &context,
                                               const char *purpose) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseIR(llvm::MemoryBufferRef(bytes, "kernel"), error, context);
  if (!module) {
    std::string message;
    llvm::raw_string_ostream os(message);
    error.print("kernel", os, /*ShowColors=*/false);
    throw Error(std::string("cannot read the kernel module back to ") + purpose + ": " + message);
  }
  return module;
}
} // namespace

std::string generateAmdgpuAssembly(const std::string &llvmModule, const TargetFacts &target) {
  llvm::LLVMContext context;
  // The module just read is this call's own: no clone.
  OptimizedKernel kernel(readKernelModule(llvmModule, context, "make its assembly"), target);
  return kernel.emitAssembly(target);
}

std::string llvmIRText(const std::string &llvmModule) {
  if (!llvm::isBitcode(reinterpret_cast<const unsigned char *>(llvmModule.data()),
                       reinterpret_cast<const unsigned char *>(llvmModule.data() + llvmModule.size())))
    return llvmModule; // text already
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = readKernelModule(llvmModule, context, "print it");
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  return text;
}

void makeTextsOnDemand(CompiledKernel &kernel) {
  if (!kernel.hasLlvmIR())
    kernel.setLlvmIRSource([](const CompiledKernel &k) { return llvmIRText(k.llvmModule); });
  if (!kernel.hasAssembly())
    kernel.setAssemblySource([](const CompiledKernel &k) {
      return generateAmdgpuAssembly(k.llvmModule, requireTarget(k.arch));
    });
}

namespace {
// The kernel's map in the msgpack of an NT_AMDGPU_METADATA note
// (amdhsa.kernels[i] with .name == name).
void readKernelMetadata(llvm::StringRef desc, const std::string &name, KernelResources &out) {
  llvm::msgpack::Document doc;
  if (!doc.readFromBlob(desc, /*Multi=*/false) || !doc.getRoot().isMap())
    return;
  llvm::msgpack::MapDocNode &root = doc.getRoot().getMap();
  auto kernels = root.find(doc.getNode("amdhsa.kernels"));
  if (kernels == root.end() || !kernels->second.isArray())
    return;
  for (llvm::msgpack::DocNode &k : kernels->second.getArray()) {
    if (!k.isMap())
      continue;
    llvm::msgpack::MapDocNode &map = k.getMap();
    auto field = [&](const char *key) -> unsigned {
      auto it = map.find(doc.getNode(key));
      if (it == map.end())
        return 0;
      if (it->second.getKind() == llvm::msgpack::Type::UInt)
        return unsigned(it->second.getUInt());
      if (it->second.getKind() == llvm::msgpack::Type::Int)
        return unsigned(std::max<int64_t>(0, it->second.getInt()));
      return 0;
    };
    auto kernelName = map.find(doc.getNode(".name"));
    if (kernelName == map.end() || !kernelName->second.isString() ||
        (!name.empty() && kernelName->second.getString() != name))
      continue;
    out.vgprs = field(".vgpr_count");
    out.agprs = field(".agpr_count");
    out.sgprs = field(".sgpr_count");
    out.vgprSpills = field(".vgpr_spill_count");
    out.sgprSpills = field(".sgpr_spill_count");
    return;
  }
}
} // namespace

KernelResources kernelResources(const std::vector<uint8_t> &hsaco, const std::string &name) {
  KernelResources out;
  llvm::StringRef bytes(reinterpret_cast<const char *>(hsaco.data()), hsaco.size());
  auto object = llvm::object::ObjectFile::createELFObjectFile(llvm::MemoryBufferRef(bytes, "kernel.hsaco"));
  if (!object) {
    llvm::consumeError(object.takeError());
    return out;
  }
  out.privateSegmentBytes = largestPrivateSegment(**object);
  auto *elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(object->get());
  if (!elf)
    return out;
  const auto &file = elf->getELFFile();
  auto sections = file.sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return out;
  }
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    llvm::Error error = llvm::Error::success();
    for (const auto &note : file.notes(section, error))
      if (note.getType() == llvm::ELF::NT_AMDGPU_METADATA && note.getName() == "AMDGPU")
        readKernelMetadata(note.getDescAsStringRef(4), name, out);
    llvm::consumeError(std::move(error));
  }
  return out;
}

std::vector<uint8_t> hsacoFromAssembly(const std::string &assembly, const TargetFacts &target) {
  std::vector<uint8_t> hsaco = linkHsaco(assemble(assembly, generatorFor(target).machine()));
  checkCodeObject(hsaco, target);
  return hsaco;
}

} // namespace tessel
