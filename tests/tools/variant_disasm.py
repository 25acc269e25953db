#!/usr/bin/env python3
"""variant_disasm.py -- compare two llama.cpp CPU variants' compiled code,
function by function, where one of them cannot run here.

The alderlake variant (libggml-cpu-alderlake.so) needs AVX-VNNI, which
neither this machine nor QEMU 7.2 runs, so its outputs cannot be made; its
rounding can still be read. Both libraries are disassembled (objdump -d);
each function's instructions are normalised (addresses, RIP-relative
operands and symbol names dropped) and compared. For a function that
differs, the floating-point instructions (add/sub/mul/div/fma/hadd/min/
max/sqrt/convert in ps, ss, pd, sd) are compared as a multiset, the three
FMA encodings (132, 213, 231: the same a * b + c, another register
order) counted as one.

Usage: variant_disasm.py LIB_A LIB_B

Prints the counts, and each differing function whose float instructions
differ in kind or number. Exit 0. A tool, not a test: the libraries come
from the oracle (../shared/tools/llamapeer), which the tests never need.
"""
import collections
import re
import subprocess
import sys

FLOAT = re.compile(r'^v?((add|sub|mul|div|hadd|max|min|sqrt|rcp|rsqrt|dp|round)(ps|ss|pd|sd)|'
                   r'f(n?)m(add|sub)\d*(ps|ss|pd|sd)|cvt\w+)$')


def functions(lib):
    out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', lib], check=True,
                         capture_output=True, text=True).stdout
    funcs, cur = collections.OrderedDict(), None
    for line in out.splitlines():
        m = re.match(r'^[0-9a-f]+ <(.+)>:$', line.strip())
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        parts = line.split('\t')
        if cur is None or len(parts) < 2:
            continue
        ins = re.sub(r'#.*', '', parts[-1]).strip()
        ins = re.sub(r'<[^>]*>', '<>', ins)
        ins = re.sub(r'0x[0-9a-f]+\(%rip\)', 'RIP', ins)
        ins = re.sub(r'\b[0-9a-f]{4,}\b', 'ADDR', ins)
        if ins:
            funcs[cur].append(ins)
    return funcs


def float_ops(ins):
    ops = collections.Counter()
    for i in ins:
        op = i.split()[0]
        if FLOAT.match(op):
            ops[re.sub(r'(f(n?)m(add|sub))\d+', r'\1', op)] += 1
    return ops


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = functions(sys.argv[1]), functions(sys.argv[2])
    common = [k for k in a if k in b]
    differ = [k for k in common if a[k] != b[k]]
    print(f'{len(common)} functions in both, {len(common) - len(differ)} identical, {len(differ)} differ; '
          f'only in A {len(a) - len(common)}, only in B {len(b) - len(common)}')
    kinds = 0
    for k in differ:
        fa, fb = float_ops(a[k]), float_ops(b[k])
        if fa != fb:
            kinds += 1
            print(f'float instructions differ: {k}: A has {dict(fa - fb)}, B has {dict(fb - fa)}')
    print(f'{len(differ) - kinds} of the {len(differ)} differing functions have the same float instructions')


if __name__ == '__main__':
    main()
