// HipDevice: a GPU through the HIP runtime, loaded with dlopen so tessel runs
// where ROCm is absent. No HIP headers: the few types and constants are here.
#include "devices_internal.hpp"

#include "tessel/core/compiled_kernel.hpp"
#include "tessel/core/error.hpp"
#include "tessel/lowering/target.hpp"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace tessel {
namespace {

using hipError_t = int;
constexpr hipError_t hipSuccess = 0;
constexpr int hipMemcpyHostToDevice = 1;
constexpr int hipMemcpyDeviceToHost = 2;
// HIP_LAUNCH_PARAM_* markers of the `extra` argument of hipModuleLaunchKernel.
void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(1);
void *const kLaunchParamBufferSize = reinterpret_cast<void *>(2);
void *const kLaunchParamEnd = reinterpret_cast<void *>(3);
// Larger than hipDeviceProp_t of any HIP version (about 1.5 KiB).
constexpr size_t kDevicePropertiesBytes = 16384;

// The HIP entry points tessel uses, resolved from libamdhip64.
struct HipApi {
  hipError_t (*getDeviceCount)(int *);
  hipError_t (*setDevice)(int);
  hipError_t (*getDevice)(int *);
  hipError_t (*deviceGetName)(char *, int, int);
  hipError_t (*getDeviceProperties)(void *, int);
  hipError_t (*malloc)(void **, size_t);
  hipError_t (*free)(void *);
  hipError_t (*memcpy)(void *, const void *, size_t, int);
  hipError_t (*moduleLoadData)(void **, const void *);
  hipError_t (*moduleUnload)(void *);
  hipError_t (*moduleGetFunction)(void **, void *, const char *);
  hipError_t (*moduleLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, void *, void **, void **);
  hipError_t (*deviceSynchronize)();
  const char *(*getErrorString)(hipError_t);
  // Optional: HIP_VERSION of the runtime (major * 10000000 + minor * 100000 + patch).
  hipError_t (*runtimeGetVersion)(int *);
  std::string loadError; // why the library is unusable; empty when loaded
};

HipApi loadHipApi(const std::string &override) {
  HipApi a{};
  void *library = nullptr;
  if (!override.empty()) {
    if (!(library = dlopen(override.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      const char *why = dlerror();
      a.loadError = "TESSEL_HIP_LIBRARY='" + override + "' could not be loaded" +
                    (why ? std::string(": ") + why : std::string());
      return a;
    }
  } else {
    for (const char *name : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!library) {
      a.loadError = "libamdhip64.so not found";
      return a;
    }
  }
  // Kept loaded for the life of the process: the HIP runtime does not unload cleanly.
  const std::string libraryName = override.empty() ? "libamdhip64" : override;
  auto find = [&](auto &fn, const char *symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library, symbol));
    return fn != nullptr;
  };
  auto resolve = [&](auto &fn, const char *symbol) {
    if (!find(fn, symbol) && a.loadError.empty())
      a.loadError = libraryName + " lacks " + symbol;
  };
  resolve(a.getDeviceCount, "hipGetDeviceCount");
  resolve(a.setDevice, "hipSetDevice");
  resolve(a.getDevice, "hipGetDevice");
  resolve(a.deviceGetName, "hipDeviceGetName");
  resolve(a.getDeviceProperties, "hipGetDeviceProperties");
  resolve(a.malloc, "hipMalloc");
  resolve(a.free, "hipFree");
  resolve(a.memcpy, "hipMemcpy");
  resolve(a.moduleLoadData, "hipModuleLoadData");
  resolve(a.moduleUnload, "hipModuleUnload");
  resolve(a.moduleGetFunction, "hipModuleGetFunction");
  resolve(a.moduleLaunchKernel, "hipModuleLaunchKernel");
  resolve(a.deviceSynchronize, "hipDeviceSynchronize");
  resolve(a.getErrorString, "hipGetErrorString");
  find(a.runtimeGetVersion, "hipRuntimeGetVersion");
  return a;
}

// The API of the library TESSEL_HIP_LIBRARY names (a path, for tests), else of
// libamdhip64. Loaded once per name; entries are never removed, so references stay valid.
const HipApi &hipApi() {
  const char *env = std::getenv("TESSEL_HIP_LIBRARY");
  const std::string override = env ? env : "";
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<HipApi>> loaded;
  std::lock_guard lock(mutex);
  std::unique_ptr<HipApi> &api = loaded[override];
  if (!api)
    api = std::make_unique<HipApi>(loadHipApi(override));
  return *api;
}

std::string errorText(const HipApi &api, hipError_t e) {
  const char *text = api.getErrorString ? api.getErrorString(e) : nullptr;
  return (text ? std::string(text) : "hip error") + " (" + std::to_string(e) + ")";
}

// gcnArchName ("gfx942:sramecc+:xnack-") sits at a version-dependent offset of
// hipDeviceProp_t: find a field that starts with "gfx" and keep the name.
std::string archFromProperties(const std::vector<char> &props) {
  for (size_t i = 0; i + 4 < props.size(); ++i) {
    if ((i > 0 && props[i - 1] != '\0') || std::memcmp(&props[i], "gfx", 3) != 0)
      continue;
    size_t end = i + 3;
    while (end < props.size() && std::isalnum(static_cast<unsigned char>(props[end])))
      ++end;
    if (end > i + 3 && end < props.size() && (props[end] == '\0' || props[end] == ':'))
      return std::string(&props[i], end - i);
  }
  return {};
}

class HipDevice;

class HipKernel final : public LoadedKernel {
public:
  HipKernel(const HipApi &api, void *module, void *function, std::string name)
      : api_(api), module_(module), function_(function), name_(std::move(name)) {}
  ~HipKernel() override { api_.moduleUnload(module_); }
  void *function() const { return function_; }
  const std::string &name() const { return name_; }

private:
  const HipApi &api_;
  void *module_;
  void *function_;
  std::string name_;
};

class HipDevice final : public DeviceImpl {
public:
  explicit HipDevice(int ordinal) : api_(hipApi()), ordinal_(ordinal) {
    if (!api_.loadError.empty())
      throw Error("HIP unavailable: " + api_.loadError);
    int count = 0;
    if (hipError_t e = api_.getDeviceCount(&count); e != hipSuccess || count == 0)
      throw Error("HIP found no GPU: " + (e != hipSuccess ? errorText(api_, e) : "0 devices"));
    if (ordinal < 0 || ordinal >= count)
      throw Error("HIP device " + std::to_string(ordinal) + " does not exist (" +
                  std::to_string(count) + " present)");
    DeviceScope scope(*this); // checks that the device can be made current
    char name[256] = {};
    check(api_.deviceGetName(name, sizeof name - 1, ordinal), "hipDeviceGetName");
    name_ = name;
    std::vector<char> props(kDevicePropertiesBytes, '\0');
    check(api_.getDeviceProperties(props.data(), ordinal), "hipGetDeviceProperties");
    std::string arch = archFromProperties(props);
    if (arch.empty())
      throw Error("HIP device " + std::to_string(ordinal) + " (" + name_ +
                  ") did not report its gfx architecture");
    target_ = &requireTarget(arch);
    codeObjectVersion_ = codeObjectVersionFor(api_);
  }

  std::string name() const override { return "hip: " + name_; }
  std::string arch() const override { return target_->arch; }
  bool isEmulator() const override { return false; }
  unsigned codeObjectVersion() const override { return codeObjectVersion_; }

  void *allocate(size_t bytes) override {
    void *p = nullptr;
    DeviceScope scope(*this);
    check(api_.malloc(&p, bytes ? bytes : 1), "hipMalloc of " + std::to_string(bytes) + " bytes");
    return p;
  }
  void release(void *devicePtr) override {
    if (devicePtr)
      api_.free(devicePtr);
  }
  // On this device's null stream, after its kernels launched there.
  void copyToDevice(void *dst, const void *src, size_t bytes) override {
    DeviceScope scope(*this);
    check(api_.memcpy(dst, src, bytes, hipMemcpyHostToDevice), "hipMemcpy to the device");
  }
  void copyToHost(void *dst, const void *src, size_t bytes) override {
    DeviceScope scope(*this);
    check(api_.memcpy(dst, src, bytes, hipMemcpyDeviceToHost), "hipMemcpy to the host");
  }
  void synchronize() override {
    DeviceScope scope(*this);
    check(api_.deviceSynchronize(), "hipDeviceSynchronize");
  }

  std::unique_ptr<LoadedKernel> load(const CompiledKernel &kernel) override {
    if (kernel.hsaco.empty())
      throw Error("kernel '" + kernel.name + "' has no code object to load");
    void *module = nullptr, *function = nullptr;
    DeviceScope scope(*this); // the module is loaded on this device
    if (hipError_t e = api_.moduleLoadData(&module, kernel.hsaco.data()); e != hipSuccess)
      throw Error("HIP could not load the code object of kernel '" + kernel.name + "': " +
                  errorText(api_, e) + " (is its code object version one this runtime loads?)");
    if (hipError_t e = api_.moduleGetFunction(&function, module, kernel.name.c_str()); e != hipSuccess) {
      api_.moduleUnload(module);
      throw Error("HIP found no kernel '" + kernel.name + "' in its code object: " + errorText(api_, e));
    }
    return std::make_unique<HipKernel>(api_, module, function, kernel.name);
  }

  void launch(LoadedKernel &kernel, Dim3 grid, uint32_t blockSize, const void *kernarg,
              size_t kernargBytes, void *stream) override {
    auto *loaded = dynamic_cast<HipKernel *>(&kernel);
    if (!loaded)
      throw Error("hip: the kernel was loaded on a different device");
    // gridDim is in workgroups (HIP multiplies by blockDim). Only the explicit
    // arguments are passed: the HIP runtime copies each from its metadata offset in
    // this buffer and writes the hidden (implicit) arguments of code object v5
    // kernels itself, into its own kernarg segment.
    size_t size = kernargBytes;
    void *extra[] = {kLaunchParamBufferPointer, const_cast<void *>(kernarg), kLaunchParamBufferSize,
                     &size, kLaunchParamEnd};
    DeviceScope scope(*this); // the null stream is the current device's
    if (hipError_t e = api_.moduleLaunchKernel(loaded->function(), grid.x, grid.y, grid.z, blockSize,
                                               1, 1, 0, stream, nullptr, extra);
        e != hipSuccess)
      throw Error("HIP could not launch kernel '" + loaded->name() + "': " + errorText(api_, e));
  }

private:
  // HIP's current device is per host thread and belongs to the caller: set it
  // where it decides placement (allocation, module load, the null stream) and
  // give the caller's back afterwards.
  class DeviceScope {
  public:
    explicit DeviceScope(const HipDevice &device) : device_(device) {
      device.check(device.api_.getDevice(&previous_), "hipGetDevice");
      if (previous_ != device.ordinal_)
        device.check(device.api_.setDevice(device.ordinal_), "hipSetDevice");
    }
    ~DeviceScope() {
      if (previous_ != device_.ordinal_)
        device_.api_.setDevice(previous_);
    }
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;

  private:
    const HipDevice &device_;
    int previous_ = -1;
  };
  void check(hipError_t e, const std::string &what) const {
    if (e != hipSuccess)
      throw Error(what + " failed: " + errorText(api_, e));
  }

public:
  // Code object v5 needs ROCm 6 (HIP_VERSION 6.x); older or unknown runtimes get v4.
  static unsigned codeObjectVersionFor(const HipApi &api) {
    int version = 0;
    if (!api.runtimeGetVersion || api.runtimeGetVersion(&version) != hipSuccess)
      return 4;
    return version >= 60000000 ? 5 : 4;
  }

private:

  const HipApi &api_;
  int ordinal_;
  std::string name_;
  const TargetFacts *target_ = nullptr;
  unsigned codeObjectVersion_ = 4;
};

} // namespace

// One device per GPU (per HIP library and runtime version, which tests vary),
// for the reason Device::emulator() gives: kernel caches keep devices alive.
std::shared_ptr<DeviceImpl> makeHipDevice(int ordinal) {
  const HipApi &api = hipApi();
  static std::mutex mutex;
  static std::map<std::tuple<const HipApi *, int, unsigned>, std::weak_ptr<DeviceImpl>> devices;
  std::lock_guard lock(mutex);
  std::weak_ptr<DeviceImpl> &slot = devices[{&api, ordinal, HipDevice::codeObjectVersionFor(api)}];
  std::shared_ptr<DeviceImpl> device = slot.lock();
  if (!device)
    slot = device = std::make_shared<HipDevice>(ordinal);
  return device;
}

} // namespace tessel
