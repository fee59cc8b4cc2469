#include "tessel/core/compiled_kernel.hpp"

#include "tessel/core/error.hpp"

#include <cstdio>

namespace tessel {

std::string describeStages(const CompileTimes &t) {
  const std::pair<const char *, double> stages[] = {
      {"trace", t.trace},         {"context", t.context},   {"import", t.import},
      {"passes", t.passes},       {"translate", t.translate}, {"optimize", t.optimize},
      {"codegen", t.codegen},     {"link", t.link},
  };
  std::string out;
  for (const auto &[name, ms] : stages) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%s%s %.2f", out.empty() ? "" : ", ", name, ms);
    out += buffer;
  }
  return out + " ms";
}

std::string describeSlowestPasses(const CompileTimes &t) {
  std::string out;
  for (const CompileTimes::PassTime &p : t.slowestPasses) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, " %.2f", p.ms);
    out += (out.empty() ? "" : ", ") + p.pass + buffer;
  }
  return out + " ms";
}

const char *remarkKindName(RemarkKind kind) {
  switch (kind) {
  case RemarkKind::NarrowAccess: return "narrow-access";
  case RemarkKind::LdsInLoop: return "lds-in-loop";
  case RemarkKind::NotPipelined: return "not-pipelined";
  case RemarkKind::Spill: return "spill";
  case RemarkKind::Occupancy: return "occupancy";
  }
  return "remark";
}

std::string describeRemarks(const CompiledKernel &kernel) {
  std::string out = "tessel: remarks for kernel '" + kernel.name + "' on " + kernel.arch + ":\n";
  for (const Remark &r : kernel.remarks) {
    out += "  ";
    if (!r.file.empty())
      out += r.file + ":" + std::to_string(r.line) + ": ";
    out += std::string("remark: [") + remarkKindName(r.kind) + "] " + r.message + "\n";
  }
  return out;
}

const std::string &CompiledKernel::made(const std::shared_ptr<LazyText> &lazy, const CompiledKernel &kernel,
                                        const char *what) {
  if (!lazy)
    throw Error("kernel '" + kernel.name + "' has no " + what + " and no way to make it");
  std::call_once(lazy->once, [&] {
    if (lazy->made)
      return;
    if (!lazy->source)
      throw Error("kernel '" + kernel.name + "' has no " + what + " and no way to make it");
    lazy->text = lazy->source(kernel);
    lazy->made = true;
  });
  return lazy->text;
}

const std::string &CompiledKernel::llvmIR() const { return made(llvmIR_, *this, "LLVM IR text"); }
const std::string &CompiledKernel::assembly() const { return made(assembly_, *this, "assembly"); }

bool CompiledKernel::hasLlvmIR() const { return llvmIR_ && llvmIR_->made; }
bool CompiledKernel::hasAssembly() const { return assembly_ && assembly_->made; }

namespace {
template <class Lazy> std::shared_ptr<Lazy> madeText(std::string text) {
  auto lazy = std::make_shared<Lazy>();
  lazy->text = std::move(text);
  lazy->made = true;
  return lazy;
}
template <class Lazy, class Source> std::shared_ptr<Lazy> textFrom(Source source) {
  auto lazy = std::make_shared<Lazy>();
  lazy->source = std::move(source);
  return lazy;
}
} // namespace

void CompiledKernel::setLlvmIR(std::string text) { llvmIR_ = madeText<LazyText>(std::move(text)); }
void CompiledKernel::setAssembly(std::string text) { assembly_ = madeText<LazyText>(std::move(text)); }
void CompiledKernel::setLlvmIRSource(TextSource source) { llvmIR_ = textFrom<LazyText>(std::move(source)); }
void CompiledKernel::setAssemblySource(TextSource source) {
  assembly_ = textFrom<LazyText>(std::move(source));
}

} // namespace tessel
