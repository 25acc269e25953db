#!/usr/bin/env python3
# gguf_py_dump.py -- the independent side of the p64check/gguf-py agreement test.
#
# Reads a GGUF with llama.cpp's own Python reader (gguf.GGUFReader) and prints
# the rows `p64check --metadata`, `--tensors`, `--array` or `--values` must print for it, in
# the TSV format p64check(1) documents ("OUTPUT FORMATS"). The golden files in
# tests/golden/gguf-py/ were made with it (see the README there); the tests
# never run it, so make check needs neither numpy nor gguf-py.
#
# Usage: PYTHONPATH=/path/to/llama.cpp/gguf-py \
#        python3 gguf_py_dump.py --metadata|--tensors|--array KEY FILE.gguf
#        python3 gguf_py_dump.py --values NAME[:FIRST[:COUNT]] FILE.gguf
#        python3 gguf_py_dump.py --make-quant-fixture OUT.gguf
import hashlib
import sys

import numpy as np

import gguf
from gguf import quants

# Our short type names, keyed by gguf-py's enum (independent of libq42's table).
VTYPE = {
    gguf.GGUFValueType.UINT8: "u8",
    gguf.GGUFValueType.INT8: "i8",
    gguf.GGUFValueType.UINT16: "u16",
    gguf.GGUFValueType.INT16: "i16",
    gguf.GGUFValueType.UINT32: "u32",
    gguf.GGUFValueType.INT32: "i32",
    gguf.GGUFValueType.FLOAT32: "f32",
    gguf.GGUFValueType.BOOL: "bool",
    gguf.GGUFValueType.STRING: "string",
    gguf.GGUFValueType.ARRAY: "array",
    gguf.GGUFValueType.UINT64: "u64",
    gguf.GGUFValueType.INT64: "i64",
    gguf.GGUFValueType.FLOAT64: "f64",
}

PREVIEW = 4  # array elements shown after the summary


def escape(raw: bytes, quote: bool = False) -> str:
    """Text field escaping of p64check(1): valid UTF-8 passes through, except
    backslash, control bytes and (when quoting) the double quote."""
    text = raw.decode("utf-8", errors="surrogateescape")
    out = []
    for ch in text:
        cp = ord(ch)
        if 0xDC80 <= cp <= 0xDCFF:  # a byte that was not valid UTF-8
            out.append("\\x%02x" % (cp - 0xDC00))
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif cp < 0x20 or cp == 0x7F:
            out.append("\\x%02x" % cp)
        elif quote and ch == '"':
            out.append('\\"')
        else:
            out.append(ch)
    s = "".join(out)
    return '"' + s + '"' if quote else s


def scalar(vtype, part, quote=False) -> str:
    if vtype == gguf.GGUFValueType.STRING:
        return escape(bytes(part), quote)
    v = part[0]
    if vtype == gguf.GGUFValueType.BOOL:
        return "true" if bool(v) else "false"
    if vtype == gguf.GGUFValueType.FLOAT32:
        return "%.9g" % float(v)
    if vtype == gguf.GGUFValueType.FLOAT64:
        return "%.17g" % float(v)
    return str(int(v))


def metadata(reader) -> None:
    print("key\ttype\tvalue")
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):  # gguf-py's pseudo fields for the header
            continue
        key = escape(bytes(field.parts[1]))
        main = field.types[0]
        if main != gguf.GGUFValueType.ARRAY:
            print("%s\t%s\t%s" % (key, VTYPE[main], scalar(main, field.parts[field.data[0]])))
            continue
        sub = gguf.GGUFValueType(int(field.parts[3][0]))
        count = int(field.parts[4][0])
        # parts: key len, key, type, element type, count, then the elements as
        # stored (strings as length + bytes): the digest covers exactly those.
        payload = b"".join(p.tobytes() for p in field.parts[5:])
        digest = hashlib.sha256(payload).hexdigest()
        first = [scalar(sub, field.parts[i], quote=True) for i in field.data[:PREVIEW]]
        if count > PREVIEW:
            first.append("...")
        value = "[%s; %d] sha256=%s" % (VTYPE[sub], count, digest)
        if first:
            value += " " + ", ".join(first)
        print("%s\tarray\t%s" % (key, value))


def array(reader, key: str) -> None:
    field = reader.fields.get(key)
    if field is None or field.types[0] != gguf.GGUFValueType.ARRAY:
        raise SystemExit("gguf_py_dump.py: %s: no array key %s" % (sys.argv[-1], key))
    sub = gguf.GGUFValueType(int(field.parts[3][0]))
    print("index\tvalue")
    for i, idx in enumerate(field.data):
        print("%d\t%s" % (i, scalar(sub, field.parts[idx])))


def values(reader, spec: str) -> None:
    """Dequantized values by gguf-py's own numpy dequantizers."""
    name, first, count = spec, 0, None
    parts = spec.split(":")
    if len(parts) >= 3 and parts[-1].isdigit() and parts[-2].isdigit():
        name, first, count = ":".join(parts[:-2]), int(parts[-2]), int(parts[-1])
    elif len(parts) >= 2 and parts[-1].isdigit():
        name, first = ":".join(parts[:-1]), int(parts[-1])
    t = next(t for t in reader.tensors if t.name == name)
    flat = quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(-1)
    end = len(flat) if count is None else first + count
    print("index\tvalue")
    for i in range(first, end):
        print("%d\t%s" % (i, "%.9g" % float(flat[i])))


# Tensors of the quantized fixture: (name, ggml type, elements). Block-32
# types get two blocks, k-quants one super-block.
FIXTURE = [
    ("f32", "F32", 64), ("f16", "F16", 64), ("bf16", "BF16", 64),
    ("q4_0", "Q4_0", 64), ("q4_1", "Q4_1", 64), ("q5_0", "Q5_0", 64),
    ("q5_1", "Q5_1", 64), ("q8_0", "Q8_0", 64),
    ("q2_K", "Q2_K", 256), ("q3_K", "Q3_K", 256), ("q4_K", "Q4_K", 256),
    ("q5_K", "Q5_K", 256), ("q6_K", "Q6_K", 256),
    ("tq1_0", "TQ1_0", 256), ("tq2_0", "TQ2_0", 256),
    ("iq4_nl", "IQ4_NL", 64),
    ("iq4_xs", "IQ4_XS", 256),
    ("iq2_xxs", "IQ2_XXS", 256),
]

# Byte offsets of the f16 scales in one block, for the types whose blocks
# are written as random bytes (gguf-py has no quantizer for them): random
# scales could be inf or NaN, so they are set to small finite values.
F16_FIELDS = {"Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2],
              "Q6_K": [208], "IQ4_NL": [0], "IQ4_XS": [0],
              "IQ2_XXS": [0]}


def make_fixture(out: str) -> None:
    rng = np.random.default_rng(42)
    w = gguf.GGUFWriter(out, "q42-fixture")
    w.add_name("quantized tensors for p64check --values")
    for name, tname, n in FIXTURE:
        qtype = gguf.GGMLQuantizationType[tname]
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        x = rng.standard_normal(n).astype(np.float32)
        if tname == "F32":
            w.add_tensor(name, x)
            continue
        if tname in F16_FIELDS:
            raw = rng.integers(0, 256, size=(n // block, size), dtype=np.uint8)
            for off in F16_FIELDS[tname]:
                scale = rng.uniform(0.001, 0.1, size=n // block).astype(np.float16)
                raw[:, off:off + 2] = scale.view(np.uint8).reshape(-1, 2)
            data = raw.reshape(1, -1)
        else:
            data = quants.quantize(x.reshape(1, n), qtype)
        w.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def dtype_name(t) -> str:
    # ggml spells types lower case except the K of the k-quants ("q4_K").
    n = t.name.lower()
    return n[:-2] + "_K" if n.endswith("_k") else n


def tensors(reader) -> None:
    print("name\tdtype\tdims\toffset\tbytes")
    for t in reader.tensors:
        dims = "x".join(str(int(d)) for d in t.shape.tolist())
        print("%s\t%s\t%s\t%d\t%d" % (escape(t.name.encode("utf-8")), dtype_name(t.tensor_type),
                                       dims, t.data_offset, t.n_bytes))


def main() -> int:
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--make-quant-fixture":
        make_fixture(args[1])
        return 0
    if not ((len(args) == 2 and args[0] in ("--metadata", "--tensors")) or
            (len(args) == 3 and args[0] in ("--array", "--values"))):
        sys.stderr.write("usage: gguf_py_dump.py --metadata|--tensors|--array KEY|"
                         "--values SPEC FILE.gguf\n"
                         "       gguf_py_dump.py --make-quant-fixture OUT.gguf\n")
        return 2
    reader = gguf.GGUFReader(args[-1])
    sys.stdout.reconfigure(encoding="utf-8", errors="surrogateescape", newline="\n")
    if args[0] == "--array":
        array(reader, args[1])
    elif args[0] == "--values":
        values(reader, args[1])
    else:
        (metadata if args[0] == "--metadata" else tensors)(reader)
    return 0


if __name__ == "__main__":
    sys.exit(main())
