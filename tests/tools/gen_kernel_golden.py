#!/usr/bin/python3
"""gen_kernel_golden.py -- write tests/golden/kernels/* for test_kernels.

Run by a developer, never by `make check` (the tests only read its output).
Two independent oracles produce every expected value, and the script stops
unless they agree wherever both apply:
  * gguf-py (llama.cpp/gguf-py, module gguf.quants): dequantize for every
    type it knows, quantize for Q8_0 and BF16, numpy float16 casts;
  * llama.cpp's own ggml, through ctypes, from the prebuilt node-llama-cpp
    libraries: libggml-base.so (dequantize_row_*, quantize_row_q8_*_ref,
    ggml_fp16/fp32 conversions) and libggml-cpu-x64.so, the baseline x86-64
    build whose vec_dot and activation quantizers are ggml's generic scalar
    code (no AVX, so no FMA contraction and no SIMD reordering).
Inputs are random with a fixed seed, so a rerun writes identical files.

Usage (from the repository root):
  PYTHONPATH=/work/peer/llama.cpp/gguf-py /usr/bin/python3 tests/tools/gen_kernel_golden.py \
      --ggml-lib-dir /work/peer/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64 \
      --out tests/golden/kernels
"""
import argparse
import ctypes
import hashlib
import os
import sys

import numpy as np
from gguf.constants import GGMLQuantizationType as T
import gguf.quants as gq

SEED = 20240601
DOT_ROWS = 4    # rows per vec_dot golden (tests/unit/test_kernels.c: DOT_ROWS)
DOT_N = 512     # elements per row        (tests/unit/test_kernels.c: DOT_N)

# name: (ggml type, block elems, block bytes, offsets of f16 scale fields)
TYPES = {
    "f16":   (T.F16, 1, 2, None),
    "bf16":  (T.BF16, 1, 2, None),
    "q4_0":  (T.Q4_0, 32, 18, [0]),
    "q4_1":  (T.Q4_1, 32, 20, [0, 2]),
    "q5_0":  (T.Q5_0, 32, 22, [0]),
    "q5_1":  (T.Q5_1, 32, 24, [0, 2]),
    "q8_0":  (T.Q8_0, 32, 34, [0]),
    "q2_K":  (T.Q2_K, 256, 84, [80, 82]),
    "q3_K":  (T.Q3_K, 256, 110, [108]),
    "q4_K":  (T.Q4_K, 256, 144, [0, 2]),
    "q5_K":  (T.Q5_K, 256, 176, [0, 2]),
    "q6_K":  (T.Q6_K, 256, 210, [208]),
    "tq1_0": (T.TQ1_0, 256, 54, [52]),
    "tq2_0": (T.TQ2_0, 256, 66, [64]),
    "iq4_nl": (T.IQ4_NL, 32, 18, [0]),
    "iq4_xs": (T.IQ4_XS, 256, 136, [0]),
}
# types added after the first release of these files: drawn after all the
# others, so rerunning the script rewrites the older files unchanged
LATE = ("iq4_nl", "iq4_xs")
# vec_dot pairs as ggml-cpu's type_traits_cpu
DOT_TYPES = {"f32": T.F32, "f16": T.F16, "bf16": T.BF16, "q4_0": T.Q8_0,
             "q4_1": T.Q8_1, "q5_0": T.Q8_0, "q5_1": T.Q8_1, "q8_0": T.Q8_0,
             "q2_K": T.Q8_K, "q3_K": T.Q8_K, "q4_K": T.Q8_K, "q5_K": T.Q8_K,
             "q6_K": T.Q8_K, "tq1_0": T.Q8_K, "tq2_0": T.Q8_K,
             "iq4_nl": T.Q8_0, "iq4_xs": T.Q8_K}
ACT_BYTES = {T.F32: (1, 4), T.F16: (1, 2), T.BF16: (1, 2), T.Q8_0: (32, 34),
             T.Q8_1: (32, 36), T.Q8_K: (256, 292)}

VOIDP = ctypes.c_void_p
TO_FLOAT = ctypes.CFUNCTYPE(None, VOIDP, VOIDP, ctypes.c_int64)
FROM_FLOAT = ctypes.CFUNCTYPE(None, VOIDP, VOIDP, ctypes.c_int64)
VEC_DOT = ctypes.CFUNCTYPE(None, ctypes.c_int, VOIDP, ctypes.c_size_t, VOIDP,
                           ctypes.c_size_t, VOIDP, ctypes.c_size_t, ctypes.c_int)


class TypeTraits(ctypes.Structure):
    _fields_ = [("type_name", ctypes.c_char_p), ("blck_size", ctypes.c_int64),
                ("blck_size_interleave", ctypes.c_int64), ("type_size", ctypes.c_size_t),
                ("is_quantized", ctypes.c_bool), ("to_float", VOIDP),
                ("from_float_ref", VOIDP)]


class TypeTraitsCpu(ctypes.Structure):
    _fields_ = [("from_float", VOIDP), ("vec_dot", VOIDP), ("vec_dot_type", ctypes.c_int),
                ("nrows", ctypes.c_int64)]


class Ggml:
    def __init__(self, libdir):
        self.base = ctypes.CDLL(os.path.join(libdir, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
        self.cpu = ctypes.CDLL(os.path.join(libdir, "libggml-cpu-x64.so"))
        self.base.ggml_get_type_traits.restype = ctypes.POINTER(TypeTraits)
        self.cpu.ggml_get_type_traits_cpu.restype = ctypes.POINTER(TypeTraitsCpu)
        self.cpu.ggml_cpu_init()
        for f in ("ggml_fp16_to_fp32_row", "ggml_fp32_to_fp16_row", "ggml_fp32_to_bf16_row_ref",
                  "quantize_row_q8_0_ref", "quantize_row_q8_1_ref", "quantize_row_q8_K_ref",
                  "dequantize_row_q8_K"):
            getattr(self.base, f).argtypes = [VOIDP, VOIDP, ctypes.c_int64]

    def dequant(self, qtype, raw, n):
        fn = TO_FLOAT(self.base.ggml_get_type_traits(int(qtype)).contents.to_float)
        src = np.ascontiguousarray(raw)
        out = np.zeros(n, dtype=np.float32)
        fn(src.ctypes.data, out.ctypes.data, n)
        return out

    def from_float(self, qtype, x):
        tr = self.cpu.ggml_get_type_traits_cpu(int(qtype)).contents
        elems, nbytes = ACT_BYTES[qtype]
        out = np.zeros(len(x) // elems * nbytes, dtype=np.uint8)
        x = np.ascontiguousarray(x, dtype=np.float32)
        FROM_FLOAT(tr.from_float)(x.ctypes.data, out.ctypes.data, len(x))
        return out

    def ref_quant(self, fname, x, nbytes):
        out = np.zeros(nbytes, dtype=np.uint8)
        x = np.ascontiguousarray(x, dtype=np.float32)
        getattr(self.base, fname)(x.ctypes.data, out.ctypes.data, len(x))
        return out

    def vec_dot(self, qtype, n, w, qx):
        tr = self.cpu.ggml_get_type_traits_cpu(int(qtype)).contents
        assert tr.nrows == 1
        s = np.zeros(1, dtype=np.float32)
        w = np.ascontiguousarray(w)
        qx = np.ascontiguousarray(qx)
        VEC_DOT(tr.vec_dot)(n, s.ctypes.data, 0, w.ctypes.data, 0, qx.ctypes.data, 0, 1)
        return s[0]

    def vec_dot_type(self, qtype):
        return self.cpu.ggml_get_type_traits_cpu(int(qtype)).contents.vec_dot_type


def sane_f16(rng, count):
    """Finite f16 scales, normal and subnormal, both signs."""
    mag = np.exp2(rng.uniform(-20.0, 3.0, count))
    sign = np.where(rng.random(count) < 0.5, -1.0, 1.0)
    return (mag * sign).astype(np.float16)


def random_blocks(rng, name, nblocks):
    qtype, elems, nbytes, scales = TYPES[name]
    if qtype == T.F16:
        return rng.normal(0, 2, nblocks).astype(np.float16).view(np.uint8)
    if qtype == T.BF16:
        return gq.quantize(rng.normal(0, 2, nblocks).astype(np.float32), T.BF16).reshape(-1)
    raw = rng.integers(0, 256, (nblocks, nbytes), dtype=np.uint8)
    for off in scales:
        raw[:, off:off + 2] = sane_f16(rng, nblocks).view(np.uint8).reshape(nblocks, 2)
    return raw.reshape(-1)


def same_bits(a, b, what):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.tobytes() != b.tobytes():
        sys.exit(f"oracles disagree: {what}")


def write(out, name, *parts):
    with open(os.path.join(out, name), "wb") as f:
        for p in parts:
            f.write(np.ascontiguousarray(p).tobytes())


def gen_dequant(rng, g, out, names):
    for name in names:
        qtype, elems, nbytes, _ = TYPES[name]
        nblocks = 256 if elems == 1 else (32 if elems == 32 else 6)
        raw = random_blocks(rng, name, nblocks)
        n = nblocks * elems
        exp = gq.dequantize(raw.reshape(nblocks, nbytes if elems > 1 else 2), qtype)
        exp = np.asarray(exp, dtype=np.float32).reshape(-1)
        same_bits(exp.view(np.uint32), g.dequant(qtype, raw, n).view(np.uint32), f"dequant {name}")
        write(out, f"dequant_{name}.bin", raw, exp)
    if any(n in LATE for n in names):
        return
    # q8_K has no gguf-py dequantizer: ggml's dequantize_row_q8_K only
    raw = rng.integers(0, 256, (6, 292), dtype=np.uint8)
    raw[:, 0:4] = rng.normal(0, 0.05, 6).astype(np.float32).view(np.uint8).reshape(6, 4)
    raw = raw.reshape(-1)
    exp = np.zeros(6 * 256, dtype=np.float32)
    g.base.dequantize_row_q8_K(raw.ctypes.data, exp.ctypes.data, 6 * 256)
    write(out, "dequant_q8_K.bin", raw, exp)


def activation_rows(rng, rows, n):
    """Normal activations plus blocks that pin down rounding: exact halves
    after scaling (roundf goes away from zero, q8_K's nearest_int to even),
    an all-zero block, and a block whose extreme element is positive."""
    x = rng.normal(0, 1, (rows, n)).astype(np.float32)
    halves = np.array([127, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 126.5, -126.5, 3.5],
                      dtype=np.float32)
    x[0, :32] = np.resize(halves, 32)
    x[0, 32:64] = 0.0
    x[1, 256:512] = np.resize(np.concatenate(([-127.0], halves[1:])), 256).astype(np.float32)
    x[2, 0:256] = np.abs(x[2, 0:256])
    return x


def gen_quant(rng, g, out):
    x = activation_rows(rng, 4, 512).reshape(-1)
    q80 = gq.quantize(x.reshape(-1, 32), T.Q8_0).reshape(-1)
    same_bits(q80, g.ref_quant("quantize_row_q8_0_ref", x, len(x) // 32 * 34), "q8_0 quantize")
    same_bits(q80, g.from_float(T.Q8_0, x), "q8_0 quantize (cpu)")
    write(out, "quant_q8_0.bin", x, q80)
    q81 = g.ref_quant("quantize_row_q8_1_ref", x, len(x) // 32 * 36)
    same_bits(q81, g.from_float(T.Q8_1, x), "q8_1 quantize (cpu)")
    write(out, "quant_q8_1.bin", x, q81)
    q8k = g.ref_quant("quantize_row_q8_K_ref", x, len(x) // 256 * 292)
    same_bits(q8k, g.from_float(T.Q8_K, x), "q8_K quantize (cpu)")
    write(out, "quant_q8_K.bin", x, q8k)


def gen_dot(rng, g, out, names, x=None):
    """vec_dot goldens of names; x: the activation rows (drawn and written
    when None); returns them"""
    if x is None:
        x = activation_rows(rng, DOT_ROWS, DOT_N)
        write(out, "dot_x.bin", x)
    for name in names:
        vdt = DOT_TYPES[name]
        if name == "f32":
            qtype, w = T.F32, rng.normal(0, 1, (DOT_ROWS, DOT_N)).astype(np.float32).view(np.uint8)
        else:
            qtype, elems, nbytes, _ = TYPES[name]
            w = np.stack([random_blocks(rng, name, DOT_N // elems) for _ in range(DOT_ROWS)])
        assert g.vec_dot_type(qtype) == int(vdt), name
        qx = np.stack([g.from_float(vdt, x[r]) for r in range(DOT_ROWS)])
        s = np.array([g.vec_dot(qtype, DOT_N, w[r], qx[r]) for r in range(DOT_ROWS)],
                     dtype=np.float32)
        write(out, f"dot_{name}.bin", w, qx, s)
    return x


def gen_half(rng, g, out):
    # f16 -> f32 over all 65536 patterns: ggml's table, numpy must agree on
    # every non-NaN; stored as a SHA-256 of the little-endian f32 bits.
    allh = np.arange(65536, dtype=np.uint16)
    f = np.zeros(65536, dtype=np.float32)
    g.base.ggml_fp16_to_fp32_row(allh.ctypes.data, f.ctypes.data, 65536)
    npf = allh.view(np.float16).astype(np.float32)
    ok = ~np.isnan(npf)
    same_bits(f[ok].view(np.uint32), npf[ok].view(np.uint32), "f16->f32")
    b = gq.dequantize(allh.view(np.uint8).reshape(-1, 2), T.BF16).reshape(-1)
    lines = [f"f16_to_f32 {hashlib.sha256(f.tobytes()).hexdigest()}",
             f"bf16_to_f32 {hashlib.sha256(np.asarray(b, np.float32).tobytes()).hexdigest()}"]
    with open(os.path.join(out, "tables.sha256"), "w") as fh:
        fh.write("\n".join(lines) + "\n")

    # f32 -> f16 rounding: every halfway point between neighbouring f16
    # values of a random sample (and one f32 ulp either side), the
    # subnormal and overflow edges, zeros, infinities, NaNs.
    h = rng.choice(np.arange(0x7BFF, dtype=np.uint16), 600, replace=False)
    lo = h.view(np.float16).astype(np.float64)
    hi = (h + 1).astype(np.uint16).view(np.float16).astype(np.float64)
    mid = ((lo + hi) / 2).astype(np.float32)
    u = mid.view(np.uint32)
    cases = np.concatenate([mid, (u + 1).view(np.float32), (u - 1).view(np.float32)])
    edges = np.array([0.0, -0.0, 65504.0, 65519.996, 65520.0, 65536.0, 1e10, 2.0**-24,
                      2.0**-25, 2.0**-25 * 1.0000001, 2.0**-26, 2.0**-14, 2.0**-14 * 0.9999,
                      3 * 2.0**-25, 1e-30, np.inf], dtype=np.float32)
    cases = np.concatenate([cases, edges, -edges, rng.normal(0, 100, 200).astype(np.float32),
                            np.exp2(rng.uniform(-30, 17, 200)).astype(np.float32)])
    cases = cases.astype(np.float32)
    ggml16 = np.zeros(len(cases), dtype=np.uint16)
    g.base.ggml_fp32_to_fp16_row(cases.ctypes.data, ggml16.ctypes.data, len(cases))
    same_bits(ggml16, cases.astype(np.float16).view(np.uint16), "f32->f16 (numpy)")
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF812345, 0x7FFFFFFF],
                    dtype=np.uint32).view(np.float32)
    nan16 = np.zeros(len(nans), dtype=np.uint16)
    g.base.ggml_fp32_to_fp16_row(nans.ctypes.data, nan16.ctypes.data, len(nans))
    cases = np.concatenate([cases, nans])
    write(out, "f32_to_f16.bin", cases, np.concatenate([ggml16, nan16]))

    # f32 -> bf16: the same kind of cases around bf16 halfway points.
    hb = rng.integers(0, 0x7F7F, 600).astype(np.uint32) << 16
    midb = (hb | 0x8000).view(np.float32)
    cases = np.concatenate([midb, (hb | 0x8001).view(np.float32), (hb | 0x7FFF).view(np.float32),
                            ((hb + 0x10000) | 0x8000).view(np.float32), edges, -edges, nans,
                            rng.normal(0, 1, 200).astype(np.float32)]).astype(np.float32)
    exp = gq.quantize(cases, T.BF16).view(np.uint16)
    ref = np.zeros(len(cases), dtype=np.uint16)
    g.base.ggml_fp32_to_bf16_row_ref(cases.ctypes.data, ref.ctypes.data, len(cases))
    same_bits(exp, ref, "f32->bf16")
    write(out, "f32_to_bf16.bin", cases, exp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ggml-lib-dir", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    g = Ggml(a.ggml_lib_dir)
    rng = np.random.default_rng(SEED)
    early = [n for n in TYPES if n not in LATE]
    gen_dequant(rng, g, a.out, early)
    gen_quant(rng, g, a.out)
    x = gen_dot(rng, g, a.out, [n for n in DOT_TYPES if n not in LATE])
    gen_half(rng, g, a.out)
    for name in LATE:  # in the order they were added
        gen_dequant(rng, g, a.out, (name,))
        gen_dot(rng, g, a.out, (name,), x)


if __name__ == "__main__":
    main()
