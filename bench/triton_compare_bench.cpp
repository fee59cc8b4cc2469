// tessel's side of scripts/triton-compare.py: writes tessel's code objects for
// the kernels of Triton's tutorials, written in tessel the way the tutorials
// write them in Triton (bench/triton/*.py), for gfx942, gfx950 and gfx1100.
// Compiles; runs nothing. Triton itself is never used here.
//
//   build/bench/bench-triton-compare DIR [ARCH...] [--case TEXT]...
//
// For each case and target, in DIR:
//   <case>-<arch>.hsaco  the linked code object
//   <case>-<arch>.s      its AMDGPU assembly (CompiledKernel::assembly)
//   <case>-<arch>.json   what was compiled: kernel symbol, problem, form,
//                        element type, shape, blocks, waves, stages, LDS bytes
// `--case TEXT` keeps only the cases whose name contains TEXT (repeatable).
//
// The cases (the driver checks it compiles Triton's with the same values):
//   vector_add                 tutorial 01: n = 98432, BLOCK_SIZE 1024, 4 waves
//   softmax                    tutorial 02: 1823 x 781 f32, persistent rows,
//                              BLOCK_SIZE 1024, 8 waves
//   layer_norm                 tutorial 05 forward: 1151 x 8192 f16, three
//                              loops over BLOCK_SIZE 8192, 8 waves
//   matmul-triton03-<t>-w<n>   tutorial 03's kernel line by line (pointers
//                              advanced each iteration, strides at run time,
//                              masks on K, `% M` row offsets, assumes)
//   matmul-tutorial03-<t>-w<n> tessel's tutorials/03 (offsets from k, masks
//                              on rows and K, C in f32 as the tutorial writes)
//   matmul-library-<t>-w<n>    tessel::kernels::matmul (MatmulConfig)
// for t in f16, bf16, fp8 (not tutorial03; E4M3 A and B of the family the
// target's matrix cores take, C in f16, per-tensor scales of 1 for the
// library; gfx942 and gfx950 only) and n in 4, 8: M = N = K = 4096, 128 x 128 x 64
// blocks, GROUP_SIZE_M 8, num_stages 2. tessel's own launches set
// fp_fusion (Triton's enable_fp_fusion default); the library sets its own.
//   attention-d<d>-<nc|causal>-<t>  kernels::attention's block program
//                              (attention_fwd<T>, the library's kernel
//                              object) launched with the arguments
//                              kernels::attention passes: batch 1, 16 heads,
//                              seq 4096, head dim d in 64, 128, not causal or
//                              causal, t in f16, bf16; blocks and waves from
//                              kernels::attentionConfig for the target's wave
//                              size (wave64: 128 x 64, 4 waves at d 64,
//                              128 x 32, 4 waves at d 128; wave32: 64 x 32
//                              and 32 x 32, 8 waves), num_stages 1,
//                              fp_fusion on as for Triton.
//
// Launches are dry (detail::setDryLaunches): the runtime specializes on the
// real arguments (ints equal to 1 or divisible by 16, 16-byte aligned
// buffers under 2 GiB) and compiles exactly what a launch would.
#include <tessel/kernels/attention.hpp>
#include <tessel/kernels/matmul.hpp>

#include "matmul_forms.hpp"
#include "vector_add_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <unistd.h>
#include <vector>

using namespace tessel;

namespace {

// ---- tutorial 02: softmax, as bench/triton/softmax.py ----
void softmax_kernel(Ptr<f32> output_ptr, Ptr<f32> input_ptr, i32 input_row_stride, i32 output_row_stride,
                    i32 n_rows, i32 n_cols, Const<int> BLOCK_SIZE) {
  auto row_start = program_id(0);
  auto row_step = num_programs(0);
  for_range(row_start, n_rows, row_step, [&](i32 row_idx) {
    auto row_start_ptr = input_ptr + row_idx * input_row_stride;
    auto col_offsets = arange(0, BLOCK_SIZE);
    auto input_ptrs = row_start_ptr + col_offsets;
    auto mask = col_offsets < n_cols;
    auto row = load(input_ptrs, mask, -std::numeric_limits<float>::infinity());
    auto row_minus_max = row - max(row, 0);
    auto numerator = exp(row_minus_max);
    auto denominator = sum(numerator, 0);
    auto softmax_output = numerator / denominator;
    auto output_row_start_ptr = output_ptr + row_idx * output_row_stride;
    auto output_ptrs = output_row_start_ptr + col_offsets;
    store(output_ptrs, softmax_output, mask);
  });
}

// ---- tutorial 05: layer norm forward, as bench/triton/layer_norm.py ----
// Triton promotes f16 operands of f32 arithmetic and converts on store
// implicitly; here the casts are written out.
void layer_norm_fwd_fused(Ptr<half> X, Ptr<half> Y, Ptr<half> W, Ptr<half> B, Ptr<f32> Mean, Ptr<f32> Rstd,
                          i32 stride, i32 N, f32 eps, Const<int> BLOCK_SIZE) {
  auto row = program_id(0);
  Y += row * stride;
  X += row * stride;
  auto _mean = zeros<float>({BLOCK_SIZE});
  for_range(0, N, BLOCK_SIZE, [&](i32 off) {
    auto cols = off + arange(0, BLOCK_SIZE);
    auto a = cast<float>(load(X + cols, cols < N, 0));
    _mean = _mean + a;
  });
  auto mean = sum(_mean, 0) / cast<float>(N);
  auto _var = zeros<float>({BLOCK_SIZE});
  for_range(0, N, BLOCK_SIZE, [&](i32 off) {
    auto cols = off + arange(0, BLOCK_SIZE);
    auto x = cast<float>(load(X + cols, cols < N, 0));
    x = where(cols < N, x - mean, 0.0f);
    _var = _var + x * x;
  });
  auto var = sum(_var, 0) / cast<float>(N);
  auto rstd = 1.0f / sqrt(var + eps);
  store(Mean + row, mean);
  store(Rstd + row, rstd);
  for_range(0, N, BLOCK_SIZE, [&](i32 off) {
    auto cols = off + arange(0, BLOCK_SIZE);
    auto mask = cols < N;
    auto w = load(W + cols, mask);
    auto b = load(B + cols, mask);
    auto x = cast<float>(load(X + cols, mask, 0));
    auto x_hat = (x - mean) * rstd;
    auto y = x_hat * cast<float>(w) + cast<float>(b);
    store(Y + cols, cast<half>(y), mask);
  });
}

// Tutorial 03 (bench/triton/matmul.py) line by line and tessel's
// tutorials/03 on T: bench::triton_matmul and bench::tutorial_matmul
// (matmul_forms.hpp). Triton's ACTIVATION ("" in the tutorial's launch) is
// left out: it compiles to nothing.

// One compiled case: what the driver needs to pair it with Triton's.
struct Case {
  std::string name, problem, form, dtype;
  std::string shape; // "n=98432", "M=1823 N=781", ...
  std::vector<int> block;
  unsigned warps = 4, stages = 1;
  std::function<const CompiledKernel *(Device &)> compile;
  int head_dim = 0;    // attention
  bool causal = false; // attention
  // Blocks and waves that depend on the target (attention's wave32 config).
  std::function<void(Case &, const Device &)> configure;
  // The targets the case is for (empty: all).
  std::vector<std::string> archs;
};

constexpr int kM = 4096, kN = 4096, kK = 4096, kBM = 128, kBN = 128, kBK = 64, kGroupM = 8, kStages = 2;

// transB: B stored [N, K] (strides (1, K)), form "triton03bt".
template <class T> Case matmulTriton03(const char *dtype, unsigned warps, bool transB = false) {
  const char *form = transB ? "triton03bt" : "triton03";
  return {std::string("matmul-") + form + "-" + dtype + "-w" + std::to_string(warps), "matmul", form, dtype,
          "M=N=K=4096", {kBM, kBN, kBK}, warps, kStages, [warps, transB](Device &dev) {
            static auto kernel = jit(&bench::triton_matmul<T>, "matmul_kernel");
            auto a = dev.alloc<T>(size_t(kM) * kK), b = dev.alloc<T>(size_t(kK) * kN);
            auto c = dev.alloc<T>(size_t(kM) * kN);
            kernel.launch(dev, {cdiv(kM, kBM) * cdiv(kN, kBN)},
                          {.num_warps = warps, .num_stages = kStages, .fp_fusion = true}, a, b, c, kM, kN, kK, kK, 1,
                          transB ? 1 : kN, transB ? kK : 1, kN, 1, kBM, kBN, kBK, kGroupM);
            return kernel.lastCompiled();
          }};
}

template <class T> Case matmulTutorial03(const char *dtype, unsigned warps) {
  return {std::string("matmul-tutorial03-") + dtype + "-w" + std::to_string(warps), "matmul", "tutorial03", dtype,
          "M=N=K=4096", {kBM, kBN, kBK}, warps, kStages, [warps](Device &dev) {
            static auto kernel = jit(&bench::tutorial_matmul<T>, "matmul_block");
            auto a = dev.alloc<T>(size_t(kM) * kK), b = dev.alloc<T>(size_t(kK) * kN);
            auto c = dev.alloc<float>(size_t(kM) * kN);
            kernel.launch(dev, {cdiv(kM, kBM) * cdiv(kN, kBN)},
                          {.num_warps = warps, .num_stages = kStages, .fp_fusion = true}, a, b, c, kM, kN, kK, kBM,
                          kBN, kBK, kGroupM);
            return kernel.lastCompiled();
          }};
}

template <class T> Case matmulLibrary(const char *dtype, unsigned warps) {
  return {std::string("matmul-library-") + dtype + "-w" + std::to_string(warps), "matmul", "library", dtype,
          "M=N=K=4096", {kBM, kBN, kBK}, warps, kStages, [warps](Device &dev) {
            auto a = dev.alloc<T>(size_t(kM) * kK), b = dev.alloc<T>(size_t(kK) * kN);
            auto c = dev.alloc<T>(size_t(kM) * kN);
            kernels::matmul(dev, a, b, c, {.M = kM, .N = kN, .K = kK}, nullptr,
                            kernels::MatmulConfig{kBM, kBN, kBK, kGroupM, warps, kStages});
            return kernels::matmulKernel<T>().lastCompiled();
          }};
}

// The fp8 matmuls: E4M3 A and B in the family the target's matrix cores
// take (FNUZ on gfx942, OCP on gfx950), C in f16; gfx942 and gfx950 only.
template <class F> const CompiledKernel *triton03Fp8(Device &dev, unsigned warps) {
  static auto kernel = jit(&bench::triton_matmul<F, half>, "matmul_kernel");
  auto a = dev.alloc<F>(size_t(kM) * kK), b = dev.alloc<F>(size_t(kK) * kN);
  auto c = dev.alloc<half>(size_t(kM) * kN);
  kernel.launch(dev, {cdiv(kM, kBM) * cdiv(kN, kBN)}, {.num_warps = warps, .num_stages = kStages, .fp_fusion = true},
                a, b, c, kM, kN, kK, kK, 1, kN, 1, kN, 1, kBM, kBN, kBK, kGroupM);
  return kernel.lastCompiled();
}
Case matmulTriton03Fp8(unsigned warps) {
  Case c{std::string("matmul-triton03-fp8-w") + std::to_string(warps), "matmul", "triton03", "fp8", "M=N=K=4096",
         {kBM, kBN, kBK}, warps, kStages, [warps](Device &dev) {
           return dev.arch() == "gfx950" ? triton03Fp8<float8_e4m3fn>(dev, warps)
                                         : triton03Fp8<float8_e4m3fnuz>(dev, warps);
         }};
  c.archs = {"gfx942", "gfx950"};
  return c;
}
template <class F> const CompiledKernel *libraryFp8(Device &dev, unsigned warps) {
  auto a = dev.alloc<F>(size_t(kM) * kK), b = dev.alloc<F>(size_t(kK) * kN);
  auto c = dev.alloc<half>(size_t(kM) * kN);
  auto scales = dev.upload(std::vector<float>{1.0f});
  kernels::matmul(dev, a, b, c, {.M = kM, .N = kN, .K = kK}, {scales, scales}, nullptr,
                  kernels::MatmulConfig{kBM, kBN, kBK, kGroupM, warps, kStages});
  return kernels::matmulFp8Kernel<F, F, half>().lastCompiled();
}
Case matmulLibraryFp8(unsigned warps) {
  Case c{std::string("matmul-library-fp8-w") + std::to_string(warps), "matmul", "library", "fp8", "M=N=K=4096",
         {kBM, kBN, kBK}, warps, kStages, [warps](Device &dev) {
           return dev.arch() == "gfx950" ? libraryFp8<float8_e4m3fn>(dev, warps)
                                         : libraryFp8<float8_e4m3fnuz>(dev, warps);
         }};
  c.archs = {"gfx942", "gfx950"};
  return c;
}

constexpr int kMxBK = 64;

// E = float8_e4m3fn: mxfp8 at BLOCK_K 64 (gfx942, gfx950); E = int8_t: mxfp4
// (e2m1, two to a byte along K) at BLOCK_K 128 (gfx950: the f8f6f4 MFMAs).
template <class E> Case matmulTriton03Mx(unsigned warps) {
  constexpr bool fp4 = std::is_same_v<E, int8_t>;
  constexpr int bk = fp4 ? 2 * kMxBK : kMxBK, pack = fp4 ? 2 : 1;
  Case c{std::string("matmul-triton03mx-") + (fp4 ? "mxfp4" : "mxfp8") + "-w" + std::to_string(warps), "matmul",
         "triton03mx", fp4 ? "mxfp4" : "mxfp8", "M=N=K=4096", {kBM, kBN, bk}, warps, kStages, [warps, bk](Device &dev) {
           static auto kernel = jit(&bench::mx_matmul_kernel<E>, "mx_matmul_kernel");
           auto a = dev.alloc<E>(size_t(kM) * kK / pack), b = dev.alloc<E>(size_t(kK) * kN / pack);
           auto c = dev.alloc<half>(size_t(kM) * kN);
           auto as = dev.alloc<int8_t>(size_t(kM) * kK / 32), bs = dev.alloc<int8_t>(size_t(kN) * kK / 32);
           kernel.launch(dev, {cdiv(kM, kBM) * cdiv(kN, kBN)},
                         {.num_warps = warps, .num_stages = kStages, .fp_fusion = true}, a, b, c, as, bs, kM, kN, kK,
                         kK / pack, 1, kN, 1, kN, 1, kK / 32, 1, kK / 32, 1, kBM, kBN, bk, kGroupM);
           return kernel.lastCompiled();
         }};
  c.archs = fp4 ? std::vector<std::string>{"gfx950"} : std::vector<std::string>{"gfx942", "gfx950"};
  return c;
}

constexpr int kHeads = 16, kSeq = 4096;

// kernels::attention's launch, argument for argument (dense Q, K, V and out,
// one K/V head per Q head, scale 1 / sqrt(d)), but with fp_fusion on.
template <class T> Case attention(const char *dtype, int headDim, bool causal) {
  Case c{std::string("attention-d") + std::to_string(headDim) + (causal ? "-causal-" : "-nc-") + dtype,
         "attention", "kernels-attention", dtype, "Z=1 H=16 N_CTX=4096 D=" + std::to_string(headDim), {}, 4, 1,
         [headDim, causal](Device &dev) {
           const kernels::AttentionConfig cfg = kernels::attentionConfig(headDim, dev.waveSize());
           const size_t n = size_t(kHeads) * kSeq * headDim;
           auto q = dev.alloc<T>(n), k = dev.alloc<T>(n), v = dev.alloc<T>(n), out = dev.alloc<T>(n);
           auto lse = dev.alloc<float>(size_t(kHeads) * kSeq);
           const float qkScale = float(1.0 / std::sqrt(double(headDim))) * 1.44269504088896340736f;
           const int32_t sb = kHeads * kSeq * headDim, sh = kSeq * headDim, ss = headDim, sd = 1;
           auto &kernel = kernels::attentionKernel<T>();
           kernel.launch(dev, {uint32_t(cdiv(kSeq, cfg.BLOCK_M)), uint32_t(kHeads)},
                         {.num_warps = cfg.num_warps, .fp_fusion = true, .waves_per_eu = cfg.waves_per_eu}, q, k, v, out, lse, int32_t(kHeads),
                         int32_t(1), int32_t(kSeq), int32_t(kSeq), qkScale, sb, sh, ss, sd, sb, sh, ss, sd, sb, sh,
                         ss, sd, sb, sh, ss, sd, headDim, cfg.BLOCK_M, cfg.BLOCK_N, causal, cfg.early_v);
           return kernel.lastCompiled();
         }};
  c.head_dim = headDim;
  c.causal = causal;
  c.configure = [headDim](Case &self, const Device &dev) {
    const kernels::AttentionConfig cfg = kernels::attentionConfig(headDim, dev.waveSize());
    self.block = {cfg.BLOCK_M, cfg.BLOCK_N};
    self.warps = cfg.num_warps;
  };
  return c;
}

std::vector<Case> cases() {
  std::vector<Case> all;
  all.push_back({"vector_add", "vector_add", "tutorial01", "f32", "n=98432", {bench::kVectorBlock},
                 bench::kVectorWarps, 1, [](Device &dev) {
                   static auto kernel = jit<bench::vector_add>();
                   const int n = bench::kVectorN;
                   auto x = dev.alloc<float>(n), y = dev.alloc<float>(n), out = dev.alloc<float>(n);
                   kernel.launch(dev, {cdiv(n, bench::kVectorBlock)}, {.num_warps = bench::kVectorWarps}, x, y, out,
                                 n, bench::kVectorBlock);
                   return kernel.lastCompiled();
                 }});
  all.push_back({"softmax", "softmax", "tutorial02", "f32", "M=1823 N=781", {1024}, 8, 2, [](Device &dev) {
                   static auto kernel = jit<softmax_kernel>();
                   const int M = 1823, N = 781;
                   auto x = dev.alloc<float>(size_t(M) * N), y = dev.alloc<float>(size_t(M) * N);
                   kernel.launch(dev, {uint32_t(M)}, {.num_warps = 8, .num_stages = 2, .fp_fusion = true}, y, x, N,
                                 N, M, N, 1024);
                   return kernel.lastCompiled();
                 }});
  all.push_back({"layer_norm", "layer_norm", "tutorial05", "f16", "M=1151 N=8192", {8192}, 8, 1, [](Device &dev) {
                   static auto kernel = jit<layer_norm_fwd_fused>();
                   const int M = 1151, N = 8192;
                   auto x = dev.alloc<half>(size_t(M) * N), y = dev.alloc<half>(size_t(M) * N);
                   auto w = dev.alloc<half>(N), b = dev.alloc<half>(N);
                   auto mean = dev.alloc<float>(M), rstd = dev.alloc<float>(M);
                   kernel.launch(dev, {uint32_t(M)}, {.num_warps = 8, .fp_fusion = true}, x, y, w, b, mean, rstd,
                                 N, N, 1e-5f, 8192);
                   return kernel.lastCompiled();
                 }});
  for (unsigned warps : {4u, 8u}) {
    all.push_back(matmulTriton03<half>("f16", warps));
    all.push_back(matmulTriton03<bfloat16>("bf16", warps));
    all.push_back(matmulTriton03<half>("f16", warps, /*transB=*/true));
    all.push_back(matmulTutorial03<half>("f16", warps));
    all.push_back(matmulTutorial03<bfloat16>("bf16", warps));
    all.push_back(matmulLibrary<half>("f16", warps));
    all.push_back(matmulLibrary<bfloat16>("bf16", warps));
    all.push_back(matmulTriton03Fp8(warps));
    all.push_back(matmulLibraryFp8(warps));
    all.push_back(matmulTriton03Mx<float8_e4m3fn>(warps));
    all.push_back(matmulTriton03Mx<int8_t>(warps));
  }
  for (int headDim : {64, 128})
    for (bool causal : {false, true}) {
      all.push_back(attention<half>("f16", headDim, causal));
      all.push_back(attention<bfloat16>("bf16", headDim, causal));
    }
  return all;
}

void write(const std::filesystem::path &dir, const std::string &arch, const Case &c, const CompiledKernel &k) {
  const std::string stem = (dir / (c.name + "-" + arch)).string();
  std::ofstream(stem + ".hsaco", std::ios::binary)
      .write(reinterpret_cast<const char *>(k.hsaco.data()), std::streamsize(k.hsaco.size()));
  std::ofstream(stem + ".s") << k.assembly();
  std::string block;
  for (int b : c.block)
    block += (block.empty() ? "" : ", ") + std::to_string(b);
  std::ofstream(stem + ".json") << "{\"case\": \"" << c.name << "\", \"arch\": \"" << arch << "\", \"kernel\": \""
                                << k.name << "\", \"problem\": \"" << c.problem << "\", \"form\": \"" << c.form
                                << "\", \"dtype\": \"" << c.dtype << "\", \"shape\": \"" << c.shape
                                << "\", \"block\": [" << block << "], \"num_warps\": " << c.warps
                                << ", \"num_stages\": " << c.stages << ", \"workgroup_size\": " << k.blockSize
                                << ", \"wave_size\": " << k.waveSize << ", \"lds_bytes\": " << k.ldsBytes
                                << ", \"head_dim\": " << c.head_dim
                                << ", \"causal\": " << (c.causal ? "true" : "false") << "}\n";
  std::printf("%-28s %-8s %-24s %4u lanes, %6u LDS bytes, %zu-byte code object\n", c.name.c_str(), arch.c_str(),
              k.name.c_str(), k.blockSize, unsigned(k.ldsBytes), k.hsaco.size());
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: %s DIR [ARCH...] [--case TEXT]...   (ARCH: gfx942 gfx950 gfx1100; default all)\n",
                 argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::vector<std::string> archs, only;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--case" && i + 1 < argc)
      only.push_back(argv[++i]);
    else
      archs.push_back(arg);
  }
  if (archs.empty())
    archs = {"gfx942", "gfx950", "gfx1100"};
  // A private cache unless the caller chose one: every kernel is compiled here.
  const bool ownCache = !std::getenv("TESSEL_CACHE_DIR");
  std::string cacheDir =
      std::filesystem::temp_directory_path() / ("tessel-triton-compare-" + std::to_string(getpid()));
  if (ownCache)
    setenv("TESSEL_CACHE_DIR", cacheDir.c_str(), 1);
  int status = 0;
  try {
    std::filesystem::create_directories(dir);
    detail::setDryLaunches(true); // everything a launch does except running the kernel
    for (const std::string &arch : archs) {
      Device dev = Device::emulator(arch);
      for (Case c : cases()) {
        bool keep = only.empty();
        for (const std::string &text : only)
          keep = keep || c.name.find(text) != std::string::npos;
        if (!c.archs.empty() && std::find(c.archs.begin(), c.archs.end(), arch) == c.archs.end())
          keep = false;
        if (!keep)
          continue;
        if (c.configure)
          c.configure(c, dev);
        const CompiledKernel *k = c.compile(dev);
        if (!k)
          throw Error(c.name + ": the launch compiled no kernel");
        write(dir, arch, c, *k);
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench-triton-compare: %s\n", e.what());
    status = 1;
  }
  if (ownCache)
    std::filesystem::remove_all(cacheDir);
  return status;
}
