#!/usr/bin/python3
"""gen_zen4_golden.py -- write tests/golden/zen4/ for tests/unit/test_llamacpp.c
and tests/bats/arith.bats.

Run by a developer, never by `make check`. Every expected value comes from
llama.cpp itself as it runs on an AVX-512 CPU without AMX, i.e. the
prebuilt libggml-cpu-zen4.so of node-llama-cpp 3.21.1 (llama.cpp v0.4.0):
matrix products through tests/tools/llamacpp_oracle.c linked with that
variant, on the inputs of tests/golden/llamacpp (x.f32, w_<type>.bin, made
by ggml_quantize_chunk), and greedy ids through llamapeer on a machine that
loads the zen4 variant (`llamapeer info` names it). The commands are in
tests/golden/zen4/README.

Usage (from the repository root):
  /usr/bin/python3 tests/tools/gen_zen4_golden.py --oracle /tmp/oracle_zen4 \\
      --llamapeer $PEER_DIR/bin/llamapeer --out tests/golden/zen4
"""
import argparse
import os
import subprocess

import golden_logits

SRC = "tests/golden/llamacpp"
MM_N, MM_MS = 64, (1, 4, 19)
# (type, llama.cpp buffer on zen4, row length, rows, file name part): the
# first `rows` rows of w_<type>.bin; 60 rows (not a multiple of 8) is a
# matrix the CPU_REPACK buffer declines, which stays in the plain buffer
PRODUCTS = (("q8_0", "cpu", 512, MM_N, "cpu"), ("q4_0", "repack", 512, MM_N, "repack"),
            ("q4_1", "cpu", 512, MM_N, "cpu"), ("q4_K", "repack", 512, MM_N, "repack"),
            ("q5_K", "cpu", 512, MM_N, "cpu"), ("q6_K", "cpu", 512, MM_N, "cpu"),
            ("f16", "cpu", 256, MM_N, "cpu"), ("iq4_xs", "cpu", 512, MM_N, "cpu"),
            ("q4_0", "cpu", 512, 60, "odd_cpu"), ("q4_K", "cpu", 512, 60, "odd_cpu"))
# f32 products that carry their inputs (the first values of x.f32: N rows
# of K, then M rows of K, then the M x N results): ggml_vec_dot_f32's
# leftovers past its 64-steps, vectorised products added in order and
# the last K % 8 fused (172: 44 leftovers; 13: all of them; 100 with 3
# tokens: vec_dot, tinyBLAS declines 100 values)
F32 = (("mm_f32_k172_cpu.bin", 172, 8, 1), ("mm_f32_k13_cpu.bin", 13, 8, 1), ("mm_f32_k100_cpu.bin", 100, 8, 3))
MODELS = ("e256-llama-q8_0", "e256-llama-q4_0", "e256-llama-q4_k_m", "e256-llama-q6_k",
          "e256-llama-q5_0", "e256-llama-q5_1", "e256-llama-iq4_nl", "e256-llama-q2_k",
          "e256-llama-q3_k", "e256-llama-tq1_0", "e256-llama-tq2_0", "e256-llama-tied-f16",
          "e256-llama-tied-bf16", "e256-qwen2-q8_0")
PROMPTS = ("Once upon a time", "Sara had a cat named Tom. The cat",
           "The sun was shining and the sky was blue.")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--llamapeer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mm-only", action="store_true", help="the products only, not gen.tsv")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(SRC, "x.f32"), "rb") as f:
        x = f.read()
    for t, buf, k, n, part in PRODUCTS:
        with open(os.path.join(SRC, "w_%s.bin" % t), "rb") as f:
            w = f.read()
        w = w[: len(w) // MM_N * n]
        for m in MM_MS:
            r = subprocess.run([a.oracle, "mul_mat", buf, t, str(k), str(n), str(m)],
                               input=w + b"".join(x[r * 512 * 4: r * 512 * 4 + k * 4] for r in range(m)),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, check=True)
            with open(os.path.join(a.out, "mm_%s_%s_m%d.f32" % (t, part, m)), "wb") as f:
                f.write(r.stdout)
    for name, k, n, m in F32:
        w, xs = x[: n * k * 4], x[n * k * 4: (n * k + m * k) * 4]
        r = subprocess.run([a.oracle, "mul_mat", "cpu", "f32", str(k), str(n), str(m)], input=w + xs,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
        with open(os.path.join(a.out, name), "wb") as f:
            f.write(w + xs + r.stdout)
    if a.mm_only:
        return
    lines = []
    for model in MODELS:
        for p in PROMPTS:
            r = subprocess.run([a.llamapeer, "gen", "tests/models/%s.gguf" % model, p, "32",
                                "--fa", "off", "--kv", "f32", "--threads", "1"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
            out = [l[5:].decode() for l in r.stdout.splitlines() if l.startswith(b"out: ")][0]
            lines.append("%s.gguf\t%s\t%s\n" % (model, p, out))
    with open(os.path.join(a.out, "gen.tsv"), "w") as f:
        f.writelines(lines)
    golden_logits.write(os.path.join(a.out, "logits.tsv"), a.llamapeer)
    golden_logits.write_fa(os.path.join(a.out, "fa_logits.tsv"), a.llamapeer)


if __name__ == "__main__":
    main()
