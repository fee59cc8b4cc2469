// lld links in memory (lld_link.cpp): the object in a memfd, or a pipe when a
// file-size limit refuses it; the code object through a pipe, made large
// enough, or emptied by a pump thread while lld writes where it cannot be.
// No temporary directory, no SIGXFSZ.
#include "tessel/lowering/amdgpu_codegen.hpp"
#include "tessel/lowering/target.hpp"
#include "tessel/core/error.hpp"

#include <doctest/doctest.h>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tessel;

namespace {

// out[0] = table[i] from a constant table of `entries` distinct 32-bit
// values: the object and the code object hold the table (4 bytes an entry).
std::unique_ptr<llvm::Module> tableKernel(llvm::LLVMContext &context, size_t entries) {
  auto module = std::make_unique<llvm::Module>("table", context);
  std::vector<uint32_t> values(entries);
  for (size_t i = 0; i < entries; ++i)
    values[i] = uint32_t(i * 2654435761u);
  llvm::Constant *init = llvm::ConstantDataArray::get(context, values);
  auto *table = new llvm::GlobalVariable(*module, init->getType(), /*isConstant=*/true,
                                         llvm::GlobalValue::InternalLinkage, init, "table", nullptr,
                                         llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/4);
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                                       {llvm::PointerType::get(context, 1), i32}, false);
  auto *kernel = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "lookup", *module);
  kernel->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", kernel));
  llvm::Value *index = b.CreateZExt(kernel->getArg(1), b.getInt64Ty());
  llvm::Value *element = b.CreateInBoundsGEP(init->getType(), table, {b.getInt64(0), index});
  b.CreateStore(b.CreateLoad(i32, element), kernel->getArg(0));
  b.CreateRetVoid();
  return module;
}

std::vector<uint8_t> link(size_t entries) {
  const TargetFacts &target = requireTarget("gfx942");
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = tableKernel(context, entries);
  configureModuleForTarget(*module, target);
  return generateAmdgpuCode(std::move(module), target).hsaco;
}

// The exit status of `body` run in a forked child (a link there leaves this
// process's state alone); -signal when a signal ended it.
int inChild(const std::function<int()> &body) {
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int status = 99;
    try {
      status = body();
    } catch (...) {
      status = 98;
    }
    std::exit(status); // runs the exit handlers, as a child's normal end does
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

constexpr size_t kSmall = 16;          // a code object of a few KiB
constexpr size_t kLarge = 48 * 1024;  // 192 KiB of table: more than a pipe holds at first
constexpr size_t kHuge = 320 * 1024;  // 1.25 MiB: more than a user's pipe can be made to hold

// Makes this (forked) process an unprivileged user's, whose pipes hold at
// most /proc/sys/fs/pipe-max-size (1 MiB); false when it cannot.
bool becomeUnprivileged() {
  if (::geteuid() != 0)
    return true;
  return ::setgid(65534) == 0 && ::setuid(65534) == 0;
}

} // namespace

TEST_CASE("a code object larger than a pipe holds is linked whole") {
  const std::vector<uint8_t> large = link(kLarge);
  CHECK(large.size() > 4 * kLarge);
  CHECK(link(kLarge) == large);
  CHECK(link(kSmall).size() < large.size());
}

// RLIMIT_FSIZE holds for memfds: the object goes through a pipe instead
// (filled while lld reads, past what the pipe holds for the large one).
// Before, the object was written to a file and SIGXFSZ ended the process.
TEST_CASE("under a file-size limit smaller than the object a link succeeds, without SIGXFSZ") {
  const std::vector<uint8_t> small = link(kSmall), large = link(kLarge);
  int status = inChild([&] {
    struct rlimit limit = {1000, 1000};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0)
      return 10;
    if (link(kSmall) != small)
      return 11;
    return link(kLarge) == large ? 0 : 12;
  });
  CHECK(status == 0); // -SIGXFSZ (-25) if the signal ended it
  CHECK(link(kSmall) == small); // and this process is unchanged
}

// Pipes no larger than 1 MiB, an object of 1.25 MiB that the file-size
// limit keeps out of a memfd: the pump thread feeds lld the object and takes
// the code object while lld runs.
TEST_CASE("an unprivileged user's link through pipes smaller than the object and code object") {
  const std::vector<uint8_t> huge = link(kHuge);
  CHECK(huge.size() > 4 * kHuge);
  int status = inChild([&] {
    if (!becomeUnprivileged())
      return 10;
    struct rlimit limit = {1000, 1000};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0)
      return 11;
    return link(kHuge) == huge ? 0 : 12;
  });
  CHECK(status == 0);
}

// A child made by fork() links on descriptors of its own and the parent
// still links after the child's exit handlers ran.
TEST_CASE("a forked child links, and its parent still links after the child exits") {
  const std::vector<uint8_t> before = link(kSmall);
  CHECK(inChild([&] { return link(kSmall) == before ? 0 : 2; }) == 0);
  CHECK(link(kSmall) == before);
}

// lld is handed its files as /proc/self/fd/N. Without /proc (a tmpfs over
// it, in a mount namespace of the child's own) the link fails saying why.
TEST_CASE("a link where /proc is not mounted is an Error that says so") {
  int status = inChild([] {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tessel-test", "/proc", "tmpfs", 0, nullptr) != 0)
      return 77; // no mount namespace for this user: nothing to check
    try {
      link(kSmall);
    } catch (const Error &e) {
      const std::string message = e.what();
      return message.find("lld failed to link the AMDGPU code object: tessel hands lld its files as "
                          "/proc/self/fd/N, which this process cannot open (No such file or directory; "
                          "is /proc mounted?)") == 0
                 ? 0
                 : 2;
    }
    return 3;
  });
  if (status == 77)
    MESSAGE("skipped: cannot mount over /proc in a namespace of the test's own");
  else
    CHECK(status == 0);
}

// Out of file descriptors: no memfd, then no pipe; an Error, not a crash.
TEST_CASE("a link without a free file descriptor is an Error naming the descriptor") {
  int status = inChild([] {
    struct rlimit limit = {64, 64};
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
      return 10;
    while (::open("/dev/null", O_RDONLY) >= 0) { // every descriptor below the limit taken
    }
    try {
      link(kSmall);
    } catch (const Error &e) {
      return std::string(e.what()) ==
                     "cannot link the AMDGPU code object: no pipe for lld's files: Too many open files"
                 ? 0
                 : 2;
    }
    return 3;
  });
  CHECK(status == 0);
}
