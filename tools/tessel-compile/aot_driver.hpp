// tessel-compile's driver: the command line, the compiles and the generated
// launcher (a C++ header + source that load and launch the code objects
// through HIP). Used by compile_main.cpp (a generator's main) and the tests.
#pragma once

#include "tessel/core/compiled_kernel.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessel::aot {

struct DriverOptions {
  bool list = false;                                        // --list: print the registered kernels
  std::string kernel;                                       // --kernel
  std::vector<std::pair<std::string, std::string>> constants; // --const NAME=VALUE
  std::vector<std::string> specs;                           // --spec (repeatable); none: one unspecialized
  std::vector<std::string> archs;                           // --arch a,b (default gfx942)
  unsigned numWarps = 4;                                    // --num-warps
  unsigned numStages = 1;                                   // --num-stages
  unsigned codeObjectVersion = 5;                           // --code-object-version
  bool fastMath = false;                                    // --fast-math
  bool fpFusion = false;                                    // --fp-fusion
  unsigned wavesPerEu = 0;                                  // --waves-per-eu
  std::string name;                                         // --name: the launcher (default: the kernel's)
  std::string nameSpace = "tessel_aot";                     // --namespace
  std::string outDir;                                       // -o DIR
};

// The usage text (--help).
std::string usage(const std::string &program);
// Throws tessel::Error naming the bad argument.
DriverOptions parseArguments(const std::vector<std::string> &args);

struct GeneratedFile {
  std::string name;            // relative to the output directory
  std::vector<uint8_t> bytes;
};

// Compiles every (arch, spec) variant of the chosen kernel and generates its
// launcher: <name>.hpp, <name>.cpp and one <name>.<arch>.<spec>.hsaco per
// variant. Throws tessel::Error for a bad kernel, constant or specialization.
std::vector<GeneratedFile> generate(const DriverOptions &options);

// --list's text: each registered kernel with its parameters.
std::string listKernels();

// The whole tool: parse, generate, write; errors to stderr. Returns the exit code.
int compileMain(int argc, char **argv);

} // namespace tessel::aot
