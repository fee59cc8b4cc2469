// The typed kernel object: jit<fn>() / jit(fn, name) make a Kernel whose
// launch binds C++ arguments by parameter type, computes the specialization
// key and packs the kernarg bytes on the stack (no heap allocation on a
// cached launch), and traces `fn` only when the runtime misses its cache.
#pragma once

#include "tessel/core/error.hpp"
#include "tessel/core/kernarg.hpp"
#include "tessel/core/specialization.hpp"
#include "tessel/core/trace.hpp"
#include "tessel/ops.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/kernel_runtime.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <atomic>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tessel {

namespace detail {

// The kernel name in a `jit<Fn>()` signature (__PRETTY_FUNCTION__ of clang
// or gcc), unqualified and reduced to identifier characters.
std::string kernelNameFromSignature(std::string_view prettyFunction);
// "file:line: launching <kernel>: " for errors of a launch written there.
std::string launchSite(const std::source_location &where, const std::string &kernel);
// Error unless `name` is a C identifier (it becomes the kernel's symbol).
void checkKernelName(const std::string &name, SourceLoc loc);
// Error naming the kernel, the argument and its range.
[[noreturn]] void failArgument(const std::string &kernel, size_t index, DType dtype, const std::string &value,
                               const char *problem);
// Errors naming the kernel, the trace-time constant (`type`: "int8_t", ...) and its value.
[[noreturn]] void failConstRange(const std::string &kernel, size_t index, const char *type, const std::string &value);
[[noreturn]] void failConstNotInteger(const std::string &kernel, size_t index, const char *type,
                                      const std::string &value);
// The shortest text that reads back as `v` ("64.9", "3e+10" as "30000000000").
std::string numberText(double v);

// The name of a Const<T>'s T in messages.
template <class T> constexpr const char *constTypeName() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    return sizeof(T) == 1 ? "int8_t" : sizeof(T) == 2 ? "int16_t" : sizeof(T) == 4 ? "int32_t" : "int64_t";
  else if constexpr (std::is_integral_v<T>)
    return sizeof(T) == 1 ? "uint8_t" : sizeof(T) == 2 ? "uint16_t" : sizeof(T) == 4 ? "uint32_t" : "uint64_t";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_floating_point_v<T>) return "long double";
  else return "enum";
}

// A trace-time constant given as text (ahead-of-time compiles): the number
// it spells (an integer, or for floating-point constants any number; bool
// takes true/false/1/0), or an Error naming the kernel and the constant.
long long parseConstInteger(const std::string &text, const std::string &kernel, size_t index, const char *type);
double parseConstNumber(const std::string &text, const std::string &kernel, size_t index, const char *type);

// Error naming the kernel and the pointer argument that is null (`what`: how it came to be).
[[noreturn]] void failNullPointer(const std::string &kernel, size_t index, DType pointee, const char *what);
// Error naming the kernel, the Buffer argument, its device and the launch's.
[[noreturn]] void failForeignBuffer(const std::string &kernel, size_t index, DType pointee,
                                    const DeviceImpl &bufferDevice, const DeviceImpl &launchDevice);

// Specialization bits of one runtime argument, as a key word.
enum SpecBit : uint64_t { kEqualsOne = 1, kDivisibleBy16 = 2, kAligned16 = 4, kWithin2GiB = 8 };

template <class P> struct param_traits {
  static_assert(always_false<P>, "tessel: kernel parameters are tiles (Ptr<T>, i32, f32, ...) "
                                 "or trace-time constants Const<T>, taken by value");
};

// A runtime parameter: a scalar or a pointer, passed in the kernarg segment.
template <class E> struct param_traits<Tile<E>> {
  static constexpr bool runtime = true;
  static constexpr bool isPtr = is_pointer_elem<E>::value;
  static constexpr DType dtype = elem_info<E>::dtype;
  static_assert(!is_fp8_elem<E>, "tessel: an 8-bit float scalar parameter is not supported; "
                                 "pass a float (f32) and cast it in the kernel");
  static constexpr TraceArg arg{isPtr ? TraceArg::Pointer : is_float_elem<E> ? TraceArg::Float : TraceArg::Int, dtype};
  // bind() writes a 64-bit address or the C++ value; the kernarg rule must agree.
  static_assert((isPtr ? sizeof(uint64_t) : sizeof(E)) == kernargBytes(arg),
                "tessel: bind() writes a different number of bytes than the kernarg rule gives the argument");

  // Checks and converts one C++ argument: writes its kernarg bytes and returns its spec bits.
  // `device`: the launch's device, against which pointers are checked (null
  // when only tracing or computing a key: no pointer is dereferenced then).
  template <class A>
  static uint64_t bind(const A &a, std::byte *dst, const std::string &kernel, size_t index,
                       const DeviceImpl *device) {
    using T = std::remove_cvref_t<A>;
    if constexpr (isPtr) {
      using Pointee = typename E::pointee;
      uint64_t address, bits = 0;
      if constexpr (std::is_same_v<T, Buffer<Pointee>>) {
        address = reinterpret_cast<uintptr_t>(a.devicePtr());
        if (a.bytes() <= kMaxBufferBytes)
          bits |= kWithin2GiB;
        if (device) {
          if (!address || !a.device())
            failNullPointer(kernel, index, dtype, "an empty or moved-from Buffer");
          // Every emulator's memory is host memory, which all emulators read.
          if (a.device().get() != device && !(a.device()->isEmulator() && device->isEmulator()))
            failForeignBuffer(kernel, index, dtype, *a.device(), *device);
        }
      } else if constexpr (std::is_same_v<T, Pointee *> || std::is_same_v<T, const Pointee *>) {
        address = reinterpret_cast<uintptr_t>(a);
        if (device && !address)
          failNullPointer(kernel, index, dtype, "a null device address");
      } else {
        static_assert(always_false<T>, "tessel: a Ptr<T> parameter takes a Buffer<T> or a T* device "
                                       "address with the same element type T");
        address = 0;
      }
      std::memcpy(dst, &address, sizeof address);
      return bits | (address % 16 == 0 ? uint64_t{kAligned16} : 0);
    } else if constexpr (std::is_same_v<E, bool>) {
      static_assert(std::is_same_v<T, bool>, "tessel: an i1 parameter takes a bool");
      uint8_t byte = a ? 1 : 0;
      std::memcpy(dst, &byte, 1);
      return 0;
    } else if constexpr (is_int_elem<E>) {
      static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>,
                    "tessel: an integer tile parameter takes a C++ integer");
      if (!std::in_range<E>(a))
        failArgument(kernel, index, dtype, std::to_string(a), "is out of range");
      E value = static_cast<E>(a);
      std::memcpy(dst, &value, sizeof value);
      return (value == 1 ? kEqualsOne : 0) | (value % 16 == 0 ? kDivisibleBy16 : 0);
    } else {
      static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                    "tessel: a floating-point tile parameter takes a C++ number");
      E value = static_cast<E>(static_cast<std::conditional_t<sizeof(E) <= 4, float, double>>(a));
      std::memcpy(dst, &value, sizeof value);
      return 0;
    }
  }
};

// A trace-time constant: part of the key, folded into the trace.
template <class T> struct param_traits<Const<T>> {
  static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>,
                "tessel: Const<T> holds a number, a bool or an enum");
  static constexpr bool runtime = false;
  // Checks and converts one C++ argument as runtime integers are: an integer
  // Const takes only values it can hold, and from a floating-point number
  // only an integral one (64.9 is an error, not 64).
  template <class A> static T value(const A &a, const std::string &kernel, size_t index) {
    static_assert(std::is_convertible_v<const A &, T>, "tessel: a Const<T> parameter takes a value convertible to T");
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      constexpr const char *type = constTypeName<T>();
      if constexpr (std::is_integral_v<A>) {
        using Wide = std::conditional_t<std::is_signed_v<A>, long long, unsigned long long>;
        const Wide wide = static_cast<Wide>(a);
        if (!std::in_range<T>(wide))
          failConstRange(kernel, index, type, std::to_string(wide));
      } else if constexpr (std::is_floating_point_v<A>) {
        const double d = static_cast<double>(a);
        if (!(d == std::trunc(d))) // NaN and infinities too
          failConstNotInteger(kernel, index, type, numberText(d));
        // [min, 2^digits): both bounds exact in a double.
        if (d < static_cast<double>(std::numeric_limits<T>::min()) ||
            d >= std::ldexp(1.0, std::numeric_limits<T>::digits))
          failConstRange(kernel, index, type, numberText(d));
      }
    }
    return static_cast<T>(a);
  }
  // The constant spelled as text, checked as value() checks a C++ argument.
  static T parse(const std::string &text, const std::string &kernel, size_t index) {
    if constexpr (std::is_same_v<T, bool>) {
      if (text == "true" || text == "false")
        return text == "true";
      const long long v = parseConstInteger(text, kernel, index, "bool");
      if (v != 0 && v != 1)
        failConstRange(kernel, index, "bool", text);
      return v == 1;
    } else if constexpr (std::is_floating_point_v<T>) {
      return value(parseConstNumber(text, kernel, index, constTypeName<T>()), kernel, index);
    } else if constexpr (std::is_enum_v<T>) {
      using U = std::underlying_type_t<T>;
      return static_cast<T>(param_traits<Const<U>>::parse(text, kernel, index));
    } else {
      return value(parseConstInteger(text, kernel, index, constTypeName<T>()), kernel, index);
    }
  }
  static uint64_t keyWord(T v) {
    if constexpr (std::is_floating_point_v<T>) return std::bit_cast<uint64_t>(static_cast<double>(v));
    else if constexpr (std::is_enum_v<T>) return static_cast<uint64_t>(static_cast<std::underlying_type_t<T>>(v));
    else return static_cast<uint64_t>(v);
  }
};

// Where a kernel object and its copies keep their runtime. The first launch
// makes the runtime exactly once, however many threads launch at the same
// time (the kernel library's `static` kernels are launched from anywhere).
struct RuntimeSlot {
  std::once_flag once;
  std::shared_ptr<KernelRuntime> runtime;   // set once, under `once`
  std::atomic<KernelRuntime *> ready{nullptr}; // published after `runtime` is set
};

} // namespace detail

// A block program made launchable. Launching does not change the kernel, so
// a const kernel launches too, from any number of threads at once. A copy
// shares the original's compiled-kernel cache, whether it was made before or
// after the first launch.
template <class... Params> class Kernel {
  static constexpr size_t kNumParams = sizeof...(Params);
  static constexpr std::array<bool, kNumParams> kIsRuntime{detail::param_traits<Params>::runtime...};

public:
  using Fn = void (*)(Params...);
  static constexpr size_t kNumRuntimeArgs = (size_t(0) + ... + size_t(detail::param_traits<Params>::runtime));
  static constexpr size_t kNumConstArgs = kNumParams - kNumRuntimeArgs;
  static constexpr size_t kKeyWords = kNumRuntimeArgs + kNumConstArgs + 1;
  static_assert(kKeyWords <= detail::KernelKey::kCapacity, "tessel: too many kernel parameters for the key");

  // The runtime arguments in order, as trace() records them in Trace::args.
  static constexpr std::array<TraceArg, kNumRuntimeArgs> kRuntimeArgs = [] {
    std::array<TraceArg, kNumRuntimeArgs> args{};
    size_t r = 0;
    auto add = [&]<class P>() {
      if constexpr (detail::param_traits<P>::runtime) args[r++] = detail::param_traits<P>::arg;
    };
    (add.template operator()<Params>(), ...);
    return args;
  }();
  // The kernarg segment, laid out at compile time by the rule the compiler's
  // kernargLayout() uses (core/kernarg.hpp).
  static constexpr KernargPlan<kNumRuntimeArgs> kKernargs = kernargPlan(kRuntimeArgs);

  Kernel(Fn fn, std::string name, SourceLoc loc)
      : fn_(fn), name_(std::move(name)), loc_(loc), slot_(std::make_shared<detail::RuntimeSlot>()) {
    detail::checkKernelName(name_, loc_);
  }

  const std::string &name() const { return name_; }

  // Traces the kernel for these arguments without launching (tests, tools).
  template <class... Args> detail::TraceRequest trace(const Args &...args) const {
    checkArity<Args...>();
    detail::TraceRequest request;
    request.spec.args.reserve(kNumRuntimeArgs);
    std::array<std::byte, kKernargBytesOrOne> scratch{};
    bindAll(std::index_sequence_for<Params...>{}, [&](size_t, uint64_t bits) {
      request.spec.args.push_back({.equalsOne = (bits & detail::kEqualsOne) != 0,
                                   .divisibleBy16 = (bits & detail::kDivisibleBy16) != 0,
                                   .aligned16 = (bits & detail::kAligned16) != 0,
                                   .within2GiB = (bits & detail::kWithin2GiB) != 0});
    }, scratch.data(), nullptr, args...);

    auto argTuple = std::forward_as_tuple(args...);
    request.trace = traceBody([&]<class P, size_t Index>() {
      return detail::param_traits<P>::value(std::get<Index>(argTuple), name_, Index);
    });
    return request;
  }

  // Traces the kernel for a specialization of its runtime arguments and its
  // trace-time constants spelled as text, one per Const parameter in order
  // (ahead-of-time compiles: tessel-compile).
  detail::TraceRequest traceWith(const Specialization &spec, const std::vector<std::string> &constants) const {
    if (spec.args.size() != kNumRuntimeArgs)
      throw Error(name_ + ": " + std::to_string(spec.args.size()) + " specializations given for " +
                  std::to_string(kNumRuntimeArgs) + " runtime parameters");
    if (constants.size() != kNumConstArgs)
      throw Error(name_ + ": " + std::to_string(constants.size()) + " constants given for " +
                  std::to_string(kNumConstArgs) + " Const parameters");
    detail::TraceRequest request;
    request.spec = spec;
    request.trace = traceBody([&]<class P, size_t Index>() {
      size_t c = 0; // this constant's position among the Const parameters
      for (size_t i = 0; i < Index; ++i) c += !kIsRuntime[i];
      return detail::param_traits<P>::parse(constants[c], name_, Index);
    });
    return request;
  }

  // The specialization key a launch with these arguments looks up.
  template <class... Args> detail::KernelKey key(const LaunchOptions &options, const Args &...args) const {
    checkArity<Args...>();
    detail::KernelKey k;
    std::array<std::byte, kKernargBytesOrOne> kernarg{};
    fillKeyAndKernarg(k, kernarg.data(), options, nullptr, args...);
    return k;
  }

  // The kernarg bytes a launch with these arguments passes (tests, tools).
  template <class... Args> std::array<std::byte, kKernargs.totalBytes> kernarg(const Args &...args) const {
    checkArity<Args...>();
    detail::KernelKey k;
    std::array<std::byte, kKernargBytesOrOne> bytes{};
    fillKeyAndKernarg(k, bytes.data(), LaunchOptions{}, nullptr, args...);
    std::array<std::byte, kKernargs.totalBytes> out{};
    std::memcpy(out.data(), bytes.data(), out.size());
    return out;
  }

  // Launches over `grid` workgroups of options.num_warps waves on `device`.
  template <class... Args>
  void launch(Device &device, Dim3 grid, LaunchOptions options, const Args &...args) const {
    checkArity<Args...>();
    try {
      detail::KernelKey k;
      alignas(16) std::array<std::byte, kKernargBytesOrOne> kernarg{};
      fillKeyAndKernarg(k, kernarg.data(), options, &device.impl(), args...);
      detail::KernelRuntime &runtime = ensureRuntime();
      auto argRefs = std::forward_as_tuple(args...);
      MissContext<decltype(argRefs)> context{this, &argRefs};
      runtime.launch(device, grid, options, k, kernarg.data(), kKernargs.totalBytes,
                       &traceOnMiss<decltype(argRefs)>, &context);
    } catch (const Error &e) {
      // Costs nothing unless thrown: the message gains the launch's line.
      throw Error(detail::launchSite(options.where, name_) + e.what());
    }
  }

  // Compiles (or finds in the memory or disk cache) the kernel a launch
  // with these options and arguments would run, without running it
  // (Triton's warmup): its code object, resources (tessel::usageOf) and
  // remarks, before any launch.
  template <class... Args>
  const CompiledKernel &warmup(Device &device, LaunchOptions options, const Args &...args) const {
    checkArity<Args...>();
    try {
      detail::KernelKey k;
      alignas(16) std::array<std::byte, kKernargBytesOrOne> kernarg{};
      fillKeyAndKernarg(k, kernarg.data(), options, &device.impl(), args...);
      auto argRefs = std::forward_as_tuple(args...);
      MissContext<decltype(argRefs)> context{this, &argRefs};
      return ensureRuntime().compile(device, options, k, &traceOnMiss<decltype(argRefs)>, &context);
    } catch (const Error &e) {
      throw Error(detail::launchSite(options.where, name_) + e.what());
    }
  }

  // A device handle made in the call: launch(Device::emulator(), ...).
  template <class... Args>
  void launch(Device &&device, Dim3 grid, LaunchOptions options, const Args &...args) const {
    launch(device, grid, options, args...);
  }

  // Launches on the device of the first Buffer argument.
  template <class... Args> void launch(Dim3 grid, LaunchOptions options, const Args &...args) const {
    checkArity<Args...>();
    Device device(deviceOfArguments(args...));
    launch(device, grid, options, args...);
  }

  // The device of the first Buffer among `args`; Error when there is none.
  template <class... Args> std::shared_ptr<DeviceImpl> deviceOfArguments(const Args &...args) const {
    std::shared_ptr<DeviceImpl> found;
    auto visit = [&](const auto &a) {
      if constexpr (requires { a.device(); a.devicePtr(); })
        if (!found && a.device()) found = a.device();
    };
    (visit(args), ...);
    if (!found)
      throw Error(name_ + ": launch without a Device takes the device from the first Buffer argument, "
                          "and there is none; pass the Device first");
    return found;
  }

  // The runtime's counters (null before the first launch).
  const detail::KernelRuntime *runtime() const {
    return slot_ ? slot_->ready.load(std::memory_order_acquire) : nullptr;
  }

  // Launches, memory-cache and disk-cache hits, compiles (all 0 before the
  // first launch).
  LaunchStats stats() const {
    const detail::KernelRuntime *r = runtime();
    return r ? r->stats() : LaunchStats{};
  }
  // What the most recent launch (or warmup) ran: tile IR, LLVM IR,
  // assembly, code object (null before the first).
  const CompiledKernel *lastCompiled() const {
    const detail::KernelRuntime *r = runtime();
    return r ? r->lastKernel() : nullptr;
  }

private:
  // The shared runtime, made by the first launch of this kernel or a copy.
  detail::KernelRuntime &ensureRuntime() const {
    if (!slot_)
      throw Error("kernel object was moved from; launch the object it was moved to");
    if (detail::KernelRuntime *r = slot_->ready.load(std::memory_order_acquire))
      return *r;
    std::call_once(slot_->once, [&] {
      slot_->runtime = std::make_shared<detail::KernelRuntime>(name_);
      slot_->ready.store(slot_->runtime.get(), std::memory_order_release);
    });
    return *slot_->runtime;
  }

  // What a launch hands the runtime so that a cache miss can trace.
  template <class Tuple> struct MissContext {
    const Kernel *kernel;
    const Tuple *args;
  };
  static constexpr size_t kKernargBytesOrOne = kKernargs.totalBytes ? kKernargs.totalBytes : 1;

  template <class... Args> static constexpr void checkArity() {
    static_assert(sizeof...(Args) == kNumParams,
                  "tessel: wrong number of kernel arguments: pass one per kernel parameter (Const too)");
  }

  // Binds each argument in order: runtime ones write kernarg bytes and
  // report their spec bits to `onRuntime(runtimeIndex, bits)`.
  template <size_t... I, class OnRuntime, class... Args>
  void bindAll(std::index_sequence<I...>, OnRuntime &&onRuntime, std::byte *kernarg, const DeviceImpl *device,
               const Args &...args) const {
    size_t r = 0;
    auto one = [&]<size_t Index, class P, class A>(const A &a) {
      if constexpr (detail::param_traits<P>::runtime) {
        uint64_t bits = detail::param_traits<P>::bind(a, kernarg + kKernargs.offsets[r], name_, Index, device);
        onRuntime(r, bits);
        ++r;
      }
    };
    (one.template operator()<I, Params>(args), ...);
  }

  // `device`: the launch's (its pointer arguments are checked), or null.
  template <class... Args>
  void fillKeyAndKernarg(detail::KernelKey &k, std::byte *kernarg, const LaunchOptions &options,
                         const DeviceImpl *device, const Args &...args) const {
    bindAll(std::index_sequence_for<Params...>{}, [&](size_t r, uint64_t bits) { k.words[r] = bits; }, kernarg,
            device, args...);
    size_t w = kNumRuntimeArgs;
    auto constWord = [&]<size_t Index, class P, class A>(const A &a) {
      if constexpr (!detail::param_traits<P>::runtime)
        k.words[w++] = detail::param_traits<P>::keyWord(detail::param_traits<P>::value(a, name_, Index));
    };
    [&]<size_t... I>(std::index_sequence<I...>) {
      (constWord.template operator()<I, Params>(args), ...);
    }(std::index_sequence_for<Params...>{});
    k.words[w++] = uint64_t(options.num_warps) | uint64_t(options.num_stages) << 32 |
                   uint64_t(options.fast_math) << 48 | uint64_t(options.fp_fusion) << 49 |
                   uint64_t(detail::debugEnabled(options)) << 50 | uint64_t(options.waves_per_eu & 0xff) << 51 |
                   uint64_t(options.waves_per_eu > 0xff) << 59;
    k.size = static_cast<uint32_t>(w);
  }

  // Runs the body once: runtime parameters are the trace's arguments, each
  // Const parameter P (the Index-th) is constOf.template operator()<P, Index>().
  template <class ConstOf> Trace traceBody(ConstOf &&constOf) const {
    detail::TraceContext ctx(name_);
    detail::TraceScope scope(ctx);
    std::array<int32_t, kNumRuntimeArgs> argNodes{};
    for (size_t r = 0; r < kNumRuntimeArgs; ++r) argNodes[r] = ctx.addArg(kRuntimeArgs[r], loc_);
    auto param = [&]<class P, size_t Index>() -> P {
      if constexpr (detail::param_traits<P>::runtime) return P(ctx.ref(runtimeNode<Index>(argNodes)));
      else return P(constOf.template operator()<P, Index>());
    };
    [&]<size_t... I>(std::index_sequence<I...>) {
      fn_(param.template operator()<Params, I>()...);
    }(std::index_sequence_for<Params...>{});
    return ctx.take();
  }
  template <size_t I> static int32_t runtimeNode(const std::array<int32_t, kNumRuntimeArgs> &argNodes) {
    if constexpr (kIsRuntime[I]) {
      size_t r = 0;
      for (size_t i = 0; i < I; ++i) r += kIsRuntime[i];
      return argNodes[r];
    } else {
      return -1;
    }
  }

  template <class Tuple> static detail::TraceRequest traceOnMiss(const void *context) {
    auto *c = static_cast<const MissContext<Tuple> *>(context);
    return std::apply([&](const auto &...a) { return c->kernel->trace(a...); }, *c->args);
  }

  Fn fn_;
  std::string name_;
  SourceLoc loc_;
  std::shared_ptr<detail::RuntimeSlot> slot_; // shared by copies; its runtime is made at the first launch
};

// A kernel named explicitly.
template <class... Params>
Kernel<Params...> jit(void (*fn)(Params...), std::string name,
                      std::source_location loc = std::source_location::current()) {
  return Kernel<Params...>(fn, std::move(name), detail::toSourceLoc(loc));
}

// A kernel named after the function: jit<vector_add>() is "vector_add".
template <auto Fn> auto jit(std::source_location loc = std::source_location::current()) {
  static_assert(std::is_pointer_v<decltype(Fn)> && std::is_function_v<std::remove_pointer_t<decltype(Fn)>>,
                "tessel: jit<fn>() takes a function (the block program)");
  return jit(Fn, detail::kernelNameFromSignature(__PRETTY_FUNCTION__), loc);
}

} // namespace tessel
