#!/usr/bin/env python3
"""Compare tessel's code objects with hand-written HIP (bench/hip/), per target.

For vector add, softmax (N = 781, 4096) and layer norm (N = 8192), f32, on
gfx90a, gfx942, gfx950 and gfx1100, prints one markdown table per problem:
spills, exec-mask branches, dynamic instructions and llvm-mca cycles per
element, registers, occupancy and elements per thread, tessel next to the
reference with their ratio. Definitions are printed under the tables.

    scripts/codegen-table.py [--build build] [--arch gfx942 --arch gfx1100] [--keep DIR]

Needs a built build/bench/bench-code-objects (ninja -C build bench-code-objects);
it compiles the HIP references itself with clang (no ROCm: -nogpuinc -nogpulib).
Python 3 standard library only.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HIP_DIR = ROOT / "bench" / "hip"
ALL_ARCHS = ["gfx90a", "gfx942", "gfx950", "gfx1100"]


# What bounds occupancy, per target (LLVM AMDGPUBaseInfo.cpp, IsaInfo:
# getTotalNumVGPRs, getVGPRAllocGranule, getMaxWavesPerEU,
# getOccupancyWithNumSGPRs, getMaxWorkGroupsPerCU, getLocalMemorySize).
# gfx90a/gfx942/gfx950 (CDNA2/3/4): 512 registers per lane per SIMD shared by
# VGPRs and AGPRs, granule 8, at most 8 waves per SIMD, 4 SIMDs per CU, SGPRs
# limit occupancy (800 per SIMD), 16 workgroup barriers per CU; LDS 64 KiB
# per CU (160 KiB on gfx950). gfx1100 (RDNA3, wave32, 1.5x VGPR file): 1536
# VGPRs, granule 24, at most 16 waves per SIMD, SGPRs do not limit; a
# workgroup runs on a WGP (4 SIMD32, 128 KiB LDS, 32 barriers).
@dataclass(frozen=True)
class Target:
    family: str
    vgpr_total: int
    vgpr_granule: int
    max_waves: int
    simds: int
    lds_bytes: int
    sgpr_limited: bool
    max_barriers: int


TARGETS = {
    "gfx90a": Target("CDNA2", 512, 8, 8, 4, 64 * 1024, True, 16),
    "gfx942": Target("CDNA3", 512, 8, 8, 4, 64 * 1024, True, 16),
    "gfx950": Target("CDNA4", 512, 8, 8, 4, 160 * 1024, True, 16),
    "gfx1100": Target("RDNA3", 1536, 24, 16, 4, 128 * 1024, False, 32),
}


@dataclass(frozen=True)
class Problem:
    name: str          # file stem of tessel's outputs (bench/code_objects_bench.cpp)
    title: str
    hip: str           # bench/hip source of the reference
    ref_kernel: str
    elements: int      # real elements one workgroup handles (both sides)


PROBLEMS = [
    Problem("vector_add", "vector add f32, n = 98432 (1024 elements per workgroup)", "vector_add.hip",
            "ref_vector_add_f32", 1024),
    Problem("softmax_781", "softmax f32, N = 781 (one row per workgroup)", "softmax.hip", "ref_softmax_781_f32", 781),
    Problem("softmax_4096", "softmax f32, N = 4096 (one row per workgroup)", "softmax.hip", "ref_softmax_4096_f32",
            4096),
    Problem("layer_norm_8192", "layer norm f32, N = 8192 (one row per workgroup)", "layer_norm.hip",
            "ref_layer_norm_8192_f32", 8192),
]


def run(cmd, tool="codegen-table", **kw):
    """Runs cmd; exits with its output, in `tool`'s name, when it fails."""
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"{tool}: {' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


# ---------------------------------------------------------------- code objects

def kernel_metadata(readelf, hsaco):
    """{kernel name: {key: value}} from the AMDGPU metadata note (top-level scalar keys only)."""
    text = run([readelf, "--notes", str(hsaco)])
    kernels, current = [], None
    for line in text.splitlines():
        m = re.match(r"^  - (\.[\w]+):\s*(.*)$", line)       # first key of a kernel
        if m:
            current = {}
            kernels.append(current)
        else:
            m = re.match(r"^    (\.[\w]+):\s*(.*)$", line)    # a kernel's other keys
        if m and current is not None:
            key, value = m.group(1)[1:], m.group(2).strip()
            current[key] = int(value) if re.fullmatch(r"-?\d+", value) else value
        if line.startswith("amdhsa.target"):
            current = None
    return {k["name"]: k for k in kernels if "name" in k}


@dataclass
class Inst:
    addr: int
    size: int
    text: str       # the instruction as the assembler reads it
    mnemonic: str
    operands: str


def disassemble(objdump, arch, hsaco, kernel):
    """The kernel's instructions in address order, from llvm-objdump's listing."""
    out = run([objdump, "-d", f"--mcpu={arch}", f"--disassemble-symbols={kernel}", str(hsaco)])
    insts = []
    for line in out.splitlines():
        # "\ts_cbranch_execz 5   // 000000001BF4: BF880005 <kernel+0x30c>"
        m = re.match(r"^\t(\S.*?)\s*//\s*([0-9A-Fa-f]+):\s*((?:[0-9A-Fa-f]{8}\s*)+)(?:<[^>]*>)?\s*$", line)
        if not m:
            continue
        text, addr, words = m.group(1).strip(), int(m.group(2), 16), m.group(3).split()
        mnemonic, _, operands = text.partition(" ")
        insts.append(Inst(addr, 4 * len(words), text, mnemonic, operands.strip()))
    if not insts:
        sys.exit(f"codegen-table: no instructions for {kernel} in {hsaco}")
    return insts


def branch_target(inst):
    """Byte address a SOPP branch goes to: the next instruction + 4 * simm16."""
    imm = int(inst.operands.split()[0], 0)
    if imm >= 0x8000:
        imm -= 0x10000
    return inst.addr + inst.size + 4 * imm


def walk(insts):
    """The instructions one wave executes with every lane active, from the entry.

    s_cbranch_execz falls through (exec is not zero), s_cbranch_execnz forward
    is taken (it is not zero), s_branch forward is followed. Returns
    (executed instructions, None) or (executed prefix, why the walk stopped)
    when it meets a loop (a backward taken branch) or a branch on a value it
    cannot know (scc, vcc).
    """
    at = {inst.addr: i for i, inst in enumerate(insts)}
    i, executed = 0, []
    while i < len(insts):
        inst = insts[i]
        executed.append(inst)
        op = inst.mnemonic
        if op == "s_endpgm":
            return executed, None
        taken = None
        if op == "s_branch":
            taken = True
        elif op == "s_cbranch_execz":
            taken = False
        elif op == "s_cbranch_execnz":
            taken = True
        elif op.startswith("s_cbranch_") or op in ("s_setpc_b64", "s_swappc_b64"):
            return executed, f"{op} (a branch on a value the walk cannot know)"
        if taken:
            target = branch_target(inst)
            if target <= inst.addr:
                return executed, f"loop ({op} back to 0x{target:x})"
            if target not in at:
                return executed, f"{op} to 0x{target:x}, outside the kernel"
            i = at[target]
        else:
            i += 1
    return executed, "ran off the end of the kernel"


def mca_run(mca, arch, insts, path, iterations=1, tool="codegen-table"):
    """llvm-mca's Total Cycles over `iterations` passes of insts (written to
    path), per pass; None when llvm-mca fails."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"\t{inst.text}\n" for inst in insts))
    p = subprocess.run([str(mca), "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", f"-iterations={iterations}",
                        str(path)], capture_output=True, text=True)
    m = re.search(r"^Total Cycles:\s+(\d+)", p.stdout, re.M)
    if p.returncode != 0 or not m:
        print(f"{tool}: llvm-mca failed on {path}:\n{p.stderr}", file=sys.stderr)
        return None
    return int(m.group(1)) if iterations == 1 else int(m.group(1)) / iterations


def mca_cycles(mca, arch, executed, workdir, tag):
    """Total cycles llvm-mca gives one pass over the executed instruction sequence."""
    return mca_run(mca, arch, executed, Path(workdir) / "mca" / f"{tag}.s")


# ------------------------------------------------------------------- occupancy

def sgpr_waves(sgprs):
    """gfx8+ (LLVM getOccupancyWithNumSGPRs): waves per SIMD that many SGPRs allow."""
    return 10 if sgprs <= 80 else 9 if sgprs <= 88 else 8 if sgprs <= 100 else 7


def occupancy(arch, md):
    """(waves per SIMD, what limits it) for a kernel's metadata on `arch`."""
    t = TARGETS[arch]
    vgprs = max(1, md["vgpr_count"])   # on CDNA: VGPRs (aligned to 4) + AGPRs, as LLVM counts them
    limits = {"max": t.max_waves,
              "VGPRs": min(t.max_waves, t.vgpr_total // (math.ceil(vgprs / t.vgpr_granule) * t.vgpr_granule))}
    if t.sgpr_limited:
        limits["SGPRs"] = min(t.max_waves, sgpr_waves(md["sgpr_count"]))
    per_simd = min(limits.values())
    reg_limiter = next(k for k in limits if limits[k] == per_simd)   # "max" first: ties go to the slots
    waves_per_wg = math.ceil(md["max_flat_workgroup_size"] / md["wavefront_size"])
    # Whole workgroups: their waves spread over the CU's (WGP's) SIMDs.
    wg = {reg_limiter: per_simd * t.simds // waves_per_wg}
    if waves_per_wg > 1:
        wg["barriers"] = t.max_barriers
    if md["group_segment_fixed_size"]:
        wg["LDS"] = t.lds_bytes // md["group_segment_fixed_size"]
    workgroups = min(wg.values())
    limiter = min(wg, key=lambda k: wg[k])   # the register limit first on a tie
    waves = workgroups * waves_per_wg / t.simds
    return min(waves, t.max_waves), limiter


# ---------------------------------------------------------------------- report

@dataclass
class Measure:
    spills: str
    exec_branches: int
    dyn_per_elem: object      # float, or a string saying why there is no number
    barriers: object          # s_barrier executed
    mca_per_elem: object
    mca_nobar_per_elem: object
    vgprs: str
    sgprs: int
    waves: str
    elems_per_thread: int
    lanes: int
    note: str = ""


def measure(tools, arch, hsaco, kernel, elements, elems_per_thread, workdir, tag):
    md = kernel_metadata(tools["readelf"], hsaco).get(kernel)
    if md is None:
        sys.exit(f"codegen-table: no metadata for kernel {kernel} in {hsaco}")
    insts = disassemble(tools["objdump"], arch, hsaco, kernel)
    executed, stop = walk(insts)
    lanes, wave = md["max_flat_workgroup_size"], md["wavefront_size"]
    per_wave = elements / math.ceil(lanes / wave)
    if stop:
        dyn = barriers = mca = mca_nobar = "loop" if stop.startswith("loop") else "n/a"
    else:
        dyn = len(executed) / per_wave
        barriers = sum(1 for i in executed if i.mnemonic == "s_barrier")
        cycles = mca_cycles(tools["mca"], arch, executed, workdir, tag)
        mca = cycles / per_wave if cycles is not None else "n/a"
        cycles = mca_cycles(tools["mca"], arch, [i for i in executed if i.mnemonic != "s_barrier"], workdir,
                            tag + "-no-barrier")
        mca_nobar = cycles / per_wave if cycles is not None else "n/a"
    waves, limiter = occupancy(arch, md)
    agprs = md.get("agpr_count", 0)
    return Measure(
        spills=f"{md['vgpr_spill_count']}+{md['sgpr_spill_count']}",
        exec_branches=sum(1 for i in insts if i.mnemonic in ("s_cbranch_execz", "s_cbranch_execnz")),
        dyn_per_elem=dyn, barriers=barriers, mca_per_elem=mca, mca_nobar_per_elem=mca_nobar,
        vgprs=f"{md['vgpr_count']} ({agprs})", sgprs=md["sgpr_count"],
        waves=f"{waves:g} ({limiter})", elems_per_thread=elems_per_thread, lanes=lanes,
        note=f"{kernel} on {arch}: {stop}" if stop else "")


def number(v):
    """The leading number of a cell ("23 (0)" -> 23.0), None when there is none."""
    if isinstance(v, (int, float)):
        return float(v)
    m = re.match(r"^(\d+(?:\.\d+)?)(?:\+(\d+))?", str(v))
    if not m:
        return None
    return float(m.group(1)) + (float(m.group(2)) if m.group(2) else 0.0)


def cell(v):
    if isinstance(v, float):
        return f"{v:.2f}" if v < 100 else f"{v:.0f}"
    return str(v)


def ratio(a, b):
    x, y = number(a), number(b)
    if x is None or y is None:
        return "—"
    if y == 0:
        return "=" if x == 0 else "∞"
    return f"{x / y:.2f}"


ROWS = [("spills (VGPR+SGPR)", "spills"), ("exec-mask branches", "exec_branches"),
        ("dyn. instructions / element", "dyn_per_elem"), ("s_barrier executed", "barriers"),
        ("llvm-mca cycles / element", "mca_per_elem"), ("… without s_barrier", "mca_nobar_per_elem"),
        ("VGPRs (AGPRs)", "vgprs"), ("SGPRs", "sgprs"), ("waves / SIMD (limit)", "waves"),
        ("elements / thread", "elems_per_thread"), ("workgroup lanes", "lanes")]


def table(problem, archs, results):
    lines = [f"### {problem.title}", ""]
    head = ["metric"] + [f"{a} {side}" for a in archs for side in ("tessel", "ref", "ratio")]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for label, field in ROWS:
        row = [label]
        for a in archs:
            t, r = results[(problem.name, a)]
            tv, rv = getattr(t, field), getattr(r, field)
            row += [cell(tv), cell(rv), ratio(tv, rv)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


FOOTNOTE = """\
Definitions. *tessel*: the code object tessel compiles for the library's own launch (bench-code-objects:
kernels::softmax / kernels::layer_norm with rowConfig, vector add as bench-vector-add: BLOCK 1024, 4 waves);
*ref*: the hand-written HIP kernel in bench/hip/ (clang -O3, no fast-math flags); *ratio*: tessel / ref
(above 1: tessel uses more; "=" both 0, "∞" only tessel's is nonzero).
- spills: .vgpr_spill_count + .sgpr_spill_count of the code object's AMDGPU metadata.
- exec-mask branches: s_cbranch_execz and s_cbranch_execnz in the kernel's disassembly (static count).
- dyn. instructions / element: instructions one wave executes when every lane is active, walked from the
  kernel entry (s_cbranch_execz falls through, s_cbranch_execnz and s_branch are taken; a backward taken
  branch would print "loop" and a branch on scc/vcc "n/a", with a "walk stopped" note above the
  definitions), counting every instruction (s_waitcnt, s_nop, s_delay_alu included), divided by the elements
  one wave handles (elements per workgroup / waves per workgroup). Both arms of an if/else would be
  counted. s_barrier executed: barriers on that path.
- llvm-mca cycles / element: "Total Cycles" of llvm-mca -mcpu=<arch> -iterations=1 over that executed
  sequence (branches as plain instructions), per element of a wave; "without s_barrier": the same
  sequence with its barriers taken out. llvm-mca models one wave issuing alone, in order, with LLVM's
  scheduling-model latencies: on gfx90a/gfx942/gfx950 VALU 1 cycle, v_exp/v_rcp 4, global memory 80,
  s_barrier 500; on gfx1100 VALU 5, transcendentals 10, global memory 320, s_barrier 2000. No other
  waves hide latency, no caches, no waiting at a barrier for other waves: read it as the issue cost of
  one wave, comparable between tessel and ref on one target, not across targets and not as run time.
- VGPRs (AGPRs): .vgpr_count (on CDNA the unified total LLVM uses for occupancy: VGPRs aligned to 4 plus
  AGPRs) and .agpr_count. SGPRs: .sgpr_count (with VCC, flat scratch, XNACK).
- waves / SIMD: resident waves per SIMD: the least of the target's wave slots (8 CDNA, 16 RDNA3), the VGPR
  file (512 per lane on CDNA, granule 8; 1536 on gfx1100 wave32, granule 24), SGPRs (gfx9: LLVM's
  getOccupancyWithNumSGPRs), then whole workgroups: floor(that x 4 SIMDs / waves per workgroup), at most
  16 (CDNA) or 32 (RDNA3 WGP) workgroups with barriers, and LDS (64 KiB per CU, 160 KiB gfx950, 128 KiB per
  gfx1100 WGP) / .group_segment_fixed_size; the limit named is the one that binds ("max": the wave slots).
- elements / thread: register slots per lane (tessel: the block's padded size / lanes, e.g. 1024 / 128 = 8
  for N = 781; ref: ceil(N / lanes)). workgroup lanes: .max_flat_workgroup_size (both fix it exactly).
- Differences of contract: tessel takes M, N and the row strides at run time (specialized on divisibility
  by 16 and 2 GiB buffers) and pads each row to a power-of-two block (N = 781: 8 slots per lane, the
  reference 7), the references fix N and contiguous rows at compile time. Both use maxNum (tessel's
  nanmax), v_exp_f32 (fast_exp2), v_rcp_f32 (fdiv) and v_rsq_f32 (rsqrt), and fence LDS only at
  their barriers. tessel's kernels run with the IEEE mode bit clear (.amdhsa_ieee_mode 0: a maxNum
  step is one v_max_f32, DPP-fed), the references with clang's default (set: each operand of a
  maxNum LLVM cannot prove quiet gets a v_max_f32 vN, vM, vM first, as Triton's code does)."""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="build directory holding bench/bench-code-objects")
    ap.add_argument("--arch", action="append",
                    help="a target to report (repeatable, or comma-separated); default all four")
    ap.add_argument("--problem", action="append", choices=[p.name for p in PROBLEMS], help="only these problems")
    ap.add_argument("--llvm", default="/usr/lib/llvm-22/bin", help="directory of clang++, llvm-objdump, ...")
    ap.add_argument("--keep", metavar="DIR", help="write the code objects and mca inputs here and keep them")
    ap.add_argument("--no-check", action="store_true",
                    help="skip running the references on the emulator (bench-hip-reference-check)")
    args = ap.parse_args()
    archs = [a for spec in (args.arch or [",".join(ALL_ARCHS)]) for a in spec.split(",") if a]
    for a in archs:
        if a not in TARGETS:
            ap.error(f"--arch {a}: not one of {', '.join(ALL_ARCHS)}")
    problems = [p for p in PROBLEMS if not args.problem or p.name in args.problem]
    llvm = Path(args.llvm)
    tools = {"clang": llvm / "clang++", "objdump": llvm / "llvm-objdump", "readelf": llvm / "llvm-readelf",
             "mca": llvm / "llvm-mca"}
    for name, path in tools.items():
        if not path.exists():
            sys.exit(f"codegen-table: {name} not found at {path} (--llvm DIR)")
    bench = (ROOT / args.build if not Path(args.build).is_absolute() else Path(args.build)) / "bench" / "bench-code-objects"
    if not bench.exists():
        sys.exit(f"codegen-table: {bench} not found; build it: ninja -C {args.build} bench-code-objects")

    tmp = tempfile.TemporaryDirectory(prefix="codegen-table-")
    work = Path(args.keep) if args.keep else Path(tmp.name)
    (work / "tessel").mkdir(parents=True, exist_ok=True)
    (work / "ref").mkdir(parents=True, exist_ok=True)

    # tessel: every kernel compiled fresh, in a private disk cache.
    env = dict(os.environ, TESSEL_CACHE_DIR=str(Path(tmp.name) / "cache"))
    run([str(bench), str(work / "tessel"), *archs], env=env)
    # The references: one code object per source and target.
    for arch in archs:
        for hip in sorted({p.hip for p in problems}):
            out = work / "ref" / f"{Path(hip).stem}-{arch}.hsaco"
            run([str(tools["clang"]), "-x", "hip", "-std=c++20", f"--offload-arch={arch}", "--cuda-device-only",
                 "-nogpuinc", "-nogpulib", "-fno-gpu-rdc", "--no-gpu-bundle-output", "-O3", "-Wall",
                 "-o", str(out), str(HIP_DIR / hip)])

    # The references must compute what tessel's kernels compute: their LLVM IR
    # (REF_EMULATOR spellings of readlane/exp2/rcp/rsq) runs on tessel's CPU emulator.
    check = None
    if not args.no_check:
        checker = bench.parent / "bench-hip-reference-check"
        if not checker.exists():
            sys.exit(f"codegen-table: {checker} not found; build it: ninja -C {args.build} bench-hip-reference-check"
                     " (or pass --no-check)")
        (work / "check").mkdir(exist_ok=True)
        for arch in archs:
            for hip in sorted({p.hip for p in PROBLEMS}):
                run([str(tools["clang"]), "-x", "hip", "-std=c++20", f"--offload-arch={arch}", "--cuda-device-only",
                     "-nogpuinc", "-nogpulib", "-O3", "-DREF_EMULATOR", "-emit-llvm", "-S",
                     "-o", str(work / "check" / f"{Path(hip).stem}-{arch}.ll"), str(HIP_DIR / hip)])
        check = subprocess.run([str(checker), str(work / "check"), *archs], capture_output=True, text=True, env=env)

    results, notes = {}, []
    for p in problems:
        for arch in archs:
            stem = work / "tessel" / f"{p.name}-{arch}"
            launch = json.loads(Path(f"{stem}.json").read_text())
            if launch["elements_per_workgroup"] != p.elements:
                sys.exit(f"codegen-table: tessel's {p.name} covers {launch['elements_per_workgroup']} elements "
                         f"per workgroup on {arch}, the reference {p.elements}: the per-element figures would not compare")
            t = measure(tools, arch, Path(f"{stem}.hsaco"), launch["kernel"], p.elements,
                        launch["slots_per_thread"], work, f"tessel-{p.name}-{arch}")
            ref_hsaco = work / "ref" / f"{Path(p.hip).stem}-{arch}.hsaco"
            ref_md = kernel_metadata(tools["readelf"], ref_hsaco)[p.ref_kernel]
            if ref_md["wavefront_size"] != launch["wave_size"]:
                sys.exit(f"codegen-table: {p.ref_kernel} on {arch} has {ref_md['wavefront_size']}-lane waves, "
                         f"tessel {launch['wave_size']}")
            r = measure(tools, arch, ref_hsaco, p.ref_kernel, p.elements,
                        math.ceil(p.elements / ref_md["max_flat_workgroup_size"]), work, f"ref-{p.name}-{arch}")
            results[(p.name, arch)] = (t, r)
            notes += [m.note for m in (t, r) if m.note]

    print(f"# tessel vs hand-written HIP: code objects ({', '.join(archs)})\n")
    for p in problems:
        print(table(p, archs, results))
        print()
    for n in notes:
        print(f"- walk stopped: {n}")
    if check is not None:
        lines = [l for l in check.stdout.splitlines() if l.strip()]
        errors = [float(m.group(1)) for l in lines for m in [re.search(r"error ([0-9.e+-]+)", l)] if m]
        if check.returncode == 0 and lines:
            print(f"References checked: each ran on tessel's CPU emulator ({', '.join(archs)}, its wave size) "
                  f"against float64 host math: {len(lines)} runs ok, largest relative error {max(errors):.1e} "
                  f"(bench-hip-reference-check).\n")
        else:
            print("REFERENCES WRONG OR NOT CHECKED (bench-hip-reference-check):")
            print("\n".join(lines + check.stderr.splitlines()) + "\n")
    print(FOOTNOTE)
    if args.keep:
        print(f"\n(code objects, assembly and llvm-mca inputs kept in {work})")
    if check is not None and check.returncode != 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
