#!/usr/bin/python3
"""make_golden.py -- LoRA adapters for the test models and llama.cpp's outputs
with them (tests/golden/lora/), through the llamapeer oracle.

Run from the repository root with PEER_DIR set up by
shared/tools/llamapeer/setup.sh:  /usr/bin/python3 tests/golden/lora/make_golden.py
Never run by the tests: its outputs are checked in. The adapters are written
by mkmodel.py --lora-of (llama.cpp's gguf-py writer) into tests/models/;
the expected ids and logits come from llama.cpp. One llamapeer process at a
time, --threads 1, --fa off --kv f32 throughout.
"""
import os
import subprocess

PEER = os.environ.get("PEER_DIR", os.path.expanduser("~/.cache/q42-peer"))
LP = os.environ.get("LLAMAPEER", PEER + "/bin/llamapeer")
MK = os.environ.get("MKMODEL", "../shared/tools/llamapeer/mkmodel.py")
SM = os.environ.get("SHARED_MODELS", "../shared/models")
TM = "tests/models"
G = "tests/golden/lora"
OPTS = ["--fa", "off", "--kv", "f32", "--threads", "1"]
PROMPTS = ["Once upon a time", "Tom and Lily went to the park."]
SCALES = ["1", "0.5"]

# adapter file (tests/models/), base model (folder, file), mkmodel options
ADAPTERS = [
    ("lora-a64-qwen3-hd24.gguf", (TM, "a64-qwen3-hd24-f32.gguf"),
     ["--rank", "4", "--alpha", "8", "--seed", "11",
      "--targets", "attn_q,attn_k,attn_v,attn_output,ffn_gate,ffn_up,ffn_down"]),
    ("lora-a64-phi3-short.gguf", (TM, "a64-phi3-short-f32.gguf"),
     ["--rank", "16", "--alpha", "2", "--seed", "12",
      "--targets", "token_embd,attn_qkv,attn_output,ffn_up,ffn_down,output"]),
    ("lora-a64-gemma3-swa-f16.gguf", (TM, "a64-gemma3-swa-f32.gguf"),
     ["--rank", "2", "--alpha", "0", "--seed", "13", "--type", "f16",
      "--targets", "attn_q,attn_v,attn_output,ffn_down"]),
    ("lora-a64-lfm2.gguf", (TM, "a64-lfm2-f32.gguf"),
     ["--rank", "4", "--alpha", "4", "--seed", "14",
      "--targets", "shortconv.in_proj,shortconv.out_proj,attn_q,attn_v,ffn_up,ffn_down"]),
    ("lora-e256-qwen2.gguf", (TM, "e256-qwen2-q8_0.gguf"),
     ["--rank", "8", "--alpha", "16", "--seed", "15",
      "--targets", "token_embd,attn_q,attn_k,attn_v,attn_output,ffn_gate,output"]),
    # for the refusals (tests/bats/lora.bats): a llama adapter whose shapes
    # do not fit tiny-llama-spm-f32
    ("lora-e256-llama.gguf", (TM, "e256-llama-q8_0.gguf"),
     ["--rank", "2", "--seed", "16", "--targets", "attn_q"]),
    # the source of the PEFT folder tests/models/peft-e256-llama (make_peft.py)
    ("lora-e256-llama-qkvo.gguf", (TM, "e256-llama-q8_0.gguf"),
     ["--rank", "4", "--alpha", "8", "--seed", "17",
      "--targets", "attn_q,attn_k,attn_v,attn_output,ffn_up"]),
]
# (adapter folder, adapter, base folder, base): the rows of greedy.tsv
RUNS = [(SM, "tiny-llama-spm-lora.gguf", SM, "tiny-llama-spm-f32.gguf")] + \
       [(TM, a, d, m) for a, (d, m), _ in ADAPTERS[:5]]


def peer(*args):
    return subprocess.run([LP, *args, *OPTS], check=True, capture_output=True, text=True,
                          errors="replace").stdout


def gaps(path, lora, pids, oids):
    """llama.cpp's top-1 minus top-2 logit before each generated id"""
    out = []
    for k in range(len(oids)):
        top = peer("logits", path, "ids:" + " ".join(pids + oids[:k]), "--top", "2",
                   "--lora", lora).split("\n")
        out.append("%.6g" % (float(top[0].split()[1]) - float(top[1].split()[1])))
    return out


def main():
    for a, (d, m), opts in ADAPTERS:
        subprocess.run(["/usr/bin/python3", MK, "--lora-of", d + "/" + m, *opts, TM + "/" + a],
                       check=True)
    subprocess.run(["/usr/bin/python3", TM + "/make_peft.py", TM + "/lora-e256-llama-qkvo.gguf",
                    "4", "2", TM + "/peft-e256-llama"], check=True)
    with open(G + "/greedy.tsv", "w") as f:
        f.write("# model\tadapter\tscale\tprompt\tprompt_ids\tout_ids\tgaps\n")
        for ad, a, d, m in RUNS:
            for s in SCALES:
                lora = ad + "/" + a + ":" + s
                for p in PROMPTS:
                    lines = peer("gen", d + "/" + m, p, "32", "--lora", lora).split("\n")
                    pids = [l for l in lines if l.startswith("ids: ")][0][5:].split()
                    oids = [l for l in lines if l.startswith("out: ")][0][5:].split()
                    f.write("\t".join([m, a, s, p, " ".join(pids), " ".join(oids),
                                       " ".join(gaps(d + "/" + m, lora, pids, oids))]) + "\n")
                    f.flush()
                with open(G + "/logits-" + m[:-5] + "-" + s + "-once.txt", "w") as g:
                    g.write(peer("logits", d + "/" + m, PROMPTS[0], "--lora", lora))
    info = subprocess.run([LP, "info", SM + "/tiny-llama-spm-f32.gguf", "--threads", "1"],
                          check=True, capture_output=True, text=True, errors="replace").stdout
    with open(G + "/llamacpp.txt", "w") as f:
        f.write("".join(l + "\n" for l in info.split("\n")
                        if l.startswith(("llama_version", "cpu_variant"))))


main()
