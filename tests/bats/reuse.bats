#!/usr/bin/env bats
# reuse.bats -- prefix reuse, saved states and the fork form (issue 36):
# requests run in one q42run process with reuse give the bytes the same
# requests give one per process (tests/tools/reuse_check.py: generation
# records, every logit, --choices records, --state-load, --jsonl forks),
# for stories260K and a synthetic model of every architecture; and every
# refusal of a state file (q42-state(5), exit 1) and of a bad request.
# `make check-reuse` runs reuse_check.py at full size (200 requests, a
# prefix of 300 tokens or more); here 5 requests a model and prefixes of
# 80 words keep the file to a few minutes.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	Q42RUN=$(q42_bin q42run)
	TM="$Q42_SRCDIR/tests/models"
	CHECK="$Q42_SRCDIR/tests/tools/reuse_check.py"
	S="$BATS_TEST_TMPDIR/s.q42state"
}

@test "reuse: stories260K gives a cold run's bytes, batch 1, 32 and 512, 1 and 2 threads" {
	need_model m stories260K.gguf
	run python3 "$CHECK" "$Q42RUN" "$m" 5 1,32,512 1,2 80
	echo "$output"
	[ "$status" -eq 0 ]
}

# Q4_K and Q2_K round a prompt token by its place in its pass (batch 512:
# reuse in groups of four within one pass; 7: across boundaries); lfm2 keeps
# a convolution history beside K and V; gemma3 has a sliding window;
# phi3-long scales RoPE by the context.
@test "reuse: every architecture gives a cold run's bytes, batch 7 and 512, 2 threads" {
	for mod in e256-llama-q8_0 e256-llama-q4_k_m e256-llama-q2_k e256-qwen2-q8_0 \
		a64-qwen3-hd24-q8_0 a64-gemma3-swa-f32 a64-phi3-long-f32 a64-lfm2-q8_0; do
		run python3 "$CHECK" "$Q42RUN" "$TM/$mod.gguf" 5 7,512 2 80
		echo "$output"
		[ "$status" -eq 0 ]
	done
}

@test "reuse: a shared prefix is evaluated once, to its settled positions" {
	need_model m stories260K.gguf
	p="Once upon a time there was a little girl named Lily. She loved to play outside in the park."
	for b in 8 7 512; do
		run "$Q42RUN" -m "$m" -b $b -n 0 --record --lines <<<"$p
$p And then
$p"
		[ "$status" -eq 0 ]
		mapfile -t recs <<<"$output"
		[ "$(rec_reused "${recs[0]}")" -eq 0 ]
		n=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["counts"]["prompt"])' "${recs[0]}")
		# whole passes, then whole groups of four of the last pass
		s=$((n / b * b + (n % b) / 4 * 4))
		[ "$(rec_reused "${recs[1]}")" -eq $s ]
		# the same prompt again: all but its last token, rounded down as
		# above, and four fewer where the first pass would be one token
		# in place of several
		c=$((n - 1)) && r=$((c / b * b + (c % b) / 4 * 4))
		end=$(((c / b + 1) * b < n ? (c / b + 1) * b : n))
		[ $r -gt $((c / b * b)) ] && [ $((end - r)) -eq 1 ] && r=$((r - 4))
		echo "b $b n $n settled $s reused again $r"
		[ "$(rec_reused "${recs[2]}")" -eq $r ]
	done
	run "$Q42RUN" -m "$m" -b 8 -n 0 --record --lines --no-reuse <<<"$p
$p"
	[ "$status" -eq 0 ]
	mapfile -t recs <<<"$output"
	[ "$(rec_reused "${recs[1]}")" -eq 0 ]
}

rec_reused() {
	python3 -c 'import json,sys; print(json.loads(sys.argv[1])["timings"]["prompt_reused"])' "$1"
}

# save_state [OPTIONS]: a state of stories260K's prompt into $S
save_state() {
	"$Q42RUN" -m "$m" -p "Once upon a time there was a little girl named Lily. She loved to play." \
		-n 0 -b 8 "$@" --state-save "$S"
}

@test "--state-load: refused, exit 1 and named, for another model, context, batch, cache type or arithmetic" {
	need_model m stories260K.gguf
	save_state -c 256
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p x -n 0 -b 8 -c 256 --state-load "$S"
	[ "$status" -eq 1 ]
	[[ $output == *"made for another model"* ]]
	run "$Q42RUN" -m "$m" -p x -n 0 -b 8 -c 128 --state-load "$S"
	[ "$status" -eq 1 ]
	[[ $output == *"context size (--ctx) 256, this run has 128"* ]]
	run "$Q42RUN" -m "$m" -p x -n 0 -b 16 -c 256 --state-load "$S"
	[ "$status" -eq 1 ]
	[[ $output == *"batch (--batch) 8, this run has 16"* ]]
	run "$Q42RUN" -m "$m" -p x -n 0 -b 8 -c 256 --kv-type f16 --state-load "$S"
	[ "$status" -eq 1 ]
	[[ $output == *"KV cache type (--kv-type)"* ]]
	run "$Q42RUN" -m "$m" -p x -n 0 -b 8 -c 256 --arith ggml --state-load "$S"
	[ "$status" -eq 1 ]
	[[ $output == *"arithmetic (--arith)"* ]]
	# and taken where everything matches
	run "$Q42RUN" -m "$m" -p "Once upon a time there was a little girl named Lily. She loved to play." \
		-n 0 -b 8 -c 256 --state-load "$S" --record
	[ "$status" -eq 0 ]
	[ "$(rec_reused "$output")" -gt 0 ]
}

@test "--state-load: refused, exit 1 and named, when corrupt, truncated or not a state file" {
	need_model m stories260K.gguf
	save_state
	size=$(stat -c %s "$S")
	cp "$S" "$BATS_TEST_TMPDIR/good"
	flip_byte "$S" 200
	run "$Q42RUN" -m "$m" -p x -n 0 -b 8 --state-load "$S"
	[ "$status" -eq 1 ]
	[[ $output == *"body CRC-32C mismatch"* ]]
	cp "$BATS_TEST_TMPDIR/good" "$S"
	flip_byte "$S" 50
	run "$Q42RUN" -m "$m" -p x -n 0 -b 8 --state-load "$S"
	[ "$status" -eq 1 ]
	[[ $output == *"header CRC-32C mismatch"* ]]
	head -c $((size - 1)) "$BATS_TEST_TMPDIR/good" >"$S"
	run "$Q42RUN" -m "$m" -p x -n 0 -b 8 --state-load "$S"
	[ "$status" -eq 1 ]
	[[ $output == *"truncated"* ]]
	head -c 100 "$BATS_TEST_TMPDIR/good" >"$S"
	run "$Q42RUN" -m "$m" -p x -n 0 -b 8 --state-load "$S"
	[ "$status" -eq 1 ]
	[[ $output == *"truncated"* ]]
	run "$Q42RUN" -m "$m" -p x -n 0 -b 8 --state-load "$m"
	[ "$status" -eq 1 ]
	[[ $output == *"not a q42 state file"* ]]
	run "$Q42RUN" -m "$m" -p x -n 0 -b 8 --state-load "$BATS_TEST_TMPDIR/absent"
	[ "$status" -eq 3 ]
}

@test "--state-save: written atomically; nothing on a failed request; usage errors" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p "Once" -n 0 -b 8 --state-save "$S"
	[ "$status" -eq 0 ]
	[[ $output == *"the state holds none"* ]]
	[ "$(stat -c %s "$S")" -eq 132 ]
	rm -f "$S"
	run "$Q42RUN" -m "$m" -p "" -n 0 --no-bos -b 8 --state-save "$S"
	[ "$status" -eq 4 ]
	[ ! -e "$S" ]
	run "$Q42RUN" -m "$m" -p x --no-reuse --state-save "$S"
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --tokenize --state-load "$S"
	[ "$status" -eq 2 ]
}

@test "--jsonl: prompts and forks; a bad line is named, exit 4" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -n 2 --record --jsonl <<<'{"prompt": "Once upon"}
{"prefix": "Once upon a time, ", "questions": ["Lily", "Tom"]}'
	[ "$status" -eq 0 ]
	[ "$(wc -l <<<"$output")" -eq 3 ]
	run "$Q42RUN" -m "$m" -n 2 --jsonl <<<'{"prompt": "Once upon"}
{"prefix": "x"}'
	[ "$status" -eq 4 ]
	[[ $output == *"--jsonl: line 2: expected"* ]]
	run "$Q42RUN" -m "$m" -n 2 --jsonl <<<'{"prompt": '
	[ "$status" -eq 4 ]
	[[ $output == *"--jsonl: line 1:"* ]]
	run "$Q42RUN" -m "$m" -n 2 --jsonl --lines <<<'{"prompt": "x"}'
	[ "$status" -eq 2 ]
}
