// What a piece of test code writes to standard error.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

namespace tessel::testing {

// What `run()` writes to standard error (through `file`, so a C library's
// and the compiler's writes to fd 2 are caught too). `run` must not throw.
template <class Fn> std::string stderrOf(const std::string &file, Fn run) {
  std::fflush(stderr);
  int saved = dup(2);
  FILE *out = std::fopen(file.c_str(), "w");
  REQUIRE(out != nullptr);
  dup2(fileno(out), 2);
  run();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::fclose(out);
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace tessel::testing
