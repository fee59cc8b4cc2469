#!/usr/bin/env python3
"""Compare tessel's code with Triton's, compile only, per kernel and target.

For the kernels of Triton's tutorials (vector add, softmax, layer norm,
matmul, fused attention) written in Triton (bench/triton/*.py, as the
tutorials write them) and in tessel (bench/triton_compare_bench.cpp: the same
kernels in C++, plus tessel's own tutorial 03, kernels::matmul and
kernels::attention's block program), prints one markdown table per
case: registers, spills, LDS, occupancy, the main loop's instruction mix and
llvm-mca cycles per iteration, tessel next to Triton with their ratio, on
gfx942, gfx950 and gfx1100. Definitions are printed under the tables.

    scripts/triton-compare.py [--build build] [--arch gfx942 --arch gfx950] [--case matmul-triton03-f16-w4] [--keep DIR]

Needs build/bench/bench-triton-compare (ninja -C build bench-triton-compare)
and Triton in a virtual environment (default ~/.cache/tessel-triton-venv,
made with python3 -m venv and pip install triton==3.9.0 from PyPI when it
is missing: no torch, no GPU). Triton is used only here, never by tessel's
library or its tests. Python 3 standard library only in this process.
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRITON_DIR = ROOT / "bench" / "triton"
ALL_ARCHS = ["gfx942", "gfx950", "gfx1100"]
TRITON_VERSION = "3.9.0"
DEFAULT_VENV = Path.home() / ".cache" / "tessel-triton-venv"

# The metadata reader, disassembler and occupancy model are codegen-table.py's.
_spec = importlib.util.spec_from_file_location("codegen_table", ROOT / "scripts" / "codegen-table.py")
ct = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ct)


def run(cmd, **kw):
    """Runs cmd; exits with its output when it fails."""
    return ct.run(cmd, tool="triton-compare", **kw)


# ----------------------------------------------------------------- Triton venv

def triton_python(venv, version, install):
    """The venv's python with Triton `version`, installing it when asked."""
    py = venv / "bin" / "python"
    probe = [str(py), "-c", "import triton; print(triton.__version__)"]
    if py.exists():
        p = subprocess.run(probe, capture_output=True, text=True)
        if p.returncode == 0 and p.stdout.strip() == version:
            return py
    if not install:
        sys.exit(f"triton-compare: no Triton {version} in {venv} (run without --no-install to make it)")
    print(f"triton-compare: installing triton=={version} into {venv} (python3 -m venv, pip)", file=sys.stderr)
    if not py.exists():
        run([sys.executable, "-m", "venv", venv])
    run([py, "-m", "pip", "install", "--quiet", f"triton=={version}"])
    p = subprocess.run(probe, capture_output=True, text=True)
    if p.returncode != 0 or p.stdout.strip() != version:
        sys.exit(f"triton-compare: Triton did not import after installing it:\n{p.stdout}{p.stderr}")
    return py


# --------------------------------------------------------- the Triton launches

def tensor(name, dtype, elements):
    size = {"float16": 2, "bfloat16": 2, "float32": 4, "float8e4b8": 1, "float8e4nv": 1, "uint8": 1}[dtype]
    return [name, "tensor", [dtype, elements * size]]


def scalar(name, value):
    return [name, "scalar", value]


def const(name, value):
    return [name, "constexpr", value]


TORCH_DTYPE = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}
# tessel's "fp8" cases: E4M3 in the family the target's matrix cores take, as
# Triton names it (tl.float8e4b8 = FNUZ E4M3, signature fp8e4b8, on gfx942;
# tl.float8e4nv = OCP E4M3, fp8e4nv, on gfx950); C in f16.
FP8_DTYPE = {"gfx942": "float8e4b8", "gfx950": "float8e4nv"}


def dtype_of(case):
    """Triton's tl dtype of a case's A and B."""
    if case["dtype"] == "fp8":
        if case["arch"] not in FP8_DTYPE:
            sys.exit(f"triton-compare: no 8-bit float matrix instructions on {case['arch']}")
        return FP8_DTYPE[case["arch"]]
    return TORCH_DTYPE[case["dtype"]]
MATMUL_SHAPE, MATMUL_BLOCK, MATMUL_STAGES, MATMUL_GROUP = 4096, [128, 128, 64], 2, 8
MX_BLOCK = [128, 128, 64]  # the scaled matmul: two e8m0 scale groups a K step
MXFP4_BLOCK = [128, 128, 128]  # e2m1: 64 bytes a row a K step, four scale groups
# Tutorial 06's forward launch: batch 1 here, 16 heads, N_CTX 4096 (the tutorial's benchmark runs
# batch 4, 32 heads, N_CTX 1024..16384); its HIP autotuning space and options.
ATTENTION_Z, ATTENTION_H, ATTENTION_N = 1, 16, 4096
ATTENTION_SPACE = {"BLOCK_M": (64, 128), "BLOCK_N": (32, 64, 128), "num_warps": (4, 8)}
ATTENTION_STAGES = 1


def triton_launch(case, variant=""):
    """(what tessel's case must say it compiled, Triton's job) for a tessel case.

    Each is the tutorial's own launch: its arguments and options, on the
    problem the tutorial runs. variant "hip-tutorial" is tutorial 03's HIP
    autotuning entry for 128x128x64 (GROUP_SIZE_M 4, matrix_instr_nonkdim 16,
    8 waves, 2 stages) instead of the case's waves and GROUP_SIZE_M 8."""
    p = case["problem"]
    if p == "vector_add":
        n = 98432
        expect = {"dtype": "f32", "shape": f"n={n}", "block": [1024], "num_warps": 4}
        job = {"source": "vector_add.py", "kernel": "add_kernel",
               "args": [tensor("x_ptr", "float32", n), tensor("y_ptr", "float32", n),
                        tensor("output_ptr", "float32", n), scalar("n_elements", n), const("BLOCK_SIZE", 1024)],
               "options": {"num_warps": 4}}
    elif p == "softmax":
        m, n = 1823, 781
        expect = {"dtype": "f32", "shape": f"M={m} N={n}", "block": [1024], "num_warps": 8, "num_stages": 2}
        job = {"source": "softmax.py", "kernel": "softmax_kernel",
               "args": [tensor("output_ptr", "float32", m * n), tensor("input_ptr", "float32", m * n),
                        scalar("input_row_stride", n), scalar("output_row_stride", n), scalar("n_rows", m),
                        scalar("n_cols", n), const("BLOCK_SIZE", 1024), const("num_stages", 2)],
               # The tutorial passes num_stages= as a keyword: the kernel's constexpr and the option.
               "options": {"num_warps": 8, "num_stages": 2}}
    elif p == "layer_norm":
        m, n = 1151, 8192
        expect = {"dtype": "f16", "shape": f"M={m} N={n}", "block": [8192], "num_warps": 8}
        job = {"source": "layer_norm.py", "kernel": "_layer_norm_fwd_fused",
               "args": [tensor("X", "float16", m * n), tensor("Y", "float16", m * n), tensor("W", "float16", n),
                        tensor("B", "float16", n), tensor("Mean", "float32", m), tensor("Rstd", "float32", m),
                        scalar("stride", n), scalar("N", n), scalar("eps", 1e-5), const("BLOCK_SIZE", 8192)],
               "options": {"num_warps": 8}}
    elif p == "attention":
        # Triton compiles the blocks and waves tessel's kernels::attentionConfig chose for this target,
        # also where they are outside the tutorial's HIP autotuning space (a note says so).
        d, (bm, bn), warps = case["head_dim"], case["block"], case["num_warps"]
        z, h, n = ATTENTION_Z, ATTENTION_H, ATTENTION_N
        outside = [f"{key} {value}" for key, value in (("BLOCK_M", bm), ("BLOCK_N", bn), ("num_warps", warps))
                   if value not in ATTENTION_SPACE[key]]
        dt = TORCH_DTYPE[case["dtype"]]
        expect = {"shape": f"Z={z} H={h} N_CTX={n} D={d}", "num_stages": ATTENTION_STAGES}
        job = {"source": "attention.py", "kernel": "_attn_fwd",
               "args": [scalar("sm_scale", 1.0 / d ** 0.5), tensor("M", "float32", z * h * n),
                        scalar("Z", z), scalar("H", h), tensor("q_ptr", dt, z * h * n * d),
                        tensor("k_ptr", dt, z * h * n * d), tensor("v_ptr", dt, z * h * n * d),
                        tensor("o_ptr", dt, z * h * n * d), scalar("N_CTX", n), const("HEAD_DIM", d),
                        const("BLOCK_M", bm), const("BLOCK_N", bn), const("STAGE", 3 if case["causal"] else 1)],
               # The tutorial's HIP launch: waves_per_eu 3 at head dim <= 64 (2 above), denormals flushed.
               "options": {"num_warps": warps, "num_stages": ATTENTION_STAGES, "waves_per_eu": 3 if d <= 64 else 2,
                           "allow_flush_denorm": True}}
    elif p == "matmul" and case["form"] == "triton03mx":
        # tl.dot_scaled (bench/triton/matmul_scaled.py) with e8m0 scales: OCP E4M3 at BLOCK_K 64, or e2m1
        # (two to a byte along K: A [M, K / 2], B [K / 2, N] bytes) at BLOCK_K 128.
        s = MATMUL_SHAPE
        fp4 = case["dtype"] == "mxfp4"
        block, fmt, pack, elem = (MXFP4_BLOCK, "e2m1", 2, "uint8") if fp4 else (MX_BLOCK, "e4m3", 1, "float8e4nv")
        bm, bn, bk = block
        expect = {"shape": f"M=N=K={s}", "block": block, "num_stages": MATMUL_STAGES}
        job = {"source": "matmul_scaled.py", "kernel": "mx_matmul_kernel",
               "args": [tensor("a_ptr", elem, s * s // pack), tensor("b_ptr", elem, s * s // pack),
                        tensor("c_ptr", "float16", s * s), tensor("a_scale_ptr", "uint8", s * s // 32),
                        tensor("b_scale_ptr", "uint8", s * s // 32), scalar("M", s), scalar("N", s), scalar("K", s),
                        scalar("stride_am", s // pack), scalar("stride_ak", 1), scalar("stride_bk", s),
                        scalar("stride_bn", 1), scalar("stride_cm", s), scalar("stride_cn", 1),
                        scalar("stride_asm", s // 32), scalar("stride_ask", 1), scalar("stride_bsn", s // 32),
                        scalar("stride_bsk", 1), const("BLOCK_SIZE_M", bm), const("BLOCK_SIZE_N", bn),
                        const("BLOCK_SIZE_K", bk), const("GROUP_SIZE_M", MATMUL_GROUP), const("FORMAT", fmt),
                        const("PACK", pack)],
               "options": {"num_warps": case["num_warps"], "num_stages": MATMUL_STAGES}}
    elif p == "matmul" and variant == "triton-library":
        # tessel's kernels::matmul ported to Triton line by line (bench/triton/matmul_library.py): the same
        # kernel on both sides, masks on rows and columns included.
        s, (bm, bn, bk) = MATMUL_SHAPE, MATMUL_BLOCK
        dt = dtype_of(case)
        fp8 = case["dtype"] == "fp8"
        expect = {"shape": f"M=N=K={s}", "block": MATMUL_BLOCK, "num_stages": MATMUL_STAGES}
        job = {"source": "matmul_library.py", "kernel": "library_matmul_kernel",
               "args": [tensor("a", dt, s * s), tensor("b", dt, s * s), tensor("c", "float16" if fp8 else dt, s * s),
                        tensor("scale_a", "float32", 1), tensor("scale_b", "float32", 1),
                        scalar("M", s), scalar("N", s), scalar("K", s), scalar("sam", s), scalar("sak", 1),
                        scalar("sbk", s), scalar("sbn", 1), scalar("scm", s), scalar("scn", 1),
                        scalar("batch_a", s * s), scalar("batch_b", s * s), scalar("batch_c", s * s),
                        const("BM", bm), const("BN", bn), const("BK", bk), const("GROUP_M", MATMUL_GROUP),
                        const("SCALES", 1 if fp8 else 0)],
               "options": {"num_warps": case["num_warps"], "num_stages": MATMUL_STAGES}}
    elif p == "matmul":
        s, (bm, bn, bk) = MATMUL_SHAPE, MATMUL_BLOCK
        dt = dtype_of(case)
        ct_ = "float16" if case["dtype"] == "fp8" else dt
        warps, group, options = case["num_warps"], MATMUL_GROUP, {}
        if variant == "hip-tutorial":
            warps, group, options = 8, 4, {"matrix_instr_nonkdim": 16}
        expect = {"shape": f"M=N=K={s}", "block": MATMUL_BLOCK, "num_stages": MATMUL_STAGES}
        job = {"source": "matmul.py", "kernel": "matmul_kernel",
               "args": [tensor("a_ptr", dt, s * s), tensor("b_ptr", dt, s * s), tensor("c_ptr", ct_, s * s),
                        scalar("M", s), scalar("N", s), scalar("K", s),
                        scalar("stride_am", s), scalar("stride_ak", 1),
                        # B stored [N, K] in form triton03bt
                        scalar("stride_bk", 1 if case["form"] == "triton03bt" else s),
                        scalar("stride_bn", s if case["form"] == "triton03bt" else 1),
                        scalar("stride_cm", s), scalar("stride_cn", 1),
                        const("BLOCK_SIZE_M", bm), const("BLOCK_SIZE_N", bn), const("BLOCK_SIZE_K", bk),
                        const("GROUP_SIZE_M", group), const("ACTIVATION", "")],
               "options": {"num_warps": warps, "num_stages": MATMUL_STAGES, **options}}
    else:
        sys.exit(f"triton-compare: no Triton kernel for tessel's problem {p!r}")
    for key, want in expect.items():
        if case.get(key) != want:
            sys.exit(f"triton-compare: tessel's {case['case']} has {key} = {case.get(key)!r}, Triton's launch "
                     f"{want!r}: the two would not compile the same problem")
    opts = job["options"]
    parts = [p, case["dtype"], f"w{opts['num_warps']}", f"s{opts.get('num_stages', 'default')}", variant,
             case["arch"]]
    if p == "matmul" and case["form"] == "triton03bt":
        parts[1:1] = ["bt"]
    if p == "attention":
        parts[1:1] = [f"d{case['head_dim']}", "causal" if case["causal"] else "nc", "x".join(map(str, case["block"]))]
    job["id"] = "-".join(x for x in parts if x)
    if p == "attention" and outside:
        job["note"] = (f"{case['case']} on {case['arch']}: {', '.join(outside)} (kernels::attentionConfig's) is "
                       f"outside tutorial 06's HIP autotuning space (BLOCK_M 64/128, BLOCK_N 32/64/128, 4/8 "
                       f"waves); Triton compiles it all the same")
    job["arch"] = case["arch"]
    job["warp_size"] = case["wave_size"]
    return job


# ---------------------------------------------------------------- measurement

MATRIX = re.compile(r"^v_(mfma|smfmac|wmma|swmmac)_")
WIDTH_SUFFIX = [(re.compile(r"(dwordx4|_b128)$"), 128), (re.compile(r"(dwordx3|_b96)$"), 96),
                (re.compile(r"(dwordx2|_b64)$"), 64), (re.compile(r"(_dword|_b32)$"), 32),
                (re.compile(r"(short|_[ui]16|_b16|_d16(_hi)?)$"), 16), (re.compile(r"(byte|_[ui]8|_b8)$"), 8)]


def width(mnemonic):
    """(bits one lane moves, label) for a load or store mnemonic: (128, "b128"),
    (128, "b64x2") for the two-address LDS forms (ds_read2_b64, ds_load_2addr_b64);
    (0, "?") when unknown."""
    m = re.sub(r"_tr_b\d+$", "", mnemonic)           # gfx950 ds_read_b64_tr_b16: a 64-bit read
    if re.search(r"_d16(_hi)?(_b16)?$", m):           # into half a register: 16 bits, or a byte
        return (8, "b8") if re.search(r"(byte|_[ui]8)_d16", m) else (16, "b16")
    two = re.search(r"(read2|write2|_2addr)(st64)?_b(32|64)$", m)
    if two:
        return 2 * int(two.group(3)), f"b{two.group(3)}x2"
    for pattern, bits in WIDTH_SUFFIX:
        if pattern.search(m):
            return bits, f"b{bits}"
    return 0, "?"


def global_load(inst):
    op = inst.mnemonic
    return op.startswith(("global_load", "buffer_load", "flat_load"))


def to_lds(inst):
    """A global/buffer load that writes LDS directly (buffer_load ... lds, global_load_lds_*)."""
    return "_lds" in inst.mnemonic or re.search(r"\blds\b", inst.operands) is not None


def lds_read(inst):
    return inst.mnemonic.startswith(("ds_read", "ds_load"))


def lds_write(inst):
    return inst.mnemonic.startswith(("ds_write", "ds_store"))


DPP = re.compile(r"\b(quad_perm|row_\w+|wave_\w+|dpp8)\b")


def cross_lane(inst):
    """An instruction that moves data between lanes of a wave: ds_bpermute/ds_permute/ds_swizzle,
    v_permlane*, or a DPP-modified VALU instruction (quad_perm, row_*, row_bcast, wave_*, dpp8 in its
    operands). v_readlane/v_readfirstlane (to an SGPR) are not counted."""
    op = inst.mnemonic
    return (op.startswith(("ds_bpermute", "ds_permute", "ds_swizzle", "v_permlane")) or
            (op.startswith("v_") and (op.endswith(("_dpp", "_dpp8")) or DPP.search(inst.operands) is not None)))


@dataclass
class Mix:
    """Counts over a span of instructions."""
    total: int = 0
    matrix: int = 0
    loads: dict = field(default_factory=dict)       # (bits, label) -> count: global/buffer loads into registers
    loads_lds: dict = field(default_factory=dict)   # ... that write LDS directly
    stores: dict = field(default_factory=dict)      # global/buffer stores
    lds_reads: dict = field(default_factory=dict)
    lds_writes: dict = field(default_factory=dict)
    barriers: int = 0
    cross_lane: int = 0
    exec_branches: int = 0
    waitcnt: int = 0
    valu: int = 0
    salu: int = 0


def count(bucket, inst):
    w = width(inst.mnemonic)
    bucket[w] = bucket.get(w, 0) + 1


def mix_of(insts):
    m = Mix(total=len(insts))
    for i in insts:
        op = i.mnemonic
        if MATRIX.match(op):
            m.matrix += 1
        elif cross_lane(i):
            m.cross_lane += 1
        elif global_load(i):
            count(m.loads_lds if to_lds(i) else m.loads, i)
        elif op.startswith(("global_store", "buffer_store", "flat_store")):
            count(m.stores, i)
        elif lds_read(i):
            count(m.lds_reads, i)
        elif lds_write(i):
            count(m.lds_writes, i)
        elif op == "s_barrier":
            m.barriers += 1
        elif op in ("s_cbranch_execz", "s_cbranch_execnz"):
            m.exec_branches += 1
        elif op.startswith("s_waitcnt"):
            m.waitcnt += 1
        if op.startswith("v_") and not MATRIX.match(op) and not cross_lane(i):
            m.valu += 1
        elif op.startswith("s_") and op != "s_barrier" and not op.startswith("s_waitcnt"):
            m.salu += 1
    return m


def is_branch(inst):
    return inst.mnemonic == "s_branch" or inst.mnemonic.startswith("s_cbranch_")


def blocks_of(insts):
    """The kernel's basic blocks as (first, last) instruction indices, and each block's successors."""
    at = {inst.addr: k for k, inst in enumerate(insts)}
    leaders = {0}
    for k, inst in enumerate(insts):
        if is_branch(inst) or inst.mnemonic in ("s_endpgm", "s_setpc_b64"):
            leaders.add(k + 1)
            if is_branch(inst) and ct.branch_target(inst) in at:
                leaders.add(at[ct.branch_target(inst)])
    starts = sorted(x for x in leaders if x < len(insts))
    blocks = [(a, (starts[n + 1] if n + 1 < len(starts) else len(insts)) - 1) for n, a in enumerate(starts)]
    index = {a: n for n, (a, _) in enumerate(blocks)}
    succs = []
    for n, (_, last) in enumerate(blocks):
        inst, out = insts[last], []
        if is_branch(inst) and ct.branch_target(inst) in at:
            out.append(index[at[ct.branch_target(inst)]])
        if inst.mnemonic not in ("s_branch", "s_endpgm", "s_setpc_b64") and n + 1 < len(blocks):
            out.append(n + 1)
        succs.append(out)
    return blocks, succs


def dominators(succs):
    """dom[b]: the blocks that dominate b (block 0 the entry), by the iterative data-flow rule."""
    preds = [[] for _ in succs]
    for b, out in enumerate(succs):
        for c in out:
            preds[c].append(b)
    every = set(range(len(succs)))
    dom = [every for _ in succs]
    dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for b in range(1, len(succs)):
            ps = [dom[p] for p in preds[b]]
            new = ({b} | set.intersection(*ps)) if ps else {b}
            if new != dom[b]:
                dom[b], changed = new, True
    return dom, preds


def main_loop(insts, first=False):
    """(instruction indices in address order, how many innermost loops hold a matrix instruction) of the
    innermost loop holding a matrix instruction, or (None, 0).

    Loops are natural loops of the disassembly's control-flow graph: a back
    edge is a branch (or fall-through) to a block that dominates its source;
    its loop is the header and every block that reaches the back edge without
    passing through the header (back edges to one header make one loop). The
    main loop is the loop with the fewest instructions among those holding a
    v_mfma/v_wmma: the innermost K loop, out-of-line blocks and both arms of
    its branches included. With first: of the innermost loops holding one
    (none of whose inner loops holds one), the first in address order
    (attention: Triton's causal kernel has two key loops, the off-diagonal
    blocks' and then the diagonal block's)."""
    blocks, succs = blocks_of(insts)
    dom, preds = dominators(succs)
    loops = {}
    for b, out in enumerate(succs):
        for h in out:
            if h in dom[b]:
                body, work = loops.setdefault(h, {h}), [b]
                while work:
                    x = work.pop()
                    if x not in body:
                        body.add(x)
                        work += preds[x]
    holding = [(h, body) for h, body in loops.items()
               if any(MATRIX.match(insts[k].mnemonic) for n in body for k in range(blocks[n][0], blocks[n][1] + 1))]
    innermost = [(h, body) for h, body in holding if not any(o < body and o != body for _, o in holding)]
    if not innermost:
        return None, 0
    if first:
        body = min(innermost, key=lambda hb: blocks[hb[0]][0])[1]
    else:
        body = min((body for _, body in holding), key=lambda b: sum(blocks[n][1] - blocks[n][0] + 1 for n in b))
    return sorted(k for n in body for k in range(blocks[n][0], blocks[n][1] + 1)), len(innermost)


def mca_cycles(mca, arch, insts, path, iterations):
    """llvm-mca's Total Cycles / iterations over insts, None when it fails."""
    cycles = ct.mca_run(mca, arch, insts, path, iterations, tool="triton-compare")
    return None if cycles is None else float(cycles)


def asm_vgprs(asm_text, kernel):
    """Architectural VGPRs of `kernel` from its assembly's register symbols
    (.set kernel.num_vgpr, N; Triton's are .L-local), None when absent."""
    m = re.search(rf"^\s*\.set (?:\.L)?{re.escape(kernel)}\.num_vgpr, (\d+)", asm_text, re.M)
    return int(m.group(1)) if m else None


@dataclass
class Measure:
    vgprs: object
    agprs: object
    unified: int
    sgprs: int
    spills: str
    scratch: int
    lds: int
    waves: str
    scope: str          # "loop" or "kernel"
    mix: Mix
    mca: object
    mca_nobar: object
    note: str = ""


def measure(tools, arch, hsaco, asm, kernel, lds_bytes, problem, work, tag):
    md = ct.kernel_metadata(tools["readelf"], hsaco).get(kernel)
    if md is None:
        sys.exit(f"triton-compare: no metadata for kernel {kernel} in {hsaco}")
    insts = ct.disassemble(tools["objdump"], arch, hsaco, kernel)
    vgprs = asm_vgprs(Path(asm).read_text(), kernel)
    note, scope = "", "kernel"
    span = insts
    if problem in ("matmul", "attention"):
        loop, loops = main_loop(insts, first=problem == "attention")
        if loop is None:
            note = f"{tag}: no loop around a matrix instruction; whole-kernel numbers"
        else:
            span, scope = [insts[k] for k in loop], "loop"
            if loops > 1:
                note = (f"{tag}: {loops} innermost loops hold matrix instructions; the first in address order "
                        f"is measured ({len(loop)} instructions)")
    iterations = 100 if scope == "loop" else 1
    mca = mca_cycles(tools["mca"], arch, span, work / "mca" / f"{tag}.s", iterations)
    mca_nobar = mca_cycles(tools["mca"], arch, [i for i in span if i.mnemonic != "s_barrier"],
                           work / "mca" / f"{tag}-no-barrier.s", iterations)
    # Triton's LDS is dynamic (the launch passes metadata.shared): count it as the kernel's.
    occ_md = dict(md, group_segment_fixed_size=max(md["group_segment_fixed_size"], lds_bytes))
    waves, limiter = ct.occupancy(arch, occ_md)
    return Measure(vgprs=vgprs, agprs=md.get("agpr_count", 0),
                   unified=md["vgpr_count"], sgprs=md["sgpr_count"],
                   spills=f"{md['vgpr_spill_count']}+{md['sgpr_spill_count']}",
                   scratch=md["private_segment_fixed_size"], lds=occ_md["group_segment_fixed_size"],
                   waves=f"{waves:g} ({limiter})", scope=scope, mix=mix_of(span), mca=mca, mca_nobar=mca_nobar,
                   note=note)


# ---------------------------------------------------------------------- report

def widths(bucket):
    """{(128, "b128"): 8, (32, "b32"): 2} -> '8×b128 + 2×b32'; '0' when empty."""
    if not bucket:
        return "0"
    return " + ".join(f"{n}×{label}" for (_, label), n in sorted(bucket.items(), reverse=True))


def total(bucket):
    return sum(bucket.values())


def cell(v):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.1f}" if v < 1000 else f"{v:.0f}"
    return str(v)


# (label, value for the cell, value for the ratio)
ROWS = [
    ("VGPRs", lambda m: m.vgprs, None),
    ("AGPRs", lambda m: m.agprs, None),
    ("VGPR+AGPR (allocated)", lambda m: m.unified, None),
    ("SGPRs", lambda m: m.sgprs, None),
    ("spills (VGPR+SGPR)", lambda m: m.spills, None),
    ("scratch bytes / lane", lambda m: m.scratch, None),
    ("LDS bytes", lambda m: m.lds, None),
    ("waves / SIMD (limit)", lambda m: m.waves, None),
    ("{scope} instructions", lambda m: m.mix.total, None),
    ("MFMA / WMMA", lambda m: m.mix.matrix, None),
    ("global/buffer loads", lambda m: widths(m.mix.loads), lambda m: total(m.mix.loads)),
    ("… direct to LDS", lambda m: widths(m.mix.loads_lds), lambda m: total(m.mix.loads_lds)),
    ("global/buffer stores", lambda m: widths(m.mix.stores), lambda m: total(m.mix.stores)),
    ("LDS reads", lambda m: widths(m.mix.lds_reads), lambda m: total(m.mix.lds_reads)),
    ("LDS writes", lambda m: widths(m.mix.lds_writes), lambda m: total(m.mix.lds_writes)),
    ("cross-lane ops (DPP, permlane, ds_bpermute/swizzle)", lambda m: m.mix.cross_lane, None),
    ("s_barrier", lambda m: m.mix.barriers, None),
    ("exec-mask branches", lambda m: m.mix.exec_branches, None),
    ("s_waitcnt", lambda m: m.mix.waitcnt, None),
    ("other VALU", lambda m: m.mix.valu, None),
    ("other SALU (branches, s_nop incl.)", lambda m: m.mix.salu, None),
    ("llvm-mca cycles / {unit}", lambda m: m.mca, None),
    ("… without s_barrier", lambda m: m.mca_nobar, None),
]


PROBLEMS = ["vector_add", "softmax", "layer_norm", "matmul", "attention"]
FORMS = {
    "tutorial01": "tessel: tutorial 01's kernel (bench/vector_add_kernel.hpp); Triton: tutorial 01 (bench/triton/vector_add.py)",
    "tutorial02": "tessel: Triton tutorial 02's kernel in C++, line by line; Triton: tutorial 02 (bench/triton/softmax.py)",
    "tutorial05": "tessel: Triton tutorial 05's forward kernel in C++, line by line; Triton: tutorial 05 "
                  "(bench/triton/layer_norm.py)",
    "triton03": "tessel: Triton tutorial 03's kernel in C++, line by line (pointers advanced each iteration, "
                "strides at run time, masks on K)",
    "triton03bt": "tessel: Triton tutorial 03's kernel in C++, line by line, B stored [N, K] (stride_bk 1, "
                  "stride_bn K); Triton: the same launch",
    "triton03mx": "tessel: bench/triton/matmul_scaled.py's kernel in C++, line by line (tutorial 03's loop with "
                  "tl.dot_scaled: OCP E4M3 A and B at BLOCK_K 64, or e2m1 (mxfp4, two to a byte along K) at BLOCK_K 128, e8m0 scales per 32 of K, C in f16; both sides "
                  "add assume(pid_n >= 0), tl.assume in Triton's, so that B's `% N` offsets load 16 bytes a thread; "
                  "tessel's dot_scaled runs gfx950's scaled MFMAs and upcasts to bf16 on gfx942)",
    "tutorial03": "tessel: tessel's tutorials/03-matrix-multiplication.cpp (offsets from k, masks on rows and K, "
                  "C in f32)",
    "library": "tessel: tessel::kernels::matmul with MatmulConfig{128, 128, 64, GROUP_M 8}",
    "kernels-attention": "tessel: kernels::attention's block program attention_fwd<T> with the library's arguments "
                         "and kernels::attentionConfig's blocks and waves for the target (one key loop; causal: "
                         "a mask in it); Triton: tutorial 06's forward kernel (bench/triton/attention.py) at the "
                         "same blocks and waves",
}


def title(case, variant):
    p = case["problem"]
    if p == "attention":
        bm, bn = case["block"]
        head = (f"attention forward {case['dtype']}, head dim {case['head_dim']}, "
                f"{'causal' if case['causal'] else 'not causal'}, {case['shape']} ({case['case']})")
        return (f"### {head}\n\n{FORMS[case['form']]}: BLOCK_M {bm}, BLOCK_N {bn}, {case['num_warps']} waves, "
                f"num_stages {case['num_stages']} (the blocks of the first target; see the notes for others). "
                f"Per key block (one iteration of the main loop)"
                f"{'; Triton: its off-diagonal loop' if case['causal'] else ''}.")
    if p == "matmul":
        b = "x".join(map(str, case["block"]))
        head = (f"matmul {case['dtype']}, {case['num_warps']} waves, {b}, num_stages {case['num_stages']}, "
                f"{case['shape']} ({case['case']})")
        triton = "Triton: tutorial 03 (bench/triton/matmul.py), same blocks, waves and stages, GROUP_SIZE_M 8"
        if case["form"] == "triton03mx":
            triton = ("Triton: bench/triton/matmul_scaled.py (tl.dot_scaled), same blocks, waves and stages, "
                      "GROUP_SIZE_M 8")
        if variant == "triton-library":
            head += ", against the same kernel in Triton"
            triton = ("Triton: kernels::matmul's block program ported line by line (bench/triton/matmul_library.py: "
                      "masks on rows, columns and K, offsets from k), same blocks, waves and stages, GROUP_M 8")
        if variant == "hip-tutorial":
            head += ", against tutorial 03's HIP autotuning entry"
            triton = ("Triton: tutorial 03 with its HIP autotuning entry for 128x128x64: 8 waves, GROUP_SIZE_M 4, "
                      "matrix_instr_nonkdim 16, num_stages 2")
        return f"### {head}\n\n{FORMS[case['form']]}. {triton}."
    names = {"vector_add": "vector add", "softmax": "softmax", "layer_norm": "layer norm forward"}
    return (f"### {names[p]} {case['dtype']}, {case['shape']}, BLOCK_SIZE {case['block'][0]}, "
            f"{case['num_warps']} waves ({case['case']})\n\n{FORMS[case['form']]}. Whole-kernel numbers.")


def table(case, variant, archs, results):
    lines = [title(case, variant), ""]
    head = ["metric"] + [f"{a} {side}" for a in archs for side in ("tessel", "Triton", "ratio")]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    scope = results[archs[0]][0].scope
    for label, value, for_ratio in ROWS:
        label = label.format(scope="main-loop" if scope == "loop" else "kernel",
                             unit="iteration" if scope == "loop" else "kernel (static, once)")
        row = [label]
        for a in archs:
            t, r = results[a]
            row += [cell(value(t)), cell(value(r)), ct.ratio((for_ratio or value)(t), (for_ratio or value)(r))]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


FOOTNOTE = """\
Definitions. *tessel*: the code object bench-triton-compare compiles through a dry launch (the runtime's own
specialization of the call's arguments); *Triton*: triton.compile of the kernel in bench/triton/ with
GPUTarget("hip", arch, wave size) and the tutorial's options, its arguments specialized by Triton's own rule for a
launch with torch tensors (bench/triton/compile.py: pointers 16-byte aligned and under 2 GiB, so
tt.divisibility 16 and tt.pointer_range 32; ints equal to 1 become constants, ints divisible by 16 get
tt.divisibility 16). Both compile for the same problem sizes and strides. *ratio*: tessel / Triton (above 1:
tessel has more; "=" both 0, "∞" only tessel's is nonzero; for counts by width, of the totals).
- VGPRs: architectural VGPRs (the assembly's `.set <kernel>.num_vgpr`); AGPRs: .agpr_count; VGPR+AGPR (allocated):
  .vgpr_count of the code object's metadata (on gfx9: VGPRs rounded up to 4 plus AGPRs, what occupancy is
  computed from); SGPRs: .sgpr_count (with VCC, flat scratch, XNACK). spills: .vgpr_spill_count +
  .sgpr_spill_count; scratch: .private_segment_fixed_size.
- LDS bytes: tessel's .group_segment_fixed_size (static LDS); Triton's kernels declare their LDS as dynamic
  (.group_segment_fixed_size 0) and the launch asks for metadata.shared bytes, which is what is shown and
  used. waves / SIMD: codegen-table.py's model: the least of the wave slots (8 CDNA, 16 RDNA3), the register
  file (512 VGPR+AGPR per lane on CDNA, granule 8; 1536 VGPRs on gfx1100 wave32, granule 24), SGPRs (gfx9),
  then whole workgroups per CU (WGP) by barriers (16 CDNA, 32 RDNA3) and LDS (64 KiB gfx942, 160 KiB gfx950,
  128 KiB gfx1100); the limit named is the one that binds ("max": the wave slots).
- Main loop (matmul, attention): the natural loops of the control-flow graph of the llvm-objdump disassembly (basic
  blocks split at s_branch/s_cbranch_* and their targets; a back edge goes to a block that dominates its
  source; its loop is every block that reaches the back edge without passing through the header); the main
  loop is the one with the fewest instructions among those holding a v_mfma/v_wmma: the innermost K loop,
  found the same way for both (attention: see below). Counts are static: each instruction of the loop's blocks
  once, both arms of a branch inside it and blocks placed after the back edge included. Row kernels (vector
  add, softmax, layer norm): the whole kernel, every instruction once (loops and both arms of branches included).
- global/buffer loads: global_load*/buffer_load*/flat_load* into registers, by the bits one lane loads
  (b128 = dwordx4); "direct to LDS": those that write LDS (buffer_load ... lds, global_load_lds_*). LDS
  reads/writes: ds_read*/ds_load* and ds_write*/ds_store* by the bits per lane (b64x2: the two-address forms
  ds_read2_b64/ds_load_2addr_b64, 128 bits; gfx950's transposing ds_read_b64_tr_b16 = b64; d16 forms b16);
  ds_bpermute/ds_swizzle are not counted there. cross-lane ops: instructions that move data between the
  lanes of a wave: ds_bpermute/ds_permute/ds_swizzle, v_permlane*, and VALU instructions with a DPP modifier
  (quad_perm, row_shr/row_ror/row_mirror/row_share/..., row_bcast, wave_shr/wave_ror, dpp8 in the operands, or
  a _dpp mnemonic); v_readlane/v_readfirstlane are not counted.
  exec-mask branches: s_cbranch_execz/execnz. other VALU: v_* except matrix and cross-lane instructions; other
  SALU: s_* except s_barrier and s_waitcnt (branches and s_nop included).
- llvm-mca cycles: "Total Cycles" of llvm-mca -mcpu=<arch> over those instructions in address order as
  straight-line code (branches as
  plain instructions), for the main loop with -iterations=100 divided by 100 (a steady-state iteration), for
  row kernels -iterations=1 over the whole kernel once; "without s_barrier": the same with its barriers taken
  out (llvm-mca charges each s_barrier its full model latency). llvm-mca models one wave issuing alone, in
  order, with LLVM's scheduling-model latencies and no other waves hiding them: compare tessel with Triton on
  one target, not targets with each other, and not as run time.
- Differences of contract. The line-by-line kernels take the same arguments, masks and options as Triton's
  (tutorial 03's ACTIVATION, "" at the tutorial's launch, compiles to nothing and is left out; Triton's
  implicit f16 -> f32 promotions and store conversions are explicit casts). tessel's tutorial 03 masks rows
  and K and computes its offsets from k each iteration (no `% M`, no pointers carried) and writes C in f32;
  kernels::matmul also takes a batch, a bias and an activation (off) and masks rows, columns and K. Triton's C
  is the inputs' type (the tutorial writes float16). num_stages 2: Triton's AMD stream pipeliner loads the next
  K block while this one computes, through LDS (on gfx950 with buffer loads straight to LDS); tessel's loads
  the next block's operands into registers and stages them through one LDS slot. Floating-point contraction
  is on for both (Triton's enable_fp_fusion default; tessel's fp_fusion, set by bench-triton-compare)."""

ATTENTION_NOTE = """\
- Attention. *tessel*: kernels::attention's block program attention_fwd<T>
  (kernels/include/tessel/kernels/attention.hpp), the library's kernel object, launched with the arguments
  kernels::attention passes for dense Q, K, V and out of [1, 16, 4096, d], one K/V head per Q head and scale
  1/sqrt(d), except fp_fusion on (the library launches with it off; on gfx942 at d 64 that changes the main
  loop by one instruction); blocks and waves from kernels::attentionConfig(d, wave size): wave64 (gfx942, gfx950)
  BLOCK_M 128, BLOCK_N 64, 4 waves at d 64 and 128 x 32, 4 waves at d 128; wave32 (gfx1100) 64 x 32, 8 waves at
  d 64 and 32 x 32, 8 waves at d 128 (the largest that do not spill with today's layouts, attention.hpp says).
  num_stages 1 (the kernel's loop is not pipelined). *Triton*: bench/triton/attention.py, the forward kernel of
  tutorial 06 in the form Triton 3.9's tutorial launches on AMD (Q, K, V and O as raw pointers, tensor
  descriptors made in the kernel, which the AMD backend rewrites to pointer loads bounds-checked against the
  descriptor's shape; block pointers are gone from Triton 3.9), compiled at the same blocks and waves as tessel
  on each target (all in the tutorial's HIP autotuning space: BLOCK_M 64/128, BLOCK_N 32/64/128, 4/8 waves)
  with the tutorial's HIP options: num_stages 1 (its only HIP choice), waves_per_eu 3 at d 64 and 2 at d 128,
  allow_flush_denorm; the dropped FP8_OUTPUT/warp_specialize/IS_HOPPER parameters are False on AMD.
- Attention main loop: one iteration handles one key block (BLOCK_N keys for all BLOCK_M queries: two dots,
  the online-softmax update). Not causal: both kernels have one key loop. Causal: tessel runs one loop up to the
  diagonal block with the mask `key <= query` (and `key < S_k`) applied to every block; Triton's tutorial
  splits the keys into two loops, first the blocks wholly below the diagonal with no mask, then the BLOCK_M
  keys of the diagonal block with the mask added as -1e6; the table measures Triton's first (off-diagonal)
  loop (start_m * BLOCK_M / BLOCK_N iterations, all but the diagonal's BLOCK_M / BLOCK_N; found as the first
  innermost loop holding a matrix instruction in address order, which a note under the tables names) against
  tessel's one masked loop.
- Attention differences of contract. tessel's kernel takes strides per dimension, grouped-query heads and
  S_q != S_k, masks query rows past S_q and keys past S_k (any sequence length), stores the log-sum-exp in
  natural log, starts the row sum at 0, masks causally with -inf inside its one loop and reads K [BLOCK_N, d]
  and transposes it in the dot. Triton's tutorial sees each of Q, K, V, O as one dense [Z * H * N_CTX, d]
  matrix (its descriptor bounds checks are against that whole matrix, not the head: N_CTX must be a multiple
  of the blocks), stores the log-sum-exp in base 2, starts the row sum at 1, and converts p to float16 for the
  second dot (here p takes V's element type, so the bf16 case multiplies bf16 by bf16 as tessel does); the
  output is written in the inputs' type by both. Semantics that cost instructions: tessel's kernel takes its
  row max with `max`/`maximum`, which propagate NaN (a v_cmp_o and a v_cndmask beside each v_max_f32), where
  Triton's tl.max/tl.maximum return the number (v_max_f32/v_max3_f32 alone), and its `exp2` keeps denormal
  results (a compare, a select and a v_ldexp around each v_exp_f32), where the tutorial launches with
  allow_flush_denorm and gets v_exp_f32 alone (tessel's fast_exp2, fmax and nanmax are those forms). Layout,
  not contract: tessel's score layout spreads a row over many lanes, so each lane computes the rescale exp2 of
  many rows (16 per lane on gfx942 at d 64, where Triton's layout, holding most of a row in one lane, has 1)
  and the row max and sum need cross-lane steps."""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="build directory holding bench/bench-triton-compare")
    ap.add_argument("--arch", action="append", help="a target (repeatable or comma-separated); default all three")
    ap.add_argument("--case", action="append",
                    help="only cases whose name contains this (repeatable): vector_add, softmax, layer_norm, "
                         "matmul-{triton03,tutorial03,library}-{f16,bf16}-w{4,8}, matmul-triton03bt-f16-w{4,8}, "
                         "matmul-{triton03,library}-fp8-w{4,8} (gfx942, gfx950), "
                         "matmul-triton03mx-mxfp8-w{4,8} (tl.dot_scaled; gfx942, gfx950), matmul-triton03mx-mxfp4-w{4,8} (gfx950), "
                         "attention-d{64,128}-{nc,causal}-{f16,bf16}")
    ap.add_argument("--no-hip-tutorial", action="store_true",
                    help="skip the extra tables against tutorial 03's HIP autotuning entry (8 waves)")
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV, help=f"Triton's virtual environment ({DEFAULT_VENV})")
    ap.add_argument("--no-install", action="store_true", help="fail instead of installing Triton into --venv")
    ap.add_argument("--llvm", default="/usr/lib/llvm-22/bin", help="directory of llvm-objdump, llvm-readelf, llvm-mca")
    ap.add_argument("--keep", metavar="DIR", help="write code objects, assembly, TTGIR and mca inputs here and keep them")
    args = ap.parse_args()
    archs = [a for spec in (args.arch or [",".join(ALL_ARCHS)]) for a in spec.split(",") if a]
    for a in archs:
        if a not in ALL_ARCHS:
            ap.error(f"--arch {a}: not one of {', '.join(ALL_ARCHS)}")
    llvm = Path(args.llvm)
    tools = {"objdump": llvm / "llvm-objdump", "readelf": llvm / "llvm-readelf", "mca": llvm / "llvm-mca"}
    for name, path in tools.items():
        if not path.exists():
            sys.exit(f"triton-compare: {name} not found at {path} (--llvm DIR)")
    build = ROOT / args.build if not Path(args.build).is_absolute() else Path(args.build)
    bench = build / "bench" / "bench-triton-compare"
    if not bench.exists():
        sys.exit(f"triton-compare: {bench} not found; build it: ninja -C {args.build} bench-triton-compare")
    py = triton_python(args.venv, TRITON_VERSION, not args.no_install)

    tmp = tempfile.TemporaryDirectory(prefix="triton-compare-")
    work = Path(args.keep) if args.keep else Path(tmp.name)
    for sub in ("tessel", "triton"):
        (work / sub).mkdir(parents=True, exist_ok=True)

    # tessel: every case compiled fresh, in a private disk cache.
    filters = [x for c in (args.case or []) for x in ("--case", c)]
    env = dict(os.environ, TESSEL_CACHE_DIR=str(Path(tmp.name) / "tessel-cache"))
    print(run([bench, work / "tessel", *archs, *filters], env=env), file=sys.stderr, end="")
    cases = {}
    for f in sorted((work / "tessel").glob("*.json")):
        c = json.loads(f.read_text())
        if c["arch"] in archs and (not args.case or any(x in c["case"] for x in args.case)):
            cases[(c["case"], c["arch"])] = c
    if not cases:
        sys.exit("triton-compare: no tessel case matched")

    # Triton: one job per distinct launch (tessel's three matmul forms share one).
    pairs, jobs, launch_notes = [], {}, []
    for (name, arch), c in cases.items():
        variants = [""]
        if c["problem"] == "matmul" and c["form"] == "triton03" and c["num_warps"] == 8 and not args.no_hip_tutorial:
            variants.append("hip-tutorial")
        if c["problem"] == "matmul" and c["form"] == "library":
            variants.append("triton-library")
        for v in variants:
            job = triton_launch(c, v)
            jobs[job["id"]] = job
            if job.get("note"):
                launch_notes.append(job["note"])
            pairs.append((name, v, arch, job["id"]))
    (work / "triton-jobs.json").write_text(json.dumps(list(jobs.values()), indent=1))
    tenv = dict(os.environ, TRITON_CACHE_DIR=str(Path(tmp.name) / "triton-cache"), TRITON_DEFAULT_FP_FUSION="1")
    print(run([py, TRITON_DIR / "compile.py", work / "triton-jobs.json", work / "triton"], env=tenv),
          file=sys.stderr, end="")

    results, notes, version = {}, list(launch_notes), None
    for name, variant, arch, job_id in pairs:
        c = cases[(name, arch)]
        stem = work / "tessel" / f"{name}-{arch}"
        t = measure(tools, arch, Path(f"{stem}.hsaco"), f"{stem}.s", c["kernel"], c["lds_bytes"], c["problem"], work,
                    f"tessel-{name}-{arch}")
        tmeta = json.loads((work / "triton" / f"{job_id}.json").read_text())
        version = tmeta["triton"]
        tstem = work / "triton" / job_id
        r = measure(tools, arch, Path(f"{tstem}.hsaco"), f"{tstem}.s", tmeta["kernel"], tmeta["shared"],
                    c["problem"], work, f"triton-{job_id}")
        first = next(cases[(name, a)] for a in archs if (name, a) in cases)
        if c["problem"] == "attention" and (c["block"], c["num_warps"]) != (first["block"], first["num_warps"]):
            notes.append(f"{name} on {arch}: BLOCK_M x BLOCK_N {'x'.join(map(str, c['block']))}, "
                         f"{c['num_warps']} waves on both sides (kernels::attentionConfig for wave{c['wave_size']})")
        results.setdefault((name, variant), {})[arch] = (t, r)
        notes += [m.note for m in (t, r) if m.note]

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    print(f"# tessel ({commit}) vs Triton {version}: code objects ({', '.join(archs)})\n")
    def order(key):
        c = next(c for (n, _), c in cases.items() if n == key[0])
        return (PROBLEMS.index(c["problem"]), list(FORMS).index(c["form"]), ["f32", "f16", "bf16", "fp8", "mxfp8", "mxfp4"].index(c["dtype"]),
                c["num_warps"], key[1])

    for (name, variant) in sorted(results, key=order):
        have = [a for a in archs if a in results[(name, variant)]]
        print(table(cases[(name, have[0])], variant, have, results[(name, variant)]))
        print()
    for n in sorted(set(notes)):
        print(f"- {n}")
    print(FOOTNOTE)
    if any(c["problem"] == "attention" for c in cases.values()):
        print(ATTENTION_NOTE)
    if args.keep:
        print(f"\n(code objects, assembly, TTGIR and llvm-mca inputs kept in {work})")


if __name__ == "__main__":
    main()
