#!/usr/bin/python3
# gen_quant_golden.py -- golden Q4_0 and Q8_0 weight blocks from gguf-py's
# numpy quantizers (llama.cpp's reference), for tests/unit/test_profile.c.
#
# Writes tests/golden/quant/input.f32 (8192 little-endian f32: a seeded
# normal sample with a few exact values mixed in: zeros, ties at half
# steps, a block of one repeated value), q4_0.bin and q8_0.bin.
# Command (run from the repository root):
#   PYTHONPATH=/work/peer/llama.cpp/gguf-py /usr/bin/python3 tests/tools/gen_quant_golden.py
import numpy as np
from gguf import quants
from gguf.constants import GGMLQuantizationType as T

rng = np.random.RandomState(42)
x = (rng.standard_normal(8192) * 0.05).astype(np.float32)
x[0:32] = 0.0
x[32:64] = 0.125
x[64:96] = np.linspace(-1.0, 1.0, 32, dtype=np.float32)
x[96:128] = np.float32(3.0) * (np.arange(32, dtype=np.float32) - 16) / 16
x = x.reshape(32, 256)
x.astype("<f4").tofile("tests/golden/quant/input.f32")
quants.quantize(x, T.Q4_0).tofile("tests/golden/quant/q4_0.bin")
quants.quantize(x, T.Q8_0).tofile("tests/golden/quant/q8_0.bin")
