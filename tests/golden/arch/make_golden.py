#!/usr/bin/python3
"""make_golden.py -- llama.cpp's outputs for the qwen3, phi3, gemma3, lfm2 and
lfm2moe engine tests (tests/golden/arch/), through the llamapeer oracle.

Run from the repository root with PEER_DIR set up by
shared/tools/llamapeer/setup.sh:  /usr/bin/python3 tests/golden/arch/make_golden.py
With --only SUBSTR, only the models whose file name contains SUBSTR: their
rows are appended to greedy.tsv (the others' rows stay) and their logits
files rewritten.
Never run by the tests: its outputs are checked in. One llamapeer process
at a time, --threads 1, --fa off --kv f32 throughout.
"""
import os
import subprocess
import sys

PEER = os.environ.get("PEER_DIR", os.path.expanduser("~/.cache/q42-peer"))
LP = os.environ.get("LLAMAPEER", PEER + "/bin/llamapeer")
SM = os.environ.get("SHARED_MODELS", "../shared/models")
G = "tests/golden/arch"
OPTS = ["--fa", "off", "--kv", "f32", "--threads", "1"]
PROMPTS = ["Once upon a time", "The little dog", "Tom and Lily went to the park.",
           "In the morning the old man walked slowly to the river and sat down."]
MODELS = [(SM, "tiny-qwen3-f32.gguf"), (SM, "tiny-phi3-f32.gguf"), (SM, "tiny-gemma3-f32.gguf"),
          ("tests/models", "a64-qwen3-hd24-f32.gguf"), ("tests/models", "a64-qwen3-hd24-q8_0.gguf"),
          ("tests/models", "a64-phi3-long-f32.gguf"), ("tests/models", "a64-phi3-short-f32.gguf"),
          ("tests/models", "a64-gemma3-swa-f32.gguf"), ("tests/models", "a64-gemma3-swa-q8_0.gguf"),
          (SM, "tiny-lfm2-f32.gguf"), ("tests/models", "a64-lfm2-f32.gguf"),
          ("tests/models", "a64-lfm2-q8_0.gguf"), ("tests/models", "a64-lfm2-l10-f32.gguf"),
          (SM, "tiny-lfm2moe-f32.gguf"), ("tests/models", "a64-lfm2moe-e8k2-f32.gguf"),
          ("tests/models", "a64-lfm2moe-e8k2-q8_0.gguf"), ("tests/models", "a64-lfm2moe-e8k2-q4_0.gguf"),
          ("tests/models", "a64-lfm2moe-e8k4-f32.gguf"), ("tests/models", "a256-lfm2moe-q4_k_m.gguf"),
          ("tests/models", "a256-lfm2moe-q6_k.gguf")]
LOGITS = ["tiny-qwen3-f32.gguf", "tiny-phi3-f32.gguf", "tiny-gemma3-f32.gguf",
          "a64-qwen3-hd24-f32.gguf", "a64-phi3-long-f32.gguf", "a64-phi3-short-f32.gguf",
          "a64-gemma3-swa-f32.gguf", "tiny-lfm2-f32.gguf", "a64-lfm2-f32.gguf", "a64-lfm2-l10-f32.gguf",
          "tiny-lfm2moe-f32.gguf", "a64-lfm2moe-e8k2-f32.gguf", "a64-lfm2moe-e8k4-f32.gguf",
          "a64-lfm2moe-e8k2-q8_0.gguf", "a64-lfm2moe-e8k2-q4_0.gguf", "a256-lfm2moe-q4_k_m.gguf",
          "a256-lfm2moe-q6_k.gguf"]


def peer(*args):
    return subprocess.run([LP, *args, *OPTS], check=True, capture_output=True, text=True,
                          errors="replace").stdout


def gaps(path, pids, oids):
    """llama.cpp's top-1 minus top-2 logit before each generated id"""
    out = []
    for k in range(len(oids)):
        top = peer("logits", path, "ids:" + " ".join(pids + oids[:k]), "--top", "2").split("\n")
        out.append("%.6g" % (float(top[0].split()[1]) - float(top[1].split()[1])))
    return out


def main():
    only = sys.argv[2] if len(sys.argv) == 3 and sys.argv[1] == "--only" else None
    models = [(d, m) for d, m in MODELS if only is None or only in m]
    with open(G + "/greedy.tsv", "a" if only else "w") as f:
        if only is None:
            f.write("# model\tprompt\tprompt_ids\tout_ids\tgaps\n")
        for d, m in models:
            for p in PROMPTS:
                lines = peer("gen", d + "/" + m, p, "32").split("\n")
                pids = [l for l in lines if l.startswith("ids: ")][0][5:].split()
                oids = [l for l in lines if l.startswith("out: ")][0][5:].split()
                f.write("\t".join([m, p, " ".join(pids), " ".join(oids),
                                   " ".join(gaps(d + "/" + m, pids, oids))]) + "\n")
                f.flush()
    for d, m in models:
        if m in LOGITS:
            with open(G + "/logits-" + m[:-5] + "-once.txt", "w") as f:
                f.write(peer("logits", d + "/" + m, PROMPTS[0]))
    # which llama.cpp and which of its CPU variants made these files
    info = subprocess.run([LP, "info", SM + "/tiny-qwen3-f32.gguf", "--threads", "1"],
                          check=True, capture_output=True, text=True,
                          errors="replace").stdout
    with open(G + "/llamacpp.txt", "w") as f:
        f.write("".join(l + "\n" for l in info.split("\n")
                        if l.startswith(("llama_version", "cpu_variant"))))

main()
