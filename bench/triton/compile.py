"""Compiles the Triton kernels of bench/triton/ for scripts/triton-compare.py.

Runs in a virtual environment that has Triton (never in tessel's build or
tests). No GPU and no torch: each argument is specialized by Triton's own
rule (native_specialize_impl with the HIP backend, as JITFunction.run does at
a launch), with a stand-in for a torch tensor whose data pointer is 16-byte
aligned and whose storage is under 2 GiB. So a pointer gets tt.divisibility
16 and tt.pointer_range 32, an int equal to 1 becomes a constant, an int
divisible by 16 gets tt.divisibility 16: what a launch with torch tensors on
a ROCm GPU compiles.

    python compile.py JOBS.json OUT_DIR

JOBS.json: a list of {"id", "source" (a file in this folder), "kernel",
"arch", "warp_size", "args": [[name, kind, value]], "options": {...}} where
kind is "tensor" (value: [dtype, bytes]), "scalar" (an int or float) or
"constexpr". For each job OUT_DIR gets <id>.hsaco, <id>.s (amdgcn),
<id>.ttgir and <id>.json (the kernel's name, LDS bytes, Triton's version).
"""
import importlib.util
import json
import sys
from pathlib import Path

import triton
import triton.language as tl
from triton._C.libtriton import native_specialize_impl
from triton.backends.amd.compiler import HIPBackend
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = Path(__file__).resolve().parent


class Tensor:
    """What Triton's specialization reads of a torch tensor."""

    def __init__(self, dtype, nbytes):
        self.dtype = getattr(tl, dtype)
        self.nbytes = nbytes

    def data_ptr(self):
        return 0x7F0000000000  # PyTorch's allocations are 256-byte aligned

    def ptr_range(self):
        return self.nbytes


def load_kernel(source, name):
    spec = importlib.util.spec_from_file_location(Path(source).stem, HERE / source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def specialize(fn, args):
    """(signature, constexprs, attrs) as JITFunction._pack_args builds them."""
    if [a[0] for a in args] != fn.arg_names:
        raise SystemExit(f"compile.py: {fn.__name__} takes {fn.arg_names}, the job gives {[a[0] for a in args]}")
    signature, constexprs, attrs = {}, {}, {}
    for i, (name, kind, value) in enumerate(args):
        if kind == "constexpr":
            signature[name] = "constexpr"
            constexprs[(i, )] = value
            continue
        arg = Tensor(*value) if kind == "tensor" else value
        ty, attr = native_specialize_impl(HIPBackend, arg, False, True, True)
        signature[name] = ty
        if ty == "constexpr":      # an int equal to 1
            constexprs[(i, )] = value
        elif isinstance(attr, str):
            attrs[(i, )] = HIPBackend.parse_attr(attr)
    return signature, constexprs, attrs


def main():
    jobs = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for job in jobs:
        fn = load_kernel(job["source"], job["kernel"])
        signature, constexprs, attrs = specialize(fn, job["args"])
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
        k = triton.compile(src, target=GPUTarget("hip", job["arch"], job["warp_size"]), options=job["options"])
        stem = out / job["id"]
        Path(f"{stem}.hsaco").write_bytes(k.asm["hsaco"])
        Path(f"{stem}.s").write_text(k.asm["amdgcn"])
        Path(f"{stem}.ttgir").write_text(k.asm["ttgir"])
        md = k.metadata
        Path(f"{stem}.json").write_text(json.dumps({
            "kernel": md.name, "shared": md.shared, "num_warps": md.num_warps, "num_stages": md.num_stages,
            "warp_size": md.warp_size, "triton": triton.__version__,
            "signature": signature, "attrs": {str(k[0]): v for k, v in attrs.items()},
            "constants": {str(k[0]): v for k, v in constexprs.items()},
        }) + "\n")
        print(f"triton {job['id']}: {md.name}, {len(k.asm['hsaco'])}-byte code object", flush=True)


if __name__ == "__main__":
    main()
