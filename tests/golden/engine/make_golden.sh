#!/bin/sh
# make_golden.sh -- produce the engine golden files from the llama.cpp oracle.
#
# Run from the repository root (needs PEER_DIR, see
# shared/tools/llamapeer/README.md). Never run by the tests: its outputs are
# checked in. For every (model, prompt) it records llama.cpp's prompt ids,
# its 32 greedy ids (`llamapeer gen ... --fa off --kv f32`) and, for every
# step k, the top-1 minus top-2 logit gap (one
# `llamapeer logits "ids:<prompt> <out[0..k)>" --top 2` per step), so a
# test can tell a real mismatch from a near-tie.
set -eu
PEER_DIR=${PEER_DIR:-/work/peer}
LP=${LLAMAPEER:-$PEER_DIR/bin/llamapeer}
SM=${SHARED_MODELS:-../shared/models}
G=tests/golden/engine
OPTS="--fa off --kv f32 --threads 1"

golden() { # golden FILE-LABEL MODEL-PATH > rows
	label=$1 model=$2
	for prompt in "Once upon a time" "The little dog" "Tom and Lily went to the park."; do
		out=$("$LP" gen "$model" "$prompt" 32 $OPTS 2>/dev/null)
		pids=$(printf '%s\n' "$out" | sed -n 's/^ids: //p')
		oids=$(printf '%s\n' "$out" | sed -n 's/^out: //p')
		gaps="" prefix=""
		for id in $oids; do
			g=$("$LP" logits "$model" "ids:$pids$prefix" --top 2 $OPTS 2>/dev/null |
				awk 'NR==1{a=$2} NR==2{b=$2} END{printf "%.6g", a-b}')
			gaps="$gaps${gaps:+ }$g"
			prefix="$prefix $id"
		done
		printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$prompt" "$pids" "$oids" "$gaps"
	done
}

{
	printf '# model\tprompt\tprompt_ids\tout_ids\tgaps\n'
	golden stories260K.gguf "$SM/stories260K.gguf"
	golden tiny-llama-spm-f32.gguf "$SM/tiny-llama-spm-f32.gguf"
	for m in e256-llama-q8_0 e256-llama-q4_0 e256-llama-q4_k_m e256-llama-q6_k \
		e256-llama-tied-f16 e256-qwen2-q8_0 e256-llama-q5_0 e256-llama-q5_1 \
		e256-llama-tq1_0 e256-llama-tq2_0 e256-llama-q3_k e256-llama-q2_k \
		e256-llama-iq4_nl e256-llama-iq4_xs e256-llama-tied-bf16; do
		golden $m.gguf tests/models/$m.gguf
	done
} > $G/greedy.tsv

# last-position logits of the whole vocabulary, one %.9g value per line
"$LP" logits "$SM/tiny-llama-spm-f32.gguf" "Once upon a time" $OPTS > $G/logits-tiny-llama-spm-f32-once.txt
"$LP" logits "$SM/stories260K.gguf" "Once upon a time" $OPTS > $G/logits-stories260K-once.txt
"$LP" logits tests/models/e256-llama-q4_k_m.gguf "Once upon a time" $OPTS > $G/logits-e256-llama-q4_k_m-once.txt
"$LP" logits tests/models/e256-llama-q4_0.gguf "Once upon a time" $OPTS > $G/logits-e256-llama-q4_0-once.txt
"$LP" logits tests/models/e256-llama-q8_0.gguf "Once upon a time" $OPTS > $G/logits-e256-llama-q8_0-once.txt
"$LP" logits tests/models/e256-llama-q5_0.gguf "Once upon a time" $OPTS > $G/logits-e256-llama-q5_0-once.txt
"$LP" logits tests/models/e256-llama-q5_1.gguf "Once upon a time" $OPTS > $G/logits-e256-llama-q5_1-once.txt
for m in e256-llama-tq1_0 e256-llama-tq2_0 e256-llama-q3_k e256-llama-q2_k e256-llama-iq4_nl \
	e256-llama-iq4_xs e256-llama-tied-bf16; do
	"$LP" logits tests/models/$m.gguf "Once upon a time" $OPTS > $G/logits-$m-once.txt
done

# an f16 KV cache (llama.cpp's default type, flash attention still off):
# a 100-id prompt as one pass and one id per pass, through the model whose
# attention output meets F16 weights (a quantized model would round it to
# 8 bits before the output projection and hide the cache's rounding)
KV16_IDS="1 173 298 216 130 509 179 261 334 94 21 169 11 320 193 270 203 181 313 460 499 94 \
277 25 266 282 7 49 439 386 343 478 239 183 142 496 211 432 374 206 39 5 366 37 453 62 191 53 154 \
383 306 323 304 294 271 214 208 315 309 106 400 159 53 353 365 242 489 273 446 123 169 75 425 26 \
444 359 35 226 288 53 356 393 476 438 479 158 373 226 409 61 459 367 329 8 500 147 295 312 11 271"
m=e256-llama-tied-f16
"$LP" logits tests/models/$m.gguf "ids:$KV16_IDS" --fa off --kv f16 --threads 1 \
	> $G/logits-$m-kvf16-once.txt
"$LP" logits tests/models/$m.gguf "ids:$KV16_IDS" --fa off --kv f16 --threads 1 --incremental \
	> $G/logits-$m-kvf16-steps.txt
