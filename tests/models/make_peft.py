#!/usr/bin/python3
"""make_peft.py -- a Hugging Face PEFT folder (adapter_config.json,
adapter_model.safetensors) holding the same LoRA as a llama GGUF adapter, as
PEFT would have saved the adapter that llama.cpp's convert_lora_to_gguf.py
turns into that GGUF: names mapped back to Hugging Face's, lora_B's rows of
q_proj and k_proj put back in Hugging Face's per-head order (the inverse of
the converter's permutation), F32 values as they are.

  make_peft.py ADAPTER.gguf N_HEAD N_HEAD_KV OUT_FOLDER

Uses gguf-py from the llama.cpp tree (PEER_DIR, as mkmodel.py) to read, and
writes Safetensors itself (8-byte header length, JSON header, data).
"""
import json
import os
import sys

import numpy as np

PEER_DIR = os.environ.get("PEER_DIR") or os.path.expanduser("~/.cache/q42-peer")
sys.path.insert(0, os.environ.get("GGUF_PY") or os.path.join(PEER_DIR, "llama.cpp", "gguf-py"))
import gguf  # noqa: E402

NAMES = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
         "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
         "ffn_down": "mlp.down_proj"}


def unpermute(w, n_head):
    """rows from GGUF's (pair, half) order back to HF's (half, pair), per head"""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def main():
    src, n_head, n_head_kv, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    r = gguf.GGUFReader(src)
    alpha = float(r.fields["adapter.lora.alpha"].parts[-1][0])
    tensors, rank = {}, 0
    for t in r.tensors:
        blk, layer, kind = t.name.split(".")[0:3]
        part = t.name.split(".")[-1]
        assert blk == "blk" and t.tensor_type == gguf.GGMLQuantizationType.F32, t.name
        a = np.array(t.data, dtype=np.float32).reshape([int(x) for x in reversed(t.shape)])
        if part == "lora_b" and kind in ("attn_q", "attn_k"):
            a = unpermute(a, n_head if kind == "attn_q" else n_head_kv)
        hf = "base_model.model.model.layers.%s.%s.lora_%s.weight" % (layer, NAMES[kind], part[-1].upper())
        tensors[hf] = np.ascontiguousarray(a)
        rank = a.shape[1] if part == "lora_b" else a.shape[0]
    header, off, blobs = {}, 0, []
    for name in sorted(tensors):
        a = tensors[name]
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blobs.append(a.tobytes())
        off += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "adapter_model.safetensors"), "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))
    cfg = {"peft_type": "LORA", "r": rank, "lora_alpha": alpha, "use_rslora": False,
           "fan_in_fan_out": False, "target_modules": sorted({n.split(".")[-1] for n in NAMES.values()}),
           "base_model_name_or_path": "e256-llama"}
    with open(os.path.join(out, "adapter_config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")


main()
