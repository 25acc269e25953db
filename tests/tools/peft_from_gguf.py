#!/usr/bin/python3
"""peft_from_gguf.py -- a Hugging Face PEFT folder (adapter_config.json,
adapter_model.safetensors) holding the same LoRA as a GGUF adapter of an
architecture whose converter keeps the q/k rows as they are (qwen2,
qwen3: NeoX RoPE), as PEFT would have saved the adapter that llama.cpp's
convert_lora_to_gguf.py turns into that GGUF. The standard library only:
the GGUF is read and the Safetensors written here from the published
formats (GGUF: header, key/values, tensor infos, data aligned to
general.alignment; Safetensors: 8-byte little-endian header length, JSON
header, data), nothing of q42 involved.

Facts used (from convert_lora_to_gguf.py and PEFT, read, not copied):
lora_A.weight is [r, in_features] and lora_B.weight [out_features, r] in
PyTorch order, which are the bytes of GGUF's lora_a [n_in, r] and
lora_b [r, n_out]; names are base_model.model.<HF tensor>.lora_A.weight.
llama's q/k rows are permuted by the converter (tests/models/make_peft.py
undoes that; this tool refuses llama).

  peft_from_gguf.py ADAPTER.gguf BASE_NAME OUT_FOLDER
"""
import json
import os
import struct
import sys

NAMES = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
         "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
         "ffn_down": "mlp.down_proj"}
SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def read_gguf(path):
    b = open(path, "rb").read()
    if b[:4] != b"GGUF":
        sys.exit(f"{path}: not a GGUF file")
    o = 8
    n_t, n_kv = struct.unpack_from("<QQ", b, o)
    o += 16

    def s():
        nonlocal o
        n, = struct.unpack_from("<Q", b, o)
        o += 8 + n
        return b[o - n:o].decode()

    def v(t):
        nonlocal o
        if t == 8:
            return s()
        if t == 9:
            at, n = struct.unpack_from("<IQ", b, o)
            o += 12
            return [v(at) for _ in range(n)]
        x, = struct.unpack_from("<" + SCALAR[t], b, o)
        o += struct.calcsize(SCALAR[t])
        return x

    kv = {}
    for _ in range(n_kv):
        k = s()
        t, = struct.unpack_from("<I", b, o)
        o += 4
        kv[k] = v(t)
    infos = []
    for _ in range(n_t):
        name = s()
        nd, = struct.unpack_from("<I", b, o)
        dims = struct.unpack_from(f"<{nd}Q", b, o + 4)
        t, off = struct.unpack_from("<IQ", b, o + 4 + 8 * nd)
        o += 4 + 8 * nd + 12
        infos.append((name, dims, t, off))
    align = kv.get("general.alignment", 32)
    start = (o + align - 1) // align * align
    tensors = {}
    for name, dims, t, off in infos:
        if t != 0 or len(dims) != 2:
            sys.exit(f"{path}: {name}: only 2-D F32 tensors")
        n = dims[0] * dims[1] * 4
        tensors[name] = (dims, b[start + off:start + off + n])
    return kv, tensors


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, base, out = sys.argv[1:]
    kv, tensors = read_gguf(src)
    arch = kv.get("general.architecture")
    if arch not in ("qwen2", "qwen3"):
        sys.exit(f"{src}: architecture {arch}: q/k rows would need the converter's permutation undone")
    entries, data, rank, targets = {}, bytearray(), None, set()
    for name in sorted(tensors):
        stem, ab = name.rsplit(".", 1)
        blk, layer, kind, _ = stem.split(".")
        if blk != "blk" or kind not in NAMES:
            sys.exit(f"{src}: {name}: not a layer projection this tool maps")
        dims, raw = tensors[name]
        # ggml [ne0, ne1] is PyTorch [ne1, ne0]
        hf = f"base_model.model.model.layers.{layer}.{NAMES[kind]}.lora_{'A' if ab == 'lora_a' else 'B'}.weight"
        entries[hf] = {"dtype": "F32", "shape": [dims[1], dims[0]],
                       "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
        rank = dims[1] if ab == "lora_a" else dims[0]
        targets.add(NAMES[kind].split(".")[1])
    head = json.dumps(entries, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "adapter_model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + bytes(data))
    cfg = {"base_model_name_or_path": base, "fan_in_fan_out": False,
           "lora_alpha": kv.get("adapter.lora.alpha", 0.0), "peft_type": "LORA", "r": rank,
           "target_modules": sorted(targets), "use_rslora": False}
    with open(os.path.join(out, "adapter_config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")


main()
