// Kernels for ahead-of-time compilation. A program that registers kernels with
// TESSEL_AOT_KERNEL and links tessel's compile driver (tessel::compile_main,
// which provides main) is a tessel-compile: run it to compile the kernels for
// chosen targets and specializations into code objects and a C++ launcher
// (header + source) that loads and launches them through HIP, without the JIT:
//
//   void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, i32 n, Const<int> BLOCK) { ... }
//   TESSEL_AOT_KERNEL(vector_add, "x", "y", "out", "n", "BLOCK");
//
//   $ my-tessel-compile --kernel vector_add --const BLOCK=1024 --arch gfx942,gfx1100
//         --spec 16,16,16,16 --spec x,x,x,x -o generated/     (one command)
//
// The parameter names (optional; default arg0, arg1, ...) name --const's
// constants and the launcher's parameters. See the user guide.
#pragma once

#include "tessel/core/specialization.hpp"
#include "tessel/core/trace.hpp"
#include "tessel/kernel.hpp"

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace tessel::aot {

struct Parameter {
  std::string name;
  bool runtime = true;           // a tile parameter (pointer or scalar) in the kernarg segment
  TraceArg arg{};                // runtime: its kind and element type
  std::string constType;         // Const<T>: T's name ("int32_t", "float", ...)
};

struct KernelEntry {
  std::string name;              // the block program's (and the code object symbol's base) name
  std::vector<Parameter> params; // every parameter, in order
  size_t namesGiven = 0;         // names TESSEL_AOT_KERNEL gave (0, or one per parameter)
  SourceLoc where;               // the TESSEL_AOT_KERNEL line
  // Traces for a specialization of the runtime parameters and the constants
  // as text (one per Const parameter, in order).
  std::function<detail::TraceRequest(const Specialization &, const std::vector<std::string> &)> trace;
};

// The registered kernels, in registration order. Registering a second kernel
// of one name is an Error when the driver starts.
void registerKernel(KernelEntry entry);
const std::vector<KernelEntry> &registeredKernels();

namespace detail {
template <class P> Parameter describe() {
  Parameter p;
  if constexpr (tessel::detail::param_traits<P>::runtime) {
    p.arg = tessel::detail::param_traits<P>::arg;
  } else {
    p.runtime = false;
    p.constType = [] <class T>(const Const<T> *) {
      return tessel::detail::constTypeName<T>();
    }(static_cast<const P *>(nullptr));
  }
  return p;
}
} // namespace detail

// Registers `fn` under `name` at static initialization (TESSEL_AOT_KERNEL).
template <class... Params> struct Registrar {
  Registrar(void (*fn)(Params...), const char *name, std::initializer_list<const char *> paramNames,
            std::source_location loc = std::source_location::current()) {
    KernelEntry e;
    e.name = name;
    if (size_t at = e.name.rfind("::"); at != std::string::npos) // TESSEL_AOT_KERNEL(ns::fn)
      e.name = e.name.substr(at + 2);
    e.params = {detail::describe<Params>()...};
    e.namesGiven = paramNames.size();
    e.where = tessel::detail::toSourceLoc(loc);
    for (size_t j = 0; j < e.params.size(); ++j)
      e.params[j].name = j < paramNames.size() ? paramNames.begin()[j] : "arg" + std::to_string(j);
    Kernel<Params...> kernel(fn, e.name, e.where);
    e.trace = [kernel](const Specialization &spec, const std::vector<std::string> &constants) {
      return kernel.traceWith(spec, constants);
    };
    registerKernel(std::move(e));
  }
};

} // namespace tessel::aot

#define TESSEL_AOT_CONCAT_(a, b) a##b
#define TESSEL_AOT_CONCAT(a, b) TESSEL_AOT_CONCAT_(a, b)
// Registers block program `fn` for tessel-compile; the optional strings name
// its parameters in order.
#define TESSEL_AOT_KERNEL(fn, ...)                                                                       \
  static const ::tessel::aot::Registrar TESSEL_AOT_CONCAT(tessel_aot_registrar_, __LINE__)(&fn, #fn, \
                                                                                            {__VA_ARGS__})
