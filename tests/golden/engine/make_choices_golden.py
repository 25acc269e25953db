#!/usr/bin/python3
# make_choices_golden.py -- option log-likelihoods from the llama.cpp oracle,
# for q42run --choices (tests/bats/q42run.bats, "choices").
#
# Run from the repository root (needs PEER_DIR; see
# shared/tools/llamapeer/README.md); never run by the tests. For each
# (model, prompt, option) it asks llamapeer for the prompt ids
# (`llamapeer tok MODEL PROMPT`), the option ids (`llamapeer tok MODEL OPTION
# --no-bos`: options are tokenized on their own, without BOS), and, for each
# option token k, all logits after prompt + option[0..k):
#   llamapeer logits MODEL "ids:<prompt ids> <option ids before k>" --fa off --kv f32 --threads 1
# The log-likelihood is the sum over k of log_softmax(logits)[option[k]],
# computed here in float64 with numpy. Output: choices.tsv, one row per option:
#   model  prompt  option  prompt_ids  option_ids  loglik(%.9g)
import os, subprocess, sys
import numpy as np

PEER = os.environ.get("PEER_DIR", "/work/peer")
LP = os.environ.get("LLAMAPEER", PEER + "/bin/llamapeer")
SM = os.environ.get("SHARED_MODELS", "../shared/models")
OPTS = ["--fa", "off", "--kv", "f32", "--threads", "1"]
CASES = [
    ("stories260K.gguf", "Once upon a time, there was a little girl named", ["Lily", "Amy", "the dog"]),
    ("stories260K.gguf", "The cat sat on the", ["mat", "floor", "big red car"]),
    ("tiny-llama-spm-f32.gguf", "The little dog", ["yes", "no", "maybe so"]),
]

def run(*args):
    return subprocess.run([LP, *args], check=True, capture_output=True, text=True).stdout

def ids(model, text, bos=True):
    out = run("tok", model, text, *([] if bos else ["--no-bos"]))
    return [int(x) for x in out.split()]

rows = ["# model\tprompt\toption\tprompt_ids\toption_ids\tloglik"]
for name, prompt, options in CASES:
    model = os.path.join(SM, name)
    pids = ids(model, prompt)
    for opt in options:
        oids = ids(model, opt, bos=False)
        ll = 0.0
        for k, tok in enumerate(oids):
            ctx = " ".join(map(str, pids + oids[:k]))
            logits = np.array([float(x) for x in run("logits", model, "ids:" + ctx, *OPTS).split()],
                              dtype=np.float64)
            m = logits.max()
            ll += logits[tok] - m - np.log(np.exp(logits - m).sum())
        rows.append("\t".join([name, prompt, opt, " ".join(map(str, pids)),
                               " ".join(map(str, oids)), "%.9g" % ll]))
with open("tests/golden/engine/choices.tsv", "w") as f:
    f.write("\n".join(rows) + "\n")
