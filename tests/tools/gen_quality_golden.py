#!/usr/bin/env python3
# gen_quality_golden.py -- llama.cpp's perplexity of a model over a text,
# computed from the oracle's logits (llamapeer), for tests/golden/quality/.
#
# Follows llama-perplexity's rules (tools/perplexity/perplexity.cpp): the
# text is tokenized once with BOS as the vocabulary says and special-token
# text kept as text; it is cut into n_chunk = n_tokens / CTX windows of CTX
# tokens; the first token of each window is replaced by BOS (when the vocab
# adds one); the logits at positions CTX/2 .. CTX-2 of each window predict
# the token after them; PPL = exp(mean NLL), its error is
# PPL * sqrt(var(NLL) / (count - 1)). The logits of each scored position
# come from one `llamapeer logits MODEL "ids:..." --fa off --kv f32` run on
# the window's prefix. Run by hand, never by tests:
#   /usr/bin/python3 tests/tools/gen_quality_golden.py /work/peer/bin/llamapeer \
#     ../shared/models/stories260K.gguf tests/golden/quality/story.txt 64 \
#     > tests/golden/quality/stories260K-ctx64.txt
import math
import subprocess
import sys

import numpy as np


def peer(args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def main():
    exe, model, text_path, ctx = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(text_path, encoding="utf-8") as f:
        text = f.read()
    toks = [int(x) for x in peer([exe, "tok", model, text, "--no-special"]).split()]
    plain = [int(x) for x in peer([exe, "tok", model, text, "--no-special", "--no-bos"]).split()]
    add_bos = len(toks) == len(plain) + 1
    bos = toks[0] if add_bos else None
    if len(toks) < 2 * ctx:
        sys.exit("need at least %d tokens, the text has %d" % (2 * ctx, len(toks)))
    n_chunk = len(toks) // ctx
    first = ctx // 2
    nll = nll2 = 0.0
    count = 0
    running = []
    for c in range(n_chunk):
        w = toks[c * ctx:(c + 1) * ctx]
        if add_bos:
            w[0] = bos
        for j in range(first, ctx - 1):
            ids = "ids:" + " ".join(str(t) for t in w[:j + 1])
            out = peer([exe, "logits", model, ids, "--fa", "off", "--kv", "f32", "--threads", "1"])
            lg = np.array([float(x) for x in out.split()], dtype=np.float64)
            m = lg.max()
            v = -(lg[w[j + 1]] - m - math.log(np.exp(lg - m).sum()))
            nll += v
            nll2 += v * v
            count += 1
        running.append(math.exp(nll / count))
    mean = nll / count
    var = nll2 / count - mean * mean
    ppl = math.exp(mean)
    print("# llama.cpp perplexity from llamapeer logits (tests/tools/gen_quality_golden.py)")
    print("model\t%s" % model.rsplit("/", 1)[-1])
    print("ctx\t%d" % ctx)
    print("n_tokens\t%d" % len(toks))
    print("n_chunks\t%d" % n_chunk)
    print("count\t%d" % count)
    for i, r in enumerate(running):
        print("chunk\t%d\t%.9g" % (i + 1, r))
    print("ppl\t%.9g" % ppl)
    print("ppl_err\t%.9g" % (ppl * math.sqrt(var / (count - 1))))


main()
