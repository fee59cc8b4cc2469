// Writes tessel's code objects for the problems scripts/codegen-table.py
// compares with the hand-written HIP kernels in bench/hip/: vector add,
// softmax f32 (N = 781, N = 4096) and layer norm f32 (N = 8192), for each
// target (gfx90a, gfx942, gfx950, gfx1100). Compiles; runs nothing.
//
//   build/bench/bench-code-objects DIR [ARCH...]
//
// For each problem and target, in DIR:
//   <problem>-<arch>.hsaco  the linked code object
//   <problem>-<arch>.s      its AMDGPU assembly (CompiledKernel::assembly)
//   <problem>-<arch>.json   the launch: kernel symbol, workgroup size in
//                           lanes, wave size, elements per workgroup, element
//                           slots per thread
// Kernels are launched through the library's own entry points
// (kernels::softmax, kernels::layer_norm; vector add as bench-vector-add
// launches it) with dry launches: the runtime picks the configuration and
// compiles exactly what a real launch would, and nothing runs.
#include <tessel/kernels/layer_norm.hpp>
#include <tessel/kernels/softmax.hpp>

#include "vector_add_kernel.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace tessel;
using bench::kVectorBlock;
using bench::kVectorN;
using bench::kVectorWarps;
using bench::vector_add;

namespace {

// One problem's result: the compiled kernel and what one workgroup covers.
struct Output {
  std::string problem;
  CompiledKernel kernel;          // a copy: the kernel object owning the original may go first
  long elementsPerWorkgroup = 0; // real elements (not padding) one workgroup handles
  long slotsPerWorkgroup = 0;    // elements including the block's padding
};

void write(const std::filesystem::path &dir, const std::string &arch, const Output &o) {
  const CompiledKernel &k = o.kernel;
  const std::string stem = (dir / (o.problem + "-" + arch)).string();
  std::ofstream(stem + ".hsaco", std::ios::binary)
      .write(reinterpret_cast<const char *>(k.hsaco.data()), std::streamsize(k.hsaco.size()));
  std::ofstream(stem + ".s") << k.assembly();
  std::ofstream json(stem + ".json");
  json << "{\"problem\": \"" << o.problem << "\", \"arch\": \"" << arch << "\", \"kernel\": \"" << k.name
       << "\", \"workgroup_size\": " << k.blockSize << ", \"wave_size\": " << k.waveSize
       << ", \"elements_per_workgroup\": " << o.elementsPerWorkgroup
       << ", \"slots_per_thread\": " << (o.slotsPerWorkgroup / long(k.blockSize))
       << ", \"lds_bytes\": " << k.ldsBytes << "}\n";
  std::printf("%-16s %-8s %-24s %4u lanes, %5ld elements per workgroup, %zu-byte code object\n",
              o.problem.c_str(), arch.c_str(), k.name.c_str(), k.blockSize, o.elementsPerWorkgroup,
              k.hsaco.size());
}

CompiledKernel copyOf(const CompiledKernel *k, const std::string &what) {
  if (!k)
    throw Error(what + ": the launch compiled no kernel");
  return *k;
}

void compileFor(const std::string &arch, const std::filesystem::path &dir) {
  Device dev = Device::emulator(arch);
  std::vector<Output> outputs;

  {
    auto add = jit<vector_add>();
    auto x = dev.alloc<float>(kVectorN), y = dev.alloc<float>(kVectorN), out = dev.alloc<float>(kVectorN);
    add.launch(dev, {cdiv(kVectorN, kVectorBlock)}, {.num_warps = kVectorWarps}, x, y, out, kVectorN,
               kVectorBlock);
    outputs.push_back({"vector_add", copyOf(add.lastCompiled(), "vector add"), kVectorBlock, kVectorBlock});
  }
  // Softmax on tutorial 02's row count; the N = 4096 rows take the same M.
  for (int N : {781, 4096}) {
    const int M = 1823;
    kernels::RowConfig cfg = kernels::rowConfig("softmax", N, dev.waveSize());
    auto in = dev.alloc<float>(size_t(M) * N), out = dev.alloc<float>(size_t(M) * N);
    kernels::softmax(dev, in, out, M, N, N, N);
    outputs.push_back({"softmax_" + std::to_string(N), copyOf(kernels::softmaxKernel<float>().lastCompiled(), "softmax"),
                       long(cfg.rows) * N, long(cfg.rows) * cfg.block});
  }
  // Layer norm on tutorial 05's shape.
  {
    const int M = 1151, N = 8192;
    kernels::RowConfig cfg = kernels::rowConfig("layer_norm", N, dev.waveSize());
    auto x = dev.alloc<float>(size_t(M) * N), y = dev.alloc<float>(size_t(M) * N);
    auto w = dev.alloc<float>(N), b = dev.alloc<float>(N);
    auto mean = dev.alloc<float>(M), rstd = dev.alloc<float>(M);
    kernels::layer_norm(dev, x, y, w, b, mean, rstd, M, N, N, N);
    outputs.push_back({"layer_norm_8192", copyOf(kernels::layerNormKernel<float>().lastCompiled(), "layer norm"),
                       long(cfg.rows) * N,
                       long(cfg.rows) * cfg.block});
  }
  for (const Output &o : outputs)
    write(dir, arch, o);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: %s DIR [ARCH...]   (ARCH: gfx90a gfx942 gfx950 gfx1100; default all)\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::vector<std::string> archs(argv + 2, argv + argc);
  if (archs.empty())
    archs = {"gfx90a", "gfx942", "gfx950", "gfx1100"};
  // A private cache unless the caller chose one: every kernel is compiled here.
  const bool ownCache = !std::getenv("TESSEL_CACHE_DIR");
  std::string cacheDir = std::filesystem::temp_directory_path() / ("tessel-code-objects-" + std::to_string(getpid()));
  if (ownCache)
    setenv("TESSEL_CACHE_DIR", cacheDir.c_str(), 1);
  int status = 0;
  try {
    std::filesystem::create_directories(dir);
    // Everything a launch does except running the kernel.
    detail::setDryLaunches(true);
    for (const std::string &arch : archs)
      compileFor(arch, dir);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench-code-objects: %s\n", e.what());
    status = 1;
  }
  if (ownCache)
    std::filesystem::remove_all(cacheDir);
  return status;
}
