#!/bin/sh
# make_models.sh -- regenerate the small engine test models in this folder.
#
# Needs the llama.cpp oracle (PEER_DIR, see shared/tools/llamapeer/README.md):
# mkmodel.py writes the random-weight F32 sources, `llamapeer quantize`
# (llama.cpp's own quantizer) makes the checked-in quantized files. The F32
# sources are intermediate and not checked in. The tokenizer of every model
# is copied from shared/models/stories260K.gguf (512 tokens) so files stay
# small; n_embd and n_ff are multiples of 256 so k-quants apply unmodified.
# Run from the repository root: sh tests/models/make_models.sh
set -eu
PEER_DIR=${PEER_DIR:-/work/peer}
export PEER_DIR
PY=${PYTHON:-/usr/bin/python3}
MK=${MKMODEL:-../shared/tools/llamapeer/mkmodel.py}
LP=${LLAMAPEER:-$PEER_DIR/bin/llamapeer}
VOC=${VOCAB:-../shared/models/stories260K.gguf}
OUT=tests/models
TMP=${TMPDIR:-/tmp}/q42-engine-models
mkdir -p "$TMP"
set -x
# llama, n_embd 256, 2 layers, GQA 4/2 (head dim 64), n_ff 512, untied output
"$PY" "$MK" --arch llama --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 2 --n-ff 512 \
    --vocab-from "$VOC" --seed 7 --type f32 "$TMP/e256-llama-f32.gguf"
for q in Q8_0 Q4_0 Q4_K_M Q6_K; do
    lq=$(echo $q | tr 'A-Z' 'a-z')
    "$LP" quantize "$TMP/e256-llama-f32.gguf" "$OUT/e256-llama-$lq.gguf" $q --threads 1
done
# every tensor in one type (--pure), the embedding and output too
for q in Q5_0 Q5_1 TQ1_0 TQ2_0; do
    lq=$(echo $q | tr 'A-Z' 'a-z')
    "$LP" quantize "$TMP/e256-llama-f32.gguf" "$OUT/e256-llama-$lq.gguf" $q --pure --threads 1
done
# Q3_K everywhere: llama.cpp's Q3_K_S with --pure
"$LP" quantize "$TMP/e256-llama-f32.gguf" "$OUT/e256-llama-q3_k.gguf" Q3_K_S --pure --threads 1
"$LP" quantize "$TMP/e256-llama-f32.gguf" "$OUT/e256-llama-q2_k.gguf" Q2_K --pure --threads 1
"$LP" quantize "$TMP/e256-llama-f32.gguf" "$OUT/e256-llama-iq4_nl.gguf" IQ4_NL --pure --threads 1
"$LP" quantize "$TMP/e256-llama-f32.gguf" "$OUT/e256-llama-iq4_xs.gguf" IQ4_XS --pure --threads 1
# llama, tied output (no output.weight), F16 matrices, 1 layer
"$PY" "$MK" --arch llama --n-embd 256 --n-layer 1 --n-head 4 --n-head-kv 2 --n-ff 256 --tie-embd 1 \
    --vocab-from "$VOC" --seed 8 --type f16 "$OUT/e256-llama-tied-f16.gguf"
# the same model with every matrix in BF16 (the tied embedding too)
"$LP" quantize "$OUT/e256-llama-tied-f16.gguf" "$OUT/e256-llama-tied-bf16.gguf" BF16 --pure --threads 1
# qwen2 (q/k/v biases, NeoX rope), 1 layer, F32 source quantized to Q8_0
"$PY" "$MK" --arch qwen2 --n-embd 256 --n-layer 1 --n-head 4 --n-head-kv 2 --n-ff 256 \
    --vocab-from "$VOC" --seed 9 --type f32 "$TMP/e256-qwen2-f32.gguf"
"$LP" quantize "$TMP/e256-qwen2-f32.gguf" "$OUT/e256-qwen2-q8_0.gguf" Q8_0 --threads 1
set +x
ls -l "$OUT"/*.gguf
# a model without tokenizer.* keys (must be refused): a tiny llama, stripped
"$PY" "$MK" --arch llama --n-embd 32 --n-layer 1 --n-head 2 --n-head-kv 1 --n-ff 64 \
    --vocab-from "$VOC" --seed 10 --type f32 "$TMP/tiny-e32-f32.gguf"
"$PY" tests/models/strip_tokenizer.py "$TMP/tiny-e32-f32.gguf" "$OUT/no-tokenizer.gguf"
ls -l "$OUT/no-tokenizer.gguf"
# qwen3, phi3 and gemma3 (issue 34): n_embd 64, the same 512-token
# tokenizer; expected outputs in tests/golden/arch
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
# lfm2: layers 0, 1 and 3 short convolutions, layer 2 attention (GQA
# 4:1, q/k norms); kernel width 3 (llama.cpp's arithmetic: three fmas),
# then width 10 (eight products added one by one, then two fmas)
set -x
"$PY" "$MK" --arch lfm2 --n-embd 64 --n-layer 4 --n-head 4 --n-head-kv 1 --n-ff 128 \
    --attn-layers 2 --vocab-from "$VOC" --seed 25 --type f32 "$OUT/a64-lfm2-f32.gguf"
"$LP" quantize "$OUT/a64-lfm2-f32.gguf" "$OUT/a64-lfm2-q8_0.gguf" Q8_0 --threads 1
"$PY" "$MK" --arch lfm2 --n-embd 64 --n-layer 2 --n-head 4 --n-head-kv 2 --n-ff 128 \
    --conv-l-cache 10 --vocab-from "$VOC" --seed 26 --type f32 "$OUT/a64-lfm2-l10-f32.gguf"
set +x
ls -l "$OUT"/a64-lfm2*.gguf
# lfm2moe: routed FFNs after the leading dense blocks. 8 experts, top-2
# (layers 1-3 routed, layer 2 attention) and top-4 (two dense blocks
# first); n_embd 64 for F32, Q8_0 and Q4_0; n_embd and expert rows 256,
# for the k-quants (their 256-value blocks), quantized from an F32 that
# is not kept (tests/golden/arch)
set -x
"$PY" "$MK" --arch lfm2moe --n-embd 64 --n-layer 4 --n-head 4 --n-head-kv 2 --n-ff 128 \
    --attn-layers 2 --n-expert 8 --n-expert-used 2 --n-ff-exp 32 --n-dense-lead 1 \
    --vocab-from "$VOC" --seed 27 --type f32 "$OUT/a64-lfm2moe-e8k2-f32.gguf"
"$LP" quantize "$OUT/a64-lfm2moe-e8k2-f32.gguf" "$OUT/a64-lfm2moe-e8k2-q8_0.gguf" Q8_0 --threads 1
"$LP" quantize "$OUT/a64-lfm2moe-e8k2-f32.gguf" "$OUT/a64-lfm2moe-e8k2-q4_0.gguf" Q4_0 --threads 1
"$PY" "$MK" --arch lfm2moe --n-embd 64 --n-layer 4 --n-head 4 --n-head-kv 1 --n-ff 128 \
    --attn-layers 3 --n-expert 8 --n-expert-used 4 --n-ff-exp 64 --n-dense-lead 2 \
    --vocab-from "$VOC" --seed 28 --type f32 "$OUT/a64-lfm2moe-e8k4-f32.gguf"
T256=$(mktemp -d)
"$PY" "$MK" --arch lfm2moe --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 2 --n-ff 256 \
    --attn-layers 1 --n-expert 8 --n-expert-used 2 --n-ff-exp 256 --n-dense-lead 1 \
    --vocab-from "$VOC" --seed 29 --type f32 "$T256/a256-lfm2moe-f32.gguf"
"$LP" quantize "$T256/a256-lfm2moe-f32.gguf" "$OUT/a256-lfm2moe-q4_k_m.gguf" Q4_K_M --threads 1
"$LP" quantize "$T256/a256-lfm2moe-f32.gguf" "$OUT/a256-lfm2moe-q6_k.gguf" Q6_K --threads 1
rm -rf "$T256"
set +x
ls -l "$OUT"/a64-lfm2moe*.gguf "$OUT"/a256-lfm2moe*.gguf
