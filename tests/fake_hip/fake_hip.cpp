// A fake HIP runtime for tests: the entry points tessel's HipDevice resolves
// with dlsym (and generated ahead-of-time launchers link), with their C
// signatures, and no HIP headers. Two devices, 0 a gfx942 and 1 a gfx1100,
// each loading only code objects for its own architecture; streams belong to
// the device current when they were made;
// "device" memory is host memory; hipModuleLoadData accepts only AMDGPU ELF
// code objects (and checks what it can of them); hipModuleLaunchKernel
// executes nothing and records the launch for fakeHipLastLaunch().
#include "fake_hip.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using hipError_t = int;
constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorInvalidValue = 1;
constexpr hipError_t hipErrorInvalidConfiguration = 9;
constexpr hipError_t hipErrorInvalidDevice = 101;
constexpr hipError_t hipErrorInvalidImage = 200;
constexpr hipError_t hipErrorInvalidHandle = 400;
constexpr hipError_t hipErrorNotFound = 500;
constexpr hipError_t hipErrorLaunchFailure = 719;

constexpr int hipMemcpyHostToHost = 0;
constexpr int hipMemcpyHostToDevice = 1;
constexpr int hipMemcpyDeviceToHost = 2;
constexpr int hipMemcpyDeviceToDevice = 3;
constexpr int hipMemcpyDefault = 4;

void *const kBufferPointer = reinterpret_cast<void *>(1);
void *const kBufferSize = reinterpret_cast<void *>(2);
void *const kEnd = reinterpret_cast<void *>(3);

struct FakeDevice {
  const char *name;
  const char *archName; // gcnArchName
  uint32_t elfMach;     // EF_AMDGPU_MACH of the code objects it loads
};
constexpr FakeDevice kDevices[] = {
    {"AMD Instinct MI300X (fake)", "gfx942:sramecc+:xnack-", 0x04c},
    {"AMD Radeon RX 7900 XTX (fake)", "gfx1100", 0x041},
};
constexpr int kDeviceCount = int(sizeof kDevices / sizeof kDevices[0]);
constexpr size_t kArchNameOffset = 1160; // somewhere inside hipDeviceProp_t, as in real HIP
constexpr unsigned kMaxThreadsPerBlock = 1024;

// ---- a small ELF64 reader ------------------------------------------------------------------

constexpr uint16_t kEmAmdgpu = 224;
constexpr uint32_t kShtSymtab = 2, kShtDynsym = 11, kShtNobits = 8;

template <class T> bool readAt(const uint8_t *data, size_t size, uint64_t offset, T &out) {
  if (offset > size || sizeof(T) > size - offset)
    return false;
  std::memcpy(&out, data + offset, sizeof(T));
  return true;
}

struct Section {
  uint32_t type;
  uint64_t addr, offset, size;
  uint32_t link;
  uint64_t entsize;
};

struct Symbol {
  uint64_t value;
  uint64_t size;
};

// A kernel the code object defines: its symbol and its descriptor.
struct KernelInfo {
  uint32_t kernargSize = 0;
  uint32_t groupSegmentSize = 0;
  uint32_t maxFlatWorkgroupSize = 0; // from the metadata note; 0 when not found
  bool hostcallBuffer = false;       // the note lists a hidden_hostcall_buffer argument
};

// Reads a msgpack unsigned integer or string at `at`; advances `at`.
bool msgpackUint(const uint8_t *p, uint64_t end, uint64_t &at, uint32_t &out) {
  if (at >= end)
    return false;
  uint8_t tag = p[at++];
  if (tag < 0x80) {
    out = tag;
    return true;
  }
  int bytes = tag == 0xcc ? 1 : tag == 0xcd ? 2 : tag == 0xce ? 4 : 0;
  if (!bytes || at + bytes > end)
    return false;
  out = 0;
  for (int i = 0; i < bytes; ++i)
    out = out << 8 | p[at++];
  return true;
}
bool msgpackString(const uint8_t *p, uint64_t end, uint64_t &at, std::string &out) {
  if (at >= end)
    return false;
  uint8_t tag = p[at++];
  uint64_t length;
  if ((tag & 0xe0) == 0xa0)
    length = tag & 0x1f;
  else if (tag == 0xd9 && at < end)
    length = p[at++];
  else
    return false;
  if (at + length > end)
    return false;
  out.assign(reinterpret_cast<const char *>(p + at), length);
  at += length;
  return true;
}

// The code object v4+ metadata (a msgpack map in the NT_AMDGPU_METADATA note)
// lists each kernel's keys in sorted order: `.max_flat_workgroup_size` comes
// before its kernel's `.name`. A small scan, not a msgpack parser.
void readMaxFlatWorkgroupSizes(const uint8_t *image, uint64_t begin, uint64_t end,
                               std::map<std::string, KernelInfo> &kernels) {
  auto key = [](const char *text) {
    std::string k(1, char(0xa0 | std::strlen(text)));
    return k + text;
  };
  const std::string maxKey = key(".max_flat_workgroup_size"), nameKey = key(".name");
  std::string_view bytes(reinterpret_cast<const char *>(image + begin), end - begin);
  size_t at = 0;
  while ((at = bytes.find(maxKey, at)) != std::string_view::npos) {
    uint64_t cursor = begin + at + maxKey.size();
    uint32_t size;
    at += maxKey.size();
    if (!msgpackUint(image, end, cursor, size))
      continue;
    size_t name = bytes.find(nameKey, cursor - begin);
    if (name == std::string_view::npos)
      return;
    uint64_t nameAt = begin + name + nameKey.size();
    std::string kernel;
    if (msgpackString(image, end, nameAt, kernel))
      if (auto it = kernels.find(kernel); it != kernels.end())
        it->second.maxFlatWorkgroupSize = size;
  }
}

// Parses `image` as an AMDGPU ELF; fills `kernels` with every symbol `f` that
// has an `f.kd` descriptor. Returns an error text, empty when the image is good.
std::string parseCodeObject(const uint8_t *image, std::map<std::string, KernelInfo> &kernels,
                            uint32_t elfMach) {
  if (!image)
    return "null image";
  // Only the header can be read before the size is known.
  static const uint8_t kMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (std::memcmp(image, kMagic, 4) != 0)
    return "not an ELF file";
  if (image[4] != 2 /*ELFCLASS64*/ || image[5] != 1 /*little endian*/)
    return "not a little-endian ELF64 file";
  uint16_t machine, shentsize, shnum, phentsize, phnum;
  uint64_t shoff, phoff;
  std::memcpy(&machine, image + 18, 2);
  std::memcpy(&phoff, image + 32, 8);
  std::memcpy(&shoff, image + 40, 8);
  std::memcpy(&phentsize, image + 54, 2);
  std::memcpy(&phnum, image + 56, 2);
  std::memcpy(&shentsize, image + 58, 2);
  std::memcpy(&shnum, image + 60, 2);
  if (machine != kEmAmdgpu)
    return "e_machine is " + std::to_string(machine) + ", not EM_AMDGPU (224)";
  uint32_t flags;
  std::memcpy(&flags, image + 48, 4);
  if ((flags & 0xff) != elfMach)
    return "the code object is for EF_AMDGPU_MACH " + std::to_string(flags & 0xff) + ", the device is " +
           std::to_string(elfMach);
  if (shentsize != 64 || shnum == 0)
    return "no section headers";
  // The image size is not passed (as with real HIP): the section header table
  // ends the file for lld's output; bound every read by the furthest extent.
  uint64_t size = shoff + uint64_t(shnum) * shentsize;
  if (phoff + uint64_t(phnum) * phentsize > size)
    size = phoff + uint64_t(phnum) * phentsize;
  std::vector<Section> sections(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint8_t *h = image + shoff + uint64_t(i) * 64;
    Section &s = sections[i];
    std::memcpy(&s.type, h + 4, 4);
    std::memcpy(&s.addr, h + 16, 8);
    std::memcpy(&s.offset, h + 24, 8);
    std::memcpy(&s.size, h + 32, 8);
    std::memcpy(&s.link, h + 40, 4);
    std::memcpy(&s.entsize, h + 56, 8);
    if (s.type != kShtNobits && s.offset + s.size > shoff)
      return "section " + std::to_string(i) + " extends past the section header table";
  }
  std::map<std::string, Symbol> symbols;
  for (const Section &s : sections) {
    if (s.type != kShtSymtab && s.type != kShtDynsym)
      continue;
    if (s.entsize != 24 || s.link >= sections.size())
      return "malformed symbol table";
    const Section &strings = sections[s.link];
    for (uint64_t at = s.offset; at + 24 <= s.offset + s.size; at += 24) {
      uint32_t nameOffset;
      Symbol sym;
      readAt(image, size, at, nameOffset);
      readAt(image, size, at + 8, sym.value);
      readAt(image, size, at + 16, sym.size);
      if (nameOffset == 0)
        continue;
      if (nameOffset >= strings.size)
        return "symbol name outside its string table";
      const char *name = reinterpret_cast<const char *>(image + strings.offset + nameOffset);
      size_t length = strnlen(name, strings.size - nameOffset);
      symbols.emplace(std::string(name, length), sym);
    }
  }
  if (symbols.empty())
    return "no symbol table";
  // Maps a virtual address to its bytes in the file through the section holding it.
  auto fileOffset = [&](uint64_t address, uint64_t bytes) -> std::optional<uint64_t> {
    for (const Section &s : sections)
      if (s.type != kShtNobits && s.addr != 0 && address >= s.addr && address + bytes <= s.addr + s.size)
        return s.offset + (address - s.addr);
    return std::nullopt;
  };
  for (const auto &[name, sym] : symbols) {
    if (name.size() < 4 || name.compare(name.size() - 3, 3, ".kd") != 0)
      continue;
    std::string kernel = name.substr(0, name.size() - 3);
    if (!symbols.count(kernel))
      return "descriptor " + name + " without its kernel symbol";
    if (sym.size != 64)
      return "kernel descriptor " + name + " is " + std::to_string(sym.size) + " bytes, not 64";
    std::optional<uint64_t> at = fileOffset(sym.value, 64);
    if (!at)
      return "kernel descriptor " + name + " is not in the file";
    KernelInfo info;
    readAt(image, size, *at + 0, info.groupSegmentSize);
    readAt(image, size, *at + 8, info.kernargSize);
    kernels[kernel] = info;
  }
  if (kernels.empty())
    return "no kernel descriptors (<name>.kd)";
  constexpr uint32_t kShtNote = 7;
  for (const Section &s : sections)
    if (s.type == kShtNote) {
      readMaxFlatWorkgroupSizes(image, s.offset, s.offset + s.size, kernels);
      // The hostcall buffer (device printf) among a kernel's hidden
      // arguments; tessel's code objects hold one kernel each.
      const std::string_view note(reinterpret_cast<const char *>(image + s.offset), s.size);
      if (note.find("hidden_hostcall_buffer") != std::string_view::npos)
        for (auto &entry : kernels)
          entry.second.hostcallBuffer = true;
    }
  return {};
}

// ---- state ---------------------------------------------------------------------------------

struct Module {
  std::map<std::string, KernelInfo> kernels;
  int device; // current when it was loaded
};
struct Stream {
  int device; // current when it was made
};
struct Function {
  Module *module;
  std::string name;
  KernelInfo info;
};

// HIP's current device is per host thread.
thread_local int currentDevice = 0;

struct State {
  std::mutex mutex;
  std::set<Stream *> streams;
  int runtimeVersion = 60241134; // HIP 6.2
  std::map<uintptr_t, size_t> allocations; // start -> bytes
  std::set<Module *> modules;
  std::map<Module *, std::vector<std::unique_ptr<Function>>> functions;
  std::optional<FakeHipLaunch> last;
  std::string lastKernel;
  std::vector<uint8_t> lastKernarg;
  int launches = 0;
};
State &state() {
  static State *s = new State; // never destroyed: HIP calls may come from static destructors
  return *s;
}

// Whether [p, p + bytes) lies inside one fake allocation.
bool isDeviceRange(State &s, const void *p, size_t bytes) {
  auto address = reinterpret_cast<uintptr_t>(p);
  auto it = s.allocations.upper_bound(address);
  if (it == s.allocations.begin())
    return false;
  --it;
  return address >= it->first && address + bytes <= it->first + it->second;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) hipError_t hipGetDeviceCount(int *count) {
  if (!count)
    return hipErrorInvalidValue;
  *count = kDeviceCount;
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipSetDevice(int device) {
  if (device < 0 || device >= kDeviceCount)
    return hipErrorInvalidDevice;
  currentDevice = device;
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipGetDevice(int *device) {
  if (!device)
    return hipErrorInvalidValue;
  *device = currentDevice;
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipStreamCreate(void **stream) {
  if (!stream)
    return hipErrorInvalidValue;
  auto *s = new Stream{currentDevice};
  std::lock_guard lock(state().mutex);
  state().streams.insert(s);
  *stream = s;
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipStreamDestroy(void *stream) {
  std::lock_guard lock(state().mutex);
  auto *s = static_cast<Stream *>(stream);
  if (!state().streams.erase(s))
    return hipErrorInvalidHandle;
  delete s;
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipStreamSynchronize(void *stream) {
  std::lock_guard lock(state().mutex);
  return !stream || state().streams.count(static_cast<Stream *>(stream)) ? hipSuccess : hipErrorInvalidHandle;
}

__attribute__((visibility("default"))) hipError_t hipDeviceGetName(char *name, int len, int device) {
  if (!name || len <= 0)
    return hipErrorInvalidValue;
  if (device < 0 || device >= kDeviceCount)
    return hipErrorInvalidDevice;
  std::strncpy(name, kDevices[device].name, size_t(len));
  name[len - 1] = '\0';
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipGetDeviceProperties(void *props, int device) {
  if (!props)
    return hipErrorInvalidValue;
  if (device < 0 || device >= kDeviceCount)
    return hipErrorInvalidDevice;
  char *p = static_cast<char *>(props);
  std::memset(p, 0, kArchNameOffset + 256);
  std::strncpy(p, kDevices[device].name, 255);
  std::strncpy(p + kArchNameOffset, kDevices[device].archName, 255);
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipRuntimeGetVersion(int *version) {
  if (!version)
    return hipErrorInvalidValue;
  std::lock_guard lock(state().mutex);
  *version = state().runtimeVersion;
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipMalloc(void **p, size_t bytes) {
  if (!p)
    return hipErrorInvalidValue;
  if (bytes == 0) { // as HIP: a null pointer and success
    *p = nullptr;
    return hipSuccess;
  }
  void *memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!memory)
    return 2; // hipErrorOutOfMemory
  std::lock_guard lock(state().mutex);
  state().allocations[reinterpret_cast<uintptr_t>(memory)] = bytes;
  *p = memory;
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipFree(void *p) {
  if (!p)
    return hipSuccess;
  std::lock_guard lock(state().mutex);
  auto it = state().allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == state().allocations.end())
    return hipErrorInvalidValue;
  state().allocations.erase(it);
  std::free(p);
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipMemcpy(void *dst, const void *src, size_t bytes,
                                                            int kind) {
  if (bytes == 0)
    return hipSuccess;
  if (!dst || !src)
    return hipErrorInvalidValue;
  State &s = state();
  {
    std::lock_guard lock(s.mutex);
    bool ok = true;
    switch (kind) {
    case hipMemcpyHostToHost: ok = !isDeviceRange(s, dst, 1) && !isDeviceRange(s, src, 1); break;
    case hipMemcpyHostToDevice: ok = isDeviceRange(s, dst, bytes); break;
    case hipMemcpyDeviceToHost: ok = isDeviceRange(s, src, bytes); break;
    case hipMemcpyDeviceToDevice: ok = isDeviceRange(s, dst, bytes) && isDeviceRange(s, src, bytes); break;
    case hipMemcpyDefault: break;
    default: ok = false;
    }
    if (!ok)
      return hipErrorInvalidValue;
  }
  std::memmove(dst, src, bytes);
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipModuleLoadData(void **module, const void *image) {
  if (!module || !image)
    return hipErrorInvalidValue;
  auto m = std::make_unique<Module>();
  m->device = currentDevice;
  std::string why = parseCodeObject(static_cast<const uint8_t *>(image), m->kernels, kDevices[m->device].elfMach);
  if (!why.empty()) {
    if (std::getenv("FAKE_HIP_VERBOSE"))
      std::fprintf(stderr, "fake hip: hipModuleLoadData: %s\n", why.c_str());
    return hipErrorInvalidImage;
  }
  std::lock_guard lock(state().mutex);
  state().modules.insert(m.get());
  *module = m.release();
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipModuleUnload(void *module) {
  std::lock_guard lock(state().mutex);
  auto *m = static_cast<Module *>(module);
  if (!state().modules.erase(m))
    return hipErrorInvalidHandle;
  state().functions.erase(m);
  delete m;
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipModuleGetFunction(void **function, void *module,
                                                                       const char *name) {
  if (!function || !name || !*name)
    return hipErrorInvalidValue;
  std::lock_guard lock(state().mutex);
  auto *m = static_cast<Module *>(module);
  if (!state().modules.count(m))
    return hipErrorInvalidHandle;
  auto it = m->kernels.find(name);
  if (it == m->kernels.end())
    return hipErrorNotFound;
  auto f = std::make_unique<Function>(Function{m, name, it->second});
  *function = f.get();
  state().functions[m].push_back(std::move(f));
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipModuleLaunchKernel(
    void *function, unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX, unsigned blockY,
    unsigned blockZ, unsigned sharedMemBytes, void *stream, void **kernelParams, void **extra) {
  State &s = state();
  std::lock_guard lock(s.mutex);
  auto *f = static_cast<Function *>(function);
  bool known = false;
  for (const auto &[m, fs] : s.functions)
    for (const auto &owned : fs)
      known |= owned.get() == f;
  if (!known)
    return hipErrorInvalidHandle;
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return hipErrorInvalidValue;
  if (blockX == 0 || blockY == 0 || blockZ == 0 ||
      uint64_t(blockX) * blockY * blockZ > kMaxThreadsPerBlock)
    return hipErrorInvalidConfiguration;
  // As HIP: no larger a workgroup than the kernel's launch bounds.
  if (f->info.maxFlatWorkgroupSize && uint64_t(blockX) * blockY * blockZ > f->info.maxFlatWorkgroupSize)
    return hipErrorLaunchFailure;
  if (kernelParams && extra)
    return hipErrorInvalidValue;
  // A stream (or, for the null stream, the current device) of another device
  // than the kernel's module: HIP refuses it.
  if (stream ? !s.streams.count(static_cast<Stream *>(stream)) ||
                   static_cast<Stream *>(stream)->device != f->module->device
             : currentDevice != f->module->device)
    return hipErrorInvalidHandle;
  const uint8_t *buffer = nullptr;
  size_t bytes = 0;
  if (extra) {
    // The layout HIP requires: exactly these five entries.
    if (extra[0] != kBufferPointer || extra[2] != kBufferSize || extra[4] != kEnd || !extra[3])
      return hipErrorInvalidValue;
    buffer = static_cast<const uint8_t *>(extra[1]);
    bytes = *static_cast<const size_t *>(extra[3]);
    if (bytes && !buffer)
      return hipErrorInvalidValue;
  } else if (!kernelParams && f->info.kernargSize != 0) {
    return hipErrorInvalidValue;
  }
  s.lastKernel = f->name;
  s.lastKernarg.assign(buffer, buffer + bytes);
  FakeHipLaunch record{};
  record.kernel = s.lastKernel.c_str();
  record.grid[0] = gridX, record.grid[1] = gridY, record.grid[2] = gridZ;
  record.block[0] = blockX, record.block[1] = blockY, record.block[2] = blockZ;
  record.sharedMemBytes = sharedMemBytes;
  record.stream = stream;
  record.device = f->module->device;
  record.usedKernelParams = kernelParams != nullptr;
  record.kernarg = s.lastKernarg.data();
  record.kernargBytes = bytes;
  record.descriptorKernargSize = f->info.kernargSize;
  record.descriptorGroupSegmentSize = f->info.groupSegmentSize;
  record.maxFlatWorkgroupSize = f->info.maxFlatWorkgroupSize;
  record.hostcallBuffer = f->info.hostcallBuffer;
  s.last = record;
  ++s.launches;
  return hipSuccess;
}

__attribute__((visibility("default"))) hipError_t hipDeviceSynchronize() { return hipSuccess; }

__attribute__((visibility("default"))) const char *hipGetErrorString(hipError_t e) {
  switch (e) {
  case hipSuccess: return "hipSuccess";
  case hipErrorInvalidValue: return "hipErrorInvalidValue";
  case hipErrorInvalidConfiguration: return "hipErrorInvalidConfiguration";
  case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
  case hipErrorInvalidImage: return "hipErrorInvalidImage";
  case hipErrorInvalidHandle: return "hipErrorInvalidHandle";
  case hipErrorNotFound: return "hipErrorNotFound";
  case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
  default: return "hipErrorUnknown (fake)";
  }
}

// ---- accessors for tests -------------------------------------------------------------------

__attribute__((visibility("default"))) const FakeHipLaunch *fakeHipLastLaunch() {
  std::lock_guard lock(state().mutex);
  return state().last ? &*state().last : nullptr;
}

__attribute__((visibility("default"))) int fakeHipLaunchCount() {
  std::lock_guard lock(state().mutex);
  return state().launches;
}

__attribute__((visibility("default"))) void fakeHipSetRuntimeVersion(int version) {
  std::lock_guard lock(state().mutex);
  state().runtimeVersion = version;
}

__attribute__((visibility("default"))) int fakeHipLiveAllocations() {
  std::lock_guard lock(state().mutex);
  return int(state().allocations.size());
}

__attribute__((visibility("default"))) int fakeHipLiveModules() {
  std::lock_guard lock(state().mutex);
  return int(state().modules.size());
}

__attribute__((visibility("default"))) void fakeHipReset() {
  std::lock_guard lock(state().mutex);
  state().last.reset();
  state().lastKernarg.clear();
  state().launches = 0;
}

} // extern "C"
