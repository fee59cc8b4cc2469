// AMDGPU code generation from handwritten LLVM IR kernels: code objects per
// target, ocml linking, rejection of external calls, an untouched input module.
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/target.hpp"
#include "tessel/core/error.hpp"
#include "parse_ir.hpp"

#include <doctest/doctest.h>

#include <llvm/AsmParser/Parser.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <future>
#include <vector>

using namespace tessel;

namespace {

// One thread copies 4 floats; 16-byte aligned, so gfx9 uses dwordx4 memory ops.
constexpr const char *kCopyKernel = R"(
define amdgpu_kernel void @copy(ptr addrspace(1) noalias %a, ptr addrspace(1) noalias %b) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %bid, 256
  %thread = add i32 %base, %tid
  %thread64 = zext i32 %thread to i64
  %element = shl i64 %thread64, 2
  %src = getelementptr inbounds float, ptr addrspace(1) %b, i64 %element
  %value = load <4 x float>, ptr addrspace(1) %src, align 16
  %dst = getelementptr inbounds float, ptr addrspace(1) %a, i64 %element
  store <4 x float> %value, ptr addrspace(1) %dst, align 16
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
)";

constexpr const char *kOcmlKernel = R"(
define amdgpu_kernel void @math(ptr addrspace(1) %d, ptr addrspace(1) %f) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %tid to i64
  %dp = getelementptr inbounds double, ptr addrspace(1) %d, i64 %i
  %dv = load double, ptr addrspace(1) %dp, align 8
  %ds = call double @__ocml_sin_f64(double %dv)
  store double %ds, ptr addrspace(1) %dp, align 8
  %fp = getelementptr inbounds float, ptr addrspace(1) %f, i64 %i
  %fv = load float, ptr addrspace(1) %fp, align 4
  %fe = call float @__ocml_exp_f32(float %fv)
  store float %fe, ptr addrspace(1) %fp, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare double @__ocml_sin_f64(double)
declare float @__ocml_exp_f32(float)
)";

// A heap allocation whose result escapes, so no optimization can drop it.
constexpr const char *kMallocKernel = R"(
define amdgpu_kernel void @allocates(ptr addrspace(1) %out) {
entry:
  %p = call ptr @malloc(i64 64)
  store i32 7, ptr %p, align 4
  store ptr %p, ptr addrspace(1) %out, align 8
  ret void
}
declare ptr @malloc(i64)
)";

std::unique_ptr<llvm::Module> parse(const char *text, llvm::LLVMContext &context) {
  return testing::parseIR(text, context);
}

std::string print(const llvm::Module &module) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  module.print(stream, nullptr);
  return text;
}

// The 32-bit hex literals the instructions of `assembly` use (directives skipped).
std::set<uint64_t> instructionLiterals(const std::string &assembly) {
  std::set<uint64_t> literals;
  static const std::regex hexLiteral("0x[0-9a-fA-F]+");
  size_t begin = 0;
  while (begin < assembly.size()) {
    size_t end = assembly.find('\n', begin);
    if (end == std::string::npos)
      end = assembly.size();
    std::string line = assembly.substr(begin, end - begin);
    begin = end + 1;
    if (line.size() < 2 || line[0] != '\t' || !std::islower(static_cast<unsigned char>(line[1])))
      continue;
    for (std::sregex_iterator it(line.begin(), line.end(), hexLiteral), last; it != last; ++it)
      literals.insert(std::strtoull(it->str().c_str(), nullptr, 16));
  }
  return literals;
}

// Within 2 ulp, compared as same-signed IEEE bit patterns.
bool nearBits(uint64_t actual, uint64_t expected) {
  return (actual > expected ? actual - expected : expected - actual) <= 2;
}

struct ElfFacts {
  uint16_t machine = 0;
  uint16_t type = 0;
  uint32_t flags = 0;
  std::set<std::string> defined, undefined;
  std::map<std::string, std::string> sections; // name -> contents
};

ElfFacts readElf(const std::vector<uint8_t> &hsaco) {
  ElfFacts facts;
  REQUIRE(hsaco.size() >= sizeof(llvm::ELF::Elf64_Ehdr));
  llvm::ELF::Elf64_Ehdr header;
  std::memcpy(&header, hsaco.data(), sizeof(header));
  REQUIRE(std::memcmp(header.e_ident, llvm::ELF::ElfMagic, 4) == 0);
  facts.machine = header.e_machine;
  facts.type = header.e_type;
  facts.flags = header.e_flags;
  llvm::StringRef bytes(reinterpret_cast<const char *>(hsaco.data()), hsaco.size());
  auto object =
      llvm::object::ObjectFile::createELFObjectFile(llvm::MemoryBufferRef(bytes, "hsaco"));
  REQUIRE(static_cast<bool>(object));
  for (const llvm::object::SymbolRef &symbol : (*object)->symbols()) {
    llvm::StringRef name = llvm::cantFail(symbol.getName());
    if (name.empty())
      continue;
    if (llvm::cantFail(symbol.getFlags()) & llvm::object::SymbolRef::SF_Undefined)
      facts.undefined.insert(name.str());
    else
      facts.defined.insert(name.str());
  }
  for (const llvm::object::SectionRef &section : (*object)->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (name && contents)
      facts.sections[name->str()] = contents->str();
    if (!name)
      llvm::consumeError(name.takeError());
    if (!contents)
      llvm::consumeError(contents.takeError());
  }
  return facts;
}

bool contains(const std::string &text, const char *needle) {
  return text.find(needle) != std::string::npos;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

TEST_CASE("configureModuleForTarget sets triple, data layout, code object v5 and IEEE mode off") {
  llvm::LLVMContext context;
  auto module = parse(kCopyKernel, context);
  configureModuleForTarget(*module, requireTarget("gfx942"));
  CHECK(module->getTargetTriple().str() == "amdgcn-amd-amdhsa");
  // The kernel module (what the emulator runs, kernel.bc) states the mode.
  CHECK(module->getFunction("copy")->getFnAttribute("amdgpu-ieee").getValueAsString() == "false");
  // AMDGPU: little endian, 32-bit LDS (p3) and private (p5) pointers, allocas in addrspace 5.
  std::string layout = module->getDataLayoutStr();
  CHECK(layout.rfind("e-", 0) == 0);
  CHECK(contains(layout, "p3:32:32"));
  CHECK(contains(layout, "A5"));
  auto *version = llvm::mdconst::extract_or_null<llvm::ConstantInt>(
      module->getModuleFlag("amdhsa_code_object_version"));
  REQUIRE(version != nullptr);
  CHECK(version->getZExtValue() == 500);
}

TEST_CASE("every target produces a code object with the copy kernel") {
  struct Expected {
    std::string arch;
    unsigned mach;
  };
  const Expected expected[] = {
      {"gfx90a", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A},
      {"gfx942", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX942},
      {"gfx950", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX950},
      {"gfx1100", llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100},
  };
  for (const Expected &e : expected) {
    CAPTURE(e.arch);
    const TargetFacts &target = requireTarget(e.arch);
    llvm::LLVMContext context;
    auto module = parse(kCopyKernel, context);
    configureModuleForTarget(*module, target);

    auto start = std::chrono::steady_clock::now();
    AmdgpuCode code = generateAmdgpuCode(*module, target);
    double firstMs = millisecondsSince(start);
    start = std::chrono::steady_clock::now();
    AmdgpuCode again = generateAmdgpuCode(*module, target);
    double secondMs = millisecondsSince(start);
    MESSAGE(e.arch << " copy kernel: " << firstMs << " ms first, " << secondMs << " ms again");
    CHECK(again.hsaco == code.hsaco);
    const std::string assembly = generateAmdgpuAssembly(*module, target);

    ElfFacts elf = readElf(code.hsaco);
    CHECK(elf.machine == llvm::ELF::EM_AMDGPU);
    CHECK(elf.type == llvm::ELF::ET_DYN);
    CHECK((elf.flags & llvm::ELF::EF_AMDGPU_MACH) == e.mach);
    CHECK(elf.defined.count("copy.kd") == 1);
    CHECK(elf.defined.count("copy") == 1);
    CHECK(elf.undefined.empty());

    CHECK(contains(assembly, ".amdhsa_code_object_version 5"));
    CHECK(contains(assembly, (std::string(".amdgcn_target \"amdgcn-amd-amdhsa--") +
                                   e.arch).c_str()));
    if (target.waveSize == 32)
      CHECK(contains(assembly, ".amdhsa_wavefront_size32 1"));
    else
      CHECK_FALSE(contains(assembly, ".amdhsa_wavefront_size32 1"));
  }
}

// The compile emits the object alone; the assembly is a second code
// generation when asked for. It must be the object's code: assembled by MC
// and linked, its instructions and kernel descriptor are byte for byte the
// object's.
TEST_CASE("the assembly made on request is exactly the code object's code") {
  for (std::string arch : {"gfx90a", "gfx942", "gfx950", "gfx1100"})
    for (const char *source : {kCopyKernel, kOcmlKernel}) {
      CAPTURE(arch);
      const TargetFacts &target = requireTarget(arch);
      llvm::LLVMContext context;
      auto module = parse(source, context);
      configureModuleForTarget(*module, target);
      ElfFacts object = readElf(generateAmdgpuCode(*module, target).hsaco);
      ElfFacts assembled = readElf(hsacoFromAssembly(generateAmdgpuAssembly(*module, target), target));
      REQUIRE(object.sections.count(".text") == 1);
      REQUIRE(object.sections.count(".rodata") == 1); // the kernel descriptors
      CHECK(object.sections[".text"].size() > 16);
      CHECK(assembled.sections[".text"] == object.sections[".text"]);
      CHECK(assembled.sections[".rodata"] == object.sections[".rodata"]);
      CHECK(assembled.sections[".note"] == object.sections[".note"]); // the metadata (registers, kernargs)
      // The kernels and their descriptors (the assembler also keeps the
      // resource-usage symbols the printer's .set lines name).
      auto kernelSymbols = [](const ElfFacts &elf) {
        std::string names;
        for (const std::string &n : elf.defined)
          if (n.find('.') == std::string::npos || n.ends_with(".kd"))
            names += n + " ";
        return names;
      };
      CHECK(kernelSymbols(assembled) == kernelSymbols(object));
    }
}

TEST_CASE("gfx942 copies 16 bytes per thread with dwordx4 global memory ops") {
  llvm::LLVMContext context;
  auto module = parse(kCopyKernel, context);
  AmdgpuCode code = generateAmdgpuCode(*module, requireTarget("gfx942"));
  const std::string assembly = generateAmdgpuAssembly(*module, requireTarget("gfx942"));
  CHECK(contains(assembly, "global_load_dwordx4"));
  CHECK(contains(assembly, "global_store_dwordx4"));
}

TEST_CASE("a code object version chosen on the input module is kept") {
  llvm::LLVMContext context;
  auto module = parse(kCopyKernel, context);
  module->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", 600);
  AmdgpuCode code = generateAmdgpuCode(*module, requireTarget("gfx942"));
  const std::string assembly = generateAmdgpuAssembly(*module, requireTarget("gfx942"));
  CHECK(contains(assembly, ".amdhsa_code_object_version 6"));
}

TEST_CASE("ocml calls link from the ROCm device library with no undefined symbols") {
  for (std::string arch : {"gfx90a", "gfx942", "gfx950", "gfx1100"}) {
    CAPTURE(arch);
    llvm::LLVMContext context;
    auto module = parse(kOcmlKernel, context);
    auto start = std::chrono::steady_clock::now();
    AmdgpuCode code = generateAmdgpuCode(*module, requireTarget(arch));
    const std::string assembly = generateAmdgpuAssembly(*module, requireTarget(arch));
    MESSAGE(arch << " ocml kernel: " << millisecondsSince(start) << " ms");
    ElfFacts elf = readElf(code.hsaco);
    CHECK(elf.undefined.empty());
    CHECK(elf.defined.count("math.kd") == 1);
    // The library bodies were inlined: no call to an ocml symbol is left.
    CHECK_FALSE(contains(assembly, "__ocml_"));
    // sin(double) reduces its argument with the trig-preop instruction.
    CHECK(contains(assembly, "v_trig_preop_f64"));
  }
}

// LLVM 22 constant-folds the linked 5.2 ocml code for constant arguments, which
// checks that the old bitcode still means what it meant: the results must match
// the host's libm.
TEST_CASE("linked ocml sin_f64 and exp_f32 compute the right values") {
  constexpr const char *kTemplate = R"(
define amdgpu_kernel void @consts(ptr addrspace(1) %d, ptr addrspace(1) %f) {
entry:
  %ds = call double @__ocml_sin_f64(double X)
  store double %ds, ptr addrspace(1) %d, align 8
  %fe = call float @__ocml_exp_f32(float Y)
  store float %fe, ptr addrspace(1) %f, align 4
  ret void
}
declare double @__ocml_sin_f64(double)
declare float @__ocml_exp_f32(float)
)";
  struct Case {
    double sinArgument;
    float expArgument;
  };
  // 1e10 takes the large-argument (Payne-Hanek) reduction path.
  for (Case c : {Case{1.0, 1.5f}, Case{100.0, -3.25f}, Case{-7.5, 10.0f}, Case{1e10, 0.125f}}) {
    CAPTURE(c.sinArgument);
    CAPTURE(c.expArgument);
    std::string text = kTemplate;
    // Hex spellings are exact for any double (LLVM IR spells float constants as doubles too).
    auto hex = [](double value) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "0x%016llX",
                    static_cast<unsigned long long>(std::bit_cast<uint64_t>(value)));
      return std::string(buffer);
    };
    text.replace(text.find("X)"), 1, hex(c.sinArgument));
    text.replace(text.find("Y)"), 1, hex(static_cast<double>(c.expArgument)));
    llvm::LLVMContext context;
    auto module = parse(text.c_str(), context);
    AmdgpuCode code = generateAmdgpuCode(*module, requireTarget("gfx942"));
    const std::string assembly = generateAmdgpuAssembly(*module, requireTarget("gfx942"));
    std::set<uint64_t> literals = instructionLiterals(assembly);

    uint64_t sinBits = std::bit_cast<uint64_t>(std::sin(c.sinArgument));
    bool sinFound = false;
    for (uint64_t high : literals)
      for (uint64_t low : literals)
        sinFound = sinFound || nearBits((high << 32) | low, sinBits);
    CHECK(sinFound);

    uint64_t expBits = std::bit_cast<uint32_t>(std::exp(c.expArgument));
    bool expFound = false;
    for (uint64_t literal : literals)
      expFound = expFound || nearBits(literal, expBits);
    CHECK(expFound);
  }
}

TEST_CASE("a kernel calling malloc is rejected with an Error naming the symbol") {
  llvm::LLVMContext context;
  auto module = parse(kMallocKernel, context);
  std::string message;
  try {
    generateAmdgpuCode(*module, requireTarget("gfx942"));
  } catch (const Error &error) {
    message = error.what();
  }
  CAPTURE(message);
  CHECK(contains(message, "undefined symbol"));
  CHECK(contains(message, "malloc"));
  CHECK(contains(message, "compiler bug"));
}

TEST_CASE("an ocml function the device library lacks is an Error naming it") {
  std::string text = kOcmlKernel;
  for (size_t at; (at = text.find("__ocml_exp_f32")) != std::string::npos;)
    text.replace(at, std::strlen("__ocml_exp_f32"), "__ocml_nonexistent_f32");
  llvm::LLVMContext context;
  auto module = parse(text.c_str(), context);
  std::string message;
  try {
    generateAmdgpuCode(*module, requireTarget("gfx942"));
  } catch (const Error &error) {
    message = error.what();
  }
  CAPTURE(message);
  CHECK(contains(message, "__ocml_nonexistent_f32"));
  CHECK(contains(message, "ocml.bc"));
  CHECK(contains(message, "compiler bug"));
}

TEST_CASE("an invalid module is an Error, not a crash") {
  llvm::LLVMContext context;
  llvm::Module module("broken", context);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), false);
  auto *kernel = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "broken", module);
  kernel->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
  llvm::BasicBlock::Create(context, "entry", kernel); // no terminator
  std::string message;
  try {
    generateAmdgpuCode(module, requireTarget("gfx942"));
  } catch (const Error &error) {
    message = error.what();
  }
  CAPTURE(message);
  CHECK(contains(message, "invalid kernel module"));
  CHECK(contains(message, "compiler bug"));
}

// 160000 bytes of LDS: more than gfx942's 64 KiB, within gfx950's 160 KiB.
constexpr const char *kLdsKernel = R"(
@buffer = internal addrspace(3) global [40000 x i32] poison, align 4
define amdgpu_kernel void @big(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %tid to i64
  %p = getelementptr inbounds [40000 x i32], ptr addrspace(3) @buffer, i64 0, i64 %i
  store i32 %tid, ptr addrspace(3) %p, align 4
  call void @llvm.amdgcn.s.barrier()
  %q = getelementptr inbounds [40000 x i32], ptr addrspace(3) @buffer, i64 0, i64 39999
  %v = load i32, ptr addrspace(3) %q, align 4
  store i32 %v, ptr addrspace(1) %out, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
)";

// The backend reports this through the context's diagnostic handler, whose
// default would exit the process.
TEST_CASE("LDS beyond the target's limit is an Error and the caller's handler is restored") {
  llvm::LLVMContext context;
  auto module = parse(kLdsKernel, context);
  const llvm::DiagnosticHandler *callerHandler = context.getDiagHandlerPtr();
  std::string message;
  try {
    generateAmdgpuCode(*module, requireTarget("gfx942"));
  } catch (const Error &error) {
    message = error.what();
  }
  CAPTURE(message);
  CHECK(contains(message, "gfx942"));
  CHECK(contains(message, "local memory (160000) exceeds limit (65536)"));
  CHECK(context.getDiagHandlerPtr() == callerHandler);
  // 160000 bytes fit gfx950's 160 KiB.
  AmdgpuCode code = generateAmdgpuCode(*module, requireTarget("gfx950"));
  const std::string assembly = generateAmdgpuAssembly(*module, requireTarget("gfx950"));
  CHECK(contains(assembly, ".amdhsa_group_segment_fixed_size 160000"));
}

// A thread keeps its code generation pipeline for the next compile (the
// first compile on a thread builds it). What a kept pipeline writes must be
// what a fresh one writes, after other modules and after a failed run.
TEST_CASE("a thread's kept code generation pipeline writes what a fresh one writes") {
  auto compile = [](const char *text, const char *arch) {
    const TargetFacts &target = requireTarget(arch);
    llvm::LLVMContext context;
    auto module = parse(text, context);
    configureModuleForTarget(*module, target);
    return generateAmdgpuCode(*module, target).hsaco;
  };
  // Each on a new thread, so each starts with pipelines of its own (an
  // exception comes back to this thread).
  auto onNewThread = [](auto work) { return std::async(std::launch::async, work).get(); };
  const std::vector<uint8_t> freshCopy = onNewThread([&] { return compile(kCopyKernel, "gfx942"); });
  const std::vector<uint8_t> freshMath = onNewThread([&] { return compile(kOcmlKernel, "gfx942"); });
  const std::vector<uint8_t> freshWave32 = onNewThread([&] { return compile(kCopyKernel, "gfx1100"); });
  REQUIRE(freshCopy != freshMath);
  std::vector<std::vector<uint8_t>> kept = onNewThread([&] {
    std::vector<std::vector<uint8_t>> out;
    out.push_back(compile(kCopyKernel, "gfx942")); // builds gfx942's pipeline
    out.push_back(compile(kOcmlKernel, "gfx942"));
    out.push_back(compile(kCopyKernel, "gfx1100")); // a pipeline per target
    out.push_back(compile(kCopyKernel, "gfx942"));
    CHECK_THROWS_WITH_AS(compile(kLdsKernel, "gfx942"), doctest::Contains("exceeds limit"), Error);
    out.push_back(compile(kOcmlKernel, "gfx942"));
    out.push_back(compile(kCopyKernel, "gfx942"));
    return out;
  });
  CHECK(kept[0] == freshCopy);
  CHECK(kept[1] == freshMath);
  CHECK(kept[2] == freshWave32);
  CHECK(kept[3] == freshCopy);
  CHECK(kept[4] == freshMath);
  CHECK(kept[5] == freshCopy);
}

// Kernels run with the mode register's IEEE bit clear: v_max_f32 / v_min_f32
// then treat every NaN as missing data (IEEE 754-2019 maximumNumber), which
// is what llvm.maxnum asks, so no v_max_f32 vN, vM, vM quieting each operand
// first. ocml's functions get the same mode and still inline (a mode
// mismatch would keep them as calls).
TEST_CASE("kernels run without IEEE mode: maxnum is one instruction, ocml still inlines") {
  constexpr const char *kLargest = R"(
define amdgpu_kernel void @largest(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %tid to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %i
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %i
  %x = load float, ptr addrspace(1) %pa, align 4
  %y = load float, ptr addrspace(1) %pb, align 4
  %m = call float @llvm.maxnum.f32(float %x, float %y)
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %i
  store float %m, ptr addrspace(1) %po, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.maxnum.f32(float, float)
)";
  const std::regex quieting(R"(v_max_f32(_e32|_e64)? (v\d+), (v\d+), \3\b)");
  for (std::string arch : {"gfx90a", "gfx942", "gfx950", "gfx1100"}) {
    CAPTURE(arch);
    const TargetFacts &target = requireTarget(arch);
    llvm::LLVMContext context;
    auto module = parse(kLargest, context);
    configureModuleForTarget(*module, target);
    const std::string assembly = generateAmdgpuAssembly(*module, target);
    CAPTURE(assembly);
    CHECK(contains(assembly, ".amdhsa_ieee_mode 0"));
    CHECK(contains(assembly, "v_max_f32"));
    CHECK_FALSE(std::regex_search(assembly, quieting));

    auto math = parse(kOcmlKernel, context);
    configureModuleForTarget(*math, target);
    const std::string mathAssembly = generateAmdgpuAssembly(*math, target);
    CHECK(contains(mathAssembly, ".amdhsa_ieee_mode 0"));
    CHECK_FALSE(contains(mathAssembly, "s_swappc"));
  }
}

TEST_CASE("generation leaves the input module unchanged") {
  for (const char *text : {kCopyKernel, kOcmlKernel}) {
    llvm::LLVMContext context;
    auto module = parse(text, context);
    configureModuleForTarget(*module, requireTarget("gfx1100"));
    std::string before = print(*module);
    generateAmdgpuCode(*module, requireTarget("gfx1100"));
    generateAmdgpuCode(*module, requireTarget("gfx942"));
    CHECK(print(*module) == before);
  }
}

// The target table's matrix instructions are facts about LLVM's AMDGPU
// backend: each intrinsic exists and compiles, for its target, to its
// instruction (a kernel taking the operands as arguments, storing the result).
TEST_CASE("every matrix instruction in the target table compiles for its target") {
  for (const std::string &arch : supportedTargets()) {
    const TargetFacts &target = requireTarget(arch);
    for (const MatrixInstr &instr : target.matrixInstrs) {
      CAPTURE(arch);
      CAPTURE(instr.intrinsic);
      llvm::LLVMContext ctx;
      llvm::Intrinsic::ID id = llvm::Intrinsic::lookupIntrinsicID(instr.intrinsic);
      REQUIRE(id != llvm::Intrinsic::not_intrinsic);
      if (llvm::Intrinsic::isOverloaded(id))
        continue; // WMMA's vector types are chosen by the dot lowering; the name is checked
      llvm::FunctionType *fnType = llvm::Intrinsic::getType(ctx, id);
      auto module = std::make_unique<llvm::Module>("matrix", ctx);
      // Operands come in as kernel arguments; MFMA's trailing cbsz/abid/blgp are 0.
      unsigned operands = fnType->getNumParams() - (instr.kind == MatrixCore::Mfma ? 3 : 0);
      std::vector<llvm::Type *> params(fnType->param_begin(), fnType->param_begin() + operands);
      params.push_back(llvm::PointerType::get(ctx, 1));
      auto *kernel = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false),
                                            llvm::Function::ExternalLinkage, "matrix", module.get());
      kernel->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", kernel));
      std::vector<llvm::Value *> args;
      for (unsigned i = 0; i < fnType->getNumParams(); ++i)
        args.push_back(i < operands ? static_cast<llvm::Value *>(kernel->getArg(i))
                                    : llvm::ConstantInt::get(fnType->getParamType(i), 0));
      llvm::Value *d = b.CreateCall(llvm::Intrinsic::getOrInsertDeclaration(module.get(), id), args);
      b.CreateStore(d, kernel->getArg(operands));
      b.CreateRetVoid();
      configureModuleForTarget(*module, target);
      AmdgpuCode code = generateAmdgpuCode(*module, target);
      const std::string assembly = generateAmdgpuAssembly(*module, target);
      // "llvm.amdgcn.mfma.f32.32x32x8f16" -> "v_mfma_f32_32x32x8"
      std::string mnemonic = std::string("v_") + (instr.intrinsic + std::strlen("llvm.amdgcn."));
      for (char &c : mnemonic)
        if (c == '.')
          c = '_';
      mnemonic = mnemonic.substr(0, mnemonic.find("x", mnemonic.find("x") + 1) + 2);
      CHECK(assembly.find(mnemonic) != std::string::npos);
    }
  }
}

// gfx950's f8f6f4 rows name LLVM's scaled intrinsic (overloaded on the
// operands' vector types, so skipped above): with the zero scales the dot
// lowering passes, it compiles to the unscaled instruction, the formats in
// its cbsz (A) and blgp (B) fields.
TEST_CASE("gfx950's f8f6f4 intrinsic with zero scales compiles to the unscaled MFMA, formats in cbsz and blgp") {
  const TargetFacts &target = requireTarget("gfx950");
  for (const MatrixInstr &instr : target.matrixInstrs) {
    if (!instr.formatOperands)
      continue;
    CAPTURE(instr.intrinsic);
    const std::string acc = instr.m == 32 ? "<16 x float>" : "<4 x float>";
    const std::string name = std::string(instr.intrinsic) + ".v8i32.v8i32";
    const std::string ir = "define amdgpu_kernel void @k(<8 x i32> %a, <8 x i32> %b, " + acc +
                           " %c, ptr addrspace(1) %out) {\n"
                           "  %d = call " + acc + " @" + name + "(<8 x i32> %a, <8 x i32> %b, " + acc +
                           " %c, i32 1, i32 0, i32 0, i32 0, i32 0, i32 0)\n"
                           "  store " + acc + " %d, ptr addrspace(1) %out\n  ret void\n}\n"
                           "declare " + acc + " @" + name + "(<8 x i32>, <8 x i32>, " + acc +
                           ", i32, i32, i32, i32, i32, i32)\n";
    llvm::LLVMContext context;
    auto module = parse(ir.c_str(), context);
    configureModuleForTarget(*module, target);
    const std::string assembly = generateAmdgpuAssembly(*module, target);
    const std::string mnemonic = "v_mfma_f32_" + std::to_string(instr.m) + "x" + std::to_string(instr.n) + "x" +
                                 std::to_string(instr.k) + "_f8f6f4";
    CHECK(contains(assembly, mnemonic.c_str()));
    CHECK(contains(assembly, "cbsz:1"));
    CHECK_FALSE(contains(assembly, "blgp:"));
    CHECK_FALSE(contains(assembly, "v_mfma_scale"));
  }
}
