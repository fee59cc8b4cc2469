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

const std::string &CompiledKernel::assembly() const {
  if (!assembly_)
    throw Error("kernel '" + name + "' has no assembly and no way to make it");
  LazyAssembly &lazy = *assembly_;
  std::call_once(lazy.once, [&] {
    if (lazy.made)
      return;
    if (!lazy.source)
      throw Error("kernel '" + name + "' has no assembly and no way to make it");
    lazy.text = lazy.source(*this);
    lazy.made = true;
  });
  return lazy.text;
}

bool CompiledKernel::hasAssembly() const { return assembly_ && assembly_->made; }

void CompiledKernel::setAssembly(std::string text) {
  assembly_ = std::make_shared<LazyAssembly>();
  assembly_->text = std::move(text);
  assembly_->made = true;
}

void CompiledKernel::setAssemblySource(AssemblySource source) {
  assembly_ = std::make_shared<LazyAssembly>();
  assembly_->source = std::move(source);
}

} // namespace tessel
