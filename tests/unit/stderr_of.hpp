// What a piece of test code writes to standard output or error.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

namespace tessel::testing {

// What `run()` writes to file descriptor `fd` (1 or 2), through `file`, so
// a C library's and the compiler's writes to it are caught too. `run` must
// not throw.
template <class Fn> std::string outputOf(int fd, const std::string &file, Fn run) {
  std::FILE *stream = fd == 1 ? stdout : stderr;
  std::fflush(stream);
  int saved = dup(fd);
  FILE *out = std::fopen(file.c_str(), "w");
  REQUIRE(out != nullptr);
  dup2(fileno(out), fd);
  run();
  std::fflush(stream);
  dup2(saved, fd);
  close(saved);
  std::fclose(out);
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// What `run()` writes to standard error.
template <class Fn> std::string stderrOf(const std::string &file, Fn run) { return outputOf(2, file, run); }

} // namespace tessel::testing
