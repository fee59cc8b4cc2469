// A first launch in a hostile process environment: no usable temporary
// directory, a small file-size limit (`ulimit -f`). Each runs tutorial 01
// (vector add on the emulator) in a new process, so that nothing this test
// process made (a compiled kernel, a directory, a cache) is reused: the
// compile, the link and the cache write all happen under the condition.
#include "e2e_common.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct TutorialRun {
  int exitCode = -1;  // -signal when a signal ended the process
  std::string output; // standard output and error
};

// `environment`: "NAME=value" sets a variable, "NAME" unsets it.
// `fileSizeLimit`: bytes (RLIMIT_FSIZE), set in the forked child before it
// runs the tutorial, so this process stays unlimited; 0 for none.
TutorialRun runTutorial(const std::vector<std::string> &environment, rlim_t fileSizeLimit = 0) {
  auto nameOf = [](const std::string &entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> entries;
  for (char **entry = environ; *entry; ++entry)
    if (std::none_of(environment.begin(), environment.end(),
                     [&](const std::string &change) { return nameOf(change) == nameOf(*entry); }))
      entries.push_back(*entry);
  for (const std::string &change : environment)
    if (change.find('=') != std::string::npos)
      entries.push_back(change);
  std::vector<char *> envp;
  for (std::string &entry : entries)
    envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string program = TESSEL_TUTORIAL_VECTOR_ADD;
  char *argv[] = {program.data(), nullptr};

  int output[2];
  REQUIRE(::pipe(output) == 0);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) { // async-signal-safe calls only: this process has threads
    ::dup2(output[1], 1);
    ::dup2(output[1], 2);
    ::close(output[0]);
    ::close(output[1]);
    struct rlimit limit = {fileSizeLimit, fileSizeLimit};
    if (fileSizeLimit != 0 && ::setrlimit(RLIMIT_FSIZE, &limit) != 0)
      ::_exit(120);
    ::execve(argv[0], argv, envp.data());
    ::_exit(127);
  }
  ::close(output[1]);
  TutorialRun run;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(output[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    run.output.append(buffer, size_t(n));
  }
  ::close(output[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return run;
}

// An empty directory of this test's own under the suite's cache directory.
std::string freshDirectory(const std::string &name) {
  const char *suite = std::getenv("TESSEL_CACHE_DIR");
  REQUIRE(suite != nullptr);
  std::filesystem::path dir = std::filesystem::path(suite) / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

} // namespace

// lld links in memory: $TMPDIR is never used. The cache directory, derived
// from $TMPDIR when no other is named, cannot be made there: new kernels
// stay in memory, with the warning. A path under a regular file fails for
// root too. (Before, lld's files needed a directory in $TMPDIR and every
// compile failed.)
TEST_CASE("with TMPDIR under a regular file a kernel compiles and runs; the cache there falls back to memory") {
  const std::string tmpdir = std::string(TESSEL_TUTORIAL_VECTOR_ADD) + "/tmp";
  TutorialRun run = runTutorial({"TMPDIR=" + tmpdir, "TESSEL_CACHE_DIR", "XDG_CACHE_HOME", "HOME"});
  CAPTURE(run.output);
  CHECK(run.exitCode == 0);
  CHECK(e2e::contains(run.output, "matches the host (0 wrong)"));
  CHECK(e2e::contains(run.output, "kernels compiled: 1,"));
  CHECK(e2e::contains(run.output, "tessel: warning: cannot write the kernel cache in " + tmpdir +
                                      "/tessel-cache (Not a directory); keeping new kernels in memory\n"));
}

// A file-size limit smaller than the object lld links and than the cache's
// files: the link goes through pipes and the cache write fails with EFBIG,
// its SIGXFSZ consumed. (Before, SIGXFSZ ended the process at the link.)
TEST_CASE("under a 1000-byte file-size limit a kernel compiles and runs, the cache warns, no SIGXFSZ") {
  const std::string cache = freshDirectory("file-size-limit");
  TutorialRun run = runTutorial({"TESSEL_CACHE_DIR=" + cache}, 1000);
  CAPTURE(run.output);
  CHECK(run.exitCode == 0); // -25 when SIGXFSZ ended it
  CHECK(e2e::contains(run.output, "matches the host (0 wrong)"));
  CHECK(e2e::contains(run.output, "kernels compiled: 1,"));
  CHECK(e2e::contains(run.output, "tessel: warning: cannot write the kernel cache in " + cache +
                                      " (writing an entry failed); keeping new kernels in memory\n"));
  // Nothing half-written stays behind.
  CHECK(std::filesystem::is_empty(cache));
}
