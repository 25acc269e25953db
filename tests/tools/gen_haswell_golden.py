#!/usr/bin/python3
"""gen_haswell_golden.py -- write tests/golden/haswell/ (and, with --variant
icelake, tests/golden/icelake/) for tests/unit/test_llamacpp.c and
tests/bats/arith.bats.

Run by a developer, never by `make check`. Every expected value comes from
llama.cpp itself as it runs on a CPU with AVX2 and no AVX-512, i.e. the
prebuilt libggml-cpu-haswell.so of node-llama-cpp 3.21.1 (llama.cpp
v0.4.0), or on an AVX-512 CPU without AVX512-BF16, its
libggml-cpu-icelake.so, for which only the BF16 products and the logits
are written (its other products are zen4's: tests/golden/variants): matrix products and row operations through
tests/tools/llamacpp_oracle.c linked with that variant, on the inputs of
tests/golden/llamacpp (copied into each file that carries its inputs),
and logits (tests/tools/golden_logits.py) through llamapeer with GGML_BACKEND_DIR naming a folder that
holds only that variant (`LLAMAPEER_VERBOSE=1 llamapeer info` names it).
The commands are in tests/golden/haswell/README.

Usage (from the repository root):
  /usr/bin/python3 tests/tools/gen_haswell_golden.py --oracle /tmp/oracle_haswell \\
      --llamapeer $PEER_DIR/bin/llamapeer --backend-dir DIR --out tests/golden/haswell
"""
import argparse
import os
import subprocess

import golden_logits

SRC = "tests/golden/llamacpp"
MM_N, MM_MS = 64, (1, 4, 19)
# (type, buffer asked for, row length, file name part): the first row
# length values of each of the 64 rows of w_<type>.bin's; Q2_K in the
# plain buffer, where llama.cpp's haswell build keeps it (its CPU_REPACK
# form wants AVX-512)
PRODUCTS = (("f16", "cpu", 256, "w_f16.bin", "f16_cpu"), ("bf16", "cpu", 512, "w_bf16.bin", "bf16_cpu"),
            ("bf16", "cpu", 464, "w_bf16_odd.bin", "bf16_odd_cpu"),
            ("q2_K", "cpu", 512, "w_q2_K.bin", "q2_K_cpu"))
# f32 products that carry their inputs: (file, K, N, M); 200 and 24 values
# are whole 8-steps (tinyBLAS<8> takes them, the AVX-512 builds' 16-lane
# form does not), 100 is not
F32 = (("mm_f32_cpu.bin", 256, 8, 2), ("mm_f32_odd_cpu.bin", 200, 8, 3), ("mm_f32_k100.bin", 100, 8, 3),
       ("mm_f32_k24.bin", 24, 8, 2), ("mm_f32_k64_m1.bin", 64, 8, 1), ("mm_f32_k100_m1.bin", 100, 8, 1),
       ("mm_f32_k7_m1.bin", 7, 8, 1), ("mm_f32_k45.bin", 45, 8, 3))


def read(name):
    with open(os.path.join(SRC, name), "rb") as f:
        return f.read()


def oracle(exe, args, data):
    return subprocess.run([exe] + [str(a) for a in args], input=data, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, check=True).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--llamapeer", required=True)
    ap.add_argument("--backend-dir", required=True, help="a folder holding only libggml-cpu-VARIANT.so")
    ap.add_argument("--variant", default="haswell", choices=("haswell", "icelake"))
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    def put(name, *parts):
        with open(os.path.join(a.out, name), "wb") as f:
            for p in parts:
                f.write(p)

    x = read("x.f32")
    for t, buf, k, wfile, part in PRODUCTS:
        if a.variant == "icelake" and t != "bf16":
            continue
        w = read(wfile)
        for m in MM_MS:
            xs = b"".join(x[r * 512 * 4: r * 512 * 4 + k * 4] for r in range(m))
            put("mm_%s_m%d.f32" % (part, m), oracle(a.oracle, ["mul_mat", buf, t, k, MM_N, m], w + xs))
    env = dict(os.environ, GGML_BACKEND_DIR=a.backend_dir)
    info = subprocess.run([a.llamapeer, "info", golden_logits.MODELS[0]], env=dict(env, LLAMAPEER_VERBOSE="1"),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    if a.variant not in info:
        raise SystemExit("llamapeer did not load the %s variant:\n%s" % (a.variant, info))
    golden_logits.write(os.path.join(a.out, "logits.tsv"), a.llamapeer, env)
    golden_logits.write_fa(os.path.join(a.out, "fa_logits.tsv"), a.llamapeer, env)
    if a.variant == "icelake":
        return
    # f32 weights and activations from x.f32's values (its 19 x 512 floats)
    for name, k, n, m in F32:
        if name in ("mm_f32_cpu.bin", "mm_f32_odd_cpu.bin"):
            src = read(name)
            w, xs = src[: n * k * 4], src[n * k * 4: (n * k + m * k) * 4]
        else:
            w, xs = x[: n * k * 4], x[n * k * 4: (n * k + m * k) * 4]
        put(name, w, xs, oracle(a.oracle, ["mul_mat", "cpu", "f32", k, n, m], w + xs))

    # the row operations of tests/golden/llamacpp, their inputs copied
    src = read("dot_f16.bin")
    parts, p = [], 0
    for n in (512, 100, 37):
        ab = src[p: p + 4 * n]
        parts += [ab, oracle(a.oracle, ["dot_f16", n], ab)]
        p += 4 * n + 4
    put("dot_f16.bin", *parts)
    src = read("dot_f32.bin")
    parts, p = [], 0
    for npad in (64, 256, 256, 256):
        ab = src[p: p + 8 * npad]
        parts += [ab, oracle(a.oracle, ["dot_f32", npad], ab)]
        p += 8 * npad + 4
    put("dot_f32.bin", *parts)
    src = read("soft_max.bin")
    sm = src[: len(src) // 2]
    put("soft_max.bin", sm, oracle(a.oracle, ["soft_max", 256, 6], sm))
    for n, rows in ((512, 3), (100, 2)):
        src = read("swiglu_%d.bin" % n)
        gu = src[: 2 * n * rows * 4]
        put("swiglu_%d.bin" % n, gu, oracle(a.oracle, ["swiglu", n, rows], gu))



if __name__ == "__main__":
    main()
