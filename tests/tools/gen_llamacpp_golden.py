#!/usr/bin/python3
"""gen_llamacpp_golden.py -- write tests/golden/llamacpp/* for tests/unit/test_llamacpp.c.

Run by a developer, never by `make check`. Every expected value comes from
llama.cpp's own compiled code, the prebuilt node-llama-cpp build that runs
on an AVX-512/AMX x86 CPU (libggml-cpu-sapphirerapids.so), through
tests/tools/llamacpp_oracle (a small C driver: a real ggml graph with the
weight in the AMX buffer or the plain CPU buffer, or a direct call of an
exported row function). Weights are quantized by ggml itself
(ggml_quantize_chunk of libggml-base.so, through ctypes). Inputs are random
with a fixed seed, so a rerun writes identical files. The machine must have
AMX (the oracle stops otherwise).

Usage (from the repository root; the build command of the oracle is in
tests/golden/llamacpp/README):
  /usr/bin/python3 tests/tools/gen_llamacpp_golden.py --oracle /tmp/llamacpp_oracle \\
      --ggml-lib-dir /work/peer/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64 \\
      --out tests/golden/llamacpp
"""
import argparse
import ctypes
import os
import subprocess

import numpy as np

SEED = 20250811
# shapes; tests/unit/test_llamacpp.c has the same constants
MM_K = 512          # weight row length (two k-quant super-blocks)
MM_K_F16 = 256
MM_N = 64           # weight rows (a multiple of 32: AMX)
MM_MS = (1, 4, 19)  # activation rows: 1 = decode (VNNI kernel), else AMX tiles (19 = 16 + 3)
MM_TYPES = {"q4_0": 2, "q8_0": 8, "q4_K": 12, "q6_K": 14, "f16": 1}
Q5_1_TYPE = 7       # ggml_type of q5_1 (products in the plain CPU buffer)
Q5_K_TYPE = 13      # ggml_type of q5_K (AMX buffer)
Q4_1_TYPE = 3       # ggml_type of q4_1 (AMX buffer)
Q5_0_TYPE = 6       # ggml_type of q5_0 (plain CPU buffer: vec_dot, llamafile for m > 1)
TQ_TYPES = {"tq1_0": 34, "tq2_0": 35}  # ternary (plain CPU buffer: vec_dot for any m)
Q3_K_TYPE = 11      # ggml_type of q3_K (plain CPU buffer: no AMX or repacked form)
Q2_K_TYPE = 10      # ggml_type of q2_K (CPU_REPACK buffer, q2_K_8x8, on AVX-512 CPUs)
IQ4_NL_TYPE = 20    # ggml_type of iq4_nl (CPU_REPACK buffer, iq4_nl_8x8, on AVX2 CPUs)
MM_K_ODD = 480      # 15 blocks: vec_dot's pairs of blocks and its odd last block
IQ4_XS_TYPE = 23    # ggml_type of iq4_xs (AMX buffer)
BF16_TYPE = 30      # ggml_type of bf16 (plain CPU buffer)
MM_K_BF16_ODD = 464 # 7 steps of 64 and 16 more: vec_dot's tail in double; no tinyBLAS (not a multiple of 32)
F32_K, F32_N, F32_M = 256, 8, 2   # f32 product in the plain CPU buffer (llamafile tinyBLAS)
F32_K_ODD, F32_M_ODD = 200, 3     # three 64-steps and 8 leftovers; not a multiple of 16: vec_dot
Q8_N = 1024
DOT_F16_NS = (512, 100, 37)
DOT_F32_CASES = ((64, 64), (19, 256), (100, 256), (256, 256))  # (values, zero-padded length)
SM_N, SM_ROWS = 256, 6
SW_CASES = ((512, 3), (100, 2))   # (row length, rows)
ROPE_HD, ROPE_HEADS, ROPE_TOK = 64, 2, 8
ROPE_MODES = {"norm": 0, "neox": 2}


def oracle(path, args, data):
    r = subprocess.run([path] + [str(a) for a in args], input=data, stdout=subprocess.PIPE,
                       check=True)
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--ggml-lib-dir", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(SEED)
    base = ctypes.CDLL(os.path.join(a.ggml_lib_dir, "libggml-base.so"))
    base.ggml_quantize_chunk.restype = ctypes.c_size_t
    base.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                         ctypes.c_void_p]
    os.makedirs(a.out, exist_ok=True)

    def put(name, *parts):
        with open(os.path.join(a.out, name), "wb") as f:
            for p in parts:
                f.write(p if isinstance(p, bytes) else np.ascontiguousarray(p).tobytes())

    # activations shared by every product: rows of mixed magnitude, one
    # with an outlier (as real hidden states have)
    x = (rng.standard_normal((max(MM_MS), MM_K)) * rng.uniform(0.2, 3.0, (max(MM_MS), 1)))
    x[2, 17] = 40.0
    x = x.astype(np.float32)
    put("x.f32", x)

    def weight_mm(ggml_type, name, k, places, tname=None):
        """Weight rows drawn now (f16 by numpy, else quantized by ggml),
        then their products with the first MM_MS rows of x in each
        (buffer, file name) of places; tname: the ggml type name when the
        file name is not it."""
        wf = (rng.standard_normal((MM_N, k)) * 0.05).astype(np.float32)
        if name == "f16":
            w = wf.astype(np.float16).tobytes()
        else:
            buf = ctypes.create_string_buffer(MM_N * k * 4)
            n = base.ggml_quantize_chunk(ggml_type, wf.ctypes.data, buf, 0, MM_N, k, None)
            w = buf.raw[:n]
        put("w_%s.bin" % name, w)
        for place, mmname in places:
            for m in MM_MS:
                xs = np.ascontiguousarray(x[:m, :k]).tobytes()
                put("mm_%s_m%d.f32" % (mmname, m),
                    oracle(a.oracle, ["mul_mat", place, tname or name, k, MM_N, m], w + xs))

    for name, t in MM_TYPES.items():
        weight_mm(t, name, MM_K_F16 if name == "f16" else MM_K, [("amx", name)])

    wf = rng.standard_normal((F32_N, F32_K)).astype(np.float32)
    xf = rng.uniform(0, 0.1, (F32_M, F32_K)).astype(np.float32)
    put("mm_f32_cpu.bin", wf, xf,
        oracle(a.oracle, ["mul_mat", "cpu", "f32", F32_K, F32_N, F32_M], wf.tobytes() + xf.tobytes()))

    # Q8_0 quantizer: random blocks, blocks whose scale is exactly 1
    # (amax 127) with values on .5 (round half to even), an all-zero block,
    # one with a positive maximum and one with a negative maximum
    q = (rng.standard_normal(Q8_N) * 2).astype(np.float32)
    q[0:32] = np.arange(-16, 16) + 0.5
    q[5] = 127.0
    q[32:64] = 0.0
    q[64:96] = rng.uniform(-1, 1, 32)
    q[70] = -3.0
    q[96:128] = np.array([(i % 7) - 3 + 0.5 for i in range(32)])
    q[100] = -127.0
    q = q.astype(np.float32)
    put("q8_0.bin", q, oracle(a.oracle, ["q8_0", Q8_N], q.tobytes()))

    parts = []
    for n in DOT_F16_NS:
        av = rng.standard_normal(n).astype(np.float16)
        bv = (rng.standard_normal(n) * 0.3).astype(np.float16)
        parts += [av, bv, oracle(a.oracle, ["dot_f16", n], av.tobytes() + bv.tobytes())]
    put("dot_f16.bin", *parts)

    parts = []
    for nv, npad in DOT_F32_CASES:
        av = np.zeros(npad, np.float32)
        bv = np.zeros(npad, np.float32)
        av[:nv] = rng.standard_normal(nv)
        bv[:nv] = rng.standard_normal(nv)
        parts += [av, bv, oracle(a.oracle, ["dot_f32", npad], av.tobytes() + bv.tobytes())]
    put("dot_f32.bin", *parts)

    # attention-like score rows: the tail of each row masked with -inf
    s = (rng.standard_normal((SM_ROWS, SM_N)) * 3).astype(np.float32)
    for r, live in enumerate((1, 19, 100, 255, 256, 37)):
        s[r, live:] = -np.inf
    put("soft_max.bin", s, oracle(a.oracle, ["soft_max", SM_N, SM_ROWS], s.tobytes()))

    for n, rows in SW_CASES:
        g = (rng.standard_normal((rows, n)) * 4).astype(np.float32)
        u = rng.standard_normal((rows, n)).astype(np.float32)
        g[0, :8] = [0.0, -0.0, 88.0, -88.0, 100.0, -100.0, 1e-30, -1e-30]
        put("swiglu_%d.bin" % n, g, u,
            oracle(a.oracle, ["swiglu", n, rows], g.tobytes() + u.tobytes()))

    for name, mode in ROPE_MODES.items():
        r = (rng.standard_normal((ROPE_TOK, ROPE_HEADS, ROPE_HD)) * 2).astype(np.float32)
        put("rope_%s.bin" % name, r,
            oracle(a.oracle, ["rope", ROPE_HD, ROPE_HEADS, ROPE_TOK, mode], r.tobytes()))

    # Q5_1 in the plain CPU buffer (ggml's x86 vec_dot: llama.cpp has no
    # AMX or tinyBLAS form for it) and the Q8_1 quantizer feeding it, on
    # the Q8_0 quantizer's input; drawn last, so the files above keep
    # their values
    put("q8_1.bin", q, oracle(a.oracle, ["q8_1", Q8_N], q.tobytes()))

    weight_mm(Q5_1_TYPE, "q5_1", MM_K, [("cpu", "q5_1_cpu")])
    # Q5_K in the AMX buffer (as Q4_K: VNNI for one row, tiles for more)
    weight_mm(Q5_K_TYPE, "q5_K", MM_K, [("amx", "q5_K")])
    # Q4_1 in both buffers: AMX, and ggml's x86 vec_dot (a token embedding)
    weight_mm(Q4_1_TYPE, "q4_1", MM_K, [("amx", "q4_1"), ("cpu", "q4_1_cpu")])
    # Q5_0 in the plain CPU buffer (llama.cpp has no AMX form for it):
    # ggml's x86 vec_dot for one row, llamafile's tinyBLAS for more
    weight_mm(Q5_0_TYPE, "q5_0", MM_K, [("cpu", "q5_0_cpu")])
    # the ternary types (no AMX, tinyBLAS or repacked form: ggml's x86
    # vec_dot for any number of rows)
    for name, t in TQ_TYPES.items():
        weight_mm(t, name, MM_K, [("cpu", name + "_cpu")])
    # Q3_K likewise (ggml's x86 vec_dot for any number of rows)
    weight_mm(Q3_K_TYPE, "q3_K", MM_K, [("cpu", "q3_K_cpu")])
    # Q2_K in the CPU_REPACK buffer, where llama.cpp puts every Q2_K matrix
    # with a multiple of 8 rows on AVX-512 CPUs (q2_K_8x8: gemv for one
    # row, gemm for groups of four)
    weight_mm(Q2_K_TYPE, "q2_K", MM_K, [("repack", "q2_K_repack")])
    # IQ4_NL in the CPU_REPACK buffer (iq4_nl_8x8: one fma per block for
    # gemv and gemm alike) and in the plain CPU buffer (ggml's x86
    # vec_dot), there also with an odd number of blocks per row
    weight_mm(IQ4_NL_TYPE, "iq4_nl", MM_K, [("repack", "iq4_nl_repack"), ("cpu", "iq4_nl_cpu")])
    weight_mm(IQ4_NL_TYPE, "iq4_nl_odd", MM_K_ODD, [("cpu", "iq4_nl_odd_cpu")], tname="iq4_nl")
    # IQ4_XS in the AMX buffer (VNNI kernel for one row, tiles for more)
    weight_mm(IQ4_XS_TYPE, "iq4_xs", MM_K, [("amx", "iq4_xs")])
    # BF16 in the plain CPU buffer: ggml's vec_dot (AVX-512 BF16) for one
    # row, llamafile's tinyBLAS for more; then a row length tinyBLAS
    # refuses (vec_dot for every row count)
    weight_mm(BF16_TYPE, "bf16", MM_K, [("cpu", "bf16_cpu")])
    weight_mm(BF16_TYPE, "bf16_odd", MM_K_BF16_ODD, [("cpu", "bf16_odd_cpu")], tname="bf16")
    # F32 weights with rows tinyBLAS declines (200 is not a multiple of 16):
    # ggml_vec_dot_f32 on the row's true length, its 8 leftovers included
    wf = rng.standard_normal((F32_N, F32_K_ODD)).astype(np.float32)
    xf = rng.uniform(-1, 1, (F32_M_ODD, F32_K_ODD)).astype(np.float32)
    put("mm_f32_odd_cpu.bin", wf, xf,
        oracle(a.oracle, ["mul_mat", "cpu", "f32", F32_K_ODD, F32_N, F32_M_ODD], wf.tobytes() + xf.tobytes()))

if __name__ == "__main__":
    main()
