#!/usr/bin/env python3
"""hostile_models.py -- hostile-model tests (issue 39): mutants of the shipped
small models whose metadata and tensor descriptors are individually valid
but jointly absurd (or plainly out of range), each run through the programs
a stranger's model meets: q42run's whole open path and one evaluated token,
p64c, and p64check on what p64c wrote.

Usage: hostile_models.py BUILDDIR SRCDIR WORKDIR [--list] [--seed N]
       [--per-model N] [--only SUBSTRING] [--dump-headers DIR]

Every mutant must either run (exit status 0) or be refused with the
documented status for a bad model (1) or a model that needs more memory
than allowed (5), with a one-line message that names the field: the
metadata key (its last component), or a tensor, or the file offset of a
descriptor. None may crash: a signal, a sanitizer report (the CI's
sanitizer build runs this too) or any other status fails the test. The
mutants are a fixed list per base model (about 290 each, 2000 in all)
plus several numbers changed at once at random; --per-model N (default
36, `make check`'s) keeps the jointly absurd ones and a sample of the
rest to make N per model, 0 keeps all. Deterministic for a --seed
(default 39). Prints TAP-like lines "ok N ..." / "not ok N
..." and exits 1 when any fails. --dump-headers writes each base model's
metadata-and-descriptor bytes (the seeds of the fuzz_mount harness).
Uses only the standard library; GGUF as docs/p64.5 and llama.cpp's
gguf.md describe it (version 3, little-endian).
"""
import os
import random
import re
import struct
import subprocess
import sys

# GGUF value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
          BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}


class Gguf:
    """A GGUF file as editable lists: kv [(key, type, value)] (arrays as
    (elem_type, [values])), tensors [[name, dims, type, offset]] and the
    data area as bytes."""

    def __init__(self, data):
        self.pos = 0
        self.b = data
        magic, self.version, nt, nkv = struct.unpack_from("<4sIQQ", data, 0)
        assert magic == b"GGUF" and self.version == 3
        self.pos = 24
        self.kv = []
        for _ in range(nkv):
            k = self._str()
            t = self._u32()
            self.kv.append([k, t, self._val(t)])
        self.tensors = []
        for _ in range(nt):
            name = self._str()
            nd = self._u32()
            dims = list(struct.unpack_from("<%dQ" % nd, data, self.pos))
            self.pos += 8 * nd
            typ = self._u32()
            off = struct.unpack_from("<Q", data, self.pos)[0]
            self.pos += 8
            self.tensors.append([name, dims, typ, off])
        self.align = self.get("general.alignment", 32)
        start = (self.pos + self.align - 1) // self.align * self.align
        self.data = data[start:]

    def _u32(self):
        v = struct.unpack_from("<I", self.b, self.pos)[0]
        self.pos += 4
        return v

    def _str(self):
        n = struct.unpack_from("<Q", self.b, self.pos)[0]
        s = self.b[self.pos + 8:self.pos + 8 + n]
        self.pos += 8 + n
        return s.decode("utf-8", "surrogateescape")

    def _val(self, t):
        if t == STR:
            return self._str()
        if t == ARR:
            et = self._u32()
            n = struct.unpack_from("<Q", self.b, self.pos)[0]
            self.pos += 8
            return (et, [self._val(et) for _ in range(n)])
        f = SCALAR[t]
        v = struct.unpack_from(f, self.b, self.pos)[0]
        self.pos += struct.calcsize(f)
        return v

    def get(self, key, default=None):
        for k, _, v in self.kv:
            if k == key:
                return v
        return default

    def find(self, key):
        for e in self.kv:
            if e[0] == key:
                return e
        return None

    def header(self):
        out = [struct.pack("<4sIQQ", b"GGUF", 3, len(self.tensors), len(self.kv))]
        for k, t, v in self.kv:
            out.append(_pstr(k) + struct.pack("<I", t) + _pval(t, v))
        for name, dims, typ, off in self.tensors:
            out.append(_pstr(name) + struct.pack("<I", len(dims)) +
                       struct.pack("<%dQ" % len(dims), *dims) + struct.pack("<IQ", typ, off))
        h = b"".join(out)
        return h + b"\0" * (-len(h) % self.align)

    def bytes(self):
        return self.header() + self.data


def _pstr(s):
    b = s.encode("utf-8", "surrogateescape") if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def _pval(t, v):
    if t == STR:
        return _pstr(v)
    if t == ARR:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(_pval(et, x) for x in items)
    return struct.pack(SCALAR[t], v)


# Base models: the shipped small models of each architecture family.
BASES = ["e256-llama-q8_0.gguf", "e256-qwen2-q8_0.gguf", "a64-qwen3-hd24-q8_0.gguf",
         "a64-gemma3-swa-q8_0.gguf", "a64-phi3-short-f32.gguf", "a64-lfm2-q8_0.gguf",
         "a64-lfm2moe-e8k2-q4_0.gguf"]

BIG = [0, 1, 3, 7, 0x7FFFFFFF, 0xFFFFFFFF]
# the jointly absurd hyperparameters, kept in every sample
JOINT = {"head_count=n_embd-1", "head_count_kv=head_count+1", "head_count_kv=head_count-1",
         "rope=head+2", "rope=odd", "context=2^20+1", "block_count=n+1", "block_count=n-1",
         "attention.head_count_kv=0", "merges past the vocab", "expert_used_count=7",
         "shortconv.l_cache=1", "attention.sliding_window_pattern=0", "feed_forward per layer huge",
         # regressions: what the full set found under the sanitizers
         "rope.scaling.attn_factor=1e+38"}


def mutants(g, base, rng):
    """Yield (label, expect, mutate) for base model g: expect is a regex one
    of which the refusal must match (None: any field-naming message)."""
    arch = g.get("general.architecture")
    a = arch + "."
    ne = g.get(a + "embedding_length")
    nh = g.get(a + "attention.head_count")
    nl = g.get(a + "block_count")

    def setkv(key, t, v, add=True):
        def f(m):
            e = m.find(key)
            if e is None:
                if add:
                    m.kv.append([key, t, v])
            else:
                e[1], e[2] = t, v
        return f

    def delkv(key):
        def f(m):
            m.kv = [e for e in m.kv if e[0] != key]
        return f

    def name_re(key):
        return re.escape(key.split(".")[-1])

    # jointly absurd hyperparameters, and each number at its edges
    u32keys = ["embedding_length", "block_count", "attention.head_count",
               "attention.head_count_kv", "feed_forward_length", "context_length",
               "rope.dimension_count", "attention.key_length", "attention.value_length",
               "attention.sliding_window", "attention.sliding_window_pattern",
               "expert_count", "expert_used_count", "expert_feed_forward_length",
               "leading_dense_block_count", "shortconv.l_cache", "expert_gating_func",
               "rope.scaling.original_context_length", "vocab_size"]
    for k in u32keys:
        for v in BIG:
            yield ("%s=%d" % (k, v), name_re(a + k), setkv(a + k, U32, v))
    # n_head not dividing n_embd, kv heads not dividing heads, rope past the head
    yield ("head_count=n_embd-1", "head_count|embedding_length", setkv(a + "attention.head_count", U32, ne - 1))
    yield ("head_count_kv=head_count+1", "head_count", setkv(a + "attention.head_count_kv", U32, nh + 1))
    yield ("head_count_kv=head_count-1", "head_count", setkv(a + "attention.head_count_kv", U32, max(nh - 1, 1) if nh > 2 else 3))
    yield ("rope=head+2", "dimension_count", setkv(a + "rope.dimension_count", U32, ne // nh + 2))
    yield ("rope=odd", "dimension_count", setkv(a + "rope.dimension_count", U32, 5))
    yield ("context=2^20+1", None, setkv(a + "context_length", U32, (1 << 20) + 1))
    yield ("block_count=n+1", "blk\\.%d|block_count" % nl, setkv(a + "block_count", U32, nl + 1))
    yield ("block_count=n-1", "blk\\.%d|unexpected|block_count" % (nl - 1), setkv(a + "block_count", U32, nl - 1))
    yield ("head_count_kv per layer short", "head_count_kv", setkv(a + "attention.head_count_kv", ARR, (U32, [1] * max(nl - 1, 1))))
    yield ("head_count_kv per layer 0s", None, setkv(a + "attention.head_count_kv", ARR, (U32, [0] * nl)))
    yield ("feed_forward per layer huge", "feed_forward_length", setkv(a + "feed_forward_length", ARR, (U32, [0xFFFFFFFF] * nl)))
    # floats: zero, negative, NaN, infinity
    for k in ["attention.layer_norm_rms_epsilon", "attention.layer_norm_epsilon", "rope.freq_base",
              "rope.freq_base_swa", "rope.scaling.factor", "rope.scaling.attn_factor",
              "attn_logit_softcapping", "final_logit_softcapping"]:
        for v in [0.0, -1.0, float("nan"), float("inf"), 1e38]:
            yield ("%s=%r" % (k, v), name_re(a + k), setkv(a + k, F32, v))
    # wrong types and missing keys
    yield ("embedding_length as string", "embedding_length", setkv(a + "embedding_length", STR, "64"))
    yield ("head_count as array", "head_count", setkv(a + "attention.head_count", ARR, (STR, ["x"])))
    yield ("no embedding_length", "embedding_length", delkv(a + "embedding_length"))
    yield ("no block_count", "block_count", delkv(a + "block_count"))
    yield ("no architecture", "architecture", delkv("general.architecture"))
    yield ("architecture unknown", "architecture|zz", setkv("general.architecture", STR, "zz" + arch))
    yield ("alignment 3", "alignment", setkv("general.alignment", U32, 3))
    yield ("alignment 0", "alignment", setkv("general.alignment", U32, 0))
    # the tokenizer: ids past the vocabulary, a vocabulary shorter than the embedding
    toks = g.get("tokenizer.ggml.tokens")
    nv = len(toks[1]) if toks else 0
    for k in ["bos_token_id", "eos_token_id", "unknown_token_id", "padding_token_id"]:
        yield ("%s=n_vocab" % k, None, setkv("tokenizer.ggml." + k, U32, nv))
        yield ("%s=2^32-1" % k, None, setkv("tokenizer.ggml." + k, U32, 0xFFFFFFFF))
    if toks:
        yield ("tokens short", "token|vocab|rows", setkv("tokenizer.ggml.tokens", ARR, (STR, toks[1][:nv // 2])))
        yield ("tokens empty", "token", setkv("tokenizer.ggml.tokens", ARR, (STR, [])))
        yield ("scores short", "scores", setkv("tokenizer.ggml.scores", ARR, (F32, [0.0] * (nv - 1))))
        yield ("token_type short", "token_type", setkv("tokenizer.ggml.token_type", ARR, (I32, [1] * 3)))
        yield ("token_type 99", None, setkv("tokenizer.ggml.token_type", ARR, (I32, [99] * nv)))
        yield ("tokens duplicate", "duplicate|token", setkv("tokenizer.ggml.tokens", ARR, (STR, [toks[1][0]] * nv)))
        yield ("gpt2 without merges", "merges", setkv("tokenizer.ggml.model", STR, "gpt2"))
        t0, t1 = toks[1][3], toks[1][4]
        yield ("merges past the vocab", "merge", lambda m: (
            setkv("tokenizer.ggml.model", STR, "gpt2")(m),
            setkv("tokenizer.ggml.pre", STR, "default")(m),
            setkv("tokenizer.ggml.merges", ARR, (STR, ["%s %s" % (t0, t1), "\u0100zz \u0101qq", "a"]))(m)))
        yield ("merges on spm", None, setkv("tokenizer.ggml.merges", ARR, (STR, ["zzz yyy"])))
        yield ("tokenizer model unknown", "tokenizer", setkv("tokenizer.ggml.model", STR, "rwkv-world"))
        yield ("pre unknown", "pre", lambda m: (
            setkv("tokenizer.ggml.model", STR, "gpt2")(m),
            setkv("tokenizer.ggml.merges", ARR, (STR, ["%s %s" % (t0, t1)]))(m),
            setkv("tokenizer.ggml.pre", STR, "nonesuch")(m)))
    # tensor descriptors: dims, types, offsets, names
    ts = g.tensors
    idx = {t[0]: i for i, t in enumerate(ts)}
    picks = [n for n in ["token_embd.weight", "output.weight", "blk.0.attn_q.weight",
                         "blk.0.ffn_down.weight", "blk.0.attn_norm.weight", "output_norm.weight",
                         "blk.1.ffn_gate_exps.weight", "blk.0.shortconv.conv.weight"] if n in idx]
    for n in picks:
        i = idx[n]
        esc = re.escape(n)

        def tset(field, val, i=i):
            def f(m):
                m.tensors[i][field] = val(m.tensors[i]) if callable(val) else val
            return f
        yield (n + " dims x2", esc, tset(1, lambda t: [t[1][0] * 2] + t[1][1:]))
        yield (n + " dims[1]=2^40", esc, tset(1, lambda t: t[1][:1] + [1 << 40] * (len(t[1]) > 1)))
        yield (n + " dims 2^32 x 2^32", esc, tset(1, lambda t: [1 << 32, 1 << 32]))
        yield (n + " dims 0", esc, tset(1, lambda t: [0] + t[1][1:]))
        yield (n + " rank 5", esc, tset(1, lambda t: t[1] + [1] * (5 - len(t[1]))))
        yield (n + " rank 0", esc, tset(1, []))
        yield (n + " transposed", esc, tset(1, lambda t: t[1][::-1]))
        yield (n + " type 99", esc, tset(2, 99))
        yield (n + " type q4_0", esc, tset(2, 2))
        yield (n + " type f16", esc, tset(2, 1))
        yield (n + " offset past file", esc, tset(3, lambda t: (len(g.data) + 4096) // 32 * 32))
        yield (n + " offset 2^63", esc, tset(3, 1 << 63))
        yield (n + " offset misaligned", esc, tset(3, lambda t: t[3] + 1))
        yield (n + " offset of tensor 0", None, tset(3, 0))
        yield (n + " renamed", None, tset(0, lambda t: t[0] + ".x"))
        yield (n + " duplicated", esc, lambda m, i=i: m.tensors.append(list(m.tensors[i])))
        yield (n + " removed", None, lambda m, i=i: m.tensors.pop(i))
    yield ("extra unknown tensor", None, lambda m: m.tensors.append(["blk.999.zz.weight", [4], 0, 0]))
    yield ("tensor name empty", None, lambda m: m.tensors.__setitem__(0, ["", *m.tensors[0][1:]]))
    # a deterministic random sample: several numbers changed at once
    nums = [e for e in g.kv if e[0].startswith(a) and e[1] == U32]
    for j in range(12):
        picked = rng.sample(nums, min(3, len(nums)))
        vals = [rng.choice(BIG + [e[2] + 1, e[2] * 2, max(e[2] - 1, 0)]) for e in picked]
        label = "random %d: %s" % (j, ", ".join("%s=%d" % (e[0][len(a):], v) for e, v in zip(picked, vals)))

        def f(m, picked=picked, vals=vals):
            for e, v in zip(picked, vals):
                m.find(e[0])[2] = v
        yield (label, "|".join(name_re(e[0]) for e in picked), f)


SAN = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:|"
                 r"Segmentation fault|core dumped")
# what a refusal must name when the label gives no field: a key, a tensor,
# or an offset
FIELD = re.compile(r"[a-z_]+\.[a-z_.]+|blk\.\d+|token_embd|output|offset \d+|tokenizer|"
                   r"metadata|vocab|merge|context")


# a hung process fails after a minute; make check-valgrind, whose memcheck
# runs programs some fifty times slower, scales that by
# Q42_TEST_TIMEOUT_SCALE
TIMEOUT = 60 * float(os.environ.get("Q42_TEST_TIMEOUT_SCALE", "1"))


def run(cmd, timeout=TIMEOUT):
    p = subprocess.run(cmd, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check(label, expect, rc, err, allowed):
    """None when fine, else why not."""
    if rc < 0 or SAN.search(err):
        return "crashed: status %d: %s" % (rc, err.strip()[-400:])
    if rc not in allowed:
        return "status %d (expected one of %s): %s" % (rc, allowed, err.strip()[-300:])
    if rc == 0:
        return None
    lines = [x for x in err.strip().split("\n") if x]
    if not lines:
        return "refused without a message"
    msg = lines[0]
    if expect is not None and not re.search(expect, msg) and not FIELD.search(msg):
        return "message names no field (%s): %s" % (expect, msg)
    if expect is None and not FIELD.search(msg):
        return "message names no field: %s" % msg
    return None


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, src, work = args[:3]
    seed, only, dump, listing, per = 39, None, None, False, 36
    i = 3
    while i < len(args):
        if args[i] == "--seed":
            seed, i = int(args[i + 1]), i + 2
        elif args[i] == "--per-model":
            per, i = int(args[i + 1]), i + 2
        elif args[i] == "--only":
            only, i = args[i + 1], i + 2
        elif args[i] == "--dump-headers":
            dump, i = args[i + 1], i + 2
        elif args[i] == "--list":
            listing, i = True, i + 1
        else:
            print("hostile_models.py: unknown argument %s" % args[i], file=sys.stderr)
            return 2
    q42run = os.path.join(build, "bin", "q42run", "q42run")
    p64c = os.path.join(build, "bin", "p64c", "p64c")
    p64check = os.path.join(build, "bin", "p64check", "p64check")
    os.makedirs(work, exist_ok=True)
    n = bad = 0
    counts = {}
    for bi, base in enumerate(BASES):
        with open(os.path.join(src, "tests", "models", base), "rb") as f:
            orig = f.read()
        g0 = Gguf(orig)
        if dump:
            os.makedirs(dump, exist_ok=True)
            with open(os.path.join(dump, "seed-" + base.replace(".gguf", "")), "wb") as f:
                f.write(g0.header() + bytes([bi]))
            continue
        rng = random.Random("%d:%s" % (seed, base))
        todo = list(mutants(g0, base, rng))
        if per:
            keep = [m for m in todo if m[0] in JOINT]
            rest = [m for m in todo if m[0] not in JOINT]
            keep += rng.sample(rest, max(0, min(len(rest), per - len(keep))))
            todo = [m for m in todo if m in keep]
        for label, expect, mutate in todo:
            if only and only not in base + ": " + label:
                continue
            g = Gguf(orig)
            try:
                mutate(g)
                data = g.bytes()
            except (struct.error, OverflowError, IndexError, ValueError) as e:
                continue  # not expressible in a GGUF (a value too big for its type)
            if data == orig:
                continue  # the key is absent from this architecture and was added as is
            n += 1
            counts[base] = counts.get(base, 0) + 1
            name = "%s: %s" % (base, label)
            if listing:
                print(name)
                continue
            path = os.path.join(work, "m.gguf")
            with open(path, "wb") as f:
                f.write(data)
            why = None
            rc, out, err = run([q42run, "-m", path, "-p", "Once upon", "-n", "1", "--threads", "1",
                                "--ctx", "64", "--max-memory", str(1 << 30)])
            why = check(label, expect, rc, err, (0, 1, 5))
            if why is None:
                out_p64 = os.path.join(work, "m.p64")
                rc, _, err = run([p64c, "--no-progress", path, "-o", out_p64])
                why = check(label, expect, rc, err, (0, 1))
                if why is None and rc == 0:
                    rc, _, err = run([p64check, out_p64])
                    why = check(label, expect, rc, err, (0, 1))
                    why = why and "p64check: " + why
                    if why is None:
                        rc, _, err = run([q42run, "-m", out_p64, "-p", "Once upon", "-n", "1",
                                          "--threads", "1", "--ctx", "64", "--max-memory", str(1 << 30)])
                        why = check(label, expect, rc, err, (0, 1, 5))
                        why = why and "q42run on the P64: " + why
                else:
                    why = why and "p64c: " + why
            else:
                why = "q42run: " + why
            if why is None:
                print("ok %d %s (status %d)" % (n, name, rc))
            else:
                bad += 1
                print("not ok %d %s: %s" % (n, name, why))
    if dump:
        return 0
    print("# %d mutants (%s), %d failed" % (n, ", ".join("%s %d" % kv for kv in counts.items()), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
