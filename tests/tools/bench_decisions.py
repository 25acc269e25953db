#!/usr/bin/env python3
"""bench_decisions.py -- yes/no decisions with and without prefix reuse
(issue 36; `make bench-decisions`, figures in docs/perf/decisions.md).

DOCS synthetic documents of about 200 tokens, each behind the same
instruction of about 150 tokens, QUESTIONS yes/no questions each: one
--jsonl line per document, {"prefix": instruction + document,
"questions": [...]}, scored with --choices " yes, no" in one q42run
process with reuse, then with --no-reuse. Prints decisions per second
for each, their ratio, the share of prompt tokens actually evaluated,
and checks that both runs gave the same probabilities, to the bit.

usage: bench_decisions.py Q42RUN MODEL [DOCS [QUESTIONS [BATCH [THREADS]]]]
"""
import json
import subprocess
import sys
import time

NOUNS = ("river village market teacher doctor harbour garden library bridge farmer "
         "station letter storm engine window mountain school bakery council forest").split()
VERBS = ("visited repaired closed opened painted sold described found moved built "
         "cleaned measured reported ordered checked").split()
BASES = ("visit repair close open paint sell describe find move build clean measure report order "
         "check").split()
ADJS = ("old new small large quiet busy red green northern southern wooden broken").split()

INSTRUCTION = (
    "You are a careful assistant that reads short reports written by the staff of a small "
    "town council. Each report describes a few events of one week: who did what, where, and "
    "what was found. Read the report below and answer the question that follows it with a "
    "single word, yes or no. Answer yes only when the report states the fact asked about; "
    "answer no when the report does not mention it or says the opposite. Do not guess from "
    "general knowledge, do not explain your answer, and do not repeat the question. The "
    "report may contain names of places, people and objects that are not real; treat them "
    "as facts of the report. Spelling mistakes do not matter, and neither does the order in "
    "which the events are told.\n\nReport:\n")


def document(d):
    words = []
    i = d * 131
    while len(words) < 175:
        a, n, v, m = ADJS[i % len(ADJS)], NOUNS[(i * 7) % len(NOUNS)], VERBS[(i * 3) % len(VERBS)], \
            NOUNS[(i * 11 + 5) % len(NOUNS)]
        words += ("The %s %s %s the %s near the %s." % (a, n, v, m, NOUNS[(i + d) % len(NOUNS)])).split()
        i += 1
    return " ".join(words) + "\n\n"


def questions(d, k):
    return ["Question: Did the %s %s the %s?\nAnswer:" %
            (NOUNS[(d + j * 3) % len(NOUNS)], BASES[(d * 5 + j) % len(BASES)],
             NOUNS[(d * 7 + j) % len(NOUNS)]) for j in range(k)]


def run(cmd, text):
    t0 = time.monotonic()
    p = subprocess.run(cmd, input=text, capture_output=True, text=True)
    t = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("bench_decisions: %s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
    return [json.loads(l) for l in p.stdout.splitlines()], t


def main():
    q, model = sys.argv[1], sys.argv[2]
    docs = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    k = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    batch = sys.argv[5] if len(sys.argv) > 5 else "32"
    threads = sys.argv[6] if len(sys.argv) > 6 else None
    text = "".join(json.dumps({"prefix": INSTRUCTION + document(d), "questions": questions(d, k)}) + "\n"
                   for d in range(docs))
    base = [q, "-m", model, "--jsonl", "--choices", " yes, no", "--record", "-b", batch]
    if threads:
        base += ["-t", threads]
    warm, tw = run(base, text)
    cold, tc = run(base + ["--no-reuse"], text)
    n = len(warm)
    prompt = sum(r["counts"]["prompt"] for r in warm)
    reused = sum(r["timings"]["prompt_reused"] for r in warm)
    same = [r["choices"]["options"] for r in warm] == [r["choices"]["options"] for r in cold]
    inst = len(INSTRUCTION.split())
    print("model: %s" % model)
    print("decisions: %d (%d documents x %d questions), batch %s, threads %s" %
          (n, docs, k, batch, threads or "default"))
    print("prompt tokens per decision: %.1f on average (instruction %d words, document ~175 words)" %
          (prompt / n, inst))
    print("with reuse:    %.1f s, %.2f decisions/s, prompt tokens evaluated %d of %d (%.1f%%)" %
          (tw, n / tw, prompt - reused, prompt, 100.0 * (prompt - reused) / prompt))
    print("without reuse: %.1f s, %.2f decisions/s, prompt tokens evaluated %d of %d (100%%)" %
          (tc, n / tc, prompt, prompt))
    print("speed-up: %.2fx; probabilities identical to the bit: %s" % (tc / tw, "yes" if same else "NO"))
    if not same:
        sys.exit(1)


main()
