"""golden_logits.py -- llama.cpp's top logits for the generating models of
tests/models and ../shared/models, as tests/bats/arith.bats checks them:
one line per model and prompt, "model<TAB>prompt<TAB>ids<TAB>logits",
from `llamapeer logits MODEL PROMPT --top 8 --threads 1 --fa off --kv f32`
(its 9 significant digits tell every float apart). Imported by
gen_zen4_golden.py and gen_haswell_golden.py; the CPU variant is the one
llamapeer loads (GGML_BACKEND_DIR in env picks it)."""
import os
import subprocess

# every model q42run generates with (decoders), each exercising a path:
# the weight types, head widths 8 to 64, sliding windows, GeGLU, the
# short convolution, experts, fused QKV, tied and separate outputs
MODELS = ["tests/models/%s.gguf" % m for m in (
    "a256-lfm2moe-q4_k_m", "a256-lfm2moe-q6_k", "a64-gemma3-swa-f32", "a64-gemma3-swa-q8_0", "a64-lfm2-f32",
    "a64-lfm2-l10-f32", "a64-lfm2-q8_0", "a64-lfm2moe-e8k2-f32", "a64-lfm2moe-e8k2-q4_0", "a64-lfm2moe-e8k2-q8_0",
    "a64-lfm2moe-e8k4-f32", "a64-phi3-long-f32", "a64-phi3-short-f32", "a64-qwen3-hd24-f32", "a64-qwen3-hd24-q8_0",
    "e256-llama-iq4_nl", "e256-llama-iq4_xs", "e256-llama-q2_k", "e256-llama-q3_k", "e256-llama-q4_0",
    "e256-llama-q4_k_m", "e256-llama-q5_0", "e256-llama-q5_1", "e256-llama-q6_k", "e256-llama-q8_0",
    "e256-llama-tied-bf16", "e256-llama-tied-f16", "e256-llama-tq1_0", "e256-llama-tq2_0", "e256-qwen2-q8_0")] + \
    ["../shared/models/%s.gguf" % m for m in (
        "stories260K", "tiny-gemma3-f32", "tiny-lfm2-f32", "tiny-lfm2moe-f32", "tiny-llama-spm-f32", "tiny-phi3-f32",
        "tiny-qwen3-f32")]
# passes of under 4, under 12 and over 12 tokens (the last layer's output
# projection rounds by the pass's size: q42_forward.c's pass_form)
PROMPTS = ("Once upon a time", "Sara had a cat named Tom. The cat",
           "Once upon a time there was a little girl named Lily who loved to play outside in the park")
TOP = 8


def write(path, llamapeer, env=None):
    with open(path, "w") as f:
        for model in MODELS:
            for prompt in PROMPTS:
                r = subprocess.run([llamapeer, "logits", model, prompt, "--top", str(TOP), "--threads", "1",
                                    "--fa", "off", "--kv", "f32"], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True, check=True)
                pairs = [ln.split() for ln in r.stdout.splitlines() if ln.strip()]
                f.write("%s\t%s\t%s\t%s\n" % (os.path.basename(model), prompt, " ".join(q[0] for q in pairs),
                                              " ".join(q[1] for q in pairs)))


# flash attention (--fa on, llama.cpp's default f16 cache): its two forms,
# one position at a time (a short prompt) and in 64 x 64 tiles (the 1,772
# tokens of tests/golden/fa/long.txt, in passes of 512), over head widths
# 8 to 64
FA_MODELS = ["tests/models/%s.gguf" % m for m in (
    "e256-llama-q8_0", "e256-llama-q4_k_m", "e256-llama-tied-f16", "a64-qwen3-hd24-q8_0", "a64-gemma3-swa-f32",
    "a64-lfm2-q8_0")] + ["../shared/models/%s.gguf" % m for m in ("stories260K", "tiny-qwen3-f32")]


def write_fa(path, llamapeer, env=None):
    with open("tests/golden/fa/long.txt") as f:
        long_text = f.read()
    with open(path, "w") as f:
        for model in FA_MODELS:
            for label, prompt in (("short", PROMPTS[0]), ("long", long_text)):
                r = subprocess.run([llamapeer, "logits", model, prompt, "--top", str(TOP), "--threads", "1",
                                    "--fa", "on"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True, check=True)
                pairs = [ln.split() for ln in r.stdout.splitlines() if ln.strip()]
                f.write("%s\t%s\t%s\t%s\n" % (os.path.basename(model), label, " ".join(q[0] for q in pairs),
                                              " ".join(q[1] for q in pairs)))
