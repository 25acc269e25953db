#!/usr/bin/python3
"""gen_variant_golden.py -- write tests/golden/variants/VARIANT.sha256: what
each of llama.cpp's other x86 CPU variants computes for the products and
greedy generations of tests/golden/zen4, as SHA-256 digests of its outputs.

Run by a developer, never by `make check`. For each variant it runs the
same matrix products as gen_zen4_golden.py through
tests/tools/llamacpp_oracle.c linked with that variant's
libggml-cpu-VARIANT.so (node-llama-cpp 3.21.1, llama.cpp v0.4.0), and the
same 32-token greedy generations and top logits (golden_logits.py) through llamapeer with GGML_BACKEND_DIR
naming a folder that holds only that variant. A variant runs only on a
CPU with its instructions (alderlake needs AVX-VNNI, sapphirerapids AMX).
tests/bats/arith.bats compares the digests with tests/golden/zen4, so a
variant whose digests all match is covered by the zen4 goldens.

Usage (from the repository root):
  /usr/bin/python3 tests/tools/gen_variant_golden.py --peer $PEER_DIR \\
      --out tests/golden/variants icelake skylakex cascadelake cannonlake cooperlake haswell
"""
import argparse
import hashlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_zen4_golden import F32, MM_MS, MM_N, MODELS, PRODUCTS, PROMPTS, SRC  # noqa: E402
import golden_logits  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("variants", nargs="+")
    a = ap.parse_args()
    lib = os.path.join(a.peer, "node_modules/@node-llama-cpp/linux-x64/bins/linux-x64")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(SRC, "x.f32"), "rb") as f:
        x = f.read()
    for v in a.variants:
        oracle = "/tmp/oracle_%s" % v
        subprocess.run(["gcc", "-O1", "-std=gnu17", "-o", oracle, "tests/tools/llamacpp_oracle.c",
                        "-I%s/llama.cpp/ggml/include" % a.peer,
                        "%s/libggml-cpu-%s.so" % (lib, v), "%s/libggml-base.so" % lib,
                        "-Wl,-rpath,%s" % lib], check=True)
        vdir = "/tmp/ggml-variant-%s" % v
        os.makedirs(vdir, exist_ok=True)
        so = os.path.join(vdir, "libggml-cpu-%s.so" % v)
        if not os.path.exists(so):
            os.symlink(os.path.join(lib, "libggml-cpu-%s.so" % v), so)
        lines = []
        for t, buf, k, n, part in PRODUCTS:
            with open(os.path.join(SRC, "w_%s.bin" % t), "rb") as f:
                w = f.read()
            w = w[: len(w) // MM_N * n]
            for m in MM_MS:
                r = subprocess.run([oracle, "mul_mat", buf, t, str(k), str(n), str(m)],
                                   input=w + b"".join(x[i * 512 * 4: i * 512 * 4 + k * 4] for i in range(m)),
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
                lines.append("%s  mm_%s_%s_m%d.f32\n" % (hashlib.sha256(r.stdout).hexdigest(), t, part, m))
        for name, k, n, m in F32:
            w, xs = x[: n * k * 4], x[n * k * 4: (n * k + m * k) * 4]
            r = subprocess.run([oracle, "mul_mat", "cpu", "f32", str(k), str(n), str(m)], input=w + xs,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
            lines.append("%s  %s\n" % (hashlib.sha256(w + xs + r.stdout).hexdigest(), name))
        gen = []
        env = dict(os.environ, GGML_BACKEND_DIR=vdir)
        for model in MODELS:
            for p in PROMPTS:
                r = subprocess.run([os.path.join(a.peer, "bin/llamapeer"), "gen",
                                    "tests/models/%s.gguf" % model, p, "32", "--fa", "off",
                                    "--kv", "f32", "--threads", "1"], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
                out = [l[5:].decode() for l in r.stdout.splitlines() if l.startswith(b"out: ")][0]
                gen.append("%s.gguf\t%s\t%s\n" % (model, p, out))
        lines.append("%s  gen.tsv\n" % hashlib.sha256("".join(gen).encode()).hexdigest())
        golden_logits.write("/tmp/logits-%s.tsv" % v, os.path.join(a.peer, "bin/llamapeer"), env)
        with open("/tmp/logits-%s.tsv" % v, "rb") as f:
            lines.append("%s  logits.tsv\n" % hashlib.sha256(f.read()).hexdigest())
        with open(os.path.join(a.out, "%s.sha256" % v), "w") as f:
            f.writelines(lines)


if __name__ == "__main__":
    main()
