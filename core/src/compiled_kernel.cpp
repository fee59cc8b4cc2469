#include "tessel/core/compiled_kernel.hpp"

#include <cstdio>

namespace tessel {

std::string describeStages(const CompileTimes &t) {
  const std::pair<const char *, double> stages[] = {
      {"trace", t.trace},         {"context", t.context},   {"import", t.import},
      {"passes", t.passes},       {"translate", t.translate}, {"optimize", t.optimize},
      {"codegen", t.codegen},     {"assembly", t.assembly}, {"link", t.link},
  };
  std::string out;
  for (const auto &[name, ms] : stages) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%s%s %.2f", out.empty() ? "" : ", ", name, ms);
    out += buffer;
  }
  return out + " ms";
}

} // namespace tessel
