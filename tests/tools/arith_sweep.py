#!/usr/bin/python3
"""arith_sweep.py -- default q42run's greedy ids against llama.cpp's on every
model of some folders, and llama.cpp's own top-1/top-2 gap where they part.

Run by a developer, never by `make check` (it needs the oracle). For each
model (*.gguf of the folders given) and prompt: `llamapeer gen MODEL PROMPT
32 --threads 1 --fa off --kv f32` and `q42run -m MODEL -p PROMPT -n 32
--record` (its default arithmetic, or --arith; a run q42run ends at an
end-of-generation id matches when it is llama.cpp's prefix: --ignore-eos
would bar those ids, which llama.cpp's gen still picks); where the ids
first differ, at step k, `llamapeer logits "ids:PROMPT_IDS OUT[0..k)" --top
2` gives llama.cpp's gap there. One llamapeer at a time, one thread.
Models llamapeer or q42run refuses are listed as such (embedding-only
models, for one). Output: TSV on stdout, one line per (model, prompt):
model, prompt, result (match, diverge, or the refusal), step, llama.cpp
id, q42 id, gap.

Usage (from the repository root):
  /usr/bin/python3 tests/tools/arith_sweep.py --llamapeer $PEER_DIR/bin/llamapeer \\
      --q42run build/bin/q42run/q42run tests/models ../shared/models > sweep.tsv
"""
import argparse
import glob
import json
import os
import subprocess

# ../shared/models/REFERENCE.md's three prompts, then ours
PROMPTS = ("Once upon a time", "The quick brown fox", "Lily and Ben went to the park to play",
           "Sara had a cat named Tom. The cat", "The sun was shining and the sky was blue.",
           "1 2 3 4 5 6")


def peer(args, llamapeer):
    r = subprocess.run([llamapeer] + args + ["--threads", "1", "--fa", "off", "--kv", "f32"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=600)
    return r.returncode, r.stdout.decode(errors="replace").splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llamapeer", required=True)
    ap.add_argument("--q42run", required=True)
    ap.add_argument("--arith", default=None, help="q42run --arith (default: its own default)")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    models = sorted(m for d in a.dirs for m in glob.glob(os.path.join(d, "*.gguf")))
    for model in models:
        name = os.path.basename(model)
        for p in PROMPTS:
            rc, lines = peer(["gen", model, p, "32"], a.llamapeer)
            ids = [l[5:].split() for l in lines if l.startswith("ids: ")]
            out = [l[5:].split() for l in lines if l.startswith("out: ")]
            if rc != 0 or not ids or not out:
                print("%s\t%s\tllamapeer refused\t\t\t\t" % (name, p), flush=True)
                continue
            cmd = [a.q42run, "-m", model, "-p", p, "-n", "32", "--record"]
            if a.arith:
                cmd += ["--arith", a.arith]
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=600)
            if r.returncode != 0:
                print("%s\t%s\tq42run exit %d\t\t\t\t" % (name, p, r.returncode), flush=True)
                continue
            rec = json.loads(r.stdout)
            got = [str(i) for i in rec["tokens"]["generated"]]
            want = out[0]
            k = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), None)
            if k is None and (len(got) == len(want) or rec["stop"] in ("eos", "eog")):
                print("%s\t%s\tmatch\t\t\t\t" % (name, p), flush=True)
                continue
            k = k if k is not None else min(len(got), len(want))
            _, top = peer(["logits", model, "ids:" + " ".join(ids[0] + want[:k]), "--top", "2"], a.llamapeer)
            vals = [float(l.split()[1]) for l in top if len(l.split()) == 2]
            gap = "%.6g" % (vals[0] - vals[1]) if len(vals) == 2 else ""
            print("%s\t%s\tdiverge\t%d\t%s\t%s\t%s" % (name, p, k, want[k] if k < len(want) else "",
                                                     got[k] if k < len(got) else "", gap), flush=True)


if __name__ == "__main__":
    main()
