#!/usr/bin/env python3
"""reuse_check.py -- prefix reuse gives a cold run's bits (issue 36).

For one model, N requests whose prompts share a long prefix (two
prefixes, interleaved, so that the cache of copies is used and, with a
small --cache-bytes, evicted) run in one q42run process with reuse and
each in a process of its own; the outputs must be byte-identical apart
from the fields that say how the work was done (timings, memory, the
request index). Three modes per configuration: generation records,
--logits-for over every id (%.9g: a float's exact value) and --choices
records. Also: the same requests after --state-save / --state-load, and
through the JSON-lines fork form. Exits 1 naming the first difference.

usage: reuse_check.py Q42RUN MODEL N BATCHES THREADS [WORDS]
  BATCHES, THREADS: comma lists, e.g. 7,32 and 1,2
  WORDS: words of each shared prefix (default 260: about 300 to 450
  tokens, by the tokenizer)
  REUSE_EXTRA (environment): more q42run options for every run, e.g.
  "--flash-attn on"
"""
import json
import os
import subprocess
import sys
import tempfile

WORDS = ("the old man walked slowly to the river and sat down on a stone while "
         "his dog ran along the bank chasing birds that flew up from the reeds ").split()


def prefix(seed, n_words):
    return " ".join(WORDS[(i * 7 + seed) % len(WORDS)] for i in range(n_words))


def prompts(n, words):
    """Three prefixes: A A B C A B C ... -- the live state reused (A A),
    copies made (A, then B, C), and copies taken back (the second A).
    Each prefix is cut a few words short by the request's index, so the
    tokens two prompts share end at every offset from a pass boundary;
    every fifth request repeats the one before (all but the last token
    shared) and the next one extends it by one to seven words."""
    bases = [prefix(k, words) for k in (0, 3, 5)]
    out = []
    for i in range(n):
        if i % 5 == 3:
            out.append(out[-1])
        elif i % 5 == 4:
            out.append(out[-1] + " then" * (1 + i % 7))
        else:
            base = bases[0 if i < 2 else (i - 1) % 3].split()
            out.append("%s question %d: what did %s see?" %
                       (" ".join(base[:len(base) - (i * 5) % 17]), i, WORDS[i % len(WORDS)]))
    return out


def strip(line):
    r = json.loads(line)
    for k in ("timings", "memory", "request"):
        r.pop(k, None)
    return json.dumps(r, sort_keys=True)


def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("reuse_check: %s: exit %d: %s" % (" ".join(cmd[:6]), p.returncode, p.stderr))
    return p.stdout, p.stderr


def lines_of(out, records):
    return [strip(l) for l in out.splitlines()] if records else out.splitlines()


def compare(what, warm, cold):
    if warm != cold:
        for i, (w, c) in enumerate(zip(warm, cold)):
            if w != c:
                sys.exit("reuse_check: %s: line %d differs\n warm: %s\n cold: %s" % (what, i, w[:400], c[:400]))
        sys.exit("reuse_check: %s: %d lines warm, %d cold" % (what, len(warm), len(cold)))


def state_pos_bytes(path):
    """bytes per position and positions of a q42-state(5) file"""
    with open(path, "rb") as f:
        h = f.read(128)
    return int.from_bytes(h[80:88], "little"), int.from_bytes(h[76:80], "little")


def main():
    q, model, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    batches = [int(b) for b in sys.argv[4].split(",")]
    threads = [int(t) for t in sys.argv[5].split(",")]
    words = int(sys.argv[6]) if len(sys.argv) > 6 else 260
    ps = prompts(n, words)
    ids = ",".join(str(i) for i in range(256))
    modes = [("generate", ["-n", "4", "--record"], True),
             ("logits", ["--logits-for", ids], False),
             ("choices", ["--choices", " yes, no, maybe so", "--record"], True)]
    with tempfile.TemporaryDirectory(prefix="reuse_check.") as tmp:
        st = os.path.join(tmp, "s.q42state")
        text = "".join(p + "\n" for p in ps)
        name = os.path.basename(model)
        for b in batches:
            for t in threads:
                base = [q, "-m", model, "-b", str(b), "-t", str(t)] + os.environ.get("REUSE_EXTRA", "").split()
                # a saved state: its size gives the size of one prefix's copy
                run(base + ["-n", "0", "-p", ps[0], "--state-save", st])
                pos_bytes, n_pos = state_pos_bytes(st)
                copy = pos_bytes * max(n_pos, 1)
                # live state only; room for one and a half copies (evictions);
                # two and a half; the default
                caches = [["--cache-bytes", "0"], ["--cache-bytes", str(copy * 3 // 2)],
                          ["--cache-bytes", str(copy * 5 // 2)], []]
                for mode, args, rec in modes:
                    what = "%s %s -b %d -t %d" % (name, mode, b, t)
                    cold = []
                    for p in ps:
                        cold += lines_of(run(base + args + ["--no-reuse", "-p", p])[0], rec)
                    for c in caches:
                        out = run(base + args + ["--lines"] + c, text)[0]
                        compare("%s %s" % (what, " ".join(c)), lines_of(out, rec), cold)
                        if rec and n > 1 and c == [] and \
                                max(json.loads(l)["timings"]["prompt_reused"] for l in out.splitlines()) == 0:
                            sys.exit("reuse_check: %s: nothing was reused" % what)
                    # the state saved by another process
                    out = run(base + args + ["--lines", "--state-load", st, "--cache-bytes", "0"], text)[0]
                    compare(what + " --state-load", lines_of(out, rec), cold)
                # the fork form: one document, several questions
                qs = ["question %d: what did %s see?" % (i, WORDS[i % len(WORDS)]) for i in range(n)]
                doc = prefix(0, words) + " "
                req = json.dumps({"prefix": doc, "questions": qs}) + "\n"
                warm = lines_of(run(base + modes[2][1] + ["--jsonl"], req)[0], True)
                cold = []
                for qq in qs:
                    cold += lines_of(run(base + modes[2][1] + ["--no-reuse", "-p", doc + qq])[0], True)
                compare("%s fork -b %d -t %d" % (name, b, t), warm, cold)
    print("reuse_check: %s: %d requests, batches %s, threads %s: same bytes" %
          (name, n, sys.argv[4], sys.argv[5]))


main()
