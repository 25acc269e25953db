#!/usr/bin/python3
# export_hf.py -- write a llama, qwen3, gemma3, lfm2, lfm2moe or phi3 GGUF,
# or a bert, nomic-bert, gemma-embedding or LFM2-ColBERT encoder, out as a
# Hugging Face model folder, to produce independent test inputs for p64c's
# Safetensors side.
#
# Standard library only: the GGUF is read with tests/tools/hostile_models.py's
# Gguf class (never with libq42) and the tool writes config.json,
# tokenizer.json, tokenizer_config.json and the weights as one
# model.safetensors, or with --shards N as model-0000i-of-0000N.safetensors
# plus model.safetensors.index.json. The Safetensors bytes are laid out
# here following the published format (8-byte little-endian header length,
# JSON header, data), so nothing of q42 is involved.
#
# Facts used (from llama.cpp's convert_hf_to_gguf and gguf-py's tensor
# map, read, not copied): the GGUF q/k projections of llama are the HF
# ones with the rows of each head reordered from (half, pair) to (pair,
# half); this tool undoes that. The SentencePiece vocabulary (scores,
# types) goes into a tokenizer.json of model type "Unigram" with
# byte_fallback, which keeps every score.
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
# Encoders are written as sentence-transformers folders: modules.json,
# 1_Pooling/config.json from <arch>.pooling_type (1 mean, 2 cls, 3 last),
# and each projection as a Dense module (config.json with in_features,
# out_features, bias false, the Identity activation; model.safetensors
# holding linear.weight [out, in]): EmbeddingGemma's dense_2 and dense_3
# as 2_Dense and 3_Dense, LFM2-ColBERT's dense_2 as 1_Dense (pylate's
# layout). bert's WordPiece vocabulary is undone from llama.cpp's
# "phantom space" form (U+2581 + word for a word start, the bare text for
# a "##" continuation, control tokens and "[...]" tokens as they are);
# byte-level BPE (gpt2) goes out as a BPE model with its merges and the
# plain ByteLevel pre-tokenizer (GPT-2's regex). Gemma3TextModel and
# Lfm2Model checkpoints name their tensors without the "model." prefix.
#
# --colbert-config K=V (repeatable) adds config_sentence_transformers.json
# with those pylate settings (values as JSON: --colbert-config
# query_length=24 --colbert-config 'query_prefix="[q] "').
#
# Usage (not run by the test suite for the decoders; their outputs are
# checked in, see tests/golden/hf/README; p64c.bats runs it on the
# synthetic encoders of ../shared/models):
#   python3 tests/tools/export_hf.py MODEL.gguf OUTDIR [--dtype f32|f16|bf16] [--shards N]
import argparse
import array
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostile_models import Gguf  # noqa: E402

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
    v = r.get(key, default)
    # arrays are (element type, values)
    return v[1] if isinstance(v, tuple) else v


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


def f32_values(raw):
    return array.array("f", raw)


def unpermute(raw, shape, n_head):
    # GGUF rows per head are (pair i, half s); HF has (half s, pair i).
    rows = shape[0]
    rb = len(raw) // rows
    hd = rows // n_head
    half = hd // 2
    out = bytearray(len(raw))
    for h in range(n_head):
        for s in range(2):
            for i in range(half):
                src = (h * hd + 2 * i + s) * rb
                dst = (h * hd + s * half + i) * rb
                out[dst:dst + rb] = raw[src:src + rb]
    return bytes(out)


def to_dtype(raw, dtype):
    """f32 bytes as the Safetensors dtype asked for: (bytes, name)."""
    if dtype == "f32":
        return raw, "F32"
    v = f32_values(raw)
    if dtype == "f16":
        return struct.pack("<%de" % len(v), *v), "F16"
    u = array.array("I", raw)
    # bf16: round to nearest even on the upper 16 bits (NaN-free weights)
    return array.array("H", [(x + 0x7FFF + ((x >> 16) & 1)) >> 16 for x in u]).tobytes(), "BF16"


def write_safetensors(path, tensors):
    header = {"__metadata__": {"format": "pt"}}
    off = 0
    for name, shape, raw, st in tensors:
        n = len(raw)
        header[name] = {"dtype": st, "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, _, raw, _ in tensors:
            f.write(raw)


# encoders: HF names per GGUF name (a "{}" is the layer)
ENC_NAMES = {
    "bert": {"token_embd.weight": "embeddings.word_embeddings.weight",
             "token_types.weight": "embeddings.token_type_embeddings.weight",
             "position_embd.weight": "embeddings.position_embeddings.weight",
             "token_embd_norm.weight": "embeddings.LayerNorm.weight",
             "token_embd_norm.bias": "embeddings.LayerNorm.bias",
             "attn_q.weight": "encoder.layer.{}.attention.self.query.weight",
             "attn_q.bias": "encoder.layer.{}.attention.self.query.bias",
             "attn_k.weight": "encoder.layer.{}.attention.self.key.weight",
             "attn_k.bias": "encoder.layer.{}.attention.self.key.bias",
             "attn_v.weight": "encoder.layer.{}.attention.self.value.weight",
             "attn_v.bias": "encoder.layer.{}.attention.self.value.bias",
             "attn_output.weight": "encoder.layer.{}.attention.output.dense.weight",
             "attn_output.bias": "encoder.layer.{}.attention.output.dense.bias",
             "attn_output_norm.weight": "encoder.layer.{}.attention.output.LayerNorm.weight",
             "attn_output_norm.bias": "encoder.layer.{}.attention.output.LayerNorm.bias",
             "ffn_up.weight": "encoder.layer.{}.intermediate.dense.weight",
             "ffn_up.bias": "encoder.layer.{}.intermediate.dense.bias",
             "ffn_down.weight": "encoder.layer.{}.output.dense.weight",
             "ffn_down.bias": "encoder.layer.{}.output.dense.bias",
             "layer_output_norm.weight": "encoder.layer.{}.output.LayerNorm.weight",
             "layer_output_norm.bias": "encoder.layer.{}.output.LayerNorm.bias"},
    "nomic-bert": {"token_embd.weight": "embeddings.word_embeddings.weight",
                   "token_types.weight": "embeddings.token_type_embeddings.weight",
                   "token_embd_norm.weight": "emb_ln.weight",
                   "token_embd_norm.bias": "emb_ln.bias",
                   "attn_qkv.weight": "encoder.layers.{}.attn.Wqkv.weight",
                   "attn_output.weight": "encoder.layers.{}.attn.out_proj.weight",
                   "attn_output_norm.weight": "encoder.layers.{}.norm1.weight",
                   "attn_output_norm.bias": "encoder.layers.{}.norm1.bias",
                   "ffn_up.weight": "encoder.layers.{}.mlp.fc11.weight",
                   "ffn_gate.weight": "encoder.layers.{}.mlp.fc12.weight",
                   "ffn_down.weight": "encoder.layers.{}.mlp.fc2.weight",
                   "layer_output_norm.weight": "encoder.layers.{}.norm2.weight",
                   "layer_output_norm.bias": "encoder.layers.{}.norm2.bias"},
}
POOLING = {1: "pooling_mode_mean_tokens", 2: "pooling_mode_cls_token", 3: "pooling_mode_lasttoken"}
ST = "sentence_transformers.models."


def is_colbert(r, arch):
    return arch == "lfm2" and any(t[0] == "dense_2.weight" for t in r.tensors)


def hf_arch(r, arch):
    """(architectures[0], model_type) of the folder."""
    if arch in HF_TYPES and not is_colbert(r, arch):
        return HF_TYPES[arch]
    if arch == "bert":
        return "BertModel", "bert"
    if arch == "nomic-bert":
        return "NomicBertModel", "nomic_bert"
    if arch == "gemma-embedding":
        return "Gemma3TextModel", "gemma3_text"
    if arch == "lfm2":
        causal = field(r, "lfm2.attention.causal", True)
        return ("Lfm2Model" if causal else "Lfm2BidirectionalModel"), "lfm2"
    sys.exit(f"export_hf: architecture {arch}: only llama, qwen3, gemma3, lfm2, lfm2moe, phi3, "
             "bert, nomic-bert and gemma-embedding are exported")


def encoder_config(r, arch, tensors):
    A = arch + "."
    n_types = next((t[1][1] for t in r.tensors if t[0] == "token_types.weight"), 1)
    eps = float(field(r, A + "attention.layer_norm_epsilon"))
    if arch == "bert":
        return {"architectures": ["BertModel"], "model_type": "bert",
                "hidden_size": int(field(r, A + "embedding_length")),
                "num_hidden_layers": int(field(r, A + "block_count")),
                "num_attention_heads": int(field(r, A + "attention.head_count")),
                "intermediate_size": int(field(r, A + "feed_forward_length")),
                "max_position_embeddings": int(field(r, A + "context_length")),
                "layer_norm_eps": eps, "hidden_act": "gelu", "type_vocab_size": int(n_types),
                "vocab_size": len(field(r, "tokenizer.ggml.tokens")), "torch_dtype": "float32"}
    ctx = int(field(r, A + "context_length"))
    return {"architectures": ["NomicBertModel"], "model_type": "nomic_bert",
            "n_embd": int(field(r, A + "embedding_length")),
            "n_layer": int(field(r, A + "block_count")),
            "n_head": int(field(r, A + "attention.head_count")),
            "n_inner": int(field(r, A + "feed_forward_length")),
            "n_positions": ctx, "max_trained_positions": ctx,
            "layer_norm_epsilon": eps, "rotary_emb_base": float(field(r, A + "rope.freq_base", 10000.0)),
            "rotary_emb_fraction": 1.0, "rotary_emb_interleaved": False, "causal": False,
            "prenorm": False, "activation_function": "swiglu", "qkv_proj_bias": False,
            "mlp_fc1_bias": False, "mlp_fc2_bias": False, "type_vocab_size": int(n_types),
            "vocab_size": len(field(r, "tokenizer.ggml.tokens")), "torch_dtype": "float32"}


def write_json(path, obj, indent=2, ascii=True):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=ascii)
        f.write("\n")


def write_modules(r, arch, outdir, denses, colbert_cfg):
    """modules.json, the pooling and Dense modules, the pylate settings."""
    mods = [{"idx": 0, "name": "0", "path": "", "type": ST + "Transformer"}]
    pool = field(r, arch + ".pooling_type")
    n_embd = int(field(r, arch + ".embedding_length"))
    if pool is not None and int(pool) in POOLING:
        cfg = {"word_embedding_dimension": n_embd}
        for k in POOLING.values():
            cfg[k] = k == POOLING[int(pool)]
        cfg["pooling_mode_max_tokens"] = False
        cfg["include_prompt"] = True
        mods.append({"idx": len(mods), "name": str(len(mods)), "path": f"{len(mods)}_Pooling",
                     "type": ST + "Pooling"})
        write_json(os.path.join(outdir, mods[-1]["path"], "config.json"), cfg)
    for _, shape, raw in sorted(denses):
        path = f"{len(mods)}_Dense"
        mods.append({"idx": len(mods), "name": str(len(mods)), "path": path,
                     "type": "pylate.models.Dense.Dense" if is_colbert(r, arch) else ST + "Dense"})
        write_json(os.path.join(outdir, path, "config.json"),
                   {"in_features": shape[1], "out_features": shape[0], "bias": False,
                    "activation_function": "torch.nn.modules.linear.Identity"})
        write_safetensors(os.path.join(outdir, path, "model.safetensors"),
                          [("linear.weight", shape, raw, "F32")])
    if arch in ("bert", "nomic-bert", "gemma-embedding"):
        mods.append({"idx": len(mods), "name": str(len(mods)), "path": f"{len(mods)}_Normalize",
                     "type": ST + "Normalize"})
    write_json(os.path.join(outdir, "modules.json"), mods)
    if colbert_cfg:
        write_json(os.path.join(outdir, "config_sentence_transformers.json"), colbert_cfg)


def wordpiece_text(t, ty):
    # llama.cpp's phantom-space form back to WordPiece's "##" form
    if ty == 3 or (t.startswith("[") and t.endswith("]")):
        return t
    if t.startswith("\u2581"):
        return t[1:]
    return "##" + t


def write_tokenizer(r, outdir, config):
    tokens = field(r, "tokenizer.ggml.tokens")
    scores = field(r, "tokenizer.ggml.scores")
    types = field(r, "tokenizer.ggml.token_type")
    model = field(r, "tokenizer.ggml.model", "llama")
    unk = field(r, "tokenizer.ggml.unknown_token_id")
    if model == "bert":
        tokens = [wordpiece_text(t, ty) for t, ty in zip(tokens, types)]
    added = []
    for i, (t, ty) in enumerate(zip(tokens, types)):
        if ty in (2, 3, 4):
            added.append({"id": i, "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": ty != 4})
    if model == "bert":
        tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
               "normalizer": {"type": "BertNormalizer", "clean_text": True,
                              "handle_chinese_chars": True, "strip_accents": None,
                              "lowercase": True},
               "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": None,
               "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
               "model": {"type": "WordPiece", "unk_token": tokens[int(unk)],
                         "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                         "vocab": {t: i for i, t in enumerate(tokens)}}}
    elif model == "gpt2":
        tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
               "normalizer": None,
               "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                                 "trim_offsets": True, "use_regex": True},
               "post_processor": None,
               "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                           "use_regex": True},
               "model": {"type": "BPE", "dropout": None, "unk_token": None,
                         "continuing_subword_prefix": "", "end_of_word_suffix": "",
                         "fuse_unk": False, "byte_fallback": False,
                         "vocab": {t: i for i, t in enumerate(tokens)},
                         "merges": field(r, "tokenizer.ggml.merges")}}
    else:
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
    write_json(os.path.join(outdir, "tokenizer.json"), tok, indent=1, ascii=False)
    tc = {"tokenizer_class": {"bert": "BertTokenizer", "gpt2": "GPT2Tokenizer"}.get(model, "LlamaTokenizer"),
          "model_max_length": config.get("max_position_embeddings", config.get("n_positions"))}
    if model == "bert":
        tc["do_lower_case"] = True
    for key, g in (("bos_token", "tokenizer.ggml.bos_token_id"),
                   ("eos_token", "tokenizer.ggml.eos_token_id"),
                   ("unk_token", "tokenizer.ggml.unknown_token_id"),
                   ("sep_token", "tokenizer.ggml.seperator_token_id"),
                   ("pad_token", "tokenizer.ggml.padding_token_id"),
                   ("cls_token", "tokenizer.ggml.cls_token_id"),
                   ("mask_token", "tokenizer.ggml.mask_token_id")):
        v = field(r, g)
        if v is not None and 0 <= int(v) < len(tokens):
            tc[key] = tokens[int(v)]
    for key, g in (("add_bos_token", "tokenizer.ggml.add_bos_token"),
                   ("add_eos_token", "tokenizer.ggml.add_eos_token")):
        v = field(r, g)
        if v is not None:
            tc[key] = bool(v)
    write_json(os.path.join(outdir, "tokenizer_config.json"), tc)


def decoder_config(r, arch, a, names, n_head_kv, kv_layers, tokens):
    A = arch + "."
    n_embd = int(field(r, A + "embedding_length"))
    n_layer = int(field(r, A + "block_count"))
    n_head = int(field(r, A + "attention.head_count"))
    hf = hf_arch(r, arch)
    config = {
        "architectures": [hf[0]],
        "model_type": hf[1],
        "hidden_size": n_embd,
        "intermediate_size": int(field(r, A + "feed_forward_length")),
        "num_hidden_layers": n_layer,
        "num_attention_heads": n_head,
        "num_key_value_heads": n_head_kv,
        "max_position_embeddings": int(field(r, A + "context_length")),
        "rms_norm_eps": float(field(r, A + "attention.layer_norm_rms_epsilon")),
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
    if arch == "gemma-embedding":
        config["use_bidirectional_attention"] = True
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
            for name, dims, typ, off in r.tensors:
                if name in CONFIG_TENSORS:
                    config["rope_scaling"][CONFIG_TENSORS[name]] = list(
                        f32_values(r.data[off:off + 4 * dims[0]]))
    if arch in ("lfm2", "lfm2moe"):
        config["layer_types"] = ["conv" if k == 0 else "full_attention" for k in kv_layers]
    return config


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf")
    ap.add_argument("outdir")
    ap.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"])
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--colbert-config", action="append", default=[], metavar="KEY=JSON")
    a = ap.parse_args()
    with open(a.gguf, "rb") as f:
        r = Gguf(f.read())
    arch = field(r, "general.architecture")
    hf = hf_arch(r, arch)
    A = arch + "."
    encoder = arch in ENC_NAMES
    n_layer = int(field(r, A + "block_count"))
    n_head = int(field(r, A + "attention.head_count"))
    kv = field(r, A + "attention.head_count_kv", n_head)
    kv_layers = [int(x) for x in kv] if isinstance(kv, list) else [int(kv)] * n_layer
    n_head_kv = max(kv_layers)
    tokens = field(r, "tokenizer.ggml.tokens")
    names = {t[0] for t in r.tensors}
    os.makedirs(a.outdir, exist_ok=True)
    # the checkpoint's own prefix: Gemma3TextModel and Lfm2Model have none
    prefix = "" if hf[0] in ("Gemma3TextModel", "Lfm2Model", "Lfm2BidirectionalModel") else "model."

    config = encoder_config(r, arch, names) if encoder else decoder_config(
        r, arch, a, names, n_head_kv, kv_layers, tokens)
    for k, g in (("bos_token_id", "tokenizer.ggml.bos_token_id"),
                 ("eos_token_id", "tokenizer.ggml.eos_token_id")):
        v = field(r, g)
        if v is not None:
            config[k] = int(v)
    if encoder or hf[0] == "Lfm2BidirectionalModel":
        config["is_causal"] = False
    write_json(os.path.join(a.outdir, "config.json"), config)
    write_tokenizer(r, a.outdir, config)

    out, denses = [], []
    for name, dims, typ, off in r.tensors:
        if name in CONFIG_TENSORS:
            continue
        if typ != 0:
            sys.exit(f"export_hf: tensor {name} is of GGUF type {typ}, only F32 is exported")
        n = 1
        for d in dims:
            n *= d
        raw = r.data[off:off + 4 * n]
        shape = [int(x) for x in reversed(dims)]
        if name in ("dense_2.weight", "dense_3.weight"):
            denses.append((name, shape, raw))
            continue
        if arch == "llama" and name.endswith("attn_q.weight"):
            raw = unpermute(raw, shape, n_head)
        elif arch == "llama" and name.endswith("attn_k.weight"):
            raw = unpermute(raw, shape, n_head_kv)
        elif arch in ("gemma3", "gemma-embedding") and name.endswith("norm.weight"):
            g = f32_values(raw)
            w = array.array("f", [x - 1.0 for x in g])
            if array.array("f", [x + 1.0 for x in w]) != g:
                sys.exit(f"export_hf: tensor {name}: w - 1 + 1 is not w in f32")
            raw = w.tobytes()
        elif arch in ("lfm2", "lfm2moe") and name.endswith("shortconv.conv.weight"):
            shape = [shape[0], 1, shape[1]]
        stem = name.split(".", 2)[-1]
        if stem in EXPERTS:
            # [n_expert, n_out, n_in]: one HF tensor per expert
            per = len(raw) // shape[0]
            for x in range(shape[0]):
                piece, st = to_dtype(raw[x * per:(x + 1) * per], a.dtype)
                out.append((f"model.layers.{name.split('.')[1]}.feed_forward.experts.{x}."
                            f"{EXPERTS[stem]}.weight", shape[1:], piece, st))
            continue
        raw, st = to_dtype(raw, a.dtype)
        if encoder:
            parts = name.split(".", 2)
            key = parts[2] if parts[0] == "blk" else name
            if key not in ENC_NAMES[arch]:
                sys.exit(f"export_hf: no Hugging Face name for tensor {name}")
            hn = ENC_NAMES[arch][key].format(parts[1] if parts[0] == "blk" else "")
        else:
            hn = hf_name(name, "gemma3" if arch == "gemma-embedding" else arch)
            if prefix != "model." and hn.startswith("model."):
                hn = prefix + hn[6:]
        out.append((hn, shape, raw, st))
    if denses or field(r, A + "pooling_type") is not None or a.colbert_config:
        colbert = {}
        for kv_arg in a.colbert_config:
            k, _, v = kv_arg.partition("=")
            colbert[k] = json.loads(v)
        write_modules(r, arch, a.outdir, denses, colbert)
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
        for name, _, raw, _ in part:
            wmap[name] = fn
            total += len(raw)
    with open(os.path.join(a.outdir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": wmap}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
