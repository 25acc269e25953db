#!/usr/bin/python3
# export_hf.py -- write a llama, qwen3, gemma3, lfm2, lfm2moe or phi3 GGUF out as a Hugging
# Face model folder, to produce independent test inputs for p64c's
# Safetensors side.
#
# Reads the GGUF with llama.cpp's gguf-py (never with libq42) and writes:
# config.json, tokenizer.json, tokenizer_config.json and the weights as one
# model.safetensors, or with --shards N as model-0000i-of-0000N.safetensors
# plus model.safetensors.index.json. The Safetensors bytes are laid out
# here with numpy following the published format (8-byte little-endian
# header length, JSON header, data), so nothing of q42 is involved.
#
# Facts used (from llama.cpp's convert_hf_to_gguf, read, not copied): the
# GGUF q/k projections of llama are the HF ones with the rows of each head
# reordered from (half, pair) to (pair, half); this tool undoes that. The
# SentencePiece vocabulary (scores, types) goes into a tokenizer.json of
# model type "Unigram" with byte_fallback, which keeps every score.
# qwen3 keeps its q/k rows (NeoX RoPE) and has per-head q/k norms; gemma3's
# converter adds 1 to every norm weight (HF computes x * (1 + w)), so the
# HF weight here is the GGUF one minus 1 (refused where that does not give
# the GGUF value back); lfm2's converter squeezes conv.weight [n_embd, 1, L]
# to [n_embd, L], so the export puts the middle dimension back, and its
# names (operator_norm, feed_forward.w1/w3/w2, conv.*) are its own.
# phi3 keeps its fused rows as HF stores them (self_attn.qkv_proj: q, k,
# v; mlp.gate_up_proj: gate, then up); its LongRoPE factors are not
# tensors in HF but config.json's rope_scaling (long_factor,
# short_factor, original_max_position_embeddings), from which the
# converter makes rope_factors_long/short and the attention factor, and
# partial rotary is partial_rotary_factor = n_rot * n_head / n_embd.
#
# Usage (not run by the test suite; its outputs are checked in, see
# tests/golden/hf/README):
#   PYTHONPATH=/work/peer/llama.cpp/gguf-py /usr/bin/python3 \
#       tests/tools/export_hf.py MODEL.gguf OUTDIR [--dtype f32|f16|bf16] [--shards N]
import argparse
import json
import os
import struct
import sys

import numpy as np
from gguf import GGUFReader

NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}
LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}


def field(r, key, default=None):
    f = r.fields.get(key)
    if f is None:
        return default
    return f.contents()


# per architecture: names that differ from llama's
ARCH_NAMES = {
    "qwen3": {"attn_q_norm.weight": "self_attn.q_norm.weight",
              "attn_k_norm.weight": "self_attn.k_norm.weight"},
    "gemma3": {"attn_q_norm.weight": "self_attn.q_norm.weight",
               "attn_k_norm.weight": "self_attn.k_norm.weight",
               "post_attention_norm.weight": "post_attention_layernorm.weight",
               "ffn_norm.weight": "pre_feedforward_layernorm.weight",
               "post_ffw_norm.weight": "post_feedforward_layernorm.weight"},
    "lfm2": {"token_embd_norm.weight": "model.embedding_norm.weight",
             "attn_norm.weight": "operator_norm.weight",
             "ffn_norm.weight": "ffn_norm.weight",
             "attn_output.weight": "self_attn.out_proj.weight",
             "attn_q_norm.weight": "self_attn.q_layernorm.weight",
             "attn_k_norm.weight": "self_attn.k_layernorm.weight",
             "shortconv.conv.weight": "conv.conv.weight",
             "shortconv.in_proj.weight": "conv.in_proj.weight",
             "shortconv.out_proj.weight": "conv.out_proj.weight",
             "ffn_gate.weight": "feed_forward.w1.weight",
             "ffn_up.weight": "feed_forward.w3.weight",
             "ffn_down.weight": "feed_forward.w2.weight"},
}
ARCH_NAMES["lfm2moe"] = dict(ARCH_NAMES["lfm2"], **{
    "ffn_gate_inp.weight": "feed_forward.gate.weight",
    "exp_probs_b.bias": "feed_forward.expert_bias"})
# an expert stack's HF name per expert X: llama.cpp's converter stacks
# model.layers.L.feed_forward.experts.X.w1/w3/w2.weight in expert order
EXPERTS = {"ffn_gate_exps.weight": "w1", "ffn_up_exps.weight": "w3", "ffn_down_exps.weight": "w2"}
HF_TYPES = {"llama": ("LlamaForCausalLM", "llama"), "qwen3": ("Qwen3ForCausalLM", "qwen3"),
            "gemma3": ("Gemma3ForCausalLM", "gemma3_text"), "lfm2": ("Lfm2ForCausalLM", "lfm2"),
            "lfm2moe": ("Lfm2MoeForCausalLM", "lfm2_moe"), "phi3": ("Phi3ForCausalLM", "phi3")}
ARCH_NAMES["phi3"] = {"attn_qkv.weight": "self_attn.qkv_proj.weight",
                      "ffn_up.weight": "mlp.gate_up_proj.weight"}
# tensors that HF keeps in config.json (phi3's LongRoPE factors)
CONFIG_TENSORS = {"rope_factors_long.weight": "long_factor", "rope_factors_short.weight": "short_factor"}


def hf_name(gname, arch="llama"):
    extra = ARCH_NAMES.get(arch, {})
    if gname in extra and not gname.startswith("blk."):
        return extra[gname]
    if gname in NAMES:
        return NAMES[gname]
    parts = gname.split(".", 2)
    if parts[0] != "blk" or (parts[2] not in LAYER_NAMES and parts[2] not in extra):
        sys.exit(f"export_hf: no Hugging Face name for tensor {gname}")
    return f"model.layers.{parts[1]}.{extra.get(parts[2], LAYER_NAMES.get(parts[2]))}"


def unpermute(w, n_head):
    # GGUF rows per head are (pair i, half s); HF has (half s, pair i).
    rows = w.shape[0]
    return (w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def to_dtype(a, dtype):
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "f32":
        return a, "F32"
    if dtype == "f16":
        return a.astype(np.float16), "F16"
    u = a.view(np.uint32).astype(np.uint64)
    # bf16: round to nearest even on the upper 16 bits (NaN-free weights)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16), "BF16"


def write_safetensors(path, tensors):
    header = {"__metadata__": {"format": "pt"}}
    off = 0
    for name, arr, st in tensors:
        n = arr.nbytes
        header[name] = {"dtype": st, "shape": list(arr.shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, arr, _ in tensors:
            f.write(arr.tobytes())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf")
    ap.add_argument("outdir")
    ap.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"])
    ap.add_argument("--shards", type=int, default=1)
    a = ap.parse_args()
    r = GGUFReader(a.gguf)
    arch = field(r, "general.architecture")
    if arch not in HF_TYPES:
        sys.exit(f"export_hf: architecture {arch}: only llama, qwen3, gemma3, lfm2, lfm2moe and phi3 are exported")
    A = arch + "."
    n_embd = int(field(r, A + "embedding_length"))
    n_layer = int(field(r, A + "block_count"))
    n_head = int(field(r, A + "attention.head_count"))
    kv = field(r, A + "attention.head_count_kv", n_head)
    kv_layers = [int(x) for x in kv] if isinstance(kv, list) else [int(kv)] * n_layer
    n_head_kv = max(kv_layers)
    tokens = field(r, "tokenizer.ggml.tokens")
    scores = field(r, "tokenizer.ggml.scores")
    types = field(r, "tokenizer.ggml.token_type")
    names = {t.name for t in r.tensors}
    os.makedirs(a.outdir, exist_ok=True)

    config = {
        "architectures": [HF_TYPES[arch][0]],
        "model_type": HF_TYPES[arch][1],
        "hidden_size": n_embd,
        "intermediate_size": int(field(r, A + "feed_forward_length")),
        "num_hidden_layers": n_layer,
        "num_attention_heads": n_head,
        "num_key_value_heads": n_head_kv,
        "max_position_embeddings": int(field(r, A + "context_length")),
        "rms_norm_eps": float(np.float32(field(r, A + "attention.layer_norm_rms_epsilon"))),
        "rope_theta": float(field(r, A + "rope.freq_base", 10000.0)),
        "vocab_size": len(tokens),
        "tie_word_embeddings": "output.weight" not in names,
        "torch_dtype": {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[a.dtype],
    }
    for k, g in (("head_dim", A + "attention.key_length"), ("sliding_window", A + "attention.sliding_window"),
                 ("sliding_window_pattern", A + "attention.sliding_window_pattern"),
                 ("conv_L_cache", A + "shortconv.l_cache"), ("num_experts", A + "expert_count"),
                 ("num_experts_per_tok", A + "expert_used_count"),
                 ("moe_intermediate_size", A + "expert_feed_forward_length"),
                 ("num_dense_layers", A + "leading_dense_block_count")):
        v = field(r, g)
        if v is not None:
            config[k] = int(v)
    for k, g in (("rope_local_base_freq", A + "rope.freq_base_swa"),
                 ("final_logit_softcapping", A + "final_logit_softcapping")):
        v = field(r, g)
        if v is not None:
            config[k] = float(v)
    if arch == "phi3":
        n_rot = int(field(r, A + "rope.dimension_count", n_embd // n_head))
        config["partial_rotary_factor"] = n_rot * n_head / n_embd
        if int(config["partial_rotary_factor"] * n_embd) // n_head != n_rot:
            sys.exit(f"export_hf: rope.dimension_count {n_rot} is no partial_rotary_factor")
        orig = field(r, A + "rope.scaling.original_context_length")
        if orig is not None:
            config["original_max_position_embeddings"] = int(orig)
        if "rope_factors_long.weight" in names:
            config["rope_scaling"] = {"type": "longrope"}
            for t in r.tensors:
                if t.name in CONFIG_TENSORS:
                    config["rope_scaling"][CONFIG_TENSORS[t.name]] = [
                        float(x) for x in np.array(t.data, dtype=np.float32)]
    if arch in ("lfm2", "lfm2moe"):
        config["layer_types"] = ["conv" if k == 0 else "full_attention" for k in kv_layers]
    for k, g in (("bos_token_id", "tokenizer.ggml.bos_token_id"),
                 ("eos_token_id", "tokenizer.ggml.eos_token_id")):
        v = field(r, g)
        if v is not None:
            config[k] = int(v)
    with open(os.path.join(a.outdir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")

    unk = field(r, "tokenizer.ggml.unknown_token_id")
    added = []
    for i, (t, ty) in enumerate(zip(tokens, types)):
        if ty in (2, 3, 4):
            added.append({"id": i, "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": ty != 4})
    tok = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "Unigram", "unk_id": None if unk is None else int(unk),
                  "vocab": [[t, float(s)] for t, s in zip(tokens, scores)],
                  "byte_fallback": True},
    }
    with open(os.path.join(a.outdir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=1)
        f.write("\n")
    tc = {"tokenizer_class": "LlamaTokenizer", "model_max_length": config["max_position_embeddings"]}
    for key, g in (("bos_token", "tokenizer.ggml.bos_token_id"),
                   ("eos_token", "tokenizer.ggml.eos_token_id"),
                   ("unk_token", "tokenizer.ggml.unknown_token_id")):
        v = field(r, g)
        if v is not None and 0 <= int(v) < len(tokens):
            tc[key] = tokens[int(v)]
    for key, g in (("add_bos_token", "tokenizer.ggml.add_bos_token"),
                   ("add_eos_token", "tokenizer.ggml.add_eos_token")):
        v = field(r, g)
        if v is not None:
            tc[key] = bool(v)
    with open(os.path.join(a.outdir, "tokenizer_config.json"), "w") as f:
        json.dump(tc, f, indent=2)
        f.write("\n")

    out = []
    for t in r.tensors:
        if t.name in CONFIG_TENSORS:
            continue
        if t.tensor_type.name != "F32":
            sys.exit(f"export_hf: tensor {t.name} is {t.tensor_type.name}, only F32 is exported")
        w = np.array(t.data, dtype=np.float32).reshape([int(x) for x in reversed(t.shape)])
        if arch == "llama" and t.name.endswith("attn_q.weight"):
            w = unpermute(w, n_head)
        elif arch == "llama" and t.name.endswith("attn_k.weight"):
            w = unpermute(w, n_head_kv)
        elif arch == "gemma3" and t.name.endswith("norm.weight"):
            g = w
            w = (g - np.float32(1)).astype(np.float32)
            if not np.array_equal((w + np.float32(1)).astype(np.float32), g):
                sys.exit(f"export_hf: tensor {t.name}: w - 1 + 1 is not w in f32")
        elif arch in ("lfm2", "lfm2moe") and t.name.endswith("shortconv.conv.weight"):
            w = w.reshape(w.shape[0], 1, w.shape[1])
        stem = t.name.split(".", 2)[-1]
        if stem in EXPERTS:
            # [n_expert, n_out, n_in]: one HF tensor per expert
            for x in range(w.shape[0]):
                arr, st = to_dtype(w[x], a.dtype)
                out.append((f"model.layers.{t.name.split('.')[1]}.feed_forward.experts.{x}."
                            f"{EXPERTS[stem]}.weight", arr, st))
            continue
        arr, st = to_dtype(w, a.dtype)
        out.append((hf_name(t.name, arch), arr, st))
    out.sort(key=lambda x: x[0])
    if a.shards <= 1:
        write_safetensors(os.path.join(a.outdir, "model.safetensors"), out)
        return
    per = (len(out) + a.shards - 1) // a.shards
    wmap = {}
    total = 0
    for s in range(a.shards):
        part = out[s * per:(s + 1) * per]
        fn = f"model-{s + 1:05d}-of-{a.shards:05d}.safetensors"
        write_safetensors(os.path.join(a.outdir, fn), part)
        for name, arr, _ in part:
            wmap[name] = fn
            total += arr.nbytes
    with open(os.path.join(a.outdir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": wmap}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
