#!/usr/bin/env bats
# arith_zen4.bats -- q42run --arith zen4 gives the greedy ids llama.cpp
# gives on an AVX-512 CPU without AMX (its libggml-cpu-zen4.so), on every
# quantized model of tests/models, whatever CPU runs the test: the mode is
# an arithmetic, not a CPU check.
#
# Expected ids: tests/golden/zen4/gen.tsv (llamapeer on an AMD EPYC guest
# that loads the zen4 variant; tests/golden/zen4/README). q42run stops at
# an end-of-generation token and llama.cpp's gen does not, so a shorter
# q42 output must be the golden's prefix ending at the model's EOS id.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	Q42RUN=$(q42_bin q42run)
	GOLD="$Q42_SRCDIR/tests/golden/zen4/gen.tsv"
	TM="$Q42_SRCDIR/tests/models"
}

# check MODEL PROMPT WANT [OPTION...]: q42run's ids under --arith zen4
check_ids() {
	local model=$1 prompt=$2 want=$3
	shift 3
	run "$Q42RUN" -m "$TM/$model" -p "$prompt" -n 32 --arith zen4 --record "$@"
	[ "$status" -eq 0 ] || { echo "$model: exit $status: $output"; return 1; }
	python3 - "$output" "$want" "$model | $prompt" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); want = sys.argv[2].split(); got = [str(i) for i in r["tokens"]["generated"]]
assert r["engine"]["arith"] == "zen4", r["engine"]["arith"]
ok = got == want or (len(got) < len(want) and got == want[:len(got)] and r["stop"] in ("eos", "eog"))
if not ok:
    sys.exit("%s\n  llama.cpp zen4: %s\n  q42 --arith zen4: %s (stop %s)" % (sys.argv[3], " ".join(want), " ".join(got), r["stop"]))
PY
}

@test "--arith zen4: llama.cpp zen4's greedy ids on every quantized model of tests/models, three prompts" {
	[ -s "$GOLD" ]
	local n=0
	while IFS=$'\t' read -r model prompt want; do
		check_ids "$model" "$prompt" "$want"
		n=$((n + 1))
	done <"$GOLD"
	[ "$n" -eq 42 ]
}

# Q4_K's repacked kernels round a prompt token by its place in its pass
# (in a group of four or not), as in llama.cpp: only the whole prompt as
# one pass gives llama.cpp's bits there, so --batch is varied elsewhere.
@test "--arith zen4: the same ids for 1 and 2 threads, and for batch 1, 3 and whole without Q4_K" {
	while IFS=$'\t' read -r model prompt want; do
		case $model in
		e256-llama-q4_k_m.gguf) batches=512 ;;
		e256-llama-q8_0.gguf | e256-llama-q6_k.gguf) batches="1 3 512" ;;
		*) continue ;;
		esac
		for t in 1 2; do
			for b in $batches; do
				check_ids "$model" "$prompt" "$want" -t "$t" -b "$b"
			done
		done
	done <"$GOLD"
}

@test "--arith: sapphirerapids is llamacpp's other name; a bad mode names the four" {
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p "Once upon a time" -n 4 --arith sapphirerapids --record
	[ "$status" -eq 0 ]
	[[ $output == *'"arith":"llamacpp"'* ]]
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p x --arith zen5
	[ "$status" -eq 2 ]
	[[ $output == *"expected auto, llamacpp, sapphirerapids, zen4 or ggml"* ]]
}
