#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "error_text.hpp"
#include "tessel/core/error.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <typeinfo>

// Every tessel::Error any test throws, expected by the test or not, is
// checked for compiler-internal text (error_text.hpp) on its way out: the
// test that threw it fails. No user may see an MLIR or LLVM message.
extern "C" [[noreturn]] void __cxa_throw(void *object, std::type_info *type, void (*destroy)(void *)) {
  if (*type == typeid(tessel::Error)) {
    const char *message = static_cast<tessel::Error *>(object)->what();
    if (std::string found = tessel_test::compilerTextIn(message); !found.empty()) {
      if (tessel_test::allowCompilerText) {
        ++tessel_test::compilerTextAllowed;
      } else if (doctest::is_running_in_test) {
        const std::string what = "a tessel::Error carries compiler-internal text ('" + found + "'): " + message;
        ADD_FAIL_CHECK_AT(__FILE__, __LINE__, what);
      } else {
        std::fprintf(stderr, "a tessel::Error carries compiler-internal text ('%s'): %s\n", found.c_str(), message);
        std::abort();
      }
    }
  }
  using Throw = void (*)(void *, std::type_info *, void (*)(void *));
  static const Throw rethrow = reinterpret_cast<Throw>(dlsym(RTLD_NEXT, "__cxa_throw"));
  rethrow(object, type, destroy);
  __builtin_unreachable();
}
