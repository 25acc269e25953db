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
