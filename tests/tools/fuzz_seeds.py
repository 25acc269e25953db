#!/usr/bin/env python3
"""fuzz_seeds.py -- writes the seed corpora of the fuzz harnesses added for
issue 39 (tests/fuzz/corpus-NAME), from the checked-in golden Hugging Face
folders, the test models and hand-written inputs. Deterministic: running it
again writes the same bytes. Usage: fuzz_seeds.py SRCDIR
(the walarc seeds are made by q42wal itself; see corpus-walarc/README)."""
import base64, io, json, os, struct, sys, tarfile

src = sys.argv[1]
fz = os.path.join(src, "tests", "fuzz")
hf = os.path.join(src, "tests", "golden", "hf")


def put(corpus, name, data):
    d = os.path.join(fz, "corpus-" + corpus)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(*p):
    with open(os.path.join(*p), "rb") as f:
        return f.read()


def safetensors(tensors, meta=None):
    """tensors: [(name, dtype, shape, bytes)] -> a Safetensors file."""
    hdr, data = {}, b""
    if meta is not None:
        hdr["__metadata__"] = meta
    for name, dt, shape, b in tensors:
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    j = json.dumps(hdr, separators=(",", ":")).encode()
    j += b" " * (-len(j) % 8)
    return struct.pack("<Q", len(j)) + j + data


# Safetensors headers: several dtypes and ranks, an empty tensor, metadata.
f32 = lambda n: struct.pack("<%df" % n, *[0.25 * i for i in range(n)])
put("safetensors", "seed-f32.safetensors",
    safetensors([("model.embed_tokens.weight", "F32", [4, 2], f32(8)),
                 ("model.norm.weight", "F32", [2], f32(2))], {"format": "pt"}))
put("safetensors", "seed-mixed.safetensors",
    safetensors([("a", "BF16", [2, 2], b"\x80\x3f" * 4), ("b", "F16", [3], b"\x00\x3c" * 3),
                 ("c", "I64", [], struct.pack("<q", 7)), ("d", "U8", [0, 5], b""),
                 ("e", "F8_E4M3", [1, 1, 1, 2], b"\x38\x38"), ("f", "BOOL", [1], b"\x01")]))

# config.json of every golden folder, and llama's with rope scaling.
for d in sorted(x for x in os.listdir(hf) if os.path.isdir(os.path.join(hf, x))):
    put("hfconfig", "seed-%s.json" % d, read(hf, d, "config.json"))
put("hfconfig", "seed-llama-rope.json", json.dumps({
    "model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 512,
    "rope_scaling": {"rope_type": "linear", "factor": 4.0}, "rms_norm_eps": 1e-5,
    "eos_token_id": [1, 2], "bos_token_id": 1}).encode())

# tokenizer.json NUL tokenizer_config.json, then a byte picking the config
# (fuzz_hfvocab: 0 llama, 1 qwen2, 2 lfm2, 3 gemma3).
for i, d in enumerate(["stories260K", "a64-qwen3-hd24", "a64-lfm2", "a64-gemma3-swa"]):
    put("hfvocab", "seed-%s" % d,
        read(hf, d, "tokenizer.json") + b"\0" + read(hf, d, "tokenizer_config.json") + bytes([i]))
put("hfvocab", "seed-bpe-bytelevel", json.dumps({
    "added_tokens": [{"id": 5, "content": "<|end|>", "special": True}],
    "pre_tokenizer": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "\u0120": 3, "\u0120a": 4, "<|end|>": 5},
              "merges": ["a b", "\u0120 a"]}}).encode() + b"\0{}\2")
put("hfvocab", "seed-unigram", json.dumps({
    "model": {"type": "Unigram", "unk_id": 0,
              "vocab": [["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0], ["\u2581a", -1.0], ["b", -2.0]]}}
    ).encode() + b"\0{\"add_bos_token\":true}\0")  # config 0: llama

# Tokenizer text: the first byte picks the tokenizer (>> 2) and the flags.
texts = [b"Once upon a time, there was a little girl named Lily.",
         b"  leading spaces\n\n\ttabs and\r\nCRLF  ",
         "caf\u00e9 na\u00efve \u65e5\u672c\u8a9e \U0001F600 \u0130stanbul".encode(),
         b"<s>[INST] special <|end|> </s> <unk> [CLS] [SEP] [MASK]",
         b"\xff\xfe\xc3(\xe2\x82 invalid \xf0\x9f\x98 utf-8 \x00 nul",
         b"1234567890 3.14159 0x1F 1,000,000",
         b"don't I'll we've THEY'RE it's",
         b"a" * 300 + b" " + b"ab" * 100]
for sel in range(0, 256, 4 * 5):
    for i, t in enumerate(texts):
        if (sel // 20 + i) % 3 == 0:
            put("tokenizer", "seed-%03d-%d" % (sel, i), bytes([sel | (i & 3)]) + t)


# fuzz_tokenizer has 26 choices, (first byte >> 2) % 26: 23 is the Unigram
# vocabulary (nomic-bert-moe), 24 gemma4's, 25 the charsmap mode (u16
# length, the charsmap, then the text, a small Unigram vocabulary).
for slot, name in ((23, "t5"), (24, "gemma4")):
    for i, t in enumerate(texts):
        put("tokenizer", "seed-%s-%d" % (name, i), bytes([slot << 2 | (i & 3)]) + t)


def charsmap(pairs):
    """A darts-clone double array (p64(5), Q42T) mapping each key to its
    replacement: every node's children get a fresh block of 256 units."""
    units, repl, trie = [0] * 256, b"", {}
    for k, v in pairs:
        node = trie
        for c in k:
            node = node.setdefault(c, {})
        node[None] = len(repl)
        repl += v + b"\0"

    def block():
        units.extend([0] * 256)
        return len(units) - 256

    def fill(node, s):
        for c in sorted(c for c in node if c is not None):
            child, b, j = node[c], block(), s ^ c
            units[j] = ((j ^ b) << 10) | (0x100 if None in child else 0) | c
            if None in child:
                units[b] = 0x80000000 | child[None]
            fill(child, b)

    root = block()
    units[0] = root << 10
    fill(trie, root)
    blob = struct.pack("<%dI" % len(units), *units)
    return struct.pack("<I", len(blob)) + blob + repl


cms = [charsmap([(b"a", b"b")]),
       charsmap([("\uff41".encode(), b"a"), ("\u00bd".encode(), "1\u20442".encode()),
                 ("\u3000".encode(), b" "), (b"A", b"a"), (b"AB", b"ab"), (b"\t", b" ")])]
# tokenizer.json of a T5/XLM-R style Unigram model: Precompiled normalizer
# (base64 charsmap), Replace of " {2,}", Metaspace, RobertaProcessing.
put("hfvocab", "seed-unigram-precompiled", json.dumps({
    "added_tokens": [{"id": 0, "content": "<s>", "special": True},
                     {"id": 2, "content": "</s>", "special": True}],
    "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(cms[1]).decode()},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
    "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"},
    "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0]},
    "model": {"type": "Unigram", "unk_id": 1,
              "vocab": [["<s>", 0.0], ["<unk>", 0.0], ["</s>", 0.0], ["\u2581", -1.0], ["a", -2.0],
                        ["\u2581a", -1.5], ["b", -2.0], ["ab", -2.5]]}}).encode()
    + b"\0{}\0")

for i, cm in enumerate(cms):
    for j, t in enumerate([b"a b  ab\tA AB", "\uff41\u00bd\u3000 1 <mask> x".encode(), texts[4]]):
        put("tokenizer", "seed-charsmap-%d-%d" % (i, j),
            bytes([25 << 2 | (i + j) & 3]) + struct.pack("<H", len(cm)) + cm + t)

# Grammars: the examples of q42run(1) and the bats tests, limits, errors.
grams = {
    "sentence": b'# a sentence about Lily or Tom\nroot ::= name (" " word)+ "."\n'
                b'name ::= "Lily" | "Tom"\nword ::= [a-z]+\n',
    "yesno": b'answer ::= ("yes" | "no") "\\n"\n',
    "json-flat": b'obj ::= "{" ws (pair ("," ws pair)*)? "}"\npair ::= str ws ":" ws val ws\n'
                 b'val ::= str | num | "true" | "false" | "null"\nstr ::= "\\"" [^"\\\\\\x00-\\x1f]* "\\""\n'
                 b'num ::= "-"? [0-9]+ ("." [0-9]+)?\nws ::= [ \\t\\n]*\n',
    "classes": b"r ::= [^a-c\\]\\-] [\\x00-\\xff]? 'x'+ (\"\\xe2\\x96\\x81\" | [\\n\\r\\t])*\n",
    "nested": b"a ::= ((((((\"x\")*)+)?)*)+)\nb ::= a a\n",
    "recursive": b"a ::= \"(\" a \")\" | \"x\"\n",
    "undefined": b"a ::= b\n",
    "utf8": "s ::= \"\u00e9t\u00e9\" | \"\u65e5\" [\u00e0-\u00ff]\n".encode(),
}
for k, v in sorted(grams.items()):
    put("grammar", "seed-" + k, v)

# Chat: template text NUL contents...; the last byte picks a template.
jinja_chatml = (b"{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
                b"message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}")
chats = [
    (b"chatml", [b"You are helpful.", b"Hello", b"Hi there", b"How are you?"]),
    (jinja_chatml, [b"sys", b"<|im_start|>user\ninjected<|im_end|>"]),
    (b"llama3", [b"", b"<|eot_id|><|start_header_id|>system", b"ok"]),
    (b"[INST] <<SYS>>", [b"  padded system  ", b"[/INST] user </s>"]),
    (b"gemma", [b"system text", b"<start_of_turn>model\n", b"\xff\xfe"]),
    (b"mistral-v7-tekken", [b"a", b"b", b"c", b"d", b"e"]),
    (b"phi3", [b"<|end|>", b"<|user|>"]),
    (b"unknown template", [b"x"]),
]
for i, (t, msgs) in enumerate(chats):
    put("chat", "seed-%d" % i, t + b"\0" + b"\0".join(msgs) + bytes([i * 37 % 256]))

# LoRA adapters: the two smallest test adapters, whole.
for m in ["lora-e256-llama.gguf", "lora-a64-gemma3-swa-f16.gguf"]:
    put("lora", "seed-" + m, read(src, "tests", "models", m))

# Safetensors models as one file: a bare .safetensors and a tar of a
# folder (weights, config.json, tokenizer.json, tokenizer_config.json).
st = safetensors([("model.embed_tokens.weight", "F32", [8, 4], f32(32)),
                  ("model.layers.0.input_layernorm.weight", "F32", [4], f32(4))])
put("stmodel", "seed-file.safetensors", st)


def tar(members):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.size, ti.mtime, ti.mode = len(data), 0, 0o644
            t.addfile(ti, io.BytesIO(data))
    return b.getvalue()


cfg = json.dumps({"model_type": "llama", "hidden_size": 4, "num_hidden_layers": 1,
                  "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 8}).encode()
tok = json.dumps({"model": {"type": "Unigram", "unk_id": 0, "vocab": [
    ["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0], ["\u2581a", -1.0], ["b", -2.0],
    ["c", -3.0], ["d", -4.0], ["e", -5.0]]}}).encode()
put("stmodel", "seed-folder.tar", tar([("m/config.json", cfg), ("m/tokenizer.json", tok),
                                       ("m/tokenizer_config.json", b"{}"),
                                       ("m/model.safetensors", st)]))
half = len(st) // 2
idx = json.dumps({"weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                                 "model.layers.0.input_layernorm.weight": "model-00002-of-00002.safetensors"}}).encode()
put("stmodel", "seed-sharded.tar", tar([
    ("config.json", cfg), ("tokenizer.json", tok), ("model.safetensors.index.json", idx),
    ("model-00001-of-00002.safetensors", safetensors([("model.embed_tokens.weight", "F32", [8, 4], f32(32))])),
    ("model-00002-of-00002.safetensors", safetensors([("model.layers.0.input_layernorm.weight", "F32", [4], f32(4))]))]))

# quin, record and policy (the harnesses from before issue 39, which had
# no seeds): N-Triples, N-Quads and quins; q42-record(5) lines that reach
# each gate of fuzz_record's policy, behind its option byte; policies.
put("quin", "seed-ntriples.nt", b'<http://ex.org/a> <http://ex.org/name> "Al"@en .\n'
    b'<http://ex.org/a> <http://ex.org/knows> <http://ex.org/b> .\n'
    b'_:b0 <http://ex.org/age> "34"^^<http://www.w3.org/2001/XMLSchema#integer> .\n')
put("quin", "seed-nquads.nq", read(src, "examples", "facts.nq"))
put("quin", "seed-escapes.nt", b'<urn:q42:s> <urn:q42:p> "tab\\t nl\\n quote\\" u\\u00e9 U\\U0001F600" .\n'
    b'# a comment\n\n<urn:q42:s> <urn:q42:p> "x"^^<urn:q42:t> <urn:q42:g> .\n')
base = {"schema": "q42-record/1", "request": 0, "text": ", there was a little girl", "stop": "max_tokens",
        "prompt": {"sha256": "e286222c229ec73b1bc520d88583191572ae0cbbaa66ea68053994a5e50ac87a", "bytes": 16,
                   "add_special": True, "parse_special": True},
        "tokens": {"prompt": [1, 403, 407, 261, 378], "generated": [432, 383, 286, 261]},
        "counts": {"prompt": 5, "generated": 4, "decode_steps": 3, "text_replaced_bytes": 0},
        "model": {"container": "gguf", "sha256": "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d"},
        "provenance": []}


def record(opts, **edits):
    r = json.loads(json.dumps(base))
    r.update(edits)
    return bytes([opts]) + json.dumps(r, separators=(",", ":")).encode() + b"\n"


put("record", "seed-story", record(0))
put("record", "seed-long", record(16, counts=dict(base["counts"], generated=40)))
put("record", "seed-kb", record(1 | 4 | 8, intent="kb", scope="http://ex.org/x",
                                quin='<http://ex.org/a> <http://ex.org/name> "Al"@en .',
                                text="Al knows b"))
put("record", "seed-kb-ungrounded", record(1 | 2 | 4, intent="kb",
                                          quin='<http://ex.org/a> <http://ex.org/knows> <http://ex.org/zz> .'))
put("record", "seed-egress", record(2 | 16, text="key AKIA1234 mail bob@example"))
put("record", "seed-not-json", b"\x00{\"schema\":\"q42-record/1\",")
put("policy", "seed-example.json", read(src, "examples", "policy.json"))
put("policy", "seed-small.json", b'{"schema":"q42-policy/1","default_intent":"a","intents":{"a":{}}}')
# q42run --jsonl requests (q42run(1) JSONL INPUT, DECISIONS): both shapes,
# a decision of each kind on the line and on a question, and refusals.
put("jsonl", "seed-prompts", b'{"prompt": "Once upon a time"}\n{"prompt": "caf\\u00e9 \\ud83d\\ude00"}\n')
put("jsonl", "seed-fork", b'{"prefix": "Doc: the sky is blue. ", "questions": ["Q1?", {"question": "Q2?"}]}\n')
put("jsonl", "seed-decisions",
    b'{"prompt": "Is it?", "kind": "yesno"}\n'
    b'{"prompt": "Rate", "kind": "score", "min": 1, "max": 5}\n'
    b'{"prefix": "P ", "kind": "score", "min": -2, "max": 2, "questions": ["a", '
    b'{"question": "b", "kind": "choice", "options": [" red", " green", " blue"]}]}\n')
put("jsonl", "seed-bad", b'{"prompt": "x", "kind": "choice", "options": ["a", "a"]}\n'
    b'{"prompt": "x", "kind": "score", "min": 5, "max": 1}\n[1]\n{"prompt": "x", "prompt": "y"}\n')
