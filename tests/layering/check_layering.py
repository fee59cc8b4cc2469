#!/usr/bin/env python3
"""Checks tessel's import rule: dsl -> runtime -> lowering -> core.

Usage: check_layering.py SOURCE_DIR     scan the tree; exit 1 naming each violation
       check_layering.py --self-test    prove every rule fires on a made-up tree

A module is a top-level folder. Which module a `tessel/...` header belongs to
follows from its path: tessel/core/, tessel/runtime/, tessel/kernels/,
tessel/lowering/ (and the dialect's tessel/Dialect/, tessel/Analysis/); any
other tessel/<file> is the DSL's.
"""
import os
import re
import sys
import tempfile

# Which modules each module may include; tools/, tests/, tutorials/ and bench/
# are not layered.
ALLOWED = {
    "core": {"core"},
    "lowering": {"core", "lowering"},
    "runtime": {"core", "lowering", "runtime"},
    "dsl": {"core", "runtime", "dsl"},
    "kernels": {"core", "runtime", "dsl", "kernels"},
}
# Headers a user's program includes: these never include MLIR, LLVM or lld.
PUBLIC_DIRS = ("core/include/", "dsl/include/", "runtime/include/", "kernels/include/")
COMPILER_HEADER = re.compile(r"^(mlir|llvm|llvm-c|lld)/")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
SOURCE_EXTENSIONS = (".h", ".hpp", ".cpp", ".inc")


def header_module(path):
    if not path.startswith("tessel/"):
        return None
    rest = path[len("tessel/"):]
    if "/" not in rest:
        return "dsl"
    top = rest.split("/", 1)[0]
    return {"core": "core", "runtime": "runtime", "kernels": "kernels", "lowering": "lowering",
            "Dialect": "lowering", "Analysis": "lowering"}.get(top, "unknown")


def check_file(rel, text):
    module = rel.split("/", 1)[0]
    public = rel.startswith(PUBLIC_DIRS)
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        target = m.group(1)
        where = f"{rel}:{number}: "
        if COMPILER_HEADER.match(target):
            if module == "core":
                problems.append(where + f"core/ includes {target}: core is plain C++, no MLIR or LLVM")
            elif public:
                problems.append(where + f"public header includes {target}: "
                                "what a user includes carries no MLIR or LLVM")
            continue
        owner = header_module(target)
        if owner is None or module not in ALLOWED:
            continue
        if owner == "unknown":
            problems.append(where + f"includes {target}, which belongs to no module")
        elif owner not in ALLOWED[module]:
            problems.append(where + f"{module}/ includes {target} ({owner}/): imports run "
                            "dsl -> runtime -> lowering -> core (dsl may use core directly)")
    return problems


def scan(root):
    problems = []
    for module in sorted(ALLOWED):
        for folder, dirs, files in os.walk(os.path.join(root, module)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SOURCE_EXTENSIONS):
                    path = os.path.join(folder, name)
                    rel = os.path.relpath(path, root).replace(os.sep, "/")
                    with open(path, encoding="utf-8", errors="replace") as f:
                        problems += check_file(rel, f.read())
    return problems


def self_test():
    # Each file breaks one rule (the message part expected), or none.
    cases = {
        "lowering/lib/a.cpp": ('#include "tessel/kernel.hpp"', "lowering/ includes tessel/kernel.hpp (dsl/)"),
        "runtime/src/b.cpp": ("#include <tessel/tracer.hpp>", "runtime/ includes tessel/tracer.hpp (dsl/)"),
        "dsl/include/tessel/c.hpp": ('#include "tessel/lowering/compile.hpp"', "dsl/ includes tessel/lowering/"),
        "core/src/d.cpp": ('#include "tessel/runtime/device.hpp"', "core/ includes tessel/runtime/device.hpp"),
        "core/include/tessel/core/e.hpp": ('#include "llvm/ADT/StringRef.h"', "core/ includes llvm/ADT"),
        "runtime/include/tessel/runtime/f.hpp": ('#include "mlir/IR/Value.h"', "public header includes mlir/"),
        "kernels/include/tessel/kernels/g.hpp": ("#  include <llvm/Support/Error.h>", "public header includes llvm/"),
        "lowering/lib/h.cpp": ('#include "tessel/runtime/device.hpp"', "lowering/ includes tessel/runtime/"),
        "dsl/src/i.cpp": ('#include "tessel/oops/x.hpp"', "belongs to no module"),
        "runtime/src/ok.cpp": ('#include "tessel/lowering/compile.hpp"\n#include "llvm/IR/Module.h"', None),
        "dsl/include/tessel/ok.hpp": ('#include "tessel/core/trace.hpp"\n#include "tessel/runtime/device.hpp"', None),
        "tests/ok.cpp": ('#include "tessel/kernel.hpp"\n#include "mlir/IR/Value.h"', None),
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, (text, _) in cases.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write("// made up\n" + text + "\n")
        problems = scan(root)
    failed = False
    for rel, (_, expected) in cases.items():
        mine = [p for p in problems if p.startswith(rel + ":")]
        if expected is None and mine:
            print(f"self-test: {rel} should pass but: {mine}")
            failed = True
        elif expected is not None and not any(p.startswith(rel + ":2: ") and expected in p for p in mine):
            print(f"self-test: {rel} should fail at line 2 with '{expected}', got {mine}")
            failed = True
    print("self-test " + ("FAILED" if failed else f"passed: {len(problems)} violations found as expected"))
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    problems = scan(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering violation(s)")
        return 1
    print("layering: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
