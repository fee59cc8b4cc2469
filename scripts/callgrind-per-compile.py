#!/usr/bin/env python3
"""Per-compile instruction counts from two callgrind profiles (issue 34).

A process's first compile builds what later ones keep (contexts, pipelines,
target machines), so one compile's cost is the difference between a run of
N + 1 compiles and a run of 1, divided by N. This prints that difference per
function, inclusive (callees counted), largest first, or the tree of callees
under one function:

  valgrind --tool=callgrind --callgrind-out-file=one.out build/bench/bench-vector-add --compile-only 1
  valgrind --tool=callgrind --callgrind-out-file=many.out build/bench/bench-vector-add --compile-only 11
  scripts/callgrind-per-compile.py one.out many.out 10                 # the top 40 functions
  scripts/callgrind-per-compile.py one.out many.out 10 --root 'tessel::generateAmdgpuCode(' --depth 2

--root takes the start of a function's name as callgrind_annotate prints it
(libLLVM.so has no symbols for its internal functions: those show as
addresses; their callees' names usually say what they are).
"""
import argparse
import re
import subprocess

LINE = re.compile(r'\s*([\d,]+)\s+\([^)]*\)\s+([<>*])?\s*(.*?)(\s+\(\d+x\))?\s+\[[^\]]*\]\s*$')


def calling_tree(profile):
    """{function: (inclusive cost, {callee: cost})} from callgrind_annotate."""
    text = subprocess.run(['callgrind_annotate', '--tree=calling', '--inclusive=yes', '--threshold=100', profile],
                          capture_output=True, text=True, check=True).stdout
    tree = {}
    for block in text.split('\n\n'):
        me, cost, callees = None, 0, {}
        for line in block.split('\n'):
            m = LINE.match(line)
            if not m or not m.group(2):
                continue
            n = int(m.group(1).replace(',', ''))
            if m.group(2) == '*':
                me, cost = m.group(3), n
            elif m.group(2) == '>':
                callees[m.group(3)] = callees.get(m.group(3), 0) + n
        if me:
            old = tree.get(me, (0, {}))
            tree[me] = (old[0] + cost, callees)
    return tree


def per_compile(one, many, runs, key):
    names = set(one) | set(many)
    return sorted(((key(many, k) - key(one, k)) / runs, k) for k in names)[::-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('one', help='profile of the run with one compile')
    parser.add_argument('many', help='profile of the run with RUNS more compiles')
    parser.add_argument('runs', type=int, help='how many more compiles the second run made')
    parser.add_argument('--root', help='print the callee tree under the function whose name starts so')
    parser.add_argument('--depth', type=int, default=2)
    parser.add_argument('--min', type=float, default=20000, help='smallest per-compile cost shown')
    parser.add_argument('--top', type=int, default=40)
    args = parser.parse_args()
    one, many = calling_tree(args.one), calling_tree(args.many)
    if not args.root:
        rows = per_compile(one, many, args.runs, lambda t, k: t.get(k, (0, {}))[0])
        for cost, name in rows[:args.top]:
            print('%12.0f  %s' % (cost, name[:160]))
        return
    roots = [k for k in set(one) | set(many) if k.startswith(args.root) or k.startswith('???:' + args.root)]
    if not roots:
        raise SystemExit('no function starts with %r' % args.root)

    def walk(function, depth, seen):
        if depth > args.depth or function in seen:
            return
        a, b = one.get(function, (0, {}))[1], many.get(function, (0, {}))[1]
        rows = per_compile(a, b, args.runs, lambda t, k: t.get(k, 0))
        for cost, callee in rows:
            if cost < args.min:
                break
            print('%s%12.0f  %s' % ('  ' * depth, cost, callee[:150]))
            walk(callee, depth + 1, seen | {function})

    for root in roots:
        total = (many.get(root, (0, {}))[0] - one.get(root, (0, {}))[0]) / args.runs
        print('%12.0f  %s' % (total, root[:160]))
        walk(root, 1, set())


if __name__ == '__main__':
    main()
