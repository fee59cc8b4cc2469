// Test IR text parsed into a module (a parse error fails the test case with
// LLVM's message and the text), and how often a needle occurs in the
// assembly a test compiled.
#pragma once

#include <doctest/doctest.h>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <string>

namespace tessel::testing {

inline std::unique_ptr<llvm::Module> parseIR(const std::string &text, llvm::LLVMContext &context) {
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(text, diagnostic, context);
  if (!module) {
    std::string message;
    llvm::raw_string_ostream stream(message);
    diagnostic.print("test", stream);
    FAIL("test IR does not parse: " << message << "\n" << text);
  }
  return module;
}

inline size_t countOf(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

} // namespace tessel::testing
