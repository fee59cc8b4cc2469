// tessel-compile: compiles registered kernels ahead of time and writes a
// launcher for them. The launcher is plain C++ against HIP's runtime API: it
// embeds the code objects, picks the one for the current device's arch and
// for the most specialized variant the call's arguments satisfy, loads it on
// first use per device and launches it with the kernarg bytes tessel's ABI
// lays out (core/kernarg.hpp) -- what Kernel::launch does, without the JIT.
#include "aot_driver.hpp"

#include "tessel/aot.hpp"
#include "tessel/core/error.hpp"
#include "tessel/core/kernarg.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/lowering/target.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace tessel::aot {

namespace {

// Specialization bits of one runtime argument, as the launcher computes them.
enum : unsigned { kOne = 1, kDiv16 = 2, kAligned16 = 4 };

std::vector<std::string> splitList(const std::string &text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator))
    parts.push_back(part);
  if (!text.empty() && text.back() == separator)
    parts.push_back("");
  return parts;
}

unsigned parseUnsigned(const std::string &flag, const std::string &text) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw Error(flag + " takes a positive integer, not '" + text + "'");
  return v;
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

const KernelEntry &findKernel(const std::string &name) {
  std::string known;
  const KernelEntry *found = nullptr;
  for (const KernelEntry &k : registeredKernels()) {
    if (k.name == name) {
      if (found)
        throw Error("kernel '" + name + "' is registered twice (TESSEL_AOT_KERNEL at " + found->where.file + ":" +
                    std::to_string(found->where.line) + " and " + k.where.file + ":" + std::to_string(k.where.line) +
                    ")");
      found = &k;
    }
    known += (known.empty() ? "" : ", ") + k.name;
  }
  if (!found)
    throw Error("no kernel '" + name + "' is registered" +
                (known.empty() ? std::string(" (this program registers none: TESSEL_AOT_KERNEL(fn))")
                               : " (registered: " + known + ")"));
  if (found->namesGiven != 0 && found->namesGiven != found->params.size())
    throw Error(std::string(found->where.file) + ":" + std::to_string(found->where.line) + ": TESSEL_AOT_KERNEL(" +
                name + ", ...) names " + std::to_string(found->namesGiven) + " parameters; " + name + " has " +
                std::to_string(found->params.size()));
  return *found;
}

// A runtime parameter's name becomes a launcher parameter: it must be an
// identifier that is not a keyword, the launcher's own grid or stream, or
// tessel_-prefixed (the launcher's locals).
void checkParameterName(const KernelEntry &k, const std::string &name) {
  static const std::set<std::string> reserved = {
      "grid", "stream", "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char",
      "class", "const", "constexpr", "continue", "default", "delete", "do", "double", "else", "enum", "explicit",
      "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "namespace", "new",
      "not", "nullptr", "operator", "or", "private", "protected", "public", "register", "return", "short",
      "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw", "true", "try", "typedef",
      "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while", "xor", "std",
      "decltype", "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "noexcept", "mutable",
      "thread_local", "static_assert", "typeid", "export", "requires", "concept", "consteval", "constinit",
      "co_await", "co_yield", "co_return", "char8_t", "char16_t", "char32_t", "wchar_t", "bitand", "bitor",
      "compl", "not_eq", "and_eq", "or_eq", "xor_eq", "int8_t", "int16_t", "int32_t", "int64_t", "dim3",
      "hipStream_t", "hipError_t"};
  const bool reservedForm = name.starts_with("__") || (name.size() > 1 && name[0] == '_' && std::isupper(
                                                                  static_cast<unsigned char>(name[1])));
  if (!isIdentifier(name) || reserved.count(name) || name.starts_with("tessel_") || reservedForm)
    throw Error(std::string(k.where.file) + ":" + std::to_string(k.where.line) + ": " + k.name +
                "'s parameter name '" + name + "' cannot name a launcher parameter (a C++ identifier, not a " +
                "keyword, grid, stream or tessel_...); rename it in TESSEL_AOT_KERNEL");
}

// The C++ type a launcher parameter has for a runtime argument.
std::string cppType(const KernelEntry &k, const Parameter &p) {
  auto scalar = [&](DType t) -> std::string {
    switch (t) {
    case DType::I1: return "bool";
    case DType::I8: return "int8_t";
    case DType::I16: return "int16_t";
    case DType::I32: return "int32_t";
    case DType::I64: return "int64_t";
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3FN:
    case DType::F8E5M2:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2FNUZ: return "";
    }
    return "";
  };
  if (p.arg.kind == TraceArg::Pointer) {
    std::string t = scalar(p.arg.dtype);
    return t.empty() ? "const void *" : "const " + t + " *"; // 16- and 8-bit floats: their bits, untyped
  }
  std::string t = scalar(p.arg.dtype);
  if (t.empty())
    throw Error(k.name + ": parameter '" + p.name + "' is a " + dtypeName(p.arg.dtype) +
                " scalar, which tessel-compile's launchers do not take (pass it as f32 and cast in the kernel)");
  return t;
}

// One runtime argument's required bits from a --spec token.
unsigned specBits(const KernelEntry &k, const Parameter &p, const std::string &token, const std::string &spec) {
  auto bad = [&](const std::string &why) {
    return Error("--spec " + spec + ": '" + token + "' for " + k.name + "'s parameter '" + p.name + "' (" +
                 (p.arg.kind == TraceArg::Pointer ? "Ptr<" + std::string(dtypeName(p.arg.dtype)) + ">"
                                                  : std::string(dtypeName(p.arg.dtype))) +
                 "): " + why);
  };
  if (token == "x" || token == "-")
    return 0;
  if (p.arg.dtype == DType::I1 && p.arg.kind != TraceArg::Pointer)
    throw bad("a bool argument takes only x (no specialization)");
  if (token == "16") {
    if (p.arg.kind == TraceArg::Float)
      throw bad("a float argument takes only x (no specialization)");
    return p.arg.kind == TraceArg::Pointer ? kAligned16 : kDiv16;
  }
  if (token == "1") {
    if (p.arg.kind != TraceArg::Int)
      throw bad("only integer arguments specialize on equalling 1");
    return kOne;
  }
  throw bad("a specialization is 16 (a pointer aligned to 16 bytes, an integer divisible by 16), 1 (an integer "
            "equal to 1) or x (nothing)");
}

struct Variant {
  std::string arch;
  std::string specText;           // "16,16,16,x"
  std::vector<unsigned> required; // per runtime argument
  CompiledKernel compiled;
  std::string file;               // its code object's file name
  size_t order = 0;               // in the order given (arch, then spec)
};

std::string hexBytes(const std::vector<uint8_t> &bytes) {
  std::string out;
  char buf[8];
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%u,", unsigned(bytes[i]));
    out += buf;
    if (i % 24 == 23)
      out += "\n";
  }
  return out;
}

} // namespace

std::string usage(const std::string &program) {
  return "usage: " + program + " --kernel NAME [options] -o DIR\n"
         "       " + program + " --list\n"
         "Compiles a kernel this program registers (TESSEL_AOT_KERNEL) ahead of time into code objects and\n"
         "a C++ launcher (DIR/NAME.hpp, DIR/NAME.cpp) that loads and launches them through HIP.\n"
         "  --kernel NAME           the registered kernel\n"
         "  --const NAME=VALUE      a trace-time constant (every Const parameter, once)\n"
         "  --spec S,S,...          one variant: per runtime parameter 16 (pointer aligned to 16 bytes,\n"
         "                          integer divisible by 16), 1 (integer equal to 1) or x (nothing);\n"
         "                          repeat for more variants (default: one variant of all x)\n"
         "  --arch A,B,...          targets (gfx90a, gfx942, gfx950, gfx1100; default gfx942)\n"
         "  --num-warps N           waves per workgroup (default 4)\n"
         "  --num-stages N          software pipelining of dot operand loads (default 1)\n"
         "  --fast-math             LaunchOptions::fast_math\n"
         "  --fp-fusion             LaunchOptions::fp_fusion\n"
         "  --waves-per-eu N        LaunchOptions::waves_per_eu (default 0: no request)\n"
         "  --code-object-version N AMDGPU code object version (default 5; 4 for ROCm 5)\n"
         "  --name NAME             the launcher's name (default: the kernel's)\n"
         "  --namespace NS          the launcher's namespace (default tessel_aot)\n"
         "  -o DIR                  the output directory (made if missing)\n";
}

DriverOptions parseArguments(const std::vector<std::string> &args) {
  DriverOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&]() -> const std::string & {
      if (i + 1 >= args.size())
        throw Error(a + " needs a value");
      return args[++i];
    };
    if (a == "--list") o.list = true;
    else if (a == "--kernel") o.kernel = value();
    else if (a == "--const") {
      const std::string &v = value();
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        throw Error("--const takes NAME=VALUE, not '" + v + "'");
      o.constants.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--spec") o.specs.push_back(value());
    else if (a == "--arch") {
      for (const std::string &arch : splitList(value(), ','))
        o.archs.push_back(arch);
    } else if (a == "--num-warps") o.numWarps = parseUnsigned(a, value());
    else if (a == "--num-stages") o.numStages = parseUnsigned(a, value());
    else if (a == "--code-object-version") o.codeObjectVersion = parseUnsigned(a, value());
    else if (a == "--fast-math") o.fastMath = true;
    else if (a == "--fp-fusion") o.fpFusion = true;
    else if (a == "--waves-per-eu") o.wavesPerEu = parseUnsigned(a, value());
    else if (a == "--name") o.name = value();
    else if (a == "--namespace") o.nameSpace = value();
    else if (a == "-o") o.outDir = value();
    else throw Error("unknown argument '" + a + "' (--help lists them)");
  }
  if (o.list)
    return o;
  if (o.kernel.empty())
    throw Error("--kernel NAME is required (--list shows the registered kernels)");
  if (o.outDir.empty())
    throw Error("-o DIR is required");
  if (o.archs.empty())
    o.archs.push_back("gfx942");
  for (const std::string &arch : o.archs)
    requireTarget(arch); // an Error listing the targets
  if (o.name.empty())
    o.name = o.kernel;
  if (!isIdentifier(o.name) || o.name.starts_with("tessel_") || o.name.starts_with("__"))
    throw Error("--name '" + o.name + "' is not a C++ identifier of its own (nor tessel_... or __...)");
  {
    bool good = !o.nameSpace.empty();
    std::string rest = o.nameSpace;
    for (size_t at; good && (at = rest.find("::")) != std::string::npos; rest = rest.substr(at + 2))
      good = isIdentifier(rest.substr(0, at));
    if (!good || !isIdentifier(rest))
      throw Error("--namespace '" + o.nameSpace + "' is not a C++ namespace name (a::b)");
  }
  if (o.numWarps == 0 || o.numWarps > 16)
    throw Error("--num-warps " + std::to_string(o.numWarps) + ": between 1 and 16");
  if (o.codeObjectVersion < 4 || o.codeObjectVersion > 6)
    throw Error("--code-object-version " + std::to_string(o.codeObjectVersion) + ": 4, 5 or 6");
  return o;
}

std::string listKernels() {
  std::string out;
  for (const KernelEntry &k : registeredKernels()) {
    out += k.name + "(";
    for (size_t i = 0; i < k.params.size(); ++i) {
      const Parameter &p = k.params[i];
      out += (i ? ", " : "");
      if (!p.runtime) out += "Const<" + p.constType + "> ";
      else if (p.arg.kind == TraceArg::Pointer) out += "Ptr<" + std::string(dtypeName(p.arg.dtype)) + "> ";
      else out += std::string(dtypeName(p.arg.dtype)) + " ";
      out += p.name;
    }
    out += ")\n";
  }
  return out;
}

std::vector<GeneratedFile> generate(const DriverOptions &o) {
  const KernelEntry &k = findKernel(o.kernel);

  // The constants, in Const-parameter order.
  std::vector<std::string> constants;
  std::set<std::string> used;
  std::string constSummary;
  for (const Parameter &p : k.params) {
    if (p.runtime)
      continue;
    auto it = std::find_if(o.constants.begin(), o.constants.end(), [&](const auto &c) { return c.first == p.name; });
    if (it == o.constants.end())
      throw Error(k.name + ": no value for the constant '" + p.name + "' (Const<" + p.constType + ">): --const " +
                  p.name + "=VALUE");
    if (!used.insert(p.name).second)
      throw Error("--const " + p.name + " given twice");
    constants.push_back(it->second);
    constSummary += (constSummary.empty() ? "" : ", ") + p.name + " = " + it->second;
  }
  for (const auto &[name, value] : o.constants)
    if (!used.count(name))
      throw Error("--const " + name + "=" + value + ": " + k.name + " has no Const parameter '" + name + "'");
  for (size_t i = 0; i < k.params.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (k.params[i].name == k.params[j].name)
        throw Error(std::string(k.where.file) + ":" + std::to_string(k.where.line) + ": " + k.name +
                    " names two parameters '" + k.params[i].name + "'");
  std::vector<const Parameter *> runtime;
  for (const Parameter &p : k.params)
    if (p.runtime) {
      runtime.push_back(&p);
      checkParameterName(k, p.name);
    }

  // The variants: every arch x every spec.
  std::vector<std::string> specs = o.specs;
  if (specs.empty())
    specs.push_back(std::string(runtime.empty() ? "" : "x") + [&] {
      std::string rest;
      for (size_t i = 1; i < runtime.size(); ++i) rest += ",x";
      return rest;
    }());
  std::vector<Variant> variants;
  for (const std::string &arch : o.archs) {
    for (const std::string &spec : specs) {
      std::vector<std::string> tokens = runtime.empty() && spec.empty() ? std::vector<std::string>{} : splitList(spec, ',');
      if (tokens.size() != runtime.size())
        throw Error("--spec " + spec + ": " + std::to_string(tokens.size()) + " entries for " + k.name + "'s " +
                    std::to_string(runtime.size()) + " runtime parameters");
      Variant v;
      v.arch = arch;
      v.specText = spec;
      Specialization s;
      std::string symbol = o.name + "_";
      for (size_t r = 0; r < runtime.size(); ++r) {
        unsigned bits = specBits(k, *runtime[r], tokens[r], spec);
        v.required.push_back(bits);
        s.args.push_back({.equalsOne = (bits & kOne) != 0,
                          .divisibleBy16 = (bits & kDiv16) != 0,
                          .aligned16 = (bits & kAligned16) != 0});
        symbol += "_" + std::string(bits & kOne ? "1" : bits ? "16" : "x");
      }
      if (runtime.empty())
        symbol += "_none";
      for (const Variant &other : variants)
        if (other.arch == arch && other.required == v.required)
          throw Error("--spec " + spec + " is given twice");
      tessel::detail::TraceRequest request = k.trace(s, constants);
      request.trace.kernelName = symbol; // each variant's code object names its specialization
      v.compiled = compileTrace(request.trace, request.spec,
                                CompileOptions{.arch = arch,
                                               .numWarps = o.numWarps,
                                               .codeObjectVersion = o.codeObjectVersion,
                                               .numStages = o.numStages,
                                               .fastMath = o.fastMath,
                                               .fpFusion = o.fpFusion,
                                               .wavesPerEu = o.wavesPerEu});
      v.file = o.name + "." + arch + "." + symbol.substr(o.name.size() + 2) + ".hsaco";
      variants.push_back(std::move(v));
    }
  }
  // Most specialized first, so the launcher takes the first that fits.
  // (std::sort on (bits, order): libstdc++'s stable_sort warns under clang 22.)
  for (size_t i = 0; i < variants.size(); ++i) variants[i].order = i;
  std::sort(variants.begin(), variants.end(), [](const Variant &a, const Variant &b) {
    auto count = [](const Variant &v) {
      int n = 0;
      for (unsigned bits : v.required) n += std::popcount(bits);
      return n;
    };
    return count(a) != count(b) ? count(a) > count(b) : a.order < b.order;
  });

  // ---- the header ----
  std::string params, args;
  for (const Parameter *p : runtime) {
    params += ", " + cppType(k, *p) + (cppType(k, *p).ends_with("*") ? "" : " ") + p->name;
  }
  std::string archList, specList;
  for (const std::string &a : o.archs) archList += (archList.empty() ? "" : ", ") + a;
  for (const std::string &s : specs) specList += (specList.empty() ? "(" : "), (") + s;
  specList += ")";
  const KernargLayout layout = variants.front().compiled.kernargs;
  std::ostringstream h;
  h << "// Generated by tessel-compile (tessel " << compilerIdentity() << "). Do not edit.\n"
    << "// " << k.name << " with " << (constSummary.empty() ? "no constants" : constSummary) << ", " << o.numWarps
    << " warps" << (o.fastMath ? ", fast math" : "") << (o.fpFusion ? ", fp fusion" : "")
    << (o.wavesPerEu ? ", waves_per_eu " + std::to_string(o.wavesPerEu) : "") << "; for " << archList << "; specializations " << specList
    << ".\n"
    << "#pragma once\n\n"
    << "#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_NVIDIA__)\n"
    << "#define __HIP_PLATFORM_AMD__\n"
    << "#endif\n"
    << "#include <hip/hip_runtime_api.h>\n\n"
    << "#include <cstdint>\n\n"
    << "namespace " << o.nameSpace << " {\n\n"
    << "// Launches " << k.name << " over `grid` workgroups on `stream` (null: the current device's null\n"
    << "// stream; otherwise a stream of the current device). Takes the code object compiled for the current\n"
    << "// device's arch and the most specialized variant the arguments satisfy, loading it on first use.\n"
    << "// Returns hipErrorNoBinaryForGpu when none was compiled for the device's arch, hipErrorInvalidValue\n"
    << "// when no compiled specialization fits the arguments, else what HIP returns.\n"
    << "hipError_t " << o.name << "(dim3 grid, hipStream_t stream" << params << ");\n\n"
    << "// Unloads every module " << o.name << " loaded (on any device); the next launch loads again.\n"
    << "hipError_t " << o.name << "_unload();\n\n"
    << "} // namespace " << o.nameSpace << "\n";

  // ---- the source ----
  std::ostringstream c;
  c << "// Generated by tessel-compile (tessel " << compilerIdentity() << "). Do not edit.\n"
    << "#include \"" << o.name << ".hpp\"\n\n"
    << "#include <cstring>\n#include <map>\n#include <mutex>\n#include <utility>\n\n"
    << "namespace {\n\n";
  for (size_t i = 0; i < variants.size(); ++i)
    c << "// " << variants[i].arch << ", specialization (" << variants[i].specText << "): "
      << variants[i].compiled.name << "\n"
      << "alignas(8) const unsigned char kImage" << i << "[] = {\n"
      << hexBytes(variants[i].compiled.hsaco) << "};\n\n";
  c << "struct Variant {\n"
    << "  const char *arch;\n  const unsigned char *image;\n  const char *symbol;\n  unsigned blockSize;\n"
    << "  unsigned required[" << std::max<size_t>(runtime.size(), 1) << "]; // per argument: 1 equals one, 2 divisible by 16, 4 aligned to 16\n"
    << "};\n"
    << "const Variant kVariants[] = {\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    c << "    {\"" << variants[i].arch << "\", kImage" << i << ", \"" << variants[i].compiled.name << "\", "
      << variants[i].compiled.blockSize << ", {";
    for (size_t r = 0; r < runtime.size(); ++r) c << (r ? ", " : "") << variants[i].required[r];
    if (runtime.empty()) c << "0";
    c << "}},\n";
  }
  c << "};\n"
    << "constexpr size_t kVariantCount = sizeof kVariants / sizeof kVariants[0];\n\n"
    << "// gcnArchName (\"gfx942:sramecc+:xnack-\") without its features. hipDeviceProp_t's layout differs\n"
    << "// between HIP versions: the properties go to a buffer larger than any, and the name is found by\n"
    << "// its text (as tessel's own runtime does), so a header of one version and a runtime of another agree.\n"
    << "hipError_t deviceArch(int device, char (&arch)[32]) {\n"
    << "  static unsigned char props[16384];\n"
    << "  std::memset(props, 0, sizeof props);\n"
    << "  hipError_t e = hipGetDeviceProperties(reinterpret_cast<hipDeviceProp_t *>(props), device);\n"
    << "  if (e != hipSuccess)\n    return e;\n"
    << "  for (size_t i = 0; i + 4 < sizeof props; ++i) {\n"
    << "    if ((i > 0 && props[i - 1] != 0) || std::memcmp(props + i, \"gfx\", 3) != 0)\n      continue;\n"
    << "    size_t end = i + 3;\n"
    << "    while (end < sizeof props && end - i < 31 &&\n"
    << "           ((props[end] >= '0' && props[end] <= '9') || (props[end] >= 'a' && props[end] <= 'z')))\n"
    << "      ++end;\n"
    << "    if (end > i + 3 && (props[end] == 0 || props[end] == ':')) {\n"
    << "      std::memcpy(arch, props + i, end - i);\n      arch[end - i] = 0;\n      return hipSuccess;\n    }\n"
    << "  }\n"
    << "  return hipErrorNoBinaryForGpu;\n"
    << "}\n\n"
    << "struct Loaded {\n  hipModule_t module = nullptr;\n  hipFunction_t function = nullptr;\n};\n"
    << "std::mutex gMutex; // guards the maps below\n"
    << "std::map<int, int> gArchVariant;                  // device -> its arch's first variant (-1: none)\n"
    << "std::map<std::pair<int, size_t>, Loaded> gLoaded;       // (device, variant) -> module\n\n"
    << "// Launches the variant for the current device that `actual` (each argument's bits) satisfies.\n"
    << "hipError_t tessel_launch_variant(dim3 grid, hipStream_t stream, const unsigned *actual, void *args,\n"
    << "                                 size_t argBytes) {\n"
    << "  int device = 0;\n"
    << "  if (hipError_t e = hipGetDevice(&device); e != hipSuccess)\n    return e;\n"
    << "  // Under the lock to the end: " << o.name << "_unload() cannot free the module mid-launch.\n"
    << "  std::lock_guard<std::mutex> lock(gMutex);\n"
    << "  auto known = gArchVariant.find(device);\n"
    << "  if (known == gArchVariant.end()) {\n"
    << "    char arch[32] = {};\n"
    << "    if (hipError_t e = deviceArch(device, arch); e != hipSuccess)\n      return e; // not kept: may pass later\n"
    << "    int first = -1;\n"
    << "    for (size_t i = 0; i < kVariantCount && first < 0; ++i)\n"
    << "      if (std::strcmp(kVariants[i].arch, arch) == 0)\n        first = int(i);\n"
    << "    known = gArchVariant.emplace(device, first).first;\n"
    << "  }\n"
    << "  if (known->second < 0)\n    return hipErrorNoBinaryForGpu;\n"
    << "  size_t chosen = kVariantCount;\n"
    << "  for (size_t i = size_t(known->second); i < kVariantCount && chosen == kVariantCount; ++i) {\n"
    << "    if (std::strcmp(kVariants[i].arch, kVariants[known->second].arch) != 0)\n      continue;\n"
    << "    bool fits = true;\n"
    << (runtime.empty() ? std::string("    (void)actual;\n")
                        : "    for (size_t r = 0; r < " + std::to_string(runtime.size()) + "; ++r)\n"
                          "      fits = fits && (kVariants[i].required[r] & ~actual[r]) == 0;\n")
    << "    if (fits)\n      chosen = i;\n"
    << "  }\n"
    << "  if (chosen == kVariantCount)\n    return hipErrorInvalidValue;\n"
    << "  Loaded &loaded = gLoaded[{device, chosen}];\n"
    << "  if (!loaded.function) {\n"
    << "    if (hipError_t e = hipModuleLoadData(&loaded.module, kVariants[chosen].image); e != hipSuccess)\n"
    << "      return e;\n"
    << "    if (hipError_t e = hipModuleGetFunction(&loaded.function, loaded.module, kVariants[chosen].symbol);\n"
    << "        e != hipSuccess) {\n"
    << "      (void)hipModuleUnload(loaded.module);\n      loaded = Loaded{};\n      return e;\n    }\n"
    << "  }\n"
    << "  void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &argBytes,\n"
    << "                   HIP_LAUNCH_PARAM_END};\n"
    << "  return hipModuleLaunchKernel(loaded.function, grid.x, grid.y, grid.z, kVariants[chosen].blockSize, 1, 1, 0,\n"
    << "                               stream, nullptr, extra);\n"
    << "}\n\n"
    << "} // namespace\n\n"
    // The user's names are in scope only here: every other name is tessel_-prefixed.
    << "hipError_t " << o.nameSpace << "::" << o.name << "(dim3 tessel_grid, hipStream_t tessel_stream" << params
    << ") {\n"
    << "  // Each argument's specialization bits, as Kernel::launch computes them.\n"
    << "  const unsigned tessel_actual[" << std::max<size_t>(runtime.size(), 1) << "] = {";
  for (size_t r = 0; r < runtime.size(); ++r) {
    const Parameter &p = *runtime[r];
    c << (r ? ",\n      " : "");
    if (p.arg.kind == TraceArg::Pointer)
      c << "reinterpret_cast<std::uintptr_t>(" << p.name << ") % 16 == 0 ? 4u : 0u";
    else if (p.arg.kind == TraceArg::Int && p.arg.dtype != DType::I1)
      c << "(" << p.name << " == 1 ? 1u : 0u) | (" << p.name << " % 16 == 0 ? 2u : 0u)";
    else
      c << "0u";
  }
  if (runtime.empty()) c << "0u";
  c << "};\n"
    << "  // The kernarg segment: each argument at its natural alignment, in order.\n"
    << "  alignas(16) unsigned char tessel_args[" << std::max<uint32_t>(layout.totalBytes, 1) << "] = {};\n";
  for (size_t r = 0; r < runtime.size(); ++r) {
    if (runtime[r]->arg.kind == TraceArg::Pointer)
      c << "  {\n    const std::uint64_t tessel_address = reinterpret_cast<std::uintptr_t>(" << runtime[r]->name << ");\n"
        << "    std::memcpy(tessel_args + " << layout.offsets[r] << ", &tessel_address, 8);\n  }\n";
    else
      c << "  std::memcpy(tessel_args + " << layout.offsets[r] << ", &" << runtime[r]->name << ", "
        << layout.sizes[r] << ");\n";
  }
  c << "  return tessel_launch_variant(tessel_grid, tessel_stream, tessel_actual, tessel_args, "
    << layout.totalBytes << ");\n"
    << "}\n\n"
    << "hipError_t " << o.nameSpace << "::" << o.name << "_unload() {\n"
    << "  std::lock_guard<std::mutex> lock(gMutex);\n"
    << "  hipError_t result = hipSuccess;\n"
    << "  for (auto &[key, loaded] : gLoaded)\n"
    << "    if (loaded.module)\n"
    << "      if (hipError_t e = hipModuleUnload(loaded.module); e != hipSuccess && result == hipSuccess)\n"
    << "        result = e;\n"
    << "  gLoaded.clear();\n"
    << "  return result;\n"
    << "}\n";

  std::vector<GeneratedFile> files;
  auto text = [](const std::string &s) { return std::vector<uint8_t>(s.begin(), s.end()); };
  files.push_back({o.name + ".hpp", text(h.str())});
  files.push_back({o.name + ".cpp", text(c.str())});
  for (const Variant &v : variants)
    files.push_back({v.file, v.compiled.hsaco});
  return files;
}

int compileMain(int argc, char **argv) {
  const std::string program = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "tessel-compile";
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  if (args.empty() || std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::cout << usage(program);
    return args.empty() ? 2 : 0;
  }
  try {
    DriverOptions options = parseArguments(args);
    if (options.list) {
      std::cout << listKernels();
      return 0;
    }
    std::vector<GeneratedFile> files = generate(options);
    std::filesystem::create_directories(options.outDir);
    for (const GeneratedFile &f : files) {
      const std::filesystem::path path = std::filesystem::path(options.outDir) / f.name;
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char *>(f.bytes.data()), std::streamsize(f.bytes.size()));
      if (!out)
        throw Error("could not write " + path.string());
    }
    return 0;
  } catch (const std::exception &e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}

} // namespace tessel::aot
