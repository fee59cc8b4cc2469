#!/usr/bin/env python3
"""Compiles every public header of tessel on its own, warning-free.

Usage: check_headers.py --cxx COMPILER --include DIR [--include DIR ...]
                        [--exclude tessel/x.hpp ...] [--jobs N]

Each header under each include directory is the only thing a translation unit
includes (twice: the second must be a no-op), compiled with
-std=c++20 -Wall -Wextra -Werror -fsyntax-only and only the given include
directories: a header that needs another include first, warns, or reaches for
MLIR, LLVM or lld headers (through the compiler's default paths) fails.
Before the real run, a made-up header with a warning and one that includes
an LLVM header must fail and a clean one must pass, so the check is known to
fire under this compiler.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

FLAGS = ["-std=c++20", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"]
# An LLVM, MLIR or lld header (not the compiler's own resource headers).
COMPILER_HEADER = re.compile(r"/include/(llvm|llvm-c|mlir|mlir-c|lld)/")


def headers_under(root, excluded):
    found = []
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith((".hpp", ".h")):
                rel = os.path.relpath(os.path.join(folder, name), root)
                if rel not in excluded:
                    found.append(rel)
    return sorted(found)


def compile_header(cxx, includes, rel, scratch):
    """Returns None when the header compiles alone and cleanly, else why not."""
    deps = os.path.join(scratch, rel.replace("/", "_") + ".d")
    source = f'#include "{rel}"\n#include "{rel}"\n'
    cmd = [cxx, *FLAGS, *[f"-I{d}" for d in includes], "-MD", "-MF", deps, "-x", "c++", "-"]
    run = subprocess.run(cmd, input=source, capture_output=True, text=True)
    if run.returncode != 0:
        return run.stdout + run.stderr
    with open(deps) as f:
        bad = [p for p in f.read().split() if COMPILER_HEADER.search(p)]
    if bad:
        return "includes compiler headers: " + " ".join(bad)
    return None


def check(cxx, includes, excluded, jobs):
    headers = [(root, rel) for root in includes for rel in headers_under(root, excluded)]
    if not headers:
        print("no headers found", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as scratch, \
            concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = pool.map(lambda h: (h, compile_header(cxx, includes, h[1], scratch)), headers)
        failures = [(root, rel, why) for (root, rel), why in results if why is not None]
    for root, rel, why in failures:
        print(f"FAIL {os.path.join(root, rel)} ({cxx}):\n{why}")
    print(f"{len(headers) - len(failures)} of {len(headers)} headers compile alone "
          f"without warnings under {cxx}")
    return 1 if failures else 0


def self_test(cxx):
    """The flags fire under this compiler: bad headers fail, a good one passes."""
    cases = {
        "tessel/good.hpp": ("#pragma once\ninline int good(int x) { return x + 1; }\n", True),
        "tessel/warns.hpp": ("#pragma once\ninline int warns(int x) { int unused; return x; }\n", False),
        # Compiles (a stand-in LLVM header is on the path), but reaches LLVM.
        "tessel/uses_llvm.hpp": ("#pragma once\n#include <llvm/Support/stand_in.h>\n", False),
    }
    ok = True
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "tessel"))
        os.makedirs(os.path.join(root, "include", "llvm", "Support"))
        with open(os.path.join(root, "include", "llvm", "Support", "stand_in.h"), "w") as f:
            f.write("#pragma once\n")
        for rel, (text, clean) in cases.items():
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        for rel, (_, clean) in cases.items():
            passed = compile_header(cxx, [root, os.path.join(root, "include")], rel, root) is None
            if passed != clean:
                print(f"self-test: {rel} {'failed' if clean else 'passed'} under {cxx}")
                ok = False
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--include", action="append", required=True)
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if not self_test(args.cxx):
        return 1
    return check(args.cxx, args.include, set(args.exclude), args.jobs)


if __name__ == "__main__":
    sys.exit(main())
