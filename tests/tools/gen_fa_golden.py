#!/usr/bin/python3
"""gen_fa_golden.py -- write tests/golden/fa/gen.tsv for tests/bats/flash_attn.bats.

Run by a developer, never by `make check`. Every expected id comes from
llama.cpp itself (llamapeer, llama.cpp v0.4.0 from node-llama-cpp 3.21.1) on
a machine that loads its zen4 CPU variant (`llamapeer info` names it): greedy
ids with flash attention on (llama.cpp's default F16 cache) and off (F16
cache), and on over a Q8_0 cache (--kv q8_0: K and V, which llama.cpp
rotates by a Walsh-Hadamard matrix; only the models whose head width is a
multiple of 32, as llama.cpp requires), for a short prompt and for
tests/golden/fa/long.txt (a text written for these tests, 1,772 tokens in
the stories260K vocabulary the test models share).

Usage (from the repository root):
  /usr/bin/python3 tests/tools/gen_fa_golden.py --llamapeer $PEER_DIR/bin/llamapeer \\
      --out tests/golden/fa/gen.tsv
"""
import argparse
import subprocess

# tests/models, then (shared/...) the decoders of ../shared/models
MODELS = ("e256-llama-q8_0.gguf", "e256-llama-q4_k_m.gguf", "e256-qwen2-q8_0.gguf",
          "e256-llama-tied-f16.gguf", "a64-gemma3-swa-f32.gguf", "a64-phi3-long-f32.gguf",
          "a64-qwen3-hd24-f32.gguf", "a64-lfm2-f32.gguf", "a64-lfm2moe-e8k2-f32.gguf",
          "shared/stories260K.gguf", "shared/tiny-llama-spm-f32.gguf", "shared/tiny-gemma3-f32.gguf",
          "shared/tiny-phi3-f32.gguf", "shared/tiny-qwen3-f32.gguf", "shared/tiny-lfm2-f32.gguf",
          "shared/tiny-lfm2moe-f32.gguf")
PROMPTS = (("short", "Once upon a time"), ("long", None))
MODES = (("on", ["--fa", "on"]), ("off", ["--fa", "off", "--kv", "f16"]), ("q8", ["--fa", "on", "--kv", "q8_0"]))
# head widths of whole Q8_0 blocks: the ones a Q8_0 cache takes (64:
# rotated; tiny-qwen3's 32: not)
Q8_MODELS = ("e256-llama-q8_0.gguf", "e256-llama-q4_k_m.gguf", "e256-qwen2-q8_0.gguf", "e256-llama-tied-f16.gguf",
             "shared/tiny-qwen3-f32.gguf")
N = 16


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llamapeer", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    long_text = open("tests/golden/fa/long.txt").read().rstrip("\n")
    rows = []
    for model in MODELS:
        for pname, text in PROMPTS:
            for mode, flags in MODES:
                if mode == "q8" and model not in Q8_MODELS:
                    continue
                path = "../shared/models/" + model[7:] if model.startswith("shared/") else "tests/models/" + model
                cmd = [a.llamapeer, "gen", path, text or long_text, str(N),
                       "--threads", "1", "--ctx", "4096"] + flags
                out = subprocess.run(cmd, check=True, capture_output=True).stdout.decode(errors="replace")
                ids = next(l for l in out.splitlines() if l.startswith("out:"))[4:].split()
                rows.append("\t".join((model, pname, mode, " ".join(ids))))
                print(rows[-1], flush=True)
    with open(a.out, "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
