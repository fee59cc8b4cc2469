"""Triton's cold compile time against trace size: bench/compile_scaling_bench.cpp's
workloads in Triton, for a comparison with tessel (issue 34; bench/README.md).

The three kernels are compile_scaling_bench.cpp's, line by line: the trace-time
C++ loop is a tl.static_range (unrolled by Triton's frontend, as tessel's trace
unrolls the C++ loop), with the same tiles, masks, ops and 4 warps:
    elementwise   N multiplies and adds on a [1024] f32 tile
    memory        N / 2 masked loads and N / 2 masked stores of [1024] f32 tiles
    where-reduce  N selects and row reductions on a [16, 64] f32 tile
without multiply-add fusion (as tessel compiles them); and, once each, the
tutorials of this folder in the launches scripts/triton-compare.py gives them
(01 vector add, 02 softmax, 05 layer norm).

Each compile is cold: triton.compile with a new, empty TRITON_CACHE_DIR (and
TRITON_ALWAYS_COMPILE=1), arguments specialized as compile.py does, without a
GPU. The process is warm: one untimed compile of the vector add comes first, so
no row pays for imports and LLVM's start-up (tessel's bench runs in one
process too). Stage times come from Triton's own compilation listener:
frontend (options, cache key, AST to TTIR: where the static_range unrolls),
ttir and ttgir (MLIR passes), llir (conversion to LLVM IR and LLVM's O3),
amdgcn (LLVM code generation), hsaco (lld). CPU time is the process's
(getrusage, children included).

Runs in the virtual environment that has Triton (never in tessel's build or tests):
    ~/.cache/tessel-triton-venv/bin/python bench/triton/compile_scaling.py \\
        [--sizes 250,1000,2000,4000] [--runs R] [--arch gfx942] \\
        [--workload elementwise|memory|where-reduce|tutorials|all] [--limit-s 180]

A workload stops at the first size whose compile took over --limit-s seconds
of CPU time (or that would, at linear growth from the size before; CPU time, as
wall time on a shared machine counts the other processes too), and says so.
"""
import argparse
import math
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton import knobs  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

from compile import load_kernel, specialize  # noqa: E402


# N ops, alternating a multiply and an add (no fusion: WORKLOAD_OPTIONS).
@triton.jit
def long_chain(x, out, OPS: tl.constexpr):
    offs = tl.arange(0, 1024)
    v = tl.load(x + offs)
    for i in tl.static_range(OPS):
        if i % 2 == 0:
            v = v * 1.0001
        else:
            v = v + 0.5
    tl.store(out + offs, v)


# N / 2 masked loads and N / 2 masked stores, each at its own offset (a copy of
# N / 2 blocks with a scale, so no load is dead).
@triton.jit
def loads_stores(x, out, n, OPS: tl.constexpr):
    offs = tl.arange(0, 1024)
    for i in tl.static_range(OPS // 2):
        at = offs + i * 1024
        mask = at < n
        tl.store(out + at, tl.load(x + at, mask=mask) * 2.0, mask=mask)


# N where/reduction ops on a [16, 64] tile: even steps select (v > 0.5 ? v : v *
# 0.25), odd steps subtract the row's max or add a fraction of its sum.
@triton.jit
def where_reduce(x, out, OPS: tl.constexpr):
    r = tl.expand_dims(tl.arange(0, 16), 1)
    c = tl.expand_dims(tl.arange(0, 64), 0)
    offs = r * 64 + c
    v = tl.load(x + offs)
    for i in tl.static_range(OPS):
        if i % 2 == 0:
            v = tl.where(v > 0.5, v, v * 0.25)
        elif i % 4 == 1:
            v = v - tl.expand_dims(tl.max(v, 1), 1)
        else:
            v = v + tl.expand_dims(tl.sum(v, 1), 1) * 0.001
    tl.store(out + offs, v)


# 4 warps; no multiply-add fusion, as tessel's default (fp_fusion off).
WORKLOAD_OPTIONS = {"num_warps": 4, "enable_fp_fusion": False}


def tensor(name, dtype, elements, size=4):
    return [name, "tensor", [dtype, elements * size]]


# The arguments compile_scaling_bench.cpp traces with: 1024-float buffers, n = 1000.
WORKLOADS = {
    "elementwise": (long_chain, lambda n: [tensor("x", "float32", 1024), tensor("out", "float32", 1024),
                                           ["OPS", "constexpr", n]]),
    "memory": (loads_stores, lambda n: [tensor("x", "float32", 1024), tensor("out", "float32", 1024),
                                        ["n", "scalar", 1000], ["OPS", "constexpr", n]]),
    "where-reduce": (where_reduce, lambda n: [tensor("x", "float32", 1024), tensor("out", "float32", 1024),
                                              ["OPS", "constexpr", n]]),
}

# scripts/triton-compare.py's launches of the tutorials (the problems the tutorials run).
TUTORIALS = [
    ("vector add f32 (tutorial 01, n = 98432)", "vector_add.py", "add_kernel",
     [tensor("x_ptr", "float32", 98432), tensor("y_ptr", "float32", 98432), tensor("output_ptr", "float32", 98432),
      ["n_elements", "scalar", 98432], ["BLOCK_SIZE", "constexpr", 1024]], {"num_warps": 4}),
    ("softmax f32 (tutorial 02, 1823 x 781)", "softmax.py", "softmax_kernel",
     [tensor("output_ptr", "float32", 1823 * 781), tensor("input_ptr", "float32", 1823 * 781),
      ["input_row_stride", "scalar", 781], ["output_row_stride", "scalar", 781], ["n_rows", "scalar", 1823],
      ["n_cols", "scalar", 781], ["BLOCK_SIZE", "constexpr", 1024], ["num_stages", "constexpr", 2]],
     {"num_warps": 8, "num_stages": 2}),
    ("layer norm f16 (tutorial 05, 1151 x 8192)", "layer_norm.py", "_layer_norm_fwd_fused",
     [tensor("X", "float16", 1151 * 8192, 2), tensor("Y", "float16", 1151 * 8192, 2),
      tensor("W", "float16", 8192, 2), tensor("B", "float16", 8192, 2), tensor("Mean", "float32", 1151),
      tensor("Rstd", "float32", 1151), ["stride", "scalar", 8192], ["N", "scalar", 8192],
      ["eps", "scalar", 1e-5], ["BLOCK_SIZE", "constexpr", 8192]], {"num_warps": 8}),
]


def cpu_seconds():
    self, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return self.ru_utime + self.ru_stime + children.ru_utime + children.ru_stime


class Stages:
    """Triton's compilation listener: the stage times of the last compile, in ms."""

    def __init__(self):
        self.last = None
        knobs.compilation.listener = self

    def __call__(self, *, src, metadata, metadata_group, times, cache_hit):
        if cache_hit:
            raise SystemExit("compile_scaling.py: a cache hit in a fresh cache directory")
        self.last = {"frontend": times.ir_initialization / 1e3, "store": times.store_results / 1e3,
                     **{name: us / 1e3 for name, us in times.lowering_stages}}


def compile_once(fn, args, options, arch, warp_size, stages):
    """One cold compile: (wall ms, cpu ms, stage ms, the kernel's hsaco bytes)."""
    cache = tempfile.mkdtemp(prefix="triton-cold-")
    os.environ["TRITON_CACHE_DIR"] = cache
    try:
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        signature, constexprs, attrs = specialize(fn, args)
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
        k = triton.compile(src, target=GPUTarget("hip", arch, warp_size), options=dict(options))
        wall, cpu = (time.perf_counter() - t0) * 1e3, (cpu_seconds() - cpu0) * 1e3
        return wall, cpu, dict(stages.last), len(k.asm["hsaco"])
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def median_run(fn, args, options, arch, warp_size, stages, runs):
    """The run with the median wall time, and the median CPU time."""
    results = [compile_once(fn, args, options, arch, warp_size, stages) for _ in range(runs)]
    by_wall = sorted(results, key=lambda r: r[0])
    wall, _, st, size = by_wall[len(by_wall) // 2]
    return wall, statistics.median(r[1] for r in results), st, size


def describe(st):
    return ", ".join(f"{name} {ms:.1f}" for name, ms in st.items()) + " ms"


def measure(workload, sizes, runs, arch, warp_size, stages, limit_s):
    fn, args_for = WORKLOADS[workload]
    print(f"== {workload} (Triton {triton.__version__}, {arch}, 4 warps)", flush=True)
    rows, stopped = [], None
    for n in sizes:
        if rows and rows[-1]["cpu"] / 1e3 * n / rows[-1]["ops"] > limit_s:
            stopped = (f"N = {n} not compiled: at linear growth from N = {rows[-1]['ops']} it would take over "
                       f"{limit_s:.0f} s of CPU time")
            break
        wall, cpu, st, size = median_run(fn, args_for(n), WORKLOAD_OPTIONS, arch, warp_size, stages,
                                        runs)
        rows.append({"ops": n, "total": wall, "cpu": cpu, "frontend": st["frontend"],
                     "mlir": st["ttir"] + st["ttgir"], "llir": st["llir"], "codegen": st["amdgcn"] + st["hsaco"]})
        print(f"N = {n:5d}: total {wall:9.1f} ms, cpu {cpu:9.1f} ms  ({describe(st)}; {size}-byte hsaco)", flush=True)
        if cpu / 1e3 > limit_s:
            stopped = f"N = {n} took over {limit_s:.0f} s of CPU time: larger sizes not compiled"
            break
    k = lambda a, b, key: math.log(b[key] / a[key]) / math.log(b["ops"] / a["ops"])  # noqa: E731
    print(f"\n| {workload} ops | total ms | cpu ms | frontend ms | ttir+ttgir ms | llir ms (to LLVM, O3) "
          "| codegen ms (amdgcn+hsaco) | k total | k cpu |\n|---|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(rows):
        line = (f"| {r['ops']} | {r['total']:.1f} | {r['cpu']:.1f} | {r['frontend']:.1f} | {r['mlir']:.1f} "
                f"| {r['llir']:.1f} | {r['codegen']:.1f} |")
        if i == 0:
            print(line + " | |")
        else:
            print(line + f" {k(rows[i - 1], r, 'total'):.2f} | {k(rows[i - 1], r, 'cpu'):.2f} |")
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        print(f"{workload}: from {a['ops']} to {b['ops']} ops the compile grows {b['total'] / a['total']:.1f}x in "
              f"wall time, {b['cpu'] / a['cpu']:.1f}x in CPU time (linear: {b['ops'] / a['ops']:.1f}x)")
    if stopped:
        print(f"{workload}: stopped: {stopped}")
    print(flush=True)


def tutorials(runs, arch, warp_size, stages):
    print(f"== tutorials (Triton {triton.__version__}, {arch}): cold compile, median of {runs}", flush=True)
    for what, source, kernel, args, options in TUTORIALS:
        fn = load_kernel(source, kernel)
        results = [compile_once(fn, args, options, arch, warp_size, stages) for _ in range(runs)]
        walls = sorted(r[0] for r in results)
        wall, _, st, _ = sorted(results, key=lambda r: r[0])[len(results) // 2]
        print(f"cold compile of {what}, {options['num_warps']} warps: median {wall:.1f} ms, min {walls[0]:.1f} ms, "
              f"cpu {statistics.median(r[1] for r in results):.1f} ms over {runs} runs\n  stages: {describe(st)}",
              flush=True)
    print(flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="250,1000,2000,4000")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--arch", default="gfx942")
    ap.add_argument("--workload", default="all", choices=[*WORKLOADS, "tutorials", "all"])
    ap.add_argument("--limit-s", type=float, default=180.0)
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",") if s]
    warp_size = 32 if a.arch.startswith("gfx1") else 64
    runs = max(1, a.runs)
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    # The tutorials keep Triton 3.9's default, fusion on (as scripts/triton-compare.py compiles them); this
    # silences 3.9's warning that the default will change.
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    stages = Stages()
    # Untimed: imports, LLVM's and the backend's start-up.
    name, source, kernel, args, options = TUTORIALS[0]
    compile_once(load_kernel(source, kernel), args, options, a.arch, warp_size, stages)
    for w in WORKLOADS:
        if a.workload in (w, "all"):
            measure(w, sizes, runs, a.arch, warp_size, stages, a.limit_s)
    if a.workload in ("tutorials", "all"):
        tutorials(max(runs, 5) if a.workload == "all" else runs, a.arch, warp_size, stages)


if __name__ == "__main__":
    main()
