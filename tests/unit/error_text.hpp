// What a tessel::Error must never say: text from MLIR (its verifier, its
// conversion framework, its types) or LLVM, or an internal compiler error.
// tests/unit/main.cpp checks every tessel::Error any test throws against it.
#pragma once

#include <regex>
#include <string>

namespace tessel_test {

// The compiler-internal text in `message`, or "" when there is none.
inline std::string compilerTextIn(const std::string &message) {
  static const std::regex internal(
      // MLIR's diagnostics about an op ("'arith.select' op failed to verify ...")
      R"('[a-z_]+\.[a-z0-9_.]+' op )"
      R"(|failed to verify|failed to legalize|see current operation|custom op ')"
      // MLIR types and attributes, LLVM IR and its fatal errors
      R"(|tensor<|vector<|memref<|!llvm\.|!tessel\.|#tessel\.|LLVM ERROR|%[0-9]+ = )"
      // a compile that failed on a bug (Compile.cpp's DiagnosticCollector)
      R"(|internal compiler error)");
  std::smatch m;
  return std::regex_search(message, m, internal) ? m.str() : std::string();
}

// Set while a test throws an error with such text on purpose; each such
// error thrown then is counted instead of failing the test.
inline thread_local bool allowCompilerText = false;
inline thread_local int compilerTextAllowed = 0;

// allowCompilerText for one scope (a test that fails early leaves it off).
struct AllowCompilerText {
  AllowCompilerText() { allowCompilerText = true; }
  ~AllowCompilerText() { allowCompilerText = false; }
};

} // namespace tessel_test
