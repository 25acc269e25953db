#!/usr/bin/env bats
# flash_attn.bats -- q42run --flash-attn: llama.cpp's greedy ids with its
# CPU flash attention on (its default, F16 cache), off (F16 cache) and on
# over a Q8_0 cache (--kv-type q8_0), on every architecture q42 runs, for
# a short prompt and a 1,772-token one (tests/golden/fa/long.txt: the
# tiled form, a sliding window shorter than the prompt); the same bits
# for 1 and 2 threads and for the AVX2 forms; refusals.
#
# Expected ids: tests/golden/fa/gen.tsv (llamapeer gen ... 16 --threads 1
# --ctx 4096 --fa on | --fa off --kv f16 | --fa on --kv q8_0, on an AMD EPYC guest that loads
# llama.cpp's zen4 variant; tests/golden/fa/README). q42run stops at an
# end-of-generation token and llama.cpp's gen does not, so a shorter q42
# output must be the golden's prefix ending at the model's EOS id.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	Q42RUN=$(q42_bin q42run)
	GOLD="$Q42_SRCDIR/tests/golden/fa/gen.tsv"
	LONG="$Q42_SRCDIR/tests/golden/fa/long.txt"
	TM="$Q42_SRCDIR/tests/models"
}

# ids MODEL PROMPT-NAME OPTION...: the record of q42run's 16 greedy ids
# (shared/NAME: ../shared/models/NAME)
ids() {
	local model=$1 pname=$2 path="$TM/$1"
	shift 2
	case $model in shared/*) path="$Q42_TEST_MODELS/${model#shared/}" ;; esac
	if [ "$pname" = long ]; then
		"$Q42RUN" -m "$path" -f "$LONG" -n 16 -c 4096 --deadline 0 --arith zen4 --record "$@"
	else
		"$Q42RUN" -m "$path" -p "Once upon a time" -n 16 -c 4096 --deadline 0 --arith zen4 --record "$@"
	fi
}

@test "--flash-attn on and off, and over a Q8_0 cache: llama.cpp's greedy ids on every architecture of tests/models and ../shared/models, short and 1,772-token prompts" {
	[ -s "$GOLD" ]
	[ -s "$Q42_TEST_MODELS/tiny-qwen3-f32.gguf" ] || { q42_missing "../shared/models"; return; }
	local n=0
	while IFS=$'\t' read -r model pname mode want; do
		case $mode in
		on) run ids "$model" "$pname" --flash-attn on ;;
		off) run ids "$model" "$pname" --flash-attn off --kv-type f16 ;;
		q8) run ids "$model" "$pname" --flash-attn on --kv-type q8_0 ;;
		esac
		[ "$status" -eq 0 ] || { echo "$model $pname $mode: exit $status: $output"; return 1; }
		golden_ids "$output" "$want" "$model | $pname | --flash-attn $mode" \
			"r['engine']['flash_attn'] == ('$mode' != 'off') and (r['engine']['kv_type'] == 'q8_0') == ('$mode' == 'q8')"
		n=$((n + 1))
	done <"$GOLD"
	[ "$n" -eq 74 ]
}

@test "--flash-attn on: the same logits for 1 and 2 threads and for the AVX2 and AVX-512 forms, tiled and one-at-a-time passes" {
	for b in 512 7; do
		local a c
		a=$("$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -f "$LONG" -b $b -t 1 --flash-attn on --logits-for 1,2,3,100,320,394)
		c=$("$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -f "$LONG" -b $b -t 2 --flash-attn on --logits-for 1,2,3,100,320,394)
		[ -n "$a" ]
		[ "$a" = "$c" ]
		c=$("$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -f "$LONG" -b $b -t 2 --flash-attn on --isa avx2 --logits-for 1,2,3,100,320,394)
		[ "$a" = "$c" ]
	done
}

@test "--flash-attn on differs from off, and auto is on for a decoder on the CPU" {
	local on off auto
	on=$("$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -f "$LONG" --flash-attn on --logits-for 320,394)
	off=$("$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -f "$LONG" --kv-type f16 --logits-for 320,394)
	auto=$("$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -f "$LONG" --flash-attn auto --logits-for 320,394)
	[ "$on" != "$off" ]
	[ "$on" = "$auto" ]
}

@test "--flash-attn: an f32 cache is stored as f16, as llama.cpp casts it; the record says so" {
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p "Once upon a time" -n 2 --flash-attn on --kv-type f32 --record
	[ "$status" -eq 0 ]
	python3 -c 'import json,sys; e=json.loads(sys.argv[1])["engine"]; assert e["kv_type"]=="f16" and e["flash_attn"] is True, e' "$output"
}

@test "--flash-attn: bad values and unsupported uses are refused" {
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p x --flash-attn maybe
	[ "$status" -eq 2 ]
	[[ "$output" == *"--flash-attn 'maybe': expected on, off or auto"* ]]
	[ -s "$Q42_TEST_MODELS/tiny-bert-f32.gguf" ] || { q42_missing tiny-bert-f32.gguf; return; }
	run "$Q42RUN" -m "$Q42_TEST_MODELS/tiny-bert-f32.gguf" -p x --embed --flash-attn on
	[ "$status" -ne 0 ]
	[[ "$output" == *"flash attention: not available for an encoder's attention"* ]]
}

@test "--bench --depth: the cache holds the depth first; a depth past the context is refused" {
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" --bench --pp 64 --tg 4 --depth 300 --reps 1 --flash-attn on
	[ "$status" -eq 0 ]
	[[ "$output" == *" depth=300 "* ]]
	[[ "$output" == *" fa=on "* ]]
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" --bench --pp 64 --tg 4 --depth 4090 --reps 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--depth 4090 with --pp 64 / --tg 4 does not fit a context of 4096 tokens"* ]]
}

@test "--flash-attn on: a saved state and a reused prefix give a cold run's bits; the state names the mode" {
	local st="$BATS_TEST_TMPDIR/s.q42state" cold warm
	"$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -f "$LONG" -n 0 -b 64 --flash-attn on --state-save "$st"
	cold=$("$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -f "$LONG" -b 64 --flash-attn on --logits-for 1,2,320,394)
	warm=$("$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -f "$LONG" -b 64 --flash-attn on --state-load "$st" --logits-for 1,2,320,394)
	[ -n "$cold" ]
	[ "$cold" = "$warm" ]
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p x -b 64 --kv-type f16 --state-load "$st"
	[ "$status" -eq 1 ]
	[[ "$output" == *"made with flash attention (--flash-attn) 1, this run has 0"* ]]
	# two requests sharing the long prefix in one process: the second reuses it
	printf '%s The end.\n%s A new day.\n' "$(cat "$LONG")" "$(cat "$LONG")" >"$BATS_TEST_TMPDIR/two.txt"
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -f "$BATS_TEST_TMPDIR/two.txt" --lines -b 64 -n 4 --flash-attn on --record
	[ "$status" -eq 0 ]
	local second_alone
	second_alone=$(printf '%s A new day.\n' "$(cat "$LONG")" | "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" --lines -b 64 -n 4 --flash-attn on --record)
	python3 - "$output" "$second_alone" <<'PY'
import json, sys
recs = [json.loads(l) for l in sys.argv[1].splitlines()]
alone = json.loads(sys.argv[2])
assert recs[1]["timings"]["prompt_reused"] > 0, recs[1]["timings"]
assert recs[1]["tokens"]["generated"] == alone["tokens"]["generated"], (recs[1]["tokens"]["generated"], alone["tokens"]["generated"])
PY
}

@test "--flash-attn on: prefix reuse gives a cold run's bytes across the tile's boundary (tests/tools/reuse_check.py)" {
	REUSE_EXTRA="--flash-attn on" run python3 "$Q42_SRCDIR/tests/tools/reuse_check.py" "$Q42RUN" \
		"$TM/e256-llama-q8_0.gguf" 8 100,512 1
	[ "$status" -eq 0 ] || { echo "$output" | tail -3; return 1; }
}

@test "--ctx past 4096: what the context will hold is printed before it is allocated" {
	run --separate-stderr "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p "Once" -n 1 -c 8192 --flash-attn on
	[ "$status" -eq 0 ]
	# 2 layers x 2 kv heads x 64 x 2 (K and V) x 2 bytes x 8192 positions = 8 MiB
	[[ "$stderr" == *"a context of 8192 tokens: cache 8.0 MiB, "*" MiB in all"* ]]
	run --separate-stderr "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p "Once" -n 1
	[[ "$stderr" != *"a context of"* ]]
}

@test "--kv-type q8_0: the same logits for 1 and 2 threads and AVX2; a saved state and a reused prefix give a cold run's bits" {
	local m="$TM/e256-llama-q8_0.gguf" st="$BATS_TEST_TMPDIR/q8.q42state" a c warm
	a=$("$Q42RUN" -m "$m" -f "$LONG" -b 64 -t 1 --flash-attn on --kv-type q8_0 --logits-for 1,2,3,100,320,394)
	c=$("$Q42RUN" -m "$m" -f "$LONG" -b 64 -t 2 --flash-attn on --kv-type q8_0 --logits-for 1,2,3,100,320,394)
	[ -n "$a" ]
	[ "$a" = "$c" ]
	c=$("$Q42RUN" -m "$m" -f "$LONG" -b 64 -t 2 --flash-attn on --kv-type q8_0 --isa avx2 --logits-for 1,2,3,100,320,394)
	[ "$a" = "$c" ]
	# the rotation and the quantisation change the bits: not the F16 cache's
	c=$("$Q42RUN" -m "$m" -f "$LONG" -b 64 -t 1 --flash-attn on --logits-for 1,2,3,100,320,394)
	[ "$a" != "$c" ]
	"$Q42RUN" -m "$m" -f "$LONG" -n 0 -b 64 --flash-attn on --kv-type q8_0 --state-save "$st"
	warm=$("$Q42RUN" -m "$m" -f "$LONG" -b 64 --flash-attn on --kv-type q8_0 --state-load "$st" --logits-for 1,2,3,100,320,394)
	[ "$a" = "$warm" ]
	run "$Q42RUN" -m "$m" -p x -b 64 --flash-attn on --state-load "$st"
	[ "$status" -eq 1 ]
	[[ "$output" == *"made with KV cache type (--kv-type) 8, this run has 1"* ]]
	REUSE_EXTRA="--flash-attn on --kv-type q8_0" run python3 "$Q42_SRCDIR/tests/tools/reuse_check.py" "$Q42RUN" \
		"$m" 8 100 1
	[ "$status" -eq 0 ] || { echo "$output" | tail -3; return 1; }
}

@test "--kv-type q8_0: refused without flash attention and for heads that are not whole Q8_0 blocks; the memory report counts its bytes" {
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p x --kv-type q8_0
	[ "$status" -eq 1 ]
	[[ "$output" == *"a Q8_0 KV cache needs flash attention (--flash-attn on)"* ]]
	run "$Q42RUN" -m "$TM/a64-qwen3-hd24-f32.gguf" -p x --kv-type q8_0 --flash-attn on
	[ "$status" -eq 1 ]
	[[ "$output" == *"a Q8_0 KV cache needs head dims that are multiples of 32 (K 24, V 24)"* ]]
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p x --kv-type q4_0
	[ "$status" -eq 2 ]
	[[ "$output" == *"--kv-type 'q4_0': expected f32, f16 or q8_0"* ]]
	run --separate-stderr "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p "Once" -n 1 -c 8192 --flash-attn on --kv-type q8_0
	[ "$status" -eq 0 ]
	# 2 layers x 2 kv heads x 2 (K and V) x 8192 positions x 2 blocks of 34 bytes = 4.25 MiB
	[[ "$stderr" == *"a context of 8192 tokens: cache 4.2 MiB, "*" MiB in all"* ]]
}
