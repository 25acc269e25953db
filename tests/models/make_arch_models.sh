#!/bin/sh
# make_arch_models.sh -- regenerate the small qwen3, phi3 and gemma3 test
# models in this folder (issue 34's variants of the shared tiny models).
#
# Needs the llama.cpp oracle (PEER_DIR, see shared/tools/llamapeer/README.md):
# mkmodel.py writes the random-weight F32 models, `llamapeer quantize`
# (llama.cpp's own quantizer) the Q8_0 ones. Tokenizer: the 512 tokens of
# shared/models/stories260K.gguf, so every file stays well under 1 MB.
# Run from the repository root: sh tests/models/make_arch_models.sh
set -eu
PEER_DIR=${PEER_DIR:-$HOME/.cache/q42-peer}
export PEER_DIR
PY=${PYTHON:-/usr/bin/python3}
MK=${MKMODEL:-../shared/tools/llamapeer/mkmodel.py}
LP=${LLAMAPEER:-$PEER_DIR/bin/llamapeer}
VOC=${VOCAB:-../shared/models/stories260K.gguf}
OUT=tests/models
set -x
# qwen3: head_dim 24 (q is 96 wide, not n_embd), GQA 4:1, tied output
"$PY" "$MK" --arch qwen3 --n-embd 64 --n-layer 2 --n-head 4 --n-head-kv 1 --head-dim 24 \
    --n-ff 128 --tie-embd 1 --vocab-from "$VOC" --seed 21 --type f32 "$OUT/a64-qwen3-hd24-f32.gguf"
"$LP" quantize "$OUT/a64-qwen3-hd24-f32.gguf" "$OUT/a64-qwen3-hd24-q8_0.gguf" Q8_0 --threads 1
# phi3 (the names avoid "phi3": llama.cpp keys phi-3 token attributes on
# general.name and expects phi-3's own tokens then)
# phi3: 10 of 16 dimensions rotated, LongRoPE factors; original context 32,
# so any context past 32 takes the long factors (attn_factor 1.19)
"$PY" "$MK" --arch phi3 --n-embd 64 --n-layer 2 --n-head 4 --n-head-kv 2 --n-ff 128 \
    --n-rot 10 --longrope --ctx 4096 --orig-ctx 32 --name a64-longrope-long \
    --vocab-from "$VOC" --seed 22 --type f32 "$OUT/a64-phi3-long-f32.gguf"
# phi3: the same shape, original context 4096 of 131072: the short
# factors at a context of 4096 or less
"$PY" "$MK" --arch phi3 --n-embd 64 --n-layer 2 --n-head 4 --n-head-kv 2 --n-ff 128 \
    --n-rot 10 --longrope --name a64-longrope-short \
    --vocab-from "$VOC" --seed 23 --type f32 "$OUT/a64-phi3-short-f32.gguf"
# gemma3: 3 layers, sliding window 4 (shorter than the prompts) in layers
# 0 and 1 with their own RoPE base, layer 2 global; head_dim 32; logits
# soft-capped at 5
"$PY" "$MK" --arch gemma3 --n-embd 64 --n-layer 3 --n-head 4 --n-head-kv 2 --head-dim 32 \
    --n-ff 128 --swa 4 --swa-pattern 3 --rope-base-swa 5000 --softcap 5 \
    --vocab-from "$VOC" --seed 24 --type f32 "$OUT/a64-gemma3-swa-f32.gguf"
"$LP" quantize "$OUT/a64-gemma3-swa-f32.gguf" "$OUT/a64-gemma3-swa-q8_0.gguf" Q8_0 --threads 1
set +x
ls -l "$OUT"/a64-*.gguf
