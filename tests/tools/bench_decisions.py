#!/usr/bin/env python3
"""bench_decisions.py -- yes/no decisions with and without prefix reuse
(issue 36; `make bench-decisions`, figures in docs/perf/decisions.md).

DOCS synthetic documents of about 200 tokens, each behind the same
instruction of about 150 tokens, QUESTIONS yes/no questions each: one
--jsonl line per document, {"prefix": instruction + document,
"questions": [...]}, scored with --choices " yes, no" in one q42run
process with reuse, then with --no-reuse. Prints decisions per second
for each (wall and CPU time: the CPU time of the q42run processes, less
sensitive to other work on the machine), their ratio, the share of
prompt tokens actually evaluated, and checks that both runs gave the
same probabilities, to the bit.

usage: bench_decisions.py Q42RUN MODEL [DOCS [QUESTIONS [BATCH [THREADS [COLD_DOCS]]]]]
  BATCH, THREADS: "-" (or absent) for q42run's defaults (--batch 512,
  every online core). COLD_DOCS: run the --no-reuse side over the first
  COLD_DOCS documents only (a cold run of all of them can take an hour on
  a small machine); its rate is then that of those documents, and the
  probabilities are compared over them.
"""
import json
import resource
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
    """records, wall seconds, CPU seconds (user + system) of the process"""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, input=text, capture_output=True, text=True)
    t = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("bench_decisions: %s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return [json.loads(l) for l in p.stdout.splitlines()], t, cpu


def main():
    q, model = sys.argv[1], sys.argv[2]
    arg = lambda i, d: sys.argv[i] if len(sys.argv) > i and sys.argv[i] != "-" else d
    docs, k = int(arg(3, 100)), int(arg(4, 10))
    batch, threads = arg(5, None), arg(6, None)
    cold_docs = min(int(arg(7, docs)), docs)
    lines = [json.dumps({"prefix": INSTRUCTION + document(d), "questions": questions(d, k)}) + "\n"
             for d in range(docs)]
    base = [q, "-m", model, "--jsonl", "--choices", " yes, no", "--record"]
    base += ["-b", batch] if batch else []
    base += ["-t", threads] if threads else []
    warm, tw, cw = run(base, "".join(lines))
    cold, tc, cc = run(base + ["--no-reuse"], "".join(lines[:cold_docs]))
    n, nc = len(warm), len(cold)
    prompt = sum(r["counts"]["prompt"] for r in warm)
    reused = sum(r["timings"]["prompt_reused"] for r in warm)
    same = [r["choices"]["options"] for r in warm[:nc]] == [r["choices"]["options"] for r in cold]
    inst = len(INSTRUCTION.split())
    print("model: %s" % model)
    print("decisions: %d (%d documents x %d questions), batch %s, threads %s" %
          (n, docs, k, batch or "default (512)", threads or "default"))
    print("prompt tokens per decision: %.1f on average (instruction %d words, document ~175 words)" %
          (prompt / n, inst))
    print("with reuse:    %d decisions, %.1f s wall (%.2f decisions/s), %.1f s CPU (%.3f decisions per CPU s),"
          " prompt tokens evaluated %d of %d (%.1f%%)" %
          (n, tw, n / tw, cw, n / cw, prompt - reused, prompt, 100.0 * (prompt - reused) / prompt))
    print("without reuse: %d decisions%s, %.1f s wall (%.2f decisions/s), %.1f s CPU (%.3f decisions per CPU s),"
          " prompt tokens evaluated: all" %
          (nc, "" if nc == n else " (the first %d documents)" % cold_docs, tc, nc / tc, cc, nc / cc))
    print("speed-up: %.2fx wall, %.2fx CPU; probabilities identical to the bit (%d decisions): %s" %
          ((n / tw) / (nc / tc), (n / cw) / (nc / cc), nc, "yes" if same else "NO"))
    if not same:
        sys.exit(1)

main()
