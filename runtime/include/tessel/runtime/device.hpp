// Devices: where kernels run and where their buffers live. A HIP GPU when one
// is present, else the emulator, which executes the same kernel module on the
// host. Public header: no LLVM, no HIP headers.
#pragma once

#include "tessel/core/error.hpp"

#include <cstddef>
#include <concepts>
#include <cstdint>
#include <limits>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessel {

namespace detail {
// A C++ integer that can count workgroups (not bool, not a character type).
template <class T>
concept GridInteger = std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char> &&
                      !std::same_as<T, wchar_t> && !std::same_as<T, char8_t> && !std::same_as<T, char16_t> &&
                      !std::same_as<T, char32_t>;
} // namespace detail

// A grid, counted in program instances (workgroups) along x, y and z. It
// takes any integers, so `{m}` and `{m, n}` with `int` values build one, as
// `{cdiv(n, BLOCK)}` does. A launch refuses a grid with a dimension below 1
// or above UINT32_MAX with an Error naming the grid as it was given.
struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;

  constexpr Dim3() = default;
  template <detail::GridInteger X, detail::GridInteger Y = uint32_t, detail::GridInteger Z = uint32_t>
  constexpr Dim3(X gx, Y gy = 1, Z gz = 1)
      : x(dimension(gx)), y(dimension(gy)), z(dimension(gz)), given_{given(gx), given(gy), given(gz)},
        outOfRange_(!std::in_range<uint32_t>(gx) || !std::in_range<uint32_t>(gy) || !std::in_range<uint32_t>(gz)) {}

  // Whether a value given was negative or above UINT32_MAX (its dimension
  // here is 0, which no device launches).
  constexpr bool outOfRange() const { return outOfRange_; }
  // What is wrong with such a grid, in words; empty when nothing is.
  std::string rangeProblem() const {
    if (!outOfRange_)
      return {};
    std::string text = "the grid {";
    bool negative = false;
    for (int i = 0; i < 3; ++i) {
      text += (i ? ", " : "") + std::string(given_[i].negative ? "-" : "") + std::to_string(given_[i].magnitude);
      negative |= given_[i].negative;
    }
    return text + (negative ? "} has a negative dimension; each of x, y, z must be at least 1"
                            : "} has a dimension above 4294967295 (grid dimensions are uint32_t)");
  }

private:
  struct Given {
    uint64_t magnitude = 1;
    bool negative = false;
  };
  template <class V> static constexpr uint32_t dimension(V v) {
    return std::in_range<uint32_t>(v) ? static_cast<uint32_t>(v) : 0;
  }
  template <class V> static constexpr Given given(V v) {
    if (std::cmp_less(v, 0))
      return {uint64_t(0) - static_cast<uint64_t>(v), true};
    return {static_cast<uint64_t>(v), false};
  }
  Given given_[3];
  bool outOfRange_ = false;
};

struct LaunchOptions {
  unsigned num_warps = 4;
  // Software pipelining of loops over dot operands: 1 loads each K step's
  // operands in that step; 2 loads the next step's while this one computes.
  unsigned num_stages = 1;
  // Faster, less exact float division (Triton's fast division): `/` becomes
  // the hardware reciprocal times the dividend (about 1 ulp; denormal
  // divisors flush), and dividing a tile by a broadcast scalar or row
  // multiplies by one reciprocal per scalar or row. div_rn() stays correctly
  // rounded, fdiv() is fast either way. Off: `/` is IEEE division.
  bool fast_math = false;
  // Float multiply-adds as one fma (Triton's enable_fp_fusion, clang's
  // -ffp-contract): a * b + c, a * b - c and c - a * b, when nothing else
  // uses the product, round once instead of twice - on the GPU and the
  // emulator alike. Off (the default): every operation rounds on its own.
  bool fp_fusion = false;
  // Compiles device_assert checks in (Triton's debug=True); TESSEL_DEBUG=1
  // turns it on for every launch. Part of the specialization: a debug and a
  // non-debug launch of one kernel run different code objects.
  bool debug = false;
  // The waves per SIMD the register allocator aims for (Triton's
  // waves_per_eu, LLVM's "amdgpu-waves-per-eu"): it then keeps each lane's
  // registers under that occupancy's share, scheduling for fewer live values
  // (or spilling, when the kernel cannot fit). 0 (the default): no request,
  // LLVM chooses. 1 to the target's wave slots (8 on CDNA, 16 on gfx1100).
  unsigned waves_per_eu = 0;
  // The HIP stream to launch on (a hipStream_t the caller owns; it converts
  // to void * as written: `{.stream = s}`); null is the device's null stream.
  // Not part of the specialization. The emulator runs every launch to
  // completion in order, whatever the stream.
  void *stream = nullptr;
  // Where the launch is written: `{.num_warps = 4}` or `{}` at the call site
  // records it, so a failed launch names the user's line.
  std::source_location where = std::source_location::current();
};

struct CompiledKernel;

// A kernel loaded on a device, ready to launch.
class LoadedKernel {
public:
  virtual ~LoadedKernel() = default;
};

// What each kind of device implements. Users hold a Device.
class DeviceImpl {
public:
  virtual ~DeviceImpl() = default;
  virtual std::string name() const = 0;  // "emulator (gfx942)", "hip: AMD Instinct ..."
  virtual std::string arch() const = 0;  // the gfx target kernels are compiled for
  virtual bool isEmulator() const = 0;
  // The AMDGPU code object version kernels are compiled to for this device.
  virtual unsigned codeObjectVersion() const { return 5; }
  virtual void *allocate(size_t bytes) = 0;
  virtual void release(void *devicePtr) = 0;
  virtual void copyToDevice(void *dst, const void *src, size_t bytes) = 0;
  virtual void copyToHost(void *dst, const void *src, size_t bytes) = 0;
  virtual std::unique_ptr<LoadedKernel> load(const CompiledKernel &kernel) = 0;
  // blockSize threads per workgroup; kernarg laid out as kernargLayout() says;
  // `stream`: LaunchOptions::stream.
  virtual void launch(LoadedKernel &kernel, Dim3 grid, uint32_t blockSize,
                      const void *kernarg, size_t kernargBytes, void *stream = nullptr) = 0;
  virtual void synchronize() = 0;
};

template <class T> class Buffer;

class Device {
public:
  // TESSEL_DEVICE=emulator|hip|auto (default auto: HIP when a GPU is usable,
  // else the emulator, after saying why on stderr once).
  static Device open();
  // TESSEL_ARCH (default gfx942) when arch is empty.
  static Device emulator(std::string arch = "", std::source_location where = std::source_location::current());
  // The GPU with this HIP device id (what hipGetDevice / hipSetDevice
  // number), sharing the caller's HIP runtime: raw device pointers from the
  // caller's hipMalloc and streams from its hipStreamCreate work with it, and
  // tessel's calls leave the caller's current device as they found it.
  // Throws tessel::Error naming the reason when no HIP GPU is usable.
  static Device hip(int ordinal = 0);

  std::string name() const { return impl_->name(); }
  std::string arch() const { return impl_->arch(); }
  // Lanes per wave on this device's target: 64 (gfx9) or 32 (gfx11).
  unsigned waveSize() const;
  bool isEmulator() const { return impl_->isEmulator(); }
  void synchronize() { impl_->synchronize(); }
  DeviceImpl &impl() { return *impl_; }
  const std::shared_ptr<DeviceImpl> &shared() const { return impl_; }

  template <class T> Buffer<T> alloc(size_t count, std::source_location where = std::source_location::current());
  // A signed count (alloc<float>(n) with an int n): Error when negative.
  template <class T, std::signed_integral N>
  Buffer<T> alloc(N count, std::source_location where = std::source_location::current()) {
    if (count < 0)
      throw Error(callerLine(where) + "Device::alloc: a negative element count " + std::to_string(count));
    return alloc<T>(static_cast<size_t>(count), where);
  }
  template <class T>
  Buffer<T> upload(std::span<const T> host, std::source_location where = std::source_location::current());
  // A std::vector<bool> too (packed bits on the host, one byte per bool on the device).
  template <class T>
  Buffer<T> upload(const std::vector<T> &host, std::source_location where = std::source_location::current());

  explicit Device(std::shared_ptr<DeviceImpl> impl) : impl_(std::move(impl)) {}

private:
  std::shared_ptr<DeviceImpl> impl_;
};

// Device memory holding `size()` elements of T. Move-only; frees on destruction.
template <class T> class Buffer {
public:
  Buffer() = default;
  Buffer(std::shared_ptr<DeviceImpl> dev, size_t count, std::source_location where = std::source_location::current())
      : dev_(std::move(dev)), count_(count), ptr_(static_cast<T *>(allocate(*dev_, count, where))) {}
  Buffer(Buffer &&o) noexcept { *this = std::move(o); }
  Buffer &operator=(Buffer &&o) noexcept {
    if (this != &o) {
      reset();
      dev_ = std::move(o.dev_);
      count_ = o.count_;
      ptr_ = o.ptr_;
      o.ptr_ = nullptr;
      o.count_ = 0;
    }
    return *this;
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer() { reset(); }

  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }
  T *devicePtr() const { return ptr_; } // an address on the device
  // The device holding this buffer (Kernel::launch without a Device uses it).
  const std::shared_ptr<DeviceImpl> &device() const { return dev_; }
  void copyFrom(std::span<const T> host, std::source_location where = std::source_location::current()) {
    requireMemory("Buffer::copyFrom", where);
    if (host.size() != count_)
      throw Error(callerLine(where) + "Buffer::copyFrom: " + std::to_string(host.size()) +
                  " elements given for a buffer of " + std::to_string(count_));
    dev_->copyToDevice(ptr_, host.data(), bytes());
  }
  // For Buffer<bool>, a std::vector<bool>: each element becomes one byte, 0 or 1.
  void copyFrom(const std::vector<T> &host, std::source_location where = std::source_location::current()) {
    if constexpr (std::is_same_v<T, bool>) {
      static_assert(sizeof(bool) == 1, "tessel: a bool element is one byte on the device");
      const std::vector<uint8_t> bytes(host.begin(), host.end());
      copyFrom(std::span<const bool>(reinterpret_cast<const bool *>(bytes.data()), bytes.size()), where);
    } else {
      copyFrom(std::span<const T>(host), where);
    }
  }
  // For Buffer<bool>, a std::vector<bool>: a byte other than 0 is true (as
  // kernels read a bool).
  std::vector<T> download(std::source_location where = std::source_location::current()) const {
    requireMemory("Buffer::download", where);
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(count_);
      dev_->copyToHost(bytes.data(), ptr_, count_);
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> out(count_);
      dev_->copyToHost(out.data(), ptr_, bytes());
      return out;
    }
  }
  // Whether the buffer holds memory (not default-constructed or moved from).
  explicit operator bool() const { return ptr_ != nullptr; }

private:
  // count * sizeof(T) bytes (at least 1) from `dev`; an Error naming the
  // caller's line when the size overflows or the device cannot allocate it.
  static void *allocate(DeviceImpl &dev, size_t count, const std::source_location &where) {
    if (count > std::numeric_limits<size_t>::max() / sizeof(T))
      throw Error(callerLine(where) + "Device::alloc: a buffer of " + std::to_string(count) + " elements of " +
                  std::to_string(sizeof(T)) + " bytes is too large (its size in bytes overflows size_t)");
    try {
      return dev.allocate(count ? count * sizeof(T) : 1);
    } catch (const Error &e) {
      throw Error(callerLine(where) + e.what());
    }
  }
  void requireMemory(const char *what, const std::source_location &where) const {
    if (!ptr_)
      throw Error(callerLine(where) + what + ": the buffer holds no memory (default-constructed or moved from)");
  }
  void reset() {
    if (ptr_ && dev_)
      dev_->release(ptr_);
    ptr_ = nullptr;
  }
  std::shared_ptr<DeviceImpl> dev_;
  size_t count_ = 0;
  T *ptr_ = nullptr;
};

template <class T> Buffer<T> Device::alloc(size_t count, std::source_location where) {
  return Buffer<T>(impl_, count, where);
}
template <class T> Buffer<T> Device::upload(std::span<const T> host, std::source_location where) {
  Buffer<T> b(impl_, host.size(), where);
  b.copyFrom(host, where);
  return b;
}
template <class T> Buffer<T> Device::upload(const std::vector<T> &host, std::source_location where) {
  Buffer<T> b(impl_, host.size(), where);
  b.copyFrom(host, where);
  return b;
}

} // namespace tessel
